// Store: the bootstrap key-value exchange (endpoint addresses, shared-memory segment names,
// node ids). Every blocking call has a deadline and fails with Errc::timeout naming the key.
// Implementations: the embedded launcher's Unix-socket store (fabcoll-run), PMIx, and an
// in-memory store for ranks that are threads of one process (tests).
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace fabcoll {

class Store {
 public:
  virtual ~Store() = default;
  [[nodiscard]] virtual int rank() const = 0;
  [[nodiscard]] virtual int size() const = 0;
  /// Publishes key = value (keys are global; by convention they carry the rank).
  virtual void put(const std::string& key, const std::string& value) = 0;
  /// Waits until key exists and returns its value; Errc::timeout after timeout_s seconds.
  virtual std::string get(const std::string& key, double timeout_s) = 0;
  /// Waits until every rank has called barrier with the same name.
  void barrier(const std::string& name, double timeout_s);
};

/// Shared state of an in-memory store for a world of threads.
class MemoryStoreHub {
 public:
  void put(const std::string& key, const std::string& value);
  std::string get(const std::string& key, double timeout_s);

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, std::string> kv_;
};

class MemoryStore final : public Store {
 public:
  MemoryStore(std::shared_ptr<MemoryStoreHub> hub, int rank, int size)
      : hub_(std::move(hub)), rank_(rank), size_(size) {}
  [[nodiscard]] int rank() const override { return rank_; }
  [[nodiscard]] int size() const override { return size_; }
  void put(const std::string& key, const std::string& value) override { hub_->put(key, value); }
  std::string get(const std::string& key, double timeout_s) override {
    return hub_->get(key, timeout_s);
  }

 private:
  std::shared_ptr<MemoryStoreHub> hub_;
  int rank_;
  int size_;
};

}  // namespace fabcoll
