// libfabcoll_mpi.so: the PMPI interposer. LD_PRELOAD it under mpirun and an unchanged MPI code's
// collectives run on fabcoll: MPI_Init* starts a fabcoll context over MPI_COMM_WORLD, each
// intercepted collective maps its arguments (predefined contiguous datatypes, predefined ops,
// communicators mirrored by fc_comm_split) and calls fabcoll; anything else goes to PMPI_*.
//
// Design notes.
// - The routing decision is made from arguments that MPI requires to agree on every rank
//   (datatype class, op, MPI_IN_PLACE where the standard makes it all-or-none, communicator), so
//   every rank takes the same path. Data-movement collectives (bcast, gather, scatter,
//   allgather(v), alltoall(v)) move bytes: a predefined datatype whose size equals its extent is
//   sent as FC_BYTE with counts in bytes, so the send and receive datatypes need not be the same.
// - Nonblocking collectives: the MPI_Request handed back is a PMPI generalized request
//   (MPI_Grequest_start), so it is a real MPI request (MPI_Waitall over mixed arrays, statuses,
//   MPI_Request_free all work). A side list holds the fabcoll request behind each one. While any is
//   outstanding, the intercepted MPI_Wait/Test/Waitall/Testall/Waitany/Testany/Waitsome/Testsome/
//   Request_get_status poll: they drive every outstanding fabcoll request (fc_test) and call
//   MPI_Grequest_complete on those done, then ask PMPI_Test* (which also drives MPI's progress).
// - Errors: a fabcoll failure prints fabcoll's message on stderr and goes through the
//   communicator's MPI error handler with MPI_ERR_OTHER (fatal by default).
// - Progress: blocking MPI_Send/Ssend/Recv/Sendrecv/Probe poll the same way while fabcoll
//   requests are outstanding. A blocking collective that falls back to PMPI does not (it must stay
//   blocking to match the peers' call), so a code that blocks in such a collective while a peer
//   waits for one of its routed nonblocking collectives can hang.
// - MPI_THREAD_MULTIPLE: nothing is routed to fabcoll (everything falls back to PMPI).
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fabcoll/fabcoll.h"
#include "fabcoll/fabcoll_mpi.h"

namespace {

// ---- statistics ------------------------------------------------------------------------------
enum Coll : int {
  kBcast,
  kReduce,
  kAllreduce,
  kScan,
  kExscan,
  kBarrier,
  kGather,
  kScatter,
  kAllgather,
  kAllgatherv,
  kAlltoall,
  kAlltoallv,
  kReduceScatterBlock,
  kIbcast,
  kIreduce,
  kIallreduce,
  kIscan,
  kIexscan,
  kIbarrier,
  kIgather,
  kIscatter,
  kIallgather,
  kIallgatherv,
  kIalltoall,
  kIalltoallv,
  kIreduceScatterBlock,
  kCollCount
};
constexpr const char* kCollNames[kCollCount] = {"bcast",
                                                "reduce",
                                                "allreduce",
                                                "scan",
                                                "exscan",
                                                "barrier",
                                                "gather",
                                                "scatter",
                                                "allgather",
                                                "allgatherv",
                                                "alltoall",
                                                "alltoallv",
                                                "reduce_scatter_block",
                                                "ibcast",
                                                "ireduce",
                                                "iallreduce",
                                                "iscan",
                                                "iexscan",
                                                "ibarrier",
                                                "igather",
                                                "iscatter",
                                                "iallgather",
                                                "iallgatherv",
                                                "ialltoall",
                                                "ialltoallv",
                                                "ireduce_scatter_block"};

struct Pending {
  fc_request_t fr = FC_REQUEST_NULL;
  MPI_Request mr = MPI_REQUEST_NULL;
  MPI_Comm comm = MPI_COMM_NULL;
  int err = MPI_SUCCESS;
  std::vector<std::size_t> v[4];  // converted counts/displacements, alive until completion
  // exscan on rank 0: MPI leaves recvbuf undefined there, MPI libraries leave it untouched and
  // codes rely on that; fabcoll writes it, so the bytes are put back on completion.
  void* restore_to = nullptr;
  std::vector<unsigned char> saved;
  void restore() {
    if (restore_to != nullptr && !saved.empty())
      std::memcpy(restore_to, saved.data(), saved.size());
    restore_to = nullptr;
  }
};

struct State {
  bool active = false;  // fabcoll context up: collectives may be routed
  int verbose = 0;
  int world_rank = -1;
  fc_context_t ctx = nullptr;
  fc_comm_t world = FC_COMM_NULL;
  std::unordered_map<MPI_Comm, fc_comm_t> comms;  // mirrored communicators (not world)
  std::vector<Pending*> pending;                  // fabcoll requests not yet complete
  long routed[kCollCount] = {};
  long fallen[kCollCount] = {};
};
State& st() {
  static State s;
  return s;
}

// ---- communicators ----------------------------------------------------------------------------
fc_comm_t lookup(MPI_Comm comm) {
  State& s = st();
  if (comm == MPI_COMM_WORLD) return s.world;
  const auto it = s.comms.find(comm);
  return it == s.comms.end() ? FC_COMM_NULL : it->second;
}

// ---- datatypes and ops ------------------------------------------------------------------------
/// Bytes per element of a predefined datatype without holes (size == extent, lb == 0); 0 if not.
std::size_t plain_size(MPI_Datatype t) {
  if (t == MPI_DATATYPE_NULL) return 0;
  int ni = 0, na = 0, nd = 0, combiner = 0;
  if (PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner) != MPI_SUCCESS ||
      combiner != MPI_COMBINER_NAMED)
    return 0;
  int size = 0;
  MPI_Aint lb = 0, extent = 0;
  if (PMPI_Type_size(t, &size) != MPI_SUCCESS ||
      PMPI_Type_get_extent(t, &lb, &extent) != MPI_SUCCESS)
    return 0;
  if (size <= 0 || lb != 0 || extent != size) return 0;
  return static_cast<std::size_t>(size);
}

template <class T>
constexpr fc_datatype_t int_type() {
  static_assert(std::is_integral_v<T>);
  if constexpr (sizeof(T) == 1) return std::is_signed_v<T> ? FC_INT8 : FC_UINT8;
  if constexpr (sizeof(T) == 2) return std::is_signed_v<T> ? FC_INT16 : FC_UINT16;
  if constexpr (sizeof(T) == 4) return std::is_signed_v<T> ? FC_INT32 : FC_UINT32;
  return std::is_signed_v<T> ? FC_INT64 : FC_UINT64;
}

