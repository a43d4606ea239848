// Bruck all-gatherv: Bruck's all-gather (Vadhiyar, 002_…: "similar to dissemination barrier,
// log P steps") with blocks of uneven size, zero included (MPICH's short-message allgatherv).
//   T = ⌈log p⌉ α + (p - 1) n β for equal blocks of n bytes; with uneven blocks step k lasts as
//   long as the largest run of min(2^k, p - 2^k) consecutive blocks, at most ⌈log p⌉α + (p-1)n_max
//   β; plus the model's local-copy term (δ; the text leaves copies out): pnδ for equal blocks
// Preconditions: none. Every rank packs its blocks rotated into scratch, tmp = block me, block
// me+1, … (mod p) back to back; in step k it sends the first c = min(2^k, p - 2^k) of them to
// me - 2^k and receives the next c from me + 2^k: the same c blocks, so both sides agree on the
// byte count. At the end the blocks are unpacked to their displacements.
//
//   step 0: r → r-1  block r                 tmp: [r][r+1]
//   step 1: r → r-2  blocks r, r+1           tmp: [r][r+1][r+2][r+3]
//   step k: r → r-2^k, the last step only the blocks still missing
#include <algorithm>
#include <vector>

#include "algorithms/algorithms.hpp"
#include "patterns/binomial_tree.hpp"
#include "patterns/ring.hpp"

namespace fabcoll::algorithms {

Task<> allgatherv_bruck(Channel& ch, MutableBytes buf, const std::size_t* counts,
                        const std::size_t* displs, std::size_t elem_size, ConstBytes own) {
  const Ring ring{ch.size()};
  const int p = ring.size();
  const int me = ch.rank();
  const auto np = static_cast<std::size_t>(p);
  // at[j]: byte offset in tmp of the j-th block in rotated order, block (me + j) mod p.
  std::vector<std::size_t> at(np + 1, 0);
  for (std::size_t j = 0; j < np; ++j)
    at[j + 1] =
        at[j] + counts[static_cast<std::size_t>(ring.mod(me + static_cast<int>(j)))] * elem_size;
  const MutableBytes tmp = ch.scratch(at[np]);
  const auto mine = static_cast<std::size_t>(me);
  ch.copy(tmp.first(at[1]), buf.subspan(displs[mine] * elem_size, at[1]));
  const int steps = BinomialTree::ceil_log2(p);
  for (int k = 0; k < steps; ++k) {
    const int dist = 1 << k;
    const auto c = static_cast<std::size_t>(std::min(dist, p - dist));
    const auto d = static_cast<std::size_t>(dist);
    const auto step = static_cast<std::uint32_t>(k);
    // Step 0 sends the own block alone: from `own` when the caller has it apart (not the copy
    // in tmp, which this rank has just written).
    const ConstBytes block = k == 0 && own.size() == at[1] ? own : ConstBytes(tmp.first(at[c]));
    Transfer out = ch.send(ring.mod(me - dist), block, step);
    Transfer in = ch.recv(ring.mod(me + dist), tmp.subspan(at[d], at[d + c] - at[d]), step);
    co_await in;
    co_await out;
  }
  for (std::size_t j = 1; j < np; ++j) {  // unpack (free: local copies)
    const auto b = static_cast<std::size_t>(ring.mod(me + static_cast<int>(j)));
    ch.copy(buf.subspan(displs[b] * elem_size, counts[b] * elem_size),
            tmp.subspan(at[j], at[j + 1] - at[j]));
  }
}

namespace {
Task<> run(Channel& ch, const CollArgs& a) {
  const std::size_t extent = allgatherv_extent(ch.size(), a.counts, a.displs, a.elem_size);
  const std::size_t mine = a.counts[static_cast<std::size_t>(ch.rank())] * a.elem_size;
  return allgatherv_bruck(ch, bytes_of(a.recvbuf, extent), a.counts, a.displs, a.elem_size,
                          own_block_of(a, mine));
}
double cost(const CostQuery& q) {
  // δ (the model's local-copy term; the text leaves copies out): the own block into the
  // rotated buffer and the p - 1 others out of it, pn (uniform blocks of n).
  const double copies = q.p * q.n * q.m.copy;  // p = 1 too: the own block into scratch
  return BinomialTree::ceil_log2(q.p) * q.m.alpha + (q.p - 1) * q.n * q.m.beta + copies;
}
}  // namespace

const Algorithm kAllgathervBruck{
    .name = "bruck",
    .coll = Collective::allgatherv,
    .reference =
        "Vadhiyar, Collective Communication Implementations (Bruck's all-gather), "
        "uneven blocks",
    .formula = "⌈log p⌉α + (p − 1)nβ (+ pnδ, the packing's copies), n = the largest block",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost,
    .optimal_k = nullptr,
    .run = run,
    .test = "gather_barrier_test.AllgathervBruckTakesCeilLogPRounds",
    .written_share = ring_written_share,  // step 0's own block is input, the rest tmp's
    .exchange_share = exchange_all,
};

}  // namespace fabcoll::algorithms
