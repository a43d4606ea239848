// Binomial-tree gather: the binomial tree reduction of §13.2 with concatenation as the
// operator. Sanders et al. §13.5.1, Theorem 13.9 (Fig. 13.12):
//   T(n, p) = ⌈log p⌉ α + (p - 1) n β        (n = bytes per rank; exact for p = 2^d, a bound
//                                              otherwise: subtrees are then no larger)
// Preconditions: none (any p, any root). In root-relative numbering (vrank) every subtree is a
// contiguous vrank range [v, v + subtree size), so a rank collects its subtree's blocks in vrank
// order and forwards them as one message; the root rotates the vrank order into rank order.
//
//   level 0: 1→0 3→2 5→4 7→6    (1 block each)
//   level 1: 2→0 6→4            (2 blocks: 2,3 and 6,7)
//   level 2: 4→0                (4 blocks: 4…7)
#include "algorithms/algorithms.hpp"
#include "patterns/binomial_tree.hpp"

namespace fabcoll::algorithms {

Task<> gather_binomial(Channel& ch, ConstBytes block, MutableBytes all, int root) {
  const int p = ch.size();
  const int me = ch.rank();
  const BinomialTree tree{p, root};
  const std::size_t n = block.size();
  const int v = tree.vrank(me);
  const int s = tree.subtree_size(me);
  const int parent = tree.parent(me);
  if (s == 1 && parent >= 0) {  // a leaf sends its own block straight from the user's buffer
    Transfer out = ch.send(parent, block);
    co_await out;
    co_return;
  }
  // The subtree's blocks in vrank order: straight into the result when vrank = rank (root 0).
  const auto us = static_cast<std::size_t>(s);
  const MutableBytes sub = (parent < 0 && root == 0) ? all : ch.scratch(us * n);
  ch.copy(sub.first(n), block);  // skipped when the root's block is already in place
  TransferSet arrivals;
  for (const int child : tree.children(me)) {
    const auto offset = static_cast<std::size_t>(tree.vrank(child) - v) * n;
    const auto size = static_cast<std::size_t>(tree.subtree_size(child)) * n;
    arrivals.add(ch.recv(child, sub.subspan(offset, size)));
  }
  co_await arrivals;
  if (parent >= 0) {
    Transfer out = ch.send(parent, sub);
    co_await out;
    co_return;
  }
  if (root != 0) {  // vrank j holds rank (j + root) mod p: two contiguous pieces
    const auto head = static_cast<std::size_t>(p - root) * n;
    ch.copy(all.subspan(static_cast<std::size_t>(root) * n, head), sub.first(head));
    ch.copy(all.first(static_cast<std::size_t>(root) * n), sub.subspan(head));
  }
}

namespace {
Task<> run(Channel& ch, const CollArgs& a) {
  const std::size_t n = a.bytes();
  const bool at_root = ch.rank() == a.root;
  const MutableBytes all =
      at_root ? bytes_of(a.recvbuf, n * static_cast<std::size_t>(ch.size())) : MutableBytes{};
  return gather_binomial(ch, bytes_of(a.sendbuf, n), all, a.root);
}
double cost(const CostQuery& q) {
  return BinomialTree::ceil_log2(q.p) * q.m.alpha + (q.p - 1) * q.n * q.m.beta;
}
}  // namespace

namespace {
// The root's receive port carries p − 1 blocks, all but one forwarded by the ranks that
// gathered them (two when the root's largest subtree is a single rank, p = 2^(d−1) + 1):
// (p − 2 − lone)/(p − 1) (sim: exact for p = 2 … 16).
double written_share(const CostQuery& q) {
  if (q.p < 3) return 0;
  const int d = BinomialTree::ceil_log2(q.p);
  const int lone = q.p == (1 << (d - 1)) + 1 ? 1 : 0;
  return (q.p - 2.0 - lone) / (q.p - 1.0);
}
}  // namespace

const Algorithm kGatherBinomial{
    .name = "binomial",
    .coll = Collective::gather,
    .reference = "Sanders et al. §13.5.1, Thm 13.9 (Fig. 13.12)",
    .formula = "⌈log p⌉α + (p − 1)nβ",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost,
    .optimal_k = nullptr,
    .run = run,
    .test = "gather_barrier_test.GatherBinomialMatchesTheorem13_9",
    .written_share = written_share,
};

}  // namespace fabcoll::algorithms
