// fc_mem_register / fc_mem_deregister through the C API: the errors (in flight, twice, null)
// on a lone process, and the fabric path on two threads bootstrapped by fc_init_bcast over
// the ofi transport (sockets): a large bcast on registered buffers moves with zero per-call
// registrations and zero staging copies, the same bcast on unregistered buffers registers
// per call.
#include <gtest/gtest.h>

#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "collectives/context_info.hpp"
#include "fabcoll/fabcoll.h"
#include "transports/ofi/ofi.hpp"

namespace {

TEST(MemRegister, DeregisterInFlightTwiceOrNullIsAClearError) {
  fc_context_t ctx = nullptr;
  ASSERT_EQ(fc_init(&ctx), FC_SUCCESS) << fc_last_error_message();
  fc_comm_t world = nullptr;
  ASSERT_EQ(fc_comm_world(ctx, &world), FC_SUCCESS);
  std::vector<double> in(1000, 1.0);
  std::vector<double> out(1000, 0.0);
  fc_mem_t mem = nullptr;
  ASSERT_EQ(fc_mem_register(ctx, out.data(), out.size() * sizeof(double), &mem), FC_SUCCESS);
  fc_request_t req = nullptr;
  ASSERT_EQ(fc_iallreduce(in.data(), out.data(), in.size(), FC_DOUBLE, FC_SUM, world, &req),
            FC_SUCCESS)
      << fc_last_error_message();
  EXPECT_EQ(fc_mem_deregister(&mem), FC_ERR_INVALID_ARG);
  EXPECT_NE(std::string(fc_last_error_message()).find("in flight"), std::string::npos)
      << fc_last_error_message();
  EXPECT_NE(mem, nullptr);
  ASSERT_EQ(fc_wait(&req), FC_SUCCESS) << fc_last_error_message();
  EXPECT_EQ(out[7], 1.0);
  fc_mem_t copy = mem;
  ASSERT_EQ(fc_mem_deregister(&mem), FC_SUCCESS) << fc_last_error_message();
  EXPECT_EQ(mem, nullptr);
  EXPECT_EQ(fc_mem_deregister(&mem), FC_ERR_INVALID_ARG);   // null
  EXPECT_EQ(fc_mem_deregister(&copy), FC_ERR_INVALID_ARG);  // deregistered already
  EXPECT_NE(std::string(fc_last_error_message()).find("deregistered already"), std::string::npos)
      << fc_last_error_message();
  EXPECT_EQ(fc_mem_register(ctx, nullptr, 8, &mem), FC_ERR_INVALID_ARG);
  // A region left registered goes with fc_finalize.
  ASSERT_EQ(fc_mem_register(ctx, in.data(), 8, &mem), FC_SUCCESS);
  ASSERT_EQ(fc_finalize(ctx), FC_SUCCESS) << fc_last_error_message();
  EXPECT_EQ(fc_mem_deregister(&mem), FC_ERR_INVALID_ARG);
}

/// fc_bcast_fn over threads: rank 0's k-th call publishes, the others' k-th call copies.
struct ThreadBcast {
  std::mutex mutex;
  std::condition_variable cv;
  std::map<int, std::vector<char>> published;
  std::map<int, int> calls;  // rank -> calls so far
};
struct BcastArg {
  ThreadBcast* shared;
  int rank;
};

int thread_bcast(void* buf, int len, void* arg) {
  auto* a = static_cast<BcastArg*>(arg);
  ThreadBcast& s = *a->shared;
  std::unique_lock lock(s.mutex);
  const int k = s.calls[a->rank]++;
  if (a->rank == 0) {
    s.published[k].assign(static_cast<char*>(buf), static_cast<char*>(buf) + len);
    s.cv.notify_all();
    return 0;
  }
  if (!s.cv.wait_for(lock, std::chrono::seconds(30), [&] { return s.published.count(k) != 0; }))
    return 1;
  const std::vector<char>& v = s.published[k];
  if (static_cast<int>(v.size()) != len) return 1;
  std::memcpy(buf, v.data(), v.size());
  return 0;
}

struct EnvVar {
  std::string name;
  bool was_set;
  std::string old;
  EnvVar(const char* n, const char* value) : name(n) {
    const char* v = std::getenv(n);
    was_set = v != nullptr;
    old = was_set ? v : "";
    ::setenv(n, value, 1);
  }
  ~EnvVar() {
    if (was_set)
      ::setenv(name.c_str(), old.c_str(), 1);
    else
      ::unsetenv(name.c_str());
  }
  EnvVar(const EnvVar&) = delete;
  EnvVar& operator=(const EnvVar&) = delete;
};

TEST(MemRegister, RegisteredBcastOverOfiNeedsNoPerCallRegistration) {
  const EnvVar transport("FABCOLL_TRANSPORT", "ofi");
  const EnvVar provider("FABCOLL_PROVIDER", "sockets");
  const EnvVar rendezvous("FABCOLL_OFI_RENDEZVOUS", "1");
  constexpr std::size_t kBytes = std::size_t{4} << 20;
  ThreadBcast shared;
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 2; ++rank) {
    threads.emplace_back([&, rank] {
      BcastArg arg{&shared, rank};
      fc_context_t ctx = nullptr;
      ASSERT_EQ(fc_init_bcast(rank, 2, 1, thread_bcast, &arg, &ctx), FC_SUCCESS)
          << fc_last_error_message();
      fabcoll::ofi::Endpoint* ep = fabcoll::context_ofi(ctx);
      ASSERT_NE(ep, nullptr);
      fc_comm_t world = nullptr;
      ASSERT_EQ(fc_comm_world(ctx, &world), FC_SUCCESS);
      std::vector<unsigned char> buf(kBytes, rank == 0 ? 0x5a : 0);
      fc_mem_t mem = nullptr;
      ASSERT_EQ(fc_mem_register(ctx, buf.data(), buf.size(), &mem), FC_SUCCESS)
          << fc_last_error_message();
      EXPECT_EQ(ep->registered_regions(), 1u);
      const fabcoll::ofi::Stats before = ep->stats();
      ASSERT_EQ(fc_bcast(buf.data(), kBytes, FC_BYTE, 0, world), FC_SUCCESS)
          << fc_last_error_message();
      const fabcoll::ofi::Stats mid = ep->stats();
      EXPECT_EQ(buf[kBytes - 1], 0x5a);
      EXPECT_EQ(mid.mr_per_call - before.mr_per_call, 0u) << "rank " << rank;
      EXPECT_GT(mid.mr_registry_hits, before.mr_registry_hits) << "rank " << rank;
      EXPECT_EQ(mid.staged_bytes, before.staged_bytes) << "rank " << rank;
      if (ep->rendezvous_enabled()) {
        const std::uint64_t moved = rank == 0 ? mid.rma_bytes_sent - before.rma_bytes_sent
                                              : mid.rma_bytes_read - before.rma_bytes_read;
        EXPECT_EQ(moved, kBytes) << "rank " << rank;
      }
      ASSERT_EQ(fc_mem_deregister(&mem), FC_SUCCESS) << fc_last_error_message();
      EXPECT_EQ(ep->registered_regions(), 0u);
      // The same bcast on an unregistered buffer: registered per call, still no staging.
      std::vector<unsigned char> plain(kBytes, rank == 0 ? 0x3c : 0);
      ASSERT_EQ(fc_bcast(plain.data(), kBytes, FC_BYTE, 0, world), FC_SUCCESS)
          << fc_last_error_message();
      const fabcoll::ofi::Stats after = ep->stats();
      EXPECT_EQ(plain[kBytes - 1], 0x3c);
      EXPECT_GT(after.mr_per_call, mid.mr_per_call) << "rank " << rank;
      EXPECT_EQ(after.staged_bytes, mid.staged_bytes) << "rank " << rank;
      ASSERT_EQ(fc_finalize(ctx), FC_SUCCESS) << fc_last_error_message();
    });
  }
  for (std::thread& t : threads) t.join();
}

}  // namespace
