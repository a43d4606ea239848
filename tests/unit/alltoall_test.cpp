// Cost theorems of the all-to-all(v), reduce-scatter and circular-shift algorithms, checked on
// the sim transport's virtual clock (dyadic α, β, γ: exact means bit-for-bit). Correctness over
// p, counts and operators is swept for every registered algorithm by sim_collectives_test.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>

#include "algorithms/algorithms.hpp"
#include "fabcoll/fabcoll.h"
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

TEST(Alltoall, PostAllMatchesTheOnePortModel) {
  // In the texts' model (o = α, no receiver-pulled messages) the sends of each rank follow one
  // another as the circular algorithm's rounds: (p - 1)(α + βn), exactly.
  for (int p = 1; p <= 40; ++p) {
    for (const std::size_t bytes : {8u, 800u}) {
      const sim::Stats st = run_for_cost(algorithms::kAlltoallPostAll, p, bytes, kModel, false);
      EXPECT_EQ(st.finish_time, (p - 1) * (kModel.alpha + kModel.beta * double(bytes))) << p;
      EXPECT_EQ(st.finish_time, algorithms::kAlltoallPostAll.cost(query(double(bytes), p)));
      EXPECT_EQ(st.total_messages, static_cast<std::uint64_t>(p) * (p - 1));
    }
  }
  // With the sender's overhead o apart from α: the last send leaves after p - 2 others, and
  // receiver-pulled messages cost their sender o each while the receivers copy.
  CostModel m = kModel;
  m.overhead = 0.5;
  CostQuery q = query(800, 8);
  q.m = m;
  EXPECT_EQ(algorithms::kAlltoallPostAll.cost(q), 4.0 + 200.0 + 6 * (0.5 + 200.0));
  q.m.pull_bytes = 512;
  EXPECT_EQ(algorithms::kAlltoallPostAll.cost(q), 4.0 + 6 * 0.5 + 7 * 200.0);
  q.m.pull_bytes = 1024;  // 800 B are below it: written by their sender
  EXPECT_EQ(algorithms::kAlltoallPostAll.cost(q), 4.0 + 200.0 + 6 * (0.5 + 200.0));
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
    const int ceil_log =
        p <= 1 ? 0 : static_cast<int>(std::bit_width(static_cast<unsigned>(p - 1)));
    EXPECT_EQ(st.rounds, ceil_log) << p;
    if (std::has_single_bit(static_cast<unsigned>(p))) {  // same as the hypercube's (13.4)
      EXPECT_EQ(st.finish_time, ceil_log * (kModel.alpha + kModel.beta * 80.0 * p / 2)) << p;
    }
  }
}

TEST(Alltoall, GridMatchesExercise13_11) {
  // r × c grid, r = the largest divisor of p up to √p: (c-1)(α + βnr) + (r-1)(α + βnc),
  // exactly, and within the exercise's bound α(r + c) + 2βnp (d = 2 dimensions).
  for (int p = 1; p <= 70; ++p) {
    int r = 1;
    for (int x = 1; x * x <= p; ++x)
      if (p % x == 0) r = x;
    const int c = p / r;
    const double n = 800;
    const sim::Stats st = run_for_cost(algorithms::kAlltoallGrid, p, 800, kModel, false);
    const double expect = (c - 1) * (kModel.alpha + kModel.beta * n * r) +
                          (r - 1) * (kModel.alpha + kModel.beta * n * c);
    EXPECT_EQ(st.finish_time, expect) << p;
    EXPECT_EQ(st.finish_time, algorithms::kAlltoallGrid.cost(query(n, p)));
    EXPECT_LE(st.finish_time, kModel.alpha * (r + c) + 2 * kModel.beta * n * p) << p;
    EXPECT_EQ(st.rounds, (c - 1) + (r - 1)) << p;
  }
}

// ---- all-to-all(v) ----------------------------------------------------------------------------