enum class Kind { none, integer, floating, byte, pair };

/// fabcoll datatype for a reduction on MPI datatype t.
Kind reduction_type(MPI_Datatype t, fc_datatype_t* out) {
  struct Entry {
    MPI_Datatype mpi;
    fc_datatype_t fc;
    Kind kind;
  };
  static const Entry entries[] = {
      {MPI_INT, int_type<int>(), Kind::integer},
      {MPI_DOUBLE, FC_DOUBLE, Kind::floating},
      {MPI_FLOAT, FC_FLOAT, Kind::floating},
      {MPI_LONG, int_type<long>(), Kind::integer},
      {MPI_UNSIGNED, int_type<unsigned>(), Kind::integer},
      {MPI_UNSIGNED_LONG, int_type<unsigned long>(), Kind::integer},
      {MPI_LONG_LONG_INT, int_type<long long>(), Kind::integer},
      {MPI_LONG_LONG, int_type<long long>(), Kind::integer},
      {MPI_UNSIGNED_LONG_LONG, int_type<unsigned long long>(), Kind::integer},
      {MPI_SHORT, int_type<short>(), Kind::integer},
      {MPI_UNSIGNED_SHORT, int_type<unsigned short>(), Kind::integer},
      {MPI_SIGNED_CHAR, int_type<signed char>(), Kind::integer},
      {MPI_UNSIGNED_CHAR, int_type<unsigned char>(), Kind::integer},
      {MPI_INT8_T, FC_INT8, Kind::integer},
      {MPI_INT16_T, FC_INT16, Kind::integer},
      {MPI_INT32_T, FC_INT32, Kind::integer},
      {MPI_INT64_T, FC_INT64, Kind::integer},
      {MPI_UINT8_T, FC_UINT8, Kind::integer},
      {MPI_UINT16_T, FC_UINT16, Kind::integer},
      {MPI_UINT32_T, FC_UINT32, Kind::integer},
      {MPI_UINT64_T, FC_UINT64, Kind::integer},
      {MPI_AINT, int_type<MPI_Aint>(), Kind::integer},
      {MPI_OFFSET, int_type<MPI_Offset>(), Kind::integer},
      {MPI_COUNT, int_type<MPI_Count>(), Kind::integer},
      {MPI_BYTE, FC_BYTE, Kind::byte},
      {MPI_FLOAT_INT, FC_FLOAT_INT, Kind::pair},
      {MPI_DOUBLE_INT, FC_DOUBLE_INT, Kind::pair},
  };
  for (const Entry& e : entries) {
    if (e.mpi == t) {
      *out = e.fc;
      return e.kind;
    }
  }
  return Kind::none;
}

/// Maps (datatype, op) to fabcoll's when MPI defines op on the datatype's class and fabcoll has
/// the same kernel; returns a reason for falling back otherwise (nullptr on success).
const char* reduction_args(MPI_Datatype t, MPI_Op op, int count, fc_datatype_t* fdt, fc_op_t* fop) {
  if (count < 0) return "negative count";
  const Kind kind = reduction_type(t, fdt);
  if (kind == Kind::none) return "datatype not mapped for reductions";
  if (kind == Kind::pair && *fdt == FC_DOUBLE_INT && fc_datatype_size(FC_DOUBLE_INT) != 16)
    return "MPI_DOUBLE_INT layout";
  const bool arith = kind == Kind::integer || kind == Kind::floating;
  const bool bits = kind == Kind::integer || kind == Kind::byte;
  if (op == MPI_SUM && arith)
    *fop = FC_SUM;
  else if (op == MPI_PROD && arith)
    *fop = FC_PROD;
  else if (op == MPI_MIN && arith)
    *fop = FC_MIN;
  else if (op == MPI_MAX && arith)
    *fop = FC_MAX;
  else if (op == MPI_LAND && kind == Kind::integer)
    *fop = FC_LAND;
  else if (op == MPI_LOR && kind == Kind::integer)
    *fop = FC_LOR;
  else if (op == MPI_LXOR && kind == Kind::integer)
    *fop = FC_LXOR;
  else if (op == MPI_BAND && bits)
    *fop = FC_BAND;
  else if (op == MPI_BOR && bits)
    *fop = FC_BOR;
  else if (op == MPI_BXOR && bits)
    *fop = FC_BXOR;
  else if (op == MPI_MINLOC && kind == Kind::pair)
    *fop = FC_MINLOC;
  else if (op == MPI_MAXLOC && kind == Kind::pair)
    *fop = FC_MAXLOC;
  else
    return "op not mapped for this datatype (user op or not predefined)";
  return nullptr;
}

const void* in_place(const void* buf) { return buf == MPI_IN_PLACE ? FC_IN_PLACE : buf; }

// ---- errors, logging ---------------------------------------------------------------------------
int fallback(Coll c, const char* why) {
  State& s = st();
  if (s.active) {
    ++s.fallen[c];
    if (s.verbose >= 1)
      std::fprintf(stderr, "fabcoll_mpi: rank %d: MPI_%s -> PMPI (%s)\n", s.world_rank,
                   kCollNames[c], why);
  }
  return 0;
}

int report(MPI_Comm comm, const char* what, int rc) {
  std::fprintf(stderr, "fabcoll_mpi: rank %d: %s failed: %s: %s\n", st().world_rank, what,
               fc_strerror(rc), fc_last_error_message());
  if (comm != MPI_COMM_NULL) PMPI_Comm_call_errhandler(comm, MPI_ERR_OTHER);
  return MPI_ERR_OTHER;
}

// ---- nonblocking: generalized requests --------------------------------------------------------
int query_fn(void* extra, MPI_Status* status) {
  const auto* p = static_cast<const Pending*>(extra);
  PMPI_Status_set_elements(status, MPI_BYTE, 0);
  PMPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_ANY_SOURCE;
  status->MPI_TAG = MPI_ANY_TAG;
  return p->err;
}
int free_fn(void* extra) {
  delete static_cast<Pending*>(extra);
  return MPI_SUCCESS;
}
int cancel_fn(void* /*extra*/, int /*complete*/) { return MPI_SUCCESS; }  // collectives: no cancel

