#include "collectives/placement.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <utility>

#include "algorithms/registry.hpp"
#include "bootstrap/node_map.hpp"
#include "collectives/sim_cost.hpp"

namespace fabcoll {

namespace {

/// Packet counts above this share the ratio of this one: a pipeline's pattern repeats.
constexpr long kMaxPackets = 16;

class SimPlacement final : public Placement {
 public:
  using Placement::Placement;

  double written_across(const Algorithm& alg, double k, long strategy) const override {
    return cached(cache_, alg, k, strategy, [&](long packets) {
      return measure(alg, static_cast<std::size_t>(packets), strategy);
    });
  }

  double core_mate_factor(const Algorithm& alg, long strategy, double k) const override {
    return cached(relay_cache_, alg, k, strategy, [&](long packets) {
      const int p = size();
      const std::size_t block = block_bytes(p);
      const CostModel m = unit_model();
      const auto n = static_cast<std::size_t>(packets);
      const double plain =
          run_for_cost(alg, p, block, m, true, 0, n, cpus(), strategy, false).finish_time;
      const double waiting =
          run_for_cost(alg, p, block, m, true, 0, n, cpus(), strategy, true, packets > 0)
              .finish_time;
      return plain > 0 ? std::max(1.0, waiting / plain) : 1.0;
    });
  }

  double cpu_port_factor(const Algorithm& alg, long strategy, double k) const override {
    return cached(port_cache_, alg, k, strategy, [&](long packets) {
      const int p = size();
      const std::size_t block = block_bytes(p);
      CostModel m = unit_model();
      m.gamma = 0;  // the factor scales β
      const auto n = static_cast<std::size_t>(packets);
      const auto run = [&](bool ports) {
        return run_for_cost(alg, p, block, m, true, 0, n, cpus(), strategy, true, packets > 0, 1,
                            ports)
            .finish_time;
      };
      const double relays = run(false);
      return relays > 0 ? std::max(1.0, run(true) / relays) : 1.0;
    });
  }

  double stream_port_factor(const Algorithm& alg, double k) const override {
    // Beyond kMaxPackets, extrapolated in steps (a packet's α + βn/k) from 8 and 16 packets,
    // which cut the runs' blocks evenly: a stream adds the same steps with every packet (the
    // linear pipeline at p = 4, cyclic: 1 in the texts' model, 3 on one port per CPU), so the
    // ratio goes on growing with k (3k/(k + 2)) where a pattern's would not.
    const long n = std::max(1L, std::lround(k));
    if (n <= kMaxPackets) {
      const double texts = stream_run(alg, n, false);
      return texts > 0 ? std::max(1.0, stream_run(alg, n, true) / texts) : 1.0;
    }
    const long half = kMaxPackets / 2;
    const double t0 = stream_run(alg, half, false), p0 = stream_run(alg, half, true);
    const double t1 = stream_run(alg, kMaxPackets, false), p1 = stream_run(alg, kMaxPackets, true);
    const CostModel m = unit_model();
    const double block = static_cast<double>(stream_block(size()));
    const double s0 = m.alpha + m.beta * block / static_cast<double>(half);
    const double s1 = m.alpha + m.beta * block / static_cast<double>(kMaxPackets);
    const double more = static_cast<double>(n - kMaxPackets) / static_cast<double>(half);
    const double texts = t1 / s1 + more * (t1 / s1 - t0 / s0);
    const double placed = p1 / s1 + more * (p1 / s1 - p0 / s0);
    return texts > 0 ? std::max(1.0, placed / texts) : 1.0;
  }

  double bytes_across(const Algorithm& alg, long strategy, double k) const override {
    return cached(across_cache_, alg, k, strategy, [&](long packets) {
      const int p = size();
      const std::size_t block = block_bytes(p);
      CostModel m = unit_model();
      // Run as core_mate_factor's wait runs it, the path costed scales by that factor.
      const auto run = [&](const CostModel& model, double mates_beta) {
        return run_for_cost(alg, p, block, model, true, 0, static_cast<std::size_t>(packets),
                            cpus(), strategy, true, packets > 0, mates_beta)
            .finish_time;
      };
      const double every = run(m, 1);
      const double across = run(m, 0);
      m.beta = 0;
      const double none = run(m, 1);
      // No bytes on its path (a barrier): nothing to share out.
      return every > none ? std::clamp((across - none) / (every - none), 0.0, 1.0) : 1.0;
    });
  }