TEST(Alltoallv, AlltoallvDirectMatchesSection13_6_1) {
  // Uniform counts (run_for_cost's alltoallv layout): the circular schedule, (p-1)(α + βn).
  for (int p = 1; p <= 40; ++p) {
    const sim::Stats st = run_for_cost(algorithms::kAlltoallvDirect, p, 800, kModel, false);
    EXPECT_EQ(st.finish_time, (p - 1) * (kModel.alpha + kModel.beta * 800.0)) << p;
    EXPECT_EQ(st.finish_time, algorithms::kAlltoallvDirect.cost(query(800, p)));
  }
}

TEST(Alltoallv, AlltoallvTwoPhaseMatchesSection13_6_3) {
  // Uniform blocks of c doubles: both exchanges are uniform all-to-alls with blocks
  // B1 = 8p + 8p⌈c/p⌉ (p size fields + pieces) and B2 = 8p⌈c/p⌉, after a ⌈log p⌉-round MAX of
  // 16 B. Exact for every p (the MAX leaves all PEs in step).
  for (int p = 1; p <= 70; ++p) {
    for (const std::size_t c : {1u, 100u, 1000u}) {
      const sim::Stats st = run_for_cost(algorithms::kAlltoallvTwoPhase, p, 8 * c, kModel, true);
      const double pieces = 8.0 * p * double((c + p - 1) / p);
      const int ceil_log =
          p <= 1 ? 0 : static_cast<int>(std::bit_width(static_cast<unsigned>(p - 1)));
      const double agree = ceil_log * (kModel.alpha + 16 * (kModel.beta + kModel.gamma));
      const double expect = agree + (p - 1) * (kModel.alpha + kModel.beta * (8.0 * p + pieces)) +
                            (p - 1) * (kModel.alpha + kModel.beta * pieces);
      EXPECT_EQ(st.finish_time, expect) << p << " c=" << c;
      EXPECT_LE(st.finish_time, algorithms::kAlltoallvTwoPhase.cost(query(8.0 * c, p)));
    }
  }
}

TEST(Alltoallv, TwoPhaseTimeDependsOnlyOnHAndP) {
  // §13.6.3: the time depends on h and p only, not on how the data is spread: here one PE
  // sends all of h to one other PE, and the pieces still travel through all p PEs in two
  // uniform exchanges of B1 = 8p + 8⌈h/p⌉ and B2 = 8⌈h/p⌉ bytes.
  for (const int p : {4, 7, 16}) {
    const auto np = static_cast<std::size_t>(p);
    const std::size_t h = 64 * np;  // elements (doubles)
    std::vector<std::vector<std::size_t>> sc(np, std::vector<std::size_t>(np, 0)), sd = sc, rc = sc,
                                                                                   rd = sc;
    sc[0][np - 1] = h;
    rc[np - 1][0] = h;
    std::vector<std::vector<double>> in(np, std::vector<double>(h, 0.0)), out = in;
    for (std::size_t e = 0; e < h; ++e) in[0][e] = double(e) + 0.5;
    sim::World world(p, kModel);
    std::vector<CollArgs> args(np);
    const sim::Stats st = world.run([&](Comm& comm) {
      const auto r = static_cast<std::size_t>(comm.rank());
      CollArgs& a = args[r];
      a.coll = Collective::alltoallv;
      a.elem_size = 8;
      a.sendbuf = in[r].data();
      a.recvbuf = out[r].data();
      a.scounts = sc[r].data();
      a.sdispls = sd[r].data();
      a.counts = rc[r].data();
      a.displs = rd[r].data();
      return run_collective(comm, a, &algorithms::kAlltoallvTwoPhase);
    });
    EXPECT_EQ(out[np - 1], in[0]) << p;
    const int ceil_log = static_cast<int>(std::bit_width(static_cast<unsigned>(p - 1)));
    const double b1 = 8.0 * p + 8.0 * double((h + np - 1) / np);  // fields + one piece
    const double b2 = 8.0 * double((h + np - 1) / np);
    EXPECT_EQ(st.finish_time, ceil_log * (kModel.alpha + 16 * (kModel.beta + kModel.gamma)) +
                                  (p - 1) * (2 * kModel.alpha + kModel.beta * (b1 + b2)))
        << p;
  }
}

