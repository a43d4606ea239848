// Rabenseifner's all-reduce: recursive halving reduce-scatter, then recursive doubling
// all-gather. van de Geijn, LAPACK Working Note 29, §3.3 Version 3; the non-power-of-two fold of
// the 13-rank example in Vadhiyar's lecture (002_…, "Rabenseifner algorithm").
//   p = 2^d:  T = Σ_{i=1..d} (2α + 2^-i n(2β + γ)) = 2dα + (p-1)/p · n(2β + γ)   (exact)
//   other p:  + 2α + βn + (n/2)γ (fold: swap halves, combine one half each, the surplus rank
//             returns its half) + α + βn (the result back to the surplus rank); d = ⌊log p⌋.
//             This is the ideal time of the text's model; on the one-port sim the ranks that do
//             not fold run ahead and their early messages can take the receive port of a rank
//             that waits for an earlier message (allreduce_scan_test bounds the excess).
// Preconditions: none; counts need not divide by p (halves split on element boundaries, the
// sizes then differ by at most one element per halving). Non-commutative operators keep rank
// order: the steps go distance 1 first, as in the 13-rank example, so every partial result
// covers a contiguous block of ranks and the lower block is the left operand
// (needs_commutative = false; the sweep checks it with 2x2 matrices).
//
//   halving:  0↔1 swap halves ABCD|EFGH; 0↔2 swap quarters; 0↔4 swap eighths
//   doubling: the same pairs in reverse order swap the computed pieces back
//   fold:     2r ranks pair up (2i, 2i+1) first; 2i sits out and gets the result last
//
// LAWN 29's Version 4 (allreduce_hybrid.cpp) with S = (1, …, 1) is exactly this algorithm, so
// both share one coroutine.
#include "algorithms/algorithms.hpp"
#include "patterns/hypercube.hpp"
#include "tuning/lawn29.hpp"

namespace fabcoll::algorithms {

Task<> allreduce_rabenseifner(Channel& ch, MutableBytes buf, std::size_t elem_size,
                              const ReduceOp& op, ConstBytes input) {
  const Hypercube cube{ch.size()};
  return allreduce_hybrid_strategy(ch, buf, elem_size, op, tuning::version3(cube.dim()),
                                   /*fold_halves=*/true, input);
}

namespace {
Task<> run_rabenseifner(Channel& ch, const CollArgs& a) {
  return allreduce_rabenseifner(ch, bytes_of(a.recvbuf, a.bytes()), a.elem_size, a.op,
                                bytes_of(a.sendbuf, a.bytes()));
}
double cost_rabenseifner(const CostQuery& q) {
  const Hypercube cube{q.p};
  const auto& m = q.m;
  const double p2 = cube.cube_size();
  double t = 2 * cube.dim() * m.alpha + (p2 - 1) / p2 * q.n * (2 * m.beta + m.gamma);
  if (!cube.power_of_two()) t += tuning::fold_cost(true, q.n, m) + m.alpha + m.beta * q.n;
  return t;
}
}  // namespace

namespace {
// LAWN 29's count for Version 3: only the first halving (or the fold) moves input,
// 1 − 1/(4(1 − 1/p)) at p = 2^d (1/2 at p = 2).
double written_share(const CostQuery& q) {
  const Hypercube cube{q.p};
  return tuning::hybrid_written_share(tuning::version3(cube.dim()), q.n, cube.dim(),
                                      cube.power_of_two(), true, true);
}
}  // namespace

namespace {
// Every step of Version 3 is an exchange; the fold and the return go one way.
double exchange_share(const CostQuery& q) {
  const Hypercube cube{q.p};
  return tuning::hybrid_exchange_share(tuning::version3(cube.dim()), q.n, cube.dim(),
                                       cube.power_of_two(), true, false);
}
}  // namespace

const Algorithm kAllreduceRabenseifner{
    .name = "rabenseifner",
    .coll = Collective::allreduce,
    .reference = "LAWN 29 §3.3 Version 3; Rabenseifner's 13-rank example (002_…)",
    .formula = "2dα + (p-1)/p·n(2β + γ), d = ⌊log p⌋; + 3α + 2βn + (n/2)γ when p ≠ 2^d",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost_rabenseifner,
    .optimal_k = nullptr,
    .run = run_rabenseifner,
    .test = "allreduce_scan_test.AllreduceRabenseifnerMatchesLawn29Version3",
    .separate_input = true,
    .written_share = written_share,
    .exchange_share = exchange_share,
};

}  // namespace fabcoll::algorithms
