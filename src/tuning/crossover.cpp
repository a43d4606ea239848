#include "tuning/crossover.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "algorithms/placement.hpp"
#include "algorithms/sim_steps.hpp"

namespace fabcoll::tuning {

namespace {

bool is_pow2(int p) { return p > 0 && (p & (p - 1)) == 0; }

CostQuery query(double n, int p, const CostModel& m) {
  CostQuery q;
  q.n = n;
  q.p = p;
  q.m = m;
  return q;
}

}  // namespace

PacketChoice mixed_segments(const Algorithm& alg, double n, int p, const CostModel& below,
                            const CostModel& above, double break_bytes, PacketChoice whole) {
  if (!(break_bytes > 0) || p < 2 || p > kSimStepsMaxP || !(n >= 1)) return whole;
  // The strategy a hybrid runs is Theorem 1's under the model it is costed with, which the
  // shares change; once more with the strategy under the mixed model where that differs.
  const auto strategy_under = [&](const CostModel& m) -> long {
    if (alg.strategy == nullptr) return -1;
    CostQuery q = query(n, p, m);
    q.k = 1;
    return static_cast<long>(alg.strategy(q));
  };
  const auto mix = [&](long strategy) {
    const BreakShares s = sim_break_shares(alg, p, n, break_bytes, strategy);
    PacketChoice c = whole;
    // (At a share of 0 or 1 exactly the segment's value, not one rounded through the mix.)
    const auto at = [](double share, double lo, double hi) {
      return share >= 1 ? hi : share <= 0 ? lo : lo + share * (hi - lo);
    };
    c.m.alpha = at(s.alpha, below.alpha, above.alpha);
    // An exchange's α likewise (each segment's χα α; the same χα in both gives it back).
    const double ex =
        at(s.alpha, below.alpha * below.exchange_alpha, above.alpha * above.exchange_alpha);
    c.m.exchange_alpha = c.m.alpha > 0 ? ex / c.m.alpha : below.exchange_alpha;
    c.m.call_wake = at(s.alpha, below.call_wake, above.call_wake);
    c.m.beta = at(s.beta, below.beta, above.beta);
    c.above = s.alpha >= 0.5;
    c.alpha_share = s.alpha;
    return c;
  };
  const long first = strategy_under(whole.m);
  PacketChoice c = mix(first);
  if (const long again = strategy_under(c.m); again != first) c = mix(again);
  return c;
}

double selector_k(const Algorithm& alg, double n, int p, const CostModel& m) {
  if (alg.optimal_k == nullptr) return 1;
  // Mirrors packet_count() in collectives.cpp: llround(optimal k), at least 1, at most the
  // element count (n with one-byte elements).
  const double k = alg.costed_optimal_k(query(n, p, m));
  if (!(k >= 1)) return 1;
  const double max_k = std::max(1.0, std::floor(n));
  return std::min(max_k, static_cast<double>(std::llround(k)));
}

double algorithm_cost(const Algorithm& alg, double n, int p, const CostModel& m) {
  CostQuery q = query(n, p, m);
  q.k = selector_k(alg, n, p, m);
  return alg.predict(q);
}

double mean_message_bytes(const Algorithm& alg, double n, int p, const CostModel& m) {
  CostQuery q = query(n, p, m);
  q.k = selector_k(alg, n, p, m);
  // Under the model it is costed and run with (the plan's run model): a formula that picks its
  // strategy by the model (the hybrids, Theorem 1's k) sends that strategy's messages, which
  // χ or ω can make differ from those under m.
  q.m = alg.costed(q);
  return alg.mean_message(q);
}

namespace {

// The packets of a pipelined algorithm that cost beta_large at n >= large_from: those of at
// least large_from, and those its receivers pull (pull_bytes, shm's single-copy reads) however
// large. A pulled packet lands in the receiver's whole buffer as a whole message does, and
// with ranks sharing cores the receivers of one CPU fill two such buffers one after another:
// p = 4 on 2 cores, the VM's x2 mode, fabcoll-calibrate --quick, the pipelined binary tree's
// three pulled packets of 341 KiB at 1 MiB were measured at 1.22e-10 s/B past its 6α, as the
// naive broadcast's two whole pulls were (288.5 and 261.9 µs), where β above the break
// was 1.07e-10 and beta_large 1.36e-10; costed at β the tree was put 10% under its time and
// chosen over the naive broadcast, 10% faster. Ring packets (below pull_bytes) keep β: the
// linear pipeline's were measured at 0.7 times the model at 1 MiB (CostModel::large_from).
double large_packets_from(const CostModel& m) {
  return m.pull_bytes > 0 ? std::min(m.pull_bytes, m.large_from) : m.large_from;
}

// A pipelined choice's packets costed beta_large where they reach large_packets_from.
PacketChoice large_packets(double n, PacketChoice c) {
  if (c.m.has_large() && n >= c.m.large_from &&
      std::ceil(n / std::max(c.k, 1.0)) >= large_packets_from(c.m))
    c.m.beta = c.m.beta_large;
  return c;
}

// A choice's cost: alg at its k under its model.
double predicted(const Algorithm& alg, double n, int p, const PacketChoice& c) {
  CostQuery q = query(n, p, c.m);
  q.k = c.k;
  return alg.predict(q);
}

// A broadcast's copies on its busiest CPU at beta_large a byte, plus its formula's latencies
// (n at or beyond large_from; 0 elsewhere): every receiver copies what it receives, and a
// sender what it puts into a ring, and the copies of one CPU's ranks run one after another,
// whatever the formula's rounds. p = 4 on 2 cores (cyclic), the VM's x2 mode,
// fabcoll-calibrate --quick at 1 MiB, three launches: the linear pipeline in 33 ring packets
// (three copies of n on each CPU) took 424-477 µs and the pipelined binary tree so 389-444
// (κ's runs), where 3 × 1 MiB × beta_large = 428 µs (beta_large 1.36e-10). Its formula under
// κ put the linear pipeline at 311-323, and with the rule above alone it was chosen in one of
// them over the naive broadcast (442 µs against 251: two pulls of n on one CPU). The
// latencies: with the copies alone the scatter + all-gather broadcast (2n on one CPU, as the
// naive one, in five rounds to its one) came out 4 µs under the naive broadcast at 1 MiB in
// one launch and was chosen (298 µs against 219).
// Without a placement, inside a node (pull_bytes: shm's copies; a core per rank, whose
// beta_large the ping-pong gives, or ranks not pinned, whose sharing is unknown: a lower
// floor) each rank's copies are counted as its own CPU's: p = 2 shm, four --quick
// launches (forty-seventh session), scatter + all-gather at 1 MiB, its messages of 512 KiB
// below large_from (1 MiB) and so costed at β, was chosen over the naive broadcast and took
// 1.8-2.1 times its time (its receiver copies n, as the naive one's does).
double copy_floor(const Algorithm& alg, double n, int p, const PacketChoice& c) {
  const CostModel& m = c.m;
  if (alg.coll != Collective::bcast || !m.has_large() || !(n >= m.large_from) ||
      (m.placement != nullptr ? m.placement->size() != p : !(m.pull_bytes > 0)))
    return 0;
  std::vector<int> own;
  if (m.placement == nullptr) {
    own.resize(static_cast<std::size_t>(p));
    std::iota(own.begin(), own.end(), 0);
  }
  // Its latencies come on top: the formula at no cost per byte.
  PacketChoice latencies = c;
  latencies.m.beta = 0;
  return sim_bcast_cpu_copies(alg, p, c.k, m.placement != nullptr ? m.placement->cpus() : own, n,
                              m.pull_bytes) *
             n * m.beta_large +
         predicted(alg, n, p, latencies);
}

// The choice's cost, at least its copy floor.
double floored(const Algorithm& alg, double n, int p, const PacketChoice& c) {
  return std::max(predicted(alg, n, p, c), copy_floor(alg, n, p, c));
}

// The choice costed at its copy floor where its formula lies under it: α and β scaled alike
// (as κ scales them), twice, since the formula is only nearly linear in them.
PacketChoice with_copy_floor(const Algorithm& alg, double n, int p, PacketChoice c) {
  const double floor = copy_floor(alg, n, p, c);
  for (int i = 0; i < 2; ++i) {
    const double t = predicted(alg, n, p, c);
    if (!(t > 0) || t >= floor) break;
    c.m.alpha *= floor / t;
    c.m.beta *= floor / t;
  }
  return c;
}

// segment_k before β beyond the cache (CostModel::large_from), which with_large applies; a
// pipelined algorithm's candidates above the break with it (large_packets), so that packets
// below the break are weighed against pulled ones at the β each costs.
PacketChoice segment_k_of(const Algorithm& alg, double n, int p, const CostModel& below,
                          const CostModel& above, double break_bytes) {
  if (alg.optimal_k == nullptr && break_bytes > 0) {
    // Whole messages: the segment that holds the algorithm's own messages. A model that holds
    // its mean message (bytes / latencies on the critical path, under that model) fits; when
    // both do (the formula changes strategy with the model) the cheaper one, when neither the
    // model of n's segment.
    const bool fits_below = mean_message_bytes(alg, n, p, below) < break_bytes;
    const bool fits_above = mean_message_bytes(alg, n, p, above) >= break_bytes;
    PacketChoice whole{1, n >= break_bytes ? above : below, n >= break_bytes};
    if (fits_below && fits_above) {
      CostQuery qb = query(n, p, below), qa = query(n, p, above);
      qb.k = qa.k = 1;
      whole = alg.predict(qa) < alg.predict(qb) ? PacketChoice{1, above, true}
                                                : PacketChoice{1, below, false};
    } else if (fits_below != fits_above) {
      whole = {1, fits_below ? below : above, !fits_below};
    }
    return mixed_segments(alg, n, p, below, above, break_bytes, whole);
  }
  // From here: no break (any algorithm), or a pipelined algorithm.
  if (!(break_bytes > 0 && n >= break_bytes)) return {selector_k(alg, n, p, below), below, false};
  const double max_k = std::max(1.0, std::floor(n));
  std::vector<PacketChoice> cands;
  const auto add = [&](double k, bool up) {
    cands.push_back({std::clamp(std::round(k), 1.0, max_k), up ? above : below, up});
  };
  // Packets below the break whatever the element (kWidestElement): the engine's largest packet
  // lies under n/k + one element.
  const auto below_fits = [&](double k) { return n / k + kWidestElement <= break_bytes; };
  if (const double k = selector_k(alg, n, p, below); below_fits(k)) add(k, false);
  if (const double k = selector_k(alg, n, p, above); std::ceil(n / k) >= break_bytes) add(k, true);
  const double at = std::max(1.0, std::floor(n / break_bytes));  // packets >= break_bytes
  add(at, true);
  // The smallest count with packets below it (at + 1, or at + 2 where n/(at + 1) lies within an
  // element of the break).
  const double first_below = below_fits(at + 1) ? at + 1 : at + 2;
  if (first_below <= max_k) add(first_below, false);
  // And the next count on each side: costs taken from the sim's steps can differ between odd
  // and even k (algorithms/sim_steps.hpp), so the count next to the break may be the worse one.
  if (at >= 2) add(at - 1, true);
  if (first_below + 1 <= max_k) add(first_below + 1, false);
  PacketChoice best = cands.front();
  double best_cost = std::numeric_limits<double>::infinity();
  for (PacketChoice& c : cands) {
    c = large_packets(n, c);
    const double cost = floored(alg, n, p, c);
    if (cost < best_cost || (cost == best_cost && c.k < best.k)) {
      best = c;
      best_cost = cost;
    }
  }
  return best;
}

// The share of a whole-message algorithm's critical path carried by messages of at least
// `bytes`: of its bytes (of_bytes) or of its latencies. The sim's, for its strategy under m;
// past kSimStepsMaxP by its mean message (all or nothing).
double share_from(const Algorithm& alg, double n, int p, const CostModel& m, double bytes,
                  bool of_bytes) {
  if (p >= 2 && p <= kSimStepsMaxP) {
    CostQuery q = query(n, p, m);
    q.k = 1;
    const long strategy = alg.strategy != nullptr ? static_cast<long>(alg.strategy(q)) : -1;
    const BreakShares s = sim_break_shares(alg, p, n, bytes, strategy);
    return of_bytes ? s.beta : s.alpha;
  }
  return mean_message_bytes(alg, n, p, m) >= bytes ? 1.0 : 0.0;
}

// β beyond the cache: a pipelined algorithm's packets at or above large_packets_from cost
// beta_large; a whole-message algorithm's β is mixed by the share of its critical path's bytes
// in messages at or above large_from (the sim's, as for a break; past kSimStepsMaxP by its mean
// message).
PacketChoice with_large(const Algorithm& alg, double n, int p, PacketChoice c, double break_bytes) {
  const CostModel& m = c.m;
  if (!m.has_large() || !(n >= m.large_from)) return c;
  if (alg.optimal_k != nullptr) {
    // Its k was chosen under β: packets that reach large_packets_from cost beta_large, or as
    // many more packets as keep them below it, whichever is cheaper. Not packets that would
    // fall below the break from above it: segment_k_of weighed those under the lower segment.
    const double from = large_packets_from(m);
    if (std::ceil(n / std::max(c.k, 1.0)) < from) return with_copy_floor(alg, n, p, c);
    PacketChoice big = large_packets(n, c), small = c;
    small.k = std::min(std::max(1.0, std::floor(n)), std::floor(n / from) + 1);
    const bool small_fits = std::ceil(n / small.k) < from &&
                            !(c.above && break_bytes > 0 && std::ceil(n / small.k) < break_bytes);
    return with_copy_floor(
        alg, n, p, small_fits && floored(alg, n, p, small) < floored(alg, n, p, big) ? small : big);
  }
  const double share = share_from(alg, n, p, m, m.large_from, true);
  if (share >= 1)
    c.m.beta = m.beta_large;
  else if (share > 0)
    c.m.beta = m.beta + share * (m.beta_large - m.beta);
  return with_copy_floor(alg, n, p, c);
}

// γ beyond the cache (CostModel::gamma_large_from): a pipelined algorithm whose packets reach
// gamma_large_from combines each at gamma_large; a whole-message algorithm's γ is mixed by the
// share of its critical path's bytes in messages at or above it (the sim's, as for β beyond
// the cache; its combines are of the messages it receives).
PacketChoice with_gamma_large(const Algorithm& alg, double n, int p, PacketChoice c) {
  const CostModel& m = c.m;
  if (!m.has_gamma_large() || !(n >= m.gamma_large_from)) return c;
  if (alg.optimal_k != nullptr) {
    if (std::ceil(n / std::max(c.k, 1.0)) >= m.gamma_large_from) c.m.gamma = m.gamma_large;
    return c;
  }
  const double share = share_from(alg, n, p, m, m.gamma_large_from, true);
  if (share >= 1)
    c.m.gamma = m.gamma_large;
  else if (share > 0)
    c.m.gamma = m.gamma + share * (m.gamma_large - m.gamma);
  return c;
}

// α of small messages: a pipelined algorithm whose packets lie below small_below costs
// alpha_small per packet; a whole-message algorithm's α loses the share of its critical path's
// rounds whose messages lie below small_below times (α below the break − alpha_small) (the
// sim's shares, as for a break; past kSimStepsMaxP by its mean message). Such rounds lie below
// the break, so they held the lower segment's α in the mix.
//
// The sender's o likewise, where o of small messages is measured (CostModel::overhead_small):
// an injected send's, not the one refitted to the naive broadcast's larger messages; and K
// where K of small messages is fitted (CostModel::call_wake_small).
//
// Their bytes cost the upper segment's β, not β below the break (where the fit took that apart:
// fabcoll-calibrate over the fabric): an injected message's time does not climb with its size
// as the messages' between the inject size and the break do (sockets, p = 2: 19.2 µs one way at
// 64 B, 20.2 at 256 B, 29.2 at 512 B).
PacketChoice with_small(const Algorithm& alg, double n, int p, const CostModel& below,
                        const CostModel& above, PacketChoice c) {
  if (!c.m.has_small() || !(n >= 1)) return c;
  if (alg.optimal_k != nullptr) {
    if (std::ceil(n / std::max(c.k, 1.0)) < c.m.small_below) {
      c.m.alpha = c.m.alpha_small;
      c.m.beta = std::min(c.m.beta, above.beta);
      if (c.m.overhead_small >= 0 && c.m.overhead >= 0) c.m.overhead = c.m.overhead_small;
      if (c.m.call_wake_small >= 0) c.m.call_wake = c.m.call_wake_small;
    }
    return c;
  }
  // Both shares those of the strategy the model `at` runs, mixed into c's model as it came.
  // (Until the forty-ninth session the rounds' share was taken under the model whose β the
  // bytes' share had just lowered: at p = 4 over sockets the hybrid all-reduce at 256 B got
  // the bytes' share of recursive halving (messages of 64-128 B, all injected: β above the
  // break) and the rounds' share of recursive doubling (256 B, none injected: α below it), and
  // was predicted at 3.6-27 µs against 60-94 measured in 12 launches.)
  const CostModel& m = c.m;
  const auto mix = [&](const CostModel& at) {
    PacketChoice r = c;
    if (below.beta > above.beta) {
      const double bytes = 1 - share_from(alg, n, p, at, m.small_below, true);  // of the bytes
      r.m.beta = std::max(0.0, m.beta - bytes * (below.beta - above.beta));
    }
    const double share = share_from(alg, n, p, at, m.small_below, false);  // of the rounds
    // Exchanges among them at the lower segment's χα: their α is mixed the same way, and the
    // sender's o where o of small messages is measured (CostModel::overhead_small).
    if (m.overhead_small >= 0 && m.overhead >= 0 && share < 1)
      r.m.overhead = m.overhead_small + share * (m.overhead - m.overhead_small);
    // K alike where K of small messages is fitted (CostModel::call_wake_small): those rounds
    // held the lower segment's K in the mix (mixed_segments), as their α.
    if (m.call_wake_small >= 0 && share < 1)
      r.m.call_wake = std::max(
          0.0, share <= 0 ? m.call_wake_small
                          : m.call_wake - (1 - share) * (below.call_wake - m.call_wake_small));
    if (share <= 0) {
      r.m.alpha = m.alpha_small;
      r.m.exchange_alpha = below.exchange_alpha;
    } else if (share < 1) {
      const double ex = m.alpha * m.exchange_alpha -
                        (1 - share) * (below.alpha - m.alpha_small) * below.exchange_alpha;
      r.m.alpha = std::max(0.0, m.alpha - (1 - share) * (below.alpha - m.alpha_small));
      if (r.m.alpha > 0 && ex > 0) r.m.exchange_alpha = ex / r.m.alpha;
    }
    return r;
  };
  PacketChoice first = mix(m);
  if (alg.strategy == nullptr) return first;
  // A hybrid runs Theorem 1's strategy under the model it is given, which the mix changes:
  // where the mix makes it run another strategy, that strategy's own mix, if it runs that
  // strategy too (else the first: the two send each other's messages, and neither mix is
  // the other's run).
  const auto strategy_under = [&](const CostModel& at) {
    CostQuery q = query(n, p, at);
    q.k = 1;
    return static_cast<long>(alg.strategy(q));
  };
  const long runs = strategy_under(first.m);
  if (runs == strategy_under(m)) return first;
  PacketChoice second = mix(first.m);
  return strategy_under(second.m) == runs ? second : first;
}

}  // namespace

PacketChoice segment_k(const Algorithm& alg, double n, int p, const CostModel& below,
                       const CostModel& above, double break_bytes) {
  return with_gamma_large(alg, n, p,
                          with_large(alg, n, p,
                                     with_small(alg, n, p, below, above,
                                                segment_k_of(alg, n, p, below, above, break_bytes)),
                                     break_bytes));
}

double algorithm_cost(const Algorithm& alg, double n, int p, const LinkModel& link) {
  const PacketChoice pc = segment_k(alg, n, p, link.below, link.above, link.break_bytes);
  CostQuery q = query(n, p, pc.m);
  q.k = pc.k;
  return alg.predict(q);
}

bool linear_cost_terms(const Algorithm& alg, double n, int p, const CostModel& at_model, double& a,
                       double& b, double& c, double* o_terms, double* o_recv_terms,
                       double* ring_x_terms) {
  if (alg.optimal_k != nullptr) return false;
  CostModel at = at_model;
  at.written = 1;  // b: every byte at β (see the declaration)
  at.exchange_alpha = at.exchange_beta = 1;
  at.wake = 0;
  at.call_wake = 0;
  CostQuery q = query(n, p, at);
  q.k = 1;
  const double whole = alg.predict(q);
  const auto unit = [&](CostModel m) {
    q.m = m;
    return alg.predict(q);
  };
  // The sender's overhead o and time per byte G: when measured (>= 0) each is a known constant
  // like the γ term and goes into c (the unit models carry o = 0, G = 0); when not (o = α,
  // G = β, the texts' model) every o is an α and every G a β, carried by the unit α and β
  // models (overhead, gap < 0).
  const auto with = [&](CostModel m, bool known) {
    m.pull_bytes = at.pull_bytes;  // which messages are pulled is the link's, not a term
    m.placement = at.placement;    // nor which ranks share a CPU
    m.overhead = at.overhead >= 0 ? (known ? at.overhead : 0.0) : -1.0;
    m.receive_overhead = at.overhead >= 0 ? (known ? at.recv_overhead() : 0.0) : -1.0;
    m.gap = at.gap >= 0 ? (known ? at.gap : 0.0) : -1.0;
    m.copy = known ? at.copy : 0.0;  // δ (local copies): a known constant like γ's term
    // β_x (>= 0: known): its exchanges' ring bytes across CPUs, a known constant too
    m.ring_exchange_beta =
        at.ring_exchange_beta >= 0 ? (known ? at.ring_exchange_beta : 0.0) : -1.0;
    return m;
  };
  const double ua = unit(with({1, 0, 0}, false));
  const double ub = unit(with({0, 1, 0}, false));
  const double uc = unit(with({0, 0, at.gamma}, true));
  // Linear near `at`: the sum of the terms is the whole, and so at a model twice as slow per
  // byte (a formula that picks a strategy by the model fails one of the two).
  const double sum = ua * at.alpha + ub * at.beta + uc;
  const double twice = unit(with({at.alpha, 2 * at.beta, at.gamma}, true));
  const double sum2 = ua * at.alpha + 2 * ub * at.beta + uc;
  if (!(std::fabs(sum - whole) <= 1e-9 * whole) || !(std::fabs(sum2 - twice) <= 1e-9 * twice))
    return false;
  a = ua;
  b = ub;
  c = uc;
  // o not measured: its terms (and o_r's) are α's, in a.
  if (o_terms != nullptr) {
    *o_terms = 0;
    if (at.overhead >= 0) {
      CostModel uo = with({0, 0, 0}, false);
      uo.overhead = 1;
      *o_terms = unit(uo);
    }
  }
  if (ring_x_terms != nullptr) {
    *ring_x_terms = 0;
    if (at.ring_exchange_beta >= 0) {
      CostModel ux = with({0, 0, 0}, false);
      ux.ring_exchange_beta = 1;
      *ring_x_terms = unit(ux);
    }
  }
  if (o_recv_terms != nullptr) {
    *o_recv_terms = 0;
    if (at.overhead >= 0) {
      CostModel ur = with({0, 0, 0}, false);
      ur.receive_overhead = 1;
      *o_recv_terms = unit(ur);
    }
  }
  return true;
}

bool eligible(const Algorithm& alg, int p, bool commutative) {
  if (fabcoll::combines(alg.coll) && alg.needs_commutative && !commutative) return false;
  if (alg.needs_power_of_two && !is_pow2(p)) return false;
  return true;
}

namespace {

template <class Cost>
const Algorithm* fastest_by(Collective c, int p, bool commutative, const Cost& cost_of) {
  const Algorithm* best = nullptr;
  double best_cost = 0;
  for (const Algorithm* a : all_algorithms()) {
    if (a->coll != c || !eligible(*a, p, commutative)) continue;
    const double cost = cost_of(*a);
    // Ties up to rounding go to the algorithm registered first: two formulas that coincide
    // (hybrid and recursive_doubling at p = 2) would otherwise alternate byte by byte.
    if (best == nullptr || cost < best_cost * (1 - kTieTolerance)) {
      best = a;
      best_cost = cost;
    }
  }
  return best;
}

template <class Win>
std::vector<CrossoverSegment> table_by(const Win& win, const CrossoverOptions& opts,
                                       std::vector<double> extra = {}) {
  std::vector<CrossoverSegment> out;
  const double n_min = std::max(1.0, std::floor(opts.n_min));
  const double n_max = std::max(n_min + 1, std::floor(opts.n_max));
  const auto open = [&](const Algorithm* a, double n) {
    if (!out.empty() && out.back().algorithm == a) return;
    if (!out.empty()) out.back().hi = n;
    out.push_back({a, n, n_max});
  };
  // Scan points: every integer below exhaustive_below, then per_octave steps (integers).
  std::vector<double> scan;
  for (double n = n_min; n < std::min(n_max, opts.exhaustive_below); n += 1) scan.push_back(n);
  const double step = std::exp2(1.0 / std::max(1, opts.per_octave));
  for (double x = std::max(n_min, opts.exhaustive_below); x < n_max; x *= step) {
    const double n = std::floor(x);
    if (scan.empty() || n > scan.back()) scan.push_back(n);
  }
  // Sizes where a cost jumps (a protocol break): a winner may hold between two of them only.
  for (const double n : extra)
    if (n >= n_min && n < n_max) scan.push_back(std::floor(n));
  std::sort(scan.begin(), scan.end());
  scan.erase(std::unique(scan.begin(), scan.end()), scan.end());
  const Algorithm* prev = nullptr;
  double prev_n = 0;
  for (double n : scan) {
    const Algorithm* a = win(n);
    if (prev == nullptr) {
      open(a, n);
    } else if (a != prev) {
      // Walk from prev_n towards n: bisect for the first size whose winner differs from the
      // current one, open a segment there, repeat until the winner at n is reached.
      double lo = prev_n;  // win(lo) == cur
      const Algorithm* cur = prev;
      while (cur != a) {
        double l = lo, h = n;  // win(l) == cur, win(h) != cur
        while (h - l > 1) {
          const double mid = std::floor((l + h) / 2);
          if (win(mid) == cur)
            l = mid;
          else
            h = mid;
        }
        cur = win(h);
        open(cur, h);
        lo = h;
      }
    }
    prev = a;
    prev_n = n;
  }
  if (!out.empty()) out.back().hi = n_max;
  return out;
}

}  // namespace

const Algorithm* fastest(Collective c, double n, int p, const CostModel& m, bool commutative) {
  return fastest_by(c, p, commutative,
                    [&](const Algorithm& a) { return algorithm_cost(a, n, p, m); });
}

const Algorithm* fastest(Collective c, double n, int p, const LinkModel& link, bool commutative) {
  return fastest_by(c, p, commutative,
                    [&](const Algorithm& a) { return algorithm_cost(a, n, p, link); });
}

std::vector<CrossoverSegment> crossover_table(Collective c, int p, const CostModel& m,
                                              const CrossoverOptions& opts) {
  return table_by([&](double n) { return fastest(c, n, p, m, opts.commutative); }, opts);
}

std::vector<CrossoverSegment> crossover_table(Collective c, int p, const LinkModel& link,
                                              const CrossoverOptions& opts) {
  // An algorithm's messages are n·j/q bytes for small j, q (n/p, n/2, n, np/2, …): they cross
  // the break at n = break·m/p for some m, where its cost jumps. A winner can hold between two
  // such sizes only, so those sizes (and the size before each) join the scan.
  // Also break·j/q for small q (Bruck's mean message of 3n at p = 7, subtrees of 3 or 5), and
  // at most 8192 multiples of break/p (p above 64).
  std::vector<double> jumps;
  if (link.break_bytes > 0) {
    const auto add = [&](double n) {
      n = std::ceil(n);
      jumps.push_back(n - 1);
      jumps.push_back(n);
    };
    const double dp = p;
    const double ms = std::min(2.0 * dp * dp, 8192.0);
    for (double m = 1; m <= ms; m += 1) add(link.break_bytes * m / dp);
    for (int q = 1; q <= 8; ++q)
      for (int j = 1; j <= 4 * q; ++j) add(link.break_bytes * j / q);
  }
  return table_by([&](double n) { return fastest(c, n, p, link, opts.commutative); }, opts,
                  std::move(jumps));
}

const Algorithm* table_lookup(const std::vector<CrossoverSegment>& table, double n) {
  for (const CrossoverSegment& s : table)
    if (n >= s.lo && n < s.hi) return s.algorithm;
  return nullptr;
}

std::string format_table(const std::vector<CrossoverSegment>& table) {
  std::string s;
  for (const CrossoverSegment& seg : table) {
    if (!s.empty()) s += ' ';
    s += std::string(seg.algorithm != nullptr ? seg.algorithm->name : "none") + " [" +
         std::to_string(static_cast<long long>(seg.lo)) + ", " +
         std::to_string(static_cast<long long>(seg.hi)) + ")";
  }
  return s;
}

}  // namespace fabcoll::tuning
