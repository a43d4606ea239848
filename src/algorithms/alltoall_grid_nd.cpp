// Grid all-to-all on a d-dimensional grid k_1 × … × k_d = p: the hypercube algorithm
// (§13.6.2) generalised as Sanders et al. Exercise 13.11 asks, with direct delivery inside each
// dimension. In phase i every PE exchanges, within its line along dimension i, the p/k_i
// messages bound for each of the other k_i - 1 line members (a circular direct exchange), so
//   T(n, p) = Σ_i (k_i - 1)(α + βnp/k_i) + δnp(2 - 1/k_i)   n = bytes per block, p = k_1·…·k_d
// (δ, the model's local-copy term, which the texts leave out: each phase copies the p/k_i blocks
// that stay and packs and unpacks the others)
// which is at most the exercise's α Σ k_i + βdnp. d = 1 is the direct (circular) exchange
// (p - 1)(α + βn); all k_i = 2 is the hypercube's log p (α + βnp/2). The sides are the ordered
// factorisation of p that minimises T (computed by alltoall_grid_nd_dims; a prime p is 1-D).
// Preconditions: none (any p).
// Loop invariant (as in the hypercube algorithm): before phase i the message m_xj sits on the
// PE whose coordinates in dimensions < i are j's and whose others are x's, in the slot whose
// key has x's coordinates in dimensions < i and j's in the others. After phase d: slot x = m_xi.
//
//   p = 12, k = (3, 4): rank = c_0 + 3·c_1
//   phase 0 (lines of 3):  0↔1↔2, 3↔4↔5, …  each pair trades the 4 messages for the other's column
//   phase 1 (lines of 4):  0↔3↔6↔9, …       each pair trades the 3 messages for the other's row
#include <algorithm>

#include "algorithms/algorithms.hpp"
#include "patterns/ring.hpp"

namespace fabcoll::algorithms {

namespace {

/// The grid k_0 × … × k_{d-1} in mixed radix: rank = Σ c_i · stride_i, dimension 0 fastest.
/// The slots of a PE's p messages are keyed the same way.
struct GridLine {
  int k;       // side length along this dimension
  int stride;  // product of the sides of the lower dimensions
  int p;

