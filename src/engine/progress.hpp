// Progress: the only code that spins. It polls the rank's transports, resumes coroutines whose
// transfers completed, and enforces deadlines (FABCOLL_TIMEOUT) in CollRequest::wait.
#pragma once

#include <chrono>
#include <coroutine>
#include <vector>

#include "engine/transfer.hpp"

namespace fabcoll {

class Progress final : public Executor {
 public:
  void schedule(std::coroutine_handle<> h) override { ready_.push_back(h); }
  void add_transport(Transport* t) { transports_.push_back(t); }
  /// Polls every transport once and resumes whatever became ready. True if anything ran.
  bool poll();

 private:
  std::vector<Transport*> transports_;
  std::vector<std::coroutine_handle<>> ready_;
  std::vector<std::coroutine_handle<>> running_;
};

/// Seconds from FABCOLL_TIMEOUT (default 120 s; 0 or "inf" disables the deadline).
double default_timeout_seconds();

}  // namespace fabcoll
