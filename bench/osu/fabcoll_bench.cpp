// fabcoll-bench: latency of every fabcoll collective, with the flags, the timing method and the
// output format of the OSU Micro-Benchmarks (osu_allreduce, osu_iallreduce, ...).
//
//   fabcoll-run -n 4 -- fabcoll-bench allreduce -m 4:65536 -f -c --json out.json
//
// Timing (as OSU): every iteration is followed by a barrier; each rank times its own calls; the
// reported average is the mean over ranks of each rank's mean per-call time (min/max over ranks
// with -f). The nonblocking forms (ibcast, iallreduce, ...) follow OSU's overlap test: first the
// pure communication time (start + wait), then start, a dummy computation calibrated to that
// time (optionally with -t fc_test calls spread through it), wait; overlap =
// max(0, 100 - 100 (overall - compute) / pure communication).
//
// The calls themselves go through a `Library`: fabcoll's C API, and in fabcoll-bench-mpi (this
// file compiled with FABCOLL_BENCH_MPI, run under mpirun, fabcoll initialised from
// MPI_COMM_WORLD) also the MPI library's own collectives for --compare-mpi, on the same buffers
// with the same loop and the same validation.
#include <fabcoll/fabcoll.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/registry.hpp"
#include "engine/datatype.hpp"

#ifdef FABCOLL_BENCH_MPI
#include <fabcoll/fabcoll_mpi.h>  // fc_init_from_mpi, <mpi.h>
#endif
#include "../bench_util.hpp"  // after <mpi.h>: mpi_library_name

namespace {

using fabcoll::Collective;

// ---- what can be benchmarked ------------------------------------------------------------------

struct CollInfo {
  const char* cli;  // the name on the command line (blocking form; "i" + cli is nonblocking)
  Collective coll;
  const char* title;  // as in OSU's header line
  bool reduction;
  bool rooted;
};

constexpr CollInfo kColls[] = {
    {"bcast", Collective::bcast, "Broadcast", false, true},
    {"reduce", Collective::reduce, "Reduce", true, true},
    {"allreduce", Collective::allreduce, "Allreduce", true, false},
    {"scan", Collective::scan, "Scan", true, false},
    {"exscan", Collective::exscan, "Exscan", true, false},
    {"barrier", Collective::barrier, "Barrier", false, false},
    {"gather", Collective::gather, "Gather", false, true},
    {"scatter", Collective::scatter, "Scatter", false, true},
    {"allgather", Collective::allgather, "Allgather", false, false},
    {"allgatherv", Collective::allgatherv, "Allgatherv", false, false},
    {"alltoall", Collective::alltoall, "All-to-All", false, false},
    {"alltoallv", Collective::alltoallv, "All-to-Allv", false, false},
    {"reduce_scatter", Collective::reduce_scatter_block, "Reduce_scatter_block", true, false},
};

struct NamedValue {
  const char* name;
  int value;
};

constexpr NamedValue kDatatypes[] = {
    {"int8", FC_INT8},           {"int16", FC_INT16},           {"int32", FC_INT32},
    {"int64", FC_INT64},         {"uint8", FC_UINT8},           {"uint16", FC_UINT16},
    {"uint32", FC_UINT32},       {"uint64", FC_UINT64},         {"float16", FC_FLOAT16},
    {"bfloat16", FC_BFLOAT16},   {"float", FC_FLOAT},           {"double", FC_DOUBLE},
    {"float_int", FC_FLOAT_INT}, {"double_int", FC_DOUBLE_INT}, {"byte", FC_BYTE},
};

constexpr NamedValue kOps[] = {
    {"sum", FC_SUM},   {"prod", FC_PROD}, {"min", FC_MIN},       {"max", FC_MAX},
    {"land", FC_LAND}, {"lor", FC_LOR},   {"lxor", FC_LXOR},     {"band", FC_BAND},
    {"bor", FC_BOR},   {"bxor", FC_BXOR}, {"minloc", FC_MINLOC}, {"maxloc", FC_MAXLOC},
};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

/// Looks `name` up in a table; "FC_INT32", "fc_int32" and "int32" are the same name.
template <std::size_t N>
std::optional<int> lookup(const NamedValue (&table)[N], std::string name) {
  name = lower(name);
  if (name.rfind("fc_", 0) == 0) name.erase(0, 3);
  for (const NamedValue& e : table)
    if (name == e.name) return e.value;
  return std::nullopt;
}

template <std::size_t N>
const char* name_of(const NamedValue (&table)[N], int value) {
  for (const NamedValue& e : table)
    if (e.value == value) return e.name;
  return "?";
}

template <std::size_t N>
std::string names(const NamedValue (&table)[N]) {
  std::string s;
  for (const NamedValue& e : table) s += std::string(s.empty() ? "" : ", ") + e.name;
  return s;
}

// ---- typed element access: fill inputs, compute the expected result, compare --------------------
//
// Inputs are small integers (exact in every datatype, fp16 included, for the sums of a few
// thousand ranks), different for every rank, element and iteration, so a stale buffer from the
// previous iteration or a block from the wrong rank is caught.

/// The input value of element i on rank r at iteration it.
long pattern(fc_op_t op, int r, std::size_t i, long it) {
  const std::size_t h = static_cast<std::size_t>(r) * 7 + i * 3 + static_cast<std::size_t>(it) * 5;
  switch (op) {
    case FC_PROD:
      return h % 4 == 0 ? 2 : 1;  // products stay powers of two: exact in fp
    case FC_LAND:
    case FC_LOR:
    case FC_LXOR:
      return h % 3 == 0 ? 0 : 1;
    default:
      return static_cast<long>(h % 11) + 1;
  }
}

/// One element type: how to store a value, combine two elements as the library does, compare
/// and print. Elements are reached by index in untyped buffers (memcpy: no alignment needs).
struct TypeOps {
  std::size_t size;
  void (*put)(void* buf, std::size_t idx, long v, int index_field);
  /// acc = x (op) acc; false if the benchmark cannot compute op for this type.
  bool (*combine)(fc_op_t op, const void* x, void* acc);
  bool (*equal)(const void* a, std::size_t ia, const void* b, std::size_t ib);
  std::string (*show)(const void* buf, std::size_t idx);
};

template <class T>
T get(const void* buf, std::size_t idx) {
  T v;
  std::memcpy(&v, static_cast<const std::byte*>(buf) + idx * sizeof(T), sizeof(T));
  return v;
}
template <class T>
void set(void* buf, std::size_t idx, const T& v) {
  std::memcpy(static_cast<std::byte*>(buf) + idx * sizeof(T), &v, sizeof(T));
}

template <class T>
bool combine_arith(fc_op_t op, T a, T& b) {
  if constexpr (std::is_integral_v<T>) {
    // Wrap-around arithmetic in the unsigned type: defined for every width, and what the
    // library's kernels produce in two's complement.
    using U = std::make_unsigned_t<T>;
    const auto ua = static_cast<std::uint64_t>(static_cast<U>(a));
    const auto ub = static_cast<std::uint64_t>(static_cast<U>(b));
    switch (op) {
      case FC_SUM:
        b = static_cast<T>(static_cast<U>(ua + ub));
        return true;
      case FC_PROD:
        b = static_cast<T>(static_cast<U>(ua * ub));
        return true;
      case FC_LAND:
        b = static_cast<T>(a != 0 && b != 0);
        return true;
      case FC_LOR:
        b = static_cast<T>(a != 0 || b != 0);
        return true;
      case FC_LXOR:
        b = static_cast<T>((a != 0) != (b != 0));
        return true;
      case FC_BAND:
        b = static_cast<T>(a & b);
        return true;
      case FC_BOR:
        b = static_cast<T>(a | b);
        return true;
      case FC_BXOR:
        b = static_cast<T>(a ^ b);
        return true;
      default:
        break;
    }
  } else {
    switch (op) {
      case FC_SUM:
        b = a + b;
        return true;
      case FC_PROD:
        b = a * b;
        return true;
      default:
        break;
    }
  }
  switch (op) {
    case FC_MIN:
      b = std::min(a, b);
      return true;
    case FC_MAX:
      b = std::max(a, b);
      return true;
    default:
      return false;
  }
}

template <class T>
TypeOps scalar_ops() {
  return TypeOps{
      sizeof(T),
      [](void* buf, std::size_t idx, long v, int) { set<T>(buf, idx, static_cast<T>(v)); },
      [](fc_op_t op, const void* x, void* acc) {
        T b = get<T>(acc, 0);
        if (!combine_arith<T>(op, get<T>(x, 0), b)) return false;
        set<T>(acc, 0, b);
        return true;
      },
      [](const void* a, std::size_t ia, const void* b, std::size_t ib) {
        return get<T>(a, ia) == get<T>(b, ib);
      },
      [](const void* buf, std::size_t idx) {
        if constexpr (std::is_integral_v<T>)
          return std::to_string(static_cast<long long>(get<T>(buf, idx)));
        else
          return std::to_string(static_cast<double>(get<T>(buf, idx)));
      }};
}

/// fp16 / bf16: stored as 16 bits, combined in fp32 and rounded back (the library's rule).
template <float (*Widen)(std::uint16_t), std::uint16_t (*Narrow)(float)>
TypeOps half_ops() {
  return TypeOps{2,
                 [](void* buf, std::size_t idx, long v, int) {
                   set<std::uint16_t>(buf, idx, Narrow(static_cast<float>(v)));
                 },
                 [](fc_op_t op, const void* x, void* acc) {
                   float b = Widen(get<std::uint16_t>(acc, 0));
                   if (op != FC_SUM && op != FC_PROD && op != FC_MIN && op != FC_MAX) return false;
                   if (!combine_arith<float>(op, Widen(get<std::uint16_t>(x, 0)), b)) return false;
                   set<std::uint16_t>(acc, 0, Narrow(b));
                   return true;
                 },
                 [](const void* a, std::size_t ia, const void* b, std::size_t ib) {
                   return get<std::uint16_t>(a, ia) == get<std::uint16_t>(b, ib);
                 },
                 [](const void* buf, std::size_t idx) {
                   return std::to_string(Widen(get<std::uint16_t>(buf, idx)));
                 }};
}

/// {value, int index} pairs for MINLOC / MAXLOC; the index field is the contributing rank.
template <class P>
TypeOps pair_ops() {
  return TypeOps{sizeof(P),
                 [](void* buf, std::size_t idx, long v, int index_field) {
                   P x{};
                   x.v = static_cast<decltype(x.v)>(v);
                   x.i = index_field;
                   set<P>(buf, idx, x);
                 },
                 [](fc_op_t op, const void* xp, void* acc) {
                   if (op != FC_MINLOC && op != FC_MAXLOC) return false;
                   const P a = get<P>(xp, 0);
                   P b = get<P>(acc, 0);
                   const bool a_better = op == FC_MINLOC ? a.v < b.v : a.v > b.v;
                   if (a_better || (a.v == b.v && a.i < b.i))
                     b = a;  // ties: the smaller index (MPI)
                   set<P>(acc, 0, b);
                   return true;
                 },
                 [](const void* a, std::size_t ia, const void* b, std::size_t ib) {
                   const P x = get<P>(a, ia);
                   const P y = get<P>(b, ib);
                   return x.v == y.v && x.i == y.i;  // fields only: padding bytes are unspecified
                 },
                 [](const void* buf, std::size_t idx) {
                   const P x = get<P>(buf, idx);
                   return "{" + std::to_string(static_cast<double>(x.v)) + ", " +
                          std::to_string(x.i) + "}";
                 }};
}

TypeOps type_ops(fc_datatype_t dt) {
  switch (dt) {
    case FC_INT8:
      return scalar_ops<std::int8_t>();
    case FC_INT16:
      return scalar_ops<std::int16_t>();
    case FC_INT32:
      return scalar_ops<std::int32_t>();
    case FC_INT64:
      return scalar_ops<std::int64_t>();
    case FC_UINT8:
    case FC_BYTE:
      return scalar_ops<std::uint8_t>();
    case FC_UINT16:
      return scalar_ops<std::uint16_t>();
    case FC_UINT32:
      return scalar_ops<std::uint32_t>();
    case FC_UINT64:
      return scalar_ops<std::uint64_t>();
    case FC_FLOAT16:
      return half_ops<fabcoll::half_to_float, fabcoll::float_to_half>();
    case FC_BFLOAT16:
      return half_ops<fabcoll::bf16_to_float, fabcoll::float_to_bf16>();
    case FC_FLOAT:
      return scalar_ops<float>();
    case FC_DOUBLE:
      return scalar_ops<double>();
    case FC_FLOAT_INT:
      return pair_ops<fabcoll::FloatInt>();
    case FC_DOUBLE_INT:
      return pair_ops<fabcoll::DoubleInt>();
    default:
      break;
  }
  return scalar_ops<std::uint8_t>();
}

// ---- buffers of one benchmark: allocation, inputs, expected outputs ---------------------------

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<std::byte, FreeDeleter>;

Buffer alloc_pages(std::size_t bytes) {
  void* p = nullptr;
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  if (::posix_memalign(&p, page, std::max<std::size_t>(bytes, 1)) != 0) return nullptr;
  std::memset(p, 0, std::max<std::size_t>(bytes, 1));  // touch every page before timing
  return Buffer(static_cast<std::byte*>(p));
}

/// Everything one call needs; the same for fabcoll and for a library it is compared with.
/// `count` is the number of elements per rank as OSU counts message sizes: the vector of a
/// bcast / reduction, the block each rank contributes to a gather-like collective; for
/// reduce_scatter the size is the whole vector and each rank's block is count / p.
struct Call {
  const CollInfo* info = nullptr;
  int rank = 0;
  int p = 1;
  fc_datatype_t dt = FC_BYTE;
  fc_op_t op = FC_SUM;
  int root = 0;
  TypeOps t{};
  std::size_t count = 0;
  Buffer send;
  Buffer recv;
  std::vector<std::size_t> scounts, sdispls, rcounts, rdispls;
  std::size_t send_elems = 0;  // elements in use in send / recv for this count
  std::size_t recv_elems = 0;

