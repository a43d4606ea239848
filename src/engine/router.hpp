// Router: one Transport per peer, chosen at start-up (shm inside a node, ofi between nodes).
// Communicators see a single Transport; the router forwards each operation to the transport
// that reaches its peer and progresses them all.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "engine/transfer.hpp"

namespace fabcoll {

class Router final : public Transport {
 public:
  explicit Router(int world_size) : route_(static_cast<std::size_t>(world_size), nullptr) {}
  void set_route(int peer, Transport* t) {
    route_[static_cast<std::size_t>(peer)] = t;
    if (std::find(members_.begin(), members_.end(), t) == members_.end()) members_.push_back(t);
  }
  [[nodiscard]] Transport* route(int peer) const {
    return peer >= 0 && static_cast<std::size_t>(peer) < route_.size()
               ? route_[static_cast<std::size_t>(peer)]
               : nullptr;
  }
  /// The one transport that reaches every peer, or nullptr (several, or a peer unreached). A
  /// context hands it to its communicators in place of the router: each post and each poll
  /// then costs one virtual call less (an 8-byte all-reduce makes two posts and dozens of polls).
  [[nodiscard]] Transport* sole() const {
    if (members_.size() != 1) return nullptr;
    for (const Transport* t : route_)
      if (t == nullptr) return nullptr;
    return members_.front();
  }
  [[nodiscard]] const char* name() const override { return "router"; }
  void post_send(PostedOp* op) override {
    if (Transport* t = checked(op)) t->post_send(op);
  }
  bool send_now(int peer, std::uint64_t tag, const std::byte* data, std::size_t size) override {
    Transport* t = route(peer);
    return t != nullptr && t->send_now(peer, tag, data, size);
  }
  void post_recv(PostedOp* op) override {
    if (Transport* t = checked(op)) t->post_recv(op);
  }
  [[nodiscard]] bool folds_receive(int peer) const override {
    const Transport* t = route(peer);
    return t != nullptr && t->folds_receive(peer);
  }
  [[nodiscard]] std::size_t clear_fan_in_from(int peer) const override {
    const Transport* t = route(peer);
    return t != nullptr ? t->clear_fan_in_from(peer) : 0;
  }
  void cancel(PostedOp* op) override {
    if (Transport* t = route(op->peer)) t->cancel(op);
  }
  bool progress() override {
    bool any = false;
    for (Transport* t : members_) any |= t->progress();
    return any;
  }
  void flush() override {
    for (Transport* t : members_) t->flush();
  }
  [[nodiscard]] std::vector<int> pending_peers() const override {
    std::vector<int> all;
    for (const Transport* t : members_) {
      const std::vector<int> p = t->pending_peers();
      all.insert(all.end(), p.begin(), p.end());
    }
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    return all;
  }

 private:
  Transport* checked(PostedOp* op) {
    Transport* t = route(op->peer);
    if (t == nullptr) {
      op->fail(Errc::invalid_argument,
               "no transport reaches world rank " + std::to_string(op->peer));
    }
    return t;
  }
  std::vector<Transport*> route_;
  std::vector<Transport*> members_;
};

}  // namespace fabcoll
