/* Every collective libfabcoll_mpi.so intercepts, blocking and nonblocking, with several datatypes,
 * ops, roots, in place and not, on MPI_COMM_WORLD, a split (reversed order), a dup and a split of
 * the split; plus calls the interposer must hand to PMPI (derived datatypes, a user op, in-place
 * alltoall). Each result is compared with a reference computed locally, bytes outside the result
 * (sentinels) must be untouched, and rank 0 prints one digest per rank of every defined result
 * byte: the same program with and without the preload must print the same digests.
 * Exit status 0 when every check passed. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_errors = 0;
static uint64_t g_digest = 1469598103934665603ULL;
static int g_world_rank = 0;

static void digest(const void* p, size_t n) {
  const unsigned char* b = (const unsigned char*)p;
  for (size_t i = 0; i < n; ++i) {
    g_digest ^= b[i];
    g_digest *= 1099511628211ULL;
  }
}

static void fail(const char* what, const char* ctx) {
  if (g_errors < 20) fprintf(stderr, "rank %d: FAIL %s [%s]\n", g_world_rank, what, ctx);
  ++g_errors;
}

/* compare n bytes of got with want, digest them */
static void check(const void* got, const void* want, size_t n, const char* what, const char* ctx) {
  if (n > 0 && memcmp(got, want, n) != 0) fail(what, ctx);
  digest(got, n);
}
static void check_sentinel(const unsigned char* p, size_t n, const char* what, const char* ctx) {
  for (size_t i = 0; i < n; ++i) {
    if (p[i] != 0xEE) {
      fail(what, ctx);
      return;
    }
  }
}

/* ---- typed values ------------------------------------------------------------------------ */
enum { K_SIGNED, K_UNSIGNED, K_FLOAT, K_DOUBLE, K_BYTE };
typedef struct {
  MPI_Datatype t;
  const char* name;
  int kind;
  size_t size;
} tdesc;

static void put(void* buf, size_t i, const tdesc* d, long long v) {
  char* p = (char*)buf + i * d->size;
  switch (d->kind) {
    case K_FLOAT: {
      float f = (float)v;
      memcpy(p, &f, 4);
      return;
    }
    case K_DOUBLE: {
      double f = (double)v;
      memcpy(p, &f, 8);
      return;
    }
    default:
      break;
  }
  switch (d->size) {
    case 1: {
      int8_t x = (int8_t)v;
      memcpy(p, &x, 1);
      return;
    }
    case 2: {
      int16_t x = (int16_t)v;
      memcpy(p, &x, 2);
      return;
    }
    case 4: {
      int32_t x = (int32_t)v;
      memcpy(p, &x, 4);
      return;
    }
    default: {
      int64_t x = (int64_t)v;
      memcpy(p, &x, 8);
      return;
    }
  }
}

enum { O_SUM, O_PROD, O_MIN, O_MAX, O_LAND, O_LOR, O_LXOR, O_BAND, O_BOR, O_BXOR, O_COUNT };
static const char* kOpNames[O_COUNT] = {"sum", "prod", "min",  "max", "land",
                                        "lor", "lxor", "band", "bor", "bxor"};
static MPI_Op mpi_op(int o) {
  const MPI_Op ops[O_COUNT] = {MPI_SUM, MPI_PROD, MPI_MIN,  MPI_MAX, MPI_LAND,
                               MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR};
  return ops[o];
}
static int op_valid(int o, const tdesc* d) {
  if (d->kind == K_BYTE) return o == O_BAND || o == O_BOR || o == O_BXOR;
  if (d->kind == K_FLOAT || d->kind == K_DOUBLE) return o <= O_MAX;
  return 1;
}

/* input value of element i on rank r: small, so every result is exact in every type */
static long long gen(int o, const tdesc* d, int r, size_t i, int seed) {
  const long long h = (long long)((r * 7 + (int)i * 3 + seed * 5) % 11);
  if (o == O_PROD) return 1 + (h % 2);
  if (o == O_LAND || o == O_LOR || o == O_LXOR) return (h % 3 == 0) ? 0 : h;
  if (o >= O_BAND) return (h * 37 + r) & 0x7F;
  if (d->kind == K_UNSIGNED || d->kind == K_BYTE) return h;
  return h - 4;
}
static long long combine(int o, long long a, long long b) {
  switch (o) {
    case O_SUM:
      return a + b;
    case O_PROD:
      return a * b;
    case O_MIN:
      return a < b ? a : b;
    case O_MAX:
      return a > b ? a : b;
    case O_LAND:
      return (a != 0) && (b != 0);
    case O_LOR:
      return (a != 0) || (b != 0);
    case O_LXOR:
      return (a != 0) != (b != 0);
    case O_BAND:
      return a & b;
    case O_BOR:
      return a | b;
    default:
      return a ^ b;
  }
}
/* op over ranks lo..hi-1 of element i */
static long long fold(int o, const tdesc* d, int lo, int hi, size_t i, int seed) {
  long long acc = gen(o, d, lo, i, seed);
  for (int r = lo + 1; r < hi; ++r) acc = combine(o, acc, gen(o, d, r, i, seed));
  return acc;
}

