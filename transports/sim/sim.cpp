#include "transports/sim/sim.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <string>

namespace fabcoll::sim {

class World::Endpoint final : public Transport {
 public:
  Endpoint(World& w, int rank) : w_(&w), rank_(rank) {}
  [[nodiscard]] const char* name() const override { return "sim"; }
  void post_send(PostedOp* op) override { w_->post_send(rank_, op); }
  void post_recv(PostedOp* op) override { w_->post_recv(rank_, op); }
  void post_delay(PostedOp* op) override { w_->post_delay(rank_, op); }
  [[nodiscard]] bool models_compute() const override { return true; }
  void note_written(const void* data, std::size_t bytes) override {
    w_->note_written(rank_, data, bytes);
  }
  void cancel(PostedOp* op) override { w_->cancel(rank_, op); }
  bool progress() override { return false; }
  [[nodiscard]] bool phantom() const override { return w_->phantom_; }
  [[nodiscard]] double now() const override { return w_->now_; }
  [[nodiscard]] std::size_t clear_fan_in_from(int /*peer*/) const override {
    return w_->clear_fan_in_;
  }

 private:
  World* w_;
  int rank_;
};

World::World(int p, CostModel model, bool phantom)
    : p_(p),
      model_(model),
      phantom_(phantom),
      cids_(static_cast<std::size_t>(p)),
      send_free_(static_cast<std::size_t>(p), 0.0),
      recv_free_(static_cast<std::size_t>(p), 0.0),
      send_to_(static_cast<std::size_t>(p), -1),
      depth_(static_cast<std::size_t>(p), 0),
      posted_(static_cast<std::size_t>(p)),
      unexpected_(static_cast<std::size_t>(p)),
      written_(static_cast<std::size_t>(p)) {
  if (p < 1) raise(Errc::invalid_argument, "sim world needs at least one rank");
  endpoints_.reserve(static_cast<std::size_t>(p));
  comms_.reserve(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) {
    endpoints_.push_back(std::make_unique<Endpoint>(*this, r));
    comms_.push_back(std::make_unique<Comm>(*endpoints_.back(), *this, r, p, std::vector<int>{}, 0,
                                            model, &cids_[static_cast<std::size_t>(r)]));
  }
}

void World::set_cpus(std::vector<int> cpus) {
  if (!cpus.empty() && cpus.size() != static_cast<std::size_t>(p_))
    raise(Errc::invalid_argument, "sim world: " + std::to_string(cpus.size()) + " CPUs given for " +
                                      std::to_string(p_) + " ranks");
  cpus_ = std::move(cpus);
}

World::~World() {
  // Ops still referenced by pending events belong to finished (destroyed) tasks only if they
  // were orphaned; free those.
  while (!events_.empty()) {
    const Event e = events_.top();
    events_.pop();
    if (e.op != nullptr && e.op->orphaned) delete e.op;
  }
}

void World::push(Event e) {
  e.order = order_++;
  events_.push(e);
}

void World::post_send(int src, PostedOp* op) {
  const int dst = op->peer;
  if (dst < 0 || dst >= p_) {
    op->fail(Errc::invalid_argument, "sim: send to rank " + std::to_string(dst) + " out of range");
    return;
  }
  double start = std::max({now_, send_free_[src], recv_free_[dst]});
  // Between CPUs with CPU ports (set_cpu_ports): also its CPUs' ports.
  const bool ports = cpu_ports_ && !cpus_.empty() &&
                     cpus_[static_cast<std::size_t>(src)] != cpus_[static_cast<std::size_t>(dst)] &&
                     cpus_[static_cast<std::size_t>(src)] >= 0 &&
                     cpus_[static_cast<std::size_t>(dst)] >= 0;
  std::size_t cpu_src = 0, cpu_dst = 0;
  if (ports) {
    cpu_src = static_cast<std::size_t>(cpus_[static_cast<std::size_t>(src)]);
    cpu_dst = static_cast<std::size_t>(cpus_[static_cast<std::size_t>(dst)]);
    const std::size_t need = std::max(cpu_src, cpu_dst) + 1;
    if (cpu_send_free_.size() < need) {
      cpu_send_free_.resize(need, 0.0);
      cpu_recv_free_.resize(need, 0.0);
    }
    start = one_cpu_port_ ? std::max({start, cpu_send_free_[cpu_src], cpu_send_free_[cpu_dst]})
                          : std::max({start, cpu_send_free_[cpu_src], cpu_recv_free_[cpu_dst]});
  }
  double bytes = static_cast<double>(op->size);
  if (model_.written != 1) {
    const std::size_t w = written_bytes(src, op->send_data, op->size);
    stats_.bytes_written_sent[static_cast<std::size_t>(src)] += w;
    // With CPUs set, written data costs more only when it crosses to another CPU.
    if (cpus_.empty() ||
        cpus_[static_cast<std::size_t>(src)] != cpus_[static_cast<std::size_t>(dst)])
      bytes += (model_.written - 1) * static_cast<double>(w);
  }
  if (mates_beta_ != 1 && !cpus_.empty() &&
      cpus_[static_cast<std::size_t>(src)] == cpus_[static_cast<std::size_t>(dst)])
    bytes *= mates_beta_;
  // An exchange: the sender receives, or the receiver sends, while this message is under way
  // (CostModel::exchange_alpha, exchange_beta). Seen as the second message of a pair is posted,
  // so the pair's step ends when that one does.
  const bool exchange = recv_free_[src] > start || send_free_[dst] > start;
  const bool above = break_bytes_ > 0 && static_cast<double>(op->size) >= break_bytes_;
  const double end =
      start + (exchange ? model_.exchange_alpha : 1.0) * (above ? alpha_above_ : model_.alpha) +
      (exchange ? model_.exchange_beta : 1.0) * (above ? beta_above_ : model_.beta) * bytes;
  send_free_[src] = end;
  recv_free_[dst] = end;
  if (ports) {
    cpu_send_free_[cpu_src] = end;
    (one_cpu_port_ ? cpu_send_free_ : cpu_recv_free_)[cpu_dst] = end;
  }
  send_to_[src] = dst;
  stats_.messages_sent[src] += 1;
  stats_.bytes_sent[src] += op->size;
  if (record_sizes_) sizes_.insert(op->size);
  if (record_messages_) stats_.messages.push_back({src, dst, op->size, start});
  // Rounds: a message comes after whatever its sender received before posting it and after
  // the previous message through either port (one-port model).
  const int depth = std::max({depth_[src], send_depth_[src], recv_depth_[dst]}) + 1;
  send_depth_[src] = depth;
  recv_depth_[dst] = depth;
  push(Event{end, 0, 0, op, src, dst, depth, rank_relays(src) + 1, start});
}

void World::post_recv(int dst, PostedOp* op) {
  const int src = op->peer;
  auto& queue = unexpected_[dst];
  for (auto it = queue.begin(); it != queue.end(); ++it) {
    Message& m = **it;
    if (m.src != src || m.tag != op->tag) continue;
    if (m.size > op->size) {
      op->fail(Errc::truncation, "sim: message of " + std::to_string(m.size) + " bytes from rank " +
                                     std::to_string(src) + " into a receive of " +
                                     std::to_string(op->size));
    } else {
      if (!phantom_ && m.size > 0) std::memcpy(op->recv_data, m.payload.data(), m.size);
      note_written(dst, op->recv_data, m.size);
      op->received = m.size;
      depth_[dst] = std::max(depth_[dst], m.depth);
      rank_relays(dst) = std::max(rank_relays(dst), m.relays);
      op->complete();
    }
    queue.erase(it);
    return;
  }
  posted_[dst].push_back(op);
}

void World::post_delay(int rank, PostedOp* op) {
  if (op->delay <= 0) {
    op->complete();
    return;
  }
  push(Event{now_ + op->delay, 0, 1, op, rank, rank, 0, 0});
}

void World::cancel(int rank, PostedOp* op) {
  auto& posted = posted_[rank];
  const auto it = std::find(posted.begin(), posted.end(), op);
  if (it != posted.end()) {
    posted.erase(it);
    return;
  }
  op->orphaned = true;  // a pending event still points at it; freed when the event fires
}

void World::note_written(int rank, const void* data, std::size_t bytes) {
  if (model_.written == 1 || data == nullptr || bytes == 0) return;
  auto& set = written_[static_cast<std::size_t>(rank)];
  auto lo = reinterpret_cast<std::uintptr_t>(data);
  auto hi = lo + bytes;
  // Merge with every range that overlaps or touches [lo, hi).
  auto it = set.upper_bound(lo);
  if (it != set.begin() && std::prev(it)->second >= lo) --it;
  while (it != set.end() && it->first <= hi) {
    lo = std::min(lo, it->first);
    hi = std::max(hi, it->second);
    it = set.erase(it);
  }
  set.emplace(lo, hi);
}

std::size_t World::written_bytes(int rank, const void* data, std::size_t bytes) const {
  if (data == nullptr || bytes == 0) return 0;
  const auto& set = written_[static_cast<std::size_t>(rank)];
  const auto lo = reinterpret_cast<std::uintptr_t>(data);
  const auto hi = lo + bytes;
  std::size_t w = 0;
  auto it = set.upper_bound(lo);
  if (it != set.begin()) --it;
  for (; it != set.end() && it->first < hi; ++it)
    if (it->second > lo) w += std::min(hi, it->second) - std::max(lo, it->first);
  return w;
}

void World::deliver(const Event& e) {
  // A core-mate's message waits until its sender has sent all it had under way or queued
  // (set_core_mate_relays); the send completes then too.
  if (core_mate_relays_ && !cpus_.empty() &&
      cpus_[static_cast<std::size_t>(e.src)] == cpus_[static_cast<std::size_t>(e.dst)] &&
      send_free_[static_cast<std::size_t>(e.src)] > e.time) {
    Event later = e;
    later.time = send_free_[static_cast<std::size_t>(e.src)];
    later.start = e.start + (later.time - e.time);  // the transfer's length kept
    push(later);
    return;
  }
  // A message whose receiver's core-mate was sending elsewhere meanwhile is copied out once
  // that one's sends are done (set_receiver_mates), its transfer as long as it was; again
  // where such a core-mate sends meanwhile once more.
  if (receiver_mates_ && !cpus_.empty()) {
    const std::size_t to = static_cast<std::size_t>(e.dst);
    double until = e.time;
    for (std::size_t m = 0; m < cpus_.size(); ++m) {
      if (static_cast<int>(m) == e.src || m == to || cpus_[m] != cpus_[to] ||
          send_to_[m] == e.dst || !(send_free_[m] > e.start))
        continue;
      until = std::max(until, send_free_[m] + (e.time - e.start));
    }
    if (until > e.time) {
      Event later = e;
      later.time = until;
      later.start = until - (e.time - e.start);
      push(later);
      return;
    }
  }
  PostedOp* send = e.op;
  const std::size_t size = send->size;
  // Look for a posted receive first: then bytes go straight from sender to receiver.
  auto& posted = posted_[e.dst];
  for (auto it = posted.begin(); it != posted.end(); ++it) {
    PostedOp* recv = *it;
    if (recv->peer != e.src || recv->tag != send->tag) continue;
    posted.erase(it);
    if (size > recv->size) {
      recv->fail(Errc::truncation, "sim: message of " + std::to_string(size) + " bytes from rank " +
                                       std::to_string(e.src) + " into a receive of " +
                                       std::to_string(recv->size));
    } else {
      if (!phantom_ && !send->orphaned && size > 0)
        std::memcpy(recv->recv_data, send->send_data, size);
      note_written(e.dst, recv->recv_data, size);
      recv->received = size;
      depth_[e.dst] = std::max(depth_[e.dst], e.depth);
      rank_relays(e.dst) = std::max(rank_relays(e.dst), e.relays);
      stats_.rounds = std::max(stats_.rounds, e.depth);
      recv->complete();
    }
    if (send->orphaned) {
      delete send;
    } else {
      send->complete();
    }
    return;
  }
  auto m = std::make_unique<Message>();
  m->src = e.src;
  m->tag = send->tag;
  m->size = size;
  m->depth = e.depth;
  m->relays = e.relays;
  stats_.rounds = std::max(stats_.rounds, e.depth);
  if (!phantom_ && !send->orphaned && size > 0)
    m->payload.assign(send->send_data, send->send_data + size);
  unexpected_[e.dst].push_back(std::move(m));
  if (send->orphaned) {
    delete send;
  } else {
    send->complete();
  }
}

Task<> World::rank_main(World& w, int rank, Task<> inner) {
  try {
    co_await inner;
  } catch (...) {
    w.errors_[rank] = std::current_exception();
  }
  w.stats_.rank_finish[rank] = w.now_;
  w.finished_[rank] = true;
  --w.running_;
}

Stats World::run(const std::function<Task<>(Comm&)>& fn, const std::vector<double>& start_times) {
  const auto np = static_cast<std::size_t>(p_);
  stats_ = Stats{};
  sizes_.clear();
  stats_.rank_finish.assign(np, 0.0);
  stats_.messages_sent.assign(np, 0);
  stats_.rank_relays.assign(np, 0);
  stats_.bytes_sent.assign(np, 0);
  stats_.bytes_written_sent.assign(np, 0);
  for (auto& w : written_) w.clear();
  std::vector<std::uint64_t> copied0(np);
  for (std::size_t r = 0; r < np; ++r) copied0[r] = comms_[r]->bytes_copied();
  finished_.assign(np, false);
  errors_.assign(np, nullptr);
  std::fill(depth_.begin(), depth_.end(), 0);
  send_depth_.assign(np, 0);
  recv_depth_.assign(np, 0);
  const double t0 = now_;
  std::vector<Task<>> tasks;
  tasks.reserve(np);
  running_ = p_;
  for (int r = 0; r < p_; ++r) {
    tasks.push_back(rank_main(*this, r, fn(*comms_[static_cast<std::size_t>(r)])));
    const double s = start_times.empty() ? 0.0 : start_times[static_cast<std::size_t>(r)];
    if (s > 0) {
      push(Event{now_ + s, 0, 2, nullptr, r, r, 0, 0});
    } else {
      tasks.back().start();
    }
  }
  for (;;) {
    while (!ready_.empty()) {
      std::vector<std::coroutine_handle<>> batch;
      batch.swap(ready_);
      for (std::coroutine_handle<> h : batch) h.resume();
    }
    if (events_.empty()) break;
    const Event e = events_.top();
    events_.pop();
    now_ = e.time;
    if (e.kind == 0) {
      deliver(e);
    } else if (e.kind == 1) {
      if (e.op->orphaned) {
        delete e.op;
      } else {
        e.op->complete();
      }
    } else {
      tasks[static_cast<std::size_t>(e.src)].start();
    }
  }
  stats_.bytes_copied.assign(np, 0);
  for (int r = 0; r < p_; ++r) {
    const auto ur = static_cast<std::size_t>(r);
    stats_.bytes_copied[ur] = comms_[ur]->bytes_copied() - copied0[ur];
    stats_.rank_finish[ur] -= t0;
    stats_.finish_time = std::max(stats_.finish_time, stats_.rank_finish[ur]);
    stats_.total_messages += stats_.messages_sent[ur];
    stats_.total_bytes += stats_.bytes_sent[ur];
  }
  stats_.sizes.assign(sizes_.begin(), sizes_.end());
  for (const auto& err : errors_)
    if (err) std::rethrow_exception(err);
  if (running_ != 0) {
    std::string stuck;
    int shown = 0;
    for (int r = 0; r < p_ && shown < 16; ++r) {
      if (!finished_[static_cast<std::size_t>(r)]) {
        stuck += (shown++ ? ", " : "") + std::to_string(r);
      }
    }
    tasks.clear();  // destroying the stuck tasks cancels their transfers
    raise(Errc::internal, "sim: deadlock, " + std::to_string(running_) +
                              " rank(s) never finished (ranks " + stuck + ")");
  }
  for (auto& q : unexpected_) q.clear();
  return stats_;
}

}  // namespace fabcoll::sim
