// The d-dimensional grid all-to-all (Sanders et al. Exercise 13.11): its cost Σ (k_i-1)(α +
// βnp/k_i) exactly on the sim's virtual clock for every ordered factorisation of p ≤ 70, the
// factorisation chooser against brute force, the two ends of the compromise (d = 1: the direct
// exchange; all k_i = 2: the hypercube's eq. (13.4)), and correctness of forced grids (the
// automatic sweep only runs the grid the chooser picks).
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

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

/// Every ordered factorisation of p into sides ≥ 2 (p = 1: the empty one).
void ordered_factorisations(int rem, std::vector<int>& cur, std::vector<std::vector<int>>& all) {
  if (rem == 1) {
    all.push_back(cur);
    return;
  }
  for (int k = 2; k <= rem; ++k) {
    if (rem % k != 0) continue;
    cur.push_back(k);
    ordered_factorisations(rem / k, cur, all);
    cur.pop_back();
  }
}
std::vector<std::vector<int>> ordered_factorisations(int p) {
  std::vector<std::vector<int>> all;
  std::vector<int> cur;
  ordered_factorisations(p, cur, all);
  return all;
}

// Test-only entry point: the registered algorithm with the grid forced to g_forced.
std::vector<int> g_forced;  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)
Task<> run_forced(Channel& ch, const CollArgs& a) {
  const auto np = static_cast<std::size_t>(ch.size());
  return algorithms::alltoall_grid_nd(ch, bytes_of(a.sendbuf, np * a.bytes()),
                                      bytes_of(a.recvbuf, np * a.bytes()), a.bytes(), g_forced);
}
Algorithm forced(const std::vector<int>& dims) {
  g_forced = dims;
  Algorithm alg = algorithms::kAlltoallGridNd;
  alg.run = run_forced;
  return alg;
}

double formula(const std::vector<int>& dims, int p, double n) {
  double t = 0;
  for (const int k : dims) t += (k - 1) * (kModel.alpha + kModel.beta * n * (p / k));
  return t;
}

TEST(AlltoallGridNd, GridNdMatchesExercise13_11) {
  // Every ordered factorisation of every p ≤ 70: exactly Σ (k_i-1)(α + βnp/k_i), Σ (k_i-1)
  // messages and Σ (k_i-1)·n·p/k_i bytes per PE, Σ (k_i-1) rounds, within α Σ k_i + βdnp.
  const double n = 80;
  for (int p = 1; p <= 70; ++p) {
    for (const std::vector<int>& dims : ordered_factorisations(p)) {
      const Algorithm alg = forced(dims);
      const sim::Stats st = run_for_cost(alg, p, 80, kModel, false);
      const double expect = formula(dims, p, n);
      EXPECT_EQ(st.finish_time, expect) << p << " d=" << dims.size();
      EXPECT_EQ(st.finish_time, algorithms::alltoall_grid_nd_cost(dims, p, n, kModel));
      std::uint64_t msgs = 0;
      std::uint64_t bytes = 0;
      int sum_k = 0;
      for (const int k : dims) {
        msgs += static_cast<std::uint64_t>(k - 1);
        bytes += static_cast<std::uint64_t>(k - 1) * 80u * static_cast<std::uint64_t>(p / k);
        sum_k += k;
      }
      for (int r = 0; r < p; ++r) {
        EXPECT_EQ(st.messages_sent[static_cast<std::size_t>(r)], msgs) << p << " rank " << r;
        EXPECT_EQ(st.bytes_sent[static_cast<std::size_t>(r)], bytes) << p << " rank " << r;
      }
      EXPECT_EQ(st.rounds, static_cast<int>(msgs)) << p;
      const double bound =
          kModel.alpha * sum_k + kModel.beta * static_cast<double>(dims.size()) * n * p;
      EXPECT_LE(st.finish_time, bound) << p;
    }
    // The registered algorithm (its own grid) matches its cost formula.
    const sim::Stats st = run_for_cost(algorithms::kAlltoallGridNd, p, 80, kModel, false);
    EXPECT_EQ(st.finish_time, algorithms::kAlltoallGridNd.cost(query(n, p))) << p;
  }
}

TEST(AlltoallGridNd, ChooserMinimisesTheFormulaOverAllFactorisations) {
  const CostModel models[] = {kModel,
                              {.alpha = 1024.0, .beta = 0.25, .gamma = 0.125},
                              {.alpha = 0.5, .beta = 1.0, .gamma = 0.125}};
  std::vector<int> ps(200);
  std::iota(ps.begin(), ps.end(), 1);
  for (const int p : {256, 360, 720, 1000, 1024}) ps.push_back(p);
  for (const CostModel& m : models) {
    for (const double n : {0.0, 8.0, 800.0, 1e6}) {
      for (const int p : ps) {
        double best = 0;
        bool first = true;
        for (const std::vector<int>& dims : ordered_factorisations(p)) {
          const double t = algorithms::alltoall_grid_nd_cost(dims, p, n, m);
          if (first || t < best) best = t;
          first = false;
        }
        const std::vector<int> got = algorithms::alltoall_grid_nd_dims(p, n, m);
        int prod = 1;
        for (const int k : got) {
          EXPECT_GE(k, 2) << p;
          prod *= k;
        }
        EXPECT_EQ(prod, p);
        EXPECT_EQ(algorithms::alltoall_grid_nd_cost(got, p, n, m), best) << p << " n=" << n;
        CostQuery q;
        q.n = n;
        q.p = p;
        q.m = m;
        EXPECT_EQ(algorithms::kAlltoallGridNd.cost(q), best) << p << " n=" << n;
      }
    }
  }
  // A prime p has only the 1-D grid.
  for (const int p : {2, 3, 5, 7, 13, 31, 257})
    EXPECT_EQ(algorithms::alltoall_grid_nd_dims(p, 800, kModel), std::vector<int>{p});
}

