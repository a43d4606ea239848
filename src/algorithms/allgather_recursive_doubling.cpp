// Hypercube all-gather (recursive doubling): the hypercube all-reduce of §13.2.1 with
// concatenation as the operator. Sanders et al. §13.5.1, Corollary 13.10 (Fig. 13.11); Grama et
// al. Algorithm 4.7 (004_…, ALL_TO_ALL_BC_HCUBE):
//   p = 2^d:  T(n, p) = d α + (p - 1) n β       (exact: step i moves 2^i blocks each way)
//   other p:  the Hypercube fold (patterns/hypercube.hpp): each of the r = p - 2^d extra ranks
//             first hands its block to the rank above it, the 2^d cube ranks run the algorithm
//             on their (now uneven) rank ranges, and the extras get the whole result last:
//             T ≤ (d + 2) α + (1 + Σ_{i<d} (2^i + min(2^i, r)) + p) n β
// Preconditions: none. Cube positions are numbered in rank order and an extra rank 2v is folded
// into 2v + 1, so every subcube owns a contiguous range of ranks: each exchange is one message
// sent from and received into the result buffer in place.
//
//   dim 0: 0↔1 2↔3 …    (1 block each way)
//   dim 1: 0↔2 1↔3 …    (2 blocks)
//   dim i: v ↔ v ⊕ 2^i  (the 2^i blocks of v's subcube)
#include <algorithm>

#include "algorithms/algorithms.hpp"
#include "patterns/hypercube.hpp"

namespace fabcoll::algorithms {

namespace {
/// The first rank whose data cube position v holds (v = 2^d gives p).
int first_rank(const Hypercube& cube, int v) {
  return v < cube.surplus() ? 2 * v : v + cube.surplus();
}
/// The blocks of the ranks that cube positions [v_lo, v_hi) hold: a contiguous range.
MutableBytes cube_range(const Hypercube& cube, MutableBytes all, std::size_t n, int v_lo,
                        int v_hi) {
  const auto lo = static_cast<std::size_t>(first_rank(cube, v_lo));
  const auto hi = static_cast<std::size_t>(first_rank(cube, v_hi));
  return all.subspan(lo * n, (hi - lo) * n);
}
}  // namespace

Task<> allgather_recursive_doubling(Channel& ch, MutableBytes all, std::size_t n, ConstBytes own) {
  const Hypercube cube{ch.size()};
  const int me = ch.rank();
  const auto mine = static_cast<std::size_t>(me);
  // Steps: 0 fold in, 1…d the cube dimensions, d+1 the result back to the extra rank.
  const auto back_step = static_cast<std::uint32_t>(cube.dim() + 1);
  const ConstBytes own_block = own.size() == n ? own : ConstBytes(all.subspan(mine * n, n));
  if (cube.is_extra(me)) {
    Transfer out = ch.send(me + 1, own_block, 0);
    Transfer in = ch.recv(me + 1, all, back_step);
    co_await out;
    co_await in;
    co_return;
  }
  if (cube.has_extra(me)) {
    Transfer in = ch.recv(me - 1, all.subspan((mine - 1) * n, n), 0);
    co_await in;
  }
  const int v = cube.vrank(me);
  for (int i = 0; i < cube.dim(); ++i) {
    const int size = 1 << i;
    const int own_lo = v & ~(size - 1);  // my subcube: positions [own_lo, own_lo + 2^i)
    const int peer_lo = Hypercube::partner(own_lo, i);
    const int partner = cube.rank(Hypercube::partner(v, i));
    const auto step = static_cast<std::uint32_t>(i + 1);
    // Step 0 of a rank without a folded partner sends just its own block: from own_block.
    const ConstBytes range = i == 0 && !cube.has_extra(me)
                                 ? own_block
                                 : ConstBytes(cube_range(cube, all, n, own_lo, own_lo + size));
    Transfer out = ch.send(partner, range, step);
    Transfer in = ch.recv(partner, cube_range(cube, all, n, peer_lo, peer_lo + size), step);
    co_await out;
    co_await in;
  }
  if (cube.has_extra(me)) {
    Transfer out = ch.send(me - 1, all, back_step);
    co_await out;
  }
}

namespace {
Task<> run(Channel& ch, const CollArgs& a) {
  const std::size_t n = a.bytes();
  return allgather_recursive_doubling(
      ch, bytes_of(a.recvbuf, n * static_cast<std::size_t>(ch.size())), n, own_block_of(a, n));
}
double cost(const CostQuery& q) {
  const Hypercube cube{q.p};
  const auto& m = q.m;
  const int d = cube.dim();
  if (cube.power_of_two()) return d * m.alpha + (q.p - 1) * q.n * m.beta;
  double blocks = 1 + q.p;  // fold in, result back
  for (int i = 0; i < d; ++i) blocks += (1 << i) + std::min(1 << i, cube.surplus());
  return (d + 2) * m.alpha + blocks * q.n * m.beta;
}
}  // namespace

namespace {
// Each round sends the own block (input) and the blocks received so far: of (p − 1)n bytes,
// dn are input, 1 − d/(p − 1) (sim: exact at p = 2^d, within 0.14 otherwise).
double written_share(const CostQuery& q) {
  if (q.p < 2) return 0;
  const Hypercube cube{q.p};
  return 1 - cube.dim() / (q.p - 1.0);
}
}  // namespace

namespace {
// Every step of the cube is an exchange; when p is not 2^d the fold before it and the return
// after it go one way: d of d + 2 steps (approximate: the sim's share is 0.29–0.52 at p = 3 …
// 12, its ranks out of step around the fold).
double exchange_share(const CostQuery& q) {
  const Hypercube cube{q.p};
  if (q.p < 2) return 0;
  return cube.power_of_two() ? 1.0 : cube.dim() / (cube.dim() + 2.0);
}
}  // namespace

const Algorithm kAllgatherRecursiveDoubling{
    .name = "recursive_doubling",
    .coll = Collective::allgather,
    .reference = "Sanders et al. §13.5.1, Cor. 13.10 (Fig. 13.11); Grama et al. Algorithm 4.7",
    .formula =
        "dα + (p − 1)nβ for p = 2^d; else fold: ≤ (d + 2)α + (1 + Σ(2^i + min(2^i, r)) + p)nβ",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost,
    .optimal_k = nullptr,
    .run = run,
    .test = "gather_barrier_test.AllgatherRecursiveDoublingMatchesCorollary13_10",
    .written_share = written_share,
    .exchange_share = exchange_share,
};

}  // namespace fabcoll::algorithms
