// Barrier, gather, scatter, all-gather and all-gatherv: the cost theorems on the sim
// transport's virtual clock (dyadic α, β so that "exactly" is bit-for-bit), and the barrier
// property itself, which the serial-reference sweep cannot see: with skewed start times no rank
// may leave before the last one has entered.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "algorithms/algorithms.hpp"
#include "fabcoll/fabcoll.h"
#include "patterns/binomial_tree.hpp"
#include "patterns/mesh2d.hpp"
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
    EXPECT_EQ(st.total_messages, static_cast<std::uint64_t>((1 << d) * d + 2 * (p - (1 << d))))
        << p;
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

// Naive gather + naive broadcast of zero bytes: rank 0's one port takes p - 1 arrivals, then
// sends p - 1 releases: exactly 2(p - 1)α on the sim (o = α), 2(p - 1) messages; with a
// measured o < α the formula is 2(α + (p - 2)o), below the dissemination barrier's ⌈log p⌉α
// once α is large against o (ranks time-sharing cores).
TEST(GatherBarrier, BarrierLinearMatchesFormula) {
  for (const int p : barrier_ps()) {
    const sim::Stats st = run_barrier(algorithms::kBarrierLinear, p, {});
    expect_barrier_cost(algorithms::kBarrierLinear, p, p > 1 ? 2 * (p - 1) : 0);
    EXPECT_EQ(st.total_messages, static_cast<std::uint64_t>(2 * (p - 1))) << p;
  }
  CostModel oversubscribed = kModel;
  oversubscribed.overhead = kModel.alpha / 16;
  CostQuery q = query(8, 0);
  q.m = oversubscribed;
  EXPECT_EQ(algorithms::kBarrierLinear.cost(q), 2 * (kModel.alpha + 6 * kModel.alpha / 16));
  EXPECT_LT(algorithms::kBarrierLinear.cost(q), algorithms::kBarrierDissemination.cost(q));
  // The arrivals at the receiver's o_r (CostModel::receive_overhead), the releases at o.
  q.m.receive_overhead = kModel.alpha / 4;
  EXPECT_EQ(algorithms::kBarrierLinear.cost(q),
            2 * kModel.alpha + 6 * (kModel.alpha / 4 + kModel.alpha / 16));
}

// ---- gather and scatter ------------------------------------------------------------------

double thm13_9(int p, double n) { return ceil_log2(p) * kModel.alpha + (p - 1) * n * kModel.beta; }

void expect_rooted_cost(const Algorithm& alg, bool exact_for_every_p,
                        double (*formula)(int, double)) {
  for (int p = 1; p <= 70; ++p) {
    for (const std::size_t bytes : {0u, 8u, 800u}) {
      for (const int root : {0, p - 1, p / 3}) {
        const sim::Stats st = run_for_cost(alg, p, bytes, kModel, false, root);
        const double expect = formula(p, double(bytes));
        EXPECT_EQ(alg.cost(query(p, double(bytes))), expect);
        if (exact_for_every_p || pow2(p)) {
          EXPECT_EQ(st.finish_time, expect)
              << alg.name << " p=" << p << " n=" << bytes << " root=" << root;
        } else {
          EXPECT_LE(st.finish_time, expect)
              << alg.name << " p=" << p << " n=" << bytes << " root=" << root;
        }
        // bytes moved: one block per rank (linear), a subtree's blocks per tree edge (binomial)
        std::uint64_t moved = 0;
        const BinomialTree tree{p, root};
        for (int r = 0; r < p; ++r)
          if (r != root)
            moved +=
                (alg.name == "linear" ? 1u : static_cast<unsigned>(tree.subtree_size(r))) * bytes;
        EXPECT_EQ(st.total_bytes, moved) << alg.name << " p=" << p;
        EXPECT_EQ(st.total_messages, static_cast<std::uint64_t>(p - 1));
      }
    }
  }
  // Phantom runs at large p and n: the same formula, no bytes moved.
  for (const int d : {10, 12}) {
    const int p = 1 << d;
    const std::size_t bytes = std::size_t{1} << 10;
    const sim::Stats st = run_for_cost(alg, p, bytes, kModel, true, p / 3);
    EXPECT_EQ(st.finish_time, formula(p, double(bytes))) << alg.name << " p=" << p;
  }
}

