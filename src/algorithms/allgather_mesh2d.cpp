// 2-D mesh all-gather (all-to-all broadcast on a mesh). Grama et al. ch. 4, Algorithm 4.6
// (004_…, ALL_TO_ALL_BC_MESH): a ring all-gather (Algorithm 4.4) along every row, then one along
// every column with the row's √p blocks as one message:
//   T(n, p) = 2(√p - 1) α + (p - 1) n β         for a square mesh (exact)
//   rows × cols = p in general (patterns/mesh2d.hpp): T = (rows + cols - 2) α + (p - 1) n β
// Preconditions: none (a prime p is a 1 × p mesh, i.e. the ring).
//
//   phase 1 (rows, 1 block):      0→1→2→0   3→4→5→3   6→7→8→6
//   phase 2 (columns, a row):     0→3→6→0   1→4→7→1   2→5→8→2
//   after phase 1 a rank holds its row; after phase 2 every row
#include "algorithms/algorithms.hpp"
#include "patterns/mesh2d.hpp"
#include "patterns/ring.hpp"

namespace fabcoll::algorithms {

Task<> allgather_mesh2d(Channel& ch, MutableBytes all, std::size_t n, ConstBytes own) {
  const Mesh2d mesh{ch.size()};
  const int me = ch.rank();
  const int row = mesh.row(me);
  const int col = mesh.col(me);
  const Ring along_row{mesh.cols()};
  const Ring along_col{mesh.rows()};
  // Phase 1: ring over the columns of my row, one block per step.
  for (int s = 0; s + 1 < mesh.cols(); ++s) {
    const auto out_at = static_cast<std::size_t>(mesh.rank(row, along_row.send_block(col, s)));
    const auto in_at = static_cast<std::size_t>(mesh.rank(row, along_row.recv_block(col, s)));
    const auto step = static_cast<std::uint32_t>(s);
    // Step 0 sends the own block: from `own` when the caller has it apart (all-gather's copy
    // of it is data this rank has just written).
    const ConstBytes block =
        s == 0 && own.size() == n ? own : ConstBytes(all.subspan(out_at * n, n));
    Transfer out = ch.send(mesh.rank(row, along_row.right(col)), block, step);
    Transfer in = ch.recv(mesh.rank(row, along_row.left(col)), all.subspan(in_at * n, n), step);
    co_await in;
    co_await out;
  }
  // Phase 2: ring over the rows of my column, a whole row (cols blocks, contiguous) per step.
  const auto row_bytes = static_cast<std::size_t>(mesh.cols()) * n;
  for (int s = 0; s + 1 < mesh.rows(); ++s) {
    const auto out_row = static_cast<std::size_t>(along_col.send_block(row, s));
    const auto in_row = static_cast<std::size_t>(along_col.recv_block(row, s));
    const auto step = static_cast<std::uint32_t>(mesh.cols() + s);
    Transfer out = ch.send(mesh.rank(along_col.right(row), col),
                           all.subspan(out_row * row_bytes, row_bytes), step);
    Transfer in = ch.recv(mesh.rank(along_col.left(row), col),
                          all.subspan(in_row * row_bytes, row_bytes), step);
    co_await in;
    co_await out;
  }
}

namespace {
Task<> run(Channel& ch, const CollArgs& a) {
  const std::size_t n = a.bytes();
  return allgather_mesh2d(ch, bytes_of(a.recvbuf, n * static_cast<std::size_t>(ch.size())), n,
                          own_block_of(a, n));
}
double cost(const CostQuery& q) {
  const Mesh2d mesh{q.p};
  return (mesh.rows() + mesh.cols() - 2) * q.m.alpha + (q.p - 1) * q.n * q.m.beta;
}
}  // namespace

namespace {
// Each phase's first step sends the own block (input) and the rest received blocks: of
// (p − 1)n bytes, n per phase of more than one rank is input. (Phase 1 sends it from the
// caller's send buffer; phase 2's row holds all-gather's copy of it unless called in place,
// the sim's and this share's case.)
double written_share(const CostQuery& q) {
  if (q.p < 2) return 0;
  const Mesh2d mesh{q.p};
  const double input = (mesh.cols() > 1 ? 1.0 : 0.0) + (mesh.rows() > 1 ? 1.0 : 0.0);
  return 1 - input / (q.p - 1.0);
}
}  // namespace

const Algorithm kAllgatherMesh2d{
    .name = "mesh2d",
    .coll = Collective::allgather,
    .reference = "Grama et al. ch. 4, Algorithm 4.6 (all-to-all broadcast on a 2-D mesh)",
    .formula = "2(√p − 1)α + (p − 1)nβ; (rows + cols − 2)α + (p − 1)nβ for rows × cols = p",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost,
    .optimal_k = nullptr,
    .run = run,
    .test = "gather_barrier_test.AllgatherMesh2dMatchesAlgorithm4_6",
    .written_share = written_share,
    .exchange_share = exchange_all,
};

}  // namespace fabcoll::algorithms
