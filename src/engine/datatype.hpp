// Datatypes and reduction operators: element sizes, validity of (datatype, op) pairs and the
// vectorisable combine kernels. Kernels accumulate in place (measured: in-place a += b is 2x
// faster than c = a + b at 16 MiB on this machine).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>

#include "fabcoll/fabcoll.h"

namespace fabcoll {

/// inout[i] = in[i] (op) inout[i]: MPI's argument order; `in` is the left operand.
using KernelFn = void (*)(const void* in, void* inout, std::size_t count);
/// out = left (op) right, out disjoint from both.
using Kernel3Fn = void (*)(const void* left, const void* right, void* out, std::size_t count);

std::size_t datatype_size(fc_datatype_t dt) noexcept;

/// bytes / elem_size. Every datatype's size is a power of two, so this is a shift, not a
/// 64-bit division (tens of cycles here, several of them on an 8-byte all-reduce's path).
[[nodiscard]] inline std::size_t elements_in(std::size_t bytes, std::size_t elem_size) {
  return std::has_single_bit(elem_size) ? bytes >> std::countr_zero(elem_size) : bytes / elem_size;
}
const char* datatype_name(fc_datatype_t dt) noexcept;
bool datatype_valid(fc_datatype_t dt) noexcept;
const char* op_name(fc_op_t op) noexcept;

/// A reduction operator bound to a datatype; cheap to copy.
class ReduceOp {
 public:
  ReduceOp() = default;
  /// Throws EngineError(invalid_op / invalid_datatype) for unknown ops or invalid pairs.
  ReduceOp(fc_op_t op, fc_datatype_t dt);

  [[nodiscard]] bool commutative() const { return commutative_; }
  [[nodiscard]] fc_datatype_t datatype() const { return dt_; }
  [[nodiscard]] fc_op_t id() const { return op_; }
  [[nodiscard]] std::size_t elem_size() const { return elem_; }

  /// inout = in (op) inout, where `in` holds data of lower ranks than inout.
  void combine_left(const void* in, void* inout, std::size_t count) const;
  /// inout = inout (op) in, where `in` holds data of higher ranks than inout.
  void combine_right(void* inout, const void* in, std::size_t count) const;
  /// out = left (op) right, out disjoint from both: in one pass where the operator has a
  /// three-operand kernel (the arithmetic and bitwise builtins), else right is copied into out
  /// block by block (each block still in L1) and combined from the left. The copy was 15% of
  /// a p = 2 reduce root's profile at 1 MiB, beside 18% for the combine itself.
  void combine_to(const void* left, const void* right, void* out, std::size_t count) const;

 private:
  fc_op_t op_ = FC_SUM;
  fc_datatype_t dt_ = FC_BYTE;
  std::size_t elem_ = 1;
  bool commutative_ = true;
  KernelFn kernel_ = nullptr;
  Kernel3Fn kernel3_ = nullptr;
  fc_user_fn user_ = nullptr;
};

/// The builtin kernel for (dt, op), or nullptr when the pair is not defined.
KernelFn builtin_kernel(fc_datatype_t dt, fc_op_t op) noexcept;

/// User operators (fc_op_create). Ids start at FC_OP_USER_BASE.
constexpr fc_op_t kUserOpBase = 1000;
fc_op_t register_user_op(fc_user_fn fn, bool commutative);
void free_user_op(fc_op_t op);

// fp16 / bf16 conversions (round to nearest even), exposed for tests.
float half_to_float(std::uint16_t h) noexcept;
std::uint16_t float_to_half(float f) noexcept;
float bf16_to_float(std::uint16_t h) noexcept;
std::uint16_t float_to_bf16(float f) noexcept;

struct FloatInt {
  float v;
  int i;
};
struct DoubleInt {
  double v;
  int i;
};

}  // namespace fabcoll