  /// Sizes the buffers for counts up to max_count (allocated once, as OSU does).
  bool allocate(std::size_t max_count) {
    const auto up = static_cast<std::size_t>(p);
    std::size_t s = max_count, r = max_count;
    switch (info->coll) {
      case Collective::gather:
        r = max_count * up;
        break;
      case Collective::scatter:
        s = max_count * up;
        break;
      case Collective::allgather:
      case Collective::allgatherv:
        r = max_count * up;
        break;
      case Collective::alltoall:
      case Collective::alltoallv:
        s = r = max_count * up;
        break;
      case Collective::barrier:
        s = r = 0;
        break;
      default:
        break;
    }
    send = alloc_pages(s * t.size);
    recv = alloc_pages(r * t.size);
    scounts.assign(up, 0);
    sdispls.assign(up, 0);
    rcounts.assign(up, 0);
    rdispls.assign(up, 0);
    return send != nullptr && recv != nullptr;
  }

  /// Sets the per-call element counts; false if this message size has no whole element (or,
  /// for reduce_scatter, no whole block per rank): OSU skips such sizes.
  bool set_size(std::size_t bytes) {
    const auto up = static_cast<std::size_t>(p);
    count = bytes / t.size;
    if (info->coll == Collective::reduce_scatter_block) count /= up;
    if (count == 0) return false;
    send_elems = recv_elems = count;
    switch (info->coll) {
      case Collective::gather:
        recv_elems = count * up;
        break;
      case Collective::scatter:
        send_elems = count * up;
        break;
      case Collective::allgather:
      case Collective::allgatherv:
        recv_elems = count * up;
        break;
      case Collective::alltoall:
      case Collective::alltoallv:
        send_elems = recv_elems = count * up;
        break;
      case Collective::reduce_scatter_block:
        send_elems = count * up;
        break;
      default:
        break;
    }
    // The v-forms with uniform counts, as osu_allgatherv / osu_alltoallv run them.
    for (std::size_t j = 0; j < up; ++j) {
      scounts[j] = rcounts[j] = count;
      sdispls[j] = rdispls[j] = j * count;
    }
    return true;
  }

  void* buf() const { return info->coll == Collective::bcast ? recv.get() : send.get(); }

  /// Inputs of iteration it, and a sentinel in every output element (so an element the
  /// collective failed to write is caught).
  void prepare(long it) {
    std::memset(recv.get(), 0xA5, recv_elems * t.size);
    if (info->coll == Collective::bcast) {
      if (rank == root)
        for (std::size_t i = 0; i < count; ++i)
          t.put(recv.get(), i, pattern(op, rank, i, it), rank);
      return;
    }
    for (std::size_t i = 0; i < send_elems; ++i)
      t.put(send.get(), i, pattern(op, rank, i, it), rank);
  }

