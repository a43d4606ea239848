// The sim transport: every rank of a world is a coroutine in one process, time is virtual.
//
// Model (the texts' model): a message of n bytes costs α + βn (when ω = CostModel::written is
// not 1: the w of its bytes that its sender wrote within the run cost βω each, α + β(n − w) +
// βωw; the sim tracks what each rank wrote; when χα, χβ = CostModel::exchange_alpha, _beta are
// not 1, a message whose sender is receiving, or whose receiver is sending, while it is under
// way costs χα·α + χβ·β·n: an exchange); each rank sends at most one
// message and receives at most one at a time (one-port, full duplex); combining n bytes costs
// γn. A send posted at virtual time t starts at max(t, sender's port free, receiver's port
// free) and occupies both ports until it ends. Real bytes move (results can be checked), or,
// in phantom mode, only sizes are accounted (for huge p and n).
//
//   rank 0 --(α+βn)--> rank 1      events ordered by (virtual time, posting order):
//   rank 0 --(α+βn)--> rank 2      deterministic, one thread, no locks
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <set>
#include <vector>

#include "engine/communicator.hpp"
#include "engine/progress.hpp"
#include "engine/task.hpp"
#include "engine/transfer.hpp"
#include "tuning/cost_model.hpp"

namespace fabcoll::sim {

struct Stats {
  double finish_time = 0;                    // virtual time when the last rank finished
  std::vector<double> rank_finish;           // per rank
  std::vector<std::uint64_t> messages_sent;  // per rank
  std::vector<std::uint64_t> bytes_sent;     // per rank
  std::vector<std::uint64_t> bytes_copied;   // per rank: local copies (Channel::copy)
  // per rank: bytes sent that the sender had written within the run (received, combined or
  // copied: Transport::note_written). Counted only when the model's ω (CostModel::written) is
  // not 1; such bytes cost β·ω each.
  std::vector<std::uint64_t> bytes_written_sent;
  // per rank: relays, the longest chain of messages that reached it, each one sent by the rank
  // the one before it reached (0: received nothing). Unlike `rounds` it does not count a send
  // that waited for its port: at p = 4 a binomial broadcast's root sends to rank 2 and then 1,
  // and rank 2 relays to 3; ranks 1 and 2 are 1 relay from the root, rank 3 two.
  std::vector<int> rank_relays;
  std::uint64_t total_messages = 0;
  std::uint64_t total_bytes = 0;
  // Communication rounds: the longest chain of messages in which each one is sent after the
  // previous one arrived at its sender or used the same send or receive port before it.
  int rounds = 0;
  // Every distinct message size sent, ascending (only when World::record_sizes is on).
  std::vector<std::size_t> sizes;
  // Every message, in the order they were posted: sender, receiver, bytes and the virtual
  // time it started (only when World::record_messages is on).
  struct Sent {
    int src;
    int dst;
    std::size_t bytes;
    double start;
    bool operator==(const Sent&) const = default;
  };
  std::vector<Sent> messages;
};

class World final : public Executor {
 public:
  World(int p, CostModel model, bool phantom = false);
  World(const World&) = delete;
  World& operator=(const World&) = delete;
  ~World() override;

  [[nodiscard]] int size() const { return p_; }
  [[nodiscard]] Comm& comm(int rank) { return *comms_[rank]; }
  [[nodiscard]] double now() const { return now_; }
  [[nodiscard]] const CostModel& model() const { return model_; }
  /// The CPU each rank runs on (empty: each its own). With CPUs set, ω (CostModel::written)
  /// is charged only to written bytes sent to a rank on another CPU: a rank reads what a
  /// core-mate wrote from their shared cache (Placement).
  void set_cpus(std::vector<int> cpus);
  /// With CPUs set: a message to a rank on its sender's CPU is delivered no earlier than the
  /// moment the sender's send port is free (the sender has no send under way or queued): a
  /// ring's reader runs only once the writer leaves their shared core
  /// (Placement::core_mate_factor). Off by default: the texts' model.
  void set_core_mate_relays(bool on) { core_mate_relays_ = on; }
  /// With CPUs set: a message to rank r is delivered no earlier than a transfer's time after
  /// the moment every other rank on r's CPU that was sending meanwhile (to another rank than r)
  /// has its send port free: r copies a ring's message out on the CPU that such a core-mate
  /// is sending from (the pipelined binary-tree broadcast at p = 4, cyclic: ranks 1 and 3 on
  /// one CPU, rank 1 relaying to 2 while the root, 2's core-mate, sends to 3: three hops'
  /// time for two). Off by default: the texts' model.
  void set_receiver_mates(bool on) { receiver_mates_ = on; }
  /// With CPUs set: the bytes of a message to a rank on its sender's CPU cost this many times
  /// β (1, the default: the texts' model; 0: only messages between CPUs move bytes at β), so
  /// that a run tells the share of an algorithm's byte time spent between CPUs
  /// (Placement::bytes_across).
  void set_mates_beta(double factor) { mates_beta_ = factor; }
  /// With CPUs set: a message between two CPUs also takes its sender's CPU's send port and its
  /// receiver's CPU's receive port (one each per CPU, as a rank has one of each): two one-way
  /// messages from one CPU to another go one after the other, as their copies run on the same
  /// two CPUs (the binomial reduce at p = 4, cyclic: ranks 1 and 3 send to 0 and 2 at once,
  /// CPU 1 to CPU 0; Placement::cpu_port_factor). A message between core-mates takes neither.
  /// Off by default: the texts' model.
  /// one_port: a CPU has one port, for what it sends and what it receives alike: a message
  /// between two CPUs takes both CPUs for its time (over the fabric a CPU copies one message
  /// at a time, into its sockets or out of them; Placement::stream_port_factor).
  void set_cpu_ports(bool on, bool one_port = false) {
    cpu_ports_ = on;
    one_cpu_port_ = on && one_port;
  }
  /// A protocol break (LinkModel): messages of at least `bytes` cost alpha_above and
  /// beta_above in place of the model's α and β (χ, ω as for any message). bytes 0: none.
  void set_break(double bytes, double alpha_above, double beta_above) {
    break_bytes_ = bytes;
    alpha_above_ = alpha_above;
    beta_above_ = beta_above;
  }
  /// Stats::sizes: record every distinct message size sent.
  void record_sizes(bool on) { record_sizes_ = on; }
  /// Stats::messages: record every message (sender, receiver, bytes, start).
  void record_messages(bool on) { record_messages_ = on; }
  /// Every rank's Transport::clear_fan_in_from (0, the default: fan-ins are not cleared), as a
  /// real transport that needs it sets it (the ofi sockets provider).
  void set_clear_fan_in(std::size_t bytes) { clear_fan_in_ = bytes; }