// ---- reduce-scatter (CostQuery n = m = bytes per block; the texts' n = p·m) ------------------

// For p ≠ 2^d the folded algorithms' formulas are upper bounds: checked over p ≤ 300, block
// sizes from latency- to bandwidth-bound, and three α:β:γ mixes.
void expect_bound_for_other_p(const Algorithm& alg) {
  const CostModel models[] = {kModel, CostModel{.alpha = 64.0, .beta = 0.25, .gamma = 0.125},
                              CostModel{.alpha = 1.0, .beta = 0.25, .gamma = 2.0}};
  for (const CostModel& m : models) {
    for (int p = 3; p <= 300; ++p) {
      if (std::has_single_bit(static_cast<unsigned>(p))) continue;
      for (const std::size_t bytes : {8u, 8000u}) {
        const sim::Stats st = run_for_cost(alg, p, bytes, m, true);
        CostQuery q = query(double(bytes), p);
        q.m = m;
        EXPECT_LE(st.finish_time, alg.cost(q)) << alg.name << " p=" << p << " m=" << bytes;
      }
    }
  }
}

TEST(ReduceScatter, ReduceScatterRecursiveHalvingMatchesMpich) {
  for (int d = 0; d <= 9; ++d) {
    const int p = 1 << d;
    for (const std::size_t m : {8u, 800u}) {
      const sim::Stats st =
          run_for_cost(algorithms::kReduceScatterRecursiveHalving, p, m, kModel, d >= 6);
      const double n = double(p) * double(m);
      // log p·α + (p-1)/p·n(β + γ), exactly.
      EXPECT_EQ(st.finish_time, d * kModel.alpha + (n - n / p) * (kModel.beta + kModel.gamma)) << p;
      EXPECT_EQ(st.finish_time,
                algorithms::kReduceScatterRecursiveHalving.cost(query(double(m), p)));
      EXPECT_EQ(st.rounds, d);
    }
  }
  expect_bound_for_other_p(algorithms::kReduceScatterRecursiveHalving);
}

TEST(ReduceScatter, RecursiveHalvingMatchesTable4_1AllToAllReduction) {
  // Grama et al. Table 4.1, all-to-all reduction on a hypercube: t_s log p + t_w m(p-1)
  // (no combine cost in that table: γ = 0).
  constexpr CostModel kNoGamma{.alpha = 4.0, .beta = 0.25, .gamma = 0.0};
  for (int d = 0; d <= 8; ++d) {
    const int p = 1 << d;
    const sim::Stats st =
        run_for_cost(algorithms::kReduceScatterRecursiveHalving, p, 800, kNoGamma, d >= 6);
    EXPECT_EQ(st.finish_time, kNoGamma.alpha * d + kNoGamma.beta * 800.0 * (p - 1)) << p;
  }
}

TEST(ReduceScatter, ReduceScatterPairwiseMatchesMpich) {
  for (int p = 1; p <= 40; ++p) {
    const sim::Stats st = run_for_cost(algorithms::kReduceScatterPairwise, p, 800, kModel, false);
    EXPECT_EQ(st.finish_time, (p - 1) * (kModel.alpha + 800.0 * (kModel.beta + kModel.gamma))) << p;
    EXPECT_EQ(st.finish_time, algorithms::kReduceScatterPairwise.cost(query(800, p)));
    EXPECT_EQ(st.rounds, p - 1);
  }
}

TEST(ReduceScatter, ReduceScatterRingMatchesAlgorithm4_5) {
  for (int p = 1; p <= 40; ++p) {
    const sim::Stats st = run_for_cost(algorithms::kReduceScatterRing, p, 800, kModel, false);
    EXPECT_EQ(st.finish_time, (p - 1) * (kModel.alpha + 800.0 * (kModel.beta + kModel.gamma))) << p;
    EXPECT_EQ(st.finish_time, algorithms::kReduceScatterRing.cost(query(800, p)));
    EXPECT_EQ(st.rounds, p - 1);
  }
}