double naive(int p, double n) { return (p - 1) * (kModel.alpha + n * kModel.beta); }

TEST(GatherBarrier, GatherBinomialMatchesTheorem13_9) {
  expect_rooted_cost(algorithms::kGatherBinomial, false, thm13_9);
  // the rounds are the levels of the tree
  for (const int p : {2, 8, 64})
    EXPECT_EQ(run_for_cost(algorithms::kGatherBinomial, p, 80, kModel, false).rounds, ceil_log2(p));
}

TEST(GatherBarrier, ScatterBinomialMatchesTheorem13_9) {
  expect_rooted_cost(algorithms::kScatterBinomial, false, thm13_9);
  for (const int p : {2, 8, 64})
    EXPECT_EQ(run_for_cost(algorithms::kScatterBinomial, p, 80, kModel, false).rounds,
              ceil_log2(p));
}

TEST(GatherBarrier, GatherLinearMatchesNaiveBound) {
  expect_rooted_cost(algorithms::kGatherLinear, true, naive);
}

// Where the transport clears fan-ins (Transport::clear_fan_in_from), the linear gather's root
// clears one sender at a time: p − 1 go-aheads more, no two blocks coming in at once, and the
// same result (every p, root and count the sweep uses, counts 0 and 1 included).
TEST(GatherBarrier, GatherLinearClearsEachSenderOfAFanIn) {
  const Algorithm& alg = algorithms::kGatherLinear;
  for (const int p : {2, 3, 5}) {
    const sim::Stats st = message_log(alg, p, 64, kModel, 0, -1, 64);  // blocks of 64 B, root 0
    EXPECT_EQ(st.total_messages, static_cast<std::uint64_t>(2 * (p - 1)));
    std::vector<double> starts;
    for (const auto& m : st.messages)
      if (m.bytes > 0) starts.push_back(m.start);
    std::sort(starts.begin(), starts.end());
    for (std::size_t i = 1; i < starts.size(); ++i)
      EXPECT_GE(starts[i], starts[i - 1] + kModel.alpha + kModel.beta * 64) << p;
  }
  for (const int p : {1, 2, 3, 6, 9}) {
    for (const std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{17}}) {
      for (const int root : {0, p / 2, p - 1}) {
        Case c;
        c.alg = &alg;
        c.p = p;
        c.count = count;
        c.root = root;
        c.clear_fan_in = 1;
        ASSERT_TRUE(check_case(c));
      }
    }
  }
}

TEST(GatherBarrier, ScatterLinearMatchesNaiveBound) {
  expect_rooted_cost(algorithms::kScatterLinear, true, naive);
}

/// In-place forms (the sweep passes distinct buffers): gather with sendbuf = the root's block
/// inside recvbuf, scatter with recvbuf = the root's block inside sendbuf.
void expect_in_place_rooted(const Algorithm& alg) {
  for (const int p : {1, 2, 3, 5, 8, 13, 32}) {
    for (const int root : {0, p - 1, p / 2}) {
      const std::size_t count = 5;
      const auto np = static_cast<std::size_t>(p);
      std::vector<std::vector<std::int32_t>> bufs(np);
      std::vector<std::int32_t> full(count * np);
      for (std::size_t i = 0; i < full.size(); ++i) full[i] = static_cast<std::int32_t>(i * 7 + 1);
      for (std::size_t r = 0; r < np; ++r) {
        if (alg.coll == Collective::gather) {
          // every rank holds its own block; the root's lives inside its p-block recvbuf
          bufs[r].assign(static_cast<int>(r) == root ? full.size() : count, -1);
          const std::size_t at = static_cast<int>(r) == root ? r * count : 0;
          std::copy_n(full.begin() + static_cast<std::ptrdiff_t>(r * count), count,
                      bufs[r].begin() + static_cast<std::ptrdiff_t>(at));
        } else {
          bufs[r].assign(static_cast<int>(r) == root ? full.size() : count, -1);
          if (static_cast<int>(r) == root) bufs[r] = full;
        }
      }
      sim::World world(p, kModel);
      std::vector<CollArgs> args(np);
      world.run([&](Comm& comm) {
        const auto r = static_cast<std::size_t>(comm.rank());
        CollArgs& a = args[r];
        a.coll = alg.coll;
        a.count = count;
        a.elem_size = 4;
        a.root = root;
        const bool at_root = comm.rank() == root;
        std::int32_t* own = bufs[r].data() + (at_root ? r * count : 0);
        if (alg.coll == Collective::gather) {
          a.sendbuf = own;
          a.recvbuf = at_root ? bufs[r].data() : nullptr;
        } else {
          a.sendbuf = at_root ? bufs[r].data() : nullptr;
          a.recvbuf = own;
        }
        return run_collective(comm, a, &alg);
      });
      for (std::size_t r = 0; r < np; ++r) {
        if (alg.coll == Collective::gather && static_cast<int>(r) != root) continue;
        if (alg.coll == Collective::gather || static_cast<int>(r) == root) {
          EXPECT_EQ(bufs[r], full) << alg.name << " p=" << p << " root=" << root << " rank " << r;
        } else {
          const std::vector<std::int32_t> want(
              full.begin() + static_cast<std::ptrdiff_t>(r * count),
              full.begin() + static_cast<std::ptrdiff_t>((r + 1) * count));
          EXPECT_EQ(bufs[r], want) << alg.name << " p=" << p << " root=" << root << " rank " << r;
        }
      }
    }
  }
}

