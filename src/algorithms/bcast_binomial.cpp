// Binomial-tree broadcast. Sanders et al. §13.1.1, Theorem 13.1:
//   T(n, p) = ⌈log p⌉ (α + βn)
// Preconditions: none (any p, any root).
//
//   step 1: 0 → 4        each rank receives once from its parent, then sends to its
//   step 2: 0 → 2, 4 → 6 children largest subtree first, so the critical path is one
//   step 3: 0→1 2→3 4→5 6→7   message per level.
#include <cmath>

#include "algorithms/algorithms.hpp"
#include "patterns/binomial_tree.hpp"

namespace fabcoll::algorithms {

Task<> bcast_binomial(Channel& ch, MutableBytes buf, int root) {
  const BinomialTree tree{ch.size(), root};
  const int parent = tree.parent(ch.rank());
  if (parent >= 0) {
    Transfer in = ch.recv(parent, buf);
    co_await in;
  }
  TransferSet sends;
  for (const int child : tree.children(ch.rank())) sends.add(ch.send(child, buf));
  co_await sends;
}

namespace {
Task<> run(Channel& ch, const CollArgs& a) {
  return bcast_binomial(ch, bytes_of(a.recvbuf, a.bytes()), a.root);
}
double cost(const CostQuery& q) {
  return BinomialTree::ceil_log2(q.p) * (q.m.alpha + q.m.beta * q.n);
}
}  // namespace

double binomial_written_share(int p) {
  const int d = BinomialTree::ceil_log2(p);
  int most = 0;
  // The root's i-th send (i = 1 … d) goes to relative rank 2^(d − i), whose subtree is the
  // ranks [2^(d − i), min(2^(d − i + 1), p)).
  for (int i = 1; i <= d; ++i) {
    const int child = 1 << (d - i);
    if (child >= p) continue;
    const int size = std::min(child, p - child);
    const int steps = BinomialTree::ceil_log2(size);
    if (i + steps == d) most = std::max(most, steps);
  }
  return d == 0 ? 0.0 : static_cast<double>(most) / d;
}

double binomial_written(const CostQuery& q) { return binomial_written_share(q.p); }

double binomial_reduce_written_share(int p) {
  const int d = BinomialTree::ceil_log2(p);
  if (d == 0) return 0.0;
  const int lone = p == (1 << (d - 1)) + 1 ? 1 : 0;
  return std::max(0, d - 1 - lone) / static_cast<double>(d);
}

double binomial_reduce_written(const CostQuery& q) { return binomial_reduce_written_share(q.p); }

const Algorithm kBcastBinomial{
    .name = "binomial",
    .coll = Collective::bcast,
    .reference = "Sanders et al. §13.1.1, Thm 13.1",
    .formula = "⌈log p⌉(α + βn)",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost,
    .optimal_k = nullptr,
    .run = run,
    .test = "sim_cost_test.BcastBinomialMatchesTheorem13_1",
    .written_share = binomial_written,
};

}  // namespace fabcoll::algorithms
