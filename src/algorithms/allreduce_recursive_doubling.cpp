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
#include <cmath>

#include "algorithms/algorithms.hpp"
#include "patterns/hypercube.hpp"

namespace fabcoll::algorithms {

Task<> allreduce_recursive_doubling(Channel& ch, MutableBytes buf, const ReduceOp& op) {
  const Hypercube cube{ch.size()};
  const int me = ch.rank();
  // Steps: 0 fold in, 1..d the cube dimensions, d+1 the result back to the extra rank.
  const auto back_step = static_cast<std::uint32_t>(cube.dim() + 1);
  if (cube.is_extra(me)) {
    Transfer out = ch.send(me + 1, buf, 0);
    Transfer in = ch.recv(me + 1, buf, back_step);
    co_await out;
    co_await in;
    co_return;
  }
  const MutableBytes tmp = ch.scratch(buf.size());
  if (cube.has_extra(me)) {
    // The extra rank is the lower one: its data is the left operand.
    RecvCombine in = ch.recv_combine(me - 1, tmp, op, buf, buf, /*received_left=*/true, 0);
    co_await in;
  }
  const int v = cube.vrank(me);
  for (int i = 0; i < cube.dim(); ++i) {
    const int pv = Hypercube::partner(v, i);
    const int partner = cube.rank(pv);
    const auto step = static_cast<std::uint32_t>(i + 1);
    Transfer out = ch.send(partner, buf, step);
    Transfer in = ch.recv(partner, tmp, step);
    co_await out;
    co_await in;
    Transfer work = pv < v ? ch.combine_left(op, tmp, buf) : ch.combine_right(op, buf, tmp);
    co_await work;
  }
  if (cube.has_extra(me)) {
    Transfer out = ch.send(me - 1, buf, back_step);
    co_await out;
  }
}

namespace {
Task<> run(Channel& ch, const CollArgs& a) {
  return allreduce_recursive_doubling(ch, bytes_of(a.recvbuf, a.bytes()), a.op);
}
double cost(const CostQuery& q) {
  const Hypercube cube{q.p};
  const auto& m = q.m;
  double t = cube.dim() * (m.alpha + m.beta * q.n + m.gamma * q.n);
  if (!cube.power_of_two()) t += 2 * (m.alpha + m.beta * q.n) + m.gamma * q.n;
  return t;
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
};

}  // namespace fabcoll::algorithms
