// Channel: the rank-addressed view that one collective call gives its algorithm. Ranks are
// communicator ranks; tags come from (communicator, sequence, step), never from the user.
// Algorithms never see a transport, a tag or an EAGAIN.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/communicator.hpp"
#include "engine/datatype.hpp"
#include "engine/task.hpp"
#include "engine/transfer.hpp"

namespace fabcoll {

class Channel;

/// What Channel::recv_combine returns: awaiting it waits until `out` holds the combined result
/// (and rethrows a failure). A transport that folds completes the receive when the last piece
/// is combined; on others the combine runs on resumption (no coroutine frame), and on a
/// transport that models compute time (sim) a small task awaits the receive, then the combine.
/// Destroying it before it finished cancels the receive.
class [[nodiscard]] RecvCombine {
 public:
  RecvCombine(RecvCombine&&) noexcept = default;
  RecvCombine& operator=(RecvCombine&&) noexcept = default;
  RecvCombine(const RecvCombine&) = delete;
  RecvCombine& operator=(const RecvCombine&) = delete;
  ~RecvCombine() = default;

  [[nodiscard]] bool await_ready() const {
    return modelled_.valid() ? modelled_.done() : recv_.finished();
  }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> h) {
    if (modelled_.valid()) return modelled_.await_suspend(h);
    recv_.await_suspend(h);
    return std::noop_coroutine();
  }
  void await_resume();

 private:
  friend class Channel;
  RecvCombine() = default;
  Transfer recv_;
  Task<> modelled_;        // sim: receive, then a combine taking virtual time
  Channel* ch_ = nullptr;  // set: combine once the receive into tmp_ has finished
  const ReduceOp* op_ = nullptr;
  ConstBytes tmp_;
  ConstBytes other_;
  MutableBytes out_;
  bool received_left_ = false;
};

class Channel {
 public:
  /// model: the segment of the communicator's link the call was costed with (nullptr: the
  /// communicator's model, below any break).
  Channel(Comm& comm, std::uint32_t seq, const CostModel* model = nullptr)
      : comm_(&comm), model_(model != nullptr ? model : &comm.model()), seq_(seq) {}
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;
  ~Channel();

  [[nodiscard]] int rank() const { return comm_->rank(); }
  [[nodiscard]] int size() const { return comm_->size(); }
  [[nodiscard]] const CostModel& model() const { return *model_; }
  [[nodiscard]] bool phantom() const { return comm_->transport().phantom(); }
  [[nodiscard]] Comm& comm() const { return *comm_; }

  /// Posts a send of `data` to `peer`; `step` tells apart several messages to one peer.
  Transfer send(int peer, ConstBytes data, std::uint32_t step = 0);
  /// Posts a receive into `data` from `peer`. A longer message fails with Errc::truncation.
  Transfer recv(int peer, MutableBytes data, std::uint32_t step = 0);
  /// Local work that wrote `out`, costing γ·|out| of virtual time on the sim transport (which
  /// also notes `out` as written, Transport::note_written); immediate elsewhere.
  Transfer compute(MutableBytes out);