/// Completes p's generalized request (p may be freed by MPI from then on).
void complete(Pending* p) {
  State& s = st();
  for (std::size_t i = 0; i < s.pending.size(); ++i) {
    if (s.pending[i] == p) {
      s.pending.erase(s.pending.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
  }
  p->restore();
  const MPI_Request mr = p->mr;
  PMPI_Grequest_complete(mr);
}

/// One progress step on every outstanding fabcoll request.
void drive_all() {
  State& s = st();
  if (s.pending.empty()) return;
  const std::vector<Pending*> snapshot = s.pending;
  for (Pending* p : snapshot) {
    int done = 0;
    const int rc = fc_test(&p->fr, &done);
    if (rc != FC_SUCCESS) {
      std::fprintf(stderr, "fabcoll_mpi: rank %d: nonblocking collective failed: %s: %s\n",
                   s.world_rank, fc_strerror(rc), fc_last_error_message());
      p->err = MPI_ERR_OTHER;
      done = 1;
    }
    if (done) complete(p);
  }
}

/// Blocks until p's fabcoll request is done (used by MPI_Request_free, MPI_Comm_free, finalize).
void finish(Pending* p) {
  if (p->fr != FC_REQUEST_NULL) {
    const int rc = fc_wait(&p->fr);
    if (rc != FC_SUCCESS) {
      std::fprintf(stderr, "fabcoll_mpi: rank %d: nonblocking collective failed: %s: %s\n",
                   st().world_rank, fc_strerror(rc), fc_last_error_message());
      p->err = MPI_ERR_OTHER;
    }
  }
  complete(p);
}

Pending* find_pending(MPI_Request r) {
  if (r == MPI_REQUEST_NULL) return nullptr;
  for (Pending* p : st().pending)
    if (p->mr == r) return p;
  return nullptr;
}

/// A blocking point-to-point PMPI call while fabcoll requests are outstanding: MPI's progress
/// rule says those must still complete (a peer may wait in MPI_Wait for our part before it sends
/// what we receive), so start the nonblocking form and poll both engines. Without outstanding
/// fabcoll requests, the blocking call itself. (Not for collectives: a nonblocking collective
/// does not match a blocking one.)
template <class Nonblocking, class Blocking>
int pmpi_progressing(Nonblocking&& start, Blocking&& blocking,
                     MPI_Status* status = MPI_STATUS_IGNORE) {
  if (st().pending.empty()) return blocking();
  MPI_Request r = MPI_REQUEST_NULL;
  int rc = start(&r);
  if (rc != MPI_SUCCESS) return rc;
  for (;;) {
    drive_all();
    int flag = 0;
    rc = PMPI_Test(&r, &flag, status);
    if (rc != MPI_SUCCESS || flag) return rc;
  }
}

/// Runs a routed collective: start(nullptr) is the blocking call, start(&fr) the nonblocking one.
template <class Start>
int run(Coll c, MPI_Comm comm, MPI_Request* request, std::unique_ptr<Pending> p, Start&& start) {
  State& s = st();
  ++s.routed[c];
  if (request == nullptr) {
    const int rc = start(static_cast<fc_request_t*>(nullptr));
    p->restore();
    return rc == FC_SUCCESS ? MPI_SUCCESS : report(comm, kCollNames[c], rc);
  }
  const int rc = start(&p->fr);
  if (rc != FC_SUCCESS) {
    *request = MPI_REQUEST_NULL;
    return report(comm, kCollNames[c], rc);
  }
  p->comm = comm;
  Pending* raw = p.release();
  const int mrc = PMPI_Grequest_start(query_fn, free_fn, cancel_fn, raw, &raw->mr);
  if (mrc != MPI_SUCCESS) {  // cannot hand back a request: finish here
    fc_wait(&raw->fr);
    delete raw;
    *request = MPI_REQUEST_NULL;
    return mrc;
  }
  *request = raw->mr;
  s.pending.push_back(raw);
  return MPI_SUCCESS;
}

// ---- argument helpers for the data-movement collectives ---------------------------------------
struct Side {
  std::size_t bytes = 0;  // count * element size
  bool ok = true;
};
Side side(int count, MPI_Datatype t) {
  Side sd;
  const std::size_t es = plain_size(t);
  if (count < 0 || es == 0) {
    sd.ok = false;
    return sd;
  }
  sd.bytes = static_cast<std::size_t>(count) * es;
  return sd;
}
/// counts[i] * es into out (false on a negative entry).
bool scale(const int* v, int n, std::size_t es, std::vector<std::size_t>& out) {
  if (v == nullptr) return false;
  out.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    if (v[i] < 0) return false;
    out[static_cast<std::size_t>(i)] = static_cast<std::size_t>(v[i]) * es;
  }
  return true;
}

int comm_rank(fc_comm_t c) {
  int r = -1;
  fc_comm_rank(c, &r);
  return r;
}
int comm_size(fc_comm_t c) {
  int n = 0;
  fc_comm_size(c, &n);
  return n;
}

// ---- the collectives, shared by blocking (request == nullptr) and nonblocking forms ------------
// Each returns -1 to ask the caller for the PMPI path, else an MPI return code.
constexpr int kFallback = -1;

int do_bcast(Coll c, void* buf, int count, MPI_Datatype t, int root, MPI_Comm comm,
             MPI_Request* req) {
  const fc_comm_t fc = lookup(comm);
  if (fc == FC_COMM_NULL) return fallback(c, "communicator not mirrored"), kFallback;
  const Side sd = side(count, t);
  if (!sd.ok) return fallback(c, "datatype not predefined-contiguous or bad count"), kFallback;
  return run(c, comm, req, std::make_unique<Pending>(), [&](fc_request_t* r) {
    return r ? fc_ibcast(buf, sd.bytes, FC_BYTE, root, fc, r)
             : fc_bcast(buf, sd.bytes, FC_BYTE, root, fc);
  });
}

enum class Red { reduce, allreduce, scan, exscan, rsb };

int do_reduction(Coll c, Red kind, const void* sb, void* rb, int count, MPI_Datatype t, MPI_Op op,
                 int root, MPI_Comm comm, MPI_Request* req) {
  const fc_comm_t fc = lookup(comm);
  if (fc == FC_COMM_NULL) return fallback(c, "communicator not mirrored"), kFallback;
  fc_datatype_t dt = FC_BYTE;
  fc_op_t fop = FC_OP_NULL;
  if (const char* why = reduction_args(t, op, count, &dt, &fop)) return fallback(c, why), kFallback;
  const void* s = in_place(sb);
  const auto n = static_cast<std::size_t>(count);
  auto pend = std::make_unique<Pending>();
  if (kind == Red::exscan && comm_rank(fc) == 0 && n > 0 && rb != nullptr) {
    const auto* bytes = static_cast<const unsigned char*>(rb);
    pend->saved.assign(bytes, bytes + n * fc_datatype_size(dt));
    pend->restore_to = rb;
  }
  return run(c, comm, req, std::move(pend), [&](fc_request_t* r) {
    switch (kind) {
      case Red::reduce:
        return r ? fc_ireduce(s, rb, n, dt, fop, root, fc, r)
                 : fc_reduce(s, rb, n, dt, fop, root, fc);
      case Red::allreduce:
        return r ? fc_iallreduce(s, rb, n, dt, fop, fc, r) : fc_allreduce(s, rb, n, dt, fop, fc);
      case Red::scan:
        return r ? fc_iscan(s, rb, n, dt, fop, fc, r) : fc_scan(s, rb, n, dt, fop, fc);
      case Red::exscan:
        return r ? fc_iexscan(s, rb, n, dt, fop, fc, r) : fc_exscan(s, rb, n, dt, fop, fc);
      case Red::rsb:
        return r ? fc_ireduce_scatter_block(s, rb, n, dt, fop, fc, r)
                 : fc_reduce_scatter_block(s, rb, n, dt, fop, fc);
    }
    return static_cast<int>(FC_ERR_INTERNAL);
  });
}

int do_barrier(Coll c, MPI_Comm comm, MPI_Request* req) {
  const fc_comm_t fc = lookup(comm);
  if (fc == FC_COMM_NULL) return fallback(c, "communicator not mirrored"), kFallback;
  return run(c, comm, req, std::make_unique<Pending>(),
             [&](fc_request_t* r) { return r ? fc_ibarrier(fc, r) : fc_barrier(fc); });
}

enum class Blk { gather, scatter, allgather, alltoall };

int do_block(Coll c, Blk kind, const void* sb, int sc, MPI_Datatype st_, void* rb, int rc,
             MPI_Datatype rt, int root, MPI_Comm comm, MPI_Request* req) {
  const fc_comm_t fc = lookup(comm);
  if (fc == FC_COMM_NULL) return fallback(c, "communicator not mirrored"), kFallback;
  const int me = comm_rank(fc);
  const bool at_root = me == root;
  // Which sides MPI reads on this rank (the others are insignificant and not inspected).
  bool send_matters = true, recv_matters = true;
  switch (kind) {
    case Blk::gather:
      send_matters = sb != MPI_IN_PLACE;
      recv_matters = at_root;
      break;
    case Blk::scatter:
      send_matters = at_root;
      recv_matters = rb != MPI_IN_PLACE;
      break;
    case Blk::allgather:
      send_matters = sb != MPI_IN_PLACE;
      break;
    case Blk::alltoall:
      if (sb == MPI_IN_PLACE) return fallback(c, "MPI_IN_PLACE alltoall"), kFallback;
      break;
  }
  Side s, r;
  if (send_matters) s = side(sc, st_);
  if (recv_matters) r = side(rc, rt);
  if (!s.ok || !r.ok)
    return fallback(c, "datatype not predefined-contiguous or bad count"), kFallback;
  const void* fsb = in_place(sb);
  void* frb = rb == MPI_IN_PLACE ? FC_IN_PLACE : rb;
  return run(c, comm, req, std::make_unique<Pending>(), [&](fc_request_t* q) {
    switch (kind) {
      case Blk::gather:
        return q ? fc_igather(fsb, s.bytes, FC_BYTE, frb, r.bytes, FC_BYTE, root, fc, q)
                 : fc_gather(fsb, s.bytes, FC_BYTE, frb, r.bytes, FC_BYTE, root, fc);
      case Blk::scatter:
        return q ? fc_iscatter(fsb, s.bytes, FC_BYTE, frb, r.bytes, FC_BYTE, root, fc, q)
                 : fc_scatter(fsb, s.bytes, FC_BYTE, frb, r.bytes, FC_BYTE, root, fc);
      case Blk::allgather:
        return q ? fc_iallgather(fsb, s.bytes, FC_BYTE, frb, r.bytes, FC_BYTE, fc, q)
                 : fc_allgather(fsb, s.bytes, FC_BYTE, frb, r.bytes, FC_BYTE, fc);
      case Blk::alltoall:
        return q ? fc_ialltoall(fsb, s.bytes, FC_BYTE, frb, r.bytes, FC_BYTE, fc, q)
                 : fc_alltoall(fsb, s.bytes, FC_BYTE, frb, r.bytes, FC_BYTE, fc);
    }
    return static_cast<int>(FC_ERR_INTERNAL);
  });
}

int do_allgatherv(Coll c, const void* sb, int sc, MPI_Datatype st_, void* rb, const int* rcounts,
                  const int* displs, MPI_Datatype rt, MPI_Comm comm, MPI_Request* req) {
  const fc_comm_t fc = lookup(comm);
  if (fc == FC_COMM_NULL) return fallback(c, "communicator not mirrored"), kFallback;
  const int p = comm_size(fc);
  const std::size_t rs = plain_size(rt);
  Side s;
  if (sb != MPI_IN_PLACE) s = side(sc, st_);
  auto pend = std::make_unique<Pending>();
  if (rs == 0 || !s.ok || !scale(rcounts, p, rs, pend->v[0]) || !scale(displs, p, rs, pend->v[1]))
    return fallback(c, "datatype not predefined-contiguous or bad count/displacement"), kFallback;
  const std::size_t* rcb = pend->v[0].data();
  const std::size_t* dsb = pend->v[1].data();
  const void* fsb = in_place(sb);
  return run(c, comm, req, std::move(pend), [&](fc_request_t* q) {
    return q ? fc_iallgatherv(fsb, s.bytes, FC_BYTE, rb, rcb, dsb, FC_BYTE, fc, q)
             : fc_allgatherv(fsb, s.bytes, FC_BYTE, rb, rcb, dsb, FC_BYTE, fc);
  });
}

int do_alltoallv(Coll c, const void* sb, const int* scounts, const int* sdispls, MPI_Datatype st_,
                 void* rb, const int* rcounts, const int* rdispls, MPI_Datatype rt, MPI_Comm comm,
                 MPI_Request* req) {
  const fc_comm_t fc = lookup(comm);
  if (fc == FC_COMM_NULL) return fallback(c, "communicator not mirrored"), kFallback;
  if (sb == MPI_IN_PLACE) return fallback(c, "MPI_IN_PLACE alltoallv"), kFallback;
  const int p = comm_size(fc);
  const std::size_t ss = plain_size(st_);
  const std::size_t rs = plain_size(rt);
  auto pend = std::make_unique<Pending>();
  if (ss == 0 || rs == 0 || !scale(scounts, p, ss, pend->v[0]) ||
      !scale(sdispls, p, ss, pend->v[1]) || !scale(rcounts, p, rs, pend->v[2]) ||
      !scale(rdispls, p, rs, pend->v[3]))
    return fallback(c, "datatype not predefined-contiguous or bad count/displacement"), kFallback;
  const std::size_t* a = pend->v[0].data();
  const std::size_t* b = pend->v[1].data();
  const std::size_t* d = pend->v[2].data();
  const std::size_t* e = pend->v[3].data();
  return run(c, comm, req, std::move(pend), [&](fc_request_t* q) {
    return q ? fc_ialltoallv(sb, a, b, FC_BYTE, rb, d, e, FC_BYTE, fc, q)
             : fc_alltoallv(sb, a, b, FC_BYTE, rb, d, e, FC_BYTE, fc);
  });
}

// ---- start-up, communicators, finalize --------------------------------------------------------
void setup(int provided) {
  State& s = st();
  const char* v = std::getenv("FABCOLL_MPI_VERBOSE");
  s.verbose = v != nullptr ? std::atoi(v) : 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &s.world_rank);
  const char* off = std::getenv("FABCOLL_MPI_DISABLE");
  if (off != nullptr && std::strcmp(off, "1") == 0) {
    if (s.verbose >= 1)
      std::fprintf(stderr, "fabcoll_mpi: rank %d: FABCOLL_MPI_DISABLE=1, all calls go to PMPI\n",
                   s.world_rank);
    return;
  }
  if (provided == MPI_THREAD_MULTIPLE) {
    if (s.verbose >= 1)
      std::fprintf(stderr, "fabcoll_mpi: rank %d: MPI_THREAD_MULTIPLE, all calls go to PMPI\n",
                   s.world_rank);
    return;
  }
  // s.active is still false: the MPI calls inside fc_init_from_mpi go straight to PMPI.
  fc_context_t ctx = nullptr;
  const int rc = fc_init_from_mpi(MPI_COMM_WORLD, &ctx);
  int ok = rc == FC_SUCCESS ? 1 : 0;
  if (!ok)
    std::fprintf(stderr, "fabcoll_mpi: rank %d: fc_init_from_mpi failed: %s: %s\n", s.world_rank,
                 fc_strerror(rc), fc_last_error_message());
  fc_comm_t world = FC_COMM_NULL;
  if (ok && fc_comm_world(ctx, &world) != FC_SUCCESS) ok = 0;
  PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!ok) {
    if (ctx != nullptr) fc_finalize(ctx);
    if (s.world_rank == 0)
      std::fprintf(stderr,
                   "fabcoll_mpi: fabcoll did not start on every rank; all calls go to PMPI\n");
    return;
  }
  s.ctx = ctx;
  s.world = world;
  s.active = true;
}

