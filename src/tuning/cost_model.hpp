// The α-β-γ cost model of the reference texts (LAWN 29 §2, Sanders et al. §13): a message of
// n bytes costs α + βn, combining n bytes costs γn. Times in seconds, β and γ per byte.
//
// One refinement the texts do not make: `overhead` is the sender's own time per message (LogP's
// o), apart from the latency α that a receiver sees. The texts take a send to occupy the sender
// for the whole α, so that is the default (overhead < 0: o = α) and every formula reads as in
// the text. Only algorithms whose cost turns on it (a root posting p − 1 sends at once: the
// naive broadcast) use it. Calibration measures it (a burst of small sends, per send).
#pragma once

#include <algorithm>
#include <string_view>

namespace fabcoll {

class Placement;  // algorithms/placement.hpp

struct CostModel {
  double alpha = 5e-6;    // start-up latency (s)
  double beta = 2.5e-10;  // time per byte (s/B)
  double gamma = 1e-10;   // time per byte combined (s/B)
  double overhead = -1;   // sender's time per message (s); < 0: not measured, o = α
  /// Messages of at least this many bytes are moved by their receiver (shm's single-copy CMA
  /// read from the sender's buffer), so a sender of several at once pays only o for each and
  /// the receivers copy at the same time. 0: the texts' model, the sender moves every byte.
  double pull_bytes = 0;
  /// φ: what a pulled message's receiver loses to the others pulling the same sender's buffer
  /// at once (the naive broadcast's p − 1 receivers): each receiver beyond the first adds φβn to
  /// the last one's time. 0: the copies run side by side, at one copy's rate. On 16 cores (a
  /// Xeon VM) the naive broadcast's pulls took 6 times one pull's time at p = 4 (256 KiB) and
  /// 10–12 times at p = 8 (32–64 KiB), 67–89% above the model with φ = 0: process_vm_readv
  /// calls on one process's memory do not run side by side. Measured by fabcoll-calibrate where
  /// every rank has a core of its own (with ranks sharing cores the pulls cannot all run at once
  /// anyway, and the collectives' fit absorbs what they cost).
  double pull_fanout = 0;
  /// δ: time per byte of a local copy (memcpy) an algorithm makes of its own (packing,
  /// rotating), s/B. 0: copies are free, as in the texts' model. Charged by the algorithms whose
  /// copies grow with p (the index all-to-alls copy every block once per round).
  double copy = 0;
  /// ω: the time per byte of data its sender wrote within the collective (received from a
  /// peer, combined, copied), as a multiple of β. β itself is measured on data the sender never
  /// writes, as a collective sends its caller's input. Written data sits modified in the
  /// sender's cache, and another core reads it from there: on this machine 1.6–2.4 times
  /// slower than unmodified data at 16 KiB … 4 MiB (a throwaway process_vm_readv test, three
  /// launches; fabcoll-calibrate measures it with its bounced ping-pong). 1: the texts' model,
  /// every byte costs β. An algorithm is costed with β raised by the share of its
  /// critical path's bytes that were written (Algorithm::written_share, Algorithm::costed).
  double written = 1;
  /// ω is charged to messages of at least this many bytes only (0: every message). Set to
  /// shm's single-copy threshold (the context, with pull_bytes): smaller messages go through
  /// rings whose cells the sender writes anyway, so written data costs no more there (16 KiB
  /// one way, untouched against bounced: 2.48 against 2.47 µs). With ranks sharing cores too:
  /// p = 4 on 2 cores, fabcoll-calibrate --quick, three alternating launches each, median error
  /// / max regret 16.3/3.8, 23.4/15.2, 23.1/31.7% with it against 38.6/81.2, 50.5/87.3,
  /// 32.1/19.2% with ω charged to every message.
  double written_from = 0;
  /// χα and χβ: a message whose sender receives, or whose receiver sends, while it is under
  /// way (an exchange: the steps of recursive doubling and halving, the rings, the pairwise
  /// all-to-alls, every rank sending and receiving at once) costs χα·α + χβ·βn instead of
  /// α + βn. α and β are measured by a one-way ping-pong, where a rank only sends or only
  /// receives at a time. Over the fabric a core does both sides' work of an exchange (the
  /// kernel's TCP copies in and out): fabcoll-calibrate's exchanges on this machine's sockets
  /// provider gave χα 1.05–1.34 and χβ 1.36–1.92 (p = 2, --quick, 14 launches); on shm, where
  /// each side copies on its own core, χα 1.24–1.85 and χβ 0.88–1.04 (16 launches). 1: the
  /// texts' model (full duplex, one port each way). An algorithm is costed with α and β raised
  /// by the share of its critical path spent in exchanges (Algorithm::exchange_share; one
  /// share for both, counted in bytes).
  double exchange_alpha = 1;
  double exchange_beta = 1;
  /// β_x: the time per byte of an exchange's bytes that cross CPUs through shm's rings, where
  /// ranks share cores (Algorithm::ring_shares: the share e·x of its bytes), in place of χβ·β
  /// (added after χ, at the core-mates' factor). One β with χβ did not take them: p = 4 on
  /// 2 cores, the VM's x6 mode (reading lines another core modified), recursive doubling's
  /// all-reduce at 16 KiB was predicted 29–43% under its time in 17 launches of the forty-first
  /// session, where one-way ring bytes fitted. Fitted by fabcoll-calibrate to the timed
  /// collectives with the others (a column of its own); it came out about the concurrent
  /// pairs' ping-pong β below the threshold (every rank exchanging with one on the other CPU at
  /// once): 1.0–1.3e-9 s/B in the x6 mode, 2.9–3.4e-10 in the x2 mode, 0.93–1.12 times the
  /// pairs' β in 18 launches of 21. < 0: not fitted, χβ·β.
  double ring_exchange_beta = -1;
  /// W: a wake-up, the time a message of a fan-in collective (fabcoll::fans_in: every one but
  /// the broadcast and the scatter) adds when its receiver is not exchanging: with ranks
  /// sharing cores the receiver waits off its core (it yields to the other waiting ranks there)
  /// and must be switched back in when the message lands. An exchange's receiver waits so too,
  /// and χα already holds that (it is fitted to such steps); the broadcast's and the scatter's
  /// receivers each wait for one message, and in calls back to back it is there before they
  /// look. p = 4 on 2 cores, fabcoll-calibrate --quick's timed collectives at 64 B: reduce +
  /// bcast's four one-way hops took 25.0 µs, recursive doubling's two exchanges 13.8 and the
  /// binomial broadcast's two hops 4.6; one α for every hop fitted reduce + bcast at −50%. The
  /// binomial and naive reduces (a full validation, 256 B – 25 KiB) took 1.5–2.3 times the
  /// model without W on them, 0.96–1.07 times it with (the same launch's W, 3.0 µs). Charged as
  /// α + (1 − e)W per round (e: Algorithm::exchange_share), pipelined or not (the pipelines
  /// since the twenty-ninth session; Algorithm::costed), fitted with α, β, ω and χ to the timed
  /// collectives where ranks share cores, or with a core each under --quiet-fit collectives
  /// (fabcoll-calibrate); 0 (the texts' model) elsewhere and in the built-in models.
  double wake = 0;
  /// G: the sender's own time per byte of a message it writes (LogGP's G, Alexandrov et al.
  /// 1995: a sender of several messages is busy o + Gn with each). < 0: not measured, G = β,
  /// the texts' model, where a send occupies its sender for the whole α + βn. Below shm's
  /// single-copy threshold a message goes through a ring: the sender copies it in, the
  /// receiver copies it out on its own core, and β (one way, both copies and the hand-over)
  /// overstates what the sender's next send waits for. Only algorithms whose root posts
  /// several sends at once use it (the naive broadcast); messages their receivers pull
  /// (pull_bytes) cost the sender o alone. Calibration measures it (bursts of 8 KiB against
  /// 8-byte sends), for messages below the link's break only (above it: G = β).
  double gap = -1;
  /// β beyond the cache: a whole message of at least large_from bytes costs beta_large per
  /// byte in place of β (large_from 0: none, the texts' one β). With ranks sharing cores the
  /// copies of such messages leave the core's cache (its L2, shared by the ranks on it):
  /// p = 4 on 2 cores (L2 1 MiB per core), fabcoll-calibrate's full validations measured whole
  /// messages of 0.9–1 MiB at 1.4–1.9 times the model (the binomial broadcast and reduce),
  /// where messages of up to 384 KiB fitted; packets and smaller pieces of the same n did not
  /// (the linear pipeline 0.7 times). An algorithm is costed with β mixed from the two by the
  /// share of its critical path's bytes in such messages (tuning::segment_k, the sim's
  /// shares as for a protocol break); a pipelined one by its packet, and from pull_bytes on
  /// (pulled packets fill the receiver's whole buffer as a whole message does) at n >=
  /// large_from. A broadcast at n >= large_from costs at least its busiest CPU's copies at
  /// beta_large (sim_bcast_cpu_copies: every receiver copies n, a sender what it puts into a
  /// ring). Fitted with α, β, ω, χ and W to the timed collectives where ranks share cores
  /// inside a node (fabcoll-calibrate, shm), from large_from = the L2 size over the ranks per
  /// core; where every rank has a core inside a node, to the ping-pong above the single-copy
  /// threshold from half the L2 (tuning::fit_beyond_cache; the floor then counts each rank's
  /// copies as its own CPU's); not set over the fabric.
  double large_from = 0;
  double beta_large = 0;
  /// γ beyond the cache: a combine of a message of at least gamma_large_from bytes costs
  /// gamma_large per byte in place of γ (gamma_large_from 0: none, the texts' one γ). Over the
  /// fabric a message lands whole in a scratch buffer and is then combined with the rank's own
  /// data into its result (ReduceOp::combine_to, three buffers of n); once those outgrow a
  /// core's L2 (shared by the ranks on it) every byte comes from further out. This machine
  /// (L2 2 MiB a core): combine_to of float64 sums took 4.4–5.8e-11 s/B up to 512 KiB,
  /// 8.7e-11 at 768 KiB, 10.5e-11 at 1 MiB and 12–13e-11 at 2–4 MiB, where the γ fitted to
  /// the two-buffer kernel (combine_left) over 16 KiB – 4 MiB came out at 3.6–6.5e-11. p = 2
  /// sockets (fifteen launches of the forty-fourth session): recursive doubling's all-reduce at
  /// 1 MiB (one combine of n) was measured 16–53% over its prediction (112% in one) and
  /// Rabenseifner's (one of n/2) 1–29% (68%), and recursive doubling was chosen there in ten
  /// of them. An algorithm's γ is mixed by the share of its critical path's bytes in messages of
  /// at least gamma_large_from (the sim's, as for β beyond the cache), a pipelined one's by its
  /// packet. Measured by fabcoll-calibrate over the fabric from gamma_large_from = the L2 size
  /// over three buffers and the ranks per core, and inside a node where every rank has a core
  /// (shm reads a message from its single-copy threshold into the result in pieces of up to
  /// 1 MiB and folds each there: p = 2 shm, recursive doubling's all-reduce at 1 MiB took
  /// 1.23–1.69 times its prediction in eight launches of the forty-fourth and forty-fifth
  /// sessions, Rabenseifner's 0.91–1.26, and Rabenseifner was the faster in all eight); not
  /// where ranks share cores inside a node, where β beyond the cache is fitted to the timed
  /// collectives.
  double gamma_large_from = 0;
  double gamma_large = 0;
  /// κ: a broadcast's pipelined packets (k ≥ 2) streamed through rings (below pull_bytes, where
  /// that is set): the first packet goes through as a message of its size alone would (the
  /// formula at k = 1), and each round the further packets add costs κ(α + βm) instead of
  /// α + βm. With ranks sharing cores a lone hop's receiver waits off its core and is switched
  /// back in when the message lands (what α fitted to whole-message runs holds); a stream's
  /// next packet is there before its relay looks. p = 4 on 2 cores, fabcoll-calibrate
  /// --quick: the linear pipeline took 0.62–0.73 times its prediction at 256 KiB – 1 MiB
  /// (29–32 KiB packets), the pipelined binary tree 0.61–0.71 at 256 KiB, in six shm
  /// launches; fitted since at 0.58–0.72 in fourteen. Scaling whole runs by one factor
  /// instead (a first version) put the two-tree broadcast at 32 KiB (a few packets) 32% under
  /// its time. The reduce's and the all-reduce's pipelines, whose receivers combine every
  /// packet, were not below their predictions alike (a full validation: the pipelined reduce
  /// 0.66–1.36 at 48 KiB – 0.9 MiB, the two-tree all-reduce 0.89–1.15 at 64–256 KiB): κ is
  /// the broadcast's. Fitted by fabcoll-calibrate to timed pipelined broadcasts where ranks
  /// share cores inside a node (shm; over sockets the first packet alone was predicted above
  /// the whole run); 1 (the texts' model) elsewhere.
  double streamed = 1;
  /// α of small messages: a message of fewer than small_below bytes costs alpha_small in place
  /// of α (small_below 0: none, the texts' one α). Over the fabric the provider takes such a
  /// message at once (fi_tinject: the engine's sends up to the provider's inject size, 255 B
  /// on sockets), and a larger one through its send queue: the sockets provider's one-way time
  /// is a staircase (p = 4 on 2 cores, its ping-pong 30.7 µs up to 128 B, 40.6 at 256 B), and
  /// the fit to timed collectives at 256 B over-predicted the ring's and Rabenseifner's
  /// all-reduces (64–128 B messages) by 35–43% while it under-predicted recursive doubling's
  /// (256 B) by 20%. An algorithm is costed with α mixed by the share of its critical path's
  /// rounds whose messages lie below small_below (the sim's shares, as for a protocol break:
  /// tuning::segment_k), a pipelined one by its packet. Fitted with the others to the timed
  /// collectives over the fabric, from small_below = the inject size + 1 (fabcoll-calibrate);
  /// not set elsewhere. Always below the link's break (LinkModel::break_bytes).
  double small_below = 0;
  double alpha_small = 0;
  /// o of small messages: the sender's time per message below small_below (with α of small
  /// messages set; < 0: o there too). Over the fabric such a send is injected (the provider
  /// copies it and the call returns), where o (CostModel::overhead) is refitted to the naive
  /// broadcast's timed calls of 256 B and more (fabcoll-calibrate: 2.9-5.7 µs, capped at α).
  /// fabcoll-calibrate's burst of 8-byte sends measures it (sockets, p = 4 on 2 cores:
  /// 0.8-1.6 µs, the fiftieth session). Mixed with o by the share of an algorithm's rounds below
  /// small_below, as α is (tuning::segment_k). With o in its place the naive broadcast's root (p −
  /// 2 sends at o on top of one α) came out above the binomial tree's two hops at 128 B and that
  /// tree was chosen there in four launches of four, 48-49% slower (fiftieth session).
  double overhead_small = -1;
  /// K: a call's first wake-up, what a call adds once for the share of its critical path not in
  /// exchanges ((1 − e)K, Algorithm::predict; Algorithm::calls times, and once for each of an
  /// algorithm's parts, Algorithm::parts, but those after the first where n lies below
  /// small_below: Algorithm::part_predict). Over the fabric with ranks sharing cores a one-way
  /// collective's receivers have left their core between calls, and the call's first message waits
  /// for its receiver to be switched back in; later rounds of the same call find it there. p = 4
  /// sockets on 2 cores, fabcoll-calibrate --quick's timed collectives at 256 B (13 launches): the
  /// naive broadcast (one round) about 100 µs, the binomial tree (two) 115, reduce + bcast (four)
  /// 169, where the fit with one α per round put the naive one 27–39% under its time and reduce +
  /// bcast 9–40% over it (six launches). Each segment has a K of its own (the upper one's from
  /// LinkParams::call_wake_above, fitted as a column apart), and an algorithm whose rounds lie on
  /// both sides takes each by its share (tuning::mixed_segments). The lower segment's K charged at
  /// every size (a first version) put reduce + bcast 9–23% under its time at 2 KiB – 384 KiB and
  /// chose it over recursive doubling from 29–58 KiB up, where it was 3–17% slower (three
  /// launches); with none above the break (the next version) the naive broadcast and reduce at 2
  /// KiB, above a break at 1 KiB, came out 32–40% under their training times (two launches of the
  /// forty-fourth session), and with K above fitted apart 0–13% (fourteen). Fitted with the others
  /// to the timed collectives over the fabric where ranks share cores, or with a core each under
  /// --quiet-fit collectives (fabcoll-calibrate); 0 (the texts' model) elsewhere.
  double call_wake = 0;
  /// K of small messages: K (call_wake) for the share of a call's rounds below small_below
  /// (with α of small messages set; < 0: K there too), mixed as α of small messages is
  /// (tuning::segment_k). Over sockets a call whose sends the provider injects does not wait
  /// as long: p = 4 on 2 cores, 21 launches of the fiftieth session, the validation's naive
  /// broadcast took 17.8-26.2 µs at 128 B in 12 and 29.6-40.4 in 9 (two paces of the VM),
  /// where at 256 B it took 47-68 µs; with K fitted from 256 B up (40-50 µs) every broadcast
  /// at 128 B came out at up to 2.9 times its time. Refitted by fabcoll-calibrate, the rest of
  /// the fit held, to the timed collectives at half small_below (128 B; not in the fit itself)
  /// and to the fit's runs with rounds below small_below; -1 (K) where fewer than two runs are
  /// charged it.
  double call_wake_small = -1;
  /// o_r: a receiver's time per message where one rank takes p − 1 messages one after another
  /// (the naive reduce's folding rank), apart from the sender's o: PLogP's o_r beside o_s
  /// (Kielmann et al., "Fast measurement of LogP parameters for message passing platforms",
  /// 2000). < 0: not measured, o_r = o. Over the fabric fabcoll-calibrate refits each to the
  /// timed collectives that charge it. p = 4 sockets on 2 cores, four --quick launches with one
  /// o for both: the naive broadcast's training points below the break came out 2–12% under
  /// their time, the naive reduce's 14–23% over, and at 256–448 B the naive broadcast was
  /// chosen over the pipelined binary tree where that was 11–15% faster (two launches of four).
  double receive_overhead = -1;