static const tdesc kTypes[] = {
    {MPI_INT, "int", K_SIGNED, sizeof(int)},
    {MPI_LONG, "long", K_SIGNED, sizeof(long)},
    {MPI_UNSIGNED, "unsigned", K_UNSIGNED, sizeof(unsigned)},
    {MPI_SHORT, "short", K_SIGNED, sizeof(short)},
    {MPI_SIGNED_CHAR, "signed_char", K_SIGNED, 1},
    {MPI_UINT8_T, "uint8", K_UNSIGNED, 1},
    {MPI_INT64_T, "int64", K_SIGNED, 8},
    {MPI_UNSIGNED_LONG_LONG, "ull", K_UNSIGNED, 8},
    {MPI_FLOAT, "float", K_FLOAT, 4},
    {MPI_DOUBLE, "double", K_DOUBLE, 8},
    {MPI_BYTE, "byte", K_BYTE, 1},
};
#define NTYPES ((int)(sizeof(kTypes) / sizeof(kTypes[0])))

/* ---- nonblocking completion: rotate through Wait, Test loop, Waitall, Waitany ------------ */
static int g_mode = 0;
static void complete(MPI_Request* req) {
  int flag = 0, idx = -1;
  switch (g_mode++ % 6) {
    case 0:
      MPI_Wait(req, MPI_STATUS_IGNORE);
      break;
    case 1:
      while (!flag) MPI_Test(req, &flag, MPI_STATUS_IGNORE);
      break;
    case 2:
      MPI_Waitall(1, req, MPI_STATUSES_IGNORE);
      break;
    case 3:
      MPI_Waitany(1, req, &idx, MPI_STATUS_IGNORE);
      break;
    case 4:
      while (!flag) MPI_Testall(1, req, &flag, MPI_STATUSES_IGNORE);
      break;
    default:
      while (!flag) MPI_Testany(1, req, &idx, &flag, MPI_STATUS_IGNORE);
      break;
  }
  if (*req != MPI_REQUEST_NULL) fail("request not freed", "complete");
}

/* ---- reductions -------------------------------------------------------------------------- */
enum { R_REDUCE, R_ALLREDUCE, R_SCAN, R_EXSCAN, R_RSB };
static const char* kRedNames[] = {"reduce", "allreduce", "scan", "exscan", "reduce_scatter_block"};

