#include "transports/inproc/inproc.hpp"

#include <algorithm>
#include <string>

#include "engine/copy.hpp"

namespace fabcoll::inproc {

Fabric::Fabric(int p) {
  endpoints_.reserve(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) endpoints_.push_back(std::make_unique<Endpoint>(*this, r));
}

namespace {
std::string truncation_message(std::size_t got, int src, std::size_t cap) {
  return "message of " + std::to_string(got) + " bytes from rank " + std::to_string(src) +
         " into a receive of " + std::to_string(cap) + " bytes";
}
}  // namespace

void Endpoint::post_send(PostedOp* op) {
  if (op->peer < 0 || op->peer >= fabric_->size()) {
    op->fail(Errc::invalid_argument, "send to rank " + std::to_string(op->peer) + " out of range");
    return;
  }
  Endpoint& dst = fabric_->endpoint(op->peer);
  {
    const std::lock_guard lock(dst.mutex_);
    const auto it = std::find_if(dst.posted_.begin(), dst.posted_.end(), [&](const PostedOp* r) {
      return r->peer == rank_ && r->tag == op->tag;
    });
    if (it != dst.posted_.end()) {
      PostedOp* recv = *it;
      dst.posted_.erase(it);
      if (op->size > recv->size) {
        recv->error = Errc::truncation;
        recv->message = truncation_message(op->size, rank_, recv->size);
      } else if (op->size > 0) {
        copy_bytes(recv->recv_data, op->send_data, op->size);
      }
      recv->received = op->size;
      dst.completed_.push_back(recv);
    } else {
      dst.unexpected_.push_back(
          Message{rank_, op->tag, std::vector<std::byte>(op->send_data, op->send_data + op->size)});
    }
  }
  op->complete();
}

void Endpoint::post_recv(PostedOp* op) {
  {
    const std::lock_guard lock(mutex_);
    const auto it = std::find_if(unexpected_.begin(), unexpected_.end(), [&](const Message& m) {
      return m.src == op->peer && m.tag == op->tag;
    });
    if (it == unexpected_.end()) {
      posted_.push_back(op);
      return;
    }
    if (it->payload.size() > op->size) {
      op->error = Errc::truncation;
      op->message = truncation_message(it->payload.size(), op->peer, op->size);
    } else if (!it->payload.empty()) {
      copy_bytes(op->recv_data, it->payload.data(), it->payload.size());
    }
    op->received = it->payload.size();
    unexpected_.erase(it);
  }
  if (op->error != Errc::success) {
    op->fail(op->error, op->message);
  } else {
    op->complete();
  }
}

void Endpoint::cancel(PostedOp* op) {
  const std::lock_guard lock(mutex_);
  auto it = std::find(posted_.begin(), posted_.end(), op);
  if (it != posted_.end()) {
    posted_.erase(it);
    return;
  }
  it = std::find(completed_.begin(), completed_.end(), op);
  if (it != completed_.end()) completed_.erase(it);
}

bool Endpoint::progress() {
  {
    const std::lock_guard lock(mutex_);
    if (completed_.empty()) return false;
    draining_.swap(completed_);
  }
  for (PostedOp* op : draining_) {
    if (op->error != Errc::success) {
      op->fail(op->error, op->message);
    } else {
      op->complete();
    }
  }
  draining_.clear();
  return true;
}

std::vector<int> Endpoint::pending_peers() const {
  const std::lock_guard lock(mutex_);
  std::vector<int> peers;
  for (const PostedOp* op : posted_) peers.push_back(op->peer);
  std::sort(peers.begin(), peers.end());
  peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
  return peers;
}

}  // namespace fabcoll::inproc
