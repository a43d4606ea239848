#include "engine/channel.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "engine/copy.hpp"

namespace fabcoll {

Channel::~Channel() {
  for (std::size_t i = 0; i < ninline_; ++i)
    comm_->release_scratch(inline_[i].p, inline_[i].capacity);
  for (const Block& b : spill_) comm_->release_scratch(b.p, b.capacity);
}

Transfer Channel::post(PostedOp* op, OpKind kind) {
  op->kind = kind;
  op->transport = &comm_->transport();
  Transfer t(op, &comm_->executor());
  switch (kind) {
    case OpKind::send:
      comm_->transport().post_send(op);
      break;
    case OpKind::recv:
      comm_->transport().post_recv(op);
      break;
    case OpKind::delay:
      comm_->transport().post_delay(op);
      break;
  }
  return t;
}

Transfer Channel::send(int peer, ConstBytes data, std::uint32_t step) {
  const int world = comm_->world_rank(peer);
  const std::uint64_t tag = make_tag(comm_->cid(), seq_, step);
  if (comm_->transport().send_now(world, tag, data.data(), data.size()))
    return {};  // sent: an empty Transfer is finished
  PostedOp* op = new PostedOp;
  op->peer = world;
  op->tag = tag;
  op->send_data = data.data();
  op->size = data.size();
  return post(op, OpKind::send);
}

Transfer Channel::recv(int peer, MutableBytes data, std::uint32_t step) {
  PostedOp* op = new PostedOp;
  op->peer = comm_->world_rank(peer);
  op->tag = make_tag(comm_->cid(), seq_, step);
  op->recv_data = data.data();
  op->size = data.size();
  return post(op, OpKind::recv);
}

bool Channel::clears_fan_in(int peer, std::size_t bytes) const {
  const std::size_t from = comm_->transport().clear_fan_in_from(comm_->world_rank(peer));
  return from > 0 && bytes >= from;
}

Transfer Channel::fan_in_go(int peer) { return send(peer, {}, kFanInStep); }

Transfer Channel::fan_in_wait(int peer) { return recv(peer, {}, kFanInStep); }

RecvCombine Channel::recv_combine(int peer, MutableBytes tmp, const ReduceOp& op, ConstBytes other,
                                  MutableBytes out, bool received_left, std::uint32_t step,
                                  bool release_sender_first) {
  const int world = comm_->world_rank(peer);
  Transport& t = comm_->transport();
  RecvCombine rc;
  if (t.models_compute()) {  // sim: the receive, then a combine costing γn of virtual time
    Transfer r = recv(peer, tmp.first(out.size()), step);
    rc.modelled_ =
        recv_then_combine(std::move(r), op, tmp.first(out.size()), other, out, received_left);
    return rc;
  }
  if (!out.empty() && !t.phantom() && t.folds_receive(world)) {
    PostedOp* posted = new PostedOp;
    posted->peer = world;
    posted->tag = make_tag(comm_->cid(), seq_, step);
    posted->recv_data = tmp.data();
    posted->size = out.size();
    posted->fold = RecvFold{&op, other.data(), out.data(), received_left, release_sender_first};
    rc.recv_ = post(posted, OpKind::recv);
    return rc;
  }
  // Receive into tmp; await_resume combines.
  rc.recv_ = recv(peer, tmp.first(out.size()), step);
  rc.ch_ = this;
  rc.op_ = &op;
  rc.tmp_ = tmp.first(out.size());
  rc.other_ = other;
  rc.out_ = out;
  rc.received_left_ = received_left;
  return rc;
}

void RecvCombine::await_resume() {
  if (modelled_.valid()) {
    modelled_.await_resume();
    return;
  }
  recv_.await_resume();
  if (ch_ == nullptr) return;  // folded on arrival
  // No modelled compute here: the combine's Transfer is already finished.
  const Transfer work = received_left_ ? ch_->combine_into(*op_, tmp_, other_, out_)
                                       : ch_->combine_into(*op_, other_, tmp_, out_);
  (void)work;
}

Task<> Channel::recv_then_combine(Transfer r, const ReduceOp& op, ConstBytes tmp, ConstBytes other,
                                  MutableBytes out, bool received_left) {
  co_await r;
  Transfer work =
      received_left ? combine_into(op, tmp, other, out) : combine_into(op, other, tmp, out);
  co_await work;
}

Transfer Channel::compute(MutableBytes out) {
  Transport& t = comm_->transport();
  if (!t.models_compute()) return {};  // done: nothing to wait for
  t.note_written(out.data(), out.size());
  PostedOp* op = new PostedOp;
  op->delay = model().gamma * static_cast<double>(out.size());
  return post(op, OpKind::delay);
}

Transfer Channel::combine_left(const ReduceOp& op, ConstBytes in, MutableBytes inout) {
  if (!phantom())
    op.combine_left(in.data(), inout.data(), elements_in(inout.size(), op.elem_size()));
  return compute(inout);
}

Transfer Channel::combine_right(const ReduceOp& op, MutableBytes inout, ConstBytes in) {
  if (!phantom())
    op.combine_right(inout.data(), in.data(), elements_in(inout.size(), op.elem_size()));
  return compute(inout);
}

Transfer Channel::combine_into(const ReduceOp& op, ConstBytes left, ConstBytes right,
                               MutableBytes out) {
  if (!phantom() && !out.empty()) {
    const std::size_t n = elements_in(out.size(), op.elem_size());
    if (out.data() == left.data()) {
      op.combine_right(out.data(), right.data(), n);
    } else if (out.data() == right.data()) {
      op.combine_left(left.data(), out.data(), n);
    } else {
      op.combine_to(left.data(), right.data(), out.data(), n);
    }
  }
  return compute(out);
}

void Channel::copy(MutableBytes dst, ConstBytes src) const {
  if (src.empty() || dst.data() == src.data()) return;
  const std::size_t bytes = src.size() < dst.size() ? src.size() : dst.size();
  comm_->count_copy(bytes);
  if (comm_->transport().models_compute()) comm_->transport().note_written(dst.data(), bytes);
  if (phantom()) return;
  const auto d = reinterpret_cast<std::uintptr_t>(dst.data());
  const auto s = reinterpret_cast<std::uintptr_t>(src.data());
  if (d + bytes <= s || s + bytes <= d) {
    copy_bytes(dst.data(), src.data(), bytes);  // apart: fast whatever their alignment
  } else {
    std::memmove(dst.data(), src.data(), bytes);
  }
}

MutableBytes Channel::scratch(std::size_t bytes) {
  constexpr std::size_t kAlign = alignof(std::max_align_t);  // as malloc'd scratch
  const std::size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
  if (rounded <= kSmallScratch - small_used_) {
    std::byte* p = small_ + small_used_;
    small_used_ += rounded;
    return {p, bytes};
  }
  std::size_t capacity = 0;
  std::byte* p = comm_->acquire_scratch(bytes, capacity);
  if (ninline_ < kInline) {
    inline_[ninline_++] = {p, capacity};
  } else {
    spill_.push_back({p, capacity});
  }
  return {p, bytes};
}

}  // namespace fabcoll
