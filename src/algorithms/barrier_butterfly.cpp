// Butterfly barrier (Brooks) in MPICH's form: pairwise exchange with recursive doubling, the
// surfeit ranks folded in. Vadhiyar, "Collective Communication Implementations" (002_…),
// Barrier Algorithms ("In round k, i synchronizes with i ⊕ 2^k pairwise"; "MPICH Barrier"):
//   m = 2^⌊log p⌋, surfeit = p - m. The last `surfeit` ranks first signal the first `surfeit`
//   ranks, the first m ranks run the butterfly, then the first `surfeit` ranks release the last.
//   T(p) = ⌊log p⌋ α            for p = 2^d (zero-byte messages)
//   T(p) ≤ 2⌈log p⌉ α           otherwise: ⌊log p⌋ + 2 rounds, but on a one-port machine the
//   butterfly messages of ranks that run ahead compete with the fold-in at the stand-in ranks'
//   receive port; the text's worst case of "2 log P pairwise synchronizations" bounds it (the
//   sim stays within it for every p ≤ 1100; gather_barrier_test checks p ≤ 300).
// Preconditions: none.
//
//   p = 6, m = 4:   4→0 5→1          (fold in, step 0)
//                   0↔1 2↔3, 0↔2 1↔3 (butterfly rounds, steps 1 … d)
//                   0→4 1→5          (release, step d + 1)
#include "algorithms/algorithms.hpp"
#include "patterns/hypercube.hpp"

namespace fabcoll::algorithms {

Task<> barrier_butterfly(Channel& ch) {
  const Hypercube cube{ch.size()};  // only its sizes: d = ⌊log p⌋, m = 2^d, surfeit = p - m
  const int me = ch.rank();
  const int m = cube.cube_size();
  const int d = cube.dim();
  const auto release_step = static_cast<std::uint32_t>(d + 1);
  if (me >= m) {  // a surfeit rank: the rank me - m stands for it in the butterfly
    Transfer out = ch.send(me - m, ConstBytes{}, 0);
    Transfer in = ch.recv(me - m, MutableBytes{}, release_step);
    co_await out;
    co_await in;
    co_return;
  }
  const bool stands_in = me < cube.surplus();
  if (stands_in) {
    Transfer in = ch.recv(me + m, MutableBytes{}, 0);
    co_await in;
  }
  for (int k = 0; k < d; ++k) {
    const int partner = Hypercube::partner(me, k);
    const auto step = static_cast<std::uint32_t>(k + 1);
    Transfer out = ch.send(partner, ConstBytes{}, step);
    Transfer in = ch.recv(partner, MutableBytes{}, step);
    co_await out;
    co_await in;
  }
  if (stands_in) {
    Transfer out = ch.send(me + m, ConstBytes{}, release_step);
    co_await out;
  }
}

namespace {
Task<> run(Channel& ch, const CollArgs& /*args*/) { return barrier_butterfly(ch); }
double cost(const CostQuery& q) {
  const Hypercube cube{q.p};
  return (cube.power_of_two() ? cube.dim() : 2 * (cube.dim() + 1)) * q.m.alpha;
}
}  // namespace

namespace {
// Every round of the butterfly is an exchange; when p is not 2^d the surplus ranks' messages
// before and after it go one way: (d − 1)/(d + 3) of the critical path (an empirical fit, the
// sim's share at p = 3 … 12).
double exchange_share(const CostQuery& q) {
  const Hypercube cube{q.p};
  if (q.p < 2) return 0;
  return cube.power_of_two() ? 1.0 : (cube.dim() - 1.0) / (cube.dim() + 3.0);
}
}  // namespace

const Algorithm kBarrierButterfly{
    .name = "butterfly",
    .coll = Collective::barrier,
    .reference =
        "Vadhiyar, Collective Communication Implementations (butterfly barrier, "
        "Brooks; MPICH pairwise exchange with surfeit ranks)",
    .formula = "⌊log p⌋α; ≤ 2⌈log p⌉α when p ≠ 2^d",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost,
    .optimal_k = nullptr,
    .run = run,
    .test = "gather_barrier_test.BarrierButterflyMatchesFormula",
    .exchange_share = exchange_share,
};

}  // namespace fabcoll::algorithms
