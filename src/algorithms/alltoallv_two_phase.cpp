// Two-phase all-to-all with non-uniform message sizes (an h-relation). Sanders et al. §13.6.3
// (Fig. 13.15), eq. (13.5): every message m_ij is chopped into p pieces m_ijk of ⌈|m_ij|/p⌉
// elements and piece k travels i → k → j, so both exchanges are UNIFORM all-to-alls whose block
// is bounded by h/p + p elements (+ p size fields in the first), whatever the individual sizes:
//   T ≤ T_max(16 B) + 2 T_all→all(h/p + 2p) ≈ 2pα + 2hβ (+ the fields and the rounding)
// With direct delivery (the circular schedule, §13.6.1) and B1, B2 the two block sizes:
//   T = ⌈log p⌉(α + 16(β + γ)) + (p-1)(α + βB1) + (p-1)(α + βB2)
// Preconditions: none (any p, any counts including zeros). The block sizes need the global
// maxima of Σ_j ⌈|m_ij|/p⌉ and Σ_i ⌈|m_ij|/p⌉: a dissemination MAX of two numbers first.
// Only the first exchange carries the p size fields: the final receiver j knows |m_ij| from
// its own counts, so it can cut the second exchange's blocks without them.
//
// Both exchanges are uniform (blocks padded to B1 and B2), as the text has it; blocks are built
// and taken apart round by round, so no PE holds all p² size fields at once.
//
//   phase 1: PE i sends PE k [|m_i0k| … |m_i(p-1)k|] m_i0k m_i1k …   (≤ B1 bytes)
//   phase 2: PE k sends PE j m_kjk m_(k-1)jk … (k's arrival order)    (≤ B2 bytes)
//   PE j puts piece k of m_ij at element k·⌈|m_ij|/p⌉ of its block from i
#include <algorithm>
#include <cstring>
#include <vector>

#include "algorithms/algorithms.hpp"
#include "patterns/binomial_tree.hpp"
#include "patterns/ring.hpp"

