// Hypercube exclusive prefix sum (exscan). Sanders et al. §13.3, Theorem 13.6 (Fig. 13.7), in
// the exclusive variant the section defines (⊗_{i < i_proc} m_i): the same exchange as the
// inclusive scan (scan_hypercube.cpp), keeping the prefix over the ranks below me instead.
//   T = D(α + βn) + max(0, 2D - 2)γn, D = ⌈log p⌉. Theorem 13.6 counts the communication; the
//   γ terms are ours: the first lower partner's total is copied, not combined, and nobody needs
//   the total after the last dimension. Exact for p = 2^d; for other p an upper bound.
// Preconditions: none; rank 0's buffer is left as it was. Non-commutative operators keep rank
// order.
//
//   dim 0: 0↔1 2↔3 …     rank 1 gets m_0; rank 3 gets m_2
//   dim 1: 0↔2 1↔3 …     rank 2 gets m_0⊗m_1; rank 3 gets (m_0⊗m_1) ⊗ m_2
//   p ≠ 2^d: the incomplete cube, as for the inclusive scan.
#include "algorithms/algorithms.hpp"
#include "patterns/binomial_tree.hpp"

namespace fabcoll::algorithms {

namespace {
Task<> run_exscan(Channel& ch, const CollArgs& a) {
  return prefix_hypercube(ch, bytes_of(a.recvbuf, a.bytes()), a.op, /*exclusive=*/true);
}
double cost_exscan(const CostQuery& q) {
  const int dims = BinomialTree::ceil_log2(q.p);
  if (dims == 0) return 0;
  return dims * (q.m.alpha + q.m.beta * q.n) + (2 * dims - 2) * q.m.gamma * q.n;
}
}  // namespace

const Algorithm kExscanHypercube{
    .name = "hypercube",
    .coll = Collective::exscan,
    .reference = "Sanders et al. §13.3, Thm 13.6 (Fig. 13.7), exclusive variant",
    .formula = "D(α + βn) + (2D-2)γn, D = ⌈log p⌉ ≥ 1 (exact for p = 2^d, else a bound)",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost_exscan,
    .optimal_k = nullptr,
    .run = run_exscan,
    .test = "allreduce_scan_test.ExscanHypercubeMatchesTheorem13_6",
    .written_share = written_all,
    .exchange_share = exchange_all,
};

}  // namespace fabcoll::algorithms