TEST(ReduceScatter, ReduceScatterRecursiveDoublingMatchesMpich) {
  for (int d = 0; d <= 8; ++d) {
    const int p = 1 << d;
    const sim::Stats st =
        run_for_cost(algorithms::kReduceScatterRecursiveDoubling, p, 800, kModel, d >= 6);
    // Σ_j (α + (p - 2^j)·m(β + γ)) = dα + (dp - p + 1)·m(β + γ)
    EXPECT_EQ(st.finish_time,
              d * kModel.alpha + (d * p - p + 1) * 800.0 * (kModel.beta + kModel.gamma))
        << p;
    EXPECT_EQ(st.finish_time, algorithms::kReduceScatterRecursiveDoubling.cost(query(800, p)));
    EXPECT_EQ(st.rounds, d);
  }
  expect_bound_for_other_p(algorithms::kReduceScatterRecursiveDoubling);
}

// The in-place form (validate(): sendbuf == recvbuf holds p blocks, the result goes to block 0),
// which the sweep does not exercise: a rank's own input block 0 must be read before it is
// overwritten.
::testing::AssertionResult reduce_scatter_in_place(const Algorithm& alg, int p, fc_op_t op_id,
                                                   fc_datatype_t dt, std::size_t count) {
  const auto np = static_cast<std::size_t>(p);
  const std::size_t es = datatype_size(dt);
  const std::size_t n = count * es;
  const ReduceOp op(op_id, dt);
  std::vector<std::vector<std::byte>> in(np), buf(np);
  for (int r = 0; r < p; ++r) {
    const auto ur = static_cast<std::size_t>(r);
    in[ur].resize(np * n);
    if (op_id >= kUserOpBase) {
      fill_matrices(reinterpret_cast<std::uint32_t*>(in[ur].data()), np * count, r);
    } else {
      fill_pattern(in[ur].data(), np * count, dt, r, 5);
    }
    buf[ur] = in[ur];
  }
  sim::World world(p, kModel);
  std::vector<CollArgs> args(np);
  world.run([&](Comm& comm) {
    const auto ur = static_cast<std::size_t>(comm.rank());
    CollArgs& a = args[ur];
    a.coll = Collective::reduce_scatter_block;
    a.count = count;
    a.elem_size = es;
    a.op = op;
    if (op_id >= kUserOpBase) {  // one element = one 2x2 matrix, as in the sweep
      a.count = count / 4;
      a.elem_size = es * 4;
    }
    a.sendbuf = buf[ur].data();
    a.recvbuf = buf[ur].data();
    return run_collective(comm, a, &alg);
  });
  for (std::size_t r = 0; r < np; ++r) {
    std::vector<std::vector<std::byte>> blocks(np);
    for (std::size_t j = 0; j < np; ++j)
      blocks[j].assign(in[j].begin() + static_cast<std::ptrdiff_t>(r * n),
                       in[j].begin() + static_cast<std::ptrdiff_t>((r + 1) * n));
    const std::vector<std::byte> expect = serial_reduce(blocks, 0, np, op, count);
    if (!std::equal(expect.begin(), expect.end(), buf[r].begin()))
      return ::testing::AssertionFailure() << alg.name << " p=" << p << " rank " << r;
  }
  return ::testing::AssertionSuccess();
}

TEST(ReduceScatter, InPlaceFormPutsTheResultInBlockZero) {
  const fc_op_t matmul = register_user_op(matmul2x2, false);
  int tested = 0;
  for (const Algorithm* alg : alltoall_algorithms()) {
    if (alg->coll != Collective::reduce_scatter_block) continue;
    ++tested;
    for (const int p : {1, 2, 3, 5, 8, 13}) {
      EXPECT_TRUE(reduce_scatter_in_place(*alg, p, FC_SUM, FC_DOUBLE, 7));
      if (!alg->needs_commutative) {
        EXPECT_TRUE(reduce_scatter_in_place(*alg, p, matmul, FC_UINT32, 4 * 3));
      }
    }
  }
  free_user_op(matmul);
  EXPECT_GE(tested, 4);
}

// ---- circular shift (not registered: the coroutines on the sim directly) ----------------------

