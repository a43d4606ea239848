// Pipelined exclusive prefix sum (exscan) on the in-order binary tree. Sanders et al. §13.3,
// Fig. 13.8 and Corollary 13.7, exclusive variant (⊗_{i < i_proc} m_i): the same messages as
// the inclusive scan (scan_inorder_tree.cpp); a PE keeps ℓ ⊗ x instead of ℓ ⊗ x ⊗ m.
//   T ≤ (4L + 6(k-1)) (α + (β + γ)⌈n/k⌉),   L = ⌊log p⌋; k* = √((β + γ)n(2L - 3) / 3α)
//     (the down phase combines twice per packet, ℓ ⊗ x and ℓ ⊗ x ⊗ m, within the same bound)
// Preconditions: none; rank 0 (a = 0, no left subtree) keeps its buffer as it was.
// Non-commutative operators keep rank order.
//
//        up:   x ──→ i ←── z;  i sends x⊗m⊗z to its parent
//        down: i keeps ℓ⊗x, passes ℓ to the left child and ℓ⊗x⊗m to the right child
#include "algorithms/algorithms.hpp"

namespace fabcoll::algorithms {

namespace {
Task<> run_exscan_inorder(Channel& ch, const CollArgs& a) {
  return prefix_inorder_tree(ch, bytes_of(a.recvbuf, a.bytes()), a.elem_size, a.op, a.packets,
                             /*exclusive=*/true);
}
}  // namespace

namespace {
// Approximate: with k > 1 packets the inner nodes overlap the up and down sweeps; the sim's
// share is 0.18–0.49 at p = 4 … 16, k = 2 … 32, 0 at p ≤ 3: 0.3.
double exchange_share(const CostQuery& q) { return q.p < 4 || q.k <= 1 ? 0.0 : 0.3; }
}  // namespace

const Algorithm kExscanInorderTree{
    .name = "inorder_tree",
    .coll = Collective::exscan,
    .reference = "Sanders et al. §13.3, Fig. 13.8, Cor. 13.7, exclusive variant",
    .formula = "≤ (4L + 6(k-1))(α + (β+γ)⌈n/k⌉), L = ⌊log p⌋; k* = √((β+γ)n(2L-3)/3α)",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = prefix_inorder_tree_cost,
    .optimal_k = prefix_inorder_tree_optimal_k,
    .run = run_exscan_inorder,
    .test = "allreduce_scan_test.ExscanInorderTreeWithinCorollary13_7",
    .written_share = written_all,
    .exchange_share = exchange_share,
};

}  // namespace fabcoll::algorithms
