// What the multi-process tests that only check results share (mp_fold, mp_misaligned): this
// rank, the world's size, the count of failed checks, and ok(), which reports a failed call on
// stderr and counts it.
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

}  // namespace fabcoll::testing::mp
