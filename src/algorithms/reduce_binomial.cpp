// Binomial-tree reduce: the binomial broadcast run backwards. Sanders et al. §13.2 (Fig. 13.3
// right), Theorem 13.1 read backwards; with combining (LAWN 29's γ):
//   p = 2^d:  T(n, p) = d (α + βn + γn)            (exact on the one-port model)
//   other p:  T ≤ ⌈log p⌉ (α + βn + γn)
//   non-commutative ⊗ and root ≠ 0: + (α + βn), see below.
// Preconditions: none. A rank receives from its children in the reverse of the broadcast's
// order (dimension 0 first) and appends each child's partial result on the right, so with the
// tree rooted at rank 0 (vrank = rank) the result is m_0 ⊗ m_1 ⊗ … ⊗ m_{p-1} in rank order. A
// tree rooted at r ≠ 0 numbers ranks cyclically from r, which breaks that order; for a
// non-commutative ⊗ we therefore reduce to rank 0 and forward the result to the root.
//
//   step 1: 1→0 3→2 5→4 7→6      after step j every vrank divisible by 2^j holds the
//   step 2: 2→0 6→4              reduction of its 2^j-rank subtree (a contiguous range)
//   step 3: 4→0
#include "algorithms/algorithms.hpp"
#include "patterns/binomial_tree.hpp"

namespace fabcoll::algorithms {

Task<> reduce_binomial(Channel& ch, ConstBytes in, MutableBytes out, const ReduceOp& op, int root) {
  const int me = ch.rank();
  const bool in_order = op.commutative() || root == 0;
  const int tree_root = in_order ? root : 0;
  const BinomialTree tree{ch.size(), tree_root};
  const auto children = tree.children(me);  // highest dimension first
  const int parent = tree.parent(me);
  const std::size_t n = in.size();

  // The partial result: `out` at the root, scratch elsewhere; a leaf sends its input as is.
  ConstBytes partial = in;
  if (!children.empty() || me == tree_root) {
    const MutableBytes acc = me == root ? out : ch.scratch(n);
    // No copy of `in` into acc: the first child's combine reads `in` and writes acc; `in` may
    // alias `out` at the root. Children in the reverse of the broadcast's order (dimension 0
    // first, the order the data arrives); each child's data is folded into acc as it lands
    // where the transport can (recv_combine), so the next child's receive is posted once the
    // previous one is combined: the combines must happen in rank order. A child that sends
    // early finds its receive posted soon enough (unexpected messages wait, a rendezvous
    // waits for the receive anyway).
    const MutableBytes tmp = ch.scratch(n);
    for (std::size_t i = 0; i < children.size(); ++i) {
      const std::size_t c = children.size() - 1 - i;
      // The children hold higher ranks' data: the right operand.
      // Release the child before combining: every byte is in acc once read, and the child
      // has nothing of this reduce left to do but wait for its buffer.
      RecvCombine arrived = ch.recv_combine(children[c], tmp, op, i == 0 ? in : ConstBytes(acc),
                                            acc, false, 0, /*release_sender_first=*/true);
      co_await arrived;
    }
    if (children.empty()) ch.copy(acc, in);  // a root without children (p = 1)
    partial = acc;
  }
  if (parent >= 0) {
    Transfer up = ch.send(parent, partial);
    co_await up;
  }
  if (tree_root != root) {  // non-commutative, root ≠ 0: rank 0 forwards the result
    Task<> fwd = forward_reduced(ch, tree_root, root, partial, out);
    co_await fwd;
  }
}

Task<> forward_reduced(Channel& ch, int from, int root, ConstBytes result, MutableBytes out) {
  if (ch.rank() == from) {
    Transfer fwd = ch.send(root, result, 1);
    co_await fwd;
  } else if (ch.rank() == root) {
    Transfer res = ch.recv(from, out, 1);
    co_await res;
  }
}

MutableBytes reduce_out(const CollArgs& a) {
  return a.recvbuf == nullptr ? MutableBytes{} : bytes_of(a.recvbuf, a.bytes());
}

namespace {
Task<> run_reduce_binomial(Channel& ch, const CollArgs& a) {
  return reduce_binomial(ch, bytes_of(a.sendbuf, a.bytes()), reduce_out(a), a.op, a.root);
}
double cost(const CostQuery& q) {
  return BinomialTree::ceil_log2(q.p) * (q.m.alpha + (q.m.beta + q.m.gamma) * q.n);
}
}  // namespace

const Algorithm kReduceBinomial{
    .name = "binomial",
    .coll = Collective::reduce,
    .reference = "Sanders et al. §13.2 (Fig. 13.3), Thm 13.1 backwards; LAWN 29 §2 model",
    .formula = "⌈log p⌉(α + βn + γn); + (α + βn) for non-commutative ⊗ with root ≠ 0",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost,
    .optimal_k = nullptr,
    .run = run_reduce_binomial,
    .test = "bcast_reduce_test.ReduceBinomialMatchesTheorem",
    .written_share = binomial_reduce_written,
};

}  // namespace fabcoll::algorithms