/// After PMPI made newcomm from comm: mirror it with fc_comm_split, or leave it unmirrored
/// (its collectives then go to PMPI) unless every member mirrored it the same way.
void mirror(MPI_Comm comm, int color, int key, MPI_Comm newcomm) {
  State& s = st();
  if (!s.active) return;
  const fc_comm_t parent = lookup(comm);
  if (parent == FC_COMM_NULL) return;  // every rank of comm sees the same
  fc_comm_t child = FC_COMM_NULL;
  const int rc = fc_comm_split(parent, color == MPI_UNDEFINED ? FC_UNDEFINED : color, key, &child);
  if (rc != FC_SUCCESS)
    std::fprintf(stderr, "fabcoll_mpi: rank %d: fc_comm_split failed: %s: %s\n", s.world_rank,
                 fc_strerror(rc), fc_last_error_message());
  if (newcomm == MPI_COMM_NULL) {
    if (child != FC_COMM_NULL) fc_comm_free(&child);
    return;
  }
  int ok = rc == FC_SUCCESS && child != FC_COMM_NULL ? 1 : 0;
  if (ok) {  // same ranks in the same order
    int mr = -1, ms = -1;
    PMPI_Comm_rank(newcomm, &mr);
    PMPI_Comm_size(newcomm, &ms);
    ok = comm_rank(child) == mr && comm_size(child) == ms ? 1 : 0;
  }
  PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, newcomm);
  if (!ok) {
    if (child != FC_COMM_NULL) fc_comm_free(&child);
    if (s.verbose >= 1)
      std::fprintf(stderr,
                   "fabcoll_mpi: rank %d: communicator not mirrored, its collectives go to PMPI\n",
                   s.world_rank);
    return;
  }
  s.comms[newcomm] = child;
}

