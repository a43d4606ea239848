// The crossover table: for one collective, p ranks and a cost model, the message-size ranges
// in which each algorithm is predicted fastest. Every pipelined algorithm is costed at the
// packet count the selector would use (its optimal k, rounded, at least 1 and at most n), and
// ties (within kTieTolerance) go to the algorithm registered first, as select_algorithm breaks
// them, so that the table and the run-time choice agree.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "algorithms/registry.hpp"
#include "tuning/cost_model.hpp"

namespace fabcoll::tuning {

using fabcoll::LinkModel;  // cost_model.hpp: the engine selects with it too

/// Which algorithms may compete (the selector's exclusions).
struct CrossoverOptions {
  bool commutative = true;  // false: leave out algorithms that need a commutative operator
  double n_min = 1;         // bytes, first size of the table (integer sizes)
  double n_max = double(1u << 30);
  int per_octave = 64;             // scan resolution above the exhaustive range
  double exhaustive_below = 4096;  // every integer size below this is evaluated
};

/// [lo, hi) bytes in which `algorithm` is predicted fastest.
struct CrossoverSegment {
  const Algorithm* algorithm = nullptr;
  double lo = 0;
  double hi = 0;
};

/// The packet count the selector uses for alg at n bytes (elements of one byte); 1 when not
/// pipelined.
double selector_k(const Algorithm& alg, double n, int p, const CostModel& m);
/// Predicted seconds of alg at n bytes on p ranks with the selector's k.
double algorithm_cost(const Algorithm& alg, double n, int p, const CostModel& m);

/// A packet count and the model its packets are costed with.
/// The mean size of alg's messages on its critical path at n bytes on p ranks under m: the
/// bytes its cost formula charges β for over the latencies it charges α for (∂T/∂β / ∂T/∂α);
/// n when the formula has no latency term; Algorithm::message_bytes where the algorithm gives
/// it. Rabenseifner's all-reduce at p = 2: n/2; the ring's: n/p; recursive doubling and the
/// binomial broadcast: n; the hypercube all-to-all: np/2.
double mean_message_bytes(const Algorithm& alg, double n, int p, const CostModel& m);
struct PacketChoice {
  double k = 1;
  CostModel m;
  bool above = false;  // m is the upper segment's (mixed: at least half its latencies are)
  // A whole-message algorithm's share of its latencies above the break (mixed_segments; -1:
  // not mixed, m is one segment's).
  double alpha_share = -1;
};
/// A whole-message algorithm (not pipelined) under a link with a break: its messages need not
/// all lie in one segment (Rabenseifner's at p = 4 sends n/2 and n/4, so from n = 2 breaks to
/// 4 breaks half its rounds are above and half below). `whole`'s model (the segment
/// segment_k's rule picks, for every term but α and β) with α and β mixed from the two
/// segments by the shares of its critical path's latencies and bytes that messages at or above
/// the break carry (sim_break_shares, on the sim, with a hybrid's strategy under the mixed
/// model). `whole` unchanged without a break, at p > kSimStepsMaxP or n < 1.
PacketChoice mixed_segments(const Algorithm& alg, double n, int p, const CostModel& below,
                            const CostModel& above, double break_bytes, PacketChoice whole);
/// The widest element the engine cuts packets of (FC_DOUBLE_INT, 16 B): a pipelined run cuts n
/// bytes into k packets of whole elements, the largest ⌈count/k⌉ of them, up to one element
/// more than n/k. segment_k counts packets below the break only where n/k + this stays at or
/// under it, so that whatever the element the engine's packets are below it too. p = 4 shm on
/// 2 cores, three --quick launches validated the linear pipeline at 262136 B with 8 packets of
/// 32767 B costed below shm's single-copy threshold (32768 B), where the engine's packets of
/// 4096 doubles reached it and went single-copy: 158–180 µs against 73–77 predicted, regret
/// 128–134% (the naive broadcast 69–78 µs).
inline constexpr double kWidestElement = 16;

/// The packet count for alg at n bytes under a link model with a protocol break at break_bytes
/// (0: none), `below` and `above` the models of the two segments. A pipelined algorithm's
/// packets are messages of their own, so a packet of s bytes costs α + βs of the segment that
/// holds s, not of the one that holds n: at n >= break_bytes the candidates are the selector's
/// k under each model, kept where its packets fall in that model's segment (⌈n/k⌉ at or
/// above the break; below it: n/k + kWidestElement at most the break), and the counts at the
/// break (the largest with packets at or above it, the smallest with packets below it); the
/// cheapest wins (fewest packets on a tie). Without a break, or below it for a
/// pipelined algorithm: the selector's k under the model of n's segment. An algorithm that is
/// not pipelined sends whole messages that may be much smaller than n (Rabenseifner's at p = 2
/// sends two of n/2, the ring 2(p-1) of n/p): the segment that holds its mean message,
/// mean_message_bytes under that model (both hold it: the cheaper; neither: n's), with α and β
/// mixed by the shares of its path above the break (mixed_segments).
PacketChoice segment_k(const Algorithm& alg, double n, int p, const CostModel& below,
                       const CostModel& above, double break_bytes);
/// Predicted seconds of alg at n bytes on p ranks on a link with a break: the model of n's
/// segment, and for a pipelined algorithm the packet count of segment_k (its packets costed
/// with the model of their own size).
double algorithm_cost(const Algorithm& alg, double n, int p, const LinkModel& link);
/// The terms of alg's cost at n bytes on p ranks with one packet, as a fit to timed runs
/// needs them: cost = a α + b β + c with a, b from unit models and c the γ term of `at`, plus
/// its o and G terms when `at` has a measured sender overhead and time per byte (o = α and
/// G = β otherwise: o terms count in a, G terms in b).
/// b counts every byte at β (ω of `at` is ignored: a fit of ω scales b by the written share
/// itself, CostPoint::f), a every round at α (χ and W of `at` ignored likewise: CostPoint::e, w).
/// Where `at` has β_x (CostModel::ring_exchange_beta >= 0), its exchanges' ring bytes across
/// CPUs are in c at β_x, not in b (as its core-mates' ring bytes are, at δ); ring_x_terms
/// (optional): how many such bytes (0 where `at` has no β_x).
/// False (terms untouched) when the formula is not linear in α, β, γ near `at` (it chooses among
/// strategies by the model, as hybrid does) or alg is pipelined (its k depends on the model).
/// o_terms (optional): how many o the formula charges (its o terms at o = 1), which c holds at
/// `at`'s measured o; 0 where o is not measured (every o an α). o_recv_terms (optional): how
/// many o_r (CostModel::receive_overhead) likewise, which c holds at `at`'s recv_overhead().
bool linear_cost_terms(const Algorithm& alg, double n, int p, const CostModel& at, double& a,
                       double& b, double& c, double* o_terms = nullptr,
                       double* o_recv_terms = nullptr, double* ring_x_terms = nullptr);
/// True when alg may serve (coll, p, commutative) (the selector's exclusions).
bool eligible(const Algorithm& alg, int p, bool commutative);
/// Relative cost difference below which two algorithms tie.
inline constexpr double kTieTolerance = 1e-9;

/// The eligible algorithm of least predicted cost at n bytes, or nullptr if none is eligible.
/// Costs within kTieTolerance (relative) tie and the first registered wins, as in
/// select_algorithm.
const Algorithm* fastest(Collective c, double n, int p, const CostModel& m, bool commutative);
/// The same under a link with a protocol break (algorithm_cost(…, LinkModel)).
const Algorithm* fastest(Collective c, double n, int p, const LinkModel& link, bool commutative);

/// The table, segments in increasing size, adjacent segments with different algorithms. Exact
/// for every integer size below opts.exhaustive_below; above, changes of the winner are located
/// to the byte by bisection between scan points, so a winner that holds for less than 1/64 of
/// an octave between two scan points that agree could be missed (tests check a finer grid).
std::vector<CrossoverSegment> crossover_table(Collective c, int p, const CostModel& m,
                                              const CrossoverOptions& opts = {});
/// The table under a link with a protocol break: one scan over the whole range with
/// fastest(…, LinkModel), so that above the break a pipelined algorithm is costed with packets
/// below it where that is cheaper (two tables, each costing whole messages with one segment's
/// model, would not). With break_bytes 0 it equals crossover_table(c, p, link.below, opts).
std::vector<CrossoverSegment> crossover_table(Collective c, int p, const LinkModel& link,
                                              const CrossoverOptions& opts = {});

/// The winner the table gives for n bytes (nullptr outside the table).
const Algorithm* table_lookup(const std::vector<CrossoverSegment>& table, double n);

/// "binomial [1, 2048) scatter_allgather [2048, 1073741824)" for messages and reports.
std::string format_table(const std::vector<CrossoverSegment>& table);

}  // namespace fabcoll::tuning
