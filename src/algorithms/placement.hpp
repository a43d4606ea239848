// Which ranks of a communicator share a CPU. With more ranks than cores (fabcoll-run
// --bind-to core pins rank r to one CPU), data a rank wrote within a collective costs more
// (CostModel::written, ω) only when it crosses to a rank on another CPU: a core-mate reads it
// from the cache they share. Measured at p = 4 on 2 cores, 128 KiB all-reduce (README,
// "Which ranks share a core"): under the cyclic mapping recursive doubling's written data never
// crosses a core and took 78–89 µs, Rabenseifner's and the ring's does and took 87–143 and
// 127–202 µs; under the block mapping it is the other way round (107–113 against 92–104 and
// 94–121). An algorithm's written share f is then scaled by the share of its written data's
// time that falls on messages between CPUs, measured on the sim (written_across,
// Algorithm::placed_written_share).
//
// The interface lives here, with the algorithms; the layer that can run them on the sim
// transport implements written_across (collectives/placement.cpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace fabcoll {

struct Algorithm;

class Placement {
 public:
  explicit Placement(std::vector<int> cpu) : cpu_(std::move(cpu)) {}
  Placement(const Placement&) = delete;
  Placement& operator=(const Placement&) = delete;
  virtual ~Placement() = default;

  /// The ranks it places: a model with this placement applies to a communicator of this size.
  [[nodiscard]] int size() const { return static_cast<int>(cpu_.size()); }
  [[nodiscard]] const std::vector<int>& cpus() const { return cpu_; }
  /// Whether ranks a and b run on different CPUs.
  [[nodiscard]] bool apart(int a, int b) const {
    return cpu_[static_cast<std::size_t>(a)] != cpu_[static_cast<std::size_t>(b)];
  }
  /// The most ranks, `except` left out, that share one CPU (1 when each has its own).
  [[nodiscard]] int most_on_one_cpu(int except) const {
    std::vector<int> n;
    int most = 0;
    for (std::size_t r = 0; r < cpu_.size(); ++r) {
      if (static_cast<int>(r) == except || cpu_[r] < 0) continue;
      const auto c = static_cast<std::size_t>(cpu_[r]);
      if (c >= n.size()) n.resize(c + 1, 0);
      most = std::max(most, ++n[c]);
    }
    return most;
  }
  /// Of the time alg's written data adds (ω's increment) at p = size() and k packets (0: not
  /// pipelined), the share that falls on messages between different CPUs: by running alg on the
  /// sim with ω charged to every written byte and to those that cross CPUs only. `strategy`:
  /// the one a hybrid runs (CollArgs::strategy; -1: none). Cached.
  [[nodiscard]] virtual double written_across(const Algorithm& alg, double k,
                                              long strategy = -1) const = 0;
  /// What waiting for a core-mate adds to alg at p = size(), not pipelined: with ranks sharing
  /// a core, a message written into a ring for a rank on the sender's CPU is read only once
  /// the sender leaves the core, after the sends it has queued (the binomial broadcast's root
  /// at p = 4, cyclic, sends to rank 2 on its own core and then to rank 1, and rank 2 relays
  /// only after both). The ratio of alg's sim run with such messages delivered when their
  /// sender's port is free (sim::World::set_core_mate_relays) to its run without, >= 1 (the
  /// binomial broadcast there: 3 hops' time for 2). `strategy` as for written_across. A
  /// pipelined algorithm (k packets, k >= 1) is run so at k, and its messages wait for their
  /// receiver's sending core-mates too (sim::World::set_receiver_mates: the pipelined
  /// binary-tree broadcast at p = 4, cyclic, 1.5 at k = 1). Cached.
  [[nodiscard]] virtual double core_mate_factor(const Algorithm& alg, long strategy = -1,
                                                double k = 0) const = 0;
  /// What two CPUs' one-way messages add, run one after the other (>= 1), on top of
  /// core_mate_factor's waits: the ratio of alg's sim run with those waits and with messages
  /// between CPUs taking their CPUs' ports (sim::World::set_cpu_ports) to its run with the
  /// waits alone, both at γ = 0. The binomial reduce at p = 4, cyclic: ranks 1 and 3 send to 0
  /// and 2 at once, both from CPU 1 to CPU 0, then 2 to 0 (core-mates): 3 hops' time for 2,
  /// where core_mate_factor has none (1.5); the binomial broadcast's third hop is the waits'
  /// already (1). Algorithm::cpu_port_factor charges it to β, on the one-way share (1 − e)
  /// only: χ, fitted on exchanges in which every rank sends, already holds theirs. `strategy`
  /// and k as for core_mate_factor. Cached.
  [[nodiscard]] virtual double cpu_port_factor(const Algorithm& alg, long strategy = -1,
                                               double k = 0) const = 0;
  /// A pipelined broadcast's stream of k packets over the fabric (k >= 2), where ranks share
  /// CPUs: the ratio of alg's sim run at k packets with core_mate_factor's waits and one port
  /// per CPU for what it sends and receives alike (sim::World::set_cpu_ports, one_port: over
  /// the fabric a CPU copies one message at a time, into its sockets or out of them) to its
  /// run in the texts' model (every rank its own ports, no CPUs), both at γ = 0, >= 1. The
  /// linear pipeline at p = 4, cyclic (0 -> 1 -> 2 -> 3 across CPUs at every hop): every hop
  /// takes both CPUs, so a packet's three hops go one after the other, 3k steps for p + k - 2
  /// (x2.33 at k = 7). Beyond 16 packets its steps are extrapolated from 8 and 16 (a stream
  /// adds the same steps with every packet). Algorithm::stream_port_factor charges it to α
  /// and β in place of χ. Cached.
  [[nodiscard]] virtual double stream_port_factor(const Algorithm& alg, double k) const = 0;
  /// Of the time alg's bytes take at p = size() (its β terms), the share spent on messages
  /// between different CPUs: by running alg on the sim with β on every byte, with core-mates'
  /// bytes free (sim::World::set_mates_beta), and with β = 0, each run as core_mate_factor's
  /// wait runs it (the binomial broadcast at p = 4, cyclic: 2 of its 3 hops' bytes). The rest
  /// moves between ranks on one CPU (Algorithm::costed charges it the local copy δ in shm's
  /// rings). `strategy` and k as for core_mate_factor. Cached.
  [[nodiscard]] virtual double bytes_across(const Algorithm& alg, long strategy = -1,
                                            double k = 0) const = 0;

 private:
  std::vector<int> cpu_;
};

}  // namespace fabcoll