TEST(GatherBarrier, GatherAndScatterInPlace) {
  for (const Algorithm* alg : all_algorithms())
    if (alg->coll == Collective::gather || alg->coll == Collective::scatter)
      expect_in_place_rooted(*alg);
}

// ---- all-gather ------------------------------------------------------------------------------

std::vector<int> allgather_ps() {
  std::vector<int> ps;
  for (int p = 1; p <= 40; ++p) ps.push_back(p);
  for (const int p : {63, 64, 100, 128, 257}) ps.push_back(p);
  return ps;
}

TEST(GatherBarrier, AllgatherRingMatchesAlgorithm4_4) {
  for (const int p : allgather_ps()) {
    for (const std::size_t bytes : {0u, 8u, 800u}) {
      const sim::Stats st = run_for_cost(algorithms::kAllgatherRing, p, bytes, kModel, false);
      const double expect = (p - 1) * (kModel.alpha + double(bytes) * kModel.beta);
      EXPECT_EQ(st.finish_time, expect) << "p=" << p << " n=" << bytes;
      EXPECT_EQ(algorithms::kAllgatherRing.cost(query(p, double(bytes))), expect);
      EXPECT_EQ(st.rounds, p - 1) << p;
      EXPECT_EQ(st.total_messages, static_cast<std::uint64_t>(p * (p - 1)));
    }
  }
}

TEST(GatherBarrier, AllgatherRecursiveDoublingMatchesCorollary13_10) {
  for (const int p : allgather_ps()) {
    for (const std::size_t bytes : {0u, 8u, 800u}) {
      const bool big = p > 100;
      const sim::Stats st =
          run_for_cost(algorithms::kAllgatherRecursiveDoubling, p, bytes, kModel, big);
      const double formula = algorithms::kAllgatherRecursiveDoubling.cost(query(p, double(bytes)));
      if (pow2(p)) {  // Cor. 13.10, exactly: log p · α + (p − 1) n β
        const double expect = floor_log2(p) * kModel.alpha + (p - 1) * double(bytes) * kModel.beta;
        EXPECT_EQ(st.finish_time, expect) << "p=" << p << " n=" << bytes;
        EXPECT_EQ(formula, expect);
        EXPECT_EQ(st.rounds, floor_log2(p));
      } else {  // the fold: a bound
        EXPECT_LE(st.finish_time, formula) << "p=" << p << " n=" << bytes;
        EXPECT_GE(st.finish_time, (floor_log2(p) + 2) * kModel.alpha) << p;
      }
    }
  }
}

TEST(GatherBarrier, AllgatherBruckTakesCeilLogPRounds) {
  for (const int p : allgather_ps()) {
    for (const std::size_t bytes : {0u, 8u, 800u}) {
      const sim::Stats st = run_for_cost(algorithms::kAllgatherBruck, p, bytes, kModel, false);
      const double expect = ceil_log2(p) * kModel.alpha + (p - 1) * double(bytes) * kModel.beta;
      EXPECT_EQ(st.finish_time, expect) << "p=" << p << " n=" << bytes;
      EXPECT_EQ(algorithms::kAllgatherBruck.cost(query(p, double(bytes))), expect);
      EXPECT_EQ(st.rounds, ceil_log2(p)) << p;
      EXPECT_EQ(st.total_messages, static_cast<std::uint64_t>(p * ceil_log2(p)));
    }
  }
}

