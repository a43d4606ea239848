// PostedOp, Transfer, TransferSet: one posted point-to-point operation and how a coroutine waits
// for it. Posting happens when the Transfer is created; awaiting only waits (STYLE.md rule 2:
// post early, await late). Completion never resumes a coroutine inline: it hands the handle
// to the Executor, whose loop resumes it, so a transport is never re-entered from its own
// completion path.
#pragma once

#include <atomic>
#include <coroutine>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/bytes.hpp"
#include "engine/errors.hpp"

namespace fabcoll {

class Transport;
class ReduceOp;
struct PostedOp;

/// Where resumable coroutines go: the rank's progress loop, or the sim world's event loop.
class Executor {
 public:
  virtual ~Executor() = default;
  virtual void schedule(std::coroutine_handle<> h) = 0;
};

/// Something waiting on one or more ops.
class Waiter {
 public:
  virtual void on_complete() = 0;

 protected:
  ~Waiter() = default;
};

enum class OpKind : std::uint8_t { send, recv, delay };

/// Fold on arrival (Channel::recv_combine): a receive whose bytes are combined into `out` as
/// they land instead of being stored. Only a transport whose folds_receive(peer) is true is
/// handed one; it feeds the message to apply() in order, in pieces of whole elements
/// (op->elem_size() bytes; a transport whose pieces split elements assembles those in
/// recv_data, which is then scratch of the message's size).
struct RecvFold {
  const ReduceOp* op = nullptr;      // nullptr: an ordinary receive
  const std::byte* other = nullptr;  // the second operand; equals out or is disjoint from it
  std::byte* out = nullptr;
  bool received_left = false;  // out = recv ⊕ other; else out = other ⊕ recv
  /// Release the sender first: a transport that reads the message from the sender's buffer
  /// may read all of it before it combines any, so that the sender, waiting for its buffer
  /// only, is released after the read instead of after the combines (Channel::recv_combine).
  bool release_sender_first = false;

  /// out[offset, offset + len) = recv ⊕ other (or other ⊕ recv) over those bytes, where
  /// data holds the received bytes [offset, offset + len); len is whole elements.
  void apply(std::size_t offset, const std::byte* data, std::size_t len) const;
  /// The same where the received bytes already sit in out[offset, offset + len) (a transport
  /// that reads straight into out; only when other is disjoint from out).
  void apply_landed(std::size_t offset, std::size_t len) const;
};
enum class OpState : std::uint8_t { pending, done, failed };

/// One posted operation. Owned by its Transfer; a transport may only touch it until it
/// completes it or until Transport::cancel returns.
struct PostedOp {
  OpKind kind = OpKind::send;
  std::atomic<OpState> state{OpState::pending};
  int peer = -1;  // transport-level (world) rank
  std::uint64_t tag = 0;
  const std::byte* send_data = nullptr;
  std::byte* recv_data = nullptr;
  std::size_t size = 0;      // bytes offered (send) or capacity (recv)
  std::size_t received = 0;  // bytes that arrived (recv)
  double delay = 0;          // seconds (delay ops, virtual time)
  Errc error = Errc::success;
  std::string message;
  Waiter* waiter = nullptr;
  Transport* transport = nullptr;
  PostedOp* next = nullptr;  // intrusive list link, free for the transport's use
  bool orphaned = false;     // transport keeps it after cancel and frees it later
  RecvFold fold;             // recv only: fold on arrival (fold.op set) instead of storing

  static void* operator new(std::size_t bytes);
  static void operator delete(void* p, std::size_t bytes) noexcept;

  /// Called by the transport on the owning thread.
  void complete() {
    state.store(OpState::done, std::memory_order_release);
    if (waiter != nullptr) std::exchange(waiter, nullptr)->on_complete();
  }
  void fail(Errc e, std::string msg) {
    error = e;
    message = std::move(msg);
    state.store(OpState::failed, std::memory_order_release);
    if (waiter != nullptr) std::exchange(waiter, nullptr)->on_complete();
  }
  [[nodiscard]] bool finished() const {
    return state.load(std::memory_order_acquire) != OpState::pending;
  }
  void rethrow_if_failed() const {
    if (state.load(std::memory_order_acquire) == OpState::failed) raise(error, message);
  }
};

/// A posted operation the caller can await. Destroying a pending Transfer cancels it.
class [[nodiscard]] Transfer : private Waiter {
 public:
  Transfer() = default;
  Transfer(PostedOp* op, Executor* ex) : op_(op), ex_(ex) {}
  Transfer(Transfer&& o) noexcept : op_(std::exchange(o.op_, nullptr)), ex_(o.ex_), h_(o.h_) {}
  Transfer& operator=(Transfer&& o) noexcept {
    if (this != &o) {
      release();
      op_ = std::exchange(o.op_, nullptr);
      ex_ = o.ex_;
      h_ = o.h_;
    }
    return *this;
  }
  Transfer(const Transfer&) = delete;
  Transfer& operator=(const Transfer&) = delete;
  ~Transfer() { release(); }

  [[nodiscard]] bool finished() const { return op_ == nullptr || op_->finished(); }
  [[nodiscard]] PostedOp* op() const { return op_; }
  /// Bytes received (recv transfers), valid once finished.
  [[nodiscard]] std::size_t received() const { return op_ ? op_->received : 0; }

