// Grid all-to-all: the hypercube algorithm generalised to a 2-D grid of r × c PEs with direct
// delivery inside each dimension. Sanders et al. Exercise 13.11 (p = k_1·k_2: time
// α Σ k_i + β d n p at most); Grama et al. ch. 4 (003_…, all-to-all personalized on a 2-D
// mesh: first along the rows, grouped by destination column, then along the columns):
//   T(n, p) = (c - 1)(α + βnr) + (r - 1)(α + βnc) + δn(2p + r + c)   n = bytes per block, p = r·c
// (δ, the model's local-copy term, which the texts leave out: each phase packs every block and
// copies its own share once more)
// with r the largest divisor of p not above √p (p prime: r = 1, one direct phase).
// Preconditions: none (any p).
//
//   rank = row·c + col
//   phase 1 (rows):    PE (a, b) → (a, b'): the r messages for column b'   (circular order)
//   phase 2 (columns): PE (a, b) → (x, b):  the c messages for PE (x, b), one per row source
#include <algorithm>

#include "algorithms/algorithms.hpp"
#include "patterns/ring.hpp"

namespace fabcoll::algorithms {

namespace {
/// Rows of the grid: the largest divisor of p that is at most √p.
int grid_rows(int p) {
  int r = 1;
  for (int x = 1; x * x <= p; ++x)
    if (p % x == 0) r = x;
  return r;
}
}  // namespace

Task<> alltoall_grid(Channel& ch, ConstBytes send, MutableBytes recv, std::size_t block) {
  const int p = ch.size();
  const int r = grid_rows(p);
  const int c = p / r;
  const Ring row_ring{c};
  const Ring col_ring{r};
  const int a = ch.rank() / c;  // my row
  const int b = ch.rank() % c;  // my column
  const auto ur = static_cast<std::size_t>(r);
  const auto uc = static_cast<std::size_t>(c);
  // w[y·r + x] = m_{(a,y),(x,b)}: after phase 1, what my row sent to column b.
  const MutableBytes w = ch.scratch(static_cast<std::size_t>(p) * block);
  const MutableBytes out = ch.scratch(std::max(ur, uc) * block);
  auto blk = [&](auto buf, std::size_t idx) { return buf.subspan(idx * block, block); };

  // Phase 1: along my row, to column b' the messages for PEs (x, b'), x = 0 … r-1.
  for (int t = 0; t < c; ++t) {
    const int to = row_ring.mod(b + t);
    const int from = row_ring.mod(b - t);
    for (std::size_t x = 0; x < ur; ++x)
      ch.copy(blk(out, x), blk(send, x * uc + static_cast<std::size_t>(to)));
    const MutableBytes in = w.subspan(static_cast<std::size_t>(from) * ur * block, ur * block);
    if (t == 0) {
      ch.copy(in, out.first(ur * block));
      continue;
    }
    Transfer t_out = ch.send(a * c + to, out.first(ur * block), 1);
    Transfer t_in = ch.recv(a * c + from, in, 1);
    co_await t_out;
    co_await t_in;
  }
  // Phase 2: along my column, to row x the messages for PE (x, b) from every (a, y).
  for (int t = 0; t < r; ++t) {
    const int to = col_ring.mod(a + t);
    const int from = col_ring.mod(a - t);
    for (std::size_t y = 0; y < uc; ++y)
      ch.copy(blk(out, y), blk(w, y * ur + static_cast<std::size_t>(to)));
    // From row x' come the messages of PEs (x', 0 … c-1): recv blocks x'·c … x'·c + c-1.
    const MutableBytes in = recv.subspan(static_cast<std::size_t>(from) * uc * block, uc * block);
    if (t == 0) {
      ch.copy(in, out.first(uc * block));
      continue;
    }
    Transfer t_out = ch.send(to * c + b, out.first(uc * block), 2);
    Transfer t_in = ch.recv(from * c + b, in, 2);
    co_await t_out;
    co_await t_in;
  }
}

namespace {
Task<> run(Channel& ch, const CollArgs& a) {
  const auto np = static_cast<std::size_t>(ch.size());
  return alltoall_grid(ch, bytes_of(a.sendbuf, np * a.bytes()), bytes_of(a.recvbuf, np * a.bytes()),
                       a.bytes());
}
double cost(const CostQuery& q) {
  const int r = grid_rows(q.p);
  const int c = q.p / r;
  // δ: each phase packs all p blocks, and keeps its own line position's share (r, then c
  // blocks) with one more copy.
  return (c - 1) * (q.m.alpha + q.m.beta * q.n * r) + (r - 1) * (q.m.alpha + q.m.beta * q.n * c) +
         q.m.copy * q.n * (2.0 * q.p + r + c);
}
}  // namespace

const Algorithm kAlltoallGrid{
    .name = "grid",
    .coll = Collective::alltoall,
    .reference = "Sanders et al. Exercise 13.11; Grama et al. ch. 4 (2-D mesh, 003_…)",
    .formula =
        "(c-1)(α + βnr) + (r-1)(α + βnc) + δn(2p + r + c), p = r·c, r ≤ √p; n = bytes per block",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost,
    .optimal_k = nullptr,
    .run = run,
    .test = "alltoall_test.GridMatchesExercise13_11",
    .written_share = written_all,
    .exchange_share = exchange_all,
};

}  // namespace fabcoll::algorithms