static void test_reduction(MPI_Comm comm, const char* cname, int coll, const tdesc* d, int o,
                           size_t n, int root, int inplace, int nb) {
  int rank, p;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  const int seed = (int)n + o + coll;
  const size_t in_elems = coll == R_RSB ? n * (size_t)p : n;
  const size_t es = d->size;
  unsigned char* in = malloc(in_elems * es + 1);
  unsigned char* out = malloc((in_elems + 4) * es + 1);
  unsigned char* want = malloc(in_elems * es + 1);
  for (size_t i = 0; i < in_elems; ++i) put(in, i, d, gen(o, d, rank, i, seed));
  memset(out, 0xEE, (in_elems + 4) * es);
  char ctx[160];
  snprintf(ctx, sizeof ctx, "%s %s %s/%s n=%zu root=%d inplace=%d nb=%d", cname, kRedNames[coll],
           d->name, kOpNames[o], n, root, inplace, nb);
  const void* sb = in;
  if (inplace && (coll != R_REDUCE || rank == root)) { /* reduce: MPI_IN_PLACE at the root only */
    memcpy(out, in, in_elems * es);
    sb = MPI_IN_PLACE;
  }
  MPI_Request req = MPI_REQUEST_NULL;
  const int count = (int)n;
  const MPI_Op op = mpi_op(o);
  int rc = MPI_SUCCESS;
  switch (coll) {
    case R_REDUCE:
      rc = nb ? MPI_Ireduce(sb, out, count, d->t, op, root, comm, &req)
              : MPI_Reduce(sb, out, count, d->t, op, root, comm);
      break;
    case R_ALLREDUCE:
      rc = nb ? MPI_Iallreduce(sb, out, count, d->t, op, comm, &req)
              : MPI_Allreduce(sb, out, count, d->t, op, comm);
      break;
    case R_SCAN:
      rc = nb ? MPI_Iscan(sb, out, count, d->t, op, comm, &req)
              : MPI_Scan(sb, out, count, d->t, op, comm);
      break;
    case R_EXSCAN:
      rc = nb ? MPI_Iexscan(sb, out, count, d->t, op, comm, &req)
              : MPI_Exscan(sb, out, count, d->t, op, comm);
      break;
    default:
      rc = nb ? MPI_Ireduce_scatter_block(sb, out, count, d->t, op, comm, &req)
              : MPI_Reduce_scatter_block(sb, out, count, d->t, op, comm);
      break;
  }
  if (rc != MPI_SUCCESS) fail("return code", ctx);
  if (nb) complete(&req);
  size_t defined = n; /* elements of out with a defined result */
  switch (coll) {
    case R_REDUCE:
      if (rank != root) defined = 0;
      for (size_t i = 0; i < n; ++i) put(want, i, d, fold(o, d, 0, p, i, seed));
      break;
    case R_ALLREDUCE:
      for (size_t i = 0; i < n; ++i) put(want, i, d, fold(o, d, 0, p, i, seed));
      break;
    case R_SCAN:
      for (size_t i = 0; i < n; ++i) put(want, i, d, fold(o, d, 0, rank + 1, i, seed));
      break;
    case R_EXSCAN:
      if (rank == 0)
        defined = 0; /* undefined on rank 0 */
      else
        for (size_t i = 0; i < n; ++i) put(want, i, d, fold(o, d, 0, rank, i, seed));
      break;
    default:
      for (size_t i = 0; i < n; ++i) {
        /* block `rank` of the reduced vector: element rank*n+i; gen uses the global index */
        long long acc = gen(o, d, 0, (size_t)rank * n + i, seed);
        for (int r = 1; r < p; ++r) acc = combine(o, acc, gen(o, d, r, (size_t)rank * n + i, seed));
        put(want, i, d, acc);
      }
      break;
  }
  if (defined > 0) check(out, want, defined * es, "result", ctx);
  /* exscan leaves rank 0's recvbuf alone (undefined in MPI, untouched by MPI libraries, and
   * codes rely on it) */
  if (coll == R_EXSCAN && rank == 0) {
    if (sb == MPI_IN_PLACE) {
      if (n > 0 && memcmp(out, in, n * es) != 0) fail("rank 0 recvbuf changed", ctx);
    } else {
      check_sentinel(out, n * es, "rank 0 recvbuf changed", ctx);
    }
  }
  /* nothing written past the result (not in place: the whole tail keeps its sentinel) */
  if (sb != MPI_IN_PLACE) {
    if (defined == n)
      check_sentinel(out + n * es, 4 * es, "write past the result", ctx);
    else if (coll == R_REDUCE)
      check_sentinel(out, (n + 4) * es, "non-root recvbuf written", ctx);
  }
  free(in);
  free(out);
  free(want);
}

