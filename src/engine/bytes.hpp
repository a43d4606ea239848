// Byte views used by algorithms: a span of bytes plus pointer arithmetic that stays valid when
// the sim transport runs in phantom mode (no data moved).
#pragma once

#include <cstddef>
#include <span>

namespace fabcoll {

using MutableBytes = std::span<std::byte>;
using ConstBytes = std::span<const std::byte>;

inline MutableBytes bytes_of(void* p, std::size_t n) {
  return {static_cast<std::byte*>(p), n};
}
inline ConstBytes bytes_of(const void* p, std::size_t n) {
  return {static_cast<const std::byte*>(p), n};
}

}  // namespace fabcoll