  /// Which ranks share a CPU (ranks outnumbering cores, each pinned to one), or nullptr: every
  /// rank on a CPU of its own, or not known. With it ω is charged only to written data that
  /// crosses CPUs (Algorithm::placed_written_share). Not part of a tuning file or of the
  /// bootstrap line: every rank sets it from the node map (interned, never freed).
  const Placement* placement = nullptr;
  /// With a placement: whether costing still charges the wait for a core-mate
  /// (Algorithm::core_mate_factor); Algorithm::costed charges it and clears this, so that
  /// costing twice changes nothing.
  bool core_mate_relays = true;

  [[nodiscard]] double send_overhead() const { return overhead >= 0 ? overhead : alpha; }
  [[nodiscard]] double recv_overhead() const {
    return receive_overhead >= 0 ? receive_overhead : send_overhead();
  }
  /// α of a round whose share e is spent in exchanges: α(1 + e(χα − 1)), plus (1 − e)W where
  /// its receiver waits for a wake-up (wakes: a fan-in collective's algorithm).
  [[nodiscard]] double round_alpha(double e, bool wakes) const {
    return alpha * (1 + e * (exchange_alpha - 1)) + (wakes ? (1 - e) * wake : 0.0);
  }
  [[nodiscard]] double send_gap() const { return gap >= 0 ? gap : beta; }
  /// Whether β beyond the cache applies (large_from and beta_large set).
  [[nodiscard]] bool has_large() const { return large_from > 0 && beta_large > 0; }
  /// Whether γ beyond the cache applies (gamma_large_from and gamma_large set).
  [[nodiscard]] bool has_gamma_large() const { return gamma_large_from > 0 && gamma_large > 0; }
  /// Whether α of small messages applies (small_below and alpha_small set).
  [[nodiscard]] bool has_small() const { return small_below > 0 && alpha_small > 0; }
};

/// A link with a protocol break: messages (and packets) of fewer than break_bytes cost
/// α + βn of `below`, larger ones of `above` (break_bytes 0: `below` everywhere). The engine
/// selects with it (tuning::segment_k: each algorithm costed with the segment that holds its
/// messages), and an algorithm runs with the segment's model it was costed with.
struct LinkModel {
  CostModel below;
  CostModel above;
  double break_bytes = 0;

