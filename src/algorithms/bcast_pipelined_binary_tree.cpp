// Pipelined binary-tree broadcast. Sanders et al. §13.1.2, Tree::pipelinedBroadcast,
// Lemma 13.2 and Theorem 13.3, on the perfectly balanced in-order tree of §13.1.3 (Fig. 13.5):
//   T(L, n, k) ≤ (2L + 3(k-1)) (α + β⌈n/k⌉),   L = ⌊log p⌋ (the tree's height)
//   k* = sqrt(βn(2L - 3) / 3α) when that is ≥ 2, else 1;  T₂(k*) = 3βn + 2α log p + O(√(αβn log p))
// The lemma's 3 steps per packet are an inner node's receive and two sends one after another.
// On the model (a rank receives while it sends, one message at a time each way) the receive
// overlaps the sends: the root sends every packet twice, one step apart, and so does every
// inner node as each packet arrives, never falling behind. Each node sends a packet to its
// heavier child first (the right one: its subtree is as large as the left one or one rank
// larger), as the binomial tree sends to its largest subtree first. A packet's way to a leaf
// then takes one step for each first (or only) child on it and two for each second one, and
// the time is exactly
//   T = (2k + d(p)) (α + βn/k),  d(p) = D(p) − 2,
//   D(1) = 0, D(m) = max(1 + D(⌈(m−1)/2⌉), 2 + D(⌊(m−1)/2⌋))  (the second term only where
//   ⌊(m−1)/2⌋ ≥ 1): the slowest leaf's steps          (p ≥ 3)
// (equal to the sim for p = 3 … 64, k = 1, 2, 3, 5, 8, 16, roots 0, p/2, p - 1: the cost this
// file uses, so that a prediction is what runs, as at p = 2 where the tree is one edge and
// T = k(α + βn/k));
//   k* = sqrt(d βn / 2α)   (at p = 4, d = 0: the root's two sends of every byte are the time,
//   and packets only add α).
// Sent left child first (until the thirtieth session), the slowest leaf took one step more at
// about half of all p (d = 2L − 3 for p < 1.5·2^L, else 2L − 2): at p = 4 three steps for k = 1
// where the binomial tree takes two.
// Preconditions: none (any p, any root). The message is cut into k packets on element
// boundaries (the first count mod k packets one element longer), k = args.packets.
// The tree is built over root-relative numbers v = (rank - root + ⌊(p-1)/2⌋) mod p with its root
// in the middle, so the height is ⌊log p⌋ for every root (broadcast needs no rank order).
//
//   packet:  i      i+1     each rank: receive packet i from its parent, then send it
//   parent:  recv → send R, send L     to the right and the left child; all receives are
//   step:    t      t+1     t+2        posted at once so packet i+1 arrives while i goes on
#include <algorithm>
#include <cmath>

#include "algorithms/algorithms.hpp"
#include "patterns/inorder_binary_tree.hpp"
#include "patterns/ring.hpp"

