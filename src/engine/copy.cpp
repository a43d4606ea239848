#include "engine/copy.hpp"

#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <emmintrin.h>
#endif

namespace fabcoll {

void copy_bytes(void* dst, const void* src, std::size_t n) noexcept {
#if defined(__x86_64__) || defined(__i386__)
  if (n >= kSlowCopyFrom && rep_movsb_slow(dst, src)) {
    auto* d = static_cast<unsigned char*>(dst);
    const auto* s = static_cast<const unsigned char*>(src);
    // Up to dst's next 16-byte boundary, then aligned stores of unaligned loads, 64 B a pass.
    const std::size_t head = (16 - (reinterpret_cast<std::uintptr_t>(d) & 15)) & 15;
    std::memcpy(d, s, head);  // under 16 bytes: no REP MOVSB
    d += head;
    s += head;
    n -= head;
    for (; n >= 64; n -= 64, d += 64, s += 64) {
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 16));
      const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 32));
      const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 48));
      _mm_store_si128(reinterpret_cast<__m128i*>(d), a);
      _mm_store_si128(reinterpret_cast<__m128i*>(d + 16), b);
      _mm_store_si128(reinterpret_cast<__m128i*>(d + 32), c);
      _mm_store_si128(reinterpret_cast<__m128i*>(d + 48), e);
    }
    std::memcpy(d, s, n);  // under 64 bytes
    return;
  }
#endif
  std::memcpy(dst, src, n);
}

}  // namespace fabcoll
