// Pipelined binary-tree reduce on the in-order tree. Sanders et al. §13.2 (InOrderTree::reduce,
// pipelined), Lemma 13.4, Corollary 13.5; tree of §13.1.3 (Fig. 13.5) rooted at the root itself.
//   communication (γ = 0):  T ≤ (2L + 3(k-1))(α + β⌈n/k⌉)          (Lemma 13.4)
//   with combining:         T ≤ (2L + 3(k-1))(α + (β + 2γ)⌈n/k⌉)
//     (the proof's step grows by the two combines x ⊗ m ⊗ z done before each send)
//   L = tree height ≤ ⌈log p⌉ for any root (Exercise 13.3).
//   Cost: the time on the model, found on the sim (see cost_k below): the lemma counts an
//   inner node's two receives and its send one after another; the receives overlap the send.
// Preconditions: none; non-commutative operators keep rank order because the tree is numbered
// in order: the left subtree holds the ranks below this one, the right subtree those above,
// so each packet is sent up as x ⊗ m ⊗ z. Packets are cut on element boundaries.
// A rank keeps at most one packet in flight to its parent (it awaits packet i-1's send before
// posting packet i): otherwise a fast child (a leaf streams a packet per message time) queues
// its packets ahead of its sibling's on the parent's one receive port, and on the sim, which
// books a port when a send is posted, the lock-step schedule of the proof degrades to more than
// 3 message times per packet (seen: 30 steps over the bound at p = 29, k = 64).
//
//   left child ──x_i──┐            for every packet i: receive x_i (left) and z_i (right),
//                     ├─ x_i ⊗ m_i ⊗ z_i ──→ parent     combine, send; all receives are
//   right child ─z_i──┘                                  posted at once
#include <algorithm>
#include <cmath>

#include "algorithms/algorithms.hpp"
#include "algorithms/sim_steps.hpp"
#include "patterns/binomial_tree.hpp"
#include "patterns/inorder_binary_tree.hpp"
#include "patterns/ring.hpp"