void print_stats() {
  State& s = st();
  long routed = 0, fallen = 0;
  for (int c = 0; c < kCollCount; ++c) {
    routed += s.routed[c];
    fallen += s.fallen[c];
  }
  for (int c = 0; c < kCollCount; ++c) {
    if (s.routed[c] + s.fallen[c] > 0)
      std::fprintf(stderr, "fabcoll_mpi: rank %d: MPI_%s fabcoll=%ld pmpi=%ld\n", s.world_rank,
                   kCollNames[c], s.routed[c], s.fallen[c]);
  }
  std::fprintf(stderr, "fabcoll_mpi: rank %d: total fabcoll=%ld pmpi=%ld\n", s.world_rank, routed,
               fallen);
}

}  // namespace

// ---- the intercepted MPI functions -------------------------------------------------------------
extern "C" {

int MPI_Init(int* argc, char*** argv) {
  const int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) setup(MPI_THREAD_SINGLE);
  return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) setup(*provided);
  return rc;
}

int MPI_Finalize(void) {
  State& s = st();
  if (s.active) {
    while (!s.pending.empty()) finish(s.pending.front());
    if (s.verbose >= 2) print_stats();
    for (auto& [mc, fcc] : s.comms) fc_comm_free(&fcc);
    s.comms.clear();
    s.active = false;
    const int rc = fc_finalize(s.ctx);
    if (rc != FC_SUCCESS)
      std::fprintf(stderr, "fabcoll_mpi: rank %d: fc_finalize failed: %s: %s\n", s.world_rank,
                   fc_strerror(rc), fc_last_error_message());
    s.ctx = nullptr;
    s.world = FC_COMM_NULL;
  }
  return PMPI_Finalize();
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  const int rc = PMPI_Comm_split(comm, color, key, newcomm);
  if (rc == MPI_SUCCESS) mirror(comm, color, key, *newcomm);
  return rc;
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  const int rc = PMPI_Comm_dup(comm, newcomm);
  if (rc == MPI_SUCCESS && st().active && lookup(comm) != FC_COMM_NULL) {
    int r = 0;
    PMPI_Comm_rank(comm, &r);
    mirror(comm, 0, r, *newcomm);
  }
  return rc;
}

