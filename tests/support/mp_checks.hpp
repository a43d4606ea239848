// What the multi-process tests that only check results share (mp_fold, mp_misaligned): this
// rank, the world's size, the count of failed checks, and ok(), which reports a failed call on
// stderr and counts it; start(), fc_init with the world communicator.
#pragma once

#include <fabcoll/fabcoll.h>

#include <cstdio>
#include <string>

namespace fabcoll::testing::mp {

inline int g_rank = 0;
inline int g_size = 1;
inline int g_failures = 0;

inline bool ok(int rc, const std::string& what) {
  if (rc == FC_SUCCESS) return true;
  std::fprintf(stderr, "rank %d: %s failed: %s: %s\n", g_rank, what.c_str(), fc_strerror(rc),
               fc_last_error_message());
  ++g_failures;
  return false;
}

/// fc_init and the world communicator, with g_rank and g_size set; nullptr (and a line on
/// stderr) where fc_init fails.
inline fc_context_t start(fc_comm_t& world) {
  fc_context_t ctx = nullptr;
  if (fc_init(&ctx) != FC_SUCCESS) {
    std::fprintf(stderr, "fc_init failed: %s\n", fc_last_error_message());
    return nullptr;
  }
  fc_comm_world(ctx, &world);
  fc_comm_rank(world, &g_rank);
  fc_comm_size(world, &g_size);
  return ctx;
}

}  // namespace fabcoll::testing::mp
