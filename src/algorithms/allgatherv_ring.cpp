// Ring all-gatherv: Algorithm 4.4 (Grama et al. ch. 4, 004_… ALL_TO_ALL_BC_RING) with blocks of
// uneven size, zero included. Block b holds counts[b] elements at element offset displs[b].
//   T = (p - 1)(α + nβ) for equal blocks of n bytes; with uneven blocks each step lasts as long
//   as the largest block in flight, so T ≤ (p - 1)(α + n_max β)
// Preconditions: none. An empty block still travels as an empty message, so every rank runs
// the same p - 1 steps and no rank needs to know which blocks are empty.
//
//   step 0: r → r+1 block r
//   step s: r → r+1 block r - s, r ← r-1 block r - s - 1  (mod p), in place
//   after p - 1 steps every rank has every block
#include <algorithm>

#include "algorithms/algorithms.hpp"
#include "patterns/ring.hpp"

namespace fabcoll::algorithms {

namespace {
MutableBytes vblock(MutableBytes buf, const std::size_t* counts, const std::size_t* displs,
                    std::size_t elem_size, int b) {
  const auto ub = static_cast<std::size_t>(b);
  return buf.subspan(displs[ub] * elem_size, counts[ub] * elem_size);
}
}  // namespace

Task<> allgatherv_ring(Channel& ch, MutableBytes buf, const std::size_t* counts,
                       const std::size_t* displs, std::size_t elem_size, ConstBytes own) {
  const Ring ring{ch.size()};
  const int me = ch.rank();
  const int right = ring.right(me);
  const int left = ring.left(me);
  for (int s = 0; s + 1 < ring.size(); ++s) {
    const auto step = static_cast<std::uint32_t>(s);
    // Step 0 sends the own block: from `own` when the caller has it apart (all-gatherv's
    // copy of it is data this rank has just written).
    const MutableBytes block = vblock(buf, counts, displs, elem_size, ring.send_block(me, s));
    Transfer out =
        ch.send(right, s == 0 && own.size() == block.size() ? own : ConstBytes(block), step);
    Transfer in =
        ch.recv(left, vblock(buf, counts, displs, elem_size, ring.recv_block(me, s)), step);
    co_await in;  // the next step forwards this block
    co_await out;
  }
}

/// The bytes an all-gatherv's recvbuf spans: max over blocks of (displs + counts) elements.
std::size_t allgatherv_extent(int p, const std::size_t* counts, const std::size_t* displs,
                              std::size_t elem_size) {
  std::size_t extent = 0;
  for (std::size_t i = 0; i < static_cast<std::size_t>(p); ++i)
    extent = std::max(extent, (displs[i] + counts[i]) * elem_size);
  return extent;
}

namespace {
Task<> run(Channel& ch, const CollArgs& a) {
  const std::size_t extent = allgatherv_extent(ch.size(), a.counts, a.displs, a.elem_size);
  const std::size_t mine = a.counts[static_cast<std::size_t>(ch.rank())] * a.elem_size;
  return allgatherv_ring(ch, bytes_of(a.recvbuf, extent), a.counts, a.displs, a.elem_size,
                         own_block_of(a, mine));
}
double cost(const CostQuery& q) { return (q.p - 1) * (q.m.alpha + q.n * q.m.beta); }
}  // namespace

const Algorithm kAllgathervRing{
    .name = "ring",
    .coll = Collective::allgatherv,
    .reference =
        "Grama et al. ch. 4, Algorithm 4.4 (all-to-all broadcast on a ring), uneven blocks",
    .formula = "(p − 1)(α + nβ), n = the largest block",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost,
    .optimal_k = nullptr,
    .run = run,
    .test = "gather_barrier_test.AllgathervRingMatchesAlgorithm4_4",
    .written_share = ring_written_share,
    .exchange_share = exchange_all,
};

}  // namespace fabcoll::algorithms
