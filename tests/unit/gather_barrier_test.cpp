// Barrier, gather, scatter, all-gather and all-gatherv: the cost theorems on the sim
// transport's virtual clock (dyadic α, β so that "exactly" is bit-for-bit), and the barrier
// property itself, which the serial-reference sweep cannot see: with skewed start times no rank
// may leave before the last one has entered.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "algorithms/algorithms.hpp"
#include "patterns/binomial_tree.hpp"
#include "support/sim_harness.hpp"

namespace fabcoll::testing {
namespace {

constexpr CostModel kModel{.alpha = 4.0, .beta = 0.25, .gamma = 0.125};

int ceil_log2(int p) { return BinomialTree::ceil_log2(p); }
int floor_log2(int p) { return p <= 1 ? 0 : ceil_log2(p + 1) - 1; }
bool pow2(int p) { return (p & (p - 1)) == 0; }

std::vector<int> barrier_ps() {
  std::vector<int> ps;
  for (int p = 1; p <= 33; ++p) ps.push_back(p);
  ps.push_back(64);
  ps.push_back(100);
  return ps;
}

CostQuery query(int p, double n) {
  CostQuery q;
  q.p = p;
  q.n = n;
  q.m = kModel;
  return q;
}

/// Runs a barrier with rank r entering at starts[r].
sim::Stats run_barrier(const Algorithm& alg, int p, const std::vector<double>& starts) {
  sim::World world(p, kModel);
  return world.run(
      [&](Comm& comm) {
        CollArgs a;
        a.coll = Collective::barrier;
        return run_collective(comm, a, &alg);
      },
      starts);
}

/// Skewed entries: several patterns, the latest entrant anywhere (first, last, middle).
std::vector<std::vector<double>> skews(int p) {
  std::vector<std::vector<double>> out;
  const auto np = static_cast<std::size_t>(p);
  std::vector<double> s(np);
  for (int r = 0; r < p; ++r) s[static_cast<std::size_t>(r)] = 3.0 * r;  // last rank latest
  out.push_back(s);
  for (int r = 0; r < p; ++r) s[static_cast<std::size_t>(r)] = 3.0 * (p - 1 - r);  // rank 0
  out.push_back(s);
  for (int r = 0; r < p; ++r) s[static_cast<std::size_t>(r)] = (r * 37 % 11) * 1.5;
  out.push_back(s);
  for (int late = 0; late < p; late += std::max(1, p / 7)) {  // one very late rank
    std::fill(s.begin(), s.end(), 0.0);
    s[static_cast<std::size_t>(late)] = 1000.0;
    out.push_back(s);
  }
  return out;
}

void expect_is_barrier(const Algorithm& alg) {
  for (const int p : barrier_ps()) {
    for (const auto& starts : skews(p)) {
      const sim::Stats st = run_barrier(alg, p, starts);
      const double last_in = *std::max_element(starts.begin(), starts.end());
      ASSERT_EQ(st.rank_finish.size(), static_cast<std::size_t>(p));
      for (int r = 0; r < p; ++r)
        ASSERT_GE(st.rank_finish[static_cast<std::size_t>(r)], last_in)
            << alg.name << " p=" << p << ": rank " << r << " left before the last rank entered";
    }
  }
}

void expect_barrier_cost(const Algorithm& alg, int p, double expect_alpha_units) {
  const sim::Stats st = run_barrier(alg, p, {});
  EXPECT_EQ(st.finish_time, expect_alpha_units * kModel.alpha) << alg.name << " p=" << p;
  EXPECT_EQ(alg.cost(query(p, 0)), expect_alpha_units * kModel.alpha) << alg.name << " p=" << p;
}

TEST(GatherBarrier, EveryBarrierHoldsEveryoneUntilTheLastArrives) {
  for (const Algorithm* alg : all_algorithms())
    if (alg->coll == Collective::barrier) expect_is_barrier(*alg);
}

TEST(GatherBarrier, BarrierDisseminationTakesCeilLogPRounds) {
  for (const int p : barrier_ps()) {
    const sim::Stats st = run_barrier(algorithms::kBarrierDissemination, p, {});
    EXPECT_EQ(st.rounds, ceil_log2(p)) << p;
    EXPECT_EQ(st.finish_time, ceil_log2(p) * kModel.alpha) << p;
    EXPECT_EQ(st.total_messages, static_cast<std::uint64_t>(p * ceil_log2(p))) << p;
    EXPECT_EQ(st.total_bytes, 0u);
  }
}

TEST(GatherBarrier, BarrierButterflyMatchesFormula) {
  for (int p = 1; p <= 300; ++p) {
    const sim::Stats st = run_barrier(algorithms::kBarrierButterfly, p, {});
    const int d = floor_log2(p);
    if (pow2(p)) {  // d pairwise exchanges, exactly
      expect_barrier_cost(algorithms::kBarrierButterfly, p, d);
      EXPECT_EQ(st.rounds, d) << p;
    } else {  // fold-in, d exchanges, release: at least d + 2, at most the text's 2⌈log p⌉
      EXPECT_GE(st.finish_time, (d + 2) * kModel.alpha) << p;
      EXPECT_LE(st.finish_time, 2 * ceil_log2(p) * kModel.alpha) << p;
      EXPECT_EQ(algorithms::kBarrierButterfly.cost(query(p, 0)), 2 * ceil_log2(p) * kModel.alpha);
    }
    EXPECT_EQ(st.total_messages, static_cast<std::uint64_t>((1 << d) * d + 2 * (p - (1 << d)))) << p;
  }
}

TEST(GatherBarrier, BarrierBinomialMatchesFormula) {
  for (const int p : barrier_ps()) {
    const sim::Stats st = run_barrier(algorithms::kBarrierBinomial, p, {});
    if (pow2(p)) {
      expect_barrier_cost(algorithms::kBarrierBinomial, p, 2 * ceil_log2(p));
    } else {
      EXPECT_LE(st.finish_time, 2 * ceil_log2(p) * kModel.alpha) << p;
    }
    EXPECT_EQ(st.total_messages, static_cast<std::uint64_t>(2 * (p - 1))) << p;
  }
}

TEST(GatherBarrier, BarrierTournamentMatchesFormula) {
  for (const int p : barrier_ps()) {
    const sim::Stats st = run_barrier(algorithms::kBarrierTournament, p, {});
    if (pow2(p)) {
      expect_barrier_cost(algorithms::kBarrierTournament, p, 2 * ceil_log2(p));
    } else {
      EXPECT_LE(st.finish_time, 2 * ceil_log2(p) * kModel.alpha) << p;
    }
    EXPECT_EQ(st.total_messages, static_cast<std::uint64_t>(2 * (p - 1))) << p;
  }
}

}  // namespace
}  // namespace fabcoll::testing