  /// Reference fold of element i over ranks lo..hi-1 (in rank order) into acc.
  bool fold(int lo, int hi, std::size_t i, long it, void* acc) const {
    std::array<std::byte, 32> x{};
    t.put(acc, 0, pattern(op, lo, i, it), lo);
    for (int r = lo + 1; r < hi; ++r) {
      t.put(x.data(), 0, pattern(op, r, i, it), r);
      if (!t.combine(op, x.data(), acc)) return false;
    }
    return true;
  }

  /// Number of wrong output elements after iteration it; the first few are described in
  /// `report` (appended).
  std::size_t check(long it, std::string& report) const {
    std::size_t bad = 0;
    std::array<std::byte, 32> want{};
    auto expect = [&](std::size_t idx, const char* what) {
      if (t.equal(recv.get(), idx, want.data(), 0)) return;
      if (++bad <= 3) {
        report += "  rank " + std::to_string(rank) + ": " + what + " element " +
                  std::to_string(idx) + " is " + t.show(recv.get(), idx) + ", expected " +
                  t.show(want.data(), 0) + "\n";
      }
    };
    // Output element idx must be input element i of rank r (a data-movement collective).
    auto expect_copy = [&](std::size_t idx, int r, std::size_t i, const char* what) {
      t.put(want.data(), 0, pattern(op, r, i, it), r);
      expect(idx, what);
    };
    auto folded = [&](int lo, int hi, std::size_t i) {
      if (!fold(lo, hi, i, it, want.data())) {
        report += "  cannot compute the expected result of this op on this datatype\n";
        return false;
      }
      return true;
    };
    const auto up = static_cast<std::size_t>(p);
    const auto me = static_cast<std::size_t>(rank);
    switch (info->coll) {
      case Collective::barrier:
        break;
      case Collective::bcast:
        for (std::size_t i = 0; i < count; ++i) expect_copy(i, root, i, "buffer");
        break;
      case Collective::reduce:
        if (rank != root) break;
        [[fallthrough]];
      case Collective::allreduce:
        for (std::size_t i = 0; i < count; ++i) {
          if (!folded(0, p, i)) return bad + 1;
          expect(i, "result");
        }
        break;
      case Collective::scan:
      case Collective::exscan: {
        const int hi = info->coll == Collective::scan ? rank + 1 : rank;
        if (hi == 0) break;  // exscan leaves rank 0's output undefined
        for (std::size_t i = 0; i < count; ++i) {
          if (!folded(0, hi, i)) return bad + 1;
          expect(i, "prefix");
        }
        break;
      }
      case Collective::gather:
        if (rank != root) break;
        [[fallthrough]];
      case Collective::allgather:
      case Collective::allgatherv:
        for (std::size_t r = 0; r < up; ++r)
          for (std::size_t i = 0; i < count; ++i)
            expect_copy(r * count + i, static_cast<int>(r), i, "block");
        break;
      case Collective::scatter:
        for (std::size_t i = 0; i < count; ++i) expect_copy(i, root, me * count + i, "block");
        break;
      case Collective::alltoall:
      case Collective::alltoallv:
        // Block me of rank r's send buffer lands in block r of ours.
        for (std::size_t r = 0; r < up; ++r)
          for (std::size_t i = 0; i < count; ++i)
            expect_copy(r * count + i, static_cast<int>(r), me * count + i, "block");
        break;
      case Collective::reduce_scatter_block:
        for (std::size_t i = 0; i < count; ++i) {
          if (!folded(0, p, me * count + i)) return bad + 1;
          expect(i, "block");
        }
        break;
      case Collective::count_:
        break;
    }
    return bad;
  }

  /// --inject-error: spoil one output element on the one rank that surely checks one (the
  /// validation must then fail). Returns false if there is no such element (then the caller
  /// counts the error itself).
  bool corrupt() {
    int target = p - 1;
    switch (info->coll) {
      case Collective::barrier:
        return false;
      case Collective::bcast:
        target = p > 1 ? (root + 1) % p : root;
        break;
      case Collective::reduce:
      case Collective::gather:
        target = root;
        break;
      case Collective::exscan:
        if (p == 1) return false;
        break;
      default:
        break;
    }
    if (rank == target) recv.get()[0] ^= std::byte{0x5A};
    return true;
  }
};

// ---- the library under test ---------------------------------------------------------------------

/// One implementation of the collectives over a Call's buffers.
class Library {
 public:
  virtual ~Library() = default;
  virtual const char* name() const = 0;
  virtual int run(Call& c) = 0;    // blocking call
  virtual int start(Call& c) = 0;  // nonblocking start
  virtual int test(bool& done) = 0;
  virtual int wait() = 0;
  virtual int barrier() = 0;
  virtual std::string error(int rc) const = 0;
};

class FabcollLibrary final : public Library {
 public:
  explicit FabcollLibrary(fc_comm_t comm) : comm_(comm) {}
  const char* name() const override { return "fabcoll"; }
  int run(Call& c) override { return call(c, nullptr); }
  int start(Call& c) override { return call(c, &req_); }
  int test(bool& done) override {
    int flag = 0;
    const int rc = fc_test(&req_, &flag);
    done = flag != 0;
    return rc;
  }
  int wait() override { return fc_wait(&req_); }
  int barrier() override { return fc_barrier(comm_); }
  std::string error(int rc) const override {
    return std::string(fc_strerror(rc)) + ": " + fc_last_error_message();
  }

 private:
  /// The blocking call if req is null, else the nonblocking one.
  int call(Call& c, fc_request_t* req) {
    void* s = c.send.get();
    void* r = c.recv.get();
    const std::size_t n = c.count;
    const fc_datatype_t dt = c.dt;
    switch (c.info->coll) {
      case Collective::bcast:
        return req ? fc_ibcast(c.buf(), n, dt, c.root, comm_, req)
                   : fc_bcast(c.buf(), n, dt, c.root, comm_);
      case Collective::reduce:
        return req ? fc_ireduce(s, r, n, dt, c.op, c.root, comm_, req)
                   : fc_reduce(s, r, n, dt, c.op, c.root, comm_);
      case Collective::allreduce:
        return req ? fc_iallreduce(s, r, n, dt, c.op, comm_, req)
                   : fc_allreduce(s, r, n, dt, c.op, comm_);
      case Collective::scan:
        return req ? fc_iscan(s, r, n, dt, c.op, comm_, req) : fc_scan(s, r, n, dt, c.op, comm_);
      case Collective::exscan:
        return req ? fc_iexscan(s, r, n, dt, c.op, comm_, req)
                   : fc_exscan(s, r, n, dt, c.op, comm_);
      case Collective::barrier:
        return req ? fc_ibarrier(comm_, req) : fc_barrier(comm_);
      case Collective::gather:
        return req ? fc_igather(s, n, dt, r, n, dt, c.root, comm_, req)
                   : fc_gather(s, n, dt, r, n, dt, c.root, comm_);
      case Collective::scatter:
        return req ? fc_iscatter(s, n, dt, r, n, dt, c.root, comm_, req)
                   : fc_scatter(s, n, dt, r, n, dt, c.root, comm_);
      case Collective::allgather:
        return req ? fc_iallgather(s, n, dt, r, n, dt, comm_, req)
                   : fc_allgather(s, n, dt, r, n, dt, comm_);
      case Collective::allgatherv:
        return req ? fc_iallgatherv(s, n, dt, r, c.rcounts.data(), c.rdispls.data(), dt, comm_, req)
                   : fc_allgatherv(s, n, dt, r, c.rcounts.data(), c.rdispls.data(), dt, comm_);
      case Collective::alltoall:
        return req ? fc_ialltoall(s, n, dt, r, n, dt, comm_, req)
                   : fc_alltoall(s, n, dt, r, n, dt, comm_);
      case Collective::alltoallv:
        return req ? fc_ialltoallv(s, c.scounts.data(), c.sdispls.data(), dt, r, c.rcounts.data(),
                                   c.rdispls.data(), dt, comm_, req)
                   : fc_alltoallv(s, c.scounts.data(), c.sdispls.data(), dt, r, c.rcounts.data(),
                                  c.rdispls.data(), dt, comm_);
      case Collective::reduce_scatter_block:
        return req ? fc_ireduce_scatter_block(s, r, n, dt, c.op, comm_, req)
                   : fc_reduce_scatter_block(s, r, n, dt, c.op, comm_);
      case Collective::count_:
        break;
    }
    return FC_ERR_INTERNAL;
  }

