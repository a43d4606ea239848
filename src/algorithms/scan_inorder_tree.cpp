// Pipelined prefix sum (scan) on the in-order binary tree. Sanders et al. §13.3, Fig. 13.8 and
// Corollary 13.7, on the perfectly balanced tree of §13.1.3 (Fig. 13.5); pipelining as for the
// reduction and broadcast it is made of (Lemmas 13.2 and 13.4).
//   T ≤ (4L + 6(k-1)) (α + (β + γ)⌈n/k⌉),   L = ⌊log p⌋ (the tree's height), k packets
//     the up phase is a pipelined reduction and the down phase a pipelined broadcast, each
//     2L + 3(k-1) packet steps (Lemmas 13.4, 13.2); we lengthen every step by one packet's
//     combine (a node combines at most twice per packet and phase, over three steps).
//   k* = √((β + γ)n(2L - 3) / 3α) when ≥ 2, else 1 (Lemma 13.2's optimum, β → β + γ);
//   T(k*) = 6βn + 4α log p + O(√(αβn log p)) for γ = 0 (Corollary 13.7).
// Preconditions: none. Non-commutative operators keep rank order: every subtree is a
// contiguous range of ranks with the left subtree below its root and the right one above.
//
//        up:   x (left subtree a..i-1) ──→ i ←── z (right subtree i+1..b);  i sends x⊗m⊗z up
//        down: ℓ (ranks 0..a-1) from the parent; i keeps ℓ⊗x⊗m, passes ℓ to the left child
//              and ℓ⊗x⊗m to the right child. Ranks with a = 0 receive nothing (no ℓ); the
//              right spine (b = p-1) sends nothing up (its totals are the all-reduce).
#include <cmath>
#include <vector>

#include "algorithms/algorithms.hpp"
#include "patterns/inorder_binary_tree.hpp"
#include "patterns/ring.hpp"

