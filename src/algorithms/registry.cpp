#include "algorithms/registry.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "algorithms/algorithms.hpp"
#include "algorithms/placement.hpp"
#include "algorithms/sim_steps.hpp"

namespace fabcoll {

const char* collective_name(Collective c) noexcept {
  switch (c) {
    case Collective::bcast:
      return "bcast";
    case Collective::reduce:
      return "reduce";
    case Collective::allreduce:
      return "allreduce";
    case Collective::scan:
      return "scan";
    case Collective::exscan:
      return "exscan";
    case Collective::barrier:
      return "barrier";
    case Collective::gather:
      return "gather";
    case Collective::scatter:
      return "scatter";
    case Collective::allgather:
      return "allgather";
    case Collective::allgatherv:
      return "allgatherv";
    case Collective::alltoall:
      return "alltoall";
    case Collective::alltoallv:
      return "alltoallv";
    case Collective::reduce_scatter_block:
      return "reduce_scatter_block";
    case Collective::count_:
      break;
  }
  return "unknown";
}

std::span<const Algorithm* const> all_algorithms() {
  static const std::vector<const Algorithm*> all = [] {
    std::vector<const Algorithm*> v;
    for (const auto family : {bcast_reduce_algorithms(), allreduce_scan_algorithms(),
                              gather_barrier_algorithms(), alltoall_algorithms()})
      for (const Algorithm* a : family) v.push_back(a);
    return v;
  }();
  return all;
}

double Algorithm::mean_message(const CostQuery& q0) const {
  if (message_bytes != nullptr) return message_bytes(q0);
  CostQuery q = q0;
  const CostModel& m = q0.m;
  const double t = cost(q);
  // Relative steps: the terms are linear in α and β wherever the formula does not switch
  // strategy, and a step of 1e-4 of a term is far above rounding (t is at most ~1e4 of a term).
  const double da = std::max(m.alpha, 1e-9) * 1e-4;
  const double db = std::max(m.beta, 1e-15) * 1e-4;
  q.m.alpha = m.alpha + da;
  const double latencies = (cost(q) - t) / da;
  q.m.alpha = m.alpha;
  q.m.beta = m.beta + db;
  const double bytes = (cost(q) - t) / db;
  if (!(latencies > 0.5) || !(bytes >= 0)) return q0.n;  // no message latency: the whole size
  // Messages are whole bytes: a size that the finite differences put a rounding error away
  // from an integer is that integer (the hypercube all-to-all's np/2 at a break of np/2).
  const double mean = bytes / latencies;
  const double whole = std::round(mean);
  return std::fabs(mean - whole) <= 1e-6 * std::max(1.0, mean) ? whole : mean;
}

double Algorithm::costed_optimal_k(CostQuery q) const {
  if (optimal_k == nullptr) return 1;
  double k = 1;
  for (int round = 0; round < 3; ++round) {
    CostQuery c = q;
    c.m = costed(q);
    k = optimal_k(c);
    if (!(k >= 1)) return k;
    const double next = std::round(k);
    if (next == q.k) break;
    q.k = next;
  }
  return k;
}

CostModel Algorithm::costed(const CostQuery& q0) const {
  // The query the shares see: ω off below written_from (see the declaration), so that a
  // hybrid's strategy (a fixed point over its shares) is the one it runs with. The hybrids
  // give the mean message of that strategy (message_bytes, with ω on): the derivatives of
  // their formula under the raw model would count the strategy Theorem 1 picks without ω and
  // χ (a quiet shm model measured on 16 cores, χα 1.36 and ω 2.28: recursive halving's 24 KiB
  // mean, so ω off, for a p = 4 hybrid at 64 KiB that ran 32 KiB messages).
  CostQuery q = q0;
  if (q.m.written != 1 && q.m.written_from > 0 && mean_message(q) < q.m.written_from)
    q.m.written = 1;
  CostModel m = q.m;
  if (m.written != 1 && written_share != nullptr)
    m.beta *= 1 + placed_written_share(q) * (m.written - 1);
  // Core-mates' ring bytes at δ, before χ: an exchange between core-mates copies twice as much
  // on their CPU as a one-way message (the fit's c holds them at δ, without χ: at most 1% of a
  // training run below the break).
  // With β_x (CostModel::ring_exchange_beta) its exchanges' bytes across CPUs too leave β:
  // they cost β_x, after χ (β_x was measured on exchanges).
  const RingShares ring = ring_shares(q);
  const double ring_x = m.ring_exchange_beta >= 0 ? ring.across : 0.0;
  if (ring.mates > 0 || ring_x > 0)
    m.beta = (1 - ring.mates - ring_x) * m.beta + ring.mates * m.copy;
  // Before χ and W: those scale or add to the rounds it lengthens (the fit's columns alike).
  const double mate_factor = core_mate_factor(q);
  const double port_factor = cpu_port_factor(q);  // on β only
  if (mate_factor != 1 || port_factor != 1) {
    m.alpha *= mate_factor;
    m.beta *= mate_factor * port_factor;
  }
  // The pipelined ones too (the two-tree all-reduce, the pipelined reduce), each packet's
  // round. Without it (until the twenty-ninth session) the two-tree all-reduce over sockets
  // (p = 4 on 2 cores, 14 launches) was predicted 5-40% under its time at 256-512 B in 16 of
  // 21 validations there, and chosen twice at 256 B - 1 KiB over recursive doubling (regrets
  // 33 and 80%); with W, refitted offline from the same launches, it was chosen in neither.
  // (The twenty-first session had found it 28-44% over with W, under a model that has since
  // gained K and β below the break.)
  const bool wakes = m.wake > 0 && fans_in(coll);
  // χ and W at an exchange share e: the one at q (and, for κ's fill below, a lone packet's).
  const auto exchanged = [wakes](CostModel x, double e) {
    x.alpha = x.round_alpha(e, wakes);
    x.beta *= 1 + e * (x.exchange_beta - 1);
    return x;
  };
  // A broadcast's stream over the fabric where ranks share CPUs: the ports in place of χ (its
  // exchange share is 0, clamped_exchange_share).
  const double stream_factor = stream_port_factor(q);
  if (stream_factor != 1) {
    m.alpha *= stream_factor;
    m.beta *= stream_factor;
  }
  const bool charges_exchange = m.exchange_alpha != 1 || m.exchange_beta != 1 || wakes;
  const CostModel unexchanged = m;
  m = exchanged(m, charges_exchange ? clamped_exchange_share(q) : 0.0);
  m.beta += ring_x * m.ring_exchange_beta * mate_factor;
  // κ: a broadcast's packets streamed through rings (CostModel::streamed). The first packet
  // goes through as a message of its size alone would (the fill: the formula at k = 1 and a
  // packet's size); the rounds the further packets add (the formula at k less those of the
  // first packet, both at the stream's exchange share) cost κ times as much. Both α and β
  // scaled by one factor. The fill is charged at a lone packet's exchange share (none for the
  // broadcast's pipelines) where relays forward each packet as soon as it arrives, so that the
  // first runs ahead of the stream; a paced pipeline's (Algorithm::paced) at the stream's.
  // Until the thirty-second session every fill was charged at the stream's share: the linear
  // pipeline's first packet then paid χ on each of its p − 1 hops. p = 4 on 2 cores, seven shm
  // launches whose written-data probe was near 1: their validations had it 1.7–2.2 times its
  // time at 64 KiB and chose the pipelined binary tree over it at 144 KiB – 1 MiB in five, 9–18%
  // slower (none, refitted offline with the fill here; docs/calibration.md, "Thirty-second
  // session"). With the two-tree's fill at a lone packet's share too it was chosen at 64 KiB in
  // two, 28–36% slower: it was never the fastest in 584 validated sizes.
  if (m.streamed != 1 && coll == Collective::bcast && optimal_k != nullptr && q.k >= 2 &&
      !(m.pull_bytes > 0 && std::ceil(q.n / q.k) >= m.pull_bytes)) {
    CostQuery all = q, first = q;
    all.m = first.m = m;
    all.m.streamed = first.m.streamed = 1;
    first.n = std::ceil(q.n / q.k);
    first.k = 1;
    const double whole = cost(all), in_stream = std::min(cost(first), whole);
    double fill = in_stream;
    if (!paced) {
      CostQuery lone = first;
      lone.m = exchanged(unexchanged, charges_exchange ? clamped_exchange_share(lone) : 0.0);
      lone.m.streamed = 1;
      fill = std::min(cost(lone), whole);
    }
    if (whole > 0) {
      const double f = (fill + m.streamed * (whole - in_stream)) / whole;
      m.alpha *= f;
      m.beta *= f;
    }
  }
  m.written = 1;
  m.exchange_alpha = m.exchange_beta = 1;
  m.ring_exchange_beta = -1;
  m.wake = 0;
  m.streamed = 1;
  m.call_wake = 0;  // predict adds it once per call
  m.core_mate_relays = false;
  return m;
}

double Algorithm::ring_bytes_across(const CostQuery& q) const { return 1 - ring_shares(q).mates; }

Algorithm::RingShares Algorithm::ring_shares(const CostQuery& q) const {
  // p = 4 on 2 cores (cyclic), fabcoll-calibrate --quick, 39 launches: at the validation's
  // first size where the hybrid all-reduce leaves recursive doubling (10-31 KiB), recursive
  // doubling sends n across CPUs and n to a core-mate in two rounds, the hybrid n and n/2 in
  // three, Rabenseifner n and n/2 in four. A least-squares fit of a constant, a round and a
  // byte across and to a core-mate to those three and the first two at 256 B put a core-mate's
  // byte at 1.1e-10 s (median, 26 launches of the VM's x6 mode) and 1.3e-10 (13 of its x2 mode),
  // a byte across at 1.3e-9 and 3.7e-10: the slow mode is for data crossing CPUs. The fit's β
  // below the break (1.1-6.2e-10, times χβ 1.5-2.1) costed the n/2 the hybrid saves at more
  // than a round, and it was chosen over recursive doubling in all 39, where recursive doubling
  // was the faster (by 1.4-12.6%). δ is 3.9-6.3e-11 there, times χβ in an exchange.
  const Placement* placed = q.m.placement;
  // (Whatever δ is: the fit's unit models carry δ = 0, and their b must count the same bytes.)
  if (!q.m.core_mate_relays || placed == nullptr || placed->size() != q.p || !(q.m.pull_bytes > 0))
    return {};
  if (optimal_k != nullptr && (q.k >= 2 || q.n >= q.m.pull_bytes)) return {};
  // In its exchanges only (below): none, nothing to look up.
  const double e = clamped_exchange_share(q);
  if (!(e > 0)) return {};
  const long s = strategy != nullptr ? static_cast<long>(strategy(q)) : -1;
  // Every byte in the rings, none pulled: a pulled message is one copy, by its receiver, and
  // across CPUs it can carry written data (ω). Rabenseifner's all-reduce at 64 KiB (mean
  // message 24 KiB; its two 32 KiB messages pulled across CPUs, the second written) was
  // predicted 29% under its time at the median of 26 x6 launches without the rule. With the
  // rule applied by the mean message, its 16 KiB core-mates' messages at δ, it was chosen at
  // 64 KiB in six launches of six, 1.4-7.4% slower than the fastest, and 67.3% in one that
  // went into the x6 mode during it.
  if (optimal_k == nullptr && sim_break_shares(*this, q.p, q.n, q.m.pull_bytes, s).beta > 0)
    return {};
  const double x =
      std::clamp(placed->bytes_across(*this, s, optimal_k != nullptr ? 1.0 : 0.0), 0.0, 1.0);
  // In its exchanges only: a one-way message to a core-mate waits for its sender to leave the
  // core (core_mate_factor) and was measured no cheaper. With every core-mate's byte at δ, the
  // binomial broadcast was chosen over the naive one at 12-16 KiB in three of four x6
  // launches, 15.6-27.5% slower (predicted 11-53% under its time).
  return {e * x, e * (1 - x)};
}

namespace {
/// Where an algorithm's messages to core-mates are charged (Algorithm::core_mate_factor): its
/// strategy and the packets its placement's factors are taken at; false where they are not.
bool mates_charged(const Algorithm& alg, const CostQuery& q, long& strategy, double& k) {
  const Placement* placed = q.m.placement;
  if (!q.m.core_mate_relays || placed == nullptr || placed->size() != q.p) return false;
  const bool pipelined = alg.optimal_k != nullptr;
  // A pipelined one at one packet only: in shm's rings, and over the fabric where that packet
  // (the whole message) is injected (CostModel::small_below; see core_mate_factor). (For
  // cpu_port_factor too, which starts at kCpuPortBytesFrom: above any inject size so far.)
  if (pipelined &&
      (q.k >= 2 || !(q.m.pull_bytes > 0 || (q.m.has_small() && q.n < q.m.small_below))))
    return false;
  if (q.m.pull_bytes > 0 && (pipelined ? q.n : alg.mean_message(q)) >= q.m.pull_bytes) return false;
  strategy = alg.strategy != nullptr ? static_cast<long>(alg.strategy(q)) : -1;
  k = pipelined ? 1.0 : 0.0;
  return true;
}
}  // namespace

double Algorithm::core_mate_factor(const CostQuery& q) const {
  // Below the pull threshold where there is one (shm's rings), at every size where there is
  // none (the fabric: the kernel's sockets). A pipelined one only in the rings and at one
  // packet, where it sends whole messages as the others do: a stream of packets is κ's
  // (CostModel::streamed), and charged at its packet count too the linear pipeline's 1.75 at
  // 10 packets drove κ fitted beside it to 0.31-0.37 (two p = 4 shm launches). Over sockets
  // the pipelined binary-tree broadcast at one packet ran 6-22% under the binomial tree (p = 4
  // on 2 cores; docs/calibration.md, "Core-mates' relays"), and at 256-383 B a median 0.99
  // times the naive one (119 validations timed apart, the forty-sixth to forty-ninth sessions;
  // 0.87-1.01 in 80% of them): there a call is mostly K (CostModel::call_wake), whatever its
  // hops. Below the inject size (small_below) it is charged there too: such a call is not. In
  // the 15 launches of the forty-sixth to forty-ninth sessions that timed broadcasts apart at
  // 128-232 B the naive one was the fastest in every one; the tree took 2.09-2.90 times it in
  // 11 (the binomial tree 1.44-1.62) and 1.06-1.22 in the other 4; the model without the
  // factor put the tree from 12% under the naive one to 28% over it, and chose it in two
  // (regrets 150 and 190%; docs/calibration.md, "Fiftieth session").
  long s = -1;
  double k = 0;
  if (!mates_charged(*this, q, s, k)) return 1;
  return std::max(1.0, q.m.placement->core_mate_factor(*this, s, k));
}

double Algorithm::cpu_port_factor(const CostQuery& q) const {
  // Two one-way messages from one CPU to another at once go one after the other: their
  // copies run on the same two CPUs. p = 4 sockets on 2 cores, cyclic: the binomial reduce's
  // training runs came out 15-30% under their time from 96 KiB in five --quick launches of
  // five (forty-seventh session), by about one message's βn (its first step sends 1 -> 0 and
  // 3 -> 2, CPU 1 to CPU 0), where the naive reduce and the binomial broadcast (whose third
  // hop the relays' factor charges) came within 6%; at 256-768 B it fitted (-3 to +11%).
  // From kCpuPortBytesFrom: charged on α too, or on β at every size, the fit put the break at
  // 384 B in five launches of six (α 1e-9-1.7e-6 s below it, β 3.8-4.8e-8 s/B) and chose
  // from it 17-51% slower at 128-920 B. Exchanges keep theirs: χ was fitted on exchanges in
  // which every rank sends.
  long s = -1;
  double k = 0;
  if (!mates_charged(*this, q, s, k)) return 1;
  const double one_way = 1 - clamped_exchange_share(q);
  if (!(one_way > 0)) return 1;
  // (A pipelined one by n, as mates_charged takes it: its mean message runs it on the sim.)
  if ((optimal_k != nullptr ? q.n : mean_message(q)) < kCpuPortBytesFrom) return 1;
  return 1 + one_way * (std::max(1.0, q.m.placement->cpu_port_factor(*this, s, k)) - 1);
}

double Algorithm::stream_port_factor(const CostQuery& q) const {
  // p = 4 sockets on 2 cores, cyclic, 15 --quick launches (forty-seventh and forty-eighth
  // sessions): with χ on its relays' share (χβ 2.9-3.5 there) the linear pipeline came out a
  // median 43-68% over its time from 30 KiB, the two-tree broadcast 35-51%. Refitted offline
  // (fabcoll-info under each launch's file against its measured times): uncharged, the linear
  // pipeline was chosen at 256 KiB in 12 of the 15, 41-49% slower than the fastest; on the
  // sim's two ports per CPU (a send and a receive port) it came out a median 27% under its
  // time, the two-tree 26%; on one port per CPU, +6.5% and -5.8%. Five launches of this code:
  // -0.4% and -5.0% (docs/calibration.md, "Forty-eighth session"). Below kCpuPortBytesFrom a
  // packet, where "β" is the provider's per-message step: the linear pipeline was chosen at
  // 2 KiB in three packets in one launch's refit, where its one packet had measured 17% over
  // the naive broadcast.
  const Placement* placed = q.m.placement;
  if (coll != Collective::bcast || optimal_k == nullptr || q.k < 2 || q.m.pull_bytes > 0 ||
      !q.m.core_mate_relays || placed == nullptr || placed->size() != q.p ||
      placed->most_on_one_cpu(-1) < 2 || std::ceil(q.n / q.k) < kCpuPortBytesFrom)
    return 1;
  return placed->stream_port_factor(*this, q.k);
}

double Algorithm::clamped_exchange_share(const CostQuery& q) const {
  // A stream on the CPUs' ports has none: its relays' overlap is the ports' (and its call's
  // wake-up K is charged whole, as a one-way path's). With K at 1 - e, the linear pipeline at
  // 16 KiB in two packets was predicted 51% under its time in a p = 4 sockets launch.
  if (exchange_share == nullptr || stream_port_factor(q) != 1) return 0;
  return std::clamp(exchange_share(q), 0.0, 1.0);
}

double Algorithm::placed_written_share(const CostQuery& q) const {
  if (written_share == nullptr) return 0;
  const double f = std::clamp(written_share(q), 0.0, 1.0);
  const Placement* placed = q.m.placement;
  if (placed == nullptr || placed->size() != q.p || !(f > 0)) return f;
  const long s = strategy != nullptr ? static_cast<long>(strategy(q)) : -1;
  return f * std::clamp(placed->written_across(*this, q.k, s), 0.0, 1.0);
}

const Algorithm* find_algorithm(Collective c, std::string_view name) {
  for (const Algorithm* a : all_algorithms())
    if (a->coll == c && a->name == name) return a;
  return nullptr;
}

namespace algorithms {

double best_k_near(const CostQuery& q, double k0, double (*cost_k)(const CostQuery&, double)) {
  const double lo = std::max(1.0, std::max(std::floor(k0 / 2), std::floor(k0) - 2048));
  const double hi = std::min(q.n, std::min(2 * k0 + 2, lo + 4096));
  double best_k = lo;
  double best = cost_k(q, lo);
  for (double k = lo + 1; k <= hi; k += 1) {
    const double c = cost_k(q, k);
    if (c < best) {
      best = c;
      best_k = k;
    }
  }
  return best_k;
}

}  // namespace algorithms

}  // namespace fabcoll