  fc_comm_t comm_;
  fc_request_t req_ = FC_REQUEST_NULL;
};

#ifdef FABCOLL_BENCH_MPI
/// The MPI library's own collectives over the same Call (for --compare-mpi).
class MpiLibrary final : public Library {
 public:
  /// The MPI datatype of dt, or MPI_DATATYPE_NULL if MPI has none (fp16, bf16).
  static MPI_Datatype datatype(fc_datatype_t dt) {
    switch (dt) {
      case FC_INT8:
        return MPI_INT8_T;
      case FC_INT16:
        return MPI_INT16_T;
      case FC_INT32:
        return MPI_INT32_T;
      case FC_INT64:
        return MPI_INT64_T;
      case FC_UINT8:
        return MPI_UINT8_T;
      case FC_UINT16:
        return MPI_UINT16_T;
      case FC_UINT32:
        return MPI_UINT32_T;
      case FC_UINT64:
        return MPI_UINT64_T;
      case FC_FLOAT:
        return MPI_FLOAT;
      case FC_DOUBLE:
        return MPI_DOUBLE;
      case FC_FLOAT_INT:
        return MPI_FLOAT_INT;
      case FC_DOUBLE_INT:
        return MPI_DOUBLE_INT;
      case FC_BYTE:
        return MPI_BYTE;
      default:
        return MPI_DATATYPE_NULL;
    }
  }
  static MPI_Op op(fc_op_t o) {
    switch (o) {
      case FC_SUM:
        return MPI_SUM;
      case FC_PROD:
        return MPI_PROD;
      case FC_MIN:
        return MPI_MIN;
      case FC_MAX:
        return MPI_MAX;
      case FC_LAND:
        return MPI_LAND;
      case FC_LOR:
        return MPI_LOR;
      case FC_LXOR:
        return MPI_LXOR;
      case FC_BAND:
        return MPI_BAND;
      case FC_BOR:
        return MPI_BOR;
      case FC_BXOR:
        return MPI_BXOR;
      case FC_MINLOC:
        return MPI_MINLOC;
      case FC_MAXLOC:
        return MPI_MAXLOC;
      default:
        return MPI_OP_NULL;
    }
  }

  explicit MpiLibrary(MPI_Comm comm) : comm_(comm) {
    // Errors come back as codes (reported like fabcoll's), not as an abort inside MPI.
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  }
  const char* name() const override { return "MPI"; }
  int run(Call& c) override { return call(c, nullptr); }
  int start(Call& c) override { return call(c, &req_); }
  int test(bool& done) override {
    int flag = 0;
    const int rc = MPI_Test(&req_, &flag, MPI_STATUS_IGNORE);
    done = flag != 0;
    return rc;
  }
  int wait() override { return MPI_Wait(&req_, MPI_STATUS_IGNORE); }
  int barrier() override { return MPI_Barrier(comm_); }
  std::string error(int rc) const override {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    return std::string(text, static_cast<std::size_t>(len));
  }

 private:
  int call(Call& c, MPI_Request* req) {
    void* s = c.send.get();
    void* r = c.recv.get();
    const int n = static_cast<int>(c.count);
    const MPI_Datatype dt = datatype(c.dt);
    const MPI_Op o = op(c.op);
    if (counts_.size() != c.rcounts.size())
      counts_.resize(c.rcounts.size()), displs_.resize(c.rcounts.size());
    for (std::size_t j = 0; j < c.rcounts.size(); ++j) {
      counts_[j] = static_cast<int>(c.rcounts[j]);
      displs_[j] = static_cast<int>(c.rdispls[j]);
    }
    switch (c.info->coll) {
      case Collective::bcast:
        return req ? MPI_Ibcast(c.buf(), n, dt, c.root, comm_, req)
                   : MPI_Bcast(c.buf(), n, dt, c.root, comm_);
      case Collective::reduce:
        return req ? MPI_Ireduce(s, r, n, dt, o, c.root, comm_, req)
                   : MPI_Reduce(s, r, n, dt, o, c.root, comm_);
      case Collective::allreduce:
        return req ? MPI_Iallreduce(s, r, n, dt, o, comm_, req)
                   : MPI_Allreduce(s, r, n, dt, o, comm_);
      case Collective::scan:
        return req ? MPI_Iscan(s, r, n, dt, o, comm_, req) : MPI_Scan(s, r, n, dt, o, comm_);
      case Collective::exscan:
        return req ? MPI_Iexscan(s, r, n, dt, o, comm_, req) : MPI_Exscan(s, r, n, dt, o, comm_);
      case Collective::barrier:
        return req ? MPI_Ibarrier(comm_, req) : MPI_Barrier(comm_);
      case Collective::gather:
        return req ? MPI_Igather(s, n, dt, r, n, dt, c.root, comm_, req)
                   : MPI_Gather(s, n, dt, r, n, dt, c.root, comm_);
      case Collective::scatter:
        return req ? MPI_Iscatter(s, n, dt, r, n, dt, c.root, comm_, req)
                   : MPI_Scatter(s, n, dt, r, n, dt, c.root, comm_);
      case Collective::allgather:
        return req ? MPI_Iallgather(s, n, dt, r, n, dt, comm_, req)
                   : MPI_Allgather(s, n, dt, r, n, dt, comm_);
      case Collective::allgatherv:
        return req ? MPI_Iallgatherv(s, n, dt, r, counts_.data(), displs_.data(), dt, comm_, req)
                   : MPI_Allgatherv(s, n, dt, r, counts_.data(), displs_.data(), dt, comm_);
      case Collective::alltoall:
        return req ? MPI_Ialltoall(s, n, dt, r, n, dt, comm_, req)
                   : MPI_Alltoall(s, n, dt, r, n, dt, comm_);
      case Collective::alltoallv:
        // Uniform counts: the send and receive layouts are the same.
        return req ? MPI_Ialltoallv(s, counts_.data(), displs_.data(), dt, r, counts_.data(),
                                    displs_.data(), dt, comm_, req)
                   : MPI_Alltoallv(s, counts_.data(), displs_.data(), dt, r, counts_.data(),
                                   displs_.data(), dt, comm_);
      case Collective::reduce_scatter_block:
        return req ? MPI_Ireduce_scatter_block(s, r, n, dt, o, comm_, req)
                   : MPI_Reduce_scatter_block(s, r, n, dt, o, comm_);
      case Collective::count_:
        break;
    }
    return MPI_ERR_OTHER;
  }

  MPI_Comm comm_;
  MPI_Request req_ = MPI_REQUEST_NULL;
  std::vector<int> counts_, displs_;
};
#endif

// ---- measurement --------------------------------------------------------------------------------

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct Options {
  bool nonblocking = false;
  bool validate = false;
  bool inject_error = false;
  int test_calls = 0;  // -t: fc_test calls during the dummy computation
};

/// A failed call ends the benchmark on this rank (the launcher then stops the others).
[[noreturn]] void fail(const Library& lib, const Call& c, const char* what, int rc) {
  std::fprintf(stderr, "fabcoll-bench: rank %d: %s %s%s failed: %s\n", c.rank, lib.name(), what,
               c.info->cli, lib.error(rc).c_str());
#ifdef FABCOLL_BENCH_MPI
  MPI_Abort(MPI_COMM_WORLD, 1);
#endif
  std::exit(1);
}

/// Per-rank results of one message size, all times in microseconds per call.
struct RankTimes {
  double latency = 0;  // blocking: per call; nonblocking: pure communication (start + wait)
  double overall = 0;  // nonblocking only: start + compute + tests + wait
  double compute = 0;  // dummy computation including the test calls (OSU's cpu time)
  double init = 0;     // the start call
  double test = 0;     // the test calls
  double wait = 0;     // the wait call
  double errors = 0;   // validation mismatches (as a double, to gather with the times)
  static constexpr std::size_t kFields = 7;
  std::array<double, kFields> pack() const {
    return {latency, overall, compute, init, test, wait, errors};
  }
  static RankTimes unpack(const double* v) { return {v[0], v[1], v[2], v[3], v[4], v[5], v[6]}; }
};

/// The dummy computation of the overlap test: a fixed amount of floating-point work calibrated
/// once to the machine (as OSU sizes its matrix-vector product), so interference from the
/// library's own progress shows up as a longer compute time.
class Compute {
 public:
  Compute() {
    // Calibrate: the time of a unit of work, measured on a run of about 20 ms.
    long units = 1000;
    for (;;) {
      const auto t0 = Clock::now();
      work(units);
      const double t = seconds_since(t0);
      if (t > 0.02 || units > (1L << 30)) {
        us_per_unit_ = t * 1e6 / static_cast<double>(units);
        break;
      }
      units *= 4;
    }
  }
  /// Sizes the work to `us` microseconds on this rank now (as OSU re-sizes its arrays to each
  /// target time): the global calibration, refined by timing the work itself a few times.
  void calibrate(double us) {
    units_ = std::max(0L, std::lround(us / us_per_unit_));
    for (int round = 0; round < 4 && units_ > 0; ++round) {
      double best = 1e30;
      for (int rep = 0; rep < 3; ++rep) {
        const auto t0 = Clock::now();
        work(units_);
        best = std::min(best, seconds_since(t0) * 1e6);
      }
      if (best <= 0) break;
      units_ = std::max(1L, std::lround(static_cast<double>(units_) * us / best));
    }
  }
  /// The calibrated work in `pieces` parts; `between` runs before each part.
  template <class F>
  void run(int pieces, F&& between) {
    const long units = units_;
    const int k = std::max(pieces, 1);
    for (int j = 0; j < k; ++j) {
      if (pieces > 0) between();
      work(units / k + (j < units % k ? 1 : 0));
    }
  }

