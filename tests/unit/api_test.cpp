// The C and C++ APIs on a world of threads (in-process transport, real time): results,
// nonblocking requests in flight together, split communicators, and clear errors.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include "fabcoll/fabcoll.h"
#include "fabcoll/fabcoll.hpp"

namespace {

/// Runs body(rank, ctx) on p threads of one thread world.
void run_world(int p, const std::function<void(int, fc_context_t)>& body) {
  fc_thread_world_t world = nullptr;
  ASSERT_EQ(fc_thread_world_create(p, &world), FC_SUCCESS);
  std::vector<std::thread> threads;
  for (int r = 0; r < p; ++r) {
    threads.emplace_back([&, r] {
      fc_context_t ctx = nullptr;
      ASSERT_EQ(fc_init_thread(world, r, &ctx), FC_SUCCESS);
      body(r, ctx);
      EXPECT_EQ(fc_finalize(ctx), FC_SUCCESS);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(fc_thread_world_free(&world), FC_SUCCESS);
}

TEST(CApi, LoneProcessIsRankZeroOfOne) {
  fc_context_t ctx = nullptr;
  ASSERT_EQ(fc_init(&ctx), FC_SUCCESS);
  fc_comm_t world = nullptr;
  ASSERT_EQ(fc_comm_world(ctx, &world), FC_SUCCESS);
  int rank = -1;
  int size = -1;
  EXPECT_EQ(fc_comm_rank(world, &rank), FC_SUCCESS);
  EXPECT_EQ(fc_comm_size(world, &size), FC_SUCCESS);
  EXPECT_EQ(rank, 0);
  EXPECT_EQ(size, 1);
  double in[3] = {1, 2, 3};
  double out[3] = {0, 0, 0};
  EXPECT_EQ(fc_allreduce(in, out, 3, FC_DOUBLE, FC_SUM, world), FC_SUCCESS);
  EXPECT_EQ(out[2], 3.0);
  EXPECT_EQ(fc_bcast(in, 3, FC_DOUBLE, 0, world), FC_SUCCESS);
  EXPECT_EQ(fc_finalize(ctx), FC_SUCCESS);
}

TEST(CApi, BcastAndAllreduceOnThreads) {
  for (const int p : {2, 3, 4, 7}) {
    run_world(p, [p](int r, fc_context_t ctx) {
      fc_comm_t world = nullptr;
      ASSERT_EQ(fc_comm_world(ctx, &world), FC_SUCCESS);
      for (int root = 0; root < p; ++root) {
        std::vector<std::int64_t> buf(1001, r == root ? 42 + root : -1);
        ASSERT_EQ(fc_bcast(buf.data(), buf.size(), FC_INT64, root, world), FC_SUCCESS);
        EXPECT_EQ(buf[1000], 42 + root);
      }
      std::vector<float> in(513, static_cast<float>(r + 1));
      std::vector<float> out(513, 0);
      ASSERT_EQ(fc_allreduce(in.data(), out.data(), in.size(), FC_FLOAT, FC_SUM, world),
                FC_SUCCESS);
      EXPECT_EQ(out[512], static_cast<float>(p * (p + 1) / 2));
      std::vector<int> mx(5, r);
      ASSERT_EQ(fc_allreduce(FC_IN_PLACE, mx.data(), 5, FC_INT32, FC_MAX, world), FC_SUCCESS);
      EXPECT_EQ(mx[4], p - 1);
    });
  }
}

TEST(CApi, SeveralNonblockingCollectivesInFlight) {
  run_world(5, [](int r, fc_context_t ctx) {
    fc_comm_t world = nullptr;
    ASSERT_EQ(fc_comm_world(ctx, &world), FC_SUCCESS);
    constexpr int kInFlight = 6;
    std::vector<std::vector<double>> outs(kInFlight, std::vector<double>(100));
    std::vector<std::vector<double>> ins(kInFlight, std::vector<double>(100, r + 1.0));
    fc_request_t reqs[kInFlight];
    for (int i = 0; i < kInFlight; ++i) {
      ins[static_cast<std::size_t>(i)].assign(100, (r + 1.0) * (i + 1));
      ASSERT_EQ(fc_iallreduce(ins[static_cast<std::size_t>(i)].data(),
                              outs[static_cast<std::size_t>(i)].data(), 100, FC_DOUBLE, FC_SUM,
                              world, &reqs[i]),
                FC_SUCCESS);
    }
    // Complete them in reverse order, one with fc_test polling.
    int done = 0;
    while (!done) ASSERT_EQ(fc_test(&reqs[kInFlight - 1], &done), FC_SUCCESS);
    EXPECT_EQ(reqs[kInFlight - 1], nullptr);
    for (int i = kInFlight - 2; i >= 0; --i) ASSERT_EQ(fc_wait(&reqs[i]), FC_SUCCESS);
    for (int i = 0; i < kInFlight; ++i)
      EXPECT_EQ(outs[static_cast<std::size_t>(i)][99], 15.0 * (i + 1));
  });
}

TEST(CApi, CommSplitOnThreads) {
  run_world(6, [](int r, fc_context_t ctx) {
    fc_comm_t world = nullptr;
    ASSERT_EQ(fc_comm_world(ctx, &world), FC_SUCCESS);
    fc_comm_t half = nullptr;
    ASSERT_EQ(fc_comm_split(world, r / 3, r, &half), FC_SUCCESS);
    int sr = -1;
    int ss = -1;
    ASSERT_EQ(fc_comm_rank(half, &sr), FC_SUCCESS);
    ASSERT_EQ(fc_comm_size(half, &ss), FC_SUCCESS);
    EXPECT_EQ(ss, 3);
    EXPECT_EQ(sr, r % 3);
    long v = r;
    long sum = 0;
    ASSERT_EQ(fc_allreduce(&v, &sum, 1, FC_INT64, FC_SUM, half), FC_SUCCESS);
    EXPECT_EQ(sum, r < 3 ? 3 : 12);
    fc_comm_t none = nullptr;
    ASSERT_EQ(fc_comm_split(world, r == 0 ? 0 : FC_UNDEFINED, 0, &none), FC_SUCCESS);
    EXPECT_EQ(none == FC_COMM_NULL, r != 0);
    if (none != FC_COMM_NULL) {
      EXPECT_EQ(fc_comm_free(&none), FC_SUCCESS);
    }
    EXPECT_EQ(fc_comm_free(&half), FC_SUCCESS);
    EXPECT_EQ(half, FC_COMM_NULL);
  });
}

TEST(CApi, BadInputGivesClearErrors) {
  fc_context_t ctx = nullptr;
  ASSERT_EQ(fc_init(&ctx), FC_SUCCESS);
  fc_comm_t world = nullptr;
  ASSERT_EQ(fc_comm_world(ctx, &world), FC_SUCCESS);
  double buf[4] = {};
  EXPECT_EQ(fc_allreduce(buf, nullptr, 4, FC_DOUBLE, FC_SUM, world), FC_ERR_INVALID_ARG);
  EXPECT_NE(std::strstr(fc_last_error_message(), "recvbuf"), nullptr);
  EXPECT_EQ(fc_allreduce(buf, buf + 1, 2, FC_DOUBLE, FC_SUM, world), FC_ERR_INVALID_ARG);
  EXPECT_NE(std::strstr(fc_last_error_message(), "overlap"), nullptr);
  EXPECT_EQ(fc_allreduce(buf, buf + 2, 2, FC_DOUBLE, FC_BXOR, world), FC_ERR_INVALID_OP);
  EXPECT_EQ(fc_allreduce(buf, buf + 2, 2, static_cast<fc_datatype_t>(77), FC_SUM, world),
            FC_ERR_INVALID_DATATYPE);
  EXPECT_EQ(fc_bcast(buf, 4, FC_DOUBLE, 3, world), FC_ERR_INVALID_ROOT);
  EXPECT_EQ(fc_bcast(nullptr, 4, FC_DOUBLE, 0, world), FC_ERR_INVALID_ARG);
  EXPECT_EQ(fc_bcast(nullptr, 0, FC_DOUBLE, 0, world), FC_SUCCESS);  // count 0: null is fine
  EXPECT_EQ(fc_allreduce(buf, buf + 2, 2, FC_DOUBLE, 12345, world), FC_ERR_INVALID_OP);
  EXPECT_EQ(fc_bcast(buf, 1, FC_DOUBLE, 0, nullptr), FC_ERR_INVALID_ARG);
  EXPECT_STREQ(fc_strerror(FC_ERR_TIMEOUT), "timed out");
  EXPECT_EQ(fc_datatype_size(FC_DOUBLE_INT), 16u);
  fc_mem_t mem = nullptr;
  EXPECT_EQ(fc_mem_register(ctx, nullptr, 8, &mem), FC_ERR_INVALID_ARG);
  EXPECT_EQ(fc_mem_register(ctx, buf, sizeof buf, &mem), FC_SUCCESS);
  EXPECT_EQ(fc_mem_deregister(&mem), FC_SUCCESS);
  EXPECT_EQ(fc_finalize(ctx), FC_SUCCESS);
}

TEST(CApi, AMissingPeerTimesOutNamingThePeer) {
  setenv("FABCOLL_TIMEOUT", "0.5", 1);
  run_world(2, [](int r, fc_context_t ctx) {
    fc_comm_t world = nullptr;
    ASSERT_EQ(fc_comm_world(ctx, &world), FC_SUCCESS);
    if (r == 1) return;  // rank 1 never joins the broadcast
    int v = 0;
    EXPECT_EQ(fc_bcast(&v, 1, FC_INT32, 1, world), FC_ERR_TIMEOUT);
    EXPECT_NE(std::strstr(fc_last_error_message(), "world rank(s) 1"), nullptr)
        << fc_last_error_message();
    EXPECT_EQ(fc_barrier(world), FC_ERR_BROKEN);  // the communicator is now broken
  });
  unsetenv("FABCOLL_TIMEOUT");
}

TEST(CApi, UserOperatorNonCommutative) {
  run_world(5, [](int r, fc_context_t ctx) {
    fc_comm_t world = nullptr;
    ASSERT_EQ(fc_comm_world(ctx, &world), FC_SUCCESS);
    // "concatenate digits": a (op) b = a * 10 + b, associative on this domain, not commutative
    // inout = in (op) inout.
    static const fc_user_fn kConcat = [](const void* in, void* inout, size_t n, fc_datatype_t) {
      const auto* a = static_cast<const std::int64_t*>(in);
      auto* b = static_cast<std::int64_t*>(inout);
      for (size_t i = 0; i < n; ++i) {
        std::int64_t scale = 1;
        for (std::int64_t x = b[i]; x > 0; x /= 10) scale *= 10;
        b[i] = a[i] * scale + b[i];
      }
    };
    fc_op_t op = FC_OP_NULL;
    ASSERT_EQ(fc_op_create(kConcat, 0, &op), FC_SUCCESS);
    std::int64_t v = r + 1;
    std::int64_t out = 0;
    ASSERT_EQ(fc_allreduce(&v, &out, 1, FC_INT64, op, world), FC_SUCCESS);
    EXPECT_EQ(out, 12345);
    ASSERT_EQ(fc_op_free(&op), FC_SUCCESS);
  });
}

TEST(CppApi, SpansRaiiAndExceptions) {
  fabcoll::ThreadWorld world(3);
  std::vector<std::thread> threads;
  for (int r = 0; r < 3; ++r) {
    threads.emplace_back([&world, r] {
      fabcoll::Context ctx(world, r);
      fabcoll::Communicator comm = ctx.world();
      EXPECT_EQ(comm.size(), 3);
      std::vector<double> in(10, r);
      std::vector<double> out(10);
      comm.allreduce(std::span<const double>(in), std::span<double>(out), fabcoll::Op::max);
      EXPECT_EQ(out[9], 2.0);
      fabcoll::Request req =
          comm.iallreduce(std::span<const double>(in), std::span<double>(out), fabcoll::Op::sum);
      req.wait();
      EXPECT_EQ(out[0], 3.0);
      fabcoll::Communicator sub = comm.split(r % 2, 0);
      EXPECT_EQ(sub.size(), r % 2 ? 1 : 2);
      try {
        comm.bcast(std::span<double>(in), 7);
        ADD_FAILURE() << "expected an exception";
      } catch (const fabcoll::Error& e) {
        EXPECT_EQ(e.code(), FC_ERR_INVALID_ROOT);
      }
    });
  }
  for (auto& t : threads) t.join();
}

}  // namespace

namespace {

TEST(CApi, MismatchedCountsFailOnEveryRankInsteadOfAWrongResult) {
  setenv("FABCOLL_TIMEOUT", "5", 1);
  for (const char* alg : {"recursive_doubling", "ring", "rabenseifner"}) {
    setenv("FABCOLL_ALLREDUCE_ALGORITHM", alg, 1);
    run_world(2, [alg](int r, fc_context_t ctx) {
      fc_comm_t world = nullptr;
      ASSERT_EQ(fc_comm_world(ctx, &world), FC_SUCCESS);
      std::vector<double> in(r == 0 ? 4 : 8, 1.0);
      std::vector<double> out(in.size(), 0.0);
      const int rc = fc_allreduce(in.data(), out.data(), in.size(), FC_DOUBLE, FC_SUM, world);
      EXPECT_TRUE(rc == FC_ERR_INVALID_COUNT || rc == FC_ERR_TRUNCATE || rc == FC_ERR_TIMEOUT)
          << alg << " rank " << r << ": " << fc_strerror(rc) << ": " << fc_last_error_message();
    });
  }
  unsetenv("FABCOLL_ALLREDUCE_ALGORITHM");
  unsetenv("FABCOLL_TIMEOUT");
}

}  // namespace
