// Progress: the only code that spins. It polls the rank's transports, resumes coroutines whose
// transfers completed, and enforces deadlines (FABCOLL_TIMEOUT) in CollRequest::wait.
#pragma once

#include <chrono>
#include <coroutine>
#include <vector>

#include "engine/transfer.hpp"

namespace fabcoll {

/// Seconds from FABCOLL_TIMEOUT (default 120 s; 0 or "inf" disables the deadline).
double default_timeout_seconds();

class Progress final : public Executor {
 public:
  void schedule(std::coroutine_handle<> h) override { ready_.push_back(h); }
  void add_transport(Transport* t) { transports_.push_back(t); }
  /// Polls every transport once and resumes whatever became ready. True if anything ran.
  bool poll();

  /// The deadline of blocking calls (FABCOLL_TIMEOUT, read when the context is made).
  [[nodiscard]] double timeout_seconds() const { return timeout_s_; }
  void set_timeout_seconds(double s) { timeout_s_ = s; }
  /// How long a waiting rank spins (pause) before it starts to yield its core. Short when the
  /// node has more ranks than cores (the rank waited for may need this core), else long
  /// enough to cover a message's latency: sched_yield costs a system call each time.
  [[nodiscard]] std::chrono::nanoseconds spin_before_yield() const { return spin_; }
  void set_oversubscribed(bool over) {
    spin_ = over ? std::chrono::nanoseconds(0) : std::chrono::microseconds(50);
  }

 private:
  double timeout_s_ = default_timeout_seconds();
  std::chrono::nanoseconds spin_ = std::chrono::microseconds(50);
  std::vector<Transport*> transports_;
  std::vector<std::coroutine_handle<>> ready_;
  std::vector<std::coroutine_handle<>> running_;
};

}  // namespace fabcoll
