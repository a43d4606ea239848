// Comm: a group of ranks as the engine sees it. It maps communicator ranks to transport
// (world) ranks, hands out the collective sequence numbers that keep concurrent collectives'
// tags apart, and owns a scratch pool reused across calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
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
  /// The model below the link's protocol break (everywhere when it has none).
  [[nodiscard]] const CostModel& model() const { return link_.below; }
  /// The link model the selector costs algorithms with (both segments and the break).
  [[nodiscard]] const LinkModel& link() const { return link_; }
  /// One segment everywhere (the texts' model).
  void set_model(const CostModel& m) { set_link(LinkModel::uniform(m)); }
  void set_link(const LinkModel& l) {
    link_ = l;
    plans_.clear();
  }
  [[nodiscard]] CidCounter* cids() const { return cids_; }
  /// Bytes moved by local copies (Channel::copy) on this communicator so far: what the model's
  /// δ term charges (CostModel::copy), checked against the formulas on the sim transport.
  [[nodiscard]] std::uint64_t bytes_copied() const { return copied_; }
  void count_copy(std::size_t bytes) { copied_ += bytes; }
  std::uint32_t next_sequence() { return seq_++; }

  /// On the first error the communicator turns broken and fails every later call.
  void mark_broken(const std::string& why);
  [[nodiscard]] bool broken() const { return broken_; }
  [[nodiscard]] const std::string& broken_reason() const { return broken_reason_; }

  /// A cached selection (see collectives.cpp): the key fields, then the algorithm (an opaque
  /// registry entry: the engine does not know the algorithms layer) and its packet count.
  struct Plan {
    int coll = 0;
    std::size_t count = 0;
    std::size_t elem_size = 0;
    bool commutative = true;
    std::size_t requested_packets = 0;
    const void* overrides = nullptr;  // the override snapshot in force (collectives.cpp)
    const void* algorithm = nullptr;
    std::size_t packets = 0;
    long strategy = -1;        // LAWN 29's hybrids: the strategy it runs (CollArgs::strategy)
    bool above_break = false;  // the algorithm was costed with the link's upper segment
    CostModel model;           // the model it runs with (its segment's, costed: Algorithm::costed)
    [[nodiscard]] bool same_key(const Plan& o) const {
      return coll == o.coll && count == o.count && elem_size == o.elem_size &&
             commutative == o.commutative && requested_packets == o.requested_packets &&
             overrides == o.overrides;
    }
  };
  [[nodiscard]] const Plan* find_plan(const Plan& key) const {
    for (auto it = plans_.rbegin(); it != plans_.rend(); ++it)  // the newest first
      if (it->same_key(key)) return &*it;
    return nullptr;
  }
  /// Bounded: the oldest plan makes room (a sweep over sizes keeps the recent ones).
  const Plan& store_plan(Plan p) {
    constexpr std::size_t kMaxPlans = 64;
    if (plans_.size() >= kMaxPlans) plans_.erase(plans_.begin());
    plans_.push_back(std::move(p));
    return plans_.back();
  }
  /// The model changed: every cached choice may be wrong.
  void clear_plans() { plans_.clear(); }

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
  LinkModel link_;
  CidCounter* cids_;
  std::uint64_t copied_ = 0;
  bool broken_ = false;
  std::string broken_reason_;
  struct Free {
    std::byte* p;
    std::size_t capacity;
  };
  std::vector<Free> free_;
  // A deque: storing a plan moves no other (a blocking call runs with its plan's model in
  // place). Only eviction past 64 plans, set_link and clear_plans destroy plans; none runs on
  // a communicator while a blocking call on it is under way (user operators must not call
  // fabcoll: fabcoll.h).
  std::deque<Plan> plans_;
};

/// Tag layout: communicator id (20 bits) | sequence (28 bits) | step (16 bits). Steps wrap;
/// transports keep messages with equal (source, tag) in order, so a wrapped step still matches.
inline std::uint64_t make_tag(std::uint32_t cid, std::uint32_t seq, std::uint32_t step) {
  return (static_cast<std::uint64_t>(cid & 0xfffffu) << 44) |
         (static_cast<std::uint64_t>(seq & 0xfffffffu) << 16) | (step & 0xffffu);
}

}  // namespace fabcoll