using ShiftFn = Task<> (*)(Channel&, ConstBytes, MutableBytes, int);

Task<> shift_on_rank(Comm& c, ShiftFn fn, const std::vector<std::byte>& in,
                     std::vector<std::byte>& out, int q) {
  Channel ch(c, c.next_sequence());
  Task<> body = fn(ch, in, out, q);
  co_await body;
}

/// Runs a q-shift of m bytes per rank; checks every rank got rank i-q's data; returns the stats.
sim::Stats run_shift(ShiftFn fn, int p, int q, std::size_t m) {
  const auto np = static_cast<std::size_t>(p);
  std::vector<std::vector<std::byte>> in(np), out(np);
  for (std::size_t r = 0; r < np; ++r) {
    in[r].resize(m);
    fill_pattern(in[r].data(), m, FC_BYTE, static_cast<int>(r), 11);
    in[r][0] = static_cast<std::byte>(r);  // tell ranks apart even for tiny m
    out[r].assign(m, std::byte{0xA5});
  }
  sim::World world(p, kModel);
  const sim::Stats st = world.run([&](Comm& c) {
    const auto r = static_cast<std::size_t>(c.rank());
    return shift_on_rank(c, fn, in[r], out[r], q);
  });
  for (int r = 0; r < p; ++r) {
    const auto from = static_cast<std::size_t>(((r - q) % p + p) % p);
    EXPECT_EQ(out[static_cast<std::size_t>(r)], in[from])
        << "p=" << p << " q=" << q << " rank " << r;
  }
  return st;
}

TEST(Shift, DirectMatchesTable4_1) {
  // Table 4.1, circular shift: t_s + t_w m (one message per rank), any q.
  for (const int p : {1, 2, 3, 5, 8, 13, 64}) {
    for (const int q : {0, 1, 2, 5, p - 1, p, p + 3, -1}) {
      const sim::Stats st = run_shift(algorithms::shift_direct, p, q, 800);
      const bool moves = ((q % p) + p) % p != 0;
      EXPECT_EQ(st.finish_time, moves ? kModel.alpha + kModel.beta * 800.0 : 0.0) << p << " " << q;
      EXPECT_EQ(st.total_messages, moves ? static_cast<std::uint64_t>(p) : 0u);
    }
  }
}

TEST(Shift, HypercubeIsOneStepPerBitOfQ) {
  // 003_…: a 2^b-shift for every 1 bit of q: popcount(q mod p) messages of m bytes per rank,
  // within the text's hypercube bound (2 log p - 1)(t_s + t_w m).
  for (const int p : {1, 2, 3, 5, 8, 13, 16, 64, 100}) {
    for (const int q : {0, 1, 3, 5, 7, p - 1, p + 5, -2}) {
      const sim::Stats st = run_shift(algorithms::shift_hypercube, p, q, 800);
      const int shift = ((q % p) + p) % p;
      const double hop = kModel.alpha + kModel.beta * 800.0;
      EXPECT_EQ(st.finish_time, std::popcount(static_cast<unsigned>(shift)) * hop) << p << " " << q;
      const int log_p = p <= 1 ? 0 : static_cast<int>(std::bit_width(static_cast<unsigned>(p - 1)));
      EXPECT_LE(st.finish_time, std::max(0, 2 * log_p - 1) * hop);
    }
  }
}

// ---- real time: the C API on a world of threads (in-process transport) -----------------------

