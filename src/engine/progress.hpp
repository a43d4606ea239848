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
  /// How long a waiting rank spins (pause) before it starts to yield its core. None when the
  /// node has more ranks than cores (the rank waited for may need this core), else a few
  /// microseconds: enough to cover a small message's latency without a system call per poll
  /// (sched_yield was 14% of an 8-byte all-reduce when it came after 64 pauses), short enough
  /// that a rank whose peer was put on its core by a loaded scheduler soon lets it run (50 us
  /// cost a loaded calibration about 54 us per message).
  [[nodiscard]] std::chrono::nanoseconds spin_before_yield() const { return spin_; }
  void set_oversubscribed(bool over) { spin_ = over ? std::chrono::nanoseconds(0) : kSpin; }
  void set_spin_before_yield(std::chrono::nanoseconds s) { spin_ = s; }

 private:
  static constexpr std::chrono::nanoseconds kSpin = std::chrono::microseconds(4);
  double timeout_s_ = default_timeout_seconds();
  std::chrono::nanoseconds spin_ = kSpin;
  std::vector<Transport*> transports_;
  std::vector<std::coroutine_handle<>> ready_;
  std::vector<std::coroutine_handle<>> running_;
};

}  // namespace fabcoll
