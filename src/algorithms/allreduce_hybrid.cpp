// Hybrid global combine (all-reduce). van de Geijn, LAPACK Working Note 29, §3.4 Version 4
// (Fig. 4) with the optimal strategy vector S̄ of Theorem 1 (Note 3).
//   p = 2^d:  T = Corollary 4 = 2(d-k)α + (1 - 2^-(d-k)) n(2β + γ) + k(α + 2^-(d-k) n(β + γ)),
//             k = the smallest integer with n >= 2^(d-k) α / (k(β+γ) + γ), at most d.
//   other p:  the r = p - 2^⌊log p⌋ surplus ranks fold their whole vectors in first and get
//             the result last: + (α + βn + γn) + (α + βn). This is the ideal time of the text's
//             model; on the one-port sim the ranks that do not fold run ahead and their early
//             messages can take the receive port of a rank that waits for an earlier message
//             (allreduce_scan_test bounds the excess). The whole-vector fold rather than the
//             halving one of Rabenseifner's example: the latter leaves a gap between the two
//             fold messages that such an early message fills.
// Preconditions: none. Non-commutative operators keep rank order (see below).
//
//   S_j = 1 (Version 3 step): swap halves with the neighbour, combine the kept half, recurse
//   S_j = 0 (Version 2 step): swap the whole current vector, combine it, recurse
//   unwinding: every halving step swaps the computed halves back (recursive doubling)
//
// Directions: the text combines in direction d-1 first. We walk the cube dimensions in the
// mirrored order (dimension 0, i.e. distance 1, first; the text's direction j is our dimension
// d-1-j), as the 13-rank Rabenseifner example (002_…) does. In the model every direction costs
// the same, so the cost is unchanged; but now after each step a rank's partial result covers a
// contiguous block of ranks, and the lower block is always the left operand, so the rank order
// of non-commutative operators is kept.
#include <algorithm>
#include <array>
#include <cstdint>

#include "algorithms/algorithms.hpp"
#include "algorithms/placement.hpp"
#include "patterns/hypercube.hpp"
#include "tuning/lawn29.hpp"

