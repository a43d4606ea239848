// Byte copies that stay fast whatever the buffers' alignment.
//
// On this machine (AMD EPYC, FSRM), glibc's memcpy copies from 2 KiB to a few hundred KiB with
// REP MOVSB, and REP MOVSB runs 15-20 times slower when the destination lies 1-31 bytes past
// the source modulo 64 (a cache line): 96 KiB in 2.2 us with both on a page boundary, 50 us
// with the destination 16 bytes further on (a throwaway test, every offset pair of 0..63, one
// core). The kernel's copies (process_vm_readv, shm's single-copy reads) use the same
// instruction and lose 4-5 times (16 against 71 us). A malloc'd buffer of 128 KiB or more starts
// 16 bytes past a page, a posix_memalign'd one on it: such pairs are common.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fabcoll {

/// From this many bytes copy_bytes checks the alignment (glibc copies smaller ones otherwise).
inline constexpr std::size_t kSlowCopyFrom = 2048;

/// Whether a REP MOVSB copy from src to dst runs slowly: dst lies 1-31 bytes past src
/// modulo 64.
[[nodiscard]] inline bool rep_movsb_slow(const void* dst, const void* src) {
  const auto d = (reinterpret_cast<std::uintptr_t>(dst) - reinterpret_cast<std::uintptr_t>(src)) &
                 std::uintptr_t{63};
  return d >= 1 && d <= 31;
}

/// memcpy (dst and src must not overlap), with a vector loop in place of REP MOVSB where that
/// would be slow (rep_movsb_slow, from kSlowCopyFrom bytes).
void copy_bytes(void* dst, const void* src, std::size_t n) noexcept;

}  // namespace fabcoll
