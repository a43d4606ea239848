// fabcoll — C++ API: RAII types over the C API, std::span overloads with the datatype deduced
// from the element type, and exceptions (fabcoll::Error) carrying the FC_ERR_* code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "fabcoll/fabcoll.h"

namespace fabcoll {

/// Thrown by every call that fails; code() is the FC_ERR_* value.
class Error : public std::runtime_error {
 public:
  Error(int code, const std::string& what) : std::runtime_error(what), code_(code) {}
  [[nodiscard]] int code() const noexcept { return code_; }

 private:
  int code_;
};

namespace detail {
inline void check(int rc) {
  if (rc != FC_SUCCESS) {
    std::string msg = fc_strerror(rc);
    const char* detail = fc_last_error_message();
    if (detail != nullptr && *detail != '\0') msg += std::string(": ") + detail;
    throw Error(rc, msg);
  }
}
}  // namespace detail

/// The fc_datatype_t of a C++ element type.
template <class T>
constexpr fc_datatype_t datatype_of();
template <> constexpr fc_datatype_t datatype_of<std::int8_t>() { return FC_INT8; }
template <> constexpr fc_datatype_t datatype_of<std::int16_t>() { return FC_INT16; }
template <> constexpr fc_datatype_t datatype_of<std::int32_t>() { return FC_INT32; }
template <> constexpr fc_datatype_t datatype_of<std::int64_t>() { return FC_INT64; }
template <> constexpr fc_datatype_t datatype_of<std::uint8_t>() { return FC_UINT8; }
template <> constexpr fc_datatype_t datatype_of<std::uint16_t>() { return FC_UINT16; }
template <> constexpr fc_datatype_t datatype_of<std::uint32_t>() { return FC_UINT32; }
template <> constexpr fc_datatype_t datatype_of<std::uint64_t>() { return FC_UINT64; }
template <> constexpr fc_datatype_t datatype_of<float>() { return FC_FLOAT; }
template <> constexpr fc_datatype_t datatype_of<double>() { return FC_DOUBLE; }
template <> constexpr fc_datatype_t datatype_of<std::byte>() { return FC_BYTE; }

/// Reduction operators.
enum class Op : int {
  sum = FC_SUM,
  prod = FC_PROD,
  min = FC_MIN,
  max = FC_MAX,
  land = FC_LAND,
  lor = FC_LOR,
  lxor = FC_LXOR,
  band = FC_BAND,
  bor = FC_BOR,
  bxor = FC_BXOR,
  minloc = FC_MINLOC,
  maxloc = FC_MAXLOC,
};

/// A running nonblocking collective. Destroying a pending request waits for it.
class Request {
 public:
  Request() = default;
  explicit Request(fc_request_t r) : r_(r) {}
  Request(Request&& o) noexcept : r_(std::exchange(o.r_, nullptr)) {}
  Request& operator=(Request&& o) noexcept {
    if (this != &o) {
      finish_quietly();
      r_ = std::exchange(o.r_, nullptr);
    }
    return *this;
  }
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  ~Request() { finish_quietly(); }

  void wait() { detail::check(fc_wait(&r_)); }
  bool test() {
    int done = 0;
    detail::check(fc_test(&r_, &done));
    return done != 0;
  }

 private:
  void finish_quietly() noexcept {
    if (r_ != nullptr) (void)fc_wait(&r_);
  }
  fc_request_t r_ = nullptr;
};

/// A communicator. The world communicator is borrowed from its Context; split ones are owned.
class Communicator {
 public:
  Communicator() = default;
  Communicator(fc_comm_t c, bool owned) : c_(c), owned_(owned) {}
  Communicator(Communicator&& o) noexcept
      : c_(std::exchange(o.c_, nullptr)), owned_(o.owned_) {}
  Communicator& operator=(Communicator&& o) noexcept {
    if (this != &o) {
      release();
      c_ = std::exchange(o.c_, nullptr);
      owned_ = o.owned_;
    }
    return *this;
  }
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  ~Communicator() { release(); }

  [[nodiscard]] bool valid() const { return c_ != nullptr; }
  [[nodiscard]] fc_comm_t native() const { return c_; }
  [[nodiscard]] int rank() const {
    int r = 0;
    detail::check(fc_comm_rank(c_, &r));
    return r;
  }
  [[nodiscard]] int size() const {
    int s = 0;
    detail::check(fc_comm_size(c_, &s));
    return s;
  }
  /// Collective; an invalid Communicator for color == FC_UNDEFINED.
  [[nodiscard]] Communicator split(int color, int key) const {
    fc_comm_t out = nullptr;
    detail::check(fc_comm_split(c_, color, key, &out));
    return Communicator(out, true);
  }

