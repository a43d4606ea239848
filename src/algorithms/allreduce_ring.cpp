// Ring all-reduce: ring reduce-scatter, then ring all-gather. Grama et al. ch. 4 (003_…, 004_…
// Algorithms 4.4 and 4.5: all-to-all reduction and all-to-all broadcast on a ring), the
// bandwidth-optimal all-reduce of the texts' α-β-γ model.
//   T = 2(p-1)α + 2(p-1)/p·βn + (p-1)/p·γn   (exact when p divides the element count; otherwise
//   the largest block, ⌈count/p⌉ elements, sets each step's time)
// Preconditions: a commutative operator (needs_commutative = true): block b is combined along
// the ring b+1, b+2, …, p-1, 0, …, b, which wraps around rank order.
//
//   0 → 1 → 2 → … → p-1 → 0    reduce-scatter step s: r sends block r-s-1, combines block r-s-2
//                              all-gather step s: r sends block r-s, receives block r-s-1
//   after p-1 steps of each, rank r first owns the reduced block r, then every block.
#include "algorithms/algorithms.hpp"
#include "patterns/ring.hpp"

namespace fabcoll::algorithms {

Task<> allreduce_ring(Channel& ch, MutableBytes buf, std::size_t elem_size, const ReduceOp& op,
                      ConstBytes input) {
  const int p = ch.size();
  const int me = ch.rank();
  if (input.empty()) input = buf;
  if (p == 1) {
    ch.copy(buf, input);  // nothing when in place
    co_return;
  }
  const Ring ring{p};
  const EvenBlocks blocks{buf.size() / elem_size, static_cast<std::size_t>(p)};
  const auto block = [&](int b) {
    const auto ub = static_cast<std::size_t>(b);
    return buf.subspan(blocks.begin(ub) * elem_size, blocks.size(ub) * elem_size);
  };
  // My contribution to block b: the input (never written; buf's blocks receive the combines).
  const auto input_block = [&](int b) {
    const auto ub = static_cast<std::size_t>(b);
    return input.subspan(blocks.begin(ub) * elem_size, blocks.size(ub) * elem_size);
  };
  const MutableBytes tmp = ch.scratch(blocks.max_size() * elem_size);
  // Reduce-scatter: block r-s-2 arrives carrying the combine of ranks r-s-1 … r-1 (those before
  // me on its path) and absorbs my contribution.
  for (int s = 0; s + 1 < p; ++s) {
    const MutableBytes mine = block(ring.mod(me - s - 2));
    const MutableBytes theirs = tmp.subspan(0, mine.size());
    const auto step = static_cast<std::uint32_t>(s);
    // Combined into `mine` as it lands (recv_combine): not the block being sent.
    // Step 0 sends my own input block; later steps the block combined in the step before.
    const int out_block = ring.mod(me - s - 1);
    Transfer out = ch.send(ring.right(me),
                           s == 0 ? input_block(out_block) : ConstBytes(block(out_block)), step);
    RecvCombine in = ch.recv_combine(ring.left(me), theirs, op, input_block(ring.mod(me - s - 2)),
                                     mine, /*received_left=*/true, step);
    co_await out;
    co_await in;
  }
  // All-gather: rank r owns the reduced block r; pass blocks on around the ring.
  for (int s = 0; s + 1 < p; ++s) {
    const auto step = static_cast<std::uint32_t>(p - 1 + s);
    Transfer out = ch.send(ring.right(me), block(ring.send_block(me, s)), step);
    Transfer in = ch.recv(ring.left(me), block(ring.recv_block(me, s)), step);
    co_await out;
    co_await in;
  }
}

namespace {
Task<> run_ring(Channel& ch, const CollArgs& a) {
  return allreduce_ring(ch, bytes_of(a.recvbuf, a.bytes()), a.elem_size, a.op,
                        bytes_of(a.sendbuf, a.bytes()));
}
double cost_ring(const CostQuery& q) {
  const double p = q.p;
  const auto& m = q.m;
  return 2 * (p - 1) * m.alpha + (p - 1) / p * q.n * (2 * m.beta + m.gamma);
}
}  // namespace

namespace {
// Of the 2(p − 1) steps only the reduce-scatter's first moves input: 1 − 1/(2(p − 1)).
double written_share(const CostQuery& q) {
  if (q.p < 2) return 0;
  return 1 - 1 / (2.0 * (q.p - 1));
}
}  // namespace

const Algorithm kAllreduceRing{
    .name = "ring",
    .coll = Collective::allreduce,
    .reference = "Grama et al. ch. 4 (Algorithms 4.4, 4.5: ring all-to-all reduction + broadcast)",
    .formula = "2(p-1)α + (p-1)/p·n(2β + γ)",
    .needs_commutative = true,
    .needs_power_of_two = false,
    .cost = cost_ring,
    .optimal_k = nullptr,
    .run = run_ring,
    .test = "allreduce_scan_test.AllreduceRingMatchesFormula",
    .separate_input = true,
    .written_share = written_share,
    .exchange_share = exchange_all,
};

}  // namespace fabcoll::algorithms
