// Recursive-doubling reduce-scatter, MPICH's choice for non-commutative operators (002_…:
// "For non-commutative: recursive doubling (< 512 bytes)"):
//   p = 2^d:  T(n, p) = Σ_{j<d} (α + (p - 2^j)·m(β + γ)) = dα + (dp - p + 1)·m(β + γ),  m = n/p
//   other p:  the r = p - 2^⌊log p⌋ extra ranks fold in first (α + βn + γn) and get their block
//             last (α + βm); ranks without an extra run ahead, so a step's receive may queue
//             behind a later step's message: the cost formula is then an upper bound (one
//             more α + βs per step), checked on the sim for p ≤ 300.
// Preconditions: none; non-commutative operators keep rank order. Any p.
// Invariant: after step j every position v holds, for each block outside the partner groups
// met so far, the partial sum over its group G_j+1 (2^(j+1) consecutive positions, hence
// consecutive ranks). In step j v sends every block except its own group's (their owners get
// the partner group's sum from their own partners) and adds the partner group's sums, on the
// left when that group is the lower one.
//
//   j = 0: 0↔1 2↔3 …  (all blocks but the pair's own)
//   j = 1: 0↔2 1↔3 …  (all blocks but the own pair's)
//   end:   position v holds its blocks summed over all ranks in rank order
#include "algorithms/algorithms.hpp"
#include "algorithms/sim_steps.hpp"
#include "patterns/hypercube.hpp"

