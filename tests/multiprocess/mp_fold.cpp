// Receive-and-combine (Channel::recv_combine) across real processes: on shm a received message
// is combined into the result as it lands (ring fragments straight from the frame, CMA reads in
// chunks). Every reduce, all-reduce and reduce-scatter algorithm that uses it, forced one by one,
// with sizes below and above the CMA threshold and not multiples of the fold chunk, in place and
// not, with sums and with a non-commutative operator (2x2 matrix products: a swapped operand order
// gives another product), checked against a serial reference each rank computes locally.
//
//   mp_fold          (run under fabcoll-run -n P --transport shm)
#include <fabcoll/fabcoll.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "support/matrix2x2.hpp"
#include "support/mp_checks.hpp"

namespace {

using namespace fabcoll::testing::mp;  // g_rank, g_size, g_failures, ok

/// Reports the first wrong element of a check (one line per check, not per element).
template <class T>
void expect_equal(const std::vector<T>& got, const std::vector<T>& want, const std::string& what) {
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (got[i] != want[i]) {
      std::fprintf(stderr, "rank %d: %s: wrong value at %zu of %zu\n", g_rank, what.c_str(), i,
                   want.size());
      ++g_failures;
      return;
    }
  }
}

double value(int rank, std::size_t i) {
  return static_cast<double>((rank * 7 + static_cast<int>(i % 1000) * 3) % 11 + 1);
}

using fabcoll::testing::matmul2x2;  // inout = in · inout (MPI order: `in` is the lower ranks')

std::vector<std::uint32_t> matrices(int rank, std::size_t count) {
  std::vector<std::uint32_t> m(count);
  for (std::size_t i = 0; i + 3 < count; i += 4) {
    m[i] = 1;
    m[i + 1] = static_cast<std::uint32_t>(rank + 1) + static_cast<std::uint32_t>(i % 3);
    m[i + 2] = static_cast<std::uint32_t>(rank % 3) + 1;
    m[i + 3] = 1u + static_cast<std::uint32_t>(i % 5 == 0);
  }
  return m;
}

/// M_0 · M_1 · … · M_{p-1}, the rank-ordered product.
std::vector<std::uint32_t> product(int p, std::size_t count) {
  std::vector<std::uint32_t> acc = matrices(p - 1, count);
  for (int r = p - 2; r >= 0; --r) {
    const std::vector<std::uint32_t> m = matrices(r, count);
    matmul2x2(m.data(), acc.data(), count, FC_INT32);
  }
  return acc;
}

enum class Coll { reduce, allreduce, reduce_scatter };

/// reduce_scatter_block: rank me gets block me of the combined vectors, whose element k is
/// element k of value()/matrices() over p blocks.
void run_reduce_scatter(fc_comm_t comm, const std::string& tag, std::size_t doubles,
                        std::size_t ints, fc_op_t matop) {
  const int p = g_size;
  const int me = g_rank;
  const auto up = static_cast<std::size_t>(p);
  const auto ume = static_cast<std::size_t>(me);
  std::vector<double> mine(doubles * up);
  for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = value(me, i);
  std::vector<double> sum(doubles, 0);
  for (std::size_t i = 0; i < doubles; ++i)
    for (int r = 0; r < p; ++r) sum[i] += value(r, ume * doubles + i);
  std::vector<double> out(doubles, -1);
  if (ok(fc_reduce_scatter_block(mine.data(), out.data(), doubles, FC_DOUBLE, FC_SUM, comm), tag))
    expect_equal(out, sum, "reduce_scatter_block sum " + tag);
  std::vector<double> inplace = mine;
  if (ok(fc_reduce_scatter_block(FC_IN_PLACE, inplace.data(), doubles, FC_DOUBLE, FC_SUM, comm),
         tag)) {
    inplace.resize(doubles);
    expect_equal(inplace, sum, "reduce_scatter_block sum in place " + tag);
  }
  if (matop == FC_OP_NULL) return;
  const std::vector<std::uint32_t> mats = matrices(me, ints * up);
  std::vector<std::uint32_t> prod = product(p, ints * up);
  prod.erase(prod.begin(), prod.begin() + static_cast<std::ptrdiff_t>(ume * ints));
  prod.resize(ints);
  std::vector<std::uint32_t> mout(ints, 7);
  if (ok(fc_reduce_scatter_block(mats.data(), mout.data(), ints, FC_INT32, matop, comm), tag))
    expect_equal(mout, prod, "reduce_scatter_block matrix product " + tag);
}

