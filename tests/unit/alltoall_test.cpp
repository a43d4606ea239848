// Cost theorems of the all-to-all(v), reduce-scatter and circular-shift algorithms, checked on
// the sim transport's virtual clock (dyadic α, β, γ: exact means bit-for-bit). Correctness over
// p, counts and operators is swept for every registered algorithm by sim_collectives_test.
#include <gtest/gtest.h>

#include <bit>

#include "algorithms/algorithms.hpp"
#include "support/sim_harness.hpp"

namespace fabcoll::testing {
namespace {

constexpr CostModel kModel{.alpha = 4.0, .beta = 0.25, .gamma = 0.125};

CostQuery query(double n, int p) {
  CostQuery q;
  q.n = n;
  q.p = p;
  q.m = kModel;
  return q;
}

// ---- all-to-all (n = bytes per block m_ij) ----------------------------------------------------

TEST(Alltoall, OneFactorMatchesSection13_6_1) {
  for (int p = 1; p <= 40; ++p) {
    for (const std::size_t bytes : {8u, 800u}) {
      const sim::Stats st = run_for_cost(algorithms::kAlltoallOneFactor, p, bytes, kModel, false);
      const int rounds = p - (p % 2 == 0 ? 1 : 0);  // p - isEven(p)
      EXPECT_EQ(st.finish_time, rounds * (kModel.alpha + kModel.beta * double(bytes))) << p;
      EXPECT_EQ(st.finish_time, algorithms::kAlltoallOneFactor.cost(query(double(bytes), p)));
      // p - 1 messages per PE, plus the self message of its idle round when p is odd.
      const auto per_pe = static_cast<std::uint64_t>(rounds);
      EXPECT_EQ(st.total_messages, static_cast<std::uint64_t>(p) * per_pe);
      EXPECT_EQ(st.rounds, rounds);
    }
  }
}

TEST(Alltoall, PairwiseXorMatchesSection13_6_1) {
  // Table 4.1 (Grama et al.), all-to-all personalized: (t_s + t_w m)(p - 1).
  for (int d = 0; d <= 7; ++d) {
    const int p = 1 << d;
    const sim::Stats st = run_for_cost(algorithms::kAlltoallPairwiseXor, p, 800, kModel, d >= 6);
    EXPECT_EQ(st.finish_time, (p - 1) * (kModel.alpha + kModel.beta * 800.0)) << p;
    EXPECT_EQ(st.finish_time, algorithms::kAlltoallPairwiseXor.cost(query(800, p)));
    EXPECT_EQ(st.rounds, p - 1);
  }
}

TEST(Alltoall, CircularMatchesSection13_6_1) {
  for (int p = 1; p <= 40; ++p) {
    const sim::Stats st = run_for_cost(algorithms::kAlltoallCircular, p, 800, kModel, false);
    EXPECT_EQ(st.finish_time, (p - 1) * (kModel.alpha + kModel.beta * 800.0)) << p;
    EXPECT_EQ(st.finish_time, algorithms::kAlltoallCircular.cost(query(800, p)));
  }
}

TEST(Alltoall, HypercubeMatchesSection13_6_2) {
  // eq. (13.4): log p (α + βnp/2), exactly, and log p rounds of p/2 blocks each way.
  for (int d = 0; d <= 9; ++d) {
    const int p = 1 << d;
    for (const std::size_t bytes : {8u, 800u}) {
      const sim::Stats st = run_for_cost(algorithms::kAlltoallHypercube, p, bytes, kModel, d >= 6);
      const double expect = d * (kModel.alpha + kModel.beta * double(bytes) * p / 2);
      EXPECT_EQ(st.finish_time, expect) << p;
      EXPECT_EQ(st.finish_time, algorithms::kAlltoallHypercube.cost(query(double(bytes), p)));
      EXPECT_EQ(st.rounds, d);
      EXPECT_EQ(st.total_bytes, static_cast<std::uint64_t>(p) * d * (p / 2) * bytes);
    }
  }
}

TEST(Alltoall, BruckMatchesItsRoundCount) {
  for (int p = 1; p <= 70; ++p) {
    const sim::Stats st = run_for_cost(algorithms::kAlltoallBruck, p, 80, kModel, false);
    EXPECT_EQ(st.finish_time, algorithms::kAlltoallBruck.cost(query(80, p))) << p;
    const int ceil_log = p <= 1 ? 0 : static_cast<int>(std::bit_width(static_cast<unsigned>(p - 1)));
    EXPECT_EQ(st.rounds, ceil_log) << p;
    if (std::has_single_bit(static_cast<unsigned>(p))) {  // same as the hypercube's (13.4)
      EXPECT_EQ(st.finish_time, ceil_log * (kModel.alpha + kModel.beta * 80.0 * p / 2)) << p;
    }
  }
}

}  // namespace
}  // namespace fabcoll::testing