void run_threads(int p, const std::function<void(int, fc_comm_t)>& body) {
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

std::int64_t cell(int from, int to, std::size_t e) {
  return from * 1000000 + to * 1000 + static_cast<std::int64_t>(e);
}

/// Every call form of one collective through the C API, the algorithm forced by
/// FABCOLL_<COLL>_ALGORITHM.
void check_through_c_api(const Algorithm& alg, int p) {
  const auto np = static_cast<std::size_t>(p);
  const std::size_t n = 3;
  run_threads(p, [&](int r, fc_comm_t comm) {
    switch (alg.coll) {
      case Collective::alltoall: {
        std::vector<std::int64_t> in(n * np), out(n * np, -1), want(n * np);
        for (std::size_t j = 0; j < np; ++j) {
          for (std::size_t e = 0; e < n; ++e) {
            in[j * n + e] = cell(r, static_cast<int>(j), e);
            want[j * n + e] = cell(static_cast<int>(j), r, e);
          }
        }
        ASSERT_EQ(fc_alltoall(in.data(), n, FC_INT64, out.data(), n, FC_INT64, comm), FC_SUCCESS);
        EXPECT_EQ(out, want);
        break;
      }
      case Collective::alltoallv: {  // i sends (i + j) % 3 elements to j: zeros included
        auto cnt = [](int i, int j) { return static_cast<std::size_t>((i + j) % 3); };
        std::vector<std::size_t> sc(np), sd(np), rc(np), rd(np);
        std::size_t soff = 0, roff = 0;
        for (int j = 0; j < p; ++j) {
          const auto uj = static_cast<std::size_t>(j);
          sc[uj] = cnt(r, j);
          sd[uj] = soff;
          soff += sc[uj] + 1;  // a gap that must stay untouched
          rc[uj] = cnt(j, r);
          rd[uj] = roff;
          roff += rc[uj] + 1;
        }
        std::vector<std::int64_t> in(soff, -7), out(roff, -1), want(roff, -1);
        for (int j = 0; j < p; ++j) {
          const auto uj = static_cast<std::size_t>(j);
          for (std::size_t e = 0; e < sc[uj]; ++e) in[sd[uj] + e] = cell(r, j, e);
          for (std::size_t e = 0; e < rc[uj]; ++e) want[rd[uj] + e] = cell(j, r, e);
        }
        ASSERT_EQ(fc_alltoallv(in.data(), sc.data(), sd.data(), FC_INT64, out.data(), rc.data(),
                               rd.data(), FC_INT64, comm),
                  FC_SUCCESS);
        EXPECT_EQ(out, want);
        break;
      }
      case Collective::reduce_scatter_block: {
        std::vector<std::int64_t> in(n * np), out(n, -1), want(n, 0);
        for (std::size_t b = 0; b < np; ++b)
          for (std::size_t e = 0; e < n; ++e) in[b * n + e] = cell(r, static_cast<int>(b), e);
        for (int i = 0; i < p; ++i)
          for (std::size_t e = 0; e < n; ++e) want[e] += cell(i, r, e);
        ASSERT_EQ(fc_reduce_scatter_block(in.data(), out.data(), n, FC_INT64, FC_SUM, comm),
                  FC_SUCCESS);
        EXPECT_EQ(out, want);
        // FC_IN_PLACE: recvbuf holds the p blocks, the result lands in block 0.
        std::vector<std::int64_t> io = in;
        ASSERT_EQ(fc_reduce_scatter_block(FC_IN_PLACE, io.data(), n, FC_INT64, FC_SUM, comm),
                  FC_SUCCESS);
        EXPECT_TRUE(std::equal(want.begin(), want.end(), io.begin())) << "in place";
        break;
      }
      default:
        break;
    }
  });
}

TEST(RealTime, EveryAlgorithmThroughTheCApi) {
  int tested = 0;
  for (const Algorithm* alg : alltoall_algorithms()) {
    std::string key = "FABCOLL_" + std::string(collective_name(alg->coll)) + "_ALGORITHM";
    std::transform(key.begin(), key.end(), key.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
    ASSERT_EQ(setenv(key.c_str(), std::string(alg->name).c_str(), 1), 0);
    for (const int p : {1, 2, 3, 5, 8}) {
      if (alg->needs_power_of_two && !std::has_single_bit(static_cast<unsigned>(p))) continue;
      SCOPED_TRACE(key + "=" + std::string(alg->name) + " p=" + std::to_string(p));
      check_through_c_api(*alg, p);
    }
    unsetenv(key.c_str());
    ++tested;
  }
  EXPECT_GE(tested, 12);  // 6 all-to-alls, 2 all-to-allvs, 4 reduce-scatters
}

}  // namespace
}  // namespace fabcoll::testing
