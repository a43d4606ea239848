// Hybrid combine-to-root. van de Geijn, LAPACK Working Note 29, §5, Fig. 6 (the optimal hybrid
// of the two combine-to-root approaches: Version 1's tree reduce and Version 3's recursive
// halving followed by a minimum-spanning-tree gather), with Theorem 1's choice of where to stop
// halving (tuning/lawn29.hpp, shared with the all-reduce hybrid).
//   p = 2^d:  T = Corollary 4 = 2(d-k)α + (1 - 2^-(d-k)) n(2β + γ) + k(α + 2^-(d-k) n(β + γ)),
//             k = the smallest integer with n ≥ 2^(d-k) α / (k(β+γ) + γ), at most d
//             (k = d: binomial reduce, d(α + βn + γn); k = 0: Rabenseifner, Version 3 + gather)
//   other p:  the r = p - 2^⌊log p⌋ surplus ranks first send their whole vectors to their
//             Hypercube partners, which combine: + α + βn + γn; a root that folded gets the
//             result forwarded: + α + βn.
// Preconditions: none; non-commutative operators keep rank order: the cube's dimensions are
// walked from 0 (distance 1) up, the text's directions mirrored as in allreduce_hybrid.cpp, so
// every partial result covers a contiguous block of ranks with the lower block on the left.
//
//   halve (d-k steps):  swap halves with the partner, combine the kept half
//   whole (k steps):    the partner off the root's side sends its piece and stops (tree reduce)
//   gather (d-k steps): pieces travel back up the halving steps to the root's cube position
#include <array>
#include <bit>

#include "algorithms/algorithms.hpp"
#include "patterns/hypercube.hpp"
#include "tuning/lawn29.hpp"

