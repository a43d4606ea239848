// Serial reference computations and test data for the collectives tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "engine/datatype.hpp"
#include "support/matrix2x2.hpp"

namespace fabcoll::testing {

/// Deterministic element pattern for (rank, index), as raw bytes of `elem` size, chosen so
/// that sums/products stay exact for small p (values in 1..4).
inline void fill_pattern(std::byte* out, std::size_t count, fc_datatype_t dt, int rank,
                         std::uint32_t salt = 0) {
  for (std::size_t i = 0; i < count; ++i) {
    const auto v =
        static_cast<int>((static_cast<std::uint32_t>(rank) * 7u + i * 3u + salt) % 4u) + 1;
    std::byte* e = out + i * datatype_size(dt);
    switch (dt) {
      case FC_INT8: {
        const auto x = static_cast<std::int8_t>(v);
        std::memcpy(e, &x, 1);
        break;
      }
      case FC_UINT8:
      case FC_BYTE: {
        const auto x = static_cast<std::uint8_t>(v);
        std::memcpy(e, &x, 1);
        break;
      }
      case FC_INT16: {
        const auto x = static_cast<std::int16_t>(v);
        std::memcpy(e, &x, 2);
        break;
      }
      case FC_UINT16: {
        const auto x = static_cast<std::uint16_t>(v);
        std::memcpy(e, &x, 2);
        break;
      }
      case FC_INT32: {
        const auto x = static_cast<std::int32_t>(v);
        std::memcpy(e, &x, 4);
        break;
      }
      case FC_UINT32: {
        const auto x = static_cast<std::uint32_t>(v);
        std::memcpy(e, &x, 4);
        break;
      }
      case FC_INT64: {
        const auto x = static_cast<std::int64_t>(v);
        std::memcpy(e, &x, 8);
        break;
      }
      case FC_UINT64: {
        const auto x = static_cast<std::uint64_t>(v);
        std::memcpy(e, &x, 8);
        break;
      }
      case FC_FLOAT: {
        const auto x = static_cast<float>(v);
        std::memcpy(e, &x, 4);
        break;
      }
      case FC_DOUBLE: {
        const auto x = static_cast<double>(v);
        std::memcpy(e, &x, 8);
        break;
      }
      // half types: values 1..2 so that sums and products of up to 13 ranks stay exact
      case FC_FLOAT16: {
        const auto x = float_to_half(static_cast<float>(v % 2 + 1));
        std::memcpy(e, &x, 2);
        break;
      }
      case FC_BFLOAT16: {
        const auto x = float_to_bf16(static_cast<float>(v % 2 + 1));
        std::memcpy(e, &x, 2);
        break;
      }
      case FC_FLOAT_INT: {
        const FloatInt x{static_cast<float>(v), rank};
        std::memcpy(e, &x, sizeof x);
        break;
      }
      case FC_DOUBLE_INT: {
        const DoubleInt x{static_cast<double>(v), rank};
        std::memcpy(e, &x, sizeof x);
        break;
      }
      default:
        break;
    }
  }
}

/// Serial left fold of ranks [first, last) of `inputs` with op: ((x_first ⊕ x_first+1) ⊕ …).
inline std::vector<std::byte> serial_reduce(const std::vector<std::vector<std::byte>>& inputs,
                                            std::size_t first, std::size_t last, const ReduceOp& op,
                                            std::size_t count) {
  std::vector<std::byte> acc = inputs[first];
  for (std::size_t r = first + 1; r < last; ++r)
    op.combine_right(acc.data(), inputs[r].data(), count);
  return acc;
}

/// Matrices for the non-commutative test: small entries mod 2^32 arithmetic (wrap is fine:
/// integer matrix products stay associative under wrap-around).
inline void fill_matrices(std::uint32_t* out, std::size_t count, int rank) {
  for (std::size_t i = 0; i + 3 < count; i += 4) {
    out[i] = 1;
    out[i + 1] = static_cast<std::uint32_t>(rank + 1) + static_cast<std::uint32_t>(i % 3);
    out[i + 2] = static_cast<std::uint32_t>(rank % 3);
    out[i + 3] = 1u + static_cast<std::uint32_t>(i % 5 == 0);
  }
}

}  // namespace fabcoll::testing
