// The algorithm registry: every algorithm, by its textbook name, with the collective it
// serves, its preconditions, its cost formula T(n, p, α, β, γ[, k]) and its coroutine.
// The selector, `fabcoll-info --algorithms` and docs/algorithms.md all read this one table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "engine/channel.hpp"
#include "engine/datatype.hpp"
#include "engine/task.hpp"
#include "tuning/cost_model.hpp"

namespace fabcoll {

enum class Collective {
  bcast,
  reduce,
  allreduce,
  scan,
  exscan,
  barrier,
  gather,
  scatter,
  allgather,
  allgatherv,
  alltoall,
  alltoallv,
  reduce_scatter_block,
  count_
};

/// Data flows towards ranks that wait for it, from several others (CostModel::wake): every
/// collective but the broadcast and the scatter, whose root sends and whose receivers each
/// wait for one message. Measured at p = 4 on 2 cores (fabcoll-calibrate's timed runs, 64 B –
/// 25 KiB): the binomial and naive reduces and reduce + bcast took their one-way rounds at
/// α + W, the binomial broadcast its two hops at 2.3 µs each, below α alone. (That fit took
/// rank 1 as the binomial broadcast's next root, whose calls then overlapped; last_receivers
/// has taken rank 3 since 2026-11-26. W charged to the broadcasts too, the pipelines left
/// without it as below, was tried once then: p = 4 shm chose the pipelined tree at 256 B, regret
/// 70%, and p = 4 sockets 77% at 512 B. Not kept.)
constexpr bool fans_in(Collective c) { return c != Collective::bcast && c != Collective::scatter; }
/// The mean message (Algorithm::mean_message) from which Algorithm::cpu_port_factor charges two
/// CPUs' one-way messages sent at once: below it a message is the provider's work per message
/// more than its copies (the sockets provider's one-way time steps up to 1 KiB; p = 4 sockets
/// on 2 cores, the binomial reduce's training runs at 256-768 B fitted without it).
inline constexpr double kCpuPortBytesFrom = 1024;
/// Whether c combines data with a reduction operator (γ: CostModel::gamma, gamma_large).
constexpr bool combines(Collective c) {
  return c == Collective::reduce || c == Collective::allreduce || c == Collective::scan ||
         c == Collective::exscan || c == Collective::reduce_scatter_block;
}

const char* collective_name(Collective c) noexcept;

/// Arguments of one collective call, already validated and normalised by the collectives
/// layer. The contract per collective (what each buffer holds on entry and exit):
///  bcast      buf = recvbuf: the data at root on entry, everywhere on exit.
///  reduce     sendbuf: this rank's input (never modified); recvbuf: result at root only
///             (other ranks may pass null).
///  allreduce, scan, exscan
///             recvbuf holds this rank's input on entry and the result on exit (in place);
///             exscan leaves rank 0's recvbuf as it was. An all-reduce algorithm that sets
///             separate_input instead finds its input in sendbuf (== recvbuf when in place;
///             never written) and recvbuf's contents undefined on entry.
///  gather     sendbuf: this rank's block (block bytes); recvbuf at root: p blocks. sendbuf may
///             alias the root's own block in recvbuf (in-place form).
///  scatter    sendbuf at root: p blocks; recvbuf: this rank's block (may alias root's block).
///  allgather  recvbuf: p blocks; this rank's own block already in place on entry; sendbuf:
///             the same bytes (the caller's send buffer, or the own block itself when in
///             place), never written: an algorithm may send the own block from there.
///  allgatherv as allgather with counts[i]/displs[i] in elements (elem_size bytes each).
///  alltoall   sendbuf: p blocks out, recvbuf: p blocks in (distinct buffers).
///  alltoallv  scounts/sdispls/counts/displs in elements.
///  reduce_scatter_block
///             sendbuf: p blocks of `count` elements (never modified); recvbuf: this rank's
///             reduced block.
///  barrier    no buffers.
struct CollArgs {
  Collective coll = Collective::barrier;
  const void* sendbuf = nullptr;
  void* recvbuf = nullptr;
  std::size_t count = 0;      // elements (per rank block for gather-like collectives)
  std::size_t elem_size = 1;  // bytes per element
  ReduceOp op;                // reductions only
  int root = 0;
  const std::size_t* scounts = nullptr;
  const std::size_t* sdispls = nullptr;
  const std::size_t* counts = nullptr;
  const std::size_t* displs = nullptr;
  std::size_t packets = 0;  // pipelined algorithms: packet count k (0: from the model)
  /// LAWN 29's hybrids: the strategy vector to run (bit j = S_j; the reduce takes its number of
  /// halvings), -1: Theorem 1's under the model. The engine sets the one the algorithm was
  /// costed with (Algorithm::strategy); Placement's sim runs force one.
  long strategy = -1;

