// copy_bytes (engine/copy.hpp): every byte copied, none outside [dst, dst + n), for every pair of
// offsets in a cache line and sizes around its thresholds (2 KiB, the 16-byte head, the 64-byte
// passes, the tail); and which pairs it counts as slow for REP MOVSB. Its speed is measured by
// fabcoll-kernels-bench (BM_copy_*), not here.
#include "engine/copy.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

TEST(CopyBytes, SlowPairsAreDestinationsOneTo31BytesPastTheSource) {
  alignas(64) static unsigned char buf[256];
  for (int s = 0; s < 64; ++s) {
    for (int d = 0; d < 64; ++d) {
      const int ahead = ((d - s) % 64 + 64) % 64;
      EXPECT_EQ(fabcoll::rep_movsb_slow(buf + 128 + d, buf + s), ahead >= 1 && ahead <= 31)
          << "src offset " << s << ", dst offset " << d;
    }
  }
}

TEST(CopyBytes, CopiesEveryByteAtEveryAlignment) {
  const std::size_t sizes[] = {0, 1, 15, 16, 17, 63, 64, 65, 2047, 2048, 2049, 2111, 5000, 70001};
  constexpr std::size_t kMax = 70001;
  constexpr std::size_t kGuard = 128;  // bytes before dst that must stay untouched
  void* raw_src = nullptr;
  void* raw_dst = nullptr;
  ASSERT_EQ(posix_memalign(&raw_src, 4096, kMax + 2 * kGuard), 0);
  ASSERT_EQ(posix_memalign(&raw_dst, 4096, kMax + 2 * kGuard), 0);
  auto* src = static_cast<unsigned char*>(raw_src);
  auto* dst = static_cast<unsigned char*>(raw_dst);
  for (std::size_t i = 0; i < kMax + 2 * kGuard; ++i)
    src[i] = static_cast<unsigned char>((i * 131 + 7) & 0xff);
  int checked = 0;
  for (const std::size_t n : sizes) {
    for (std::size_t so = 0; so < 64; so += (n >= 2048 ? 1 : 7)) {
      for (std::size_t doff = 0; doff < 64; doff += (n >= 2048 ? 1 : 5)) {
        const std::size_t span = kGuard + 64 + n + kGuard / 2;  // what the check covers
        std::memset(dst, 0xA5, span);
        fabcoll::copy_bytes(dst + kGuard + doff, src + kGuard + so, n);
        ASSERT_EQ(std::memcmp(dst + kGuard + doff, src + kGuard + so, n), 0)
            << n << " bytes, src offset " << so << ", dst offset " << doff;
        for (std::size_t i = 0; i < kGuard + doff; ++i)
          ASSERT_EQ(dst[i], 0xA5) << "written before dst: " << n << " bytes, offsets " << so << ", "
                                  << doff;
        for (std::size_t i = kGuard + doff + n; i < span; ++i)
          ASSERT_EQ(dst[i], 0xA5) << "written past dst + n: " << n << " bytes, offsets " << so
                                  << ", " << doff;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 4096);  // every offset pair at the sizes from 2 KiB
  std::free(raw_src);
  std::free(raw_dst);
}

}  // namespace
