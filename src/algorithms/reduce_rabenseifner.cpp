// Rabenseifner's reduce: reduce-scatter by recursive halving, then a binomial gather of the
// pieces to the root. Vadhiyar (002_…), "Rabenseifner algorithm" (the 13-rank example of
// myreduce.c, steps 1–6); LAWN 29 §5 (combine-to-root, second approach = Version 3 + gather).
//   p = 2^d:  T(n, p) = 2dα + ((p-1)/p) n (2β + γ)          (exact when p | count)
//   other p:  + 2α + βn + γn/2 for folding the r = p - 2^d surplus ranks (step 2), d = ⌊log p⌋
//   root an odd rank < 2r (folded away): + α + βn to forward the result.
// Preconditions: none. Non-commutative operators keep rank order: the fold combines ranks
// 2i, 2i+1 in order, NEWRANK keeps the order, and halving exchanges along dimension 0 first,
// so every partial result covers a contiguous range of ranks with the lower one on the left.
//
//   fold:   odd rank < 2r hands its halves to the even rank below it (13 → 8 ranks)
//   halve:  distance 1, 2, 4, …: keep the lower half if the bit is 0, combine with the partner's
//   gather: distance 2^{d-1}, …, 1 back up a binomial tree to the root's new rank
#include <array>

#include "algorithms/algorithms.hpp"
#include "patterns/hypercube.hpp"
#include "patterns/ring.hpp"
#include "tuning/lawn29.hpp"

