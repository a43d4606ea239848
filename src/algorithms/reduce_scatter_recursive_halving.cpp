// Recursive-halving reduce-scatter for commutative operators. MPICH's short/medium-message
// reduce-scatter (002_…: "Reduce-scatter: for commutative operations: recursive halving");
// the reduce-scatter half of van de Geijn's LAWN 29 Version 3:
//   p = 2^d:  T(n, p) = log p·α + (p-1)/p·n(β + γ)      n = p·m, all p blocks of m bytes
//   other p:  the r = p - 2^⌊log p⌋ extra ranks fold in first (α + βn + γn) and get their block
//             last (α + βm); the cube halves position ranges whose block counts differ by the
//             folded pairs, and ranks without an extra run ahead, so a step's receive may
//             queue behind a later step's message: the cost formula is then an upper bound
//             (one more α + βs per step), checked on the sim for p ≤ 300.
// Preconditions: a commutative operator (the halving pairs rank v with v xor 2^k, so the
// partial sums cover strided, not contiguous, rank sets). Any p.
//
//   k = d-1: 0↔4 1↔5 …  keep the half of the block range on my side of bit k, send the other
//   k = d-2: 0↔2 …       half, add the partner's partial sums of the half I keep
//   end:     position v holds its own blocks summed over all p ranks
#include <algorithm>
#include <utility>

#include "algorithms/algorithms.hpp"
#include "patterns/hypercube.hpp"