  /// One segment: the texts' model.
  static LinkModel uniform(const CostModel& m) { return LinkModel{m, m, 0}; }
  [[nodiscard]] bool has_break() const { return break_bytes > 0; }
  /// Inside a node, from shm's single-copy threshold up: messages are read by their receiver
  /// (CostModel::pull_bytes) and carry ω (CostModel::written_from), in both segments. The one
  /// rule the context, fabcoll-info and fabcoll-calibrate apply.
  void set_single_copy(double bytes) {
    below.pull_bytes = above.pull_bytes = bytes;
    below.written_from = above.written_from = bytes;
  }
  /// The segment that holds a message of `bytes`.
  [[nodiscard]] const CostModel& at(double bytes) const {
    return has_break() && bytes >= break_bytes ? above : below;
  }
};

/// The built-in defaults per link class ("shm", or "ofi/<provider>" for the fabric), used
/// without a tuning file; measured once on the development machine (calibrate to replace).
/// shm: a small send costs its sender about 0.1 us (a ring write), a tenth of α; on the fabric
/// the sender's share is not known until calibrated (o = α, the texts' model).
/// oversubscribed (more ranks on the node than cores): shm α = 2.6 us, o = 0.2 us, χα = 3.1/2.6.
/// Each message hop then waits for the receiver to be scheduled: calibrate's one-way ping-pong
/// measured α = 2.6 us, o = 0.2 us at p = 4 on 2 cores, and the dissemination barrier, whose
/// rounds are exchanges, took 6.2 us for its 2 rounds there (3.1 us a round). This model had
/// α = 3 us for both and χα = 1; it then predicted the dissemination barrier (6.0 us) below the
/// linear one (6.8 us), where calibrate's fit there (--quick: χα 1.25) chose the linear barrier,
/// as this model now does (linear 6.0 against dissemination 6.2 us). The linear barrier's root
/// leaves first, which a rooted call after it gains from (README, Benchmarks).
///
/// δ (local copies): memcpy of 4 KiB … 4 MiB, the buffer in cache, one core: 39–56 GB/s,
/// 1.8–2.6e-11 s/B (12 GB/s out of cache at 16 MiB).
inline constexpr double kBuiltinCopy = 2e-11;
/// γ: the AVX2 reduction kernels (fabcoll-calibrate's γ phase, rank 0 alone, 16 KiB … 4 MiB):
/// sum float64 2.5e-11, float32 3.0e-11, int32 3.3e-11, max float64 3.3e-11 s/B; 1e-10
/// before the kernels were built for AVX2. Oversubscribed (measured at 2 ranks per core): 2×.
inline constexpr double kBuiltinGamma = 2.5e-11;
/// ω (written data), shm with a core per rank: fabcoll-calibrate --quick at p = 2 measured
/// 1.56, 1.68, 1.74, 1.82, 1.85, 1.92, 1.96 in seven launches and 1.00 in an eighth (that launch's
/// two cores shared their caches: its 16 KiB ping-pong took 1.0 against 2.5 µs), and, once
/// interleaved with the untouched ping-pong and below the L2 size, 1.74 and 1.78 in fast
/// launches, 5.95–6.23 in four slow-mode ones. Not measured on the fabric (sockets: 1.0 and
/// 1.2) nor for ranks sharing cores: 1 there.
inline constexpr double kBuiltinShmWritten = 1.8;
inline CostModel builtin_model(std::string_view link_class, bool oversubscribed = false) {
  if (link_class.starts_with("ofi"))
    return CostModel{10e-6, 4e-10, kBuiltinGamma, -1, 0, kBuiltinCopy};
  if (oversubscribed) {
    CostModel m{2.6e-6, 1.5e-10, 2 * kBuiltinGamma, 2e-7, 0, kBuiltinCopy};
    m.exchange_alpha = 3.1 / 2.6;  // the dissemination barrier's round against the ping-pong
    return m;
  }
  return CostModel{1e-6, 1.5e-10, kBuiltinGamma, 1e-7, 0, kBuiltinCopy, kBuiltinShmWritten};
}

/// The built-in link of a class: builtin_model, for shm with ranks_per_core ranks sharing each
/// core (> 1: oversubscribed) scaled from the layout it was measured in, and a second segment
/// from `single_copy_bytes` (0: none) up when oversubscribed.
///
/// Scaling: the oversubscribed model was measured at p = 4 on 2 cores (2 ranks per core). With
/// r ranks per core every rank waits behind r - 1 others for each wake-up and gets 1/r of a
/// core for each copy, so α, β, γ and o scale by r/2 and δ (measured by one rank alone) by r.
/// Measured at p = 8 on 2 cores (r = 4), pairwise all-to-all with the rings (single copy off),
/// 7 rounds: 50 us at 4 KiB and 94 us at 24 KiB, i.e. α ≈ 6.7 us and β ≈ 3.1e-10 s/B a round,
/// about twice p = 4's 3.1 us (a round of exchanges: α χα) and 1.5e-10.
///
/// The break: messages from the single-copy threshold go as a request-to-send, the receiver's
/// CMA read and a completion back to the sender; each waits for two more wake-ups, each
/// behind the other ranks of its core: α above the break = α + 3.4 us × r / χα. Measured: pairwise
/// all-to-all at 24 KiB (its messages 24 KiB), the single-copy threshold set below (4 KiB) and
/// above (1 MiB) the message size, three alternating runs each: p = 4 on 2 cores 45.0 against
/// 24.7 us over 3 rounds (+6.8 us a message), p = 8 176.9 against 94.0 us over 7 rounds
/// (+11.9 us); with a core per rank (p = 2) 4.5 against 4.3 us, within the noise, so one
/// segment there.
inline LinkModel builtin_link(std::string_view link_class, double ranks_per_core,
                              double single_copy_bytes) {
  const bool oversubscribed = ranks_per_core > 1;
  CostModel below = builtin_model(link_class, oversubscribed);
  if (link_class.starts_with("ofi") || !oversubscribed) return LinkModel::uniform(below);
  // Never below the model with a core per rank (1 < r < 2 scales the r = 2 values down).
  const CostModel quiet = builtin_model(link_class, false);
  const double s = ranks_per_core / 2;
  below.alpha = std::max(quiet.alpha, below.alpha * s);
  below.beta = std::max(quiet.beta, below.beta * s);
  below.gamma = std::max(quiet.gamma, below.gamma * s);
  below.overhead = std::max(quiet.overhead, below.overhead * s);
  below.copy *= ranks_per_core;
  below.written = 1;  // not measured with ranks sharing cores
  if (!(single_copy_bytes > 0)) return LinkModel::uniform(below);
  CostModel above = below;
  // The extra wake-ups were measured on exchanges, whose α the model raises by χα as a whole.
  above.alpha = below.alpha + 3.4e-6 * ranks_per_core / below.exchange_alpha;
  return LinkModel{below, above, single_copy_bytes};
}

}  // namespace fabcoll