  /// Runs fn(comm of rank r) on every rank to completion; returns the statistics of this run
  /// (counted from the start of this run). Throws the first rank's error, or Errc::internal
  /// naming the stuck ranks if the ranks deadlock.
  /// Each rank starts at the virtual time start_times[r] (all 0 if empty).
  Stats run(const std::function<Task<>(Comm&)>& fn, const std::vector<double>& start_times = {});

  void schedule(std::coroutine_handle<> h) override { ready_.push_back(h); }

 private:
  class Endpoint;
  friend class Endpoint;
  struct Message {
    int src;
    std::uint64_t tag;
    std::vector<std::byte> payload;
    std::size_t size;
    int depth;
    int relays;
    Message* next;
  };
  struct Event {
    double time;
    std::uint64_t order;
    int kind;  // 0 delivery, 1 delay done, 2 rank start
    PostedOp* op;
    int src;
    int dst;
    int depth;
    int relays;
    double start = 0;  // a delivery: when its transfer began
    bool operator>(const Event& o) const {
      return time != o.time ? time > o.time : order > o.order;
    }
  };

  void post_send(int src, PostedOp* op);
  void post_recv(int dst, PostedOp* op);
  void post_delay(int rank, PostedOp* op);
  void cancel(int rank, PostedOp* op);
  void deliver(const Event& e);
  /// Written-data tracking (only when model_.written != 1): rank wrote [data, data + bytes).
  void note_written(int rank, const void* data, std::size_t bytes);
  /// How many of [data, data + bytes) rank has written within this run.
  [[nodiscard]] std::size_t written_bytes(int rank, const void* data, std::size_t bytes) const;
  void push(Event e);
  int& rank_relays(int r) { return stats_.rank_relays[static_cast<std::size_t>(r)]; }
  static Task<> rank_main(World& w, int rank, Task<> inner);

  int p_;
  CostModel model_;
  bool phantom_;
  double now_ = 0;
  std::uint64_t order_ = 0;
  std::vector<std::unique_ptr<Endpoint>> endpoints_;
  std::vector<std::unique_ptr<Comm>> comms_;
  std::vector<CidCounter> cids_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::vector<std::coroutine_handle<>> ready_;
  // per rank
  std::vector<double> send_free_, recv_free_;
  std::vector<int> send_to_;  // each rank's last send's receiver (set_receiver_mates)
  std::vector<int> depth_, send_depth_, recv_depth_;
  std::vector<std::vector<PostedOp*>> posted_;  // posted receives, in order
  std::vector<std::vector<std::unique_ptr<Message>>> unexpected_;
  std::vector<std::map<std::uintptr_t, std::uintptr_t>> written_;  // per rank: [begin, end)
  std::vector<int> cpus_;                                          // per rank (set_cpus)
  double break_bytes_ = 0, alpha_above_ = 0, beta_above_ = 0;      // set_break
  bool core_mate_relays_ = false;                                  // set_core_mate_relays
  bool receiver_mates_ = false;                                    // set_receiver_mates
  double mates_beta_ = 1;                                          // set_mates_beta
  bool cpu_ports_ = false;                                         // set_cpu_ports
  bool one_cpu_port_ = false;                                      // set_cpu_ports's one_port
  std::vector<double> cpu_send_free_, cpu_recv_free_;              // per CPU (set_cpu_ports)
  bool record_sizes_ = false;
  bool record_messages_ = false;
  std::size_t clear_fan_in_ = 0;  // set_clear_fan_in
  std::set<std::size_t> sizes_;
  Stats stats_;
  std::vector<bool> finished_;
  std::vector<std::exception_ptr> errors_;
  int running_ = 0;
};

}  // namespace fabcoll::sim
