// Bruck all-gather: the dissemination pattern carrying data. Vadhiyar (002_…): "Bruck's
// Allgather: similar to dissemination barrier, log P steps" (MPICH's choice for short messages
// and p ≠ 2^d).
//   T(n, p) = ⌈log p⌉ α + (p - 1) n β          (n = bytes per rank; any p, exact)
//   plus the model's local-copy term (δ; the text leaves copies out): (p + 1)nδ for the own
//   block into the rotated buffer and the rotation back
// Preconditions: none. Every rank keeps its blocks rotated, tmp[j] = block (me + j) mod p. In
// step k it sends tmp[0 … c) to me - 2^k and receives tmp[2^k … 2^k + c) from me + 2^k, with
// c = min(2^k, p - 2^k); after ⌈log p⌉ steps tmp holds all p blocks, rotated back at the end.
//
//   step 0: r → r-1  1 block        tmp: [r][r+1]
//   step 1: r → r-2  2 blocks       tmp: [r][r+1][r+2][r+3]
//   step k: r → r-2^k, the last step only the p - 2^k blocks still missing
#include <algorithm>

#include "algorithms/algorithms.hpp"
#include "patterns/binomial_tree.hpp"
#include "patterns/ring.hpp"

namespace fabcoll::algorithms {

Task<> allgather_bruck(Channel& ch, MutableBytes all, std::size_t n, ConstBytes own) {
  const Ring ring{ch.size()};  // rank arithmetic mod p
  const int p = ring.size();
  const int me = ch.rank();
  const auto np = static_cast<std::size_t>(p);
  const auto mine = static_cast<std::size_t>(me);
  const MutableBytes tmp = p > 1 ? ch.scratch(np * n) : all;
  ch.copy(tmp.first(n), all.subspan(mine * n, n));
  const int steps = BinomialTree::ceil_log2(p);
  for (int k = 0; k < steps; ++k) {
    const int dist = 1 << k;
    const auto c = static_cast<std::size_t>(std::min(dist, p - dist)) * n;
    const auto step = static_cast<std::uint32_t>(k);
    // Step 0 sends the own block alone: from `own` when the caller has it apart (not the copy
    // in tmp, which this rank has just written), else from its slot in `all`.
    const ConstBytes block = k > 0             ? ConstBytes(tmp.first(c))
                             : own.size() == n ? own
                                               : ConstBytes(all.subspan(mine * n, n));
    Transfer out = ch.send(ring.mod(me - dist), block, step);
    Transfer in =
        ch.recv(ring.mod(me + dist), tmp.subspan(static_cast<std::size_t>(dist) * n, c), step);
    co_await in;
    co_await out;
  }
  if (p > 1) {  // tmp[j] is block (me + j) mod p: two contiguous pieces
    const std::size_t head = (np - mine) * n;
    ch.copy(all.subspan(mine * n), tmp.first(head));
    ch.copy(all.first(mine * n), tmp.subspan(head));
  }
}

namespace {
Task<> run(Channel& ch, const CollArgs& a) {
  const std::size_t n = a.bytes();
  return allgather_bruck(ch, bytes_of(a.recvbuf, n * static_cast<std::size_t>(ch.size())), n,
                         own_block_of(a, n));
}
double cost(const CostQuery& q) {
  // δ (the model's local-copy term; the text leaves copies out): the own block into the
  // rotated buffer and the p blocks back, (p + 1)n.
  const double copies = q.p > 1 ? (q.p + 1) * q.n * q.m.copy : 0.0;
  return BinomialTree::ceil_log2(q.p) * q.m.alpha + (q.p - 1) * q.n * q.m.beta + copies;
}
}  // namespace

const Algorithm kAllgatherBruck{
    .name = "bruck",
    .coll = Collective::allgather,
    .reference =
        "Vadhiyar, Collective Communication Implementations (Bruck's all-gather); "
        "Bruck et al. 1997",
    .formula = "⌈log p⌉α + (p − 1)nβ (+ (p + 1)nδ, the rotation's copies)",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost,
    .optimal_k = nullptr,
    .run = run,
    .test = "gather_barrier_test.AllgatherBruckTakesCeilLogPRounds",
    .written_share = ring_written_share,  // step 0's own block is input, the rest tmp's
    .exchange_share = exchange_all,
};

}  // namespace fabcoll::algorithms