namespace fabcoll::algorithms {

namespace {

// A range of elements [lo, hi) of the vector.
// No default member initialisers: the 32-entry array below is left uninitialised (zeroing
// it was 6% of an 8-byte all-reduce's instructions).
struct Segment {
  std::size_t lo;
  std::size_t hi;
  [[nodiscard]] std::size_t size() const { return hi - lo; }
};

MutableBytes part(MutableBytes buf, Segment s, std::size_t elem_size) {
  return buf.subspan(s.lo * elem_size, s.size() * elem_size);
}
ConstBytes part(ConstBytes buf, Segment s, std::size_t elem_size) {
  return buf.subspan(s.lo * elem_size, s.size() * elem_size);
}

}  // namespace

Task<> allreduce_hybrid_strategy(Channel& ch, MutableBytes buf, std::size_t elem_size,
                                 const ReduceOp& op, std::uint32_t strategy, bool fold_halves,
                                 ConstBytes input) {
  const Hypercube cube{ch.size()};
  const int me = ch.rank();
  const int d = cube.dim();
  const std::size_t count = elements_in(buf.size(), elem_size);
  // A separate input is read by the first exchange only: it sends from the input and combines
  // input ⊕ received straight into buf (ranks in a fold, and p = 1, copy it in first instead).
  bool separate = !input.empty() && input.data() != buf.data();
  if (separate && (d == 0 || cube.is_extra(me) || cube.has_extra(me))) {
    ch.copy(buf, input);
    separate = false;
  }
  const MutableBytes tmp = ch.scratch(buf.size());
  // The fold splits the vector into a lower half (the surplus rank combines it) and an upper
  // half (the cube rank combines it).
  const Segment lower{0, count / 2};
  const Segment upper{count / 2, count};
  // Steps: 0, 1 the fold; 2 + t the halving/exchange in dimension t; 2 + d + t its unwinding;
  // 2 + 2d the result back to the surplus rank.
  const auto back_step = static_cast<std::uint32_t>(2 + 2 * d);

  if (cube.is_extra(me)) {
    const int survivor = me + 1;
    if (fold_halves) {
      const MutableBytes theirs = part(tmp, Segment{0, lower.size()}, elem_size);
      // Folded into the lower half as it lands, while the upper half is sent: disjoint.
      const MutableBytes low = part(buf, lower, elem_size);
      Transfer out = ch.send(survivor, part(buf, upper, elem_size), 0);
      RecvCombine in = ch.recv_combine(survivor, theirs, op, low, low, /*received_left=*/false, 0);
      co_await out;
      co_await in;
      Transfer back = ch.send(survivor, part(buf, lower, elem_size), 1);
      co_await back;
    } else {
      Transfer out = ch.send(survivor, buf, 0);
      co_await out;
    }
    Transfer result = ch.recv(survivor, buf, back_step);
    co_await result;
    co_return;
  }
  if (cube.has_extra(me)) {
    const int extra = me - 1;  // the lower rank: its data is the left operand
    if (fold_halves) {
      const MutableBytes theirs = part(tmp, Segment{0, upper.size()}, elem_size);
      const MutableBytes high = part(buf, upper, elem_size);
      Transfer out = ch.send(extra, part(buf, lower, elem_size), 0);
      RecvCombine in = ch.recv_combine(extra, theirs, op, high, high, /*received_left=*/true, 0);
      co_await out;
      co_await in;
      Transfer rest = ch.recv(extra, part(buf, lower, elem_size), 1);
      co_await rest;
    } else {
      RecvCombine in = ch.recv_combine(extra, tmp, op, buf, buf, /*received_left=*/true, 0);
      co_await in;
    }
  }

  // Invariant after step t: `mine` holds, for its elements, the combine of the 2^(t+1) cube
  // positions that agree with v above bit t (a contiguous block of ranks); the halves handed
  // away are remembered in `given` for the unwinding.
  const int v = cube.vrank(me);
  std::array<Segment, 32> given;  // given[t] is set by halving step t before it is read
  Segment mine{0, count};
  for (int t = 0; t < d; ++t) {
    const int pv = Hypercube::partner(v, t);
    const int partner = cube.rank(pv);
    const auto step = static_cast<std::uint32_t>(2 + t);
    const bool halve = ((strategy >> (d - 1 - t)) & 1u) != 0;  // S_j, j = d-1-t
    Segment out_seg = mine;
    if (halve) {
      const std::size_t mid = mine.lo + mine.size() / 2;
      const Segment low{mine.lo, mid};
      const Segment high{mid, mine.hi};
      mine = v < pv ? low : high;
      out_seg = v < pv ? high : low;
      given[static_cast<std::size_t>(t)] = out_seg;
    }
    const MutableBytes theirs = part(tmp, Segment{0, mine.size()}, elem_size);
    const ConstBytes src = t == 0 && separate ? input : ConstBytes(buf);
    const ConstBytes own = part(src, mine, elem_size);
    const MutableBytes res = part(buf, mine, elem_size);
    Transfer out = ch.send(partner, part(src, out_seg, elem_size), step);
    if (halve || src.data() != buf.data()) {
      // The partner's data is combined into res as it lands (recv_combine): res is disjoint
      // from the bytes being sent (the other half, or the separate input).
      RecvCombine in =
          ch.recv_combine(partner, theirs, op, own, res, /*received_left=*/pv < v, step);
      co_await out;
      co_await in;
    } else {
      // The whole vector goes out of buf while it is combined into buf: combine only once
      // the send has completed.
      Transfer in = ch.recv(partner, theirs, step);
      co_await out;
      co_await in;
      Transfer work = pv < v ? ch.combine_into(op, theirs, own, res)  // lower ranks on the left
                             : ch.combine_into(op, own, theirs, res);
      co_await work;
    }
  }
  for (int t = d - 1; t >= 0; --t) {
    const bool halve = ((strategy >> (d - 1 - t)) & 1u) != 0;
    if (!halve) continue;
    const int partner = cube.rank(Hypercube::partner(v, t));
    const auto step = static_cast<std::uint32_t>(2 + d + t);
    const Segment other = given[static_cast<std::size_t>(t)];
    Transfer out = ch.send(partner, part(buf, mine, elem_size), step);
    Transfer in = ch.recv(partner, part(buf, other, elem_size), step);
    co_await out;
    co_await in;
    mine = Segment{std::min(mine.lo, other.lo), std::max(mine.hi, other.hi)};
  }
  if (cube.has_extra(me)) {
    Transfer out = ch.send(me - 1, buf, back_step);
    co_await out;
  }
}

Task<> allreduce_hybrid(Channel& ch, MutableBytes buf, std::size_t elem_size, const ReduceOp& op,
                        ConstBytes input, long strategy) {
  const Hypercube cube{ch.size()};
  const auto n = static_cast<double>(buf.size());
  return allreduce_hybrid_strategy(ch, buf, elem_size, op,
                                   strategy >= 0
                                       ? static_cast<std::uint32_t>(strategy)
                                       : tuning::theorem1_strategy(n, cube.dim(), ch.model()),
                                   /*fold_halves=*/false, input);
}

namespace {
Task<> run_hybrid(Channel& ch, const CollArgs& a) {
  return allreduce_hybrid(ch, bytes_of(a.recvbuf, a.bytes()), a.elem_size, a.op,
                          bytes_of(a.sendbuf, a.bytes()), a.strategy);
}
double cost_hybrid(const CostQuery& q) {
  const Hypercube cube{q.p};
  double t = tuning::corollary4_cost(q.n, cube.dim(), q.m);
  if (!cube.power_of_two()) t += tuning::fold_cost(false, q.n, q.m) + q.m.alpha + q.m.beta * q.n;
  return t;
}
}  // namespace

tuning::Strategy hybrid_run_strategy(const Algorithm& alg, const CostQuery& q, bool returns,
                                     bool gathers) {
  const Hypercube cube{q.p};
  const int d = cube.dim();
  const bool pow2 = cube.power_of_two();
  const CostModel& base = q.m;
  tuning::Strategy s = tuning::theorem1_strategy(q.n, d, base);
  const bool wakes = base.wake > 0 && fans_in(alg.coll);
  if (base.written == 1 && base.exchange_alpha == 1 && base.exchange_beta == 1 && !wakes) return s;
  CostModel m = base;
  // Which ranks share a CPU: ω on the written bytes that cross CPUs only (as placed_written_share).
  const Placement* placed =
      base.placement != nullptr && base.placement->size() == q.p ? base.placement : nullptr;
  for (int round = 0; round < 3; ++round) {
    double f = tuning::hybrid_written_share(s, q.n, d, pow2, false, returns);
    if (placed != nullptr && base.written != 1 && f > 0)
      f *= std::clamp(placed->written_across(alg, 0, static_cast<long>(s)), 0.0, 1.0);
    const double e = tuning::hybrid_exchange_share(s, q.n, d, pow2, returns, gathers);
    m.alpha = base.round_alpha(e, wakes);
    m.beta = base.beta * (1 + f * (base.written - 1)) * (1 + e * (base.exchange_beta - 1));
    s = tuning::theorem1_strategy(q.n, d, m);
  }
  return s;
}

double hybrid_strategy_written_share(const Algorithm& alg, const CostQuery& q, bool returns,
                                     bool gathers) {
  const Hypercube cube{q.p};
  return tuning::hybrid_written_share(hybrid_run_strategy(alg, q, returns, gathers), q.n,
                                      cube.dim(), cube.power_of_two(), false, returns);
}

double hybrid_strategy_exchange_share(const Algorithm& alg, const CostQuery& q, bool returns,
                                      bool gathers) {
  const Hypercube cube{q.p};
  return tuning::hybrid_exchange_share(hybrid_run_strategy(alg, q, returns, gathers), q.n,
                                       cube.dim(), cube.power_of_two(), returns, gathers);
}

double hybrid_strategy_message_bytes(const Algorithm& alg, const CostQuery& q, bool returns,
                                     bool gathers) {
  const Hypercube cube{q.p};
  return tuning::hybrid_mean_message(hybrid_run_strategy(alg, q, returns, gathers), q.n, cube.dim(),
                                     cube.power_of_two(), returns);
}

namespace {
// LAWN 29's count for the strategy it runs (hybrid_strategy_written_share).
double written_share(const CostQuery& q) {
  return hybrid_strategy_written_share(kAllreduceHybrid, q, /*returns=*/true, /*gathers=*/false);
}
double exchange_share(const CostQuery& q) {
  return hybrid_strategy_exchange_share(kAllreduceHybrid, q, /*returns=*/true, /*gathers=*/false);
}
std::uint32_t strategy(const CostQuery& q) {
  return hybrid_run_strategy(kAllreduceHybrid, q, /*returns=*/true, /*gathers=*/false);
}
double message_bytes(const CostQuery& q) {
  return hybrid_strategy_message_bytes(kAllreduceHybrid, q, /*returns=*/true, /*gathers=*/false);
}
}  // namespace

const Algorithm kAllreduceHybrid{
    .name = "hybrid",
    .coll = Collective::allreduce,
    .reference = "LAWN 29 §3.4 Version 4, Theorem 1, Corollary 4",
    .formula =
        "2(d-k)α + (1-2^-(d-k))n(2β+γ) + k(α + 2^-(d-k)n(β+γ)), k of Theorem 1; "
        "+ 2(α + βn) + γn when p ≠ 2^d",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost_hybrid,
    .optimal_k = nullptr,
    .run = run_hybrid,
    .test = "allreduce_scan_test.AllreduceHybridMatchesCorollary4",
    .separate_input = true,
    .message_bytes = message_bytes,
    .written_share = written_share,
    .strategy = strategy,
    .exchange_share = exchange_share,
};

}  // namespace fabcoll::algorithms