namespace fabcoll::algorithms {

namespace {
/// First block owned by cube position u: a position that absorbed an extra rank owns two.
std::size_t first_block(const Hypercube& cube, int u) {
  return static_cast<std::size_t>(u < cube.surplus() ? 2 * u : u + cube.surplus());
}
}  // namespace

Task<> reduce_scatter_recursive_halving(Channel& ch, ConstBytes send, MutableBytes recv,
                                        std::size_t block, const ReduceOp& op) {
  const Hypercube cube{ch.size()};
  const int me = ch.rank();
  const auto np = static_cast<std::size_t>(ch.size());
  const std::size_t n = np * block;
  const auto back_step = static_cast<std::uint32_t>(cube.dim() + 1);
  if (cube.is_extra(me)) {  // the whole input to the partner, its own block back at the end
    Transfer out = ch.send(me + 1, send.first(n), 0);
    co_await out;
    const MutableBytes mine = ch.scratch(block);
    Transfer in = ch.recv(me + 1, mine, back_step);
    co_await in;
    ch.copy(recv, mine);
    co_return;
  }
  // The partial sums: `cur` holds them, the input itself until the first combine writes them
  // into w (send is never written, and recv may alias it: the in-place form). Every step after
  // the first works inside the range the first one kept, all of it in w by then; the first step
  // sends its half straight from the input (no copy of the whole vector first).
  const MutableBytes w = ch.scratch(n);
  ConstBytes cur = send.first(n);
  const MutableBytes tmp = ch.scratch(n);
  if (cube.has_extra(me)) {
    // The extra rank is the lower one: its data is the left operand.
    RecvCombine in = ch.recv_combine(me - 1, tmp, op, cur, w, /*received_left=*/true, 0);
    co_await in;
    cur = w;
  }
  const auto range = [&](int u0, int u1) {  // the bytes of cube positions u0 … u1-1
    const std::size_t b0 = first_block(cube, u0);
    return std::pair{b0 * block, (first_block(cube, u1) - b0) * block};
  };
  const int v = cube.vrank(me);
  int lo = 0;
  int hi = cube.cube_size();
  for (int k = cube.dim() - 1; k >= 0; --k) {
    const int mid = (lo + hi) / 2;
    const int pv = Hypercube::partner(v, k);
    const bool lower_half = v < mid;
    const auto [keep_at, keep_bytes] = lower_half ? range(lo, mid) : range(mid, hi);
    const auto [give_at, give_bytes] = lower_half ? range(mid, hi) : range(lo, mid);
    const MutableBytes in_buf = tmp.first(keep_bytes);
    const auto step = static_cast<std::uint32_t>(k + 1);
    // Combined into w's `keep` as it lands (recv_combine): disjoint from `give`, being sent.
    Transfer out = ch.send(cube.rank(pv), cur.subspan(give_at, give_bytes), step);
    RecvCombine in = ch.recv_combine(cube.rank(pv), in_buf, op, cur.subspan(keep_at, keep_bytes),
                                     w.subspan(keep_at, keep_bytes),
                                     /*received_left=*/pv < v, step);
    co_await out;
    co_await in;
    cur = w;
    (lower_half ? hi : lo) = mid;
  }
  const auto [own_at, own_bytes] = range(v, v + 1);  // one block, or two with the extra's first
  const ConstBytes own = cur.subspan(own_at, own_bytes);
  if (cube.has_extra(me)) {
    Transfer out = ch.send(me - 1, own.first(block), back_step);
    co_await out;
  }
  ch.copy(recv, own.last(block));  // p = 1 in place: nothing (the result is already there)
}

namespace {
Task<> run(Channel& ch, const CollArgs& a) {
  const auto np = static_cast<std::size_t>(ch.size());
  return reduce_scatter_recursive_halving(ch, bytes_of(a.sendbuf, np * a.bytes()),
                                          bytes_of(a.recvbuf, a.bytes()), a.bytes(), a.op);
}
double cost(const CostQuery& q) {
  const Hypercube cube{q.p};
  const auto& m = q.m;
  const double block = q.n;  // CostQuery n = bytes per block; the text's n is p·block
  const bool fold = !cube.power_of_two();
  double t = 0;
  for (int j = 0; j < cube.dim(); ++j) {
    // Step j halves ranges of 2^(d-j) positions; a half holds at most h + min(r, h) blocks.
    const int h = 1 << (cube.dim() - 1 - j);
    const double s = (h + std::min(cube.surplus(), h)) * block;
    t += m.alpha + s * (m.beta + m.gamma);
    // With a fold, ranks without an extra run ahead; one-port, a step's receive may queue
    // behind one message of a later step (a bound checked on the sim, not from the text).
    if (fold) t += m.alpha + s * m.beta;
  }
  if (fold)  // all p blocks in from the extra rank, its block back at the end
    t += m.alpha + q.p * block * (m.beta + m.gamma) + m.alpha + block * m.beta;
  return t;
}
}  // namespace

namespace {
// The written share: the first step sends its half straight from the input, every later one
// sums it combined; p = 2^d: 1 − (p/2)/(p − 1) (0 at p = 2). Otherwise the critical path runs
// through a rank that folded an extra rank's whole input in (input, p blocks), so every one of
// its steps sends sums, and its extra's block back at the end: the steps' blocks and that one
// over all of them (each step once: the queueing bound of cost() is not bytes sent).
double written_share(const CostQuery& q) {
  const Hypercube cube{q.p};
  if (cube.dim() == 0) return 0;
  double steps = 0;
  double first = 0;
  for (int j = 0; j < cube.dim(); ++j) {
    const int h = 1 << (cube.dim() - 1 - j);
    const double s = h + std::min(cube.surplus(), h);
    steps += s;
    if (j == 0) first = s;
  }
  if (cube.power_of_two()) return (steps - first) / steps;
  return (steps + 1) / (q.p + steps + 1);
}
}  // namespace

namespace {
// Every step of the cube is an exchange. When p is not 2^d the surplus ranks' blocks go one
// way before and after it: approximate, 0.25 (the sim's share is 0–0.44 at p = 3 … 12).
double exchange_share(const CostQuery& q) {
  if (q.p < 2) return 0;
  return Hypercube{q.p}.power_of_two() ? 1.0 : 0.25;
}
}  // namespace

const Algorithm kReduceScatterRecursiveHalving{
    .name = "recursive_halving",
    .coll = Collective::reduce_scatter_block,
    .reference = "MPICH reduce-scatter (002_…); LAWN 29 Version 3 (recursive halving)",
    .formula = "log p·α + (p-1)/p·n(β + γ), n = p·m, m = bytes per block; p ≠ 2^d: a bound",
    .needs_commutative = true,
    .needs_power_of_two = false,
    .cost = cost,
    .optimal_k = nullptr,
    .run = run,
    .test = "alltoall_test.ReduceScatterRecursiveHalvingMatchesMpich",
    .written_share = written_share,
    .exchange_share = exchange_share,
};

}  // namespace fabcoll::algorithms
