// Naive (flat-tree) reduce: the naive broadcast (Sanders et al. §13.1) run backwards, as §13.2
// obtains reduction from broadcast (reverse the messages, combine on the way). Every rank sends
// its input to the folding rank (the root; rank 0 below for a non-commutative ⊗ with another
// root) at once, and it folds them in; on the texts' one-port model (its receive port takes
// one message at a time, o = α, G = β):
//   T(n, p) = (p - 1)(α + βn + γn)
// With the folding rank's own time per message o_r and per byte G (CostModel::receive_overhead,
// ::gap; LogGP charges a receiver, like a sender, o + Gn a message, PLogP its own o_r: on shm
// the fold reads each ring message's cells straight into the combine, as its sender wrote them,
// so beside γn it pays that read, not a copy out as well) the last fold ends after
//   T(n, p) = α + βn + γn + (p - 2)(o_r + Gn + γn)
// and, for messages the folding rank reads itself (shm single copy, n >= pull_bytes), one after
// another:
//   T(n, p) = α + βn + γn + (p - 2)(o_r + βn + γn)
// Non-commutative ⊗ and root ≠ 0: rank 0 folds in rank order and forwards, + (α + βn), as the
// binomial reduce does.
// Where the transport clears fan-ins (Transport::clear_fan_in_from: the sockets provider from
// 64 KiB) the folding rank sends each sender an empty go-ahead before taking its message, so
// one comes in at a time; the formula does not charge the go-aheads.
// Preconditions: none (any p, any root). No rank but the folding rank (and a root waiting for
// its forward) waits for anyone: a leaf's only step is its send, so where ranks share cores no
// partial result waits for a forwarding rank to be scheduled (the binomial tree's inner ranks).
//
//   1 → 0, 2 → 0, 3 → 0, …   all sent at once; the root folds m_0 ⊗ m_1 ⊗ m_2 ⊗ … in order
#include "algorithms/algorithms.hpp"
#include "patterns/rank_mod.hpp"

namespace fabcoll::algorithms {

Task<> reduce_naive(Channel& ch, ConstBytes in, MutableBytes out, const ReduceOp& op, int root) {
  const int p = ch.size();
  const int me = ch.rank();
  // A commutative ⊗ folds at the root from its own data on (any order is a valid result); a
  // non-commutative one at rank 0, whose own data comes first, then ranks 1, 2, … in order.
  const int folder = op.commutative() || root == 0 ? root : 0;
  const std::size_t n = in.size();
  MutableBytes acc;
  // Where the transport stalls on several large messages arriving together, the folding rank
  // clears each sender in turn (Channel::clears_fan_in): one message in at a time, in the
  // order it folds them.
  if (me != folder) {
    if (ch.clears_fan_in(folder, n)) {
      Transfer go = ch.fan_in_wait(folder);
      co_await go;
    }
    Transfer up = ch.send(folder, in);
    co_await up;
  } else {
    acc = me == root ? out : ch.scratch(n);
    if (p == 1) ch.copy(acc, in);
    const MutableBytes tmp = ch.scratch(n);
    ConstBytes left = in;  // may alias out at the root: the first fold reads it, then writes acc
    for (int j = 1; j < p; ++j) {
      const int from = rank_mod(folder + j, p);
      if (ch.clears_fan_in(from, n)) {
        Transfer go = ch.fan_in_go(from);
        co_await go;
      }
      // The leaf only waits for its buffer: release it before combining (Channel::recv_combine).
      RecvCombine arrived = ch.recv_combine(from, tmp, op, left, acc, false, 0,
                                            /*release_sender_first=*/true);
      co_await arrived;
      left = acc;
    }
  }
  if (folder != root) {  // non-commutative, root ≠ 0: rank 0 forwards the result
    Task<> fwd = forward_reduced(ch, folder, root, acc, out);
    co_await fwd;
  }
}

namespace {
Task<> run(Channel& ch, const CollArgs& a) {
  return reduce_naive(ch, bytes_of(a.sendbuf, a.bytes()), reduce_out(a), a.op, a.root);
}
double cost(const CostQuery& q) {
  if (q.p <= 1) return 0.0;
  const double combine = q.m.gamma * q.n;
  // The root's share of each further message: its own read of it when pulled, else G.
  const bool pulled = q.m.pull_bytes > 0 && q.n >= q.m.pull_bytes;
  const double per_byte = (pulled ? q.m.beta : q.m.send_gap()) * q.n;
  return q.m.alpha + q.m.beta * q.n + combine +
         (q.p - 2) * (q.m.recv_overhead() + per_byte + combine);
}
double message_bytes(const CostQuery& q) { return q.n; }  // every send is the whole input
}  // namespace

const Algorithm kReduceNaive{
    .name = "naive",
    .coll = Collective::reduce,
    .reference =
        "Sanders et al. §13.1 naive broadcast run backwards (§13.2: reduction as a "
        "reversed broadcast)",
    .formula =
        "α + βn + γn + (p − 2)(o_r + Gn + γn); o_r = α, G = β: (p − 1)(α + βn + γn); "
        "receiver-pulled n: G = β; + (α + βn) for non-commutative ⊗ with root ≠ 0",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost,
    .optimal_k = nullptr,
    .run = run,
    .test = "bcast_reduce_test.ReduceNaiveIsTheNaiveBroadcastBackwards",
    .message_bytes = message_bytes,
};

}  // namespace fabcoll::algorithms