void run(fc_comm_t comm, Coll coll, const std::string& alg, fc_op_t matop) {
  const int p = g_size;
  const int me = g_rank;
  // Bytes: one element; below the CMA threshold (32 KiB); just above it; 560 KB (a partial
  // 1 MiB fold chunk); 2.4 MB (two whole chunks and a partial one; the ctest entries also run
  // smaller chunks, FABCOLL_SHM_FOLD_CHUNK). Matrix counts are multiples of
  // 64 int32 so that the halving algorithms (which split at element boundaries into up to 16
  // blocks) never cut a matrix in two (16 cut them at p = 8: a failure of the test, not of
  // the library).
  for (const std::size_t doubles : {std::size_t{1}, std::size_t{1000}, std::size_t{4097},
                                    std::size_t{70001}, std::size_t{300007}}) {
    const std::string tag = alg + " n=" + std::to_string(doubles * 8) + "B";
    std::vector<double> mine(doubles);
    std::vector<double> sum(doubles, 0);
    for (std::size_t i = 0; i < doubles; ++i) {
      mine[i] = value(me, i);
      for (int r = 0; r < p; ++r) sum[i] += value(r, i);
    }
    const std::size_t ints = (doubles * 2 + 63) / 64 * 64;
    const std::vector<std::uint32_t> mats = matrices(me, ints);
    if (coll == Coll::reduce_scatter) {
      run_reduce_scatter(comm, tag, doubles, ints, matop);
      continue;
    }
    const std::vector<std::uint32_t> prod = product(p, ints);
    if (coll == Coll::allreduce) {
      std::vector<double> out(doubles, -1);
      if (ok(fc_allreduce(mine.data(), out.data(), doubles, FC_DOUBLE, FC_SUM, comm), tag))
        expect_equal(out, sum, "allreduce sum " + tag);
      std::vector<double> inplace = mine;
      if (ok(fc_allreduce(FC_IN_PLACE, inplace.data(), doubles, FC_DOUBLE, FC_SUM, comm), tag))
        expect_equal(inplace, sum, "allreduce sum in place " + tag);
      if (matop == FC_OP_NULL) continue;
      std::vector<std::uint32_t> mout(ints, 7);
      if (ok(fc_allreduce(mats.data(), mout.data(), ints, FC_INT32, matop, comm), tag))
        expect_equal(mout, prod, "allreduce matrix product " + tag);
      std::vector<std::uint32_t> minplace = mats;
      if (ok(fc_allreduce(FC_IN_PLACE, minplace.data(), ints, FC_INT32, matop, comm), tag))
        expect_equal(minplace, prod, "allreduce matrix product in place " + tag);
      continue;
    }
    for (const int root : {0, p - 1}) {
      const std::string rt = tag + " root=" + std::to_string(root);
      std::vector<double> out(doubles, -1);
      if (ok(fc_reduce(mine.data(), out.data(), doubles, FC_DOUBLE, FC_SUM, root, comm), rt) &&
          me == root)
        expect_equal(out, sum, "reduce sum " + rt);
      std::vector<double> inplace = mine;
      if (ok(fc_reduce(me == root ? FC_IN_PLACE : inplace.data(), inplace.data(), doubles,
                       FC_DOUBLE, FC_SUM, root, comm),
             rt) &&
          me == root)
        expect_equal(inplace, sum, "reduce sum in place " + rt);
      std::vector<std::uint32_t> mout(ints, 7);
      if (ok(fc_reduce(mats.data(), mout.data(), ints, FC_INT32, matop, root, comm), rt) &&
          me == root)
        expect_equal(mout, prod, "reduce matrix product " + rt);
      std::vector<std::uint32_t> minplace = mats;
      if (ok(fc_reduce(me == root ? FC_IN_PLACE : minplace.data(), minplace.data(), ints, FC_INT32,
                       matop, root, comm),
             rt) &&
          me == root)
        expect_equal(minplace, prod, "reduce matrix product in place " + rt);
    }
  }
}

}  // namespace

int main() {
  fc_comm_t world = nullptr;
  fc_context_t ctx = start(world);
  if (ctx == nullptr) return 1;
  fc_op_t matop = FC_OP_NULL;
  ok(fc_op_create(matmul2x2, /*commutative=*/0, &matop), "fc_op_create");
  struct Case {
    Coll coll;
    const char* alg;
    bool commutative_only;
  };
  const Case cases[] = {
      {Coll::reduce, "binomial", false},
      {Coll::reduce, "naive", false},
      {Coll::reduce, "rabenseifner", false},
      {Coll::reduce, "hybrid", false},  // no fold: combines from the caller's input
      {Coll::allreduce, "rabenseifner", false},
      {Coll::allreduce, "hybrid", false},
      {Coll::allreduce, "recursive_doubling", false},
      {Coll::allreduce, "ring", true},
      {Coll::reduce_scatter, "pairwise", false},
      {Coll::reduce_scatter, "recursive_halving", true},
  };
  for (const Case& c : cases) {
    const char* var = c.coll == Coll::reduce      ? "FABCOLL_REDUCE_ALGORITHM"
                      : c.coll == Coll::allreduce ? "FABCOLL_ALLREDUCE_ALGORITHM"
                                                  : "FABCOLL_REDUCE_SCATTER_BLOCK_ALGORITHM";
    const char* name = c.coll == Coll::reduce      ? "reduce "
                       : c.coll == Coll::allreduce ? "allreduce "
                                                   : "reduce_scatter_block ";
    // A new communicator reads the FABCOLL_<COLL>_ALGORITHM override as it is now.
    setenv(var, c.alg, 1);
    fc_comm_t comm = nullptr;
    if (!ok(fc_comm_split(world, 0, g_rank, &comm), "comm_split")) continue;
    run(comm, c.coll, std::string(name) + c.alg, c.commutative_only ? FC_OP_NULL : matop);
    fc_comm_free(&comm);
  }
  fc_op_free(&matop);
  const int rc = fc_finalize(ctx);
  if (rc != FC_SUCCESS)
    std::fprintf(stderr, "rank %d: fc_finalize: %s\n", g_rank, fc_last_error_message());
  if (g_failures == 0) std::printf("mp_fold: rank %d of %d ok\n", g_rank, g_size);
  return g_failures == 0 && rc == FC_SUCCESS ? 0 : 1;
}