static void test_minmaxloc(MPI_Comm comm, const char* cname, int dbl, int maxloc, int nb) {
  int rank, p;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  enum { N = 9 };
  struct fi {
    float v;
    int i;
  } fin[N], fout[N], fwant[N];
  struct di {
    double v;
    int i;
  } din[N], dout[N], dwant[N];
  memset(fout, 0xEE, sizeof fout);
  memset(dout, 0xEE, sizeof dout);
  memset(fwant, 0, sizeof fwant);
  memset(dwant, 0, sizeof dwant);
  memset(din, 0, sizeof din); /* padding bytes defined */
  memset(dout, 0, sizeof dout);
  for (int k = 0; k < N; ++k) {
    const int v = (rank * 5 + k * 3) % 4; /* ties happen: the smaller index must win */
    fin[k].v = (float)v;
    fin[k].i = rank * 10 + k % 3;
    din[k].v = (double)v;
    din[k].i = rank * 10 + k % 3;
  }
  for (int k = 0; k < N; ++k) {
    for (int r = 0; r < p; ++r) {
      const int v = (r * 5 + k * 3) % 4, idx = r * 10 + k % 3;
      const int better = r == 0 || (maxloc ? v > fwant[k].v : v < fwant[k].v) ||
                         (v == fwant[k].v && idx < fwant[k].i);
      if (better) {
        fwant[k].v = (float)v;
        fwant[k].i = idx;
        dwant[k].v = v;
        dwant[k].i = idx;
      }
    }
  }
  char ctx[128];
  snprintf(ctx, sizeof ctx, "%s allreduce %s %s nb=%d", cname, dbl ? "double_int" : "float_int",
           maxloc ? "maxloc" : "minloc", nb);
  MPI_Request req;
  const MPI_Op op = maxloc ? MPI_MAXLOC : MPI_MINLOC;
  if (dbl) {
    if (nb) {
      MPI_Iallreduce(din, dout, N, MPI_DOUBLE_INT, op, comm, &req);
      complete(&req);
    } else
      MPI_Allreduce(din, dout, N, MPI_DOUBLE_INT, op, comm);
    for (int k = 0; k < N; ++k) {
      if (dout[k].v != dwant[k].v || dout[k].i != dwant[k].i) fail("result", ctx);
      digest(&dout[k].v, sizeof(double));
      digest(&dout[k].i, sizeof(int));
    }
  } else {
    if (nb) {
      MPI_Iallreduce(fin, fout, N, MPI_FLOAT_INT, op, comm, &req);
      complete(&req);
    } else
      MPI_Allreduce(fin, fout, N, MPI_FLOAT_INT, op, comm);
    check(fout, fwant, sizeof fout, "result", ctx);
  }
}

/* ---- data movement ------------------------------------------------------------------------ */
/* byte j of block (src -> dst) */
static unsigned char bval(int src, int dst, size_t j) {
  return (unsigned char)(src * 31 + dst * 7 + (int)j * 13 + 1);
}

static void test_bcast(MPI_Comm comm, const char* cname, MPI_Datatype t, size_t es, int count,
                       int root, int nb) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  const size_t n = (size_t)count * es;
  unsigned char* buf = malloc(n + 8);
  unsigned char* want = malloc(n + 1);
  for (size_t j = 0; j < n; ++j) want[j] = bval(root, 99, j);
  if (rank == root)
    memcpy(buf, want, n);
  else
    memset(buf, 0xEE, n);
  memset(buf + n, 0xEE, 8);
  char ctx[128];
  snprintf(ctx, sizeof ctx, "%s bcast es=%zu count=%d root=%d nb=%d", cname, es, count, root, nb);
  MPI_Request req;
  if (nb) {
    MPI_Ibcast(buf, count, t, root, comm, &req);
    complete(&req);
  } else
    MPI_Bcast(buf, count, t, root, comm);
  check(buf, want, n, "result", ctx);
  check_sentinel(buf + n, 8, "write past the buffer", ctx);
  free(buf);
  free(want);
}