TEST(AlltoallGridNd, OneDimensionIsTheDirectExchange) {
  // d = 1: the circular direct exchange of §13.6.1, (p-1)(α + βn); for even p that is also the
  // 1-factor algorithm's (p - isEven(p))(α + βn).
  for (int p = 2; p <= 40; ++p) {
    const sim::Stats st = run_for_cost(forced({p}), p, 800, kModel, false);
    const sim::Stats direct = run_for_cost(algorithms::kAlltoallCircular, p, 800, kModel, false);
    EXPECT_EQ(st.finish_time, direct.finish_time) << p;
    EXPECT_EQ(st.finish_time, (p - 1) * (kModel.alpha + kModel.beta * 800.0)) << p;
    EXPECT_EQ(st.total_messages, direct.total_messages) << p;
    if (p % 2 == 0) {
      const sim::Stats one = run_for_cost(algorithms::kAlltoallOneFactor, p, 800, kModel, false);
      EXPECT_EQ(st.finish_time, one.finish_time) << p;
    }
  }
}

TEST(AlltoallGridNd, AllSidesTwoIsTheHypercube) {
  // p = 2^d, k_i = 2: eq. (13.4), log p (α + βnp/2), as the hypercube algorithm.
  for (int d = 1; d <= 8; ++d) {
    const int p = 1 << d;
    const std::vector<int> dims(static_cast<std::size_t>(d), 2);
    const sim::Stats st = run_for_cost(forced(dims), p, 800, kModel, d >= 6);
    const sim::Stats cube = run_for_cost(algorithms::kAlltoallHypercube, p, 800, kModel, d >= 6);
    EXPECT_EQ(st.finish_time, cube.finish_time) << p;
    EXPECT_EQ(st.finish_time, d * (kModel.alpha + kModel.beta * 800.0 * p / 2)) << p;
    EXPECT_EQ(st.total_bytes, cube.total_bytes) << p;
    EXPECT_EQ(st.rounds, cube.rounds) << p;
  }
}

TEST(AlltoallGridNd, ForcedGridsDeliverEveryMessage) {
  // Every ordered factorisation of p ≤ 36 (and some larger grids): rank j's block x holds what
  // rank x put in its block j. Blocks of 3 doubles; also 0-byte blocks.
  std::vector<std::pair<int, std::vector<int>>> cases;
  for (int p = 1; p <= 36; ++p)
    for (const std::vector<int>& dims : ordered_factorisations(p)) cases.emplace_back(p, dims);
  cases.emplace_back(60, std::vector<int>{3, 4, 5});
  cases.emplace_back(64, std::vector<int>{4, 2, 8});
  cases.emplace_back(100, std::vector<int>{5, 2, 10});
  for (const std::size_t count : {3u, 0u}) {
    for (const auto& [p, dims] : cases) {
      const Algorithm alg = forced(dims);
      const auto np = static_cast<std::size_t>(p);
      std::vector<std::vector<double>> in(np, std::vector<double>(np * count));
      std::vector<std::vector<double>> out(np, std::vector<double>(np * count, -1.0));
      for (std::size_t x = 0; x < np; ++x)
        for (std::size_t j = 0; j < np; ++j)
          for (std::size_t e = 0; e < count; ++e)
            in[x][j * count + e] = static_cast<double>((x * 1000 + j) * 8 + e);
      std::vector<CollArgs> args(np);
      sim::World world(p, kModel);
      world.run([&](Comm& comm) {
        const auto ur = static_cast<std::size_t>(comm.rank());
        CollArgs& a = args[ur];
        a.coll = Collective::alltoall;
        a.count = count;
        a.elem_size = 8;
        a.sendbuf = in[ur].data();
        a.recvbuf = out[ur].data();
        return run_collective(comm, a, &alg);
      });
      bool ok = true;
      for (std::size_t j = 0; j < np && ok; ++j)
        for (std::size_t x = 0; x < np && ok; ++x)
          for (std::size_t e = 0; e < count && ok; ++e)
            ok = out[j][x * count + e] == static_cast<double>((x * 1000 + j) * 8 + e);
      EXPECT_TRUE(ok) << "p=" << p << " d=" << dims.size() << " count=" << count;
    }
  }
}

}  // namespace
}  // namespace fabcoll::testing