namespace fabcoll::algorithms {

namespace {
// Packet i of the message: whole elements only.
// The rank at tree position v (-1 stays -1): the tree's middle maps to the root.
int tree_rank(int v, int mid, int root, int p) { return v < 0 ? -1 : (v - mid + root + p) % p; }
MutableBytes packet(MutableBytes buf, const EvenBlocks& packets, std::size_t elem_size,
                    std::size_t i) {
  return buf.subspan(packets.begin(i) * elem_size, packets.size(i) * elem_size);
}
}  // namespace

Task<> bcast_pipelined_binary_tree(Channel& ch, MutableBytes buf, std::size_t elem_size,
                                   std::size_t k, int root) {
  const int p = ch.size();
  const int mid = InorderBinaryTree::balanced_root(p);
  const InorderBinaryTree tree{p, mid};
  // root-relative numbering with the root in the middle of the tree
  const int v = (ch.rank() - root + mid + p) % p;
  const InorderBinaryTree::Node node = tree.node(v);
  const int parent = tree_rank(node.parent, mid, root, p);
  const int left = tree_rank(node.left, mid, root, p);
  const int right = tree_rank(node.right, mid, root, p);

  const std::size_t count = elem_size == 0 ? 0 : buf.size() / elem_size;
  if (k == 0) k = 1;
  const EvenBlocks packets{count, k};

  std::vector<Transfer> recvs;
  if (parent >= 0) {
    recvs.reserve(k);
    for (std::size_t i = 0; i < k; ++i)
      recvs.push_back(
          ch.recv(parent, packet(buf, packets, elem_size, i), static_cast<std::uint32_t>(i)));
  }
  TransferSet sends;
  for (std::size_t i = 0; i < k; ++i) {
    if (parent >= 0) {
      Transfer& arrived = recvs[i];
      co_await arrived;
    }
    const auto step = static_cast<std::uint32_t>(i);
    // the heavier subtree first (see the top)
    if (right >= 0) sends.add(ch.send(right, packet(buf, packets, elem_size, i), step));
    if (left >= 0) sends.add(ch.send(left, packet(buf, packets, elem_size, i), step));
  }
  co_await sends;
}

namespace {
// D(m) of the top: the slowest leaf's steps below the root of a balanced in-order tree of m
// ranks, its right (heavier) child sent to first.
int heavy_first_steps(int m) {
  if (m <= 1) return 0;
  const int left = (m - 1) / 2;
  const int right = m - 1 - left;
  return std::max(1 + heavy_first_steps(right), left > 0 ? 2 + heavy_first_steps(left) : 0);
}
}  // namespace

double pipelined_bcast_fill(int p) { return heavy_first_steps(p) - 2.0; }

namespace {
Task<> run_bcast_pipelined_binary_tree(Channel& ch, const CollArgs& a) {
  return bcast_pipelined_binary_tree(ch, bytes_of(a.recvbuf, a.bytes()), a.elem_size, a.packets,
                                     a.root);
}
double cost(const CostQuery& q) {
  const double k = q.k >= 1 ? q.k : 1;
  if (q.p <= 1) return 0;
  const double tau = q.m.alpha + q.m.beta * std::ceil(q.n / k);
  // p = 2: the tree is one edge, and the k packets cross it one after another (exact; the
  // lemma's bound, for a tree whose inner nodes send every packet twice, is twice this and more).
  if (q.p == 2) return k * tau;
  return (2 * k + pipelined_bcast_fill(q.p)) *
         tau;  // exact (see the top), within Lemma 13.2's bound
}
double optimal_k(const CostQuery& q) {
  if (q.p <= 2) return 1;  // one edge: packets only add α
  const double k = std::sqrt(pipelined_bcast_fill(q.p) * q.m.beta * q.n / (2 * q.m.alpha));
  return std::max(k, 1.0);
}
}  // namespace

namespace {
// p ≤ 3: the root's children are leaves, nothing is forwarded. p = 4, 5: the root, sending
// every packet twice, is the bottleneck, and only the last packet's last hop is forwarded:
// 1/(2k) at p = 4, where that hop ends with the root's last send, 1/(2k + 1) at p = 5. Larger
// p: the forwarding nodes are, 1 − c/(2k + d) (d: pipelined_bcast_fill), c = 1 where the
// next p's slowest leaf takes a step more (p = 6, 10, 14, 22, 30, 46, 62: the slowest way
// starts with the root's first send), else 2 (an empirical fit: exact on the sim at p = 6 … 64,
// k = 1, 2, 8, and p = 6 … 16, k = 1 … 32).
double written_share(const CostQuery& q) {
  if (q.p <= 3) return 0;
  const double k = std::max(q.k, 1.0);
  if (q.p == 4) return 1 / (2 * k);
  if (q.p == 5) return 1 / (2 * k + 1);
  const double d = pipelined_bcast_fill(q.p);
  const double c = heavy_first_steps(q.p + 1) > heavy_first_steps(q.p) ? 1 : 2;
  return 1 - c / (2 * k + d);
}
}  // namespace

namespace {
// p ≤ 5: the root's two sends per packet are the bottleneck and its children do not overlap
// receiving with sending (sim: 0). Larger p, k > 1: the inner nodes do, (1 − 1/k)/2 (approximate:
// the sim's share is 0.14–0.71 at p = 6 … 16, k = 2 … 32).
double exchange_share(const CostQuery& q) {
  if (q.p <= 5 || q.k <= 1) return 0;
  return 0.5 * (1 - 1 / q.k);
}
}  // namespace

const Algorithm kBcastPipelinedBinaryTree{
    .name = "pipelined_binary_tree",
    .coll = Collective::bcast,
    .reference = "Sanders et al. §13.1.2–13.1.3, Lemma 13.2, Thm 13.3, Fig. 13.5",
    .formula =
        "(2k + d)(α + β⌈n/k⌉), d = D(p) - 2, D(1) = 0, D(m) = max(1 + D(⌈(m-1)/2⌉), 2 + "
        "D(⌊(m-1)/2⌋)) (the heavier child first), k* = √(dβn/2α) (exact on the model; Lemma "
        "13.2's bound (2L + 3(k-1))(α + β⌈n/k⌉), L = ⌊log p⌋); p = 2: k(α + β⌈n/k⌉), k* = 1",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost,
    .optimal_k = optimal_k,
    .run = run_bcast_pipelined_binary_tree,
    .test = "bcast_reduce_test.BcastPipelinedBinaryTreeWithinLemma13_2",
    .written_share = written_share,
    .exchange_share = exchange_share,
};

}  // namespace fabcoll::algorithms