/* gather, scatter, allgather, alltoall with `count` elements of t per block */
enum { B_GATHER, B_SCATTER, B_ALLGATHER, B_ALLTOALL };
static void test_block(MPI_Comm comm, const char* cname, int coll, MPI_Datatype t, size_t es,
                       int count, int root, int inplace, int nb) {
  int rank, p;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  const size_t blk = (size_t)count * es, all = blk * (size_t)p;
  unsigned char* sbuf = malloc(all + 8);
  unsigned char* rbuf = malloc(all + 8);
  unsigned char* want = malloc(all + 8);
  memset(sbuf, 0, all + 8);
  memset(rbuf, 0xEE, all + 8);
  char ctx[160];
  static const char* names[] = {"gather", "scatter", "allgather", "alltoall"};
  snprintf(ctx, sizeof ctx, "%s %s es=%zu count=%d root=%d inplace=%d nb=%d", cname, names[coll],
           es, count, root, inplace, nb);
  MPI_Request req = MPI_REQUEST_NULL;
  const void* sb = sbuf;
  void* rb = rbuf;
  size_t check_off = 0, check_len = 0;
  switch (coll) {
    case B_GATHER:
      for (size_t j = 0; j < blk; ++j) sbuf[j] = bval(rank, root, j);
      if (inplace && rank == root) {
        memcpy(rbuf + blk * (size_t)rank, sbuf, blk);
        sb = MPI_IN_PLACE;
      }
      if (rank == root) {
        for (int r = 0; r < p; ++r)
          for (size_t j = 0; j < blk; ++j) want[blk * (size_t)r + j] = bval(r, root, j);
        check_len = all;
      }
      if (nb)
        MPI_Igather(sb, count, t, rb, count, t, root, comm, &req);
      else
        MPI_Gather(sb, count, t, rb, count, t, root, comm);
      break;
    case B_SCATTER:
      if (rank == root)
        for (int r = 0; r < p; ++r)
          for (size_t j = 0; j < blk; ++j) sbuf[blk * (size_t)r + j] = bval(root, r, j);
      for (size_t j = 0; j < blk; ++j) want[j] = bval(root, rank, j);
      check_len = blk;
      if (inplace && rank == root) {
        rb = MPI_IN_PLACE; /* root's block stays in sbuf */
        memcpy(want, sbuf, all);
        check_len = all;
      }
      if (nb)
        MPI_Iscatter(sb, count, t, rb, count, t, root, comm, &req);
      else
        MPI_Scatter(sb, count, t, rb, count, t, root, comm);
      break;
    case B_ALLGATHER:
      for (size_t j = 0; j < blk; ++j) sbuf[j] = bval(rank, 0, j);
      if (inplace) {
        memcpy(rbuf + blk * (size_t)rank, sbuf, blk);
        sb = MPI_IN_PLACE;
      }
      for (int r = 0; r < p; ++r)
        for (size_t j = 0; j < blk; ++j) want[blk * (size_t)r + j] = bval(r, 0, j);
      check_len = all;
      if (nb)
        MPI_Iallgather(sb, count, t, rb, count, t, comm, &req);
      else
        MPI_Allgather(sb, count, t, rb, count, t, comm);
      break;
    default:
      for (int r = 0; r < p; ++r)
        for (size_t j = 0; j < blk; ++j) sbuf[blk * (size_t)r + j] = bval(rank, r, j);
      for (int r = 0; r < p; ++r)
        for (size_t j = 0; j < blk; ++j) want[blk * (size_t)r + j] = bval(r, rank, j);
      check_len = all;
      if (inplace) { /* MPI allows it; the interposer hands it to PMPI */
        memcpy(rbuf, sbuf, all);
        sb = MPI_IN_PLACE;
      }
      if (nb)
        MPI_Ialltoall(sb, count, t, rb, count, t, comm, &req);
      else
        MPI_Alltoall(sb, count, t, rb, count, t, comm);
      break;
  }
  if (nb) complete(&req);
  const unsigned char* res = (coll == B_SCATTER && rb == MPI_IN_PLACE) ? sbuf : rbuf;
  check(res + check_off, want, check_len, "result", ctx);
  if (res == rbuf)
    check_sentinel(rbuf + check_len, all + 8 - check_len, "write past the result", ctx);
  free(sbuf);
  free(rbuf);
  free(want);
}

static void test_allgatherv(MPI_Comm comm, const char* cname, int inplace, int nb) {
  int rank, p;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  int* counts = malloc(sizeof(int) * (size_t)p);
  int* displs = malloc(sizeof(int) * (size_t)p);
  int total = 0;
  for (int r = 0; r < p; ++r) {
    counts[r] = (r * 3 + 1) % 5; /* includes 0 */
    displs[r] = total + 2;       /* gaps of 2 doubles stay untouched */
    total += counts[r] + 2;
  }
  double* rbuf = malloc(sizeof(double) * (size_t)(total + 1));
  double* want = malloc(sizeof(double) * (size_t)(total + 1));
  double sbuf[8];
  memset(rbuf, 0xEE, sizeof(double) * (size_t)(total + 1));
  memset(want, 0xEE, sizeof(double) * (size_t)(total + 1));
  for (int r = 0; r < p; ++r)
    for (int k = 0; k < counts[r]; ++k) want[displs[r] + k] = r * 100.0 + k + 0.25;
  for (int k = 0; k < counts[rank]; ++k) sbuf[k] = rank * 100.0 + k + 0.25;
  const void* sb = sbuf;
  if (inplace) {
    memcpy(rbuf + displs[rank], sbuf, sizeof(double) * (size_t)counts[rank]);
    sb = MPI_IN_PLACE;
  }
  char ctx[96];
  snprintf(ctx, sizeof ctx, "%s allgatherv inplace=%d nb=%d", cname, inplace, nb);
  MPI_Request req;
  if (nb) {
    MPI_Iallgatherv(sb, counts[rank], MPI_DOUBLE, rbuf, counts, displs, MPI_DOUBLE, comm, &req);
    complete(&req);
  } else {
    MPI_Allgatherv(sb, counts[rank], MPI_DOUBLE, rbuf, counts, displs, MPI_DOUBLE, comm);
  }
  check(rbuf, want, sizeof(double) * (size_t)(total + 1), "result and gaps", ctx);
  free(counts);
  free(displs);
  free(rbuf);
  free(want);
}

