// Pairwise-exchange reduce-scatter. MPICH's long-message reduce-scatter (002_…: "pairwise
// exchange (> 512 KB; p-1 steps; rank+i at step i)"):
//   T(n, p) = (p - 1)(α + (n/p)(β + γ)) = (p-1)α + (p-1)/p·n(β + γ)      n = p·m bytes
// Preconditions: none (any p). Non-commutative operators keep rank order; then the
// contributions of higher ranks, which arrive highest first, are summed apart and appended
// last, which may add one γm to the time.
//
//   step s: rank r sends its block for r+s to r+s and receives block r from r-s
//   p = 4, step 1: 0→1→2→3→0   step 2: 0→2, 1→3, 2→0, 3→1   step 3: 0→3→2→1→0
//   after p-1 steps rank r has every x_i[r] folded into its result
#include "algorithms/algorithms.hpp"
#include "patterns/ring.hpp"

namespace fabcoll::algorithms {

Task<> reduce_scatter_pairwise(Channel& ch, ConstBytes send, MutableBytes recv, std::size_t block,
                               const ReduceOp& op) {
  const Ring ring{ch.size()};
  const int p = ch.size();
  const int r = ch.rank();
  auto x = [&](int j) { return send.subspan(static_cast<std::size_t>(j) * block, block); };
  // acc = x_lo ⊕ … ⊕ x_r over the ranks received so far; high = x_{r+1..} (non-commutative only).
  const MutableBytes acc = ch.scratch(block);
  const MutableBytes tmp = ch.scratch(block);
  const MutableBytes high = ch.scratch(block);
  bool have_high = false;
  // acc is x_r until the first block is folded in: that fold reads x_r from `send` and writes
  // acc, with no copy of x_r first. `fabcoll-bench reduce_scatter_block --algorithm A -m
  // 65536:2097152 -i 300 --datatype double`, p = 2 on shm (vector sizes): with the copy 80.0 µs
  // at 1 MiB and 203.8 at 2 MiB, the ring 58.9 and 129.5; without it 62.3 and 132.1 (the ring
  // 68.8 and 125.7 in the same launch).
  ConstBytes mine = x(r);  // x_r, then acc once a block is folded into it
  for (int s = 1; s < p; ++s) {
    const int dst = ring.mod(r + s);
    const int src = ring.mod(r - s);
    // Lower sources arrive r-1, r-2, …, 0 and go in front of acc; higher ones arrive p-1, …,
    // r+1 and go in front of `high` (a commutative operator folds everything into acc).
    const bool separate = src > r && !op.commutative();
    const auto step = static_cast<std::uint32_t>(s);
    Transfer out = ch.send(dst, x(dst), step);
    if (separate && !have_high) {
      Transfer in = ch.recv(src, high, step);
      co_await out;
      co_await in;
      have_high = true;
      continue;
    }
    // Combined as it lands (recv_combine); sends read `send`, never acc or high.
    const MutableBytes into = separate ? high : acc;
    const ConstBytes other = separate ? ConstBytes(high) : mine;
    RecvCombine in =
        ch.recv_combine(src, tmp, op, other, into, /*received_left=*/separate || src < r, step);
    if (!separate) mine = acc;
    co_await out;
    co_await in;
  }
  if (have_high) {
    Transfer work = ch.combine_into(op, mine, high, acc);  // acc = mine ⊕ high
    co_await work;
    mine = acc;
  }
  ch.copy(recv, mine);  // last: recv may alias block 0 of send (in-place form)
}

namespace {
Task<> run(Channel& ch, const CollArgs& a) {
  const auto np = static_cast<std::size_t>(ch.size());
  return reduce_scatter_pairwise(ch, bytes_of(a.sendbuf, np * a.bytes()),
                                 bytes_of(a.recvbuf, a.bytes()), a.bytes(), a.op);
}
double cost(const CostQuery& q) {
  const double block = q.n;  // CostQuery n = bytes per block; the text's n is p·block
  return (q.p - 1) * (q.m.alpha + block * (q.m.beta + q.m.gamma));
}
}  // namespace

const Algorithm kReduceScatterPairwise{
    .name = "pairwise",
    .coll = Collective::reduce_scatter_block,
    .reference = "MPICH reduce-scatter, pairwise exchange (002_…)",
    .formula = "(p-1)α + (p-1)/p·n(β + γ), n = p·m, m = bytes per block (CostQuery n)",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost,
    .optimal_k = nullptr,
    .run = run,
    .test = "alltoall_test.ReduceScatterPairwiseMatchesMpich",
    .exchange_share = exchange_all,
};

}  // namespace fabcoll::algorithms