  /// inout = in (op) inout (in holds lower ranks' data); returns the γ cost to await.
  Transfer combine_left(const ReduceOp& op, ConstBytes in, MutableBytes inout);
  /// inout = inout (op) in (in holds higher ranks' data); returns the γ cost to await.
  Transfer combine_right(const ReduceOp& op, MutableBytes inout, ConstBytes in);
  /// out = left ⊕ right (left: the lower ranks' data) into a third buffer (out may alias
  /// either operand), block by block so each block's copy is still in L1 when it is combined:
  /// an algorithm need not copy its input into out first. Modelled as combine_left.
  Transfer combine_into(const ReduceOp& op, ConstBytes left, ConstBytes right, MutableBytes out);
  /// Receive-and-combine: receives out.size() bytes from `peer` and leaves in `out`
  ///   recv ⊕ other   (received_left: the peer holds the lower ranks' data), or
  ///   other ⊕ recv   (otherwise);
  /// the operand order is kept for non-commutative operators. `other` is out itself (in
  /// place) or a buffer disjoint from it; `tmp` (out.size() bytes) is scratch that neither
  /// aliases. The receive is posted now (post early, await the task late). Where the
  /// transport folds on arrival (Transport::folds_receive: shm) the received bytes are
  /// combined into out as they land, chunk by chunk while they are in cache, and tmp only
  /// assembles elements split between pieces; elsewhere (sim, inproc, ofi, phantom) this is
  /// recv(peer, tmp) then combine_into: the same bytes, costs and virtual time as before.
  /// Until the task finishes, out (and other) may be written at any time: the caller must not
  /// send from out's bytes in the meantime, and must not post two folds into one `out` whose
  /// order matters (post the next one after awaiting this one). FABCOLL_SHM_FOLD=0 turns the
  /// fused form off.
  ///
  /// release_sender_first: for a sender that has nothing to do but wait for its buffer (a
  /// reduce tree's child). Where the transport reads the message from the sender's buffer
  /// (shm single copy, other disjoint from out) it reads all of it before it combines, and
  /// frees the sender after the read; the combine then no longer finds each piece in cache.
  /// Measured p = 2 binomial reduce of 16 MiB (three launches each): the child's time
  /// 3406–3574 against 4620–5111 µs before, the root's 4793–5011 against 4708–5205 µs.
  RecvCombine recv_combine(int peer, MutableBytes tmp, const ReduceOp& op, ConstBytes other,
                           MutableBytes out, bool received_left, std::uint32_t step = 0,
                           bool release_sender_first = false);
  /// Whether a fan-in message of `bytes` between this rank and `peer` goes only once its
  /// receiver has cleared it (Transport::clear_fan_in_from): the receiver sends the sender an
  /// empty message first (fan_in_go), the sender waits for it (fan_in_wait). Both ends ask,
  /// with the same bytes, and get the same answer where every rank's transport is set alike.
  [[nodiscard]] bool clears_fan_in(int peer, std::size_t bytes) const;
  /// The receiver's go-ahead to `peer` (an empty message on kFanInStep).
  Transfer fan_in_go(int peer);
  /// The sender's wait for it.
  Transfer fan_in_wait(int peer);
  /// The step of the go-ahead: apart from an algorithm's own steps (a fan-in algorithm sends
  /// no packets, whose steps count up from 0).
  static constexpr std::uint32_t kFanInStep = 0xfffe;
  /// memmove unless phantom. Costs no virtual time on the sim; counted (Comm::bytes_copied),
  /// and charged by the formulas that carry the model's δ term (CostModel::copy).
  void copy(MutableBytes dst, ConstBytes src) const;

  /// Scratch memory valid until the channel is destroyed (end of the collective call).
  MutableBytes scratch(std::size_t bytes);

 private:
  Transfer post(PostedOp* op, OpKind kind);
  Task<> recv_then_combine(Transfer r, const ReduceOp& op, ConstBytes tmp, ConstBytes other,
                           MutableBytes out, bool received_left);
  Comm* comm_;
  const CostModel* model_;
  std::uint32_t seq_;
  struct Block {
    std::byte* p;
    std::size_t capacity;
  };
  // Most algorithms take one or two scratch blocks: keep those inline (no heap allocation per
  // call), spill the rest.
  static constexpr std::size_t kInline = 4;
  Block inline_[kInline] = {};
  std::size_t ninline_ = 0;
  std::vector<Block> spill_;
  // Small scratch (a small message's receive buffer) comes from the channel itself: no pool
  // search and no release per call. Left uninitialised. Aligned as malloc's memory, no more: a
  // channel may live in a coroutine frame, which g++ allocates with operator new(size_t) and
  // does not over-align.
  static constexpr std::size_t kSmallScratch = 256;
  std::size_t small_used_ = 0;
  alignas(alignof(std::max_align_t)) std::byte small_[kSmallScratch];
};

}  // namespace fabcoll