namespace fabcoll::algorithms {

namespace {
// Rank numbering of the 2^d ranks left after the fold (myreduce.c steps 3–4): the odd ranks
// below 2r are folded away into the even rank below them.
struct RabenseifnerRanks {
  int r;  // surplus p - 2^d
  [[nodiscard]] bool folded_away(int old) const { return old < 2 * r && old % 2 == 1; }
  [[nodiscard]] int newrank(int old) const { return old < 2 * r ? old / 2 : old - r; }
  [[nodiscard]] int oldrank(int nr) const { return nr < r ? nr * 2 : nr + r; }
};

// Blocks lo .. hi-1 of the vector as bytes.
template <class Span>
Span blocks_of(Span buf, const EvenBlocks& blocks, std::size_t es, std::size_t lo, std::size_t hi) {
  return buf.subspan(blocks.begin(lo) * es, blocks.span(lo, hi) * es);
}
}  // namespace

Task<> reduce_rabenseifner(Channel& ch, ConstBytes in, MutableBytes out, const ReduceOp& op,
                           std::size_t elem_size, int root) {
  const int p = ch.size();
  const int me = ch.rank();
  const Hypercube cube{p};  // only its dimension and surplus: the fold here is myreduce.c's
  const int d = cube.dim();
  const auto n2 = static_cast<std::size_t>(cube.cube_size());
  const RabenseifnerRanks ranks{cube.surplus()};
  const std::size_t n = in.size();
  const std::size_t es = elem_size;
  const EvenBlocks blocks{es == 0 ? 0 : n / es, n2};
  const auto fold_step = static_cast<std::uint32_t>(0);
  const auto result_step = static_cast<std::uint32_t>(1);
  const auto forward_step = static_cast<std::uint32_t>(2 + 2 * d + 1);

  // The target of the gather: the root, or the even rank it was folded into.
  const int target_old = ranks.folded_away(root) ? root - 1 : root;
  const int target = ranks.newrank(target_old);

  const MutableBytes acc = me == root ? out : ch.scratch(n);
  // A rank that folds, or the only rank, starts from a copy of its input; the others read
  // `in` in their first halving step and combine from it straight into acc (no copy). `in`
  // may alias `out` at the root: it is never read after acc is written.
  const bool copy_first = me < 2 * cube.surplus() || d == 0;
  if (copy_first) ch.copy(acc, in);
  const MutableBytes tmp = ch.scratch(n);

  // Step 2: fold. Even keeps the lower half ABCD, odd computes the upper half EFGH and hands
  // it back; the odd rank then drops out.
  if (me < 2 * cube.surplus()) {
    const std::size_t half = n2 / 2;
    if (me % 2 == 0) {
      // The received half is combined into acc's lower half as it lands (recv_combine) while
      // the upper half is being sent: disjoint bytes.
      const MutableBytes acc_lo = blocks_of(acc, blocks, es, 0, half);
      Transfer out_hi = ch.send(me + 1, blocks_of(acc, blocks, es, half, n2), fold_step);
      RecvCombine in_lo = ch.recv_combine(me + 1, blocks_of(tmp, blocks, es, 0, half), op, acc_lo,
                                          acc_lo, /*received_left=*/false, fold_step);
      co_await out_hi;
      co_await in_lo;
      Transfer in_hi = ch.recv(me + 1, blocks_of(acc, blocks, es, half, n2), result_step);
      co_await in_hi;
    } else {
      const MutableBytes acc_hi = blocks_of(acc, blocks, es, half, n2);
      Transfer out_lo = ch.send(me - 1, blocks_of(acc, blocks, es, 0, half), fold_step);
      RecvCombine in_hi = ch.recv_combine(me - 1, blocks_of(tmp, blocks, es, half, n2), op, acc_hi,
                                          acc_hi, /*received_left=*/true, fold_step);
      co_await out_lo;
      co_await in_hi;
      Transfer back = ch.send(me - 1, blocks_of(acc, blocks, es, half, n2), result_step);
      co_await back;
      if (me == root) {
        Transfer res = ch.recv(root - 1, out, forward_step);
        co_await res;
      }
      co_return;
    }
  }

  // Step 5: recursive halving over the 2^d new ranks, distance 1 first. lo[j] .. hi[j] is the
  // block range held before step j.
  const int nr = ranks.newrank(me);
  std::array<std::size_t, 33> lo{};
  std::array<std::size_t, 33> hi{};
  lo[0] = 0;
  hi[0] = n2;
  for (int j = 0; j < d; ++j) {
    const int partner = ranks.oldrank(nr ^ (1 << j));
    const std::size_t mid = (lo[j] + hi[j]) / 2;
    const bool lower = (nr & (1 << j)) == 0;
    const std::size_t keep_lo = lower ? lo[j] : mid;
    const std::size_t keep_hi = lower ? mid : hi[j];
    const std::size_t give_lo = lower ? mid : lo[j];
    const std::size_t give_hi = lower ? hi[j] : mid;
    const ConstBytes src = j == 0 && !copy_first ? in : ConstBytes(acc);
    // The partner's half is combined with ours into acc as it lands (recv_combine): the
    // kept blocks, disjoint from the given ones being sent (also when `in` aliases acc).
    const ConstBytes own = blocks_of(src, blocks, es, keep_lo, keep_hi);
    const MutableBytes mine = blocks_of(acc, blocks, es, keep_lo, keep_hi);
    Transfer give = ch.send(partner, blocks_of(src, blocks, es, give_lo, give_hi),
                            static_cast<std::uint32_t>(2 + j));
    // The lower rank's data is the left operand.
    RecvCombine take =
        ch.recv_combine(partner, blocks_of(tmp, blocks, es, keep_lo, keep_hi), op, own, mine,
                        /*received_left=*/!lower, static_cast<std::uint32_t>(2 + j));
    co_await give;
    co_await take;
    lo[j + 1] = keep_lo;
    hi[j + 1] = keep_hi;
  }

  // Step 6: gather to the target's new rank, distance 2^{d-1} first: at step j the partner
  // whose bit j matches the target's receives the other's range and keeps playing.
  for (int j = d - 1; j >= 0; --j) {
    const int bit = 1 << j;
    const int partner = ranks.oldrank(nr ^ bit);
    const auto step = static_cast<std::uint32_t>(2 + d + j);
    if ((nr & bit) == (target & bit)) {
      // the partner holds the other half of lo[j] .. hi[j]
      const std::size_t mid = (lo[j] + hi[j]) / 2;
      const bool lower = (nr & bit) == 0;
      const std::size_t other_lo = lower ? mid : lo[j];
      const std::size_t other_hi = lower ? hi[j] : mid;
      Transfer take = ch.recv(partner, blocks_of(acc, blocks, es, other_lo, other_hi), step);
      co_await take;
    } else {
      Transfer give = ch.send(partner, blocks_of(acc, blocks, es, lo[j + 1], hi[j + 1]), step);
      co_await give;
      co_return;
    }
  }
  // Only the target gets here, holding the whole result.
  if (me != root) {
    Transfer fwd = ch.send(root, acc, forward_step);
    co_await fwd;
  }
}

namespace {
Task<> run_reduce_rabenseifner(Channel& ch, const CollArgs& a) {
  const MutableBytes out = a.recvbuf == nullptr ? MutableBytes{} : bytes_of(a.recvbuf, a.bytes());
  return reduce_rabenseifner(ch, bytes_of(a.sendbuf, a.bytes()), out, a.op, a.elem_size, a.root);
}
double cost(const CostQuery& q) {
  const Hypercube cube{q.p};
  const double p2 = cube.cube_size();
  const auto& m = q.m;
  double t = 2 * cube.dim() * m.alpha + (p2 - 1) / p2 * q.n * (2 * m.beta + m.gamma);
  if (!cube.power_of_two()) t += 2 * m.alpha + m.beta * q.n + m.gamma * q.n / 2;
  return t;
}
}  // namespace

namespace {
// LAWN 29's count (tuning::hybrid_written_share) for Version 3, the fold swapping halves and
// no return of the result (the root keeps it).
double written_share(const CostQuery& q) {
  const Hypercube cube{q.p};
  return tuning::hybrid_written_share(tuning::version3(cube.dim()), q.n, cube.dim(),
                                      cube.power_of_two(), true, false);
}
}  // namespace

namespace {
// The recursive halving exchanges, the gather to the root goes one way: 1/2 at p = 2^d.
double exchange_share(const CostQuery& q) {
  const Hypercube cube{q.p};
  return tuning::hybrid_exchange_share(tuning::version3(cube.dim()), q.n, cube.dim(),
                                       cube.power_of_two(), false, true);
}
}  // namespace

const Algorithm kReduceRabenseifner{
    .name = "rabenseifner",
    .coll = Collective::reduce,
    .reference = "Vadhiyar (Rabenseifner, 13-rank example); LAWN 29 §5 combine-to-root",
    .formula = "2dα + ((2^d-1)/2^d) n(2β + γ), d = ⌊log p⌋; + 2α + βn + γn/2 when p ≠ 2^d",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost,
    .optimal_k = nullptr,
    .run = run_reduce_rabenseifner,
    .test = "bcast_reduce_test.ReduceRabenseifnerMatchesVersion3PlusGather",
    .written_share = written_share,
    .exchange_share = exchange_share,
};

}  // namespace fabcoll::algorithms