  template <class T>
  void bcast(std::span<T> buf, int root) const {
    detail::check(fc_bcast(buf.data(), buf.size(), datatype_of<T>(), root, c_));
  }
  template <class T>
  void reduce(std::span<const T> in, std::span<T> out, Op op, int root) const {
    detail::check(fc_reduce(in.data(), out.data(), in.size(), datatype_of<T>(),
                            static_cast<fc_op_t>(op), root, c_));
  }
  template <class T>
  void allreduce(std::span<const T> in, std::span<T> out, Op op) const {
    require_same(in.size(), out.size());
    detail::check(fc_allreduce(in.data(), out.data(), in.size(), datatype_of<T>(),
                               static_cast<fc_op_t>(op), c_));
  }
  /// In-place all-reduce.
  template <class T>
  void allreduce(std::span<T> inout, Op op) const {
    detail::check(fc_allreduce(FC_IN_PLACE, inout.data(), inout.size(), datatype_of<T>(),
                               static_cast<fc_op_t>(op), c_));
  }
  template <class T>
  [[nodiscard]] Request iallreduce(std::span<const T> in, std::span<T> out, Op op) const {
    require_same(in.size(), out.size());
    fc_request_t r = nullptr;
    detail::check(fc_iallreduce(in.data(), out.data(), in.size(), datatype_of<T>(),
                                static_cast<fc_op_t>(op), c_, &r));
    return Request(r);
  }
  template <class T>
  [[nodiscard]] Request ibcast(std::span<T> buf, int root) const {
    fc_request_t r = nullptr;
    detail::check(fc_ibcast(buf.data(), buf.size(), datatype_of<T>(), root, c_, &r));
    return Request(r);
  }
  template <class T>
  void scan(std::span<const T> in, std::span<T> out, Op op) const {
    require_same(in.size(), out.size());
    detail::check(fc_scan(in.data(), out.data(), in.size(), datatype_of<T>(),
                          static_cast<fc_op_t>(op), c_));
  }
  template <class T>
  void exscan(std::span<const T> in, std::span<T> out, Op op) const {
    require_same(in.size(), out.size());
    detail::check(fc_exscan(in.data(), out.data(), in.size(), datatype_of<T>(),
                            static_cast<fc_op_t>(op), c_));
  }
  void barrier() const { detail::check(fc_barrier(c_)); }
  template <class T>
  void gather(std::span<const T> in, std::span<T> out, int root) const {
    detail::check(fc_gather(in.data(), in.size(), datatype_of<T>(), out.data(), in.size(),
                            datatype_of<T>(), root, c_));
  }
  template <class T>
  void scatter(std::span<const T> in, std::span<T> out, int root) const {
    detail::check(fc_scatter(in.data(), out.size(), datatype_of<T>(), out.data(), out.size(),
                             datatype_of<T>(), root, c_));
  }
  template <class T>
  void allgather(std::span<const T> in, std::span<T> out) const {
    detail::check(fc_allgather(in.data(), in.size(), datatype_of<T>(), out.data(), in.size(),
                               datatype_of<T>(), c_));
  }
  /// in: size() blocks of out.size() / size() elements.
  template <class T>
  void alltoall(std::span<const T> in, std::span<T> out) const {
    const std::size_t block = out.size() / static_cast<std::size_t>(size());
    detail::check(fc_alltoall(in.data(), block, datatype_of<T>(), out.data(), block,
                              datatype_of<T>(), c_));
  }
  template <class T>
  void reduce_scatter_block(std::span<const T> in, std::span<T> out, Op op) const {
    detail::check(fc_reduce_scatter_block(in.data(), out.data(), out.size(), datatype_of<T>(),
                                          static_cast<fc_op_t>(op), c_));
  }

 private:
  static void require_same(std::size_t a, std::size_t b) {
    if (a != b) throw Error(FC_ERR_INVALID_COUNT, "input and output spans differ in size");
  }
  void release() noexcept {
    if (owned_ && c_ != nullptr) (void)fc_comm_free(&c_);
    c_ = nullptr;
  }
  fc_comm_t c_ = nullptr;
  bool owned_ = false;
};

/// A world of ranks that are threads of this process (see fc_thread_world_create).
class ThreadWorld {
 public:
  explicit ThreadWorld(int size) { detail::check(fc_thread_world_create(size, &w_)); }
  ThreadWorld(const ThreadWorld&) = delete;
  ThreadWorld& operator=(const ThreadWorld&) = delete;
  ~ThreadWorld() { (void)fc_thread_world_free(&w_); }
  [[nodiscard]] fc_thread_world_t native() const { return w_; }

 private:
  fc_thread_world_t w_ = nullptr;
};

/// The library context of this rank: fc_init on construction, fc_finalize on destruction.
class Context {
 public:
  /// Bootstrap from the environment (a lone process is rank 0 of 1).
  Context() { detail::check(fc_init(&ctx_)); }
  /// Rank `rank` of a thread world.
  Context(const ThreadWorld& world, int rank) {
    detail::check(fc_init_thread(world.native(), rank, &ctx_));
  }
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  ~Context() { (void)fc_finalize(ctx_); }

  [[nodiscard]] Communicator world() const {
    fc_comm_t c = nullptr;
    detail::check(fc_comm_world(ctx_, &c));
    return Communicator(c, false);
  }
  [[nodiscard]] fc_context_t native() const { return ctx_; }

 private:
  fc_context_t ctx_ = nullptr;
};

}  // namespace fabcoll