 private:
  /// Three sim runs of alg, blocks of 8 KiB: without ω (t1), with ω = 2 on every written byte
  /// (tw) and on the written bytes that cross CPUs only (tx); the share is (tx − t1)/(tw − t1).
  /// The model: the texts', β-bound (ω raises β), its runs costed as the engine costs them
  /// (run_collective). Charging only some bytes can reorder the one-port schedule so that the
  /// run ends later than with all of them (scan/hypercube at p = 6, block: 1.33 times the
  /// increment): the share is at most 1.
  double measure(const Algorithm& alg, std::size_t packets, long strategy) const {
    const int p = size();
    const std::size_t block = block_bytes(p);
    CostModel m = unit_model();
    const double t1 = run_for_cost(alg, p, block, m, false, 0, packets, {}, strategy).finish_time;
    m.written = 2;
    const double tw = run_for_cost(alg, p, block, m, false, 0, packets, {}, strategy).finish_time;
    const double tx =
        run_for_cost(alg, p, block, m, false, 0, packets, cpus(), strategy).finish_time;
    if (!(tw > t1)) return 1;  // no written data on its path: nothing to share out
    return std::clamp((tx - t1) / (tw - t1), 0.0, 1.0);
  }

  /// The packets alg is run with at k: not pipelined, 0 (one run whatever k the caller passes,
  /// 0 or 1); else k, at most kMaxPackets.
  static long pipeline_packets(const Algorithm& alg, double k) {
    return alg.optimal_k != nullptr && k >= 1
               ? std::lround(std::min(k, static_cast<double>(kMaxPackets)))
               : 0;
  }
  /// The measures' blocks: 8 KiB, smaller from p = 16 on (an all-to-all's buffers grow with p²).
  static std::size_t block_bytes(int p) {
    return std::max<std::size_t>(1024, 8192 * 16 / std::max(16, p)) / 8 * 8;
  }
  /// The sim's units are free: α = 16 βs, 1/512 of an 8 KiB block's βn.
  static CostModel unit_model() {
    CostModel m;
    m.alpha = 4;
    m.beta = 0.25;
    m.gamma = 0.125;
    return m;
  }

  /// stream_run's blocks: the measures' blocks in whole multiples of 16 doubles, so that 8 and
  /// 16 packets cut them evenly.
  static std::size_t stream_block(int p) { return block_bytes(p) / 128 * 128; }
  /// alg's finish time at `packets` (γ = 0, blocks of stream_block): in the texts' model, or
  /// with the relays' waits and one port per CPU (stream_port_factor). Cached.
  double stream_run(const Algorithm& alg, long packets, bool placed) const {
    return cached(placed ? stream_placed_cache_ : stream_texts_cache_, alg,
                  static_cast<double>(packets), -1, [&](long n) {
                    CostModel m = unit_model();
                    m.gamma = 0;
                    const int p = size();
                    const std::size_t block = stream_block(p);
                    const auto k = static_cast<std::size_t>(n);
                    return placed ? run_for_cost(alg, p, block, m, true, 0, k, cpus(), -1, true,
                                                 true, 1, true, true)
                                        .finish_time
                                  : run_for_cost(alg, p, block, m, true, 0, k).finish_time;
                  });
  }

  using Key = std::tuple<const Algorithm*, long, long>;
  /// compute(packets) for alg at k (pipeline_packets) and strategy, cached in `cache`.
  template <class Compute>
  double cached(std::map<Key, double>& cache, const Algorithm& alg, double k, long strategy,
                const Compute& compute) const {
    const long packets = pipeline_packets(alg, k);
    const Key key{&alg, packets, strategy};
    {
      const std::lock_guard lock(mutex_);
      if (const auto it = cache.find(key); it != cache.end()) return it->second;
    }
    const double value = compute(packets);
    const std::lock_guard lock(mutex_);
    return cache.try_emplace(key, value).first->second;
  }

  mutable std::mutex mutex_;
  mutable std::map<Key, double> cache_;
  mutable std::map<Key, double> relay_cache_;
  mutable std::map<Key, double> across_cache_;
  mutable std::map<Key, double> port_cache_;
  mutable std::map<Key, double> stream_texts_cache_;
  mutable std::map<Key, double> stream_placed_cache_;
};

std::mutex g_interned_mutex;
std::deque<std::unique_ptr<SimPlacement>>& interned() {
  static auto* all = new std::deque<std::unique_ptr<SimPlacement>>;  // never freed: see above
  return *all;
}

}  // namespace

const Placement* placement_of(const std::vector<int>& cpu) {
  if (cpu.size() < 2 || std::any_of(cpu.begin(), cpu.end(), [](int c) { return c < 0; }))
    return nullptr;
  std::vector<int> sorted = cpu;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end()) return nullptr;
  const std::lock_guard lock(g_interned_mutex);
  for (const auto& p : interned())
    if (p->cpus() == cpu) return p.get();
  interned().push_back(std::make_unique<SimPlacement>(cpu));
  return interned().back().get();
}

const Placement* placement_for_mapping(std::string_view mapping, int p, int c) {
  if ((mapping != "cyclic" && mapping != "block") || p < 2 || c < 1) return nullptr;
  std::vector<int> cpu(static_cast<std::size_t>(p));
  for (std::size_t r = 0; r < cpu.size(); ++r)
    cpu[r] = static_cast<int>(mapped_cpu(mapping, r, cpu.size(), static_cast<std::size_t>(c)));
  return placement_of(cpu);
}

}  // namespace fabcoll
