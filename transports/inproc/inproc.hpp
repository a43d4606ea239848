// The in-process transport: a world of p ranks, each a thread of one process, exchanging
// messages through per-rank mailboxes in real time. It serves the C and C++ APIs in tests
// (a blocking C call needs a real-time transport) and lone processes (a world of one).
//
// Matching follows the tagged-message rules every transport keeps: a message matches the
// oldest posted receive with the same (source, tag); unmatched messages wait, copied, in
// arrival order. Sends complete at once (the payload is copied: eager protocol).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "engine/transfer.hpp"

namespace fabcoll::inproc {

class Fabric;

/// One rank's endpoint in a Fabric.
class Endpoint final : public Transport {
 public:
  Endpoint(Fabric& f, int rank) : fabric_(&f), rank_(rank) {}
  [[nodiscard]] const char* name() const override { return "inproc"; }
  void post_send(PostedOp* op) override;
  void post_recv(PostedOp* op) override;
  void cancel(PostedOp* op) override;
  bool progress() override;
  [[nodiscard]] std::vector<int> pending_peers() const override;

 private:
  friend class Fabric;
  struct Message {
    int src;
    std::uint64_t tag;
    std::vector<std::byte> payload;
  };
  Fabric* fabric_;
  int rank_;
  mutable std::mutex mutex_;
  std::vector<PostedOp*> posted_;      // receives waiting for a message
  std::deque<Message> unexpected_;
  std::vector<PostedOp*> completed_;   // receives matched by a sender's thread, to complete here
  std::vector<PostedOp*> draining_;
};

/// The shared part: p endpoints.
class Fabric {
 public:
  explicit Fabric(int p);
  [[nodiscard]] int size() const { return static_cast<int>(endpoints_.size()); }
  Endpoint& endpoint(int rank) { return *endpoints_[static_cast<std::size_t>(rank)]; }

 private:
  std::vector<std::unique_ptr<Endpoint>> endpoints_;
};

}  // namespace fabcoll::inproc
