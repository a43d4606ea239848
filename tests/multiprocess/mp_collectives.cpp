// Every collective across real processes (started by fabcoll-run), verified against a serial
// reference that each rank computes locally from the deterministic inputs of all ranks.
//
//   mp_collectives [--die-rank R] [--die-at K] [--allow-unsupported] [--quick]
// --die-rank R --die-at K: rank R kills itself (SIGKILL) before its K-th collective; the
// other ranks must then fail with FC_ERR_PEER or FC_ERR_TIMEOUT (exit code 3) naming the peer.
#include <fabcoll/fabcoll.h>
#ifdef FABCOLL_MP_FROM_MPI
#include <fabcoll/fabcoll_mpi.h>  // this build initialises fabcoll from MPI_COMM_WORLD
#endif

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

int g_rank = 0;
int g_size = 1;
int g_die_rank = -1;
int g_die_at = -1;
int g_calls = 0;
bool g_allow_unsupported = false;
int g_failures = 0;
int g_unsupported = 0;

double value(int rank, std::size_t i) {
  return static_cast<double>((rank * 7 + static_cast<int>(i % 1000) * 3) % 11 + 1);
}

/// Checks an fc_* return code; exits 3 on a peer failure / timeout (the dead-peer test).
bool ok(int rc, const char* what) {
  if (++g_calls == g_die_at && g_rank == g_die_rank) std::raise(SIGKILL);
  if (rc == FC_SUCCESS) return true;
  if (rc == FC_ERR_UNSUPPORTED && g_allow_unsupported) {
    ++g_unsupported;
    return false;
  }
  std::fprintf(stderr, "rank %d: %s failed: %s: %s\n", g_rank, what, fc_strerror(rc),
               fc_last_error_message());
  if (rc == FC_ERR_PEER || rc == FC_ERR_TIMEOUT || rc == FC_ERR_BROKEN) std::exit(3);
  ++g_failures;
  return false;
}

void expect(bool cond, const char* what, std::size_t count, std::size_t at) {
  if (cond) return;
  std::fprintf(stderr, "rank %d: %s count=%zu: wrong value at %zu\n", g_rank, what, count, at);
  ++g_failures;
}