int MPI_Comm_free(MPI_Comm* comm) {
  State& s = st();
  if (comm != nullptr && s.active) {
    const auto it = s.comms.find(*comm);
    if (it != s.comms.end()) {
      // MPI lets a communicator be freed with operations pending: finish ours first.
      for (bool again = true; again;) {
        again = false;
        for (Pending* p : s.pending) {
          if (p->comm == *comm) {
            finish(p);
            again = true;
            break;
          }
        }
      }
      fc_comm_free(&it->second);
      s.comms.erase(it);
    }
  }
  return PMPI_Comm_free(comm);
}

// -- blocking collectives
int MPI_Bcast(void* buf, int count, MPI_Datatype t, int root, MPI_Comm comm) {
  if (!st().active) return PMPI_Bcast(buf, count, t, root, comm);
  const int rc = do_bcast(kBcast, buf, count, t, root, comm, nullptr);
  return rc != kFallback ? rc : PMPI_Bcast(buf, count, t, root, comm);
}

int MPI_Reduce(const void* sb, void* rb, int count, MPI_Datatype t, MPI_Op op, int root,
               MPI_Comm comm) {
  if (!st().active) return PMPI_Reduce(sb, rb, count, t, op, root, comm);
  const int rc = do_reduction(kReduce, Red::reduce, sb, rb, count, t, op, root, comm, nullptr);
  return rc != kFallback ? rc : PMPI_Reduce(sb, rb, count, t, op, root, comm);
}

int MPI_Allreduce(const void* sb, void* rb, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
  if (!st().active) return PMPI_Allreduce(sb, rb, count, t, op, comm);
  const int rc = do_reduction(kAllreduce, Red::allreduce, sb, rb, count, t, op, 0, comm, nullptr);
  return rc != kFallback ? rc : PMPI_Allreduce(sb, rb, count, t, op, comm);
}

int MPI_Scan(const void* sb, void* rb, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
  if (!st().active) return PMPI_Scan(sb, rb, count, t, op, comm);
  const int rc = do_reduction(kScan, Red::scan, sb, rb, count, t, op, 0, comm, nullptr);
  return rc != kFallback ? rc : PMPI_Scan(sb, rb, count, t, op, comm);
}

int MPI_Exscan(const void* sb, void* rb, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
  if (!st().active) return PMPI_Exscan(sb, rb, count, t, op, comm);
  const int rc = do_reduction(kExscan, Red::exscan, sb, rb, count, t, op, 0, comm, nullptr);
  return rc != kFallback ? rc : PMPI_Exscan(sb, rb, count, t, op, comm);
}

int MPI_Reduce_scatter_block(const void* sb, void* rb, int count, MPI_Datatype t, MPI_Op op,
                             MPI_Comm comm) {
  if (!st().active) return PMPI_Reduce_scatter_block(sb, rb, count, t, op, comm);
  const int rc =
      do_reduction(kReduceScatterBlock, Red::rsb, sb, rb, count, t, op, 0, comm, nullptr);
  return rc != kFallback ? rc : PMPI_Reduce_scatter_block(sb, rb, count, t, op, comm);
}

int MPI_Barrier(MPI_Comm comm) {
  if (!st().active) return PMPI_Barrier(comm);
  const int rc = do_barrier(kBarrier, comm, nullptr);
  return rc != kFallback ? rc : PMPI_Barrier(comm);
}

int MPI_Gather(const void* sb, int sc, MPI_Datatype stype, void* rb, int rc_, MPI_Datatype rtype,
               int root, MPI_Comm comm) {
  if (!st().active) return PMPI_Gather(sb, sc, stype, rb, rc_, rtype, root, comm);
  const int rc = do_block(kGather, Blk::gather, sb, sc, stype, rb, rc_, rtype, root, comm, nullptr);
  return rc != kFallback ? rc : PMPI_Gather(sb, sc, stype, rb, rc_, rtype, root, comm);
}

int MPI_Scatter(const void* sb, int sc, MPI_Datatype stype, void* rb, int rc_, MPI_Datatype rtype,
                int root, MPI_Comm comm) {
  if (!st().active) return PMPI_Scatter(sb, sc, stype, rb, rc_, rtype, root, comm);
  const int rc =
      do_block(kScatter, Blk::scatter, sb, sc, stype, rb, rc_, rtype, root, comm, nullptr);
  return rc != kFallback ? rc : PMPI_Scatter(sb, sc, stype, rb, rc_, rtype, root, comm);
}

int MPI_Allgather(const void* sb, int sc, MPI_Datatype stype, void* rb, int rc_, MPI_Datatype rtype,
                  MPI_Comm comm) {
  if (!st().active) return PMPI_Allgather(sb, sc, stype, rb, rc_, rtype, comm);
  const int rc =
      do_block(kAllgather, Blk::allgather, sb, sc, stype, rb, rc_, rtype, 0, comm, nullptr);
  return rc != kFallback ? rc : PMPI_Allgather(sb, sc, stype, rb, rc_, rtype, comm);
}

int MPI_Alltoall(const void* sb, int sc, MPI_Datatype stype, void* rb, int rc_, MPI_Datatype rtype,
                 MPI_Comm comm) {
  if (!st().active) return PMPI_Alltoall(sb, sc, stype, rb, rc_, rtype, comm);
  const int rc =
      do_block(kAlltoall, Blk::alltoall, sb, sc, stype, rb, rc_, rtype, 0, comm, nullptr);
  return rc != kFallback ? rc : PMPI_Alltoall(sb, sc, stype, rb, rc_, rtype, comm);
}

int MPI_Allgatherv(const void* sb, int sc, MPI_Datatype stype, void* rb, const int rcounts[],
                   const int displs[], MPI_Datatype rtype, MPI_Comm comm) {
  if (!st().active) return PMPI_Allgatherv(sb, sc, stype, rb, rcounts, displs, rtype, comm);
  const int rc =
      do_allgatherv(kAllgatherv, sb, sc, stype, rb, rcounts, displs, rtype, comm, nullptr);
  return rc != kFallback ? rc : PMPI_Allgatherv(sb, sc, stype, rb, rcounts, displs, rtype, comm);
}

