// Scatter + all-gather broadcast (van de Geijn; MPICH's long-message broadcast). Vadhiyar
// (002_…), "binomial scatter + ring allgather"; scatter: Sanders et al. §13.5 (Fig. 13.12);
// ring all-gather: Grama ch. 4 / Rehman Algorithm 4.4.
//   T(n, p) = (⌈log p⌉ + p - 1) α + 2 ((p-1)/p) β n      (exact for p = 2^d, p | count;
//   otherwise an upper bound with block size ⌈n/p⌉: ⌈log p⌉α + (p-1)(α + 2β⌈n/p⌉))
// Preconditions: none (any p, any root). The message is cut into p blocks on element
// boundaries; block v belongs to root-relative rank v = (rank - root) mod p.
//
//   scatter:    root → subtree roots, each gets its subtree's blocks (binomial, ⌈log p⌉ steps)
//   all-gather: v → v+1 on the ring of vranks, p-1 steps; at step s vrank v sends block v-s
//   afterwards every rank holds all p blocks, i.e. the message
#include <cmath>

#include "algorithms/algorithms.hpp"
#include "patterns/binomial_tree.hpp"
#include "patterns/ring.hpp"

namespace fabcoll::algorithms {

namespace {
// Blocks first .. first+num-1 (vrank order) of the message, as bytes.
MutableBytes block_span(MutableBytes buf, const EvenBlocks& blocks, std::size_t elem_size,
                        int first, int num) {
  const auto b = static_cast<std::size_t>(first);
  const auto e = static_cast<std::size_t>(first + num);
  return buf.subspan(blocks.begin(b) * elem_size, blocks.span(b, e) * elem_size);
}
}  // namespace

Task<> bcast_scatter_allgather(Channel& ch, MutableBytes buf, std::size_t elem_size, int root) {
  const int p = ch.size();
  const int me = ch.rank();
  const std::size_t count = elem_size == 0 ? 0 : buf.size() / elem_size;
  const EvenBlocks blocks{count, static_cast<std::size_t>(p)};

  // Binomial scatter: a subtree rooted at vrank v spans vranks v .. v + size - 1, so it
  // receives those blocks, one contiguous range, from its parent.
  const BinomialTree tree{p, root};
  const int v = tree.vrank(me);
  const int parent = tree.parent(me);
  if (parent >= 0) {
    Transfer in = ch.recv(parent, block_span(buf, blocks, elem_size, v, tree.subtree_size(me)), 0);
    co_await in;
  }
  TransferSet sends;
  for (const int child : tree.children(me))  // largest subtree first
    sends.add(ch.send(
        child, block_span(buf, blocks, elem_size, tree.vrank(child), tree.subtree_size(child)), 0));
  co_await sends;

  // Ring all-gather over vranks: receive block v-s-1 from the left while sending block v-s
  // (the one received in the previous step) to the right. One receive is posted ahead, not all
  // p-1: the same overlap, and a short list of posted receives for large p.
  const Ring ring{p};
  const int right = tree.rank(ring.right(v));
  const int left = tree.rank(ring.left(v));
  Transfer got;  // the previous step's receive
  for (int s = 0; s + 1 < p; ++s) {
    const auto step = static_cast<std::uint32_t>(s + 1);
    Transfer next =
        ch.recv(left, block_span(buf, blocks, elem_size, ring.recv_block(v, s), 1), step);
    co_await got;  // block v-s arrived in step s-1 (own block for s = 0)
    sends.add(ch.send(right, block_span(buf, blocks, elem_size, ring.send_block(v, s), 1), step));
    got = std::move(next);
  }
  co_await got;
  co_await sends;
}

namespace {
Task<> run_bcast_scatter_allgather(Channel& ch, const CollArgs& a) {
  return bcast_scatter_allgather(ch, bytes_of(a.recvbuf, a.bytes()), a.elem_size, a.root);
}
double cost(const CostQuery& q) {
  if (q.p <= 1) return 0;
  const double p = q.p;
  return (BinomialTree::ceil_log2(q.p) + p - 1) * q.m.alpha + 2 * (p - 1) / p * q.m.beta * q.n;
}
}  // namespace

namespace {
// The scatter's first half leaves the root's input; the rest of the scatter is forwarded and
// the all-gather moves received blocks: 1 − p/(4(p − 1)) (sim: exact at p = 2^d, within 0.07
// otherwise).
double written_share(const CostQuery& q) {
  if (q.p < 2) return 0;
  return 1 - q.p / (4.0 * (q.p - 1));
}
}  // namespace

namespace {
// The scatter goes one way, the all-gather (the same bytes again) exchanges: 1/2.
double exchange_share(const CostQuery& q) { return q.p < 2 ? 0.0 : 0.5; }
}  // namespace

const Algorithm kBcastScatterAllgather{
    .name = "scatter_allgather",
    .coll = Collective::bcast,
    .reference = "van de Geijn; Vadhiyar (MPICH long-message bcast); Sanders et al. §13.5",
    .formula = "(⌈log p⌉ + p - 1)α + 2((p-1)/p)βn",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost,
    .optimal_k = nullptr,
    .run = run_bcast_scatter_allgather,
    .test = "bcast_reduce_test.BcastScatterAllgatherMatchesVanDeGeijn",
    .written_share = written_share,
    .exchange_share = exchange_share,
};

}  // namespace fabcoll::algorithms