  [[nodiscard]] std::size_t bytes() const { return count * elem_size; }
};

/// Inputs of a cost formula: n bytes (the per-rank message size as the text defines it),
/// p ranks, the model, and k packets for pipelined algorithms (0 = the optimum).
struct CostQuery {
  double n = 0;
  int p = 1;
  CostModel m;
  double k = 0;
};

struct Algorithm {
  std::string_view name;  // textbook name, as accepted by FABCOLL_<COLL>_ALGORITHM
  Collective coll;
  std::string_view reference;  // text, section, theorem
  std::string_view formula;    // the cost formula as printed in the docs
  bool needs_commutative;      // true: not correct for non-commutative operators
  bool needs_power_of_two;     // true: only for p = 2^d
  double (*cost)(const CostQuery& q);
  /// Pipelined algorithms: the packet count that minimises cost (nullptr: not pipelined).
  double (*optimal_k)(const CostQuery& q);
  Task<> (*run)(Channel& ch, const CollArgs& args);
  std::string_view test;  // the test that checks its cost
  /// All-reduce: reads its input from sendbuf itself (see CollArgs), so the engine does not
  /// copy sendbuf into recvbuf before the call (a pass over n bytes saved).
  bool separate_input = false;
  /// The size of the messages on its critical path, where tuning::mean_message_bytes (bytes
  /// over latencies of the formula) would miscount them (nullptr: that estimate). The naive
  /// broadcast's o terms are sends of n bytes that the estimate does not count as latencies.
  double (*message_bytes)(const CostQuery& q) = nullptr;
  /// The share f of the bytes on its critical path (of the β term of `cost`) that carry data
  /// the sending rank wrote within the collective: received from a peer and sent on, combined,
  /// or copied (packed, rotated); the rest is the caller's input (taken as passed in place for
  /// the all-gathers: a separate send buffer's own block is copied in first, and then counts as
  /// written, which the formulas leave out). Depends on p, on k for a pipelined algorithm (q.k;
  /// 0: one packet), and on the model only through the strategy a hybrid runs under it.
  /// nullptr: f = 0, as if it sent input only. Checked against the sim, which tracks what each
  /// rank wrote (sim_cost_test.WrittenShareMatchesTheSim).
  double (*written_share)(const CostQuery& q) = nullptr;
  /// LAWN 29's hybrids: the strategy vector (tuning::Strategy) it runs at q, which
  /// CollArgs::strategy can force (nullptr: it has none).
  std::uint32_t (*strategy)(const CostQuery& q) = nullptr;
  /// The share e of its critical path (of the α and β terms of `cost`; one share for both,
  /// counted in bytes) spent in exchanges: messages whose sender receives, or whose receiver
  /// sends, while they are under way (recursive doubling and halving, the rings, the pairwise
  /// all-to-alls; a pipeline's relays). A rank that only sends or only
  /// receives in a step (the trees, the fold of a surplus rank) is not exchanging. Depends on
  /// p, on k for a pipelined algorithm, and on the strategy a hybrid runs. nullptr: e = 0.
  /// Checked against the sim, which charges χ to a message whose sender or receiver has the
  /// other port busy (sim_cost_test.ExchangeShareMatchesTheSim).
  double (*exchange_share)(const CostQuery& q) = nullptr;
  /// A pipeline whose ranks post each step's send on a schedule (the two-tree broadcast: a
  /// send waits for the rank's step to begin) rather than as soon as a packet arrives. κ's fill
  /// (CostModel::streamed) is then charged at the stream's exchange share: its first packet
  /// moves in the schedule's steps, each a receive and a send at once, not ahead of the stream.
  bool paced = false;
  /// The collective calls it makes, one after the other, where it is one collective run and
  /// then another (reduce + bcast: the binomial reduce, then the binomial broadcast); empty
  /// otherwise. predict costs it as those calls, each as its own (its own written and exchange
  /// shares, W only where that call fans in, and a call's first wake-up K for each, but the
  /// calls after the first where n lies below the inject size: predict): the broadcast's
  /// receivers idle through the reduce and wait for its first message as a broadcast's do.
  /// fabcoll-calibrate does not fit it to its own timed runs (its calls are timed there, each as
  /// itself).
  std::span<const Algorithm* const> parts = {};
  /// How many calls' first wake-ups (CostModel::call_wake) predict charges it where it has no
  /// parts: its phases whose receivers idle until the phase's first message reaches them. The
  /// two-tree all-reduce's broadcast, after its reduce, as reduce + bcast's (its reduce is not
  /// an algorithm of its own to cost apart).
  int calls = 1;

