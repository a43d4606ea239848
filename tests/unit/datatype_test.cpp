// Reduction kernels: every datatype x op against a scalar expression, the fp16/bf16
// conversions, MINLOC/MAXLOC ties, invalid pairs, user operators in both orders.
#include "engine/datatype.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "engine/errors.hpp"
#include "support/reference.hpp"

namespace fabcoll {
namespace {

template <class T>
void check_native(fc_datatype_t dt, bool integer) {
  for (const std::size_t n : {0u, 1u, 7u, 64u, 1000u, 1027u}) {
    std::vector<T> a(n);
    std::vector<T> b(n);
    for (std::size_t i = 0; i < n; ++i) {
      a[i] = static_cast<T>((i * 5 + 3) % 11);
      b[i] = static_cast<T>((i * 3 + 1) % 7);
    }
    auto run = [&](fc_op_t op) {
      std::vector<T> out = b;
      ReduceOp(op, dt).combine_left(a.data(), out.data(), n);
      return out;
    };
    const auto sum = run(FC_SUM);
    const auto prod = run(FC_PROD);
    const auto mn = run(FC_MIN);
    const auto mx = run(FC_MAX);
    for (std::size_t i = 0; i < n; ++i) {
      EXPECT_EQ(sum[i], static_cast<T>(a[i] + b[i]));
      EXPECT_EQ(prod[i], static_cast<T>(a[i] * b[i]));
      EXPECT_EQ(mn[i], std::min(a[i], b[i]));
      EXPECT_EQ(mx[i], std::max(a[i], b[i]));
    }
    if (!integer) {
      EXPECT_THROW(ReduceOp(FC_BAND, dt), EngineError);
      EXPECT_THROW(ReduceOp(FC_LAND, dt), EngineError);
      continue;
    }
    if constexpr (std::is_integral_v<T>) {
      const auto band = run(FC_BAND);
      const auto bor = run(FC_BOR);
      const auto bxor = run(FC_BXOR);
      const auto land = run(FC_LAND);
      const auto lor = run(FC_LOR);
      const auto lxor = run(FC_LXOR);
      for (std::size_t i = 0; i < n; ++i) {
        EXPECT_EQ(band[i], static_cast<T>(a[i] & b[i]));
        EXPECT_EQ(bor[i], static_cast<T>(a[i] | b[i]));
        EXPECT_EQ(bxor[i], static_cast<T>(a[i] ^ b[i]));
        EXPECT_EQ(land[i], static_cast<T>(a[i] != 0 && b[i] != 0));
        EXPECT_EQ(lor[i], static_cast<T>(a[i] != 0 || b[i] != 0));
        EXPECT_EQ(lxor[i], static_cast<T>((a[i] != 0) != (b[i] != 0)));
      }
    }
  }
  EXPECT_THROW(ReduceOp(FC_MINLOC, dt), EngineError);
}

TEST(Kernels, NativeTypesEveryOp) {
  check_native<std::int8_t>(FC_INT8, true);
  check_native<std::int16_t>(FC_INT16, true);
  check_native<std::int32_t>(FC_INT32, true);
  check_native<std::int64_t>(FC_INT64, true);
  check_native<std::uint8_t>(FC_UINT8, true);
  check_native<std::uint16_t>(FC_UINT16, true);
  check_native<std::uint32_t>(FC_UINT32, true);
  check_native<std::uint64_t>(FC_UINT64, true);
  check_native<float>(FC_FLOAT, false);
  check_native<double>(FC_DOUBLE, false);
}

TEST(Kernels, HalfConversionsRoundTrip) {
  // Every finite half converts to float and back unchanged.
  for (std::uint32_t h = 0; h < 0x10000u; ++h) {
    const auto x = static_cast<std::uint16_t>(h);
    const float f = half_to_float(x);
    if (std::isnan(f)) continue;
    EXPECT_EQ(float_to_half(f), x) << std::hex << h;
  }
  EXPECT_EQ(half_to_float(0x3c00u), 1.0f);
  EXPECT_EQ(half_to_float(0x0001u), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(float_to_half(65504.0f), 0x7bffu);
  EXPECT_EQ(float_to_half(1e6f), 0x7c00u);                          // overflow to inf
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3c00u);  // tie to even
  EXPECT_EQ(bf16_to_float(float_to_bf16(3.0f)), 3.0f);
  EXPECT_EQ(float_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80u);  // tie to even
}

TEST(Kernels, HalfTypesCombineInFp32) {
  for (const fc_datatype_t dt : {FC_FLOAT16, FC_BFLOAT16}) {
    const bool half = dt == FC_FLOAT16;
    const auto enc = [&](float f) { return half ? float_to_half(f) : float_to_bf16(f); };
    const auto dec = [&](std::uint16_t h) { return half ? half_to_float(h) : bf16_to_float(h); };
    std::vector<std::uint16_t> a(130);
    std::vector<std::uint16_t> b(130);
    for (std::size_t i = 0; i < a.size(); ++i) {
      a[i] = enc(static_cast<float>(i % 9));
      b[i] = enc(static_cast<float>(i % 4) + 0.5f);
    }
    std::vector<std::uint16_t> s = b;
    ReduceOp(FC_SUM, dt).combine_left(a.data(), s.data(), a.size());
    std::vector<std::uint16_t> m = b;
    ReduceOp(FC_MAX, dt).combine_left(a.data(), m.data(), a.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(dec(s[i]), static_cast<float>(i % 9) + static_cast<float>(i % 4) + 0.5f);
      EXPECT_EQ(dec(m[i]), std::max(static_cast<float>(i % 9), static_cast<float>(i % 4) + 0.5f));
    }
    EXPECT_THROW(ReduceOp(FC_BXOR, dt), EngineError);
  }
}

TEST(Kernels, MinlocMaxlocPickSmallerIndexOnTies) {
  std::vector<DoubleInt> a = {{1.0, 5}, {2.0, 1}, {3.0, 9}};
  std::vector<DoubleInt> b = {{1.0, 2}, {1.0, 7}, {3.0, 4}};
  std::vector<DoubleInt> mn = b;
  ReduceOp(FC_MINLOC, FC_DOUBLE_INT).combine_left(a.data(), mn.data(), 3);
  EXPECT_EQ(mn[0].i, 2);
  EXPECT_EQ(mn[1].v, 1.0);
  EXPECT_EQ(mn[1].i, 7);
  EXPECT_EQ(mn[2].i, 4);
  std::vector<FloatInt> fa = {{4.0f, 3}, {1.0f, 0}};
  std::vector<FloatInt> fb = {{4.0f, 1}, {2.0f, 8}};
  ReduceOp(FC_MAXLOC, FC_FLOAT_INT).combine_left(fa.data(), fb.data(), 2);
  EXPECT_EQ(fb[0].i, 1);
  EXPECT_EQ(fb[1].v, 2.0f);
  EXPECT_EQ(fb[1].i, 8);
  EXPECT_THROW(ReduceOp(FC_SUM, FC_DOUBLE_INT), EngineError);
}

TEST(Kernels, InvalidDatatypeAndOp) {
  EXPECT_THROW(ReduceOp(FC_SUM, static_cast<fc_datatype_t>(99)), EngineError);
  EXPECT_THROW(ReduceOp(42, FC_INT32), EngineError);
  EXPECT_THROW(ReduceOp(-3, FC_INT32), EngineError);
  EXPECT_EQ(datatype_size(static_cast<fc_datatype_t>(-1)), 0u);
  try {
    ReduceOp(FC_BOR, FC_DOUBLE);
    FAIL();
  } catch (const EngineError& e) {
    EXPECT_EQ(e.errc(), Errc::invalid_op);
    EXPECT_NE(std::string(e.what()).find("double"), std::string::npos);
  }
}

// combine_to (out = left op right into a third buffer) is bitwise what copying right into out
// and combining left into it gives, for every valid builtin pair (the three-operand kernels and
// the copy-then-combine fallback alike) and for a non-commutative user operator across the
// fallback's block boundaries.
TEST(Kernels, CombineToEqualsCopyThenCombine) {
  for (int dt = 0; dt < FC_DATATYPE_COUNT_; ++dt) {
    for (int opi = 0; opi < FC_OP_BUILTIN_COUNT_; ++opi) {
      std::optional<ReduceOp> op;
      try {
        op.emplace(static_cast<fc_op_t>(opi), static_cast<fc_datatype_t>(dt));
      } catch (const EngineError&) {
        continue;
      }
      const std::size_t es = op->elem_size();
      for (const std::size_t n : {0u, 1u, 13u, 4099u}) {
        std::vector<std::uint8_t> a(n * es), b(n * es);
        for (std::size_t i = 0; i < a.size(); ++i) {
          a[i] = static_cast<std::uint8_t>((i * 37 + 11) % 251 % 64);  // no NaN/Inf patterns
          b[i] = static_cast<std::uint8_t>((i * 91 + 5) % 241 % 64);
        }
        std::vector<std::uint8_t> want = b, got(n * es, 0xee);
        op->combine_left(a.data(), want.data(), n);
        op->combine_to(a.data(), b.data(), got.data(), n);
        EXPECT_EQ(got, want) << datatype_name(static_cast<fc_datatype_t>(dt)) << " op " << opi
                             << " n " << n;
      }
    }
  }
  const fc_op_t id = register_user_op(testing::matmul2x2, false);
  const ReduceOp op(id, FC_UINT32);
  const std::size_t n = 4 * 3000;  // 3000 matrices: several 16 KiB blocks
  std::vector<std::uint32_t> a(n), b(n);
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = static_cast<std::uint32_t>(i % 5);
    b[i] = static_cast<std::uint32_t>((i * 7) % 3);
  }
  std::vector<std::uint32_t> want = b, got(n, 0);
  op.combine_left(a.data(), want.data(), n);
  op.combine_to(a.data(), b.data(), got.data(), n);
  EXPECT_EQ(got, want);
  free_user_op(id);
}

TEST(Kernels, UserOpBothOrders) {
  const fc_op_t id = register_user_op(testing::matmul2x2, false);
  const ReduceOp op(id, FC_UINT32);
  EXPECT_FALSE(op.commutative());
  const std::uint32_t a[4] = {1, 2, 0, 1};  // [[1,2],[0,1]]
  const std::uint32_t b[4] = {1, 0, 3, 1};  // [[1,0],[3,1]]
  std::uint32_t left[4] = {1, 0, 3, 1};
  op.combine_left(a, left, 4);  // a·b = [[7,2],[3,1]]
  EXPECT_EQ(left[0], 7u);
  EXPECT_EQ(left[1], 2u);
  std::uint32_t right[4] = {1, 0, 3, 1};
  op.combine_right(right, a, 4);  // b·a = [[1,2],[3,7]]
  EXPECT_EQ(right[1], 2u);
  EXPECT_EQ(right[3], 7u);
  (void)b;
  free_user_op(id);
  EXPECT_THROW(ReduceOp(id, FC_UINT32), EngineError);
}

}  // namespace
}  // namespace fabcoll
