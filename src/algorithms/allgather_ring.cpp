// Ring all-gather (all-to-all broadcast on a ring). Grama et al. ch. 4, Algorithm 4.4
// (004_…, ALL_TO_ALL_BC_RING; 003_…):
//   T(n, p) = (p - 1)(α + nβ)                   (n = bytes per rank)
// Preconditions: none (any p). Each step forwards the block received in the step before, so
// the p - 1 steps form a pipeline in which every rank sends and receives one block per step.
//
//   step 0: 0→1 (block 0)  1→2 (block 1)  …  p-1→0 (block p-1)
//   step 1: 0→1 (block p-1) 1→2 (block 0) …
//   step s: r sends block r - s, receives block r - s - 1 (mod p) in place
#include "algorithms/algorithms.hpp"
#include "patterns/ring.hpp"

namespace fabcoll::algorithms {

Task<> allgather_ring(Channel& ch, MutableBytes all, std::size_t n, ConstBytes own) {
  const Ring ring{ch.size()};
  const int me = ch.rank();
  const int right = ring.right(me);
  const int left = ring.left(me);
  for (int s = 0; s + 1 < ring.size(); ++s) {
    const auto out_at = static_cast<std::size_t>(ring.send_block(me, s)) * n;
    const auto in_at = static_cast<std::size_t>(ring.recv_block(me, s)) * n;
    const auto step = static_cast<std::uint32_t>(s);
    // Step 0 sends the own block: from `own` when the caller has it apart.
    const ConstBytes block = s == 0 && own.size() == n ? own : ConstBytes(all.subspan(out_at, n));
    Transfer out = ch.send(right, block, step);
    Transfer in = ch.recv(left, all.subspan(in_at, n), step);
    co_await in;  // the next step forwards this block
    co_await out;
  }
}

namespace {
Task<> run(Channel& ch, const CollArgs& a) {
  const std::size_t n = a.bytes();
  return allgather_ring(ch, bytes_of(a.recvbuf, n * static_cast<std::size_t>(ch.size())), n,
                        own_block_of(a, n));
}
double cost(const CostQuery& q) { return (q.p - 1) * (q.m.alpha + q.n * q.m.beta); }
}  // namespace

const Algorithm kAllgatherRing{
    .name = "ring",
    .coll = Collective::allgather,
    .reference = "Grama et al. ch. 4, Algorithm 4.4 (all-to-all broadcast on a ring)",
    .formula = "(p − 1)(α + nβ)",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost,
    .optimal_k = nullptr,
    .run = run,
    .test = "gather_barrier_test.AllgatherRingMatchesAlgorithm4_4",
    .written_share = ring_written_share,
    .exchange_share = exchange_all,
};

}  // namespace fabcoll::algorithms
