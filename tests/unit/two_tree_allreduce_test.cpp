// H9: the two-tree all-reduce's cost bound on the sim, and the hypercube broadcast of
// Grama et al. Program 3.1 (003_040e6e35e79cd315.txt) shown to be the binomial-tree broadcast
// (same sender→receiver pairs, same order, same times), which is why it is not registered twice.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <vector>

#include "algorithms/algorithms.hpp"
#include "algorithms/sim_steps.hpp"
#include "patterns/binomial_tree.hpp"
#include "patterns/two_tree.hpp"
#include "support/sim_harness.hpp"

namespace fabcoll::testing {
namespace {

constexpr CostModel kModel{.alpha = 4.0, .beta = 0.25, .gamma = 0.125};

// The reduce phase's bound of allreduce_two_tree.cpp, (2k + 2h + 2)(α + (β+γ)s), and the
// two-tree broadcast's exact (k + 2h')(α + βs) (p = 3: 2k(α + βs)). The cost is this bound
// above p = 32 only; below, the sim's steps (CostIsTheSimsSteps).
double two_tree_allreduce_bound(const CostQuery& q) {
  const double s = std::ceil(q.n / q.k);
  const int m = q.p % 2 == 0 ? q.p : q.p - 1;
  const double reduce =
      (2 * q.k + 2 * TwoTree{m}.height() + 2) * (q.m.alpha + (q.m.beta + q.m.gamma) * s);
  const double tau = q.m.alpha + q.m.beta * s;
  return reduce + (q.p == 3 ? 2 * q.k * tau : (q.k + 2 * TwoTree{q.p - 1}.height()) * tau);
}

TEST(TwoTreeAllreduce, AllreduceTwoTreeWithinBound) {
  const Algorithm& alg = algorithms::kAllreduceTwoTree;
  double worst = 0;
  for (int p = 1; p <= 64; ++p) {
    for (const std::size_t count : {64u, 100u, 1000u}) {
      for (const std::size_t k : {1u, 2u, 3u, 4u, 8u, 16u, 37u, 64u}) {
        const std::size_t bytes = 8 * count;
        const sim::Stats st = run_for_cost(alg, p, bytes, kModel, false, 0, k);
        CostQuery q;
        q.n = double(bytes);
        q.p = p;
        q.m = kModel;
        q.k = double(k);
        // p = 2: the cost is exact (SimCost.PipelinedTreesAreExactAtP2).
        const double bound = p <= 2 ? alg.cost(q) : two_tree_allreduce_bound(q);
        EXPECT_LE(st.finish_time, bound) << "p=" << p << " n=" << bytes << " k=" << k;
        if (p > kSimStepsMaxP) {
          EXPECT_EQ(alg.cost(q), bound) << "p=" << p << " k=" << k;
        }
        if (bound > 0) worst = std::max(worst, st.finish_time / bound);
        const auto kk = std::uint64_t(k);
        if (p > 1) {
          const int base = p % 2;  // rank of tree position 0
          const TwoTree trees{p - base};
          const std::vector<std::uint8_t> color = trees.edge_colors();
          std::array<int, 2> tree_of{};
          for (int t = 0; t < 2; ++t) tree_of[color[std::size_t(2 * trees.root(t) + t)]] = t;
          std::uint64_t local = 0;  // packets whose tree root is rank 0 itself
          for (std::size_t i = 0; i < k; ++i) local += trees.root(tree_of[i % 2]) + base == 0;
          EXPECT_EQ(st.total_messages,
                    std::uint64_t(p - base) * kk - local + std::uint64_t(p - 1) * kk)
              << "p=" << p << " k=" << k;
        }
      }
    }
  }
  std::printf("two_tree allreduce: worst sim time / bound = %.3f\n", worst);
}

// At 3 ≤ p ≤ 32 the cost is R(α + (β+γ)s) + B(α + βs), R and B the sim's message steps of
// the reduce and broadcast phases. With γ = 0 it is the sim's time: exactly up to 64 packets,
// within the interpolation between runs at powers of two above (1%). With γ > 0 the sim's
// schedule shifts (a combine can move a send out of another's way: at p = 4, 300 packets of
// 16 KiB, γ = 0.12β makes the sim faster than γ = 0), which no step count follows: with
// γ = 0.12β (this machine's shm: 3.5e-11 against 2.9e-10 s/B) within 25% and 5% in the median,
// with γ = β/2 within 35% and 10% in the median. The bound it replaces was 1.2–2 times the sim.
TEST(TwoTreeAllreduce, CostIsTheSimsSteps) {
  const Algorithm& alg = algorithms::kAllreduceTwoTree;
  const double ratios[3] = {0.0, 0.12, 0.5};  // γ/β
  std::vector<double> errs[3];
  for (int p = 3; p <= kSimStepsMaxP; ++p) {
    for (const std::size_t k : {1u, 2u, 3u, 5u, 8u, 16u, 37u, 64u, 100u, 101u, 300u}) {
      for (int g = 0; g < 3; ++g) {
        for (const std::size_t s : {8u, 1024u, 16384u}) {  // bytes per packet
          CostModel m = kModel;
          m.alpha = 1;
          m.beta = 1.0 / 1024;  // α = βs at 1 KiB packets
          m.gamma = ratios[g] * m.beta;
          const std::size_t bytes = s * k;
          const double t = run_for_cost(alg, p, bytes, m, true, 0, k).finish_time;
          CostQuery q;
          q.n = double(bytes);
          q.p = p;
          q.m = m;
          q.k = double(k);
          const double err = std::abs(alg.cost(q) / t - 1);
          errs[g].push_back(err);
          if (g == 0 && k <= kSimStepsExactK) {
            EXPECT_NEAR(alg.cost(q), t, 1e-9 * t) << "p=" << p << " k=" << k << " s=" << s;
          } else {
            EXPECT_LE(err, g == 0   ? 0.01
                           : g == 1 ? 0.25
                                    : 0.35)
                << "p=" << p << " k=" << k << " s=" << s << " gamma/beta=" << ratios[g];
          }
        }
      }
    }
  }
  for (int g = 0; g < 3; ++g) {
    std::vector<double>& e = errs[g];
    std::sort(e.begin(), e.end());
    const double med = e[e.size() / 2];
    if (g > 0) {
      EXPECT_LE(med, g == 1 ? 0.05 : 0.10) << "gamma/beta=" << ratios[g];
    }
    std::printf("two_tree allreduce, gamma/beta = %.2f: |cost/sim - 1| median %.3f, worst %.3f\n",
                ratios[g], med, e.back());
  }
}

TEST(TwoTreeAllreduce, OptimalKIsTheBestK) {
  const Algorithm& alg = algorithms::kAllreduceTwoTree;
  for (const int p : {3, 8, 17, 64, 1000}) {
    for (const double n : {800.0, 80000.0, 8e6}) {
      CostQuery q;
      q.n = n;
      q.p = p;
      q.m = kModel;
      const double kstar = alg.optimal_k(q);
      EXPECT_GE(kstar, 1);
      q.k = kstar;
      const double best = alg.cost(q);
      for (double k = 1; k <= n && k <= 4096; k += 1) {
        q.k = k;
        EXPECT_LE(best, alg.cost(q) * 1.01) << "p=" << p << " n=" << n << " k=" << k;
      }
    }
  }
}

// Program 3.1 (Grama et al., one-to-all broadcast from processor 0 of a d-dimensional
// hypercube), as printed:
//   mask := 2^d - 1
//   for i := d - 1 downto 0:
//     mask := mask XOR 2^i
//     if my_id AND mask = 0:
//       if my_id AND 2^i = 0: send X to my_id XOR 2^i
//       else:                 receive X from my_id XOR 2^i
// Each rank records the peers it sends to, in order, and the virtual time its receive ends.
struct Program31Trace {
  int source = -1;
  double arrival = 0;
  std::vector<int> dests;
};

Task<> program_3_1(Comm& comm, int d, std::vector<std::byte>& x, Program31Trace& trace) {
  Channel ch(comm, 0);
  const int me = ch.rank();
  int mask = (1 << d) - 1;
  for (int i = d - 1; i >= 0; --i) {
    mask ^= 1 << i;
    if ((me & mask) != 0) continue;
    const int partner = me ^ (1 << i);
    if ((me & (1 << i)) == 0) {
      trace.dests.push_back(partner);
      Transfer t = ch.send(partner, bytes_of(x.data(), x.size()));
      co_await t;
    } else {
      trace.source = partner;
      Transfer t = ch.recv(partner, bytes_of(x.data(), x.size()));
      co_await t;
      trace.arrival = comm.transport().now();
    }
  }
}

TEST(TwoTreeAllreduce, HypercubeBroadcastProgram3_1IsTheBinomialBroadcast) {
  for (int d = 0; d <= 7; ++d) {
    const int p = 1 << d;
    for (const std::size_t bytes : {8u, 800u}) {
      const double tau = kModel.alpha + kModel.beta * double(bytes);
      // The hypercube program on the sim, traced.
      sim::World world(p, kModel);
      const auto np = static_cast<std::size_t>(p);
      std::vector<std::vector<std::byte>> bufs(np, std::vector<std::byte>(bytes));
      std::vector<Program31Trace> trace(np);
      const sim::Stats hyper = world.run([&](Comm& c) {
        const auto r = std::size_t(c.rank());
        return program_3_1(c, d, bufs[r], trace[r]);
      });
      // The registered binomial broadcast on the sim.
      const sim::Stats binom = run_for_cost(algorithms::kBcastBinomial, p, bytes, kModel, false);
      // Same messages: every rank's source and destinations (in posting order) are the
      // binomial tree's parent and children (highest dimension first).
      const BinomialTree tree{p, 0};
      for (int r = 0; r < p; ++r) {
        const Program31Trace& t = trace[std::size_t(r)];
        EXPECT_EQ(t.source, tree.parent(r)) << "p=" << p << " rank " << r;
        const auto kids = tree.children(r);
        EXPECT_EQ(t.dests, std::vector<int>(kids.begin(), kids.end()))
            << "p=" << p << " rank " << r;
        // Same times: rank r ≠ 0 receives in step d - ctz(r) of Theorem 13.1's schedule.
        if (r != 0) {
          EXPECT_EQ(t.arrival, (d - std::countr_zero(unsigned(r))) * tau) << "p=" << p << " " << r;
        }
      }
      EXPECT_EQ(hyper.finish_time, binom.finish_time) << p;
      EXPECT_EQ(hyper.rank_finish, binom.rank_finish) << p;
      EXPECT_EQ(hyper.messages_sent, binom.messages_sent) << p;
      EXPECT_EQ(hyper.bytes_sent, binom.bytes_sent) << p;
      EXPECT_EQ(hyper.rounds, binom.rounds) << p;
      EXPECT_EQ(hyper.finish_time, d * tau) << p;
    }
  }
}

}  // namespace
}  // namespace fabcoll::testing
