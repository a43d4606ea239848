// Task<T>: a lazy C++20 coroutine, the unit in which algorithms are written.
//
// Lazy: nothing runs until the task is awaited (or started by a CollRequest / the sim world).
// Awaiting a task runs it; when it finishes it resumes its awaiter by symmetric transfer, so
// arbitrarily long chains of sub-tasks use no stack. Frames come from the per-thread pool.
// g++ 12 hygiene (STYLE.md): no coroutine lambdas, name awaited temporaries.
#pragma once

#include <coroutine>
#include <exception>
#include <optional>
#include <utility>

#include "engine/frame_pool.hpp"

namespace fabcoll {

template <class T = void>
class Task;

namespace detail {

struct PromiseBase {
  std::coroutine_handle<> continuation_;
  std::exception_ptr error_;

  static void* operator new(std::size_t bytes) { return pool_allocate(bytes); }
  static void operator delete(void* p, std::size_t bytes) noexcept { pool_free(p, bytes); }

  std::suspend_always initial_suspend() noexcept { return {}; }
  struct FinalAwaiter {
    [[nodiscard]] bool await_ready() const noexcept { return false; }
    template <class P>
    std::coroutine_handle<> await_suspend(std::coroutine_handle<P> h) noexcept {
      std::coroutine_handle<> next = h.promise().continuation_;
      return next ? next : std::noop_coroutine();
    }
    void await_resume() const noexcept {}
  };
  FinalAwaiter final_suspend() noexcept { return {}; }
  void unhandled_exception() noexcept { error_ = std::current_exception(); }
};

template <class T>
struct Promise : PromiseBase {
  std::optional<T> value_;
  Task<T> get_return_object() noexcept;
  template <class U>
  void return_value(U&& v) {
    value_.emplace(std::forward<U>(v));
  }
};

template <>
struct Promise<void> : PromiseBase {
  Task<void> get_return_object() noexcept;
  void return_void() noexcept {}
};

}  // namespace detail

template <class T>
class [[nodiscard]] Task {
 public:
  using promise_type = detail::Promise<T>;
  using Handle = std::coroutine_handle<promise_type>;

  Task() = default;
  explicit Task(Handle h) noexcept : h_(h) {}
  Task(Task&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  Task& operator=(Task&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, {});
    }
    return *this;
  }
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  ~Task() { reset(); }

  [[nodiscard]] bool valid() const noexcept { return static_cast<bool>(h_); }
  [[nodiscard]] bool done() const noexcept { return !h_ || h_.done(); }
  /// Starts a top-level task (one that nobody awaits); it runs until its first suspension.
  void start() { h_.resume(); }
  /// For a finished top-level task: rethrows its exception, if any.
  void rethrow_if_failed() const {
    if (h_ && h_.promise().error_) std::rethrow_exception(h_.promise().error_);
  }
  [[nodiscard]] std::exception_ptr error() const noexcept {
    return h_ ? h_.promise().error_ : nullptr;
  }

  // Awaiting a task starts it and resumes the awaiter when it finishes.
  [[nodiscard]] bool await_ready() const noexcept { return !h_ || h_.done(); }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> awaiter) noexcept {
    h_.promise().continuation_ = awaiter;
    return h_;
  }
  T await_resume() {
    if (h_.promise().error_) std::rethrow_exception(h_.promise().error_);
    if constexpr (!std::is_void_v<T>) return std::move(*h_.promise().value_);
  }

 private:
  void reset() noexcept {
    if (h_) h_.destroy();
    h_ = {};
  }
  Handle h_;
};

namespace detail {
template <class T>
Task<T> Promise<T>::get_return_object() noexcept {
  return Task<T>(std::coroutine_handle<Promise<T>>::from_promise(*this));
}
inline Task<void> Promise<void>::get_return_object() noexcept {
  return Task<void>(std::coroutine_handle<Promise<void>>::from_promise(*this));
}
}  // namespace detail

}  // namespace fabcoll