// ---- all-gatherv ---------------------------------------------------------------------------

/// Modelled time of an all-gatherv with the sweep's uneven counts (zeros included), 8-byte
/// elements; returns the stats and the largest block in bytes.
sim::Stats run_uneven_allgatherv(const Algorithm& alg, int p, std::size_t base,
                                 std::size_t& n_max) {
  const auto np = static_cast<std::size_t>(p);
  const std::vector<std::size_t> counts = uneven_counts(p, base, 17);
  std::vector<std::size_t> displs(np);
  std::size_t off = 0;
  for (std::size_t i = 0; i < np; ++i) {
    displs[i] = off;
    off += counts[i];
  }
  n_max = 8 * *std::max_element(counts.begin(), counts.end());
  std::vector<std::vector<double>> bufs(np, std::vector<double>(off + 1));
  sim::World world(p, kModel);
  std::vector<CollArgs> args(np);
  return world.run([&](Comm& comm) {
    const auto r = static_cast<std::size_t>(comm.rank());
    CollArgs& a = args[r];
    a.coll = Collective::allgatherv;
    a.elem_size = 8;
    a.count = counts[r];
    a.counts = counts.data();
    a.displs = displs.data();
    a.recvbuf = bufs[r].data();
    a.sendbuf = bufs[r].data() + displs[r];
    return run_collective(comm, a, &alg);
  });
}

TEST(GatherBarrier, AllgathervRingMatchesAlgorithm4_4) {
  for (const int p : allgather_ps()) {
    if (p > 100) continue;
    for (const std::size_t bytes : {0u, 8u, 800u}) {  // equal blocks: exactly Algorithm 4.4
      const sim::Stats st = run_for_cost(algorithms::kAllgathervRing, p, bytes, kModel, false);
      const double expect = (p - 1) * (kModel.alpha + double(bytes) * kModel.beta);
      EXPECT_EQ(st.finish_time, expect) << "p=" << p << " n=" << bytes;
      EXPECT_EQ(algorithms::kAllgathervRing.cost(query(p, double(bytes))), expect);
      EXPECT_EQ(st.rounds, p - 1) << p;
    }
    std::size_t n_max = 0;  // uneven blocks: bounded by the largest
    const sim::Stats st = run_uneven_allgatherv(algorithms::kAllgathervRing, p, 40, n_max);
    EXPECT_LE(st.finish_time, algorithms::kAllgathervRing.cost(query(p, double(n_max)))) << p;
  }
}

TEST(GatherBarrier, AllgathervBruckTakesCeilLogPRounds) {
  for (const int p : allgather_ps()) {
    if (p > 100) continue;
    for (const std::size_t bytes : {0u, 8u, 800u}) {
      const sim::Stats st = run_for_cost(algorithms::kAllgathervBruck, p, bytes, kModel, false);
      const double expect = ceil_log2(p) * kModel.alpha + (p - 1) * double(bytes) * kModel.beta;
      EXPECT_EQ(st.finish_time, expect) << "p=" << p << " n=" << bytes;
      EXPECT_EQ(algorithms::kAllgathervBruck.cost(query(p, double(bytes))), expect);
      EXPECT_EQ(st.rounds, ceil_log2(p)) << p;
    }
    std::size_t n_max = 0;
    const sim::Stats st = run_uneven_allgatherv(algorithms::kAllgathervBruck, p, 40, n_max);
    EXPECT_LE(st.finish_time, algorithms::kAllgathervBruck.cost(query(p, double(n_max)))) << p;
    EXPECT_EQ(st.rounds, ceil_log2(p)) << p;
  }
}

