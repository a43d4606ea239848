// Ring reduce-scatter: all-to-all reduction on a ring. Grama et al. ch. 4, Algorithm 4.5
// (004_…, ALL_TO_ALL_RED_RING; 003_…, "alla-till-alla ackumulering": the all-to-all broadcast
// on a ring run backwards, combining instead of concatenating):
//   T(n, p) = (p - 1)(α + (n/p)(β + γ)) = (p-1)α + (p-1)/p·n(β + γ)      n = p·m bytes
// Preconditions: a commutative operator (the partial sum for block b starts at rank b+1 and
// travels leftwards around the ring, so it wraps past rank 0). Any p.
//
//   step i = 1 … p-1:  temp := msg[my_id + i] ⊕ recv;  send temp to left;  recv from right
//   end:               result := msg[my_id] ⊕ recv
//   0 ← 1 ← 2 ← … ← p-1 ← 0
#include "algorithms/algorithms.hpp"
#include "patterns/ring.hpp"

namespace fabcoll::algorithms {

Task<> reduce_scatter_ring(Channel& ch, ConstBytes send, MutableBytes recv, std::size_t block,
                           const ReduceOp& op) {
  const Ring ring{ch.size()};
  const int p = ch.size();
  const int me = ch.rank();
  auto msg = [&](int j) {
    return send.subspan(static_cast<std::size_t>(ring.mod(j)) * block, block);
  };
  // Two buffers take turns: `cur` holds what arrived last step (recv, then temp in place),
  // `next` receives the right neighbour's temp of this step.
  MutableBytes cur = ch.scratch(block);
  MutableBytes next = ch.scratch(block);
  for (int i = 1; i < p; ++i) {
    // temp := msg[my_id + i] ⊕ recv (recv := 0 before the first step: temp is msg itself).
    ConstBytes temp = msg(me + i);
    if (i > 1) {
      Transfer work = ch.combine_left(op, msg(me + i), cur);
      co_await work;
      temp = cur;
    }
    Transfer out = ch.send(ring.left(me), temp, static_cast<std::uint32_t>(i));
    Transfer in = ch.recv(ring.right(me), next, static_cast<std::uint32_t>(i));
    co_await out;
    co_await in;
    std::swap(cur, next);
  }
  if (p == 1) {
    ch.copy(recv, msg(me));
    co_return;
  }
  Transfer work = ch.combine_left(op, msg(me), cur);  // result := msg[my_id] ⊕ recv
  co_await work;
  ch.copy(recv, cur);  // last: recv may alias block 0 of send (in-place form)
}

namespace {
Task<> run(Channel& ch, const CollArgs& a) {
  const auto np = static_cast<std::size_t>(ch.size());
  return reduce_scatter_ring(ch, bytes_of(a.sendbuf, np * a.bytes()),
                             bytes_of(a.recvbuf, a.bytes()), a.bytes(), a.op);
}
double cost(const CostQuery& q) {
  const double block = q.n;  // CostQuery n = bytes per block; the text's n is p·block
  return (q.p - 1) * (q.m.alpha + block * (q.m.beta + q.m.gamma));
}
}  // namespace

const Algorithm kReduceScatterRing{
    .name = "ring",
    .coll = Collective::reduce_scatter_block,
    .reference = "Grama et al. ch. 4, Algorithm 4.5 (all-to-all reduction on a ring; 003_…, 004_…)",
    .formula = "(p-1)α + (p-1)/p·n(β + γ), n = p·m, m = bytes per block (CostQuery n)",
    .needs_commutative = true,
    .needs_power_of_two = false,
    .cost = cost,
    .optimal_k = nullptr,
    .run = run,
    .test = "alltoall_test.ReduceScatterRingMatchesAlgorithm4_5",
    .written_share = ring_written_share,
    .exchange_share = exchange_all,
};

}  // namespace fabcoll::algorithms
