// Binomial-tree scatter: the binomial broadcast of §13.1.1 where a rank sends to the root of a
// subtree a..b only the concatenation m_a … m_b. Sanders et al. §13.5.2 (Fig. 13.12), the
// analysis of Theorem 13.9:
//   T(n, p) = ⌈log p⌉ α + (p - 1) n β        (n = bytes per rank; exact for p = 2^d, a bound
//                                              otherwise)
// Preconditions: none (any p, any root). Subtrees are contiguous vrank ranges; the root first
// rotates its rank-ordered blocks into vrank order (free: local copy), then serves its children
// largest subtree first, as in broadcast.
//
//   step 1: 0→4                 (4 blocks: 4…7)
//   step 2: 0→2 4→6             (2 blocks)
//   step 3: 0→1 2→3 4→5 6→7     (1 block)
#include <algorithm>

#include "algorithms/algorithms.hpp"
#include "patterns/binomial_tree.hpp"

namespace fabcoll::algorithms {

Task<> scatter_binomial(Channel& ch, ConstBytes all, MutableBytes block, int root) {
  const int p = ch.size();
  const int me = ch.rank();
  const BinomialTree tree{p, root};
  const std::size_t n = block.size();
  const int v = tree.vrank(me);
  const int s = tree.subtree_size(me);
  const int parent = tree.parent(me);
  if (s == 1 && parent >= 0) {  // a leaf receives its block straight into the user's buffer
    Transfer in = ch.recv(parent, block);
    co_await in;
    co_return;
  }
  // The subtree's blocks in vrank order.
  ConstBytes sub;
  if (parent >= 0) {
    const MutableBytes tmp = ch.scratch(static_cast<std::size_t>(s) * n);
    Transfer in = ch.recv(parent, tmp);
    co_await in;
    sub = tmp;
  } else if (root == 0) {
    sub = all;
  } else {  // vrank j is rank (j + root) mod p
    const MutableBytes tmp = ch.scratch(static_cast<std::size_t>(p) * n);
    const auto head = static_cast<std::size_t>(p - root) * n;
    ch.copy(tmp.first(head), all.subspan(static_cast<std::size_t>(root) * n, head));
    ch.copy(tmp.subspan(head), all.first(static_cast<std::size_t>(root) * n));
    sub = tmp;
  }
  TransferSet sends;
  for (const int child : tree.children(me)) {  // largest subtree first
    const auto offset = static_cast<std::size_t>(tree.vrank(child) - v) * n;
    const auto size = static_cast<std::size_t>(tree.subtree_size(child)) * n;
    sends.add(ch.send(child, sub.subspan(offset, size)));
  }
  ch.copy(block, sub.first(n));  // skipped when recvbuf is the root's own block in place
  co_await sends;
}

namespace {
Task<> run(Channel& ch, const CollArgs& a) {
  const std::size_t n = a.bytes();
  const bool at_root = ch.rank() == a.root;
  const ConstBytes all =
      at_root ? bytes_of(a.sendbuf, n * static_cast<std::size_t>(ch.size())) : ConstBytes{};
  return scatter_binomial(ch, all, bytes_of(a.recvbuf, n), a.root);
}
double cost(const CostQuery& q) {
  return BinomialTree::ceil_log2(q.p) * q.m.alpha + (q.p - 1) * q.n * q.m.beta;
}
}  // namespace

namespace {
// The root sends input; the longest path forwards 2^(⌊log p⌋ − 1) − 1 of the p − 1 blocks
// (sim: exact for p = 2 … 16).
double written_share(const CostQuery& q) {
  if (q.p < 2) return 0;
  const int floor_log = BinomialTree::ceil_log2(q.p + 1) - 1;
  return ((1 << std::max(0, floor_log - 1)) - 1) / (q.p - 1.0);
}
}  // namespace

const Algorithm kScatterBinomial{
    .name = "binomial",
    .coll = Collective::scatter,
    .reference = "Sanders et al. §13.5.2 (Fig. 13.12), analysis of Thm 13.9",
    .formula = "⌈log p⌉α + (p − 1)nβ",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost,
    .optimal_k = nullptr,
    .run = run,
    .test = "gather_barrier_test.ScatterBinomialMatchesTheorem13_9",
    .written_share = written_share,
};

}  // namespace fabcoll::algorithms