  /// q.m as this algorithm is costed: β raised to β(1 + f(ω − 1)) for the written share f of
  /// its bytes (CostModel::written = ω; placed_written_share), then β to xβ + (1 − x)δ for the
  /// share x of its byte time between CPUs where all its messages go through shm's rings
  /// (ring_bytes_across; δ = CostModel::copy; where β_x is measured, CostModel::
  /// ring_exchange_beta, the share of its exchanges' bytes across CPUs, ring_shares, leaves
  /// β too and is added at β_x after χ), then α and β times
  /// core_mate_factor (ranks sharing cores) and β times cpu_port_factor, then α and β times
  /// stream_port_factor (a broadcast's stream where nothing is pulled; its e is then 0), then
  /// α and β to α(1 + e(χα − 1)) and
  /// β(1 + e(χβ − 1)) for its exchange share e (CostModel::exchange_alpha, exchange_beta = χα, χβ),
  /// then, for a fan-in collective (fans_in), pipelined or not, α to α + (1 − e)W
  /// (CostModel::wake), then for a broadcast's pipelined packets (k ≥ 2) below
  /// CostModel::pull_bytes α and β by one factor, so that the rounds beyond the first packet's
  /// (the formula at k = 1 and a packet's size) cost κ times as much (CostModel::streamed), and
  /// ω, χα, χβ, β_x, W and κ
  /// then 1, 1, 1, -1, 0, 1 and core_mate_relays false (so costing twice changes nothing). ω
  /// applies only when the mean message of the formula (mean_message) is at least q.m.written_from
  /// (CostModel::written_from; shm with a core per rank: the single-copy threshold).
  [[nodiscard]] CostModel costed(const CostQuery& q) const;
  /// The written share f that costed charges ω on: written_share clamped to [0, 1] and, with a
  /// placement of q.p ranks (CostModel::placement), only its bytes that cross CPUs.
  [[nodiscard]] double placed_written_share(const CostQuery& q) const;
  /// Pipelined algorithms: optimal_k under the model it is costed with at that very packet count
  /// (costed depends on k through the exchange share and written_from): from k = q.k, up to
  /// three rounds of k ← optimal_k(costed at round(k)). Not rounded or capped (the callers do).
  [[nodiscard]] double costed_optimal_k(CostQuery q) const;
  /// The mean size of the messages on its critical path at q: message_bytes when set, else the
  /// formula's bytes over its latencies (its derivatives in β and α); n when it has none.
  [[nodiscard]] double mean_message(const CostQuery& q) const;
  /// Part i's share of predict(q) where it has parts: that call's own predict, without K for
  /// the calls after the first where n lies below the inject size (CostModel::small_below).
  /// p = 4 sockets on 2 cores (fifty-first session): reduce + bcast at 128 B took 41.8 and
  /// 52.9 µs in one call, its binomial reduce alone 38.8 and 43.1 and its broadcast alone 26.6
  /// and 32.0 (K_s 17.5 and 24.9 µs), and it was the fastest all-reduce there in all four
  /// validations, 16-30% under recursive doubling; K_s twice put it 32% over its time and
  /// recursive doubling was chosen.
  [[nodiscard]] double part_predict(CostQuery q, std::size_t i) const {
    if (i > 0 && part_injected(q)) q.m.call_wake = 0;
    return parts[i]->predict(q);
  }
  /// Whether the calls after the first of its parts pay no K at q (part_predict).
  [[nodiscard]] static bool part_injected(const CostQuery& q) {
    return q.m.has_small() && q.n < q.m.small_below;
  }
  /// cost(q) under costed(q), plus a call's first wake-up (CostModel::call_wake) for the share
  /// of its path not in exchanges: what the selector, the tables and the validation predict.
  /// With parts: the sum of theirs at q, each with its K, but for the calls after the first
  /// where n lies below the inject size (CostModel::small_below): their receivers have just
  /// sent in the call before, and an injected first message finds them awake. K once per call
  /// (calls).
  [[nodiscard]] double predict(CostQuery q) const {
    if (!parts.empty()) {
      double t = 0;
      for (std::size_t i = 0; i < parts.size(); ++i) t += part_predict(q, i);
      return t;
    }
    const double first =
        q.m.call_wake > 0 ? calls * q.m.call_wake * (1 - clamped_exchange_share(q)) : 0;
    q.m = costed(q);
    return cost(q) + first;
  }
  /// What its messages to core-mates add (Placement::core_mate_factor), >= 1: with a
  /// placement of q.p ranks (CostModel::placement, core_mate_relays), and where there is a
  /// pull threshold (q.m.pull_bytes: shm's rings) its mean message (mean_message) below it (a
  /// pulled message's sender only posts it: its reader does not wait for the sender to leave
  /// the core); else 1. Over the fabric (no pull threshold) at every size: the kernel's
  /// sockets too are read by a receiver that needs its core. A pipelined algorithm only in the
  /// rings and at one packet (q.k < 2), where its receivers also wait for their sending
  /// core-mates (docs/calibration.md, "Core-mates' relays", "Ring receivers' core-mates").
  /// costed scales α and β by it (not W, o, G or γ).
  [[nodiscard]] double core_mate_factor(const CostQuery& q) const;
  /// Where core_mate_factor is charged and its mean message (mean_message) is at least
  /// kCpuPortBytesFrom, what two CPUs' one-way messages sent at once add to its bytes
  /// (Placement::cpu_port_factor f), on its one-way share (1 − e, clamped_exchange_share):
  /// 1 + (1 − e)(f − 1); else 1. The binomial reduce at p = 4, cyclic: 1.5. costed scales β
  /// by it (not α: at 256-768 B the reduce's two rounds fitted).
  [[nodiscard]] double cpu_port_factor(const CostQuery& q) const;
  /// A broadcast's stream of packets where nothing is pulled (the fabric; shm with single
  /// copies off): pipelined, q.k >= 2, packets of at least kCpuPortBytesFrom, with a placement
  /// of q.p ranks some of which share a CPU (CostModel::placement, core_mate_relays): what one
  /// port per CPU and the core-mates' waits make of it (Placement::stream_port_factor); else
  /// 1. costed scales α and β by it and charges such a stream no χ: its relays receive
  /// from one rank while they send to another, which the ports cost, where χ was measured on
  /// two ranks sending to each other with every rank at once.
  [[nodiscard]] double stream_port_factor(const CostQuery& q) const;
  /// In shm's rings (q.m.pull_bytes > 0; none of its messages pulled, sim_break_shares at the
  /// pull threshold; a pipelined one at one packet below it), with a placement of q.p ranks
  /// (CostModel::placement, core_mate_relays), whatever its local copy δ (CostModel::copy):
  /// 1 − e(1 − x), for the share x of its byte time spent between CPUs
  /// (Placement::bytes_across) and its exchange share e. costed charges that share of its bytes
  /// β and the rest δ a byte (a core-mate copying into and out of a ring on their own CPU, in
  /// an exchange). 1 elsewhere: every byte at β.
  [[nodiscard]] double ring_bytes_across(const CostQuery& q) const;
  /// The shares behind ring_bytes_across: of its bytes, e·x in exchanges between CPUs
  /// (`across`, costed at CostModel::ring_exchange_beta where that is measured) and e(1 − x) in
  /// exchanges between core-mates (`mates`, at δ); {0, 0} where ring_bytes_across is 1.
  struct RingShares {
    double across = 0;
    double mates = 0;
  };
  [[nodiscard]] RingShares ring_shares(const CostQuery& q) const;
  /// exchange_share at q clamped to [0, 1] (0 without one, and for a stream on the CPUs' ports,
  /// stream_port_factor): the e that costed and predict charge.
  [[nodiscard]] double clamped_exchange_share(const CostQuery& q) const;
};

/// Every registered algorithm.
std::span<const Algorithm* const> all_algorithms();
const Algorithm* find_algorithm(Collective c, std::string_view name);

// The per-family tables (one file each, so families are added independently).
std::span<const Algorithm* const> bcast_reduce_algorithms();    // registry_bcast_reduce.cpp
std::span<const Algorithm* const> allreduce_scan_algorithms();  // registry_allreduce_scan.cpp
std::span<const Algorithm* const> gather_barrier_algorithms();  // registry_gather_barrier.cpp
std::span<const Algorithm* const> alltoall_algorithms();        // registry_alltoall.cpp

}  // namespace fabcoll