namespace fabcoll::algorithms {

namespace {
MutableBytes packet_of(MutableBytes buf, const EvenBlocks& packets, std::size_t elem_size,
                       std::size_t i) {
  return buf.subspan(packets.begin(i) * elem_size, packets.size(i) * elem_size);
}
}  // namespace

Task<> prefix_inorder_tree(Channel& ch, MutableBytes buf, std::size_t elem_size, const ReduceOp& op,
                           std::size_t k, bool exclusive) {
  const int p = ch.size();
  const int me = ch.rank();
  const InorderBinaryTree tree{p, InorderBinaryTree::balanced_root(p)};
  const InorderBinaryTree::Node node = tree.node(me);
  const bool has_left = node.left >= 0;
  const bool has_right = node.right >= 0;
  const bool has_parent = node.parent >= 0;
  const bool has_ell = node.lo > 0;  // ℓ = ⊗ of ranks 0..a-1 comes from the parent
  // Only subtrees that end below rank p-1 send their totals up: on the right spine (b = p-1)
  // the total is the all-reduce, which no prefix needs (the parent only passes it further up).
  const bool sends_up = has_parent && node.hi < p - 1;
  const bool needs_z = has_right && sends_up;
  if (k == 0) k = 1;
  const std::size_t count = buf.size() / elem_size;
  const EvenBlocks packets{count, k};
  const std::size_t n = buf.size();
  const auto up_step = [](std::size_t i) { return static_cast<std::uint32_t>(i); };
  const auto down_step = [k](std::size_t i) { return static_cast<std::uint32_t>(k + i); };

  // x: the left subtree's total, z: the right subtree's, ell: ℓ from the parent (scratch).
  const MutableBytes x = has_left ? ch.scratch(n) : MutableBytes{};
  const MutableBytes z = needs_z ? ch.scratch(n) : MutableBytes{};
  const MutableBytes ell = has_ell ? ch.scratch(n) : MutableBytes{};
  // acc = x ⊗ m: the prefix within my subtree. Inclusive scan: buf itself; exclusive: a copy,
  // since buf becomes ℓ ⊗ x.
  const MutableBytes acc = exclusive ? ch.scratch(n) : buf;
  if (exclusive) ch.copy(acc, buf);
  // up: what goes to the parent, x ⊗ m ⊗ z (scratch when there is a right subtree).
  const MutableBytes up = needs_z ? ch.scratch(n) : acc;

  // Post every receive at once: packets arrive in order and wait in their own buffers.
  std::vector<Transfer> from_left, from_right, from_parent;
  from_left.reserve(has_left ? k : 0);
  from_right.reserve(needs_z ? k : 0);
  from_parent.reserve(has_ell ? k : 0);
  for (std::size_t i = 0; i < k; ++i) {
    if (has_left)
      from_left.push_back(ch.recv(node.left, packet_of(x, packets, elem_size, i), up_step(i)));
    if (needs_z)
      from_right.push_back(ch.recv(node.right, packet_of(z, packets, elem_size, i), up_step(i)));
    if (has_ell)
      from_parent.push_back(
          ch.recv(node.parent, packet_of(ell, packets, elem_size, i), down_step(i)));
  }

  // Up phase (InOrderTree::reduce, pipelined): packet i of x ⊗ m ⊗ z to the parent.
  TransferSet ups;
  for (std::size_t i = 0; i < k; ++i) {
    const MutableBytes a_i = packet_of(acc, packets, elem_size, i);
    if (has_left) {
      Transfer& arrived = from_left[i];
      co_await arrived;
      Transfer work = ch.combine_left(op, packet_of(x, packets, elem_size, i), a_i);
      co_await work;
    }
    if (!sends_up) continue;
    const MutableBytes up_i = packet_of(up, packets, elem_size, i);
    if (needs_z) {
      ch.copy(up_i, a_i);
      Transfer& arrived = from_right[i];
      co_await arrived;
      Transfer work = ch.combine_right(op, up_i, packet_of(z, packets, elem_size, i));
      co_await work;
    }
    ups.add(ch.send(node.parent, up_i, up_step(i)));
  }
  // The up packets may be read from acc, which the down phase overwrites.
  co_await ups;

  // Down phase: my prefix, ℓ to the left child and ℓ ⊗ x ⊗ m to the right child.
  TransferSet downs;
  for (std::size_t i = 0; i < k; ++i) {
    const MutableBytes a_i = packet_of(acc, packets, elem_size, i);
    const MutableBytes b_i = packet_of(buf, packets, elem_size, i);
    if (has_ell) {
      Transfer& arrived = from_parent[i];
      co_await arrived;
      const MutableBytes ell_i = packet_of(ell, packets, elem_size, i);
      if (has_left) downs.add(ch.send(node.left, ell_i, down_step(i)));
      if (exclusive) {  // buf := ℓ ⊗ x (or ℓ alone without a left subtree)
        ch.copy(b_i, ell_i);
        if (has_left) {
          Transfer work = ch.combine_right(op, b_i, packet_of(x, packets, elem_size, i));
          co_await work;
        }
      }
      if (!exclusive || has_right) {  // acc := ℓ ⊗ x ⊗ m (exscan: only the right child needs it)
        Transfer work = ch.combine_left(op, ell_i, a_i);
        co_await work;
      }
    } else if (exclusive && has_left) {  // a = 0: the exclusive prefix is x alone
      ch.copy(b_i, packet_of(x, packets, elem_size, i));
    }
    if (has_right) downs.add(ch.send(node.right, a_i, down_step(i)));
  }
  co_await downs;
}

namespace {
Task<> run_scan_inorder(Channel& ch, const CollArgs& a) {
  return prefix_inorder_tree(ch, bytes_of(a.recvbuf, a.bytes()), a.elem_size, a.op, a.packets,
                             /*exclusive=*/false);
}
}  // namespace

double prefix_inorder_tree_cost(const CostQuery& q) {
  if (q.p <= 1) return 0;
  const double k = q.k >= 1 ? q.k : 1;
  const InorderBinaryTree tree{q.p, InorderBinaryTree::balanced_root(q.p)};
  const double L = tree.height();
  return (4 * L + 6 * (k - 1)) * (q.m.alpha + (q.m.beta + q.m.gamma) * std::ceil(q.n / k));
}

double prefix_inorder_tree_optimal_k(const CostQuery& q) {
  const InorderBinaryTree tree{q.p, InorderBinaryTree::balanced_root(q.p)};
  const double L = tree.height();
  const double k = std::sqrt((q.m.beta + q.m.gamma) * q.n * (2 * L - 3) / (3 * q.m.alpha));
  return k >= 2 ? k : 1;
}

namespace {
// Approximate: the up and down sweeps send combined prefixes; only the leaves' first packets
// are input. The sim's share: p = 2: 0, p = 3: 0.5, p = 4 … 16: 0.51–0.99 (k = 1 … 32): 0.75.
double written_share(const CostQuery& q) {
  if (q.p < 3) return 0;
  return q.p == 3 ? 0.5 : 0.75;
}
}  // namespace

namespace {
// Approximate: with k > 1 packets the inner nodes overlap the up and down sweeps; the sim's
// share is 0.18–0.49 at p = 4 … 16, k = 2 … 32, 0 at p ≤ 3: 0.3.
double exchange_share(const CostQuery& q) { return q.p < 4 || q.k <= 1 ? 0.0 : 0.3; }
}  // namespace

const Algorithm kScanInorderTree{
    .name = "inorder_tree",
    .coll = Collective::scan,
    .reference = "Sanders et al. §13.3, Fig. 13.8, Cor. 13.7 (Lemmas 13.2, 13.4)",
    .formula = "≤ (4L + 6(k-1))(α + (β+γ)⌈n/k⌉), L = ⌊log p⌋; k* = √((β+γ)n(2L-3)/3α)",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = prefix_inorder_tree_cost,
    .optimal_k = prefix_inorder_tree_optimal_k,
    .run = run_scan_inorder,
    .test = "allreduce_scan_test.ScanInorderTreeWithinCorollary13_7",
    .written_share = written_share,
    .exchange_share = exchange_share,
};

}  // namespace fabcoll::algorithms