  [[nodiscard]] int coord(int rank) const { return (rank / stride) % k; }
  /// The line member with coordinate c in this dimension (other coordinates of `rank`).
  [[nodiscard]] int member(int rank, int c) const { return rank + (c - coord(rank)) * stride; }
  /// Calls f(first slot, run length) for the runs of slots whose key has coordinate c here, in
  /// ascending key order; every PE enumerates them alike, so packed positions match up.
  template <class F>
  void for_each_run(int c, F&& f) const {
    const int outer = p / (stride * k);
    for (int hi = 0; hi < outer; ++hi) f(hi * stride * k + c * stride, stride);
  }
};

/// One phase along a side of k: (k - 1)(α + βnp/k), and δ for its copies: the p/k blocks that
/// stay, and the (k - 1)·p/k packed and unpacked.
double side_cost(int k, int p, double n, const CostModel& m) {
  const double share = n * static_cast<double>(p / k);
  return (k - 1) * (m.alpha + m.beta * share) + m.copy * share * (2 * k - 1);
}

/// Σ (k_i - 1)(α + βnp/k_i) + δnp(2 - 1/k_i) for the given sides (p = 1: the copy, δn).
double grid_nd_cost(std::span<const int> dims, int p, double n, const CostModel& m) {
  if (dims.empty()) return m.copy * n * p;
  double t = 0;
  for (const int k : dims) t += side_cost(k, p, n, m);
  return t;
}

/// Best completion of a factorisation: the cheapest multiset of sides (each a divisor of rem,
/// at most maxk, non-increasing) with product rem. The cost is a sum over sides, so the order
/// of the sides does not matter and non-increasing multisets cover every ordered one.
void best_sides(const std::vector<int>& divisors, int rem, int maxk, int p, double n,
                const CostModel& m, std::vector<int>& cur, double cur_cost, double& best,
                std::vector<int>& best_dims) {
  if (rem == 1) {
    if (cur_cost < best) {
      best = cur_cost;
      best_dims = cur;
    }
    return;
  }
  for (auto it = divisors.rbegin(); it != divisors.rend(); ++it) {
    const int k = *it;
    if (k < 2 || k > maxk || rem % k != 0) continue;
    const double step = side_cost(k, p, n, m);
    cur.push_back(k);
    best_sides(divisors, rem / k, k, p, n, m, cur, cur_cost + step, best, best_dims);
    cur.pop_back();
  }
}

}  // namespace

std::vector<int> alltoall_grid_nd_dims(int p, double n, const CostModel& m) {
  if (p <= 1) return {};
  std::vector<int> divisors;
  for (int x = 1; x <= p / x; ++x) {
    if (p % x != 0) continue;
    divisors.push_back(x);
    if (x != p / x) divisors.push_back(p / x);
  }
  std::sort(divisors.begin(), divisors.end());
  std::vector<int> cur;
  std::vector<int> best_dims{p};
  double best = grid_nd_cost(best_dims, p, n, m);
  best_sides(divisors, p, p, p, n, m, cur, 0.0, best, best_dims);
  return best_dims;
}

double alltoall_grid_nd_cost(std::span<const int> dims, int p, double n, const CostModel& m) {
  return grid_nd_cost(dims, p, n, m);
}

Task<> alltoall_grid_nd(Channel& ch, ConstBytes send, MutableBytes recv, std::size_t block,
                        std::vector<int> dims) {
  const int p = ch.size();
  const int i = ch.rank();
  const auto np = static_cast<std::size_t>(p);
  const int d = static_cast<int>(dims.size());
  if (d == 0) {  // p = 1
    ch.copy(recv.first(np * block), send.first(np * block));
    co_return;
  }
  std::size_t most = 0;  // the largest message: p / min k_i blocks
  for (const int k : dims) most = std::max(most, np / static_cast<std::size_t>(k));
  // Phase 0 reads send; the phases write alternately into spare and recv so that the last one
  // writes recv (a phase must not overwrite slots it has yet to send).
  const MutableBytes spare = d >= 2 ? ch.scratch(np * block) : MutableBytes{};
  const MutableBytes out = ch.scratch(most * block);
  const MutableBytes in = ch.scratch(most * block);
  ConstBytes from_buf = send;
  int stride = 1;
  for (int dim = 0; dim < d; ++dim) {
    const GridLine line{dims[static_cast<std::size_t>(dim)], stride, p};
    const Ring ring{line.k};
    const MutableBytes to_buf = (d - 1 - dim) % 2 == 0 ? recv : spare;
    const int me = line.coord(i);
    const std::size_t bytes = np / static_cast<std::size_t>(line.k) * block;
    auto slots = [&](auto buf, int first, int len) {
      return buf.subspan(static_cast<std::size_t>(first) * block,
                         static_cast<std::size_t>(len) * block);
    };
    // The messages that stay in my line position keep their slots.
    line.for_each_run(me, [&](int first, int len) {
      ch.copy(slots(to_buf, first, len), slots(from_buf, first, len));
    });
    for (int t = 1; t < line.k; ++t) {
      const int to = ring.mod(me + t);
      const int from = ring.mod(me - t);
      std::size_t q = 0;  // pack the slots keyed `to` here: they become slots keyed `me` there
      line.for_each_run(to, [&](int first, int len) {
        const std::size_t len_bytes = static_cast<std::size_t>(len) * block;
        ch.copy(out.subspan(q, len_bytes), slots(from_buf, first, len));
        q += len_bytes;
      });
      Transfer t_out =
          ch.send(line.member(i, to), out.first(bytes), static_cast<std::uint32_t>(dim));
      Transfer t_in =
          ch.recv(line.member(i, from), in.first(bytes), static_cast<std::uint32_t>(dim));
      co_await t_out;
      co_await t_in;
      q = 0;  // what `from` sent me takes the slots keyed `from`
      line.for_each_run(from, [&](int first, int len) {
        const std::size_t len_bytes = static_cast<std::size_t>(len) * block;
        ch.copy(slots(to_buf, first, len), in.subspan(q, len_bytes));
        q += len_bytes;
      });
    }
    from_buf = to_buf;
    stride *= line.k;
  }
}

namespace {
Task<> run(Channel& ch, const CollArgs& a) {
  const auto np = static_cast<std::size_t>(ch.size());
  return alltoall_grid_nd(
      ch, bytes_of(a.sendbuf, np * a.bytes()), bytes_of(a.recvbuf, np * a.bytes()), a.bytes(),
      alltoall_grid_nd_dims(ch.size(), static_cast<double>(a.bytes()), ch.model()));
}
double cost(const CostQuery& q) {
  return grid_nd_cost(alltoall_grid_nd_dims(q.p, q.n, q.m), q.p, q.n, q.m);
}
}  // namespace

const Algorithm kAlltoallGridNd{
    .name = "grid_nd",
    .coll = Collective::alltoall,
    .reference = "Sanders et al. §13.6.2, Exercise 13.11 (p = k_1·…·k_d grid)",
    .formula =
        "Σ_i (k_i-1)(α + βnp/k_i) + δnp(2 - 1/k_i), p = k_1·…·k_d minimising it; "
        "n = bytes per block",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost,
    .optimal_k = nullptr,
    .run = run,
    .test = "alltoall_grid_nd_test.GridNdMatchesExercise13_11",
    .written_share = written_all,
    .exchange_share = exchange_all,
};

}  // namespace fabcoll::algorithms