static void test_alltoallv(MPI_Comm comm, const char* cname, int nb) {
  int rank, p;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  int *sc = malloc(sizeof(int) * (size_t)p), *sd = malloc(sizeof(int) * (size_t)p);
  int *rc = malloc(sizeof(int) * (size_t)p), *rd = malloc(sizeof(int) * (size_t)p);
  int stot = 0, rtot = 0;
  for (int r = 0; r < p; ++r) {
    sc[r] = (rank + 2 * r) % 4; /* rank -> r */
    rc[r] = (r + 2 * rank) % 4; /* r -> rank */
    sd[r] = stot + 1;
    rd[r] = rtot + 1;
    stot += sc[r] + 1;
    rtot += rc[r] + 1;
  }
  int* sbuf = malloc(sizeof(int) * (size_t)(stot + 1));
  int* rbuf = malloc(sizeof(int) * (size_t)(rtot + 1));
  int* want = malloc(sizeof(int) * (size_t)(rtot + 1));
  memset(rbuf, 0xEE, sizeof(int) * (size_t)(rtot + 1));
  memset(want, 0xEE, sizeof(int) * (size_t)(rtot + 1));
  for (int r = 0; r < p; ++r) {
    for (int k = 0; k < sc[r]; ++k) sbuf[sd[r] + k] = rank * 1000 + r * 10 + k;
    for (int k = 0; k < rc[r]; ++k) want[rd[r] + k] = r * 1000 + rank * 10 + k;
  }
  char ctx[64];
  snprintf(ctx, sizeof ctx, "%s alltoallv nb=%d", cname, nb);
  MPI_Request req;
  if (nb) {
    MPI_Ialltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, comm, &req);
    complete(&req);
  } else {
    MPI_Alltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, comm);
  }
  check(rbuf, want, sizeof(int) * (size_t)(rtot + 1), "result and gaps", ctx);
  free(sc);
  free(sd);
  free(rc);
  free(rd);
  free(sbuf);
  free(rbuf);
  free(want);
}

/* ---- calls that must go to PMPI, and a mix of outstanding requests ------------------------ */
static void user_max(void* in, void* inout, int* len, MPI_Datatype* t) {
  (void)t;
  for (int i = 0; i < *len; ++i)
    if (((int*)in)[i] > ((int*)inout)[i]) ((int*)inout)[i] = ((int*)in)[i];
}

