#include "engine/progress.hpp"

#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

namespace fabcoll {

bool Progress::poll() {
  bool any = false;
  for (Transport* t : transports_) any |= t->progress();
  // Resuming may schedule more handles (a task finishing resumes its awaiter through
  // symmetric transfer, but a transfer completing inline schedules): drain until empty.
  while (!ready_.empty()) {
    any = true;
    running_.swap(ready_);
    for (std::coroutine_handle<> h : running_) h.resume();
    running_.clear();
  }
  return any;
}

double default_timeout_seconds() {
  const char* s = std::getenv("FABCOLL_TIMEOUT");
  if (s == nullptr || *s == '\0') return 120.0;
  if (std::strcmp(s, "inf") == 0) return std::numeric_limits<double>::infinity();
  char* end = nullptr;
  const double v = std::strtod(s, &end);
  if (end == s || v < 0) return 120.0;
  return v == 0 ? std::numeric_limits<double>::infinity() : v;
}

}  // namespace fabcoll
