// The non-commutative test operator shared by the in-process tests and the multiprocess
// programs (which see only the public API): a 2x2 integer matrix product.
#pragma once

#include <fabcoll/fabcoll.h>

#include <cstddef>
#include <cstdint>

namespace fabcoll::testing {

/// 2x2 integer matrix product over int32 quadruples (count counts int32s, a multiple of 4):
/// associative, not commutative. inout = in · inout (MPI order).
inline void matmul2x2(const void* in, void* inout, std::size_t count, fc_datatype_t /*dt*/) {
  const auto* a = static_cast<const std::uint32_t*>(in);
  auto* b = static_cast<std::uint32_t*>(inout);
  for (std::size_t i = 0; i + 3 < count; i += 4) {
    const std::uint32_t r0 = a[i] * b[i] + a[i + 1] * b[i + 2];
    const std::uint32_t r1 = a[i] * b[i + 1] + a[i + 1] * b[i + 3];
    const std::uint32_t r2 = a[i + 2] * b[i] + a[i + 3] * b[i + 2];
    const std::uint32_t r3 = a[i + 2] * b[i + 1] + a[i + 3] * b[i + 3];
    b[i] = r0;
    b[i + 1] = r1;
    b[i + 2] = r2;
    b[i + 3] = r3;
  }
}

}  // namespace fabcoll::testing