namespace fabcoll::algorithms {

namespace {
// Elements lo .. hi-1 of a vector as bytes.
template <class Span>
Span elems_of(Span buf, std::size_t es, std::size_t lo, std::size_t hi) {
  return buf.subspan(lo * es, (hi - lo) * es);
}
}  // namespace

Task<> reduce_hybrid(Channel& ch, ConstBytes in, MutableBytes out, const ReduceOp& op,
                     std::size_t elem_size, int root, int halvings) {
  const int me = ch.rank();
  const Hypercube cube{ch.size()};
  const int d = cube.dim();
  const std::size_t n = in.size();
  const std::size_t es = elem_size;
  const std::size_t count = es == 0 ? 0 : n / es;
  // Theorem 1: halve in the first d - k steps, send whole pieces in the last k.
  if (halvings < 0 || halvings > d)
    halvings = d - tuning::theorem1_k(static_cast<double>(n), d, ch.model());
  const int root_in_cube = cube.is_extra(root) ? root + 1 : root;
  const int t = cube.vrank(root_in_cube);  // where the result is gathered
  const auto forward_step = static_cast<std::uint32_t>(2 * d + 2);

  // The partial result is written into acc; until the first combine its bytes are still
  // `in`'s, so cur (what this rank sends and combines from) is `in` itself: no copy of the
  // input, and the first sends go from the caller's untouched buffer. At the root `in` may
  // alias `out` (= acc): combine_into takes aliased operands, and a piece is only written once
  // the send of the other piece has completed.
  ConstBytes cur = in;
  if (cube.is_extra(me)) {
    Transfer fold = ch.send(me + 1, in, 0);
    co_await fold;
    if (me == root) {
      Transfer res = ch.recv(root_in_cube, out, forward_step);
      co_await res;
    }
    co_return;
  }
  const MutableBytes acc = me == root ? out : ch.scratch(n);
  const MutableBytes tmp = ch.scratch(n);
  if (cube.has_extra(me)) {
    Transfer fold = ch.recv(me - 1, tmp, 0);
    co_await fold;
    Transfer work = ch.combine_into(op, tmp, cur, acc);  // the extra rank is the lower one
    co_await work;
    cur = acc;
  }

  const int v = cube.vrank(me);
  // lo[j] .. hi[j]: the elements this rank is responsible for before halving step j.
  std::array<std::size_t, 33> lo{};
  std::array<std::size_t, 33> hi{};
  hi[0] = count;
  for (int j = 0; j < halvings; ++j) {
    const int partner = cube.rank(Hypercube::partner(v, j));
    const std::size_t mid = lo[j] + (hi[j] - lo[j]) / 2;
    const bool lower = (v & (1 << j)) == 0;
    lo[j + 1] = lower ? lo[j] : mid;
    hi[j + 1] = lower ? mid : hi[j];
    const auto step = static_cast<std::uint32_t>(1 + j);
    Transfer give =
        ch.send(partner, elems_of(cur, es, lower ? mid : lo[j], lower ? hi[j] : mid), step);
    Transfer take = ch.recv(partner, elems_of(tmp, es, lo[j + 1], hi[j + 1]), step);
    co_await give;
    co_await take;
    const ConstBytes mine = elems_of(cur, es, lo[j + 1], hi[j + 1]);
    const ConstBytes theirs = elems_of(ConstBytes(tmp), es, lo[j + 1], hi[j + 1]);
    const MutableBytes into = elems_of(acc, es, lo[j + 1], hi[j + 1]);
    Transfer work =
        lower ? ch.combine_into(op, mine, theirs, into) : ch.combine_into(op, theirs, mine, into);
    co_await work;
    cur = acc;
  }
  // Whole-piece steps (Fig. 6's first branch): the rank off the target's side sends and stops.
  const std::size_t plo = lo[halvings];
  const std::size_t phi = hi[halvings];
  for (int j = halvings; j < d; ++j) {
    const int bit = 1 << j;
    const int partner = cube.rank(Hypercube::partner(v, j));
    const auto step = static_cast<std::uint32_t>(1 + j);
    if ((v & bit) != (t & bit)) {
      Transfer give = ch.send(partner, elems_of(cur, es, plo, phi), step);
      co_await give;
      co_return;
    }
    Transfer take = ch.recv(partner, elems_of(tmp, es, plo, phi), step);
    co_await take;
    const ConstBytes mine = elems_of(cur, es, plo, phi);
    const ConstBytes theirs = elems_of(ConstBytes(tmp), es, plo, phi);
    const MutableBytes into = elems_of(acc, es, plo, phi);
    Transfer work = (v & bit) == 0 ? ch.combine_into(op, mine, theirs, into)
                                   : ch.combine_into(op, theirs, mine, into);
    co_await work;
    cur = acc;
  }
  // Gather back through the halving steps (the minimum spanning tree of Fig. 5).
  for (int j = halvings - 1; j >= 0; --j) {
    const int bit = 1 << j;
    const int partner = cube.rank(Hypercube::partner(v, j));
    const auto step = static_cast<std::uint32_t>(1 + d + j);
    if ((v & bit) != (t & bit)) {
      Transfer give = ch.send(partner, elems_of(acc, es, lo[j + 1], hi[j + 1]), step);
      co_await give;
      co_return;
    }
    const std::size_t mid = lo[j] + (hi[j] - lo[j]) / 2;
    const bool lower = (v & bit) == 0;
    Transfer take =
        ch.recv(partner, elems_of(acc, es, lower ? mid : lo[j], lower ? hi[j] : mid), step);
    co_await take;
  }
  // Only the rank at cube position t gets here, holding the whole result (p = 1: still `in`).
  if (cur.data() != acc.data()) ch.copy(acc, cur);
  if (me != root) {
    Transfer fwd = ch.send(root, acc, forward_step);
    co_await fwd;
  }
}

namespace {
Task<> run_reduce_hybrid(Channel& ch, const CollArgs& a) {
  const MutableBytes out = a.recvbuf == nullptr ? MutableBytes{} : bytes_of(a.recvbuf, a.bytes());
  // A forced strategy (CollArgs::strategy) halves in its first std::popcount(S) steps.
  const int halvings = a.strategy >= 0 ? std::popcount(static_cast<std::uint32_t>(a.strategy)) : -1;
  return reduce_hybrid(ch, bytes_of(a.sendbuf, a.bytes()), out, a.op, a.elem_size, a.root,
                       halvings);
}
double cost(const CostQuery& q) {
  const Hypercube cube{q.p};
  double t = tuning::corollary4_cost(q.n, cube.dim(), q.m);
  if (!cube.power_of_two()) t += q.m.alpha + (q.m.beta + q.m.gamma) * q.n;
  return t;
}
}  // namespace

namespace {
// LAWN 29's count for the strategy it runs (hybrid_strategy_written_share), no return of the
// result (the root keeps it).
double written_share(const CostQuery& q) {
  return hybrid_strategy_written_share(kReduceHybrid, q, /*returns=*/false, /*gathers=*/true);
}
double exchange_share(const CostQuery& q) {
  return hybrid_strategy_exchange_share(kReduceHybrid, q, /*returns=*/false, /*gathers=*/true);
}
std::uint32_t strategy(const CostQuery& q) {
  return hybrid_run_strategy(kReduceHybrid, q, /*returns=*/false, /*gathers=*/true);
}
double message_bytes(const CostQuery& q) {
  return hybrid_strategy_message_bytes(kReduceHybrid, q, /*returns=*/false, /*gathers=*/true);
}
}  // namespace

const Algorithm kReduceHybrid{
    .name = "hybrid",
    .coll = Collective::reduce,
    .reference = "van de Geijn, LAWN 29 §5, Fig. 6 (combine-to-root), Theorem 1, Corollary 4",
    .formula =
        "2(d-k)α + (1-2^-(d-k))n(2β+γ) + k(α + 2^-(d-k)n(β+γ)), Thm 1's k; "
        "+ α + βn + γn when p ≠ 2^d",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost,
    .optimal_k = nullptr,
    .run = run_reduce_hybrid,
    .test = "bcast_reduce_test.ReduceHybridMatchesCorollary4",
    .message_bytes = message_bytes,
    .written_share = written_share,
    .strategy = strategy,
    .exchange_share = exchange_share,
};

}  // namespace fabcoll::algorithms