void run_all(fc_comm_t comm, const std::vector<std::size_t>& counts) {
  const int p = g_size;
  const int me = g_rank;
  const auto up = static_cast<std::size_t>(p);
  for (const std::size_t n : counts) {
    std::vector<double> mine(n);
    for (std::size_t i = 0; i < n; ++i) mine[i] = value(me, i);
    auto sum_over = [&](int lo, int hi, std::size_t i) {
      double s = 0;
      for (int r = lo; r < hi; ++r) s += value(r, i);
      return s;
    };
    // bcast from every root
    for (int root = 0; root < p; root += (p > 3 ? p - 1 : 1)) {
      std::vector<double> b = me == root ? mine : std::vector<double>(n, -1);
      if (ok(fc_bcast(b.data(), n, FC_DOUBLE, root, comm), "bcast"))
        for (std::size_t i = 0; i < n; ++i) expect(b[i] == value(root, i), "bcast", n, i);
    }
    // reduce to the last rank
    {
      std::vector<double> out(n, -1);
      if (ok(fc_reduce(mine.data(), out.data(), n, FC_DOUBLE, FC_SUM, p - 1, comm), "reduce") &&
          me == p - 1)
        for (std::size_t i = 0; i < n; ++i) expect(out[i] == sum_over(0, p, i), "reduce", n, i);
    }
    // allreduce: out of place, in place, MAX on int32
    {
      std::vector<double> out(n, -1);
      if (ok(fc_allreduce(mine.data(), out.data(), n, FC_DOUBLE, FC_SUM, comm), "allreduce"))
        for (std::size_t i = 0; i < n; ++i) expect(out[i] == sum_over(0, p, i), "allreduce", n, i);
      std::vector<int> mx(n);
      for (std::size_t i = 0; i < n; ++i) mx[i] = static_cast<int>(value(me, i));
      if (ok(fc_allreduce(FC_IN_PLACE, mx.data(), n, FC_INT32, FC_MAX, comm), "allreduce max")) {
        for (std::size_t i = 0; i < n; ++i) {
          int best = 0;
          for (int r = 0; r < p; ++r) best = std::max(best, static_cast<int>(value(r, i)));
          expect(mx[i] == best, "allreduce max", n, i);
        }
      }
      fc_request_t req = nullptr;
      std::vector<double> nb(n, -1);
      if (ok(fc_iallreduce(mine.data(), nb.data(), n, FC_DOUBLE, FC_SUM, comm, &req),
             "iallreduce") &&
          ok(fc_wait(&req), "iallreduce wait"))
        for (std::size_t i = 0; i < n; ++i) expect(nb[i] == sum_over(0, p, i), "iallreduce", n, i);
    }
    // scan / exscan
    {
      std::vector<double> out(n, -1);
      if (ok(fc_scan(mine.data(), out.data(), n, FC_DOUBLE, FC_SUM, comm), "scan"))
        for (std::size_t i = 0; i < n; ++i) expect(out[i] == sum_over(0, me + 1, i), "scan", n, i);
      std::vector<double> ex(n, -7);
      if (ok(fc_exscan(mine.data(), ex.data(), n, FC_DOUBLE, FC_SUM, comm), "exscan") && me > 0)
        for (std::size_t i = 0; i < n; ++i) expect(ex[i] == sum_over(0, me, i), "exscan", n, i);
    }
    ok(fc_barrier(comm), "barrier");
    // gather / scatter at root 0, allgather
    {
      std::vector<double> all(n * up, -1);
      if (ok(fc_gather(mine.data(), n, FC_DOUBLE, all.data(), n, FC_DOUBLE, 0, comm), "gather") &&
          me == 0)
        for (std::size_t r = 0; r < up; ++r)
          for (std::size_t i = 0; i < n; ++i)
            expect(all[r * n + i] == value(static_cast<int>(r), i), "gather", n, r * n + i);
      std::vector<double> src(n * up);
      for (std::size_t r = 0; r < up; ++r)
        for (std::size_t i = 0; i < n; ++i) src[r * n + i] = value(static_cast<int>(r), i) + 100;
      std::vector<double> piece(n, -1);
      if (ok(fc_scatter(src.data(), n, FC_DOUBLE, piece.data(), n, FC_DOUBLE, 0, comm), "scatter"))
        for (std::size_t i = 0; i < n; ++i) expect(piece[i] == value(me, i) + 100, "scatter", n, i);
      std::vector<double> ag(n * up, -1);
      if (ok(fc_allgather(mine.data(), n, FC_DOUBLE, ag.data(), n, FC_DOUBLE, comm), "allgather"))
        for (std::size_t r = 0; r < up; ++r)
          for (std::size_t i = 0; i < n; ++i)
            expect(ag[r * n + i] == value(static_cast<int>(r), i), "allgather", n, r * n + i);
    }
    // allgatherv with uneven counts (rank r contributes (r % 3) * n / 2 elements)
    {
      std::vector<std::size_t> cnt(up), disp(up);
      std::size_t total = 0;
      for (std::size_t r = 0; r < up; ++r) {
        cnt[r] = (r % 3) * n / 2;
        disp[r] = total;
        total += cnt[r];
      }
      std::vector<double> out(total, -1);
      if (ok(fc_allgatherv(mine.data(), cnt[static_cast<std::size_t>(me)], FC_DOUBLE, out.data(),
                           cnt.data(), disp.data(), FC_DOUBLE, comm),
             "allgatherv"))
        for (std::size_t r = 0; r < up; ++r)
          for (std::size_t i = 0; i < cnt[r]; ++i)
            expect(out[disp[r] + i] == value(static_cast<int>(r), i), "allgatherv", n, disp[r] + i);
    }
    // alltoall and alltoallv: element i of block j from rank r is value(r, j * n + i)
    {
      std::vector<double> src(n * up), dst(n * up, -1);
      for (std::size_t j = 0; j < up; ++j)
        for (std::size_t i = 0; i < n; ++i)
          src[j * n + i] = value(me, j * n + i) + static_cast<double>(j);
      if (ok(fc_alltoall(src.data(), n, FC_DOUBLE, dst.data(), n, FC_DOUBLE, comm), "alltoall"))
        for (std::size_t r = 0; r < up; ++r)
          for (std::size_t i = 0; i < n; ++i)
            expect(dst[r * n + i] ==
                       value(static_cast<int>(r), static_cast<std::size_t>(me) * n + i) + me,
                   "alltoall", n, r * n + i);
      // v: rank r sends (r + j) % 2 ? n : n / 3 elements to j
      auto c = [&](std::size_t r, std::size_t j) { return (r + j) % 2 ? n : n / 3; };
      std::vector<std::size_t> sc(up), sd(up), rc(up), rd(up);
      std::size_t so = 0, ro = 0;
      for (std::size_t j = 0; j < up; ++j) {
        sc[j] = c(static_cast<std::size_t>(me), j);
        sd[j] = so;
        so += sc[j];
        rc[j] = c(j, static_cast<std::size_t>(me));
        rd[j] = ro;
        ro += rc[j];
      }
      std::vector<double> vs(so), vr(ro, -1);
      for (std::size_t j = 0; j < up; ++j)
        for (std::size_t i = 0; i < sc[j]; ++i)
          vs[sd[j] + i] = value(me, i) + 1000.0 * static_cast<double>(j);
      if (ok(fc_alltoallv(vs.data(), sc.data(), sd.data(), FC_DOUBLE, vr.data(), rc.data(),
                          rd.data(), FC_DOUBLE, comm),
             "alltoallv"))
        for (std::size_t r = 0; r < up; ++r)
          for (std::size_t i = 0; i < rc[r]; ++i)
            expect(vr[rd[r] + i] == value(static_cast<int>(r), i) + 1000.0 * me, "alltoallv", n,
                   rd[r] + i);
    }
    // reduce_scatter_block: block j of rank r is value(r, j * n + i)
    {
      std::vector<double> src(n * up), out(n, -1);
      for (std::size_t k = 0; k < n * up; ++k) src[k] = value(me, k);
      if (ok(fc_reduce_scatter_block(src.data(), out.data(), n, FC_DOUBLE, FC_SUM, comm),
             "reduce_scatter_block"))
        for (std::size_t i = 0; i < n; ++i)
          expect(out[i] == sum_over(0, p, static_cast<std::size_t>(me) * n + i),
                 "reduce_scatter_block", n, i);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--die-rank" && i + 1 < argc)
      g_die_rank = std::atoi(argv[++i]);
    else if (a == "--die-at" && i + 1 < argc)
      g_die_at = std::atoi(argv[++i]);
    else if (a == "--allow-unsupported")
      g_allow_unsupported = true;
    else if (a == "--quick")
      quick = true;
    else {
      std::fprintf(
          stderr,
          "usage: mp_collectives [--die-rank R --die-at K] [--allow-unsupported] [--quick]\n");
      return 2;
    }
  }
  fc_context_t ctx = nullptr;
#ifdef FABCOLL_MP_FROM_MPI
  MPI_Init(&argc, &argv);
  if (fc_init_from_mpi(MPI_COMM_WORLD, &ctx) != FC_SUCCESS) {
#else
  if (fc_init(&ctx) != FC_SUCCESS) {
#endif
    std::fprintf(stderr, "fc_init failed: %s\n", fc_last_error_message());
    return 1;
  }
  fc_comm_t world = nullptr;
  fc_comm_world(ctx, &world);
  fc_comm_rank(world, &g_rank);
  fc_comm_size(world, &g_size);
  const std::vector<std::size_t> counts =
      quick ? std::vector<std::size_t>{0, 1, 1000} : std::vector<std::size_t>{0, 1, 7, 1000, 70000};
  run_all(world, counts);
  // The same on a split communicator (odd/even ranks, reversed order).
  fc_comm_t half = nullptr;
  if (ok(fc_comm_split(world, g_rank % 2, -g_rank, &half), "comm_split")) {
    const int saved_rank = g_rank;
    const int saved_size = g_size;
    fc_comm_rank(half, &g_rank);
    fc_comm_size(half, &g_size);
    run_all(half, {0, 5, 1001});
    g_rank = saved_rank;
    g_size = saved_size;
    fc_comm_free(&half);
  }
  const int rc = fc_finalize(ctx);
#ifdef FABCOLL_MP_FROM_MPI
  MPI_Finalize();
#endif
  if (rc != FC_SUCCESS)
    std::fprintf(stderr, "rank %d: fc_finalize: %s\n", g_rank, fc_last_error_message());
  if (g_failures == 0) {
    std::printf("mp_collectives: rank %d of %d ok%s\n", g_rank, g_size,
                g_unsupported
                    ? (" (" + std::to_string(g_unsupported) + " calls unsupported)").c_str()
                    : "");
  }
  return g_failures == 0 && rc == FC_SUCCESS ? 0 : 1;
}