namespace fabcoll::algorithms {

namespace {

/// Piece k of a message of s elements cut into pieces of c = ⌈s/p⌉: [begin, end) in elements.
struct Piece {
  std::size_t begin;
  std::size_t end;
};
Piece piece_of(std::size_t s, std::size_t c, std::size_t k) {
  return {std::min(k * c, s), std::min((k + 1) * c, s)};
}

/// Every PE gets the element-wise MAX of `vals` (uint64) over all PEs: the dissemination
/// pattern, ⌈log p⌉ rounds (i → i + 2^b). MAX is idempotent, so the overlapping coverage for
/// p ≠ 2^d is harmless, and all PEs finish together, so the exchanges start in step.
Task<> two_phase_agree_max(Channel& ch, MutableBytes vals) {
  const Ring ring{ch.size()};
  const int p = ch.size();
  const int i = ch.rank();
  const ReduceOp max_op(FC_MAX, FC_UINT64);
  const MutableBytes tmp = ch.scratch(vals.size());
  for (int b = 0; (1 << b) < p; ++b) {
    const int dist = 1 << b;
    const auto step = static_cast<std::uint32_t>(b);
    Transfer t_out = ch.send(ring.mod(i + dist), vals, step);
    Transfer t_in = ch.recv(ring.mod(i - dist), tmp, step);
    co_await t_out;
    co_await t_in;
    Transfer work = ch.combine_right(max_op, vals, tmp);
    co_await work;
  }
}

}  // namespace

Task<> alltoallv_two_phase(Channel& ch, const void* sendbuf, void* recvbuf, std::size_t elem_size,
                           const std::size_t* scounts, const std::size_t* sdispls,
                           const std::size_t* rcounts, const std::size_t* rdispls) {
  const Ring ring{ch.size()};
  const int p = ch.size();
  const int me = ch.rank();
  const auto np = static_cast<std::size_t>(p);
  const std::size_t es = elem_size;
  const auto* sbase = static_cast<const std::byte*>(sendbuf);
  auto* rbase = static_cast<std::byte*>(recvbuf);
  // The block sizes: the largest Σ_j ⌈|m_ij|/p⌉ (what a PE sends to each k) and the largest
  // Σ_i ⌈|m_ij|/p⌉ (what each k forwards to a PE j), over all PEs.
  const MutableBytes maxima = ch.scratch(2 * sizeof(std::uint64_t));
  // Piece sizes ⌈|m|/p⌉ of this PE's outgoing (m_(me)j) and incoming (m_i(me)) messages.
  std::vector<std::size_t> spiece(np), rpiece(np);
  std::uint64_t local[2] = {0, 0};
  for (std::size_t j = 0; j < np; ++j) {
    spiece[j] = (scounts[j] + np - 1) / np;
    rpiece[j] = (rcounts[j] + np - 1) / np;
    local[0] += spiece[j];
    local[1] += rpiece[j];
  }
  std::memcpy(maxima.data(), local, sizeof local);
  Task<> agree = two_phase_agree_max(ch, maxima);
  co_await agree;
  std::uint64_t global[2] = {local[0], local[1]};
  if (!ch.phantom()) std::memcpy(global, maxima.data(), sizeof global);
  const std::size_t fields = np * sizeof(std::uint64_t);
  const std::size_t b1 = fields + static_cast<std::size_t>(global[0]) * es;
  const std::size_t b2 = static_cast<std::size_t>(global[1]) * es;
  // Steps above the agreement's (0 … ⌈log p⌉-1) keep the two exchanges apart from it.
  constexpr std::uint32_t kPhase1 = 0x4000;
  constexpr std::uint32_t kPhase2 = 0x4001;
  const bool real = !ch.phantom();  // phantom: sizes only, no fields to read

  // Phase 1, direct delivery in the circular order; each block is built just before it goes
  // and taken apart as soon as it arrives.
  // As forwarder, this PE appends the pieces for final receiver j to fwd[j] in arrival order:
  // its own first, then those of me-1, me-2, … (the receiver recomputes that order).
  const MutableBytes out1 = ch.scratch(b1);
  const MutableBytes in1 = ch.scratch(b1);
  std::vector<std::vector<std::byte>> fwd(np);
  for (int t = 0; t < p; ++t) {
    const int to = ring.mod(me + t);
    const int from = ring.mod(me - t);
    const auto uto = static_cast<std::size_t>(to);
    if (real) {  // block for `to`: the p fields, then m_(me)0(to) m_(me)1(to) …, padded to B1
      std::size_t used = fields;
      for (std::size_t j = 0; j < np; ++j) {
        const Piece pc = piece_of(scounts[j], spiece[j], uto);
        const std::uint64_t len = pc.end - pc.begin;
        std::memcpy(out1.data() + j * sizeof len, &len, sizeof len);
        if (len == 0) continue;
        ch.copy(out1.subspan(used, len * es),
                ConstBytes(sbase + (sdispls[j] + pc.begin) * es, len * es));
        used += len * es;
      }
    }
    if (t == 0) {
      ch.copy(in1, out1);
    } else {
      Transfer t_out = ch.send(to, out1, kPhase1);
      Transfer t_in = ch.recv(from, in1, kPhase1);
      co_await t_out;
      co_await t_in;
    }
    if (!real) continue;
    std::size_t off = fields;
    for (std::size_t j = 0; j < np; ++j) {
      std::uint64_t len = 0;
      std::memcpy(&len, in1.data() + j * sizeof len, sizeof len);
      if (len == 0) continue;
      const auto* piece = in1.data() + off;
      fwd[j].insert(fwd[j].end(), piece, piece + static_cast<std::size_t>(len) * es);
      off += static_cast<std::size_t>(len) * es;
    }
  }

  // Phase 2: forwarder k sends fwd[j] to j. Final receiver j takes block k apart in k's
  // arrival order i = k, k-1, …, with the piece sizes from its own counts.
  const MutableBytes out2 = ch.scratch(b2);
  const MutableBytes in2 = ch.scratch(b2);
  for (int t = 0; t < p; ++t) {
    const int to = ring.mod(me + t);
    const int from = ring.mod(me - t);
    const auto uto = static_cast<std::size_t>(to);
    if (real && !fwd[uto].empty()) ch.copy(out2.first(fwd[uto].size()), fwd[uto]);  // pad to B2
    if (t == 0) {
      ch.copy(in2, out2);
    } else {
      Transfer t_out = ch.send(to, out2, kPhase2);
      Transfer t_in = ch.recv(from, in2, kPhase2);
      co_await t_out;
      co_await t_in;
    }
    if (!real) continue;
    const auto k = static_cast<std::size_t>(from);
    std::size_t off = 0;
    std::size_t i = k;  // k's arrival order: k, k-1, …, 0, p-1, …, k+1
    for (std::size_t u = 0; u < np; ++u, i = (i == 0 ? np - 1 : i - 1)) {
      const Piece pc = piece_of(rcounts[i], rpiece[i], k);
      const std::size_t bytes = (pc.end - pc.begin) * es;
      if (bytes == 0) continue;
      ch.copy(MutableBytes(rbase + (rdispls[i] + pc.begin) * es, bytes), in2.subspan(off, bytes));
      off += bytes;
    }
  }
}

namespace {
Task<> run(Channel& ch, const CollArgs& a) {
  return alltoallv_two_phase(ch, a.sendbuf, a.recvbuf, a.elem_size, a.scounts, a.sdispls, a.counts,
                             a.displs);
}
double cost(const CostQuery& q) {
  // n bytes per pair (uniform), elements of at most 16 bytes: B1 ≤ 8p + n + 16p, B2 ≤ n + 16p.
  const double t_agree = BinomialTree::ceil_log2(q.p) * (q.m.alpha + 16 * (q.m.beta + q.m.gamma));
  const double b1 = 8.0 * q.p + q.n + 16.0 * q.p;
  const double b2 = q.n + 16.0 * q.p;
  return t_agree + (q.p - 1) * (2 * q.m.alpha + q.m.beta * (b1 + b2));
}
}  // namespace

const Algorithm kAlltoallvTwoPhase{
    .name = "two_phase",
    .coll = Collective::alltoallv,
    .reference = "Sanders et al. §13.6.3, eq. (13.5) (two-phase h-relation, Fig. 13.15)",
    .formula = "⌈log p⌉(α + 16(β+γ)) + 2(p-1)α + (p-1)β(B1 + B2), B ≤ h/p + 2p; ≈ 2pα + 2hβ",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost,
    .optimal_k = nullptr,
    .run = run,
    .test = "alltoall_test.AlltoallvTwoPhaseMatchesSection13_6_3",
    .written_share = written_all,
    .exchange_share = exchange_all,
};

}  // namespace fabcoll::algorithms