TEST(GatherBarrier, AllgatherMesh2dMatchesAlgorithm4_6) {
  for (const int p : allgather_ps()) {
    const Mesh2d mesh{p};
    ASSERT_EQ(mesh.rows() * mesh.cols(), p);
    ASSERT_LE(mesh.rows(), mesh.cols());
    for (const std::size_t bytes : {0u, 8u, 800u}) {
      const sim::Stats st = run_for_cost(algorithms::kAllgatherMesh2d, p, bytes, kModel, p > 100);
      const double expect =
          (mesh.rows() + mesh.cols() - 2) * kModel.alpha + (p - 1) * double(bytes) * kModel.beta;
      EXPECT_EQ(st.finish_time, expect) << "p=" << p << " n=" << bytes;
      EXPECT_EQ(algorithms::kAllgatherMesh2d.cost(query(p, double(bytes))), expect);
      EXPECT_EQ(st.rounds, mesh.rows() + mesh.cols() - 2) << p;
    }
  }
  // the square mesh of the text: 2(√p − 1)α + (p − 1)nβ
  for (const int q : {1, 2, 3, 8, 10}) {
    const int p = q * q;
    const sim::Stats st = run_for_cost(algorithms::kAllgatherMesh2d, p, 80, kModel, false);
    EXPECT_EQ(st.finish_time, 2 * (q - 1) * kModel.alpha + (p - 1) * 80 * kModel.beta) << p;
  }
}

// ---- real time: the C API on a world of threads (in-process transport) -----------------------

