// Cost theorems of the broadcast and reduce algorithms, checked on the sim transport's virtual
// clock. Dyadic α, β, γ make virtual-time arithmetic exact, so EXPECT_EQ on doubles is exact.
#include <gtest/gtest.h>

#include <cmath>

#include "algorithms/algorithms.hpp"
#include "patterns/binomial_tree.hpp"
#include "support/sim_harness.hpp"

namespace fabcoll::testing {
namespace {

constexpr CostModel kModel{.alpha = 4.0, .beta = 0.25, .gamma = 0.125};

int ceil_log2(int p) { return BinomialTree::ceil_log2(p); }

CostQuery query(double n, int p, double k = 0, CostModel m = kModel) {
  CostQuery q;
  q.n = n;
  q.p = p;
  q.m = m;
  q.k = k;
  return q;
}

// Binomial reduce = binomial broadcast backwards, plus one combine per level:
// exactly d(α + βn + γn) for p = 2^d; at most ⌈log p⌉(α + βn + γn) otherwise (a rank's last
// child may be a smaller subtree that finishes early, never later).
TEST(BcastReduce, ReduceBinomialMatchesTheorem) {
  for (int p = 1; p <= 70; ++p) {
    for (const std::size_t bytes : {8u, 800u, 8000u}) {
      for (const int root : {0, p - 1, p / 3}) {
        const sim::Stats st =
            run_for_cost(algorithms::kReduceBinomial, p, bytes, kModel, false, root);
        const double n = double(bytes);
        const double bound = ceil_log2(p) * (kModel.alpha + (kModel.beta + kModel.gamma) * n);
        EXPECT_EQ(bound, algorithms::kReduceBinomial.cost(query(n, p)));
        if ((p & (p - 1)) == 0) {
          EXPECT_EQ(st.finish_time, bound) << "p=" << p << " n=" << bytes << " root=" << root;
        } else {
          EXPECT_LE(st.finish_time, bound) << "p=" << p << " n=" << bytes << " root=" << root;
          // and no better than the last level alone: ⌈log p⌉ - 1 full levels plus one message
          EXPECT_GE(st.finish_time, (ceil_log2(p) - 1) * (kModel.alpha + kModel.beta * n));
        }
        EXPECT_EQ(st.rounds, ceil_log2(p));
        EXPECT_EQ(st.total_messages, static_cast<std::uint64_t>(p - 1));
      }
    }
  }
}

}  // namespace
}  // namespace fabcoll::testing
