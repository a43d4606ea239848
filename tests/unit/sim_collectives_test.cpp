// Every registered algorithm on the sim transport against the serial reference:
// p ∈ {1 … 33, 64, 100, 257, 1000}, several roots, counts {0, 1, p-1, 1000, 1001}, every
// datatype/op family, and a non-commutative operator wherever the algorithm claims support.
#include <gtest/gtest.h>

#include <set>

#include "support/sim_harness.hpp"

namespace fabcoll::testing {
namespace {

std::vector<int> sweep_p() {
  std::vector<int> ps;
  for (int p = 1; p <= 33; ++p) ps.push_back(p);
  for (const int p : {64, 100, 257, 1000}) ps.push_back(p);
  return ps;
}

bool is_reduction(Collective c) {
  return c == Collective::reduce || c == Collective::allreduce || c == Collective::scan ||
         c == Collective::exscan || c == Collective::reduce_scatter_block;
}
bool rooted(Collective c) {
  return c == Collective::bcast || c == Collective::reduce || c == Collective::gather ||
         c == Collective::scatter;
}
bool pow2(int p) { return (p & (p - 1)) == 0; }

class EveryAlgorithm : public ::testing::TestWithParam<const Algorithm*> {};

TEST_P(EveryAlgorithm, MatchesSerialReferenceOverP) {
  const Algorithm* alg = GetParam();
  if (alg->coll == Collective::barrier) GTEST_SKIP() << "barriers are tested separately";
  for (const int p : sweep_p()) {
    if (alg->needs_power_of_two && !pow2(p)) continue;
    // Large p with large blocks only for the per-rank-sized collectives (memory p²·n otherwise).
    const bool quadratic =
        alg->coll == Collective::alltoall || alg->coll == Collective::alltoallv ||
        alg->coll == Collective::allgather || alg->coll == Collective::allgatherv ||
        alg->coll == Collective::reduce_scatter_block || alg->coll == Collective::gather ||
        alg->coll == Collective::scatter;
    std::set<std::size_t> counts = {0, 1, static_cast<std::size_t>(p > 1 ? p - 1 : 2)};
    if (!quadratic || p <= 33) counts.insert({1000, 1001});
    if (p >= 257) counts = {0, 1, static_cast<std::size_t>(quadratic ? 3 : 1001)};
    std::set<int> roots = {0};
    if (rooted(alg->coll)) roots = {0, p - 1, p / 2, p > 2 ? 1 : 0};
    for (const std::size_t count : counts) {
      for (const int root : roots) {
        Case c;
        c.alg = alg;
        c.p = p;
        c.count = count;
        c.dt = is_reduction(alg->coll) ? FC_DOUBLE : FC_INT32;
        c.op = is_reduction(alg->coll) ? FC_SUM : FC_OP_NULL;
        c.root = root;
        ASSERT_TRUE(check_case(c));
      }
    }
  }
}

TEST_P(EveryAlgorithm, EveryDatatypeAndOp) {
  const Algorithm* alg = GetParam();
  if (!is_reduction(alg->coll)) GTEST_SKIP() << "not a reduction";
  for (const int p : {3, 8, 13}) {
    if (alg->needs_power_of_two && !pow2(p)) continue;
    for (int dt = 0; dt < FC_DATATYPE_COUNT_; ++dt) {
      for (fc_op_t op = 0; op < FC_OP_BUILTIN_COUNT_; ++op) {
        if (builtin_kernel(static_cast<fc_datatype_t>(dt), op) == nullptr) continue;
        Case c;
        c.alg = alg;
        c.p = p;
        c.count = 37;
        c.dt = static_cast<fc_datatype_t>(dt);
        c.op = op;
        c.root = p - 1;
        // products of many ranks overflow small types; overflow is still deterministic for
        // integers, and float16 products stay exact below 2^11.
        ASSERT_TRUE(check_case(c));
      }
    }
  }
}

TEST_P(EveryAlgorithm, NonCommutativeOperatorKeepsRankOrder) {
  const Algorithm* alg = GetParam();
  if (!is_reduction(alg->coll) || alg->needs_commutative) GTEST_SKIP() << "no claim";
  const fc_op_t matmul = register_user_op(matmul2x2, false);
  for (const int p : sweep_p()) {
    if (alg->needs_power_of_two && !pow2(p)) continue;
    if (p > 100) continue;
    for (const std::size_t count : {std::size_t{4}, std::size_t{4 * 250}, std::size_t{4 * 33}}) {
      Case c;
      c.alg = alg;
      c.p = p;
      c.count = count;
      c.dt = FC_UINT32;
      c.op = matmul;
      c.root = p / 2;
      ASSERT_TRUE(check_case(c));
    }
  }
  free_user_op(matmul);
}

std::vector<const Algorithm*> algorithm_list() {
  return {all_algorithms().begin(), all_algorithms().end()};
}

std::string algorithm_name(const ::testing::TestParamInfo<const Algorithm*>& info) {
  return std::string(collective_name(info.param->coll)) + "_" + std::string(info.param->name);
}

INSTANTIATE_TEST_SUITE_P(Sim, EveryAlgorithm, ::testing::ValuesIn(algorithm_list()),
                         algorithm_name);

Task<> split_body(Comm& c, std::unique_ptr<Comm>& sub, std::vector<std::int64_t>& sum) {
  // colour by parity, key reverses the order; rank 4 opts out.
  const int color = c.rank() == 4 ? FC_UNDEFINED : c.rank() % 2;
  Task<std::unique_ptr<Comm>> split = comm_split(c, color, -c.rank());
  sub = co_await split;
  if (!sub) co_return;
  sum.assign(3, c.rank());
  CollArgs a;
  a.coll = Collective::allreduce;
  a.recvbuf = sum.data();
  a.sendbuf = sum.data();
  a.count = sum.size();
  a.elem_size = 8;
  a.op = ReduceOp(FC_SUM, FC_INT64);
  Task<> ar = run_collective(*sub, a);
  co_await ar;
}

Task<> truncation_body(Comm& c, std::vector<double>& big, std::vector<double>& small) {
  Channel ch(c, 0);
  if (c.rank() == 0) {
    Transfer t = ch.send(1, bytes_of(big.data(), big.size() * 8));
    co_await t;
  } else {
    Transfer t = ch.recv(0, bytes_of(small.data(), small.size() * 8));
    co_await t;
  }
}

Task<> deadlock_body(Comm& c, std::vector<double>& buf) {
  Channel ch(c, 0);
  if (c.rank() == 2) {  // waits for a message nobody sends
    Transfer t = ch.recv(0, bytes_of(buf.data(), 32));
    co_await t;
  }
}

TEST(SimSplit, CommSplitMakesIndependentSubcommunicators) {
  for (const int p : {1, 5, 13}) {
    sim::World world(p, CostModel{});
    // A link with a protocol break: sub-communicators select with both of its segments.
    CostModel above{};
    above.alpha *= 3;
    const LinkModel link{CostModel{}, above, 4096};
    for (int r = 0; r < p; ++r) world.comm(r).set_link(link);
    std::vector<std::unique_ptr<Comm>> subs(static_cast<std::size_t>(p));
    std::vector<std::vector<std::int64_t>> sums(static_cast<std::size_t>(p));
    world.run([&](Comm& c) {
      const auto r = static_cast<std::size_t>(c.rank());
      return split_body(c, subs[r], sums[r]);
    });
    for (int r = 0; r < p; ++r) {
      const auto& sub = subs[static_cast<std::size_t>(r)];
      if (r == 4) {
        EXPECT_EQ(sub, nullptr);
        continue;
      }
      ASSERT_NE(sub, nullptr);
      std::int64_t expect = 0;
      int members = 0;
      int higher = 0;
      for (int q = 0; q < p; ++q) {
        if (q == 4 || q % 2 != r % 2) continue;
        expect += q;
        ++members;
        higher += q > r ? 1 : 0;
      }
      EXPECT_EQ(sub->size(), members);
      EXPECT_EQ(sub->rank(), higher) << "key = -rank reverses the order";
      EXPECT_EQ(sums[static_cast<std::size_t>(r)][2], expect);
      EXPECT_NE(sub->cid(), 0u);
      EXPECT_EQ(sub->link().break_bytes, 4096);
      EXPECT_EQ(sub->link().above.alpha, above.alpha);
    }
  }
}

TEST(SimErrors, TruncationIsReportedNotSilent) {
  sim::World world(2, CostModel{});
  std::vector<double> big(10, 1.0);
  std::vector<double> small(5, 0.0);
  try {
    world.run([&](Comm& c) { return truncation_body(c, big, small); });
    FAIL() << "expected a truncation error";
  } catch (const EngineError& e) {
    EXPECT_EQ(e.errc(), Errc::truncation);
  }
}

TEST(SimErrors, DeadlockIsReportedWithTheStuckRanks) {
  sim::World world(3, CostModel{});
  std::vector<double> buf(4);
  try {
    world.run([&](Comm& c) { return deadlock_body(c, buf); });
    FAIL() << "expected a deadlock report";
  } catch (const EngineError& e) {
    EXPECT_NE(std::string(e.what()).find("ranks 2"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fabcoll::testing