namespace fabcoll::algorithms {

namespace {
// Bytes of packet i (whole elements) within a buffer of the message's size.
template <typename Byte>
std::span<Byte> packet_span(std::span<Byte> buf, const EvenBlocks& packets, std::size_t elem_size,
                            std::size_t i) {
  return buf.subspan(packets.begin(i) * elem_size, packets.size(i) * elem_size);
}
}  // namespace

Task<> reduce_pipelined_binary_tree(Channel& ch, ConstBytes in, MutableBytes out,
                                    const ReduceOp& op, std::size_t elem_size, std::size_t k,
                                    int root) {
  const int me = ch.rank();
  const InorderBinaryTree tree{ch.size(), root};
  const InorderBinaryTree::Node node = tree.node(me);
  const std::size_t n = in.size();
  const std::size_t count = elem_size == 0 ? 0 : n / elem_size;
  if (k == 0) k = 1;
  const EvenBlocks packets{count, k};

  // The partial results x ⊗ m ⊗ z: the output at the root, scratch at the other inner nodes;
  // the first combine of a packet reads m from `in` (no copy of the input first), and a leaf
  // sends its packets straight from `in`. `in` may alias `out` at the root (combine_into
  // allows an operand to be its output).
  const bool leaf = node.left < 0 && node.right < 0;
  const MutableBytes acc = me == root ? out : leaf ? MutableBytes{} : ch.scratch(n);
  if (leaf && me == root) ch.copy(acc, in);  // p = 1
  const MutableBytes xbuf = node.left >= 0 ? ch.scratch(n) : MutableBytes{};
  const MutableBytes zbuf = node.right >= 0 ? ch.scratch(n) : MutableBytes{};
  std::vector<Transfer> xs;
  std::vector<Transfer> zs;
  xs.reserve(node.left >= 0 ? k : 0);
  zs.reserve(node.right >= 0 ? k : 0);
  for (std::size_t i = 0; i < k; ++i) {
    const auto step = static_cast<std::uint32_t>(i);
    if (node.left >= 0)
      xs.push_back(ch.recv(node.left, packet_span(xbuf, packets, elem_size, i), step));
    if (node.right >= 0)
      zs.push_back(ch.recv(node.right, packet_span(zbuf, packets, elem_size, i), step));
  }
  Transfer up;  // at most one packet in flight to the parent (see the header)
  for (std::size_t i = 0; i < k; ++i) {
    ConstBytes mine = packet_span(in, packets, elem_size, i);  // m, then the partial result
    const MutableBytes into = leaf ? MutableBytes{} : packet_span(acc, packets, elem_size, i);
    if (node.left >= 0) {
      Transfer& x = xs[i];
      co_await x;
      const ConstBytes left = packet_span(xbuf, packets, elem_size, i);
      Transfer work = ch.combine_into(op, left, mine, into);
      co_await work;
      mine = into;
    }
    if (node.right >= 0) {
      Transfer& z = zs[i];
      co_await z;
      const ConstBytes right = packet_span(zbuf, packets, elem_size, i);
      Transfer work = ch.combine_into(op, mine, right, into);
      co_await work;
      mine = into;
    }
    if (node.parent >= 0) {
      co_await up;
      up = ch.send(node.parent, mine, static_cast<std::uint32_t>(i));
    }
  }
  co_await up;
}

double pipelined_tree_fill(int p) {
  const int L = InorderBinaryTree::floor_log2(p);
  return 2.0 * L - (2 * p < 3 * (1 << L) ? 3 : 2);
}

namespace {
Task<> run_reduce_pipelined_binary_tree(Channel& ch, const CollArgs& a) {
  const MutableBytes out = a.recvbuf == nullptr ? MutableBytes{} : bytes_of(a.recvbuf, a.bytes());
  return reduce_pipelined_binary_tree(ch, bytes_of(a.sendbuf, a.bytes()), out, a.op, a.elem_size,
                                      a.packets, a.root);
}
// The time at root 0 on the model (p ≥ 4; found on the sim, as the broadcast's): with
// τ = α + βs and g = γs, T = 2(k − 1)max(τ, g) + (d + 2)τ + c·g. An inner node receives two
// packets and combines them per packet, the receives overlapping the combines and the send;
// d = 2L − 3 for p < 1.5·2^L else 2L − 2 (L = ⌊log p⌋), the broadcast's fill while it sent to
// its left child first (pipelined_tree_fill); c = L, resp.
// L + 1, the combines on the slowest path. p = 3 (a chain from root 0): 2τ + 2g + (k − 1)
// max(τ, g). On the sim (p = 3 … 64, roots 0 and p − 1, k = 1 … 64, γ ≤ β/2): exact in the
// median, within one step (12.5%) where the fill is one step longer (p = 10, 11, 20–23,
// 40–47: d + 1 at k ≥ 2); γ = β: within 16%; γ = 8β: within 37% (the combines of one packet
// then line up). Root p/2 needs up to one step less (50% at p = 4, k = 1). Lemma 13.4's bound
// (2L + 3(k − 1))(α + (β + 2γ)s) was 1.2–3.3 times the sim.
double path_combines(int p) {
  const int L = InorderBinaryTree::floor_log2(p);
  return 2 * p < 3 * (1 << L) ? L : L + 1;
}
double cost_k(const CostQuery& q, double k) {
  if (q.p <= 1) return 0;
  const double s = std::ceil(q.n / k);
  const double tau = q.m.alpha + q.m.beta * s;
  const double g = q.m.gamma * s;
  // p = 2: one edge; the root combines each packet while the next one crosses, a pipeline of
  // two stages (exact on the sim; the lemma's bound is 2.7–5.7 times this).
  if (q.p == 2) return tau + (k - 1) * std::max(tau, g) + g;
  if (q.p == 3) return 2 * tau + 2 * g + (k - 1) * std::max(tau, g);
  return 2 * (k - 1) * std::max(tau, g) + (pipelined_tree_fill(q.p) + 2) * tau +
         path_combines(q.p) * g;
}
double cost(const CostQuery& q) { return cost_k(q, q.k >= 1 ? q.k : 1); }
double optimal_k(const CostQuery& q) {
  if (q.n <= 1 || q.p <= 1) return 1;
  // p = 2, sending the bottleneck: kα + βn + γn/k is least at k = √(γn/α).
  if (q.p == 2) return std::max(1.0, q.m.alpha > 0 ? std::sqrt(q.m.gamma * q.n / q.m.alpha) : 1.0);
  // Where g ≤ τ: T = 2kα + dα + 2βn + (dβ + cγ)n/k (p = 3: kα + α + βn + (β + 2γ)n/k), least
  // at k0 = √((dβ + cγ)n/2α); the best integer in [k0/2, 2k0 + 2] (at most 4096 of them) is
  // taken, which also covers ⌈n/k⌉ and combines slower than messages.
  const double a = (q.p == 3 ? 1 : 2) * q.m.alpha;
  const double b = q.p == 3 ? q.m.beta + 2 * q.m.gamma
                            : pipelined_tree_fill(q.p) * q.m.beta + path_combines(q.p) * q.m.gamma;
  const double k0 = a > 0 ? std::sqrt(b * q.n / a) : q.n;
  return best_k_near(q, k0, cost_k);
}
}  // namespace

namespace {
// The leaves send their input, every inner node the sums it combined; which of them carry the
// critical path depends on p and k (0.06–0.95 on the sim at p ≤ 16, k = 1 and 8), so the
// share is taken from the sim (sim_written_share).
double written_share(const CostQuery& q) {
  return sim_written_share(kReducePipelinedBinaryTree, q.p, q.k >= 1 ? q.k : 1);
}
}  // namespace

namespace {
// k > 1: the inner nodes receive the next packets while they send one up. p = 3: the root's
// two children send at once, (k − 1)/(k + 1) (sim: exact); p ≥ 4: (1 − 1/k)/2 (approximate:
// the sim's share is 0.13–0.49 at p = 4 … 16, k = 2 … 32).
double exchange_share(const CostQuery& q) {
  if (q.p < 3 || q.k <= 1) return 0;
  if (q.p == 3) return (q.k - 1) / (q.k + 1);
  return 0.5 * (1 - 1 / q.k);
}
}  // namespace

const Algorithm kReducePipelinedBinaryTree{
    .name = "pipelined_binary_tree",
    .coll = Collective::reduce,
    .reference = "Sanders et al. §13.2, Lemma 13.4, Cor. 13.5; in-order tree Fig. 13.5",
    .formula =
        "2(k-1)max(τ, g) + (d+2)τ + c·g, τ = α + βs, g = γs, s = ⌈n/k⌉, L = ⌊log p⌋, d = 2L-3 "
        "and c = L for p < 1.5·2^L, else 2L-2 and L+1; k* ≈ √((dβ + cγ)n/2α); p = 3: 2τ + 2g + "
        "(k-1)max(τ, g); p = 2: τ + (k-1)max(τ, g) + g, k* = √(γn/α)",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost,
    .optimal_k = optimal_k,
    .run = run_reduce_pipelined_binary_tree,
    .test = "bcast_reduce_test.ReducePipelinedBinaryTreeWithinLemma13_4",
    .written_share = written_share,
    .exchange_share = exchange_share,
};

}  // namespace fabcoll::algorithms