  [[nodiscard]] bool await_ready() const { return finished(); }
  void await_suspend(std::coroutine_handle<> h) {
    h_ = h;
    op_->waiter = this;
  }
  void await_resume() const {
    if (op_ == nullptr) return;
    op_->rethrow_if_failed();
    // Every algorithm knows exactly how many bytes it receives: a shorter message means the
    // ranks called the collective with different counts. Fail instead of computing garbage.
    if (op_->kind == OpKind::recv && op_->received != op_->size) {
      raise(Errc::invalid_count, "mismatched counts: expected " + std::to_string(op_->size) +
                                     " bytes from world rank " + std::to_string(op_->peer) +
                                     ", got " + std::to_string(op_->received));
    }
  }

 private:
  friend class TransferSet;
  void on_complete() override { ex_->schedule(h_); }
  void release() noexcept;

  PostedOp* op_ = nullptr;
  Executor* ex_ = nullptr;
  std::coroutine_handle<> h_;
};

/// Several transfers awaited together: resumes when all have finished; rethrows the first
/// failure. Transfers may be added after some have been awaited (reuse by clear()).
class TransferSet : private Waiter {
 public:
  TransferSet() = default;
  TransferSet(const TransferSet&) = delete;
  TransferSet& operator=(const TransferSet&) = delete;
  ~TransferSet() = default;

  void add(Transfer&& t) { items_.push_back(std::move(t)); }
  void clear() { items_.clear(); }
  [[nodiscard]] std::size_t size() const { return items_.size(); }
  [[nodiscard]] bool empty() const { return items_.empty(); }
  Transfer& operator[](std::size_t i) { return items_[i]; }

  [[nodiscard]] bool await_ready() const {
    for (const Transfer& t : items_)
      if (!t.finished()) return false;
    return true;
  }
  void await_suspend(std::coroutine_handle<> h) {
    h_ = h;
    remaining_ = 0;
    for (Transfer& t : items_) {
      if (!t.finished()) {
        ++remaining_;
        t.op_->waiter = this;
        ex_ = t.ex_;
      }
    }
  }
  void await_resume() {
    for (const Transfer& t : items_) t.await_resume();
    items_.clear();
  }

 private:
  void on_complete() override {
    if (--remaining_ == 0) ex_->schedule(h_);
  }

  std::vector<Transfer> items_;
  std::size_t remaining_ = 0;
  Executor* ex_ = nullptr;
  std::coroutine_handle<> h_;
};

/// One kind of wire as seen from one rank: posts ops to peers (world ranks), completes them
/// during progress(), and can cancel them. Never throws from post: errors complete the op.
class Transport {
 public:
  virtual ~Transport() = default;
  [[nodiscard]] virtual const char* name() const = 0;
  virtual void post_send(PostedOp* op) = 0;
  /// Sends `size` bytes to `peer` at once if that needs no operation to track (a small message
  /// with room for it and nothing queued ahead: the send is then complete); false to go through
  /// post_send. Spares the small sends of shm an op each (allocated, posted, awaited, freed).
  virtual bool send_now(int /*peer*/, std::uint64_t /*tag*/, const std::byte* /*data*/,
                        std::size_t /*size*/) {
    return false;
  }
  virtual void post_recv(PostedOp* op) = 0;
  /// Local computation of op->delay seconds: a virtual-time wait on sim, done at once elsewhere.
  virtual void post_delay(PostedOp* op) { op->complete(); }
  /// True where local computation takes modelled time (sim): only there does a combine post a
  /// delay op; real transports skip it (an op, a post and an await per combine).
  [[nodiscard]] virtual bool models_compute() const { return false; }
  /// Local code (a combine, a copy) has just written [data, data + bytes): a transport that
  /// models what written data costs to send (sim, CostModel::written) notes it.
  virtual void note_written(const void* /*data*/, std::size_t /*bytes*/) {}
  /// True where a receive from `peer` can fold on arrival (PostedOp::fold): the transport
  /// combines each piece as it lands. Others are never handed a fold.
  [[nodiscard]] virtual bool folds_receive(int /*peer*/) const { return false; }
  /// Messages to or from `peer` of at least this many bytes go through a fan-in (several ranks
  /// sending to one at once: the naive reduce, the linear gather) one at a time: the receiver
  /// clears each sender to send (Channel::clears_fan_in). 0: never. Where the transport stalls
  /// when several such messages arrive together (the sockets provider: ofi.cpp).
  [[nodiscard]] virtual std::size_t clear_fan_in_from(int /*peer*/) const { return 0; }
  /// After it returns the transport never touches op again unless it set op->orphaned (then it
  /// frees op itself later).
  virtual void cancel(PostedOp* op) = 0;
  /// Completes finished ops (on the owning thread). Returns true if anything happened.
  virtual bool progress() = 0;
  /// Called when a collective has finished on this rank, before control returns to the
  /// caller: whatever the transport still holds for the peers (a message its provider has
  /// queued) should leave now, for this rank may not call in again for a long time.
  virtual void flush() {}
  /// Phantom mode: sizes are accounted, no bytes move and no kernels run.
  [[nodiscard]] virtual bool phantom() const { return false; }
  /// Virtual-time transports report their clock; real ones return 0.
  [[nodiscard]] virtual double now() const { return 0; }
  /// Names of peers with operations still pending (for timeout messages).
  [[nodiscard]] virtual std::vector<int> pending_peers() const { return {}; }
};

}  // namespace fabcoll
