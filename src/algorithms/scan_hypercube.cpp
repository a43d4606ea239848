// Hypercube prefix sum (scan). Sanders et al. §13.3, Theorem 13.6 (Fig. 13.7): the all-reduce
// exchange of §13.2.1 plus two lines, computing the prefix and the subcube total together.
//   T = D(α + βn) + (2D - 1)γn, D = ⌈log p⌉ (D = 0: T = 0). Theorem 13.6 counts the
//   communication, D(α + βn); the γ terms are ours: per dimension a rank with the bit set
//   combines twice (prefix and total), and nobody needs the total after the last dimension.
//   Exact for p = 2^d; for other p an upper bound.
// Preconditions: none. Non-commutative operators keep rank order (the received subcube total
// always comes from lower ranks when it enters the prefix).
//
//   dim 0: 0↔1 2↔3 …     invariant after dimension i: x = prefix of m over the ranks of my
//   dim 1: 0↔2 1↔3 …     (i+1)-dimensional subcube up to me, m = the subcube's total
//   p ≠ 2^d: the cube is incomplete; a rank whose partner i ⊕ 2^i ≥ p skips that dimension.
//
// Why skipping is correct for the prefix: a rank u receives m' from a lower partner w = u - 2^i
// whose i-dimensional subcube lies entirely below u < p, so all of it exists and, by induction,
// w's total is complete. Totals can be incomplete only on ranks whose missing upper partner
// means no existing rank above them ever needs their total again. The totals are discarded.
#include "algorithms/algorithms.hpp"
#include "patterns/binomial_tree.hpp"
#include "patterns/hypercube.hpp"

namespace fabcoll::algorithms {

Task<> prefix_hypercube(Channel& ch, MutableBytes buf, const ReduceOp& op, bool exclusive) {
  const int p = ch.size();
  const int me = ch.rank();
  const int dims = BinomialTree::ceil_log2(p);  // D = ⌈log p⌉: the incomplete cube's dimension
  // m: the total of my current subcube; theirs: the partner's total.
  const MutableBytes m = ch.scratch(buf.size());
  const MutableBytes theirs = ch.scratch(buf.size());
  ch.copy(m, buf);
  // The total is needed only until the last dimension in which I have a partner.
  int last = -1;
  for (int i = 0; i < dims; ++i)
    if (Hypercube::partner(me, i) < p) last = i;
  // Inclusive: buf is the prefix x from the start (x = m). Exclusive: buf is the prefix over the
  // ranks below me, empty until the first lower partner's total arrives (rank 0 never gets one
  // and keeps its input, as exscan requires).
  bool have_prefix = !exclusive;
  for (int i = 0; i < dims; ++i) {
    const int partner = Hypercube::partner(me, i);
    if (partner >= p) continue;
    const auto step = static_cast<std::uint32_t>(i);
    Transfer out = ch.send(partner, m, step);
    Transfer in = ch.recv(partner, theirs, step);
    co_await out;
    co_await in;
    if (partner < me) {
      if (have_prefix) {
        Transfer work = ch.combine_left(op, theirs, buf);  // x := m' ⊗ x
        co_await work;
      } else {
        ch.copy(buf, theirs);
        have_prefix = true;
      }
      if (i != last) {
        Transfer total = ch.combine_left(op, theirs, m);  // m := m' ⊗ m
        co_await total;
      }
    } else if (i != last) {
      Transfer total = ch.combine_right(op, m, theirs);  // m := m ⊗ m'
      co_await total;
    }
  }
}

namespace {
Task<> run_scan(Channel& ch, const CollArgs& a) {
  return prefix_hypercube(ch, bytes_of(a.recvbuf, a.bytes()), a.op, /*exclusive=*/false);
}
double cost_scan(const CostQuery& q) {
  const int dims = BinomialTree::ceil_log2(q.p);
  if (dims == 0) return 0;
  return dims * (q.m.alpha + q.m.beta * q.n) + (2 * dims - 1) * q.m.gamma * q.n;
}
}  // namespace

const Algorithm kScanHypercube{
    .name = "hypercube",
    .coll = Collective::scan,
    .reference = "Sanders et al. §13.3, Thm 13.6 (Fig. 13.7)",
    .formula = "D(α + βn) + (2D-1)γn, D = ⌈log p⌉ (exact for p = 2^d, else a bound)",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost_scan,
    .optimal_k = nullptr,
    .run = run_scan,
    .test = "allreduce_scan_test.ScanHypercubeMatchesTheorem13_6",
    .written_share = written_all,
    .exchange_share = exchange_all,
};

}  // namespace fabcoll::algorithms
