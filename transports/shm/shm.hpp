// The shared-memory transport between ranks of one node.
//
// One segment per node: created by the node's lowest rank (shm_open, mode 0600, an unguessable
// name published through the bootstrap store) and unlinked as soon as every local rank has
// attached, so nothing is left in /dev/shm even after a crash. The segment holds one
// single-producer/single-consumer byte ring per ordered pair of local ranks. Small messages
// travel through the rings in 32-byte-aligned frames; a message of at least the CMA threshold
// moves single-copy with process_vm_readv straight from the sender's buffer into the
// receiver's (the receiver reads after its receive is posted, then answers FIN), in chunks of at
// most 4 MiB (kCmaChunk, measured in shm.cpp). Where CMA is refused (EPERM) the
// message is streamed through the ring instead. A receive that folds (PostedOp::fold, from
// Channel::recv_combine) is combined into its result as it lands: CMA reads 1 MiB pieces (into
// the result where the other operand is disjoint from it, else into a per-endpoint buffer) and
// combines each, ring fragments are combined straight from the frame.
//
//   rank i ──ring i→j──▶ rank j      frames: DATA (fragment) | RTS {addr,size,id} | FIN {id} | PAD
//   rank i ◀──ring j→i── rank j
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "bootstrap/store.hpp"
#include "engine/transfer.hpp"

namespace fabcoll::shm {

struct Stats {
  std::uint64_t bytes_ring = 0;  // payload sent through the rings (staged: copied twice)
  std::uint64_t bytes_cma = 0;   // payload read single-copy by receivers from our buffers
  std::uint64_t messages = 0;
  std::uint64_t bytes_folded = 0;  // received bytes combined on arrival (recv_combine)
  // received single-copy bytes read through the bounce buffer (read_remote: their alignment)
  std::uint64_t bytes_realigned = 0;
};

/// FABCOLL_SHM_CMA (0 turns single copy off) and FABCOLL_SHM_CMA_THRESHOLD (bytes from which a
/// message goes single-copy, default 32768), as every endpoint reads them.
bool cma_requested_by_environment();
std::uint64_t cma_threshold_from_environment();
/// CostModel::pull_bytes for a node link as a context with CMA sets it, from the environment
/// alone (for tools that predict without an endpoint): the threshold, or 0 with CMA off.
inline double pull_bytes_from_environment() {
  return cma_requested_by_environment() ? static_cast<double>(cma_threshold_from_environment())
                                        : 0.0;
}

class Endpoint final : public Transport {
 public:
  /// local_ranks: the world ranks on this node (sorted, includes world_rank). node_key: a
  /// store key prefix unique to this node and job.
  Endpoint(Store& store, int world_rank, std::vector<int> local_ranks, const std::string& node_key,
           double timeout_s);
  ~Endpoint() override;
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

  [[nodiscard]] const char* name() const override { return "shm"; }
  [[nodiscard]] bool can_reach(int world_rank) const;
  void post_send(PostedOp* op) override;
  bool send_now(int peer, std::uint64_t tag, const std::byte* data, std::size_t size) override;
  void post_recv(PostedOp* op) override;
  [[nodiscard]] bool folds_receive(int peer) const override {
    return fold_ && local_index(peer) >= 0;
  }
  void cancel(PostedOp* op) override;
  bool progress() override;
  [[nodiscard]] std::vector<int> pending_peers() const override;
  [[nodiscard]] const Stats& stats() const { return stats_; }
  [[nodiscard]] bool cma_enabled() const;
  /// Messages of at least this many bytes go single-copy (the receiver reads them by CMA).
  [[nodiscard]] std::uint64_t cma_threshold() const { return cma_threshold_; }

 private:
  struct Unexpected {
    int src;
    std::uint64_t tag;
    std::uint64_t total = 0;
    std::uint64_t got = 0;
    std::vector<std::byte> data;
    bool rts = false;
    std::uint64_t addr = 0;
    std::uint64_t send_id = 0;
    bool complete = false;
    PostedOp* claimed = nullptr;
  };
  struct Incoming {  // the message a peer is streaming to us right now
    PostedOp* op = nullptr;
    Unexpected* u = nullptr;
    std::uint64_t total = 0;
    std::uint64_t got = 0;
    bool active = false;
    bool truncated = false;
  };
  struct SendState {
    std::deque<PostedOp*> queue;  // sends to this peer, in order
    std::uint64_t sent = 0;       // bytes of queue.front() already framed
    bool started = false;
    std::uint64_t zero_fill = 0;  // bytes of a cancelled half-sent message still owed
    std::uint64_t zero_fill_total = 0;
    std::uint64_t zero_fill_tag = 0;
    std::deque<std::uint64_t> fins;  // FIN frames owed to this peer (send ids), status packed
  };