int MPI_Alltoallv(const void* sb, const int scounts[], const int sdispls[], MPI_Datatype stype,
                  void* rb, const int rcounts[], const int rdispls[], MPI_Datatype rtype,
                  MPI_Comm comm) {
  if (!st().active)
    return PMPI_Alltoallv(sb, scounts, sdispls, stype, rb, rcounts, rdispls, rtype, comm);
  const int rc = do_alltoallv(kAlltoallv, sb, scounts, sdispls, stype, rb, rcounts, rdispls, rtype,
                              comm, nullptr);
  return rc != kFallback
             ? rc
             : PMPI_Alltoallv(sb, scounts, sdispls, stype, rb, rcounts, rdispls, rtype, comm);
}

// -- nonblocking collectives
int MPI_Ibcast(void* buf, int count, MPI_Datatype t, int root, MPI_Comm comm, MPI_Request* req) {
  if (!st().active) return PMPI_Ibcast(buf, count, t, root, comm, req);
  const int rc = do_bcast(kIbcast, buf, count, t, root, comm, req);
  return rc != kFallback ? rc : PMPI_Ibcast(buf, count, t, root, comm, req);
}

int MPI_Ireduce(const void* sb, void* rb, int count, MPI_Datatype t, MPI_Op op, int root,
                MPI_Comm comm, MPI_Request* req) {
  if (!st().active) return PMPI_Ireduce(sb, rb, count, t, op, root, comm, req);
  const int rc = do_reduction(kIreduce, Red::reduce, sb, rb, count, t, op, root, comm, req);
  return rc != kFallback ? rc : PMPI_Ireduce(sb, rb, count, t, op, root, comm, req);
}

int MPI_Iallreduce(const void* sb, void* rb, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm,
                   MPI_Request* req) {
  if (!st().active) return PMPI_Iallreduce(sb, rb, count, t, op, comm, req);
  const int rc = do_reduction(kIallreduce, Red::allreduce, sb, rb, count, t, op, 0, comm, req);
  return rc != kFallback ? rc : PMPI_Iallreduce(sb, rb, count, t, op, comm, req);
}

int MPI_Iscan(const void* sb, void* rb, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm,
              MPI_Request* req) {
  if (!st().active) return PMPI_Iscan(sb, rb, count, t, op, comm, req);
  const int rc = do_reduction(kIscan, Red::scan, sb, rb, count, t, op, 0, comm, req);
  return rc != kFallback ? rc : PMPI_Iscan(sb, rb, count, t, op, comm, req);
}

int MPI_Iexscan(const void* sb, void* rb, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm,
                MPI_Request* req) {
  if (!st().active) return PMPI_Iexscan(sb, rb, count, t, op, comm, req);
  const int rc = do_reduction(kIexscan, Red::exscan, sb, rb, count, t, op, 0, comm, req);
  return rc != kFallback ? rc : PMPI_Iexscan(sb, rb, count, t, op, comm, req);
}

int MPI_Ireduce_scatter_block(const void* sb, void* rb, int count, MPI_Datatype t, MPI_Op op,
                              MPI_Comm comm, MPI_Request* req) {
  if (!st().active) return PMPI_Ireduce_scatter_block(sb, rb, count, t, op, comm, req);
  const int rc = do_reduction(kIreduceScatterBlock, Red::rsb, sb, rb, count, t, op, 0, comm, req);
  return rc != kFallback ? rc : PMPI_Ireduce_scatter_block(sb, rb, count, t, op, comm, req);
}

int MPI_Ibarrier(MPI_Comm comm, MPI_Request* req) {
  if (!st().active) return PMPI_Ibarrier(comm, req);
  const int rc = do_barrier(kIbarrier, comm, req);
  return rc != kFallback ? rc : PMPI_Ibarrier(comm, req);
}

int MPI_Igather(const void* sb, int sc, MPI_Datatype stype, void* rb, int rc_, MPI_Datatype rtype,
                int root, MPI_Comm comm, MPI_Request* req) {
  if (!st().active) return PMPI_Igather(sb, sc, stype, rb, rc_, rtype, root, comm, req);
  const int rc = do_block(kIgather, Blk::gather, sb, sc, stype, rb, rc_, rtype, root, comm, req);
  return rc != kFallback ? rc : PMPI_Igather(sb, sc, stype, rb, rc_, rtype, root, comm, req);
}

int MPI_Iscatter(const void* sb, int sc, MPI_Datatype stype, void* rb, int rc_, MPI_Datatype rtype,
                 int root, MPI_Comm comm, MPI_Request* req) {
  if (!st().active) return PMPI_Iscatter(sb, sc, stype, rb, rc_, rtype, root, comm, req);
  const int rc = do_block(kIscatter, Blk::scatter, sb, sc, stype, rb, rc_, rtype, root, comm, req);
  return rc != kFallback ? rc : PMPI_Iscatter(sb, sc, stype, rb, rc_, rtype, root, comm, req);
}

int MPI_Iallgather(const void* sb, int sc, MPI_Datatype stype, void* rb, int rc_,
                   MPI_Datatype rtype, MPI_Comm comm, MPI_Request* req) {
  if (!st().active) return PMPI_Iallgather(sb, sc, stype, rb, rc_, rtype, comm, req);
  const int rc = do_block(kIallgather, Blk::allgather, sb, sc, stype, rb, rc_, rtype, 0, comm, req);
  return rc != kFallback ? rc : PMPI_Iallgather(sb, sc, stype, rb, rc_, rtype, comm, req);
}

int MPI_Ialltoall(const void* sb, int sc, MPI_Datatype stype, void* rb, int rc_, MPI_Datatype rtype,
                  MPI_Comm comm, MPI_Request* req) {
  if (!st().active) return PMPI_Ialltoall(sb, sc, stype, rb, rc_, rtype, comm, req);
  const int rc = do_block(kIalltoall, Blk::alltoall, sb, sc, stype, rb, rc_, rtype, 0, comm, req);
  return rc != kFallback ? rc : PMPI_Ialltoall(sb, sc, stype, rb, rc_, rtype, comm, req);
}

