// Message steps of an algorithm on the sim transport: the cost of a pipelined algorithm whose
// text gives only a bound and whose exact count on the model has no closed form we found (the
// two-tree all-reduce: its reduce phase's steps depend on where rank 0 sits in the two trees,
// 1.25–1.5 per packet at even p, 1 at odd p, plus a fill that is irregular in p).
//
// The interface lives here, with the algorithms; the layer that can run them on the sim
// transport implements it (collectives/sim_cost.cpp), as for Placement::written_across.
#pragma once

#include <cstddef>
#include <vector>

namespace fabcoll {

struct Algorithm;

/// The largest p at which costs use sim_steps (above it: the algorithm's bound). A run of
/// the two-tree all-reduce at p = 32 takes about 5 ms at 64 packets, 60 ms at 512.
inline constexpr int kSimStepsMaxP = 32;
/// Packet counts up to this are run as they are; above it sim_steps interpolates between runs
/// at powers of two up to kSimStepsTopK (odd k: at those plus one), and extrapolates the last
/// segment beyond.
inline constexpr std::size_t kSimStepsExactK = 64;
inline constexpr std::size_t kSimStepsTopK = 512;

/// alg's finishing time on the sim at unit message time (α = 1, β = γ = 0, o = α): p ranks,
/// root 0, k packets (rounded, at least 1): the message steps of its critical path. Cached per
/// (alg, p, k) for the life of the process; thread-safe.
double sim_steps(const Algorithm& alg, int p, double k);

/// The written share (Algorithm::written_share) of alg on the sim, for an algorithm whose
/// critical path moves between written and input data with p and k in a way no count of ours
/// follows (the pipelined binary-tree reduce, whose leaves send their input): what ω = 2 adds
/// to its finishing time over what doubling β adds, at α = 4, β = 0.25, γ = 0.125 (time per
/// byte), blocks of 8 KiB, root 0, k packets (rounded into [1, kSimStepsExactK]: more packets
/// take the share at that many). 1 for p > kSimStepsMaxP (every byte written: the count such
/// an algorithm had before). Cached per (alg, p, k) for the life of the process; thread-safe.
double sim_written_share(const Algorithm& alg, int p, double k);

/// A broadcast's copies on its busiest CPU, in units of n: alg at p ranks, root 0, k packets
/// (rounded, at least 1; 1 for a whole-message algorithm), n bytes, ranks on `cpus` (one CPU
/// each; sim::World::set_cpus). Every receiver copies the n bytes it receives (out of a ring, or
/// out of its sender's buffer: pulled, from pull_bytes; 0: none pulled), and a sender copies
/// into a ring what it sends below pull_bytes (a rank's messages are taken at their mean size):
/// the largest sum over a CPU's ranks. The sent bytes per rank come from the sim (cached per
/// (alg, p, k) for the life of the process; thread-safe). 0 for any other collective, or with
/// cpus not of size p.
double sim_bcast_cpu_copies(const Algorithm& alg, int p, double k, const std::vector<int>& cpus,
                            double n, double pull_bytes);

/// The shares of alg's critical path carried by messages of at least break_bytes, on the sim:
/// p ranks, root 0, one packet, blocks of n bytes (whole doubles, at least one), a hybrid's
/// `strategy` (CollArgs::strategy). alpha: of its latencies (the finishing time at α = 1 for
/// such messages and 0 for the others, over that at α = 1 for all; β = γ = 0); beta: of its
/// bytes, likewise at β. 0 where it sends nothing. Cached per (alg, p, n, break, strategy) for
/// the life of the process; thread-safe. tuning::segment_k costs a whole-message algorithm
/// under a protocol break with α and β mixed by these shares.
struct BreakShares {
  double alpha = 0;
  double beta = 0;
};
BreakShares sim_break_shares(const Algorithm& alg, int p, double n, double break_bytes,
                             long strategy);

}  // namespace fabcoll
