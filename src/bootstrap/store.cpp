#include "bootstrap/store.hpp"

#include <chrono>
#include <cmath>

#include "engine/errors.hpp"

namespace fabcoll {

void Store::barrier(const std::string& name, double timeout_s) {
  // Counter-free barrier over put/get: everyone announces, then waits for everyone.
  put("barrier/" + name + "/" + std::to_string(rank()), "1");
  for (int r = 0; r < size(); ++r)
    (void)get("barrier/" + name + "/" + std::to_string(r), timeout_s);
}

void MemoryStoreHub::put(const std::string& key, const std::string& value) {
  {
    const std::lock_guard lock(mutex_);
    kv_[key] = value;
  }
  changed_.notify_all();
}

std::string MemoryStoreHub::get(const std::string& key, double timeout_s) {
  std::unique_lock lock(mutex_);
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(std::isfinite(timeout_s) ? timeout_s : 1e9));
  while (kv_.find(key) == kv_.end()) {
    if (changed_.wait_until(lock, deadline) == std::cv_status::timeout &&
        kv_.find(key) == kv_.end()) {
      raise(Errc::timeout, "bootstrap store: key '" + key + "' did not appear within " +
                               std::to_string(timeout_s) + " s");
    }
  }
  return kv_[key];
}

}  // namespace fabcoll