namespace fabcoll::algorithms {

namespace {
/// First block owned by cube position u: a position that absorbed an extra rank owns two.
std::size_t doubling_first_block(const Hypercube& cube, int u) {
  return static_cast<std::size_t>(u < cube.surplus() ? 2 * u : u + cube.surplus());
}
}  // namespace

Task<> reduce_scatter_recursive_doubling(Channel& ch, ConstBytes send, MutableBytes recv,
                                         std::size_t block, const ReduceOp& op) {
  const Hypercube cube{ch.size()};
  const int me = ch.rank();
  const auto np = static_cast<std::size_t>(ch.size());
  const std::size_t n = np * block;
  const auto back_step = static_cast<std::uint32_t>(cube.dim() + 1);
  if (cube.is_extra(me)) {
    Transfer out = ch.send(me + 1, send.first(n), 0);
    co_await out;
    const MutableBytes mine = ch.scratch(block);
    Transfer in = ch.recv(me + 1, mine, back_step);
    co_await in;
    ch.copy(recv, mine);
    co_return;
  }
  // The partial sums: `cur` holds them, the input itself until the first combine writes them
  // into w (send is never written). The first step's combines cover every block but the
  // partner group's, so only those are copied (a block or two, not the whole input).
  const MutableBytes w = ch.scratch(n);
  ConstBytes cur = send.first(n);
  const MutableBytes out_buf = ch.scratch(n);
  const MutableBytes in_buf = ch.scratch(n);
  if (cube.has_extra(me)) {
    Transfer in = ch.recv(me - 1, in_buf, 0);
    co_await in;
    Transfer work = ch.combine_into(op, in_buf, cur, w);  // the extra rank is the lower one
    co_await work;
    cur = w;
  }
  const int v = cube.vrank(me);
  for (int j = 0; j < cube.dim(); ++j) {
    const int mask = 1 << j;
    const int pv = Hypercube::partner(v, j);
    const int g0 = v & ~(mask - 1);    // my group: positions g0 … g0+mask-1
    const int pg0 = pv & ~(mask - 1);  // the partner's group
    // Blocks outside my group go out; blocks outside the partner's group come in.
    const std::size_t my0 = doubling_first_block(cube, g0) * block;
    const std::size_t my1 = doubling_first_block(cube, g0 + mask) * block;
    const std::size_t pa0 = doubling_first_block(cube, pg0) * block;
    const std::size_t pa1 = doubling_first_block(cube, pg0 + mask) * block;
    ch.copy(out_buf.first(my0), cur.first(my0));
    ch.copy(out_buf.subspan(my0, n - my1), cur.subspan(my1));
    const std::size_t out_size = my0 + (n - my1);
    const std::size_t in_size = pa0 + (n - pa1);
    const auto step = static_cast<std::uint32_t>(j + 1);
    Transfer out = ch.send(cube.rank(pv), out_buf.first(out_size), step);
    Transfer in = ch.recv(cube.rank(pv), in_buf.first(in_size), step);
    co_await out;
    co_await in;
    const MutableBytes below = w.first(pa0);
    const MutableBytes above = w.subspan(pa1);
    const ConstBytes mine_below = cur.first(pa0);
    const ConstBytes mine_above = cur.subspan(pa1);
    const ConstBytes in_below = in_buf.first(pa0);
    const ConstBytes in_above = in_buf.subspan(pa0, n - pa1);
    // The partner's blocks: never sent or kept, but later steps combine over them (wasted,
    // as the formula counts), so w holds the input there rather than bytes never written.
    if (cur.data() != w.data()) ch.copy(w.subspan(pa0, pa1 - pa0), cur.subspan(pa0, pa1 - pa0));
    if (pv < v) {  // the partner's group holds the lower ranks: its sums go on the left
      Transfer w1 = ch.combine_into(op, in_below, mine_below, below);
      co_await w1;
      Transfer w2 = ch.combine_into(op, in_above, mine_above, above);
      co_await w2;
    } else {
      Transfer w1 = ch.combine_into(op, mine_below, in_below, below);
      co_await w1;
      Transfer w2 = ch.combine_into(op, mine_above, in_above, above);
      co_await w2;
    }
    cur = w;
  }
  const std::size_t own0 = doubling_first_block(cube, v) * block;
  if (cube.has_extra(me)) {
    Transfer out = ch.send(me - 1, cur.subspan(own0, block), back_step);
    co_await out;
    ch.copy(recv, cur.subspan(own0 + block, block));
  } else {
    ch.copy(recv, cur.subspan(own0, block));  // p = 1: from send (nothing when in place)
  }
}

namespace {
// Every step sends blocks packed into a buffer (written); with a fold the extra rank sends its
// input as it is, and where that message sits on the critical path moves irregularly with p
// (0.35–0.59 on the sim at p = 3 … 12): the sim's share (sim_written_share; 1 at p = 2^d).
double written_share(const CostQuery& q) {
  if (Hypercube{q.p}.power_of_two()) return q.p > 1 ? 1.0 : 0.0;
  return sim_written_share(kReduceScatterRecursiveDoubling, q.p, 1);
}
}  // namespace

namespace {
Task<> run(Channel& ch, const CollArgs& a) {
  const auto np = static_cast<std::size_t>(ch.size());
  return reduce_scatter_recursive_doubling(ch, bytes_of(a.sendbuf, np * a.bytes()),
                                           bytes_of(a.recvbuf, a.bytes()), a.bytes(), a.op);
}
double cost(const CostQuery& q) {
  const Hypercube cube{q.p};
  const auto& m = q.m;
  const double block = q.n;  // CostQuery n = bytes per block; the text's n is p·block
  const bool fold = !cube.power_of_two();
  double t = 0;
  for (int j = 0; j < cube.dim(); ++j) {
    // A group of 2^j positions owns at least 2^j blocks: at most p - 2^j go out.
    const double s = (q.p - (1 << j)) * block;
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
// Every step of the cube is an exchange. When p is not 2^d the surplus ranks' blocks go one
// way before and after it: approximate, 0.25 (the sim's share is 0–0.44 at p = 3 … 12).
double exchange_share(const CostQuery& q) {
  if (q.p < 2) return 0;
  return Hypercube{q.p}.power_of_two() ? 1.0 : 0.25;
}
}  // namespace

const Algorithm kReduceScatterRecursiveDoubling{
    .name = "recursive_doubling",
    .coll = Collective::reduce_scatter_block,
    .reference = "MPICH reduce-scatter for non-commutative operators (002_…)",
    .formula = "dα + (dp - p + 1)m(β + γ), d = log p, m = bytes per block; p ≠ 2^d: a bound",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost,
    .optimal_k = nullptr,
    .run = run,
    .test = "alltoall_test.ReduceScatterRecursiveDoublingMatchesMpich",
    .written_share = written_share,
    .exchange_share = exchange_share,
};

}  // namespace fabcoll::algorithms
