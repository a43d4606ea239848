// One algorithm run on the sim transport for its time and traffic (the cost tests, and
// Placement::written_across): every rank calls it on buffers of `bytes` per block, the
// collective's usual layout, input in place where the algorithm allows it.
#pragma once

#include <cstddef>
#include <vector>

#include "algorithms/registry.hpp"
#include "transports/sim/sim.hpp"

namespace fabcoll {

/// Runs alg on a sim world of p ranks under m (phantom: sizes only, nothing written; cpus:
/// the CPU of each rank, sim::World::set_cpus) with blocks of `bytes` (whole doubles: a sum
/// over float64), root, k packets (0: from the model) and a hybrid's strategy
/// (CollArgs::strategy; -1: from the model), core-mates' messages waiting for their sender
/// (sim::World::set_core_mate_relays) when core_mate_relays, and messages waiting for their
/// receiver's sending core-mates (sim::World::set_receiver_mates) when receiver_mates, and
/// core-mates' bytes at mates_beta times β (sim::World::set_mates_beta), and messages between
/// CPUs taking their CPUs' ports (sim::World::set_cpu_ports) when cpu_ports, one port a CPU
/// for both directions when one_cpu_port; returns the world's statistics.
sim::Stats run_for_cost(const Algorithm& alg, int p, std::size_t bytes, const CostModel& m,
                        bool phantom, int root = 0, std::size_t packets = 0,
                        std::vector<int> cpus = {}, long strategy = -1,
                        bool core_mate_relays = false, bool receiver_mates = false,
                        double mates_beta = 1, bool cpu_ports = false, bool one_cpu_port = false);

/// alg's run on the sim as run_for_cost (phantom, root 0) with every message recorded
/// (sim::Stats::messages); clear_fan_in as sim::World::set_clear_fan_in (0: fan-ins not
/// cleared).
sim::Stats message_log(const Algorithm& alg, int p, std::size_t bytes, const CostModel& m,
                       std::size_t packets = 0, long strategy = -1, std::size_t clear_fan_in = 0);
/// Whether two message_log runs are the same run for the network: the same messages (sender,
/// receiver, bytes, start), the same local copies and the same finish on every rank. Different
/// algorithms can be: the hybrid all-reduce at recursive doubling's strategy, or at p = 2 every
/// broadcast that sends its one message whole (naive, binomial, the pipelines at one packet).
bool same_messages(const sim::Stats& x, const sim::Stats& y);
/// Whether two message_log runs, possibly under different models, send the same messages
/// (sender, receiver, bytes, in any order) and copy the same bytes on every rank: same_messages
/// without the times, which move with the model. fabcoll-calibrate's validation times a size
/// once more where a candidate's run under the model fitted again is not the one it timed.
bool same_sends(const sim::Stats& x, const sim::Stats& y);

/// For a rooted alg (a broadcast) at p ranks and `bytes` under m with `packets` (0: from the
/// model): for each root r, the rank other than r that finishes last on the sim (ties: the one
/// that sent fewest messages, a leaf rather than the rank that forwarded to it; then the first
/// after r). fabcoll-calibrate times a batch of broadcasts with each call's root the rank
/// the one before reached last, so that calls do not overlap. Deterministic: every rank that
/// asks with the same model gets the same answer.
std::vector<int> last_receivers(const Algorithm& alg, int p, std::size_t bytes, const CostModel& m,
                                std::size_t packets = 0);

}  // namespace fabcoll