  [[nodiscard]] int local_index(int world_rank) const;
  /// An unexpected-message record, reused from spare_ where one is kept.
  std::unique_ptr<Unexpected> new_unexpected(int src, std::uint64_t tag, std::uint64_t total);
  /// Removes *it from unexpected_, keeping the record (and its buffer) for reuse.
  void drop_unexpected(std::deque<std::unique_ptr<Unexpected>>::iterator it);
  bool consume(int li);  // frames from local rank li to us
  bool pump(int li);     // frames from us to local rank li
  bool write_frame(int li, std::uint32_t kind, std::uint64_t tag, std::uint64_t total,
                   std::uint64_t offset, const void* payload, std::uint32_t len);
  void on_data(int li, std::uint64_t tag, std::uint64_t total, std::uint64_t offset,
               const std::byte* payload, std::uint32_t len);
  void on_rts(int li, std::uint64_t tag, std::uint64_t size, std::uint64_t addr,
              std::uint64_t send_id);
  void on_fin(std::uint64_t send_id, std::uint32_t status);
  void finish_recv(PostedOp* op, std::uint64_t total, bool truncated);
  /// Hands the received bytes [offset, offset + len) of op's message to op: stored in
  /// recv_data, or folded into op->fold.out (in order; elements split between pieces are
  /// assembled in recv_data first).
  void deliver(PostedOp* op, std::uint64_t offset, const std::byte* data, std::size_t len);
  /// Reads size bytes from the sender's address space into op; returns errno or 0. A fold
  /// reads fold_chunk_-byte pieces (into op->fold.out itself where other is disjoint from
  /// out, else into fold_buf_) and combines each while it is in cache; with
  /// fold.release_sender_first (and other disjoint from out) it reads every piece first and
  /// combines them after. Sends the sender its FIN (send_id, status errno) as soon as the last
  /// byte is read, before the last piece (or, released first, any piece) is combined: the
  /// sender's buffer is free from then on.
  int cma_read(int li, PostedOp* op, std::uint64_t addr, std::uint64_t size, std::uint64_t send_id);
  int cma_read_all(int li, PostedOp* op, std::uint64_t addr, std::uint64_t size,
                   std::uint64_t send_id);  // cma_read's reads; the FIN on success only
  /// process_vm_readv of len bytes at the sender's addr into dst, every byte (EINTR and short
  /// reads retried); returns errno or 0. Where the kernel's copy would run slowly for their
  /// alignment (engine/copy.hpp: dst 1-31 bytes past addr modulo 64), it reads through
  /// bounce_, placed at addr's offset in a cache line, in kBounceBytes pieces, and copies each
  /// on with copy_bytes.
  int read_remote(pid_t pid, std::byte* dst, std::uint64_t addr, std::size_t len);
  /// The FIN for send_id with status err: written now if nothing is owed before it, else queued.
  void send_fin(int li, std::uint64_t send_id, int err);
  void check_peers_alive();

  int me_;                     // world rank
  int li_;                     // my local index
  std::vector<int> local_;     // local index -> world rank
  std::vector<int> index_of_;  // world rank -> local index (-1: not on this node)
  std::string name_;
  void* base_ = nullptr;
  std::vector<void*> out_rings_;  // local index -> the ring we write to it
  std::vector<void*> in_rings_;   // local index -> the ring it writes to us
  std::size_t bytes_ = 0;
  bool unlinked_ = false;
  std::uint64_t cma_threshold_;
  bool fold_ = true;        // FABCOLL_SHM_FOLD=0: recv_combine receives, then combines
  std::size_t fold_chunk_;  // FABCOLL_SHM_FOLD_CHUNK: bytes per CMA read of a fold
  std::vector<std::byte> fold_buf_;
  std::vector<std::byte> bounce_;  // read_remote's pieces
  std::vector<PostedOp*> posted_;
  std::deque<std::unique_ptr<Unexpected>> unexpected_;
  std::vector<std::unique_ptr<Unexpected>> spare_;  // records kept for reuse (drop_unexpected)
  std::vector<Incoming> incoming_;
  std::vector<SendState> sends_;
  std::vector<std::uint64_t> tail_cache_;  // per peer: the consumer's tail as last read
  std::unordered_map<std::uint64_t, PostedOp*> awaiting_fin_;
  std::uint64_t next_send_id_ = 1;
  std::uint64_t idle_polls_ = 0;
  Stats stats_;
};

}  // namespace fabcoll::shm