 private:
  void work(long units) {
    double a = sink_;
    for (long u = 0; u < units; ++u)
      for (int j = 0; j < 16; ++j) a = a * 0.999999 + 1e-7;
    sink_ = a;
  }
  double us_per_unit_ = 1;
  long units_ = 0;
  volatile double sink_ = 1.0;
};

/// Runs skip + iters iterations of one message size on this rank (OSU's loop).
RankTimes measure(Library& lib, Call& c, long iters, long skip, const Options& o, Compute* compute,
                  std::string& report, bool inject = true) {
  RankTimes t;
  std::size_t errors = 0;
  auto after_call = [&](long it, bool timed) {
    if (!o.validate) return;
    if (inject && o.inject_error && timed && it == skip && !c.corrupt()) ++errors;
    errors += c.check(it, report);
  };
  // A barrier separates iterations; the barrier test itself runs back to back (as osu_barrier).
  const bool separate = o.nonblocking || c.info->coll != Collective::barrier;
  auto do_barrier = [&] {
    if (!separate) return;
    if (const int rc = lib.barrier(); rc != FC_SUCCESS) fail(lib, c, "barrier after ", rc);
  };

  // Blocking time, or for the nonblocking forms the pure communication time (start + wait).
  double total = 0;
  for (long it = 0; it < skip + iters; ++it) {
    if (o.validate) c.prepare(it);
    const auto t0 = Clock::now();
    if (o.nonblocking) {
      if (const int rc = lib.start(c); rc != FC_SUCCESS) fail(lib, c, "", rc);
      if (const int rc = lib.wait(); rc != FC_SUCCESS) fail(lib, c, "wait for ", rc);
    } else {
      if (const int rc = lib.run(c); rc != FC_SUCCESS) fail(lib, c, "", rc);
    }
    const double dt = seconds_since(t0);
    if (it >= skip) total += dt;
    after_call(it, it >= skip);
    do_barrier();
  }
  t.latency = total * 1e6 / static_cast<double>(iters);
  if (!o.nonblocking) {
    t.errors = static_cast<double>(errors);
    return t;
  }

  // The overlap run: start, compute for as long as the pure communication took, wait.
  compute->calibrate(t.latency);
  double overall = 0, init = 0, comp = 0, test = 0, wait = 0;
  for (long it = 0; it < skip + iters; ++it) {
    if (o.validate) c.prepare(it);
    const auto t0 = Clock::now();
    if (const int rc = lib.start(c); rc != FC_SUCCESS) fail(lib, c, "", rc);
    const double t_init = seconds_since(t0);
    const auto tc = Clock::now();
    double t_test = 0;
    bool done = false;
    compute->run(o.test_calls, [&] {
      if (done) return;
      const auto tt = Clock::now();
      if (const int rc = lib.test(done); rc != FC_SUCCESS) fail(lib, c, "test of ", rc);
      t_test += seconds_since(tt);
    });
    const double t_comp = seconds_since(tc);
    const auto tw = Clock::now();
    if (!done)
      if (const int rc = lib.wait(); rc != FC_SUCCESS) fail(lib, c, "wait for ", rc);
    const double t_wait = seconds_since(tw);
    const double t_all = seconds_since(t0);
    if (it >= skip) {
      overall += t_all;
      init += t_init;
      comp += t_comp;
      test += t_test;
      wait += t_wait;
    }
    after_call(it, it >= skip);
    do_barrier();
  }
  const double per = 1e6 / static_cast<double>(iters);
  t.overall = overall * per;
  t.init = init * per;
  t.compute = comp * per;
  t.test = test * per;
  t.wait = wait * per;
  t.errors = static_cast<double>(errors);
  return t;
}

/// The weighted sum a + b of two measurements of ia and ib iterations: times averaged over
/// all ia + ib iterations, errors added.
RankTimes merge(const RankTimes& a, long ia, const RankTimes& b, long ib) {
  if (ia == 0) return b;  // one round: exactly the figures of that round
  const double wa = static_cast<double>(ia), wb = static_cast<double>(ib), w = wa + wb;
  auto mix = [&](double x, double y) { return w > 0 ? (x * wa + y * wb) / w : 0.0; };
  return {mix(a.latency, b.latency), mix(a.overall, b.overall), mix(a.compute, b.compute),
          mix(a.init, b.init),       mix(a.test, b.test),       mix(a.wait, b.wait),
          a.errors + b.errors};
}

/// Statistics over ranks of one message size (rank 0 only).
struct Row {
  std::size_t size = 0;
  std::size_t count = 0;
  long iterations = 0;
  long warmup = 0;
  double avg = 0, min = 0, max = 0;  // latency (blocking) or pure communication (nonblocking)
  double overall = 0, compute = 0, init = 0, test = 0, wait = 0, overlap = 0;
  long errors = 0;
  bool compared = false;  // --compare-mpi: the MPI library's own call on the same buffers
  double mpi_avg = 0, mpi_min = 0, mpi_max = 0;
  long mpi_errors = 0;
  [[nodiscard]] double ratio() const { return mpi_avg > 0 ? avg / mpi_avg : 0; }
};

Row summarise(const std::vector<double>& all, int p) {
  Row row;
  std::array<double, RankTimes::kFields> sum{};
  row.min = all[0];
  row.max = all[0];
  for (int r = 0; r < p; ++r) {
    const RankTimes t = RankTimes::unpack(&all[static_cast<std::size_t>(r) * RankTimes::kFields]);
    const auto v = t.pack();
    for (std::size_t k = 0; k < v.size(); ++k) sum[k] += v[k];
    row.min = std::min(row.min, t.latency);
    row.max = std::max(row.max, t.latency);
  }
  const RankTimes mean = RankTimes::unpack(sum.data());
  row.avg = mean.latency / p;
  row.overall = mean.overall / p;
  row.compute = (mean.compute - mean.test) / p;  // compute without the test calls, as OSU
  row.init = mean.init / p;
  row.test = mean.test / p;
  row.wait = mean.wait / p;
  row.errors = std::lround(mean.errors);
  // OSU: overlap = max(0, 100 - 100 (overall - compute) / pure communication).
  row.overlap =
      row.avg > 0 ? std::max(0.0, 100.0 - 100.0 * (row.overall - row.compute) / row.avg) : 0;
  return row;
}

// ---- output -------------------------------------------------------------------------------------

constexpr int kField = 20;  // OSU's FIELD_WIDTH
constexpr int kPrecision = 2;

struct Report {
  const CollInfo* info;
  bool nonblocking, full, validate, sized, compare;
  int first_width() const { return sized || nonblocking ? kField : 17; }  // 17: OSU, no size
  void header(const std::string& preamble) const {
    std::fputs(preamble.c_str(), stdout);
    if (nonblocking) std::puts("# Overall = Coll. Init + Compute + fc_test + fc_wait\n#");
    // Without a size column the first field is narrower and starts with the '#'.
    const int first = first_width();
    if (sized)
      std::printf("%-*s%*s", 10, "# Size", first, nonblocking ? "Overall(us)" : "Avg Latency(us)");
    else
      std::printf("#%*s", first - 1, nonblocking ? "Overall(us)" : "Avg Latency(us)");
    if (nonblocking) {
      std::printf("%*s", kField, "Compute(us)");
      if (full)
        std::printf("%*s%*s%*s", kField, "Coll. Init(us)", kField, "fc_test(us)", kField,
                    "fc_wait(us)");
      std::printf("%*s%*s", kField, "Pure Comm.(us)", kField, "Overlap(%)");
    } else {
      if (full)
        std::printf("%*s%*s%*s", kField, "Min Latency(us)", kField, "Max Latency(us)", 12,
                    "Iterations");
    }
    // The MPI library on the same buffers: its Avg (nonblocking: its Pure Comm.), fabcoll / MPI.
    if (compare) std::printf("%*s%*s", kField, "MPI Avg(us)", 10, "Ratio");
    if (validate) std::printf("%*s", 12, "Validation");
    std::printf("\n");
    std::fflush(stdout);
  }
  void row(const Row& r) const {
    if (sized) std::printf("%-*zu", 10, r.size);
    const int first = first_width();
    if (nonblocking) {
      std::printf("%*.*f%*.*f", first, kPrecision, r.overall, kField, kPrecision, r.compute);
      if (full)
        std::printf("%*.*f%*.*f%*.*f", kField, kPrecision, r.init, kField, kPrecision, r.test,
                    kField, kPrecision, r.wait);
      std::printf("%*.*f%*.*f", kField, kPrecision, r.avg, kField, kPrecision, r.overlap);
    } else {
      std::printf("%*.*f", first, kPrecision, r.avg);
      if (full)
        std::printf("%*.*f%*.*f%*ld", kField, kPrecision, r.min, kField, kPrecision, r.max, 12,
                    r.iterations);
    }
    if (compare)
      std::printf("%*.*f%*.*f", kField, kPrecision, r.mpi_avg, 10, kPrecision, r.ratio());
    if (validate) std::printf("%*s", 12, r.errors == 0 && r.mpi_errors == 0 ? "Pass" : "Fail");
    std::printf("\n");
    std::fflush(stdout);
  }
};

/// "[MIN:]MAX", "MIN:" as OSU's -m; sizes in bytes.
bool parse_sizes(const std::string& s, std::size_t& min, std::size_t& max) {
  auto number = [](const std::string& t, std::size_t& out) {
    if (t.empty()) return true;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(t.c_str(), &end, 10);
    if (end == t.c_str() || *end != '\0') return false;
    out = static_cast<std::size_t>(v);
    return true;
  };
  const auto colon = s.find(':');
  if (colon == std::string::npos) return number(s, max);
  return number(s.substr(0, colon), min) && number(s.substr(colon + 1), max);
}

bool is_tty(int fd) { return ::isatty(fd) == 1; }

int bench_main(int argc, char** argv) {
  CLI::App app{
      "fabcoll-bench: OSU-style latency benchmark of one fabcoll collective.\n"
      "Run it under the launcher: fabcoll-run -n P -- fabcoll-bench <collective> [options]\n\n"
      "Timing (as the OSU Micro-Benchmarks): every iteration is followed by a barrier (not in\n"
      "the barrier test itself, which runs back to back as osu_barrier does); each\n"
      "rank times its own calls; Avg Latency is the mean over ranks of each rank's mean time per\n"
      "call, Min/Max (-f) the least and greatest of those per-rank means. Warm-up iterations (-x)\n"
      "are run first and not timed; before the first size, each library (fabcoll, and MPI with\n"
      "--compare-mpi) runs that size untimed (up to 8 KiB: 20000 calls, or fewer once 50 ms\n"
      "have passed): the first milliseconds of a process are slow. With --compare-mpi a size's\n"
      "iterations are split into rounds (--rounds, default 10) that alternate fabcoll and MPI,\n"
      "each round after ceil(warm-up / rounds) warm-up calls, each library averaged over all\n"
      "its rounds. Sizes are bytes per rank\n"
      "(the block of gather-like\n"
      "collectives; the whole vector of reduce_scatter, each rank getting size/p); sizes smaller\n"
      "than one element (or one block) are skipped. Nonblocking forms (i<collective>) report, as\n"
      "osu_iallreduce: Pure Comm. = start + wait; Overall = start + a dummy computation as long\n"
      "as Pure Comm. (with -t fc_test calls in it) + wait; Overlap(%) =\n"
      "max(0, 100 - 100 (Overall - Compute) / Pure Comm.)."};
  std::string coll_name;
  std::string sizes;
  long iterations = 0;
  long warmup = -1;
  bool full = false;
  bool validate = false;
  bool progress = false;
  bool inject_error = false;
  int test_calls = 0;
  std::string algorithm;
  std::string datatype_name;
  std::string op_name = "sum";
  int root = 0;
  std::string json_path;

  std::vector<std::string> choices;
  for (const CollInfo& c : kColls) {
    choices.emplace_back(c.cli);
    choices.push_back(std::string("i") + c.cli);
  }
  choices.emplace_back("reduce_scatter_block");
  choices.emplace_back("ireduce_scatter_block");
  app.add_option("collective", coll_name,
                 "bcast reduce allreduce scan exscan barrier gather scatter allgather allgatherv "
                 "alltoall alltoallv reduce_scatter, or the nonblocking form with an 'i' prefix "
                 "(iallreduce, ...)")
      ->required()
      ->check(CLI::IsMember(choices));
  app.add_option("-m,--message-size", sizes,
                 "[MIN:]MAX message sizes in bytes, doubling from MIN (default 1:1048576); "
                 "'-m 128' sets MAX, '-m 2:' sets MIN");
  app.add_option("-i,--iterations", iterations,
                 "timed iterations per size (default 1000 up to 8 KiB, 100 above)")
      ->check(CLI::PositiveNumber);
  app.add_option("-x,--warmup", warmup,
                 "untimed warm-up iterations per size (default 100 up to 8 KiB, 10 above)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("-f,--full", full,
               "full statistics: Min/Max Latency over ranks and Iterations (nonblocking: "
               "Coll. Init, fc_test and fc_wait times)");
  app.add_flag("-c,--validation", validate,
               "check every result against a serial reference, every iteration (outside the "
               "timed region); a mismatch is reported, marks the row Fail, and the exit code is 1");
  app.add_option(
         "-t,--num_test_calls", test_calls,
         "nonblocking forms: fc_test calls spread through the dummy computation (default 0)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--algorithm", algorithm,
                 "force an algorithm (sets FABCOLL_<COLLECTIVE>_ALGORITHM); "
                 "`fabcoll-info --algorithms` lists them");
  app.add_option(
      "--datatype", datatype_name,
      "element type: " + names(kDatatypes) + " (default: float for reductions, byte otherwise)");
  app.add_option("--op", op_name, "reduction operator: " + names(kOps) + " (default sum)");
  app.add_option("--root", root, "root rank of bcast, reduce, gather, scatter (default 0)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--json", json_path, "also write the results as JSON to FILE");
  app.add_flag("--progress", progress,
               "show progress on stderr (default: only when stderr is a terminal)");
  bool compare_mpi = false;
  app.add_flag("--compare-mpi", compare_mpi,
               "also time the MPI library's own call on the same buffers: columns MPI Avg(us) and "
               "Ratio = fabcoll / MPI (fabcoll-bench-mpi under mpirun only)");
  int rounds = 0;
  app.add_option("--rounds", rounds,
                 "with --compare-mpi: split each size's iterations into N rounds (at most one "
                 "per iteration) that alternate fabcoll, MPI, fabcoll, ..., each round after "
                 "ceil(warm-up / N) warm-up calls, so that a slow spell of the machine falls on "
                 "both libraries alike; the averages are over all rounds (default 10; 1 = all of "
                 "fabcoll's iterations, then all of MPI's)")
      ->check(CLI::PositiveNumber);
  app.add_flag("--inject-error", inject_error, "")->group("");  // test hook: -c must then fail
  CLI11_PARSE(app, argc, argv);

  // ---- options that need no communicator ----
  if (coll_name.rfind("reduce_scatter_block", 0) == 0 || coll_name == "ireduce_scatter_block")
    coll_name.resize(coll_name.size() - std::strlen("_block"));
  Options o;
  o.nonblocking = coll_name.size() > 1 && coll_name[0] == 'i' &&
                  std::none_of(std::begin(kColls), std::end(kColls),
                               [&](const CollInfo& c) { return coll_name == c.cli; });
  const std::string base = o.nonblocking ? coll_name.substr(1) : coll_name;
  const CollInfo* info = nullptr;
  for (const CollInfo& c : kColls)
    if (base == c.cli) info = &c;
  if (info == nullptr) return 2;  // IsMember already rejected it
  o.validate = validate;
  o.inject_error = inject_error;
  o.test_calls = test_calls;
  const bool talk = fabcoll::bench::first_process();
#ifndef FABCOLL_BENCH_MPI
  if (compare_mpi) {
    if (talk)
      std::fprintf(
          stderr,
          "fabcoll-bench: --compare-mpi needs fabcoll-bench-mpi (built when MPI is found), "
          "run under mpirun\n");
    return 2;
  }
#endif

  if (datatype_name.empty()) datatype_name = info->reduction ? "float" : "byte";
  const auto dt_value = lookup(kDatatypes, datatype_name);
  if (!dt_value) {
    if (talk)
      std::fprintf(stderr, "fabcoll-bench: unknown datatype '%s'; valid: %s\n",
                   datatype_name.c_str(), names(kDatatypes).c_str());
    return 2;
  }
  const auto dt = static_cast<fc_datatype_t>(*dt_value);
  const auto op_value = lookup(kOps, op_name);
  if (!op_value) {
    if (talk)
      std::fprintf(stderr, "fabcoll-bench: unknown op '%s'; valid: %s\n", op_name.c_str(),
                   names(kOps).c_str());
    return 2;
  }
  const fc_op_t op = *op_value;

  std::size_t min_size = 1, max_size = std::size_t{1} << 20;  // OSU's defaults
  if (!sizes.empty() &&
      (!parse_sizes(sizes, min_size, max_size) || min_size == 0 || min_size > max_size)) {
    if (talk)
      std::fprintf(stderr,
                   "fabcoll-bench: bad -m '%s': expected [MIN:]MAX bytes with 0 < MIN <= MAX\n",
                   sizes.c_str());
    return 2;
  }

  const fabcoll::Algorithm* forced = nullptr;
  const std::string env_name =
      "FABCOLL_" + upper(fabcoll::collective_name(info->coll)) + "_ALGORITHM";
  if (!algorithm.empty()) {
    forced = fabcoll::find_algorithm(info->coll, algorithm);
    if (forced == nullptr) {
      if (talk) {
        std::string valid;
        for (const fabcoll::Algorithm* a : fabcoll::all_algorithms())
          if (a->coll == info->coll) valid += (valid.empty() ? "" : ", ") + std::string(a->name);
        std::fprintf(stderr, "fabcoll-bench: unknown algorithm '%s' for %s; valid: %s\n",
                     algorithm.c_str(), fabcoll::collective_name(info->coll),
                     valid.empty() ? "(none registered)" : valid.c_str());
      }
      return 2;
    }
    ::setenv(env_name.c_str(), algorithm.c_str(), 1);
  } else if (const char* e = std::getenv(env_name.c_str()); e != nullptr && *e != '\0') {
    algorithm = e;  // forced from the environment: report it
  }

  // ---- the job ----
  fc_context_t ctx = nullptr;
#ifdef FABCOLL_BENCH_MPI
  MPI_Init(&argc, &argv);
  const int init_rc = fc_init_from_mpi(MPI_COMM_WORLD, &ctx);
  auto finish = [](int code) {
    MPI_Finalize();
    return code;
  };
#else
  const int init_rc = fc_init(&ctx);
  auto finish = [](int code) { return code; };
#endif
  if (init_rc != FC_SUCCESS) {
    std::fprintf(stderr, "fabcoll-bench: fabcoll initialisation failed: %s: %s\n",
                 fc_strerror(init_rc), fc_last_error_message());
    return finish(1);
  }
  fc_comm_t world = FC_COMM_NULL;
  int rank = 0, p = 1;
  fc_comm_world(ctx, &world);
  fc_comm_rank(world, &rank);
  fc_comm_size(world, &p);
  const bool r0 = rank == 0;
  // Every rank reaches the same verdict; the barrier keeps the others alive until rank 0 has
  // printed it (the launcher stops the job at the first exit).
  auto usage_error = [&](const std::string& msg) {
    if (r0) {
      std::fprintf(stderr, "fabcoll-bench: %s\n", msg.c_str());
      std::fflush(stderr);
    }
    fc_barrier(world);
    fc_finalize(ctx);
    return finish(2);
  };
  if (info->rooted && root >= p)
    return usage_error("--root " + std::to_string(root) + " is not a rank of the " +
                       std::to_string(p) + " ranks");
  if (forced != nullptr && forced->needs_power_of_two && (p & (p - 1)) != 0)
    return usage_error("algorithm " + algorithm +
                       " needs p to be a power of two (p = " + std::to_string(p) + ")");

  FabcollLibrary lib(world);
#ifdef FABCOLL_BENCH_MPI
  MpiLibrary mpi_lib(MPI_COMM_WORLD);
  if (compare_mpi && MpiLibrary::datatype(dt) == MPI_DATATYPE_NULL)
    return usage_error("--compare-mpi: MPI has no datatype for " + datatype_name);
#endif
  Call call;
  call.info = info;
  call.rank = rank;
  call.p = p;
  call.dt = dt;
  call.op = op;
  call.root = root;
  call.t = type_ops(dt);
  if (call.t.size != fc_datatype_size(dt))
    return usage_error(std::string("internal: element size mismatch for ") + datatype_name);
  const bool sized = info->coll != Collective::barrier;
  std::vector<std::size_t> size_list;
  if (sized) {
    for (std::size_t s = min_size; s <= max_size; s *= 2) {
      size_list.push_back(s);
      if (s > max_size / 2) break;
    }
  } else {
    size_list.push_back(0);
  }
  if (!call.allocate(sized ? std::max<std::size_t>(max_size / call.t.size, 1) : 0))
    return usage_error("cannot allocate the buffers for -m " + std::to_string(max_size));

  // ---- preamble ----
  const std::string algo_text = algorithm.empty() ? "auto (cost model)" : algorithm;
  std::string mpi_name = "MPI";  // "Open MPI v4.1.4": the library --compare-mpi times
#ifdef FABCOLL_BENCH_MPI
  mpi_name = fabcoll::bench::mpi_library_name();
#endif
  std::string preamble = std::string("# fabcoll ") + (o.nonblocking ? "Non-blocking " : "") +
                         info->title + " Latency Test v" + std::to_string(FABCOLL_VERSION_MAJOR) +
                         "." + std::to_string(FABCOLL_VERSION_MINOR) + "." +
                         std::to_string(FABCOLL_VERSION_PATCH) + "\n";
  preamble += "# Ranks: " + std::to_string(p) + "  Algorithm: " + algo_text + "\n";
  if (compare_mpi)
    preamble += "# Compared with: " + mpi_name +
                " (same buffers, same loop, alternating in up to " +
                std::to_string(rounds > 0 ? rounds : 10) + " rounds; Ratio = fabcoll / MPI)\n";
  if (sized)
    preamble += "# Datatype: " + upper("fc_" + datatype_name) + " (" + std::to_string(call.t.size) +
                " bytes).";
  if (info->reduction) preamble += "  Op: " + upper(std::string("fc_") + name_of(kOps, op)) + ".";
  if (info->rooted) preamble += "  Root: " + std::to_string(root) + ".";
  if (sized) preamble += "\n";
  const Report report{info, o.nonblocking, full, validate, sized, compare_mpi};
  if (r0) report.header(preamble);

  const bool show_progress = r0 && (progress || is_tty(2)) && size_list.size() > 1;
  std::unique_ptr<Compute> compute;
  if (o.nonblocking) compute = std::make_unique<Compute>();

  nlohmann::json results = nlohmann::json::array();
  long failures = 0;
  std::size_t done = 0;
  for (const std::size_t size : size_list) {
    ++done;
    if (sized && !call.set_size(size)) continue;
    const bool large = size > 8192;  // OSU's LARGE_MESSAGE_SIZE
    const long iters = iterations > 0 ? iterations : (large ? 100 : 1000);
    const long skip = warmup >= 0 ? warmup : (large ? 10 : 100);
    if (show_progress) {
      if (is_tty(2))
        std::fprintf(stderr, "\r\033[Kfabcoll-bench: %s size %zu (%zu/%zu)", coll_name.c_str(),
                     size, done, size_list.size());
      else
        std::fprintf(stderr, "fabcoll-bench: %s size %zu (%zu/%zu)\n", coll_name.c_str(), size,
                     done, size_list.size());
    }
    std::string mismatches;
    if (done == 1) {
      // The process warm-up: the first size runs untimed in each library first (up to 8 KiB:
      // for at least 50 ms and at most 20000 calls), so that neither library's first timed
      // loop falls in the process's first milliseconds. Measured: 1000 8-byte barriers right
      // after start-up took 0.85 us each, the same loop 2 ms later 0.20 us; whichever library
      // ran first paid it. Bounded by time, not by calls alone: on a loaded machine a call can
      // take milliseconds, and 20000 of them outran the smoke tests' 60 s limit. The ranks
      // agree (slowest clock) after every batch, so they make the same calls.
      std::string ignored;
      auto warm_up = [&](Library& l) {
        if (large) {
          (void)measure(l, call, iters + skip, 0, o, compute.get(), ignored);
          return;
        }
        const long batch = std::max<long>(iters + skip, 1000);
        const auto t0 = Clock::now();
        for (long calls = 0; calls < 20000; calls += batch) {
          (void)measure(l, call, batch, 0, o, compute.get(), ignored);
          const double mine_s = seconds_since(t0);
          double slowest = 0;
          if (const int rc = fc_allreduce(&mine_s, &slowest, 1, FC_DOUBLE, FC_MAX, world);
              rc != FC_SUCCESS)
            fail(lib, call, "agreeing on the warm-up after ", rc);
          if (slowest >= 0.05) break;
        }
      };
      warm_up(lib);
#ifdef FABCOLL_BENCH_MPI
      if (compare_mpi) warm_up(mpi_lib);
#endif
    }
    // With --compare-mpi the iterations run in rounds that alternate the libraries (--rounds).
    const long nr = compare_mpi ? std::min<long>(rounds > 0 ? rounds : 10, iters) : 1;
    RankTimes mine, theirs;
    std::string mpi_mismatches;
    const long skip_j = (skip + nr - 1) / nr;  // warm-up per round: nr * skip_j in all
    for (long j = 0, timed = 0; j < nr; ++j) {
      const long it_j = iters / nr + (j < iters % nr ? 1 : 0);
      mine = merge(mine, timed,
                   measure(lib, call, it_j, skip_j, o, compute.get(), mismatches, j == 0), it_j);
#ifdef FABCOLL_BENCH_MPI
      if (compare_mpi)
        theirs = merge(
            theirs, timed,
            measure(mpi_lib, call, it_j, skip_j, o, compute.get(), mpi_mismatches, j == 0), it_j);
#endif
      timed += it_j;
    }
    if (!mismatches.empty())
      std::fprintf(stderr, "fabcoll-bench: validation of %s size %zu failed:\n%s",
                   coll_name.c_str(), size, mismatches.c_str());
    if (mine.errors > 0) ++failures;

    // Gather every rank's times at rank 0 (the OSU reduction of min/max/sum, in one call).
    auto gather = [&](const RankTimes& t) {
      const auto packed = t.pack();
      std::vector<double> all(r0 ? static_cast<std::size_t>(p) * RankTimes::kFields : 0);
      if (const int rc = fc_gather(packed.data(), packed.size(), FC_DOUBLE,
                                   r0 ? all.data() : nullptr, packed.size(), FC_DOUBLE, 0, world);
          rc != FC_SUCCESS)
        fail(lib, call, "gathering the times after ", rc);
      return all;
    };
    const std::vector<double> all = gather(mine);
    std::optional<Row> mpi_row;
#ifdef FABCOLL_BENCH_MPI
    if (compare_mpi) {
      if (!mpi_mismatches.empty())
        std::fprintf(stderr, "fabcoll-bench: validation of MPI %s size %zu failed:\n%s",
                     coll_name.c_str(), size, mpi_mismatches.c_str());
      if (theirs.errors > 0) ++failures;
      const std::vector<double> all_mpi = gather(theirs);
      if (r0) mpi_row = summarise(all_mpi, p);
    }
#endif
    if (!r0) continue;
    Row row = summarise(all, p);
    if (mpi_row) {
      row.compared = true;
      row.mpi_avg = mpi_row->avg;
      row.mpi_min = mpi_row->min;
      row.mpi_max = mpi_row->max;
      row.mpi_errors = mpi_row->errors;
    }
    row.size = size;
    row.count = call.count;
    row.iterations = iters;
    row.warmup = nr * skip_j;
    if (show_progress && is_tty(2)) std::fprintf(stderr, "\r\033[K");
    report.row(row);
    if (row.errors > 0 || row.mpi_errors > 0) failures = std::max(failures, 1L);
    nlohmann::json j = {
        {"size", size}, {"count", row.count}, {"iterations", iters}, {"warmup", nr * skip_j}};
    if (compare_mpi) j["rounds"] = nr;
    if (o.nonblocking) {
      j["overall_us"] = row.overall;
      j["compute_us"] = row.compute;
      j["init_us"] = row.init;
      j["test_us"] = row.test;
      j["wait_us"] = row.wait;
      j["pure_comm_us"] = row.avg;
      j["overlap_pct"] = row.overlap;
    }
    j["avg_us"] = row.avg;  // nonblocking: the pure communication time
    j["min_us"] = row.min;
    j["max_us"] = row.max;
    if (row.compared) {
      j["mpi_avg_us"] = row.mpi_avg;
      j["mpi_min_us"] = row.mpi_min;
      j["mpi_max_us"] = row.mpi_max;
      j["ratio"] = row.ratio();
      if (validate) j["mpi_validation"] = row.mpi_errors == 0 ? "pass" : "fail";
    }
    if (validate) j["validation"] = row.errors == 0 ? "pass" : "fail";
    results.push_back(std::move(j));
  }
  if (show_progress) std::fprintf(stderr, is_tty(2) ? "\r\033[K" : "fabcoll-bench: done\n");

  if (r0 && !json_path.empty()) {
    nlohmann::json doc = {
        {"benchmark", "fabcoll-bench"},
        {"version", std::to_string(FABCOLL_VERSION_MAJOR) + "." +
                        std::to_string(FABCOLL_VERSION_MINOR) + "." +
                        std::to_string(FABCOLL_VERSION_PATCH)},
        {"library", lib.name()},
        {"collective", fabcoll::collective_name(info->coll)},
        {"command", coll_name},
        {"nonblocking", o.nonblocking},
        {"algorithm", algorithm.empty() ? "auto" : algorithm},
        {"ranks", p},
        {"datatype", datatype_name},
        {"datatype_bytes", call.t.size},
        {"op", info->reduction ? nlohmann::json(name_of(kOps, op)) : nlohmann::json(nullptr)},
        {"root", info->rooted ? nlohmann::json(root) : nlohmann::json(nullptr)},
        {"validation", validate},
        {"timing",
         "OSU: barrier after every iteration; each rank times its own calls; avg_us = mean over "
         "ranks of "
         "the per-rank mean time per call; min_us/max_us = least/greatest per-rank mean"},
        {"results", results}};
    if (compare_mpi) {
      doc["mpi_library"] = mpi_name;
      doc["max_rounds"] = rounds > 0 ? rounds : 10;  // each row: "rounds" run (<= iterations)
    }
    std::ofstream out(json_path);
    out << doc.dump(2) << "\n";
    if (!out) {
      std::fprintf(stderr, "fabcoll-bench: cannot write %s\n", json_path.c_str());
      failures = std::max(failures, 1L);
    }
  }

  const int rc = fc_finalize(ctx);
  if (rc != FC_SUCCESS)
    std::fprintf(stderr, "fabcoll-bench: fc_finalize: %s\n", fc_last_error_message());
  return finish(failures > 0 || rc != FC_SUCCESS ? 1 : 0);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return bench_main(argc, argv);
  } catch (const std::exception& e) {  // e.g. out of memory, the --json file
    std::fprintf(stderr, "fabcoll-bench: %s\n", e.what());
    return 1;
  }
}
