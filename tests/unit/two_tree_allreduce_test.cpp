// H9: the hypercube broadcast of Grama et al. Program 3.1 (003_040e6e35e79cd315.txt) shown
// to be the binomial-tree broadcast (same sender→receiver pairs, same order, same times), which is why it is not registered twice.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdio>

#include "algorithms/algorithms.hpp"
#include "patterns/binomial_tree.hpp"
#include "support/sim_harness.hpp"

namespace fabcoll::testing {
namespace {

constexpr CostModel kModel{.alpha = 4.0, .beta = 0.25, .gamma = 0.125};

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
        EXPECT_EQ(t.dests, tree.children(r)) << "p=" << p << " rank " << r;
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
