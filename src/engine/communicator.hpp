// Comm: a group of ranks as the engine sees it. It maps communicator ranks to transport
// (world) ranks, hands out the collective sequence numbers that keep concurrent collectives'
// tags apart, and owns a scratch pool reused across calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/transfer.hpp"
#include "tuning/cost_model.hpp"

namespace fabcoll {

/// Per-process (per rank, for in-process worlds) counter of communicator ids.
struct CidCounter {
  std::uint32_t next = 1;  // 0 is the world communicator
};

class Comm {
 public:
  /// world_ranks: comm rank -> transport rank; empty means the identity (the world comm).
  Comm(Transport& transport, Executor& executor, int rank, int size, std::vector<int> world_ranks,
       std::uint32_t cid, CostModel model, CidCounter* cids);
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;
  ~Comm();

  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] int size() const { return size_; }
  [[nodiscard]] int world_rank(int r) const { return map_.empty() ? r : map_[r]; }
  [[nodiscard]] std::uint32_t cid() const { return cid_; }
  [[nodiscard]] Transport& transport() const { return *transport_; }
  [[nodiscard]] Executor& executor() const { return *executor_; }
  [[nodiscard]] const CostModel& model() const { return model_; }
  void set_model(const CostModel& m) { model_ = m; }
  [[nodiscard]] CidCounter* cids() const { return cids_; }
  std::uint32_t next_sequence() { return seq_++; }

  /// On the first error the communicator turns broken and fails every later call.
  void mark_broken(const std::string& why);
  [[nodiscard]] bool broken() const { return broken_; }
  [[nodiscard]] const std::string& broken_reason() const { return broken_reason_; }

  // Scratch buffers, recycled (uninitialised memory; large ones are never touched in phantom
  // mode, so the kernel commits no pages for them).
  std::byte* acquire_scratch(std::size_t bytes, std::size_t& capacity);
  void release_scratch(std::byte* p, std::size_t capacity);

 private:
  Transport* transport_;
  Executor* executor_;
  int rank_;
  int size_;
  std::vector<int> map_;
  std::uint32_t cid_;
  std::uint32_t seq_ = 0;
  CostModel model_;
  CidCounter* cids_;
  bool broken_ = false;
  std::string broken_reason_;
  struct Free {
    std::byte* p;
    std::size_t capacity;
  };
  std::vector<Free> free_;
};

/// Tag layout: communicator id (20 bits) | sequence (28 bits) | step (16 bits). Steps wrap;
/// transports keep messages with equal (source, tag) in order, so a wrapped step still matches.
inline std::uint64_t make_tag(std::uint32_t cid, std::uint32_t seq, std::uint32_t step) {
  return (static_cast<std::uint64_t>(cid & 0xfffffu) << 44) |
         (static_cast<std::uint64_t>(seq & 0xfffffffu) << 16) | (step & 0xffffu);
}

}  // namespace fabcoll