static void test_fallbacks(MPI_Comm comm, const char* cname) {
  int rank, p;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  char ctx[64];
  /* derived datatype */
  MPI_Datatype pair;
  MPI_Type_contiguous(3, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  int buf[6], want[6];
  for (int k = 0; k < 6; ++k) {
    want[k] = 40 + k;
    buf[k] = rank == 0 ? want[k] : -1;
  }
  snprintf(ctx, sizeof ctx, "%s bcast derived type", cname);
  MPI_Bcast(buf, 2, pair, 0, comm);
  check(buf, want, sizeof buf, "result", ctx);
  MPI_Type_free(&pair);
  /* user op */
  MPI_Op op;
  MPI_Op_create(user_max, 1, &op);
  int v[3] = {rank, 2 * rank, 7}, out[3], w[3] = {p - 1, 2 * (p - 1), 7};
  snprintf(ctx, sizeof ctx, "%s allreduce user op", cname);
  MPI_Allreduce(v, out, 3, MPI_INT, op, comm);
  check(out, w, sizeof out, "result", ctx);
  MPI_Op_free(&op);
}

static void test_mixed_requests(MPI_Comm comm, const char* cname) {
  int rank, p;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  MPI_Request reqs[5];
  int a = rank + 1, suma = 0, b[4] = {rank, rank, rank, rank}, maxb[4];
  int token = rank * 11, got = -1;
  const int right = (rank + 1) % p, left = (rank + p - 1) % p;
  MPI_Irecv(&got, 1, MPI_INT, left, 77, comm, &reqs[0]);
  MPI_Iallreduce(&a, &suma, 1, MPI_INT, MPI_SUM, comm, &reqs[1]);
  MPI_Ibarrier(comm, &reqs[2]);
  MPI_Iallreduce(b, maxb, 4, MPI_INT, MPI_MAX, comm, &reqs[3]);
  MPI_Isend(&token, 1, MPI_INT, right, 77, comm, &reqs[4]);
  char ctx[64];
  snprintf(ctx, sizeof ctx, "%s mixed waitall/waitsome", cname);
  if (rank % 2) {
    MPI_Waitall(5, reqs, MPI_STATUSES_IGNORE);
  } else {
    int left_ = 5;
    while (left_ > 0) {
      int outc = 0, idx[5];
      MPI_Waitsome(5, reqs, &outc, idx, MPI_STATUSES_IGNORE);
      if (outc == MPI_UNDEFINED) break;
      left_ -= outc;
    }
  }
  for (int k = 0; k < 5; ++k)
    if (reqs[k] != MPI_REQUEST_NULL) fail("request not freed", ctx);
  if (suma != p * (p + 1) / 2 || got != left * 11) fail("result", ctx);
  for (int k = 0; k < 4; ++k)
    if (maxb[k] != p - 1) fail("result", ctx);
  digest(&suma, sizeof suma);
  digest(&got, sizeof got);
}

/* MPI's progress rule: a rank blocked in a point-to-point call must still progress its
 * outstanding nonblocking collectives, for a peer may wait on them before it sends. */
static void test_progress(MPI_Comm comm, const char* cname) {
  int rank, p;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  if (p < 2) return;
  const int n = 1 << 20; /* 4 MiB of int: several steps of any algorithm */
  int* big = malloc(sizeof(int) * (size_t)n);
  for (int k = 0; k < n; ++k) big[k] = rank == 0 ? k ^ 0x5a5a : -1;
  char ctx[64];
  snprintf(ctx, sizeof ctx, "%s progress", cname);
  MPI_Request req;
  MPI_Ibcast(big, n, MPI_INT, 0, comm, &req);
  int token = 0;
  if (rank == 0) {
    MPI_Recv(&token, 1, MPI_INT, 1, 91, comm, MPI_STATUS_IGNORE); /* rank 1 sends after its Wait */
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    if (token != 4242) fail("token", ctx);
  } else {
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    if (rank == 1) {
      token = 4242;
      MPI_Send(&token, 1, MPI_INT, 0, 91, comm);
    }
  }
  for (int k = 0; k < n; ++k)
    if (big[k] != (k ^ 0x5a5a)) {
      fail("ibcast result", ctx);
      break;
    }
  digest(big, 64);
  free(big);
}

/* ---- the suite on one communicator -------------------------------------------------------- */
static void suite(MPI_Comm comm, const char* cname) {
  int p;
  MPI_Comm_size(comm, &p);
  static const size_t kCounts[] = {1, 7, 300};
  for (int nb = 0; nb < 2; ++nb) {
    for (int ti = 0; ti < NTYPES; ++ti) {
      const tdesc* d = &kTypes[ti];
      for (int o = 0; o < O_COUNT; ++o) {
        if (!op_valid(o, d)) continue;
        for (int ip = 0; ip < 2; ++ip) test_reduction(comm, cname, R_ALLREDUCE, d, o, 7, 0, ip, nb);
      }
      for (int ci = 0; ci < 3; ++ci) {
        const size_t n = kCounts[ci];
        const int o = d->kind == K_BYTE ? O_BXOR : (ci == 1 ? O_MAX : O_SUM);
        for (int ip = 0; ip < 2; ++ip) {
          test_reduction(comm, cname, R_REDUCE, d, o, n, (int)(n % (size_t)p), ip, nb);
          test_reduction(comm, cname, R_REDUCE, d, op_valid(O_MIN, d) ? O_MIN : o, n, p - 1, ip,
                         nb);
          test_reduction(comm, cname, R_SCAN, d, o, n, 0, ip, nb);
          test_reduction(comm, cname, R_EXSCAN, d, o, n, 0, ip, nb);
          test_reduction(comm, cname, R_RSB, d, o, n, 0, ip, nb);
        }
      }
    }
    for (int dbl = 0; dbl < 2; ++dbl)
      for (int mx = 0; mx < 2; ++mx) test_minmaxloc(comm, cname, dbl, mx, nb);
    for (int root = 0; root < p; ++root) {
      test_bcast(comm, cname, MPI_INT, sizeof(int), 5, root, nb);
      test_bcast(comm, cname, MPI_DOUBLE, 8, 1000 + root, root, nb);
      test_bcast(comm, cname, MPI_CHAR, 1, 3, root, nb);
      for (int ip = 0; ip < 2; ++ip) {
        test_block(comm, cname, B_GATHER, MPI_INT, sizeof(int), 3, root, ip, nb);
        test_block(comm, cname, B_SCATTER, MPI_DOUBLE, 8, 2, root, ip, nb);
      }
    }
    test_bcast(comm, cname, MPI_UNSIGNED_SHORT, 2, 0, 0, nb);
    for (int ip = 0; ip < 2; ++ip) {
      test_block(comm, cname, B_ALLGATHER, MPI_FLOAT, 4, 5, 0, ip, nb);
      test_block(comm, cname, B_ALLGATHER, MPI_BYTE, 1, 4000, 0, ip, nb);
      test_block(comm, cname, B_ALLTOALL, MPI_INT, sizeof(int), 3, 0, ip, nb);
      test_allgatherv(comm, cname, ip, nb);
    }
    test_block(comm, cname, B_GATHER, MPI_BYTE, 1, 20000, 0, 0, nb);
    test_block(comm, cname, B_ALLTOALL, MPI_LONG, sizeof(long), 700, 0, 0, nb);
    test_alltoallv(comm, cname, nb);
    if (nb) {
      MPI_Request req;
      MPI_Ibarrier(comm, &req);
      complete(&req);
    } else {
      MPI_Barrier(comm);
    }
  }
  test_fallbacks(comm, cname);
  test_mixed_requests(comm, cname);
  test_progress(comm, cname);
}

int main(int argc, char** argv) {
  /* MPI_COLLS_INIT=plain: MPI_Init; =multiple: MPI_THREAD_MULTIPLE; else MPI_THREAD_SERIALIZED */
  int provided = 0;
  const char* init = getenv("MPI_COLLS_INIT");
  if (init != NULL && strcmp(init, "plain") == 0)
    MPI_Init(&argc, &argv);
  else
    MPI_Init_thread(
        &argc, &argv,
        init != NULL && strcmp(init, "multiple") == 0 ? MPI_THREAD_MULTIPLE : MPI_THREAD_SERIALIZED,
        &provided);
  int rank, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  g_world_rank = rank;

  suite(MPI_COMM_WORLD, "world");

  MPI_Comm halves, dup, sub, none;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &halves); /* reversed rank order */
  suite(halves, "split");
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  suite(dup, "dup");
  MPI_Comm_split(dup, rank < 3 ? 0 : MPI_UNDEFINED, rank, &sub); /* ranks 0..2 of the dup */
  if (sub != MPI_COMM_NULL) {
    suite(sub, "split_of_dup");
    MPI_Comm_free(&sub);
  }
  MPI_Comm_split(MPI_COMM_WORLD, MPI_UNDEFINED, 0, &none);
  if (none != MPI_COMM_NULL) fail("MPI_UNDEFINED gave a communicator", "split");
  MPI_Comm_free(&halves);
  MPI_Comm_free(&dup);

  /* digests and error counts to rank 0 (itself through an intercepted gather) */
  unsigned long long mine[2] = {(unsigned long long)g_digest, (unsigned long long)g_errors};
  unsigned long long* all = malloc(sizeof(mine) * (size_t)p);
  MPI_Gather(mine, 2, MPI_UNSIGNED_LONG_LONG, all, 2, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  int total_errors = g_errors;
  MPI_Allreduce(MPI_IN_PLACE, &total_errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    for (int r = 0; r < p; ++r) printf("digest rank %d: %016llx\n", r, all[2 * r]);
    printf("%s: %d ranks, %d errors\n", total_errors == 0 ? "PASS" : "FAIL", p, total_errors);
  }
  /* errors are reported, not swallowed: an invalid root with MPI_ERRORS_RETURN */
  {
    MPI_Comm errc;
    MPI_Comm_dup(MPI_COMM_WORLD, &errc);
    MPI_Comm_set_errhandler(errc, MPI_ERRORS_RETURN);
    int x[2] = {1, 2};
    if (MPI_Bcast(x, 2, MPI_INT, p + 5, errc) == MPI_SUCCESS) fail("bad root accepted", "errors");
    MPI_Comm_free(&errc);
  }
  if (g_errors > 0 && rank == 0) printf("FAIL: rank 0 saw errors after the digest\n");
  free(all);
  MPI_Finalize();
  return total_errors == 0 ? 0 : 1;
}
