#include "collectives/sim_cost.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <type_traits>

#include "algorithms/sim_steps.hpp"
#include "collectives/collectives.hpp"

namespace fabcoll {

namespace {
// run_for_cost on a world already set up (its model, CPUs, break); phantom as the world is.
sim::Stats run_for_cost_in(sim::World& world, const Algorithm& alg, int p, std::size_t bytes,
                           int root, std::size_t packets, long strategy, bool phantom = true);
}  // namespace

sim::Stats run_for_cost(const Algorithm& alg, int p, std::size_t bytes, const CostModel& m,
                        bool phantom, int root, std::size_t packets, std::vector<int> cpus,
                        long strategy, bool core_mate_relays, bool receiver_mates,
                        double mates_beta, bool cpu_ports, bool one_cpu_port) {
  sim::World world(p, m, phantom);
  world.set_cpus(std::move(cpus));
  world.set_core_mate_relays(core_mate_relays);
  world.set_receiver_mates(receiver_mates);
  world.set_mates_beta(mates_beta);
  world.set_cpu_ports(cpu_ports, one_cpu_port);
  return run_for_cost_in(world, alg, p, bytes, root, packets, strategy, phantom);
}

sim::Stats message_log(const Algorithm& alg, int p, std::size_t bytes, const CostModel& m,
                       std::size_t packets, long strategy, std::size_t clear_fan_in) {
  sim::World world(p, m, true);
  world.record_messages(true);
  world.set_clear_fan_in(clear_fan_in);
  return run_for_cost_in(world, alg, p, bytes, 0, packets, strategy, true);
}

bool same_messages(const sim::Stats& x, const sim::Stats& y) {
  return x.messages == y.messages && x.bytes_copied == y.bytes_copied &&
         x.rank_finish == y.rank_finish;
}

bool same_sends(const sim::Stats& x, const sim::Stats& y) {
  const auto sends = [](const sim::Stats& s) {
    std::vector<std::tuple<int, int, std::size_t>> out;
    out.reserve(s.messages.size());
    for (const sim::Stats::Sent& m : s.messages) out.emplace_back(m.src, m.dst, m.bytes);
    std::sort(out.begin(), out.end());
    return out;
  };
  return x.bytes_copied == y.bytes_copied && sends(x) == sends(y);
}

namespace {
sim::Stats run_for_cost_in(sim::World& world, const Algorithm& alg, int p, std::size_t bytes,
                           int root, std::size_t packets, long strategy, bool phantom) {
  const auto np = static_cast<std::size_t>(p);
  const std::size_t count = bytes / 8;
  const bool big = alg.coll == Collective::alltoall ||
                   alg.coll == Collective::reduce_scatter_block ||
                   alg.coll == Collective::scatter || alg.coll == Collective::gather ||
                   alg.coll == Collective::allgather || alg.coll == Collective::alltoallv;
  // alltoallv: uniform blocks of `count` elements, the alltoall layout.
  std::vector<std::size_t> v_counts(np, count), v_displs(np);
  for (std::size_t i = 0; i < np; ++i) v_displs[i] = i * count;
  // allgatherv: uniform blocks of `count` elements, the allgather layout.
  const bool gatherv = alg.coll == Collective::allgatherv;
  std::vector<std::size_t> gv_counts(gatherv ? np : 0, count), gv_displs(gatherv ? np : 0);
  for (std::size_t i = 0; i < gv_displs.size(); ++i) gv_displs[i] = i * count;
  // In phantom mode nothing is written, so one input and one output buffer serve all ranks.
  const std::size_t per_rank = (big || gatherv ? np : 1) * count + 1;
  const std::size_t nbuf = phantom ? 1 : np;
  // new double[] leaves the memory untouched: phantom runs of huge n commit no pages.
  std::vector<std::unique_ptr<double[]>> ins(nbuf), outs(nbuf);
  for (std::size_t i = 0; i < nbuf; ++i) {
    ins[i].reset(new double[per_rank]);
    outs[i].reset(new double[per_rank]);
  }
  std::vector<CollArgs> args(np);
  return world.run([&](Comm& comm) {
    const auto ur = static_cast<std::size_t>(comm.rank());
    CollArgs& a = args[ur];
    a.coll = alg.coll;
    a.count = count;
    a.elem_size = 8;
    a.op = ReduceOp(FC_SUM, FC_DOUBLE);
    a.root = root;
    a.packets = packets;
    a.strategy = strategy;
    double* out = outs[phantom ? 0 : ur].get();
    a.recvbuf = out;
    a.sendbuf = ins[phantom ? 0 : ur].get();
    if (alg.coll == Collective::allgather) a.sendbuf = out + ur * count;
    if (gatherv) {
      a.counts = gv_counts.data();
      a.displs = gv_displs.data();
      a.sendbuf = out + ur * count;
    }
    if (alg.coll == Collective::alltoallv) {
      a.scounts = v_counts.data();
      a.sdispls = v_displs.data();
      a.counts = v_counts.data();
      a.displs = v_displs.data();
    }
    if (alg.coll == Collective::allreduce || alg.coll == Collective::scan ||
        alg.coll == Collective::exscan || alg.coll == Collective::bcast)
      a.sendbuf = a.recvbuf;
    return run_collective(comm, a, &alg);
  });
}
}  // namespace

std::vector<int> last_receivers(const Algorithm& alg, int p, std::size_t bytes, const CostModel& m,
                                std::size_t packets) {
  std::vector<int> last(static_cast<std::size_t>(std::max(p, 0)));
  for (int r = 0; r < p; ++r) {
    if (p == 1) break;
    const sim::Stats st = run_for_cost(alg, p, bytes, m, true, r, packets);
    // A rank's finish includes its own sends: of ranks finishing together, one that forwarded
    // had the data before the one it sent to, so the one that sent fewest messages; of those,
    // the one more relays from the root. Each relay waits for a receive's completion and for
    // its rank to run, which the model does not cost: a binomial broadcast's ranks 1 and p/2 + 1
    // finish together on the sim, the first straight from the root (sent after its send to
    // p/2), the second through p/2. With rank 1 as the next root, the oversubscribed fit timed
    // calls that overlapped, while the validation, whose fitted ω or χ part the two, took p/2 + 1
    // (p = 4 shm on 2 cores, one launch: the binomial broadcast 5.5 µs at 2 KiB in the fit,
    // 9.2 at 2280 B in the validation, which chose it at 9–16 KiB, 30–41% under its time).
    const auto later = [&](int a, int b) {
      const auto ua = static_cast<std::size_t>(a), ub = static_cast<std::size_t>(b);
      if (st.rank_finish[ua] != st.rank_finish[ub]) return st.rank_finish[ua] > st.rank_finish[ub];
      if (st.messages_sent[ua] != st.messages_sent[ub])
        return st.messages_sent[ua] < st.messages_sent[ub];
      return st.rank_relays[ua] > st.rank_relays[ub];
    };
    int at = (r + 1) % p;
    for (int i = 2; i < p; ++i) {
      const int q = (r + i) % p;
      if (later(q, at)) at = q;
    }
    last[static_cast<std::size_t>(r)] = at;
  }
  return last;
}

namespace {
// One value per (alg, p, k), fn's, kept for the life of the process (a cache per fn: each
// caller's lambda is a type of its own, and its result the value's). The lock is not held while
// fn runs the sim (it may cost other algorithms, which may ask for such values too).
template <typename Fn>
std::invoke_result_t<Fn> cached_per_k(const Algorithm& alg, int p, std::size_t k, Fn fn) {
  using Key = std::tuple<const Algorithm*, int, std::size_t>;
  using Value = std::invoke_result_t<Fn>;
  static std::mutex mu;
  static std::map<Key, Value> cache;
  const Key key{&alg, p, k};
  {
    const std::lock_guard<std::mutex> lock(mu);
    if (const auto it = cache.find(key); it != cache.end()) return it->second;
  }
  const Value v = fn();
  const std::lock_guard<std::mutex> lock(mu);
  cache.emplace(key, v);
  return v;
}

// One run at k packets of one element each (β = 0: the size does not matter). Cached.
double steps_at(const Algorithm& alg, int p, std::size_t k) {
  return cached_per_k(alg, p, k, [&] {
    CostModel unit;
    unit.alpha = 1;
    unit.beta = 0;
    unit.gamma = 0;
    return run_for_cost(alg, p, 8 * k, unit, true, 0, k).finish_time;
  });
}
}  // namespace

double sim_steps(const Algorithm& alg, int p, double k_in) {
  const double k = std::max(1.0, std::round(k_in));
  if (k <= static_cast<double>(kSimStepsExactK))
    return steps_at(alg, p, static_cast<std::size_t>(k));
  // Linear between runs at the powers of two around k (the last segment beyond the top), one
  // more for odd k: with an odd count the two trees carry unequal shares, and the steps of
  // odd and even k can lie on two lines (the two-tree all-reduce at p = 29: k + 8 at even k,
  // about 1.5k at odd).
  std::size_t lo = kSimStepsExactK;
  while (2 * lo < kSimStepsTopK && static_cast<double>(2 * lo) <= k) lo *= 2;
  const std::size_t odd = std::fmod(k, 2.0) == 1 ? 1 : 0;
  const double a = steps_at(alg, p, lo + odd);
  const double b = steps_at(alg, p, 2 * lo + odd);
  return a + (k - static_cast<double>(lo + odd)) * (b - a) / static_cast<double>(lo);
}

double sim_bcast_cpu_copies(const Algorithm& alg, int p, double k_in, const std::vector<int>& cpus,
                            double n, double pull_bytes) {
  if (alg.coll != Collective::bcast || p < 2 || static_cast<int>(cpus.size()) != p || !(n > 0))
    return 0;
  const double k = alg.optimal_k != nullptr ? std::max(1.0, std::round(k_in)) : 1.0;
  // Per rank: the bytes it sent, per byte of n, and its messages, at 64 doubles a packet.
  struct Sent {
    std::vector<double> bytes, messages;
  };
  const auto packets = static_cast<std::size_t>(k);
  const Sent sent = cached_per_k(alg, p, packets, [&] {
    CostModel unit;
    unit.alpha = 1;
    unit.beta = 1e-3;
    unit.gamma = 0;
    const std::size_t bytes = 8 * 64 * packets;
    const sim::Stats st = run_for_cost(alg, p, bytes, unit, true, 0, packets);
    Sent out;
    for (std::size_t r = 0; r < static_cast<std::size_t>(p); ++r) {
      out.bytes.push_back(r < st.bytes_sent.size()
                              ? static_cast<double>(st.bytes_sent[r]) / static_cast<double>(bytes)
                              : 0.0);
      out.messages.push_back(r < st.messages_sent.size() ? static_cast<double>(st.messages_sent[r])
                                                         : 0.0);
    }
    return out;
  });
  std::map<int, double> on_cpu;
  for (int r = 0; r < p; ++r) {
    const auto ur = static_cast<std::size_t>(r);
    double copies = r == 0 ? 0.0 : 1.0;  // what it receives, copied once on its side
    const double out = sent.bytes[ur] * n;
    const bool ring =
        !(pull_bytes > 0) || (sent.messages[ur] > 0 && out / sent.messages[ur] < pull_bytes);
    if (ring) copies += sent.bytes[ur];
    on_cpu[cpus[ur]] += copies;
  }
  double most = 0;
  for (const auto& [cpu, c] : on_cpu) most = std::max(most, c);
  return most;
}

namespace {
// The shares at `bytes` (whole doubles), four runs: α or β at 1 for every message (the whole),
// then at 1 above the break and 0 below (its part). No χ, ω, γ, o: only which messages carry
// the path.
BreakShares shares_at(const Algorithm& alg, int p, std::size_t bytes, double break_bytes,
                      long strategy) {
  const auto finish = [&](bool alpha, bool split) {
    CostModel m;
    m.alpha = alpha && !split ? 1 : 0;
    m.beta = !alpha && !split ? 1 : 0;
    m.gamma = 0;
    m.copy = 0;
    sim::World world(p, m, true);
    if (split) world.set_break(break_bytes, alpha ? 1 : 0, alpha ? 0 : 1);
    return run_for_cost_in(world, alg, p, bytes, 0, 1, strategy).finish_time;
  };
  BreakShares s;
  const double latencies = finish(true, false), bytes_path = finish(false, false);
  s.alpha = latencies > 0 ? std::clamp(finish(true, true) / latencies, 0.0, 1.0) : 0.0;
  s.beta = bytes_path > 0 ? std::clamp(finish(false, true) / bytes_path, 0.0, 1.0) : 0.0;
  return s;
}
}  // namespace

double sim_written_share(const Algorithm& alg, int p, double k_in) {
  if (p < 2) return 0;
  if (p > kSimStepsMaxP) return 1;
  const auto k = static_cast<std::size_t>(
      std::clamp(std::round(k_in), 1.0, static_cast<double>(kSimStepsExactK)));
  // The runs below plan the collective under ω = 2, which costs it (Algorithm::costed) and asks
  // for this share again: that inner answer is not used for the sim's time (the world charges
  // ω by what it tracks), so it is 1 and not cached.
  thread_local bool inside = false;
  if (inside) return 1;
  return cached_per_k(alg, p, k, [&] {
    inside = true;
    struct Leave {
      ~Leave() { inside = false; }
    } leave;
    constexpr std::size_t kBlock = 8192;
    const CostModel base{.alpha = 4.0, .beta = 0.25, .gamma = 0.125};
    CostModel written = base;
    written.written = 2;
    CostModel twice = base;
    twice.beta = 2 * base.beta;
    const double t1 = run_for_cost(alg, p, kBlock, base, false, 0, k).finish_time;
    const double tw = run_for_cost(alg, p, kBlock, written, false, 0, k).finish_time;
    const double tb = run_for_cost(alg, p, kBlock, twice, false, 0, k).finish_time;
    return tb > t1 ? std::clamp((tw - t1) / (tb - t1), 0.0, 1.0) : 0.0;
  });
}

BreakShares sim_break_shares(const Algorithm& alg, int p, double n, double break_bytes,
                             long strategy) {
  // An algorithm's messages are fixed fractions of n (n/2, n/p, np/2, … up to whole
  // elements), so its shares change only where one of them crosses the break: at n = break /
  // (size / n). One run at a reference size finds those fractions; the shares are then run
  // once per interval between crossings, at the interval's geometric middle (the first: half
  // its end; the last: twice its start), and cached. The tables ask at thousands of sizes.
  using AlgKey = std::tuple<const Algorithm*, int, long, double>;
  struct Intervals {
    std::vector<double> starts;                 // n where a message reaches the break
    std::map<std::size_t, BreakShares> shares;  // per interval index
  };
  static std::mutex mu;
  static std::map<AlgKey, Intervals> cache;
  const AlgKey key{&alg, p, strategy, break_bytes};
  constexpr std::size_t kReference = std::size_t{1} << 23;  // 8 MiB
  std::vector<double> starts;
  {
    const std::lock_guard<std::mutex> lock(mu);
    if (const auto it = cache.find(key); it != cache.end()) starts = it->second.starts;
  }
  if (starts.empty()) {
    CostModel unit;
    unit.alpha = 1;
    unit.beta = 0;
    unit.gamma = 0;
    sim::World world(p, unit, true);
    world.record_sizes(true);
    const sim::Stats st = run_for_cost_in(world, alg, p, kReference, 0, 1, strategy);
    for (const std::size_t size : st.sizes)
      if (size > 0) starts.push_back(break_bytes * static_cast<double>(kReference) / size);
    std::sort(starts.begin(), starts.end());
    starts.erase(std::unique(starts.begin(), starts.end(),
                             [](double a, double b) { return b <= a * (1 + 1e-9); }),
                 starts.end());
    if (starts.empty()) starts.push_back(std::numeric_limits<double>::infinity());
    const std::lock_guard<std::mutex> lock(mu);
    cache[key].starts = starts;
  }
  // The interval of n: how many crossings lie at or below it (within rounding).
  std::size_t j = 0;
  while (j < starts.size() && n >= starts[j] * (1 - 1e-9)) ++j;
  {
    const std::lock_guard<std::mutex> lock(mu);
    const Intervals& iv = cache[key];
    if (const auto it = iv.shares.find(j); it != iv.shares.end()) return it->second;
  }
  double at = 0;
  if (!std::isfinite(starts.front()))
    at = n;  // sends nothing: any size
  else if (j == 0)
    at = starts.front() / 2;
  else if (j == starts.size())
    at = starts.back() * 2;
  else
    at = std::sqrt(starts[j - 1] * starts[j]);
  const auto bytes = static_cast<std::size_t>(std::max(1.0, std::round(at / 8))) * 8;
  const BreakShares s = shares_at(alg, p, bytes, break_bytes, strategy);
  const std::lock_guard<std::mutex> lock(mu);
  cache[key].shares.emplace(j, s);
  return s;
}

}  // namespace fabcoll