/// Runs body(rank, comm) on p threads of one thread world.
void run_thread_world(int p, const std::function<void(int, fc_comm_t)>& body) {
  fc_thread_world_t world = nullptr;
  ASSERT_EQ(fc_thread_world_create(p, &world), FC_SUCCESS);
  std::vector<std::thread> threads;
  for (int r = 0; r < p; ++r) {
    threads.emplace_back([&, r] {
      fc_context_t ctx = nullptr;
      ASSERT_EQ(fc_init_thread(world, r, &ctx), FC_SUCCESS);
      fc_comm_t comm = nullptr;
      ASSERT_EQ(fc_comm_world(ctx, &comm), FC_SUCCESS);
      body(r, comm);
      EXPECT_EQ(fc_finalize(ctx), FC_SUCCESS);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(fc_thread_world_free(&world), FC_SUCCESS);
}

std::int32_t value(int rank, std::size_t i) { return rank * 1000 + static_cast<std::int32_t>(i); }

/// Every call form (normal and FC_IN_PLACE) of one collective through the C API, with the
/// algorithm forced by FABCOLL_<COLL>_ALGORITHM.
void check_real_time(const Algorithm& alg, int p) {
  const auto np = static_cast<std::size_t>(p);
  const std::size_t n = 3;
  std::atomic<int> arrived{0};
  run_thread_world(p, [&](int r, fc_comm_t comm) {
    const auto ur = static_cast<std::size_t>(r);
    std::vector<std::int32_t> mine(n);
    for (std::size_t i = 0; i < n; ++i) mine[i] = value(r, i);
    std::vector<std::int32_t> all(n * np);
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = value(static_cast<int>(i / n), i % n);
    switch (alg.coll) {
      case Collective::barrier:
        for (int round = 1; round <= 20; ++round) {
          arrived.fetch_add(1);
          ASSERT_EQ(fc_barrier(comm), FC_SUCCESS);
          EXPECT_GE(arrived.load(), round * p) << "left before everyone arrived";
        }
        break;
      case Collective::gather:
        for (const int root : {0, p - 1, p / 2}) {
          std::vector<std::int32_t> out(r == root ? n * np : 0, -1);
          ASSERT_EQ(fc_gather(mine.data(), n, FC_INT32, out.data(), n, FC_INT32, root, comm),
                    FC_SUCCESS);
          if (r == root) {
            EXPECT_EQ(out, all) << "root " << root;
          }
          if (r == root) {  // in place: the root's block already sits in recvbuf
            std::vector<std::int32_t> io(n * np, -1);
            std::copy(mine.begin(), mine.end(), io.begin() + static_cast<std::ptrdiff_t>(ur * n));
            ASSERT_EQ(fc_gather(FC_IN_PLACE, n, FC_INT32, io.data(), n, FC_INT32, root, comm),
                      FC_SUCCESS);
            EXPECT_EQ(io, all) << "in place, root " << root;
          } else {
            ASSERT_EQ(fc_gather(mine.data(), n, FC_INT32, nullptr, n, FC_INT32, root, comm),
                      FC_SUCCESS);
          }
        }
        break;
      case Collective::scatter:
        for (const int root : {0, p - 1, p / 2}) {
          std::vector<std::int32_t> piece(n, -1);
          ASSERT_EQ(fc_scatter(r == root ? all.data() : nullptr, n, FC_INT32, piece.data(), n,
                               FC_INT32, root, comm),
                    FC_SUCCESS);
          EXPECT_EQ(piece, mine) << "root " << root;
          if (r == root) {  // in place: the root keeps its block inside sendbuf
            std::vector<std::int32_t> src = all;
            ASSERT_EQ(fc_scatter(src.data(), n, FC_INT32, FC_IN_PLACE, n, FC_INT32, root, comm),
                      FC_SUCCESS);
            EXPECT_EQ(src, all);
          } else {
            std::fill(piece.begin(), piece.end(), -1);
            ASSERT_EQ(fc_scatter(nullptr, n, FC_INT32, piece.data(), n, FC_INT32, root, comm),
                      FC_SUCCESS);
            EXPECT_EQ(piece, mine) << "root " << root;
          }
        }
        break;
      case Collective::allgather: {
        std::vector<std::int32_t> out(n * np, -1);
        ASSERT_EQ(fc_allgather(mine.data(), n, FC_INT32, out.data(), n, FC_INT32, comm),
                  FC_SUCCESS);
        EXPECT_EQ(out, all);
        std::vector<std::int32_t> io(n * np, -1);
        std::copy(mine.begin(), mine.end(), io.begin() + static_cast<std::ptrdiff_t>(ur * n));
        ASSERT_EQ(fc_allgather(FC_IN_PLACE, n, FC_INT32, io.data(), n, FC_INT32, comm), FC_SUCCESS);
        EXPECT_EQ(io, all) << "in place";
        break;
      }
      case Collective::allgatherv: {
        std::vector<std::size_t> counts(np), displs(np);
        std::size_t extent = 0;
        for (std::size_t j = 0; j < np; ++j) {
          counts[j] = j % 3 == 1 ? 0 : j % 4 + 1;  // zeros and uneven sizes
          displs[j] = extent + 1;                  // with gaps, which must stay untouched
          extent = displs[j] + counts[j];
        }
        std::vector<std::int32_t> want(extent, -1);
        for (std::size_t j = 0; j < np; ++j)
          for (std::size_t i = 0; i < counts[j]; ++i)
            want[displs[j] + i] = value(static_cast<int>(j), i);
        std::vector<std::int32_t> own(counts[ur]);
        for (std::size_t i = 0; i < own.size(); ++i) own[i] = value(r, i);
        std::vector<std::int32_t> out(extent, -1);
        ASSERT_EQ(fc_allgatherv(own.data(), own.size(), FC_INT32, out.data(), counts.data(),
                                displs.data(), FC_INT32, comm),
                  FC_SUCCESS);
        EXPECT_EQ(out, want);
        std::vector<std::int32_t> io(extent, -1);
        std::copy(own.begin(), own.end(), io.begin() + static_cast<std::ptrdiff_t>(displs[ur]));
        ASSERT_EQ(fc_allgatherv(FC_IN_PLACE, 0, FC_INT32, io.data(), counts.data(), displs.data(),
                                FC_INT32, comm),
                  FC_SUCCESS);
        EXPECT_EQ(io, want) << "in place";
        break;
      }
      default:
        break;
    }
  });
}

TEST(GatherBarrier, EveryAlgorithmInRealTimeThroughTheCApi) {
  int tested = 0;
  for (const Algorithm* alg : all_algorithms()) {
    const Collective c = alg->coll;
    if (c != Collective::barrier && c != Collective::gather && c != Collective::scatter &&
        c != Collective::allgather && c != Collective::allgatherv)
      continue;
    std::string key = "FABCOLL_" + std::string(collective_name(c)) + "_ALGORITHM";
    std::transform(key.begin(), key.end(), key.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
    ASSERT_EQ(setenv(key.c_str(), std::string(alg->name).c_str(), 1), 0);
    for (const int p : {1, 2, 3, 5, 8}) {
      SCOPED_TRACE(key + "=" + std::string(alg->name) + " p=" + std::to_string(p));
      check_real_time(*alg, p);
    }
    unsetenv(key.c_str());
    ++tested;
  }
  EXPECT_GE(tested, 14);  // 4 barriers, 2 gathers, 2 scatters, 4 all-gathers, 2 all-gathervs
}

}  // namespace
}  // namespace fabcoll::testing