int MPI_Iallgatherv(const void* sb, int sc, MPI_Datatype stype, void* rb, const int rcounts[],
                    const int displs[], MPI_Datatype rtype, MPI_Comm comm, MPI_Request* req) {
  if (!st().active) return PMPI_Iallgatherv(sb, sc, stype, rb, rcounts, displs, rtype, comm, req);
  const int rc = do_allgatherv(kIallgatherv, sb, sc, stype, rb, rcounts, displs, rtype, comm, req);
  return rc != kFallback ? rc
                         : PMPI_Iallgatherv(sb, sc, stype, rb, rcounts, displs, rtype, comm, req);
}

int MPI_Ialltoallv(const void* sb, const int scounts[], const int sdispls[], MPI_Datatype stype,
                   void* rb, const int rcounts[], const int rdispls[], MPI_Datatype rtype,
                   MPI_Comm comm, MPI_Request* req) {
  if (!st().active)
    return PMPI_Ialltoallv(sb, scounts, sdispls, stype, rb, rcounts, rdispls, rtype, comm, req);
  const int rc = do_alltoallv(kIalltoallv, sb, scounts, sdispls, stype, rb, rcounts, rdispls, rtype,
                              comm, req);
  return rc != kFallback
             ? rc
             : PMPI_Ialltoallv(sb, scounts, sdispls, stype, rb, rcounts, rdispls, rtype, comm, req);
}

// -- completion: drive the outstanding fabcoll requests, let PMPI do the rest
int MPI_Wait(MPI_Request* r, MPI_Status* status) {
  if (st().pending.empty()) return PMPI_Wait(r, status);
  for (;;) {
    drive_all();
    int flag = 0;
    const int rc = PMPI_Test(r, &flag, status);
    if (rc != MPI_SUCCESS || flag) return rc;
    if (st().pending.empty()) return PMPI_Wait(r, status);
  }
}

int MPI_Test(MPI_Request* r, int* flag, MPI_Status* status) {
  drive_all();
  return PMPI_Test(r, flag, status);
}

int MPI_Waitall(int n, MPI_Request rs[], MPI_Status ss[]) {
  if (st().pending.empty()) return PMPI_Waitall(n, rs, ss);
  for (;;) {
    drive_all();
    int flag = 0;
    const int rc = PMPI_Testall(n, rs, &flag, ss);
    if (rc != MPI_SUCCESS || flag) return rc;
    if (st().pending.empty()) return PMPI_Waitall(n, rs, ss);
  }
}

int MPI_Testall(int n, MPI_Request rs[], int* flag, MPI_Status ss[]) {
  drive_all();
  return PMPI_Testall(n, rs, flag, ss);
}

int MPI_Waitany(int n, MPI_Request rs[], int* index, MPI_Status* status) {
  if (st().pending.empty()) return PMPI_Waitany(n, rs, index, status);
  for (;;) {
    drive_all();
    int flag = 0;
    const int rc = PMPI_Testany(n, rs, index, &flag, status);
    if (rc != MPI_SUCCESS || flag) return rc;
    if (st().pending.empty()) return PMPI_Waitany(n, rs, index, status);
  }
}

int MPI_Testany(int n, MPI_Request rs[], int* index, int* flag, MPI_Status* status) {
  drive_all();
  return PMPI_Testany(n, rs, index, flag, status);
}

int MPI_Waitsome(int n, MPI_Request rs[], int* outcount, int indices[], MPI_Status ss[]) {
  if (st().pending.empty()) return PMPI_Waitsome(n, rs, outcount, indices, ss);
  for (;;) {
    drive_all();
    const int rc = PMPI_Testsome(n, rs, outcount, indices, ss);
    if (rc != MPI_SUCCESS || *outcount != 0) return rc;
    if (st().pending.empty()) return PMPI_Waitsome(n, rs, outcount, indices, ss);
  }
}

int MPI_Testsome(int n, MPI_Request rs[], int* outcount, int indices[], MPI_Status ss[]) {
  drive_all();
  return PMPI_Testsome(n, rs, outcount, indices, ss);
}

int MPI_Request_get_status(MPI_Request r, int* flag, MPI_Status* status) {
  drive_all();
  return PMPI_Request_get_status(r, flag, status);
}

// -- blocking point-to-point: progress outstanding fabcoll requests meanwhile (see
// pmpi_progressing)
int MPI_Send(const void* buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm) {
  return pmpi_progressing(
      [&](MPI_Request* r) { return PMPI_Isend(buf, count, t, dest, tag, comm, r); },
      [&] { return PMPI_Send(buf, count, t, dest, tag, comm); });
}

int MPI_Ssend(const void* buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm) {
  return pmpi_progressing(
      [&](MPI_Request* r) { return PMPI_Issend(buf, count, t, dest, tag, comm, r); },
      [&] { return PMPI_Ssend(buf, count, t, dest, tag, comm); });
}

int MPI_Recv(void* buf, int count, MPI_Datatype t, int source, int tag, MPI_Comm comm,
             MPI_Status* status) {
  return pmpi_progressing(
      [&](MPI_Request* r) { return PMPI_Irecv(buf, count, t, source, tag, comm, r); },
      [&] { return PMPI_Recv(buf, count, t, source, tag, comm, status); }, status);
}

int MPI_Sendrecv(const void* sbuf, int scount, MPI_Datatype stype, int dest, int stag, void* rbuf,
                 int rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm,
                 MPI_Status* status) {
  if (st().pending.empty())
    return PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm,
                         status);
  MPI_Request rs[2];
  int rc = PMPI_Irecv(rbuf, rcount, rtype, source, rtag, comm, &rs[0]);
  if (rc != MPI_SUCCESS) return rc;
  rc = PMPI_Isend(sbuf, scount, stype, dest, stag, comm, &rs[1]);
  if (rc != MPI_SUCCESS) return rc;
  MPI_Status ss[2];
  for (;;) {
    drive_all();
    int flag = 0;
    rc = PMPI_Testall(2, rs, &flag, ss);
    if (rc != MPI_SUCCESS) return rc;
    if (flag) {
      if (status != MPI_STATUS_IGNORE) *status = ss[0];
      return MPI_SUCCESS;
    }
  }
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  if (st().pending.empty()) return PMPI_Probe(source, tag, comm, status);
  for (;;) {
    drive_all();
    int flag = 0;
    const int rc = PMPI_Iprobe(source, tag, comm, &flag, status);
    if (rc != MPI_SUCCESS || flag) return rc;
  }
}

int MPI_Request_free(MPI_Request* r) {
  if (r != nullptr) {
    if (Pending* p = find_pending(*r)) finish(p);  // nobody will wait for it: complete it now
  }
  return PMPI_Request_free(r);
}

}  // extern "C"
