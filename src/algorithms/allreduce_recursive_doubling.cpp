// Hypercube all-reduce, "exchange and combine" (recursive doubling).
// Sanders et al. §13.2.1; van de Geijn, LAWN 29, Version 2.
//   p = 2^d:  T(n, p) = d (α + βn + γn)
//   other p:  the surplus r = p - 2^⌊log p⌋ ranks fold in first and get the result last
//             (Hypercube pattern): T = ⌊log p⌋(α + βn + γn) + 2(α + βn) + γn
// Preconditions: none; non-commutative operators keep rank order (the lower half's data is
// always the left operand).
//
//   dim 0: 0↔1 2↔3     after iteration i every (i+1)-dimensional subcube holds its
//   dim 1: 0↔2 1↔3     own all-reduce (the loop invariant of §13.2.1)
#include "algorithms/algorithms.hpp"
#include "patterns/hypercube.hpp"
#include "tuning/lawn29.hpp"

namespace fabcoll::algorithms {

// LAWN 29's Version 4 with S = (0, …, 0) (no halving: every step exchanges and combines the
// whole vector) is exactly this algorithm, so both share one coroutine
// (allreduce_hybrid_strategy). That also gives it the hybrid's use of a separate input: the first
// exchange sends from the input and combines input ⊕ received straight into buf as it lands
// (shm fold on arrival), where the old loop first copied the input into buf, received into a
// temporary and combined it in a second pass. fabcoll-bench allreduce, p = 2 on shm, two runs
// each: hybrid with this strategy 70/70 µs at 512 KiB and 108/109 at 1 MiB, this algorithm's old
// loop 119/103 and 184/180.
Task<> allreduce_recursive_doubling(Channel& ch, MutableBytes buf, std::size_t elem_size,
                                    const ReduceOp& op, ConstBytes input) {
  return allreduce_hybrid_strategy(ch, buf, elem_size, op, /*strategy=*/0, /*fold_halves=*/false,
                                   input);
}

namespace {
Task<> run(Channel& ch, const CollArgs& a) {
  return allreduce_recursive_doubling(ch, bytes_of(a.recvbuf, a.bytes()), a.elem_size, a.op,
                                      bytes_of(a.sendbuf, a.bytes()));
}
double cost(const CostQuery& q) {
  const Hypercube cube{q.p};
  const auto& m = q.m;
  double t = cube.dim() * (m.alpha + m.beta * q.n + m.gamma * q.n);
  if (!cube.power_of_two()) t += 2 * (m.alpha + m.beta * q.n) + m.gamma * q.n;
  return t;
}
}  // namespace

namespace {
// LAWN 29's count for Version 2: only the first exchange (or the fold) moves input, (d − 1)/d
// at p = 2^d.
double written_share(const CostQuery& q) {
  const Hypercube cube{q.p};
  return tuning::hybrid_written_share(tuning::kVersion2, q.n, cube.dim(), cube.power_of_two(),
                                      false, true);
}
}  // namespace

namespace {
// Every step of Version 2 is an exchange; the fold and the return go one way.
double exchange_share(const CostQuery& q) {
  const Hypercube cube{q.p};
  return tuning::hybrid_exchange_share(tuning::kVersion2, q.n, cube.dim(), cube.power_of_two(),
                                       true, false);
}
}  // namespace

const Algorithm kAllreduceRecursiveDoubling{
    .name = "recursive_doubling",
    .coll = Collective::allreduce,
    .reference = "Sanders et al. §13.2.1; LAWN 29 Version 2 (exchange and combine)",
    .formula = "d(α + βn + γn), d = ⌊log p⌋; + 2(α + βn) + γn when p ≠ 2^d",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost,
    .optimal_k = nullptr,
    .run = run,
    .test = "sim_cost_test.AllreduceRecursiveDoublingMatchesLawn29Version2",
    .separate_input = true,
    .written_share = written_share,
    .exchange_share = exchange_share,
};

}  // namespace fabcoll::algorithms
