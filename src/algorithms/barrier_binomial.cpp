// Binomial-tree barrier: a binomial reduce of zero bytes to rank 0 followed by a binomial
// broadcast of zero bytes. Sanders et al. §13.4.2 (a barrier is an all-reduce with an empty
// operand; Cor. 13.8: O(α log p)) with the binomial tree of §13.1.1 (Fig. 13.10 is the same
// scheme on shared memory).
//   T(p) ≤ 2⌈log p⌉ α, with equality for p = 2^d
// Preconditions: none.
//
//   up:    1→0  3→2 5→4 7→6,  2→0 6→4,  4→0   (a rank reports once its whole subtree has)
//   down:  0→4,  0→2 4→6,  0→1 2→3 4→5 6→7     (Thm 13.1 order: largest subtree first)
//   no rank leaves before rank 0 has heard from everyone
#include "algorithms/algorithms.hpp"
#include "patterns/binomial_tree.hpp"

namespace fabcoll::algorithms {

Task<> barrier_binomial(Channel& ch) {
  const BinomialTree tree{ch.size(), 0};
  const int me = ch.rank();
  const auto children = tree.children(me);
  const int parent = tree.parent(me);
  TransferSet arrivals;  // step 0: "my subtree has arrived"
  for (const int child : children) arrivals.add(ch.recv(child, MutableBytes{}, 0));
  co_await arrivals;
  if (parent >= 0) {
    Transfer up = ch.send(parent, ConstBytes{}, 0);
    Transfer down = ch.recv(parent, MutableBytes{}, 1);
    co_await up;
    co_await down;
  }
  TransferSet releases;  // step 1: "everyone has arrived"
  for (const int child : children) releases.add(ch.send(child, ConstBytes{}, 1));
  co_await releases;
}

namespace {
Task<> run(Channel& ch, const CollArgs& /*args*/) { return barrier_binomial(ch); }
double cost(const CostQuery& q) { return 2 * BinomialTree::ceil_log2(q.p) * q.m.alpha; }
}  // namespace

const Algorithm kBarrierBinomial{
    .name = "binomial",
    .coll = Collective::barrier,
    .reference = "Sanders et al. §13.4.2, Cor. 13.8 and Fig. 13.10 (binomial reduce + broadcast)",
    .formula = "2⌈log p⌉α",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost,
    .optimal_k = nullptr,
    .run = run,
    .test = "gather_barrier_test.BarrierBinomialMatchesFormula",
};

}  // namespace fabcoll::algorithms
