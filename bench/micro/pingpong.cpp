// Point-to-point latency (half round trip) and streaming bandwidth between ranks 0 and 1 over
// whatever path fabcoll chose (own shm, or ofi with a provider). Run it with the launcher:
//   fabcoll-run -n 2 --bind-to core [--transport ofi --provider sockets] -- fabcoll-pingpong
// Output: one row per size: bytes, latency (us), bandwidth (MB/s, 10^6 bytes/s).
// --compare-bare (fabric path only): the same loops on a bare libfabric endpoint of the same
// provider in the same process (fi_bare.hpp), batch by batch alternating with fabcoll's.
// fabcoll-pingpong-mpi (the same source under mpirun, fabcoll initialised from MPI_COMM_WORLD)
// adds --compare-mpi: the same loops with MPI_Send/MPI_Recv of the MPI library, alternating.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "collectives/collectives.hpp"
#include "collectives/context_info.hpp"
#include "engine/channel.hpp"
#include "fabcoll/fabcoll.h"
#include "fi_bare.hpp"
#include "transports/ofi/ofi.hpp"
#ifdef FABCOLL_PINGPONG_MPI
#include <fabcoll/fabcoll_mpi.h>  // fc_init_from_mpi, <mpi.h>
#endif
#include "../bench_util.hpp"  // after <mpi.h>: mpi_library_name

namespace {

using fabcoll::Channel;
using fabcoll::Task;
using fabcoll::Transfer;

Task<> ping_pong(Channel& ch, fabcoll::MutableBytes buf, int iters) {
  const int me = ch.rank();
  for (int i = 0; i < iters; ++i) {
    const auto step = static_cast<std::uint32_t>(i);
    if (me == 0) {
      Transfer out = ch.send(1, buf, step);
      co_await out;
      Transfer in = ch.recv(1, buf, step);
      co_await in;
    } else if (me == 1) {
      Transfer in = ch.recv(0, buf, step);
      co_await in;
      Transfer out = ch.send(0, buf, step);
      co_await out;
    }
  }
}

// Rank 0 streams `window` messages, rank 1 answers each window with a 1-byte ack.
Task<> stream(Channel& ch, fabcoll::MutableBytes buf, int windows, int window) {
  const int me = ch.rank();
  std::byte ack{};
  const fabcoll::MutableBytes ackb(&ack, 1);
  for (int w = 0; w < windows; ++w) {
    fabcoll::TransferSet set;
    for (int i = 0; i < window; ++i) {
      const auto step = static_cast<std::uint32_t>(w * window + i);
      if (me == 0) set.add(ch.send(1, buf, step));
      if (me == 1) set.add(ch.recv(0, buf, step));
    }
    co_await set;
    const auto ack_step = static_cast<std::uint32_t>(0xffff);
    if (me == 1) {
      Transfer a = ch.send(0, ackb, ack_step);
      co_await a;
    } else if (me == 0) {
      Transfer a = ch.recv(1, ackb, ack_step);
      co_await a;
    }
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

/// The median over pairs of a[i] / b[i]: each quotient compares two batches run side by side.
double median_ratio(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> q;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) q.push_back(a[i] / b[i]);
  return median(q);
}

/// Seconds that f takes.
template <class F>
double timed(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// What fabcoll is compared with, batch by batch: the same ping-pong and stream loops.
class Baseline {
 public:
  virtual ~Baseline() = default;
  [[nodiscard]] virtual const char* label() const = 0;  // column heading: "Bare", "MPI"
  virtual void ping_pong(int me, void* buf, std::size_t n, int iters) = 0;
  virtual void stream(int me, void* buf, std::size_t n, int windows, int window) = 0;
};

class BareBaseline final : public Baseline {
 public:
  BareBaseline(const std::string& provider, void* buf, std::size_t len)
      : fabric_(provider, buf, len, false) {}
  fabcoll::bench::BareFabric& fabric() { return fabric_; }
  [[nodiscard]] const char* label() const override { return "Bare"; }
  void ping_pong(int me, void* buf, std::size_t n, int iters) override {
    fabric_.ping_pong(me, buf, n, iters);
  }
  void stream(int me, void* buf, std::size_t n, int windows, int window) override {
    fabric_.stream(me, buf, n, windows, window);
  }

 private:
  fabcoll::bench::BareFabric fabric_;
};

#ifdef FABCOLL_PINGPONG_MPI
/// MPI_Send/MPI_Recv of the MPI library, as fabcoll-mpi-pingpong runs them.
class MpiBaseline final : public Baseline {
 public:
  [[nodiscard]] const char* label() const override { return "MPI"; }
  void ping_pong(int me, void* buf, std::size_t n, int iters) override {
    const int count = static_cast<int>(n);
    for (int i = 0; i < iters; ++i) {
      if (me == 0) {
        MPI_Send(buf, count, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
        MPI_Recv(buf, count, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(buf, count, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, count, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
      }
    }
  }
  void stream(int me, void* buf, std::size_t n, int windows, int window) override {
    std::vector<MPI_Request> reqs(static_cast<std::size_t>(window));
    char ack = 0;
    for (int w = 0; w < windows; ++w) {
      for (MPI_Request& r : reqs) {
        if (me == 0)
          MPI_Isend(buf, static_cast<int>(n), MPI_BYTE, 1, 2, MPI_COMM_WORLD, &r);
        else
          MPI_Irecv(buf, static_cast<int>(n), MPI_BYTE, 0, 2, MPI_COMM_WORLD, &r);
      }
      MPI_Waitall(window, reqs.data(), MPI_STATUSES_IGNORE);
      if (me == 1)
        MPI_Send(&ack, 1, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
      else
        MPI_Recv(&ack, 1, MPI_BYTE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }
};
#endif

int pingpong_main(int argc, char** argv) {
#ifdef FABCOLL_PINGPONG_MPI
  const char* const prog = "fabcoll-pingpong-mpi";
#else
  const char* const prog = "fabcoll-pingpong";
#endif
  std::size_t max_bytes = std::size_t{16} << 20;
  std::size_t min_bytes = 8;
  bool register_buffer = true;
  bool compare_bare = false;
  bool compare_mpi = false;
  int iterations = 0;
  int windows_opt = 0;
  int batches_opt = 0;
  bool aa = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0) {
      if (!fabcoll::bench::first_process()) return 0;
      std::printf(
          "usage: fabcoll-run -n 2 [--transport ofi --provider P] -- fabcoll-pingpong [--max "
          "BYTES] [--min BYTES] [--iterations N] [--windows W] [--batches B] [--no-register]\n"
          "       [--compare-bare [--aa]]\n"
          "       mpirun -n 2 --bind-to core fabcoll-pingpong-mpi [same options] [--compare-mpi]\n"
          "Latency = half the round trip of a ping-pong (median of B batches of N round trips,\n"
          "default B = 5, N = 2000 up to 64 KiB, 200 up to 1 MiB, 40 above); bandwidth =\n"
          "bytes of W 64-message windows (default 100 up to 64 KiB, 10 up to 1 MiB, 3 above)\n"
          "streamed from rank 0 to rank 1 per second (median of B batches, default 3).\n"
          "The buffer is registered once with fc_mem_register (as fabcoll-fi-pingpong registers\n"
          "its buffer once); --no-register leaves it to the per-call registration.\n"
          "--compare-bare (fabric path): also run the same loops on a bare libfabric endpoint\n"
          "of the same provider (as fabcoll-fi-pingpong), alternating with fabcoll batch by\n"
          "batch, and print its latency, bandwidth and the ratios fabcoll / bare. A Ratio is the\n"
          "median over the batch pairs (each fabcoll batch and the baseline's batch beside it;\n"
          "every other pair runs the baseline first) of fabcoll's figure / the baseline's, so\n"
          "that each quotient compares two batches that met the same state of the machine.\n"
          "--aa: fabcoll's turns run the baseline too (an A/A comparison): its Ratio columns\n"
          "show how far apart two runs of the same loop come out here, the resolution of the\n"
          "comparison on this machine.\n"
          "--compare-mpi (%s): the same with MPI_Send/MPI_Recv of the MPI library.\n",
          "fabcoll-pingpong-mpi under mpirun only");
      return 0;
    }
    if (std::strcmp(argv[i], "--max") == 0 && i + 1 < argc)
      max_bytes = std::strtoull(argv[++i], nullptr, 10);
    else if (std::strcmp(argv[i], "--min") == 0 && i + 1 < argc)
      min_bytes = std::max<std::size_t>(1, std::strtoull(argv[++i], nullptr, 10));
    else if (std::strcmp(argv[i], "--no-register") == 0)
      register_buffer = false;
    else if (std::strcmp(argv[i], "--iterations") == 0 && i + 1 < argc)
      iterations = std::max(1, std::atoi(argv[++i]));
    else if (std::strcmp(argv[i], "--windows") == 0 && i + 1 < argc)
      windows_opt = std::max(1, std::atoi(argv[++i]));
    else if (std::strcmp(argv[i], "--batches") == 0 && i + 1 < argc)
      batches_opt = std::max(1, std::atoi(argv[++i]));
    else if (std::strcmp(argv[i], "--aa") == 0)
      aa = true;
    else if (std::strcmp(argv[i], "--compare-bare") == 0)
      compare_bare = true;
    else if (std::strcmp(argv[i], "--compare-mpi") == 0)
      compare_mpi = true;
    else {
      std::fprintf(stderr, "%s: unknown argument '%s' (see --help)\n", prog, argv[i]);
      return 2;
    }
  }
#ifndef FABCOLL_PINGPONG_MPI
  if (compare_mpi) {
    std::fprintf(stderr,
                 "fabcoll-pingpong: --compare-mpi needs fabcoll-pingpong-mpi under mpirun\n");
    return 2;
  }
#endif
  if (aa && !compare_bare && !compare_mpi) {
    std::fprintf(stderr, "%s: --aa needs --compare-bare or --compare-mpi\n", prog);
    return 2;
  }
  if (compare_mpi && compare_bare) {
    std::fprintf(stderr, "%s: --compare-bare and --compare-mpi: one at a time\n", prog);
    return 2;
  }
  fc_context_t ctx = nullptr;
#ifdef FABCOLL_PINGPONG_MPI
  const int init_rc = fc_init_from_mpi(MPI_COMM_WORLD, &ctx);
#else
  const int init_rc = fc_init(&ctx);
#endif
  if (init_rc != FC_SUCCESS) {
    std::fprintf(stderr, "%s: fc_init: %s\n", prog, fc_last_error_message());
    return 1;
  }
  fabcoll::Comm& comm = fabcoll::world_comm(ctx);
  fabcoll::Progress& progress = fabcoll::context_progress(ctx);
  const fabcoll::ContextInfo info = fabcoll::describe_context(ctx);
  if (comm.size() < 2) {
    std::fprintf(stderr, "%s: needs 2 ranks (fabcoll-run -n 2)\n", prog);
    return 1;
  }
  const int me = comm.rank();
  std::vector<std::byte> buf(max_bytes);
  fc_mem_t mem = nullptr;
  if (register_buffer && fc_mem_register(ctx, buf.data(), buf.size(), &mem) != FC_SUCCESS) {
    std::fprintf(stderr, "fabcoll-pingpong: fc_mem_register: %s\n", fc_last_error_message());
    return 1;
  }
  // The bare endpoint, on the provider fabcoll's path to rank 1 uses; addresses are swapped
  // with an all-gather over fabcoll.
  std::unique_ptr<Baseline> base;
  fc_comm_t world = FC_COMM_NULL;
  fc_comm_world(ctx, &world);
  if (compare_bare) {
    // Ranks 0 and 1 each check their own path to the other; all ranks then agree (no rank
    // may leave while another waits in the address exchange).
    const fabcoll::ofi::Endpoint* ofi = fabcoll::context_ofi(ctx);
    constexpr std::size_t kName = 256;
    std::vector<char> mine(kName, 0), all(kName * static_cast<std::size_t>(comm.size()));
    std::int32_t ok = 1;
    if (me < 2) {
      ok = ofi != nullptr &&
           info.transport_of[static_cast<std::size_t>(1 - me)].rfind("ofi", 0) == 0;
      if (ok != 0) {
        auto b = std::make_unique<BareBaseline>(ofi->provider(), buf.data(), buf.size());
        const std::string name = b->fabric().name();
        base = std::move(b);
        if (name.size() >= kName) {
          std::fprintf(stderr, "%s: a libfabric address of %zu bytes\n", prog, name.size());
          ok = 0;
        } else {
          mine[0] = static_cast<char>(name.size());
          std::memcpy(mine.data() + 1, name.data(), name.size());
        }
      }
    }
    std::int32_t all_ok = 0;
    if (fc_allreduce(&ok, &all_ok, 1, FC_INT32, FC_MIN, world) != FC_SUCCESS) {
      std::fprintf(stderr, "%s: fc_allreduce: %s\n", prog, fc_last_error_message());
      return 1;
    }
    if (all_ok == 0) {
      if (me == 0)
        std::fprintf(stderr,
                     "%s: --compare-bare needs the fabric path between ranks 0 and "
                     "1 (fabcoll-run --transport ofi --provider P); here it is %s\n",
                     prog, info.transport_of[1].c_str());
      // The others leave after rank 0 has said why: a rank that exits non-zero first makes
      // fabcoll-run stop the rest, which could kill rank 0 before its message (seen once in a
      // full ctest run: bench_pingpong_compare_bare found no message).
      (void)fc_barrier(world);
      return 2;
    }
    if (fc_allgather(mine.data(), kName, FC_BYTE, all.data(), kName, FC_BYTE, world) !=
        FC_SUCCESS) {
      std::fprintf(stderr, "%s: fc_allgather: %s\n", prog, fc_last_error_message());
      return 1;
    }
    if (me < 2) {
      const char* peer = all.data() + kName * static_cast<std::size_t>(1 - me);
      static_cast<BareBaseline&>(*base).fabric().connect(
          std::string(peer + 1, static_cast<unsigned char>(peer[0])));
    }
    fc_barrier(world);
  }
#ifdef FABCOLL_PINGPONG_MPI
  if (compare_mpi && me < 2) base = std::make_unique<MpiBaseline>();
  const std::string mpi_name = compare_mpi ? fabcoll::bench::mpi_library_name() : std::string();
#endif
  if (me == 0) {
    std::printf("# fabcoll point-to-point, rank 0 <-> 1 over %s, buffer %s\n",
                info.transport_of[1].c_str(),
                register_buffer ? "registered (fc_mem_register)" : "registered per call");
    if (base && aa) std::printf("# A/A (--aa): the columns headed fabcoll ran the baseline too\n");
    if (base) {
#ifdef FABCOLL_PINGPONG_MPI
      if (compare_mpi)
        std::printf(
            "# beside it, alternating batch by batch: %s (MPI_Send/MPI_Recv); Ratio = fabcoll / "
            "MPI\n",
            mpi_name.c_str());
#endif
      if (compare_bare)
        std::printf(
            "# beside it, alternating batch by batch: bare libfabric (%s); Ratio = fabcoll / "
            "bare\n",
            static_cast<BareBaseline&>(*base).fabric().provider());
      const std::string lat = std::string(base->label()) + "(us)";
      const std::string bw = std::string(base->label()) + "(MB/s)";
      std::printf("%-10s %14s %12s %8s %16s %14s %8s\n", "# Size", "Latency(us)", lat.c_str(),
                  "Ratio", "Bandwidth(MB/s)", bw.c_str(), "Ratio");
    } else {
      std::printf("%-10s %14s %16s\n", "# Size", "Latency(us)", "Bandwidth(MB/s)");
    }
  }
  const bool in_pair = me < 2;
  // Before the baseline runs (untimed): every rank passes a fabcoll barrier, so nothing of
  // fabcoll's (a FIN waiting in a retry queue) still needs a rank that has moved on to the
  // baseline's loop; and the MPI library's barrier after its loop, likewise.
  auto settle = [&] {
    if (!compare_bare && !compare_mpi) return;  // the same on every rank
    if (fc_barrier(world) != FC_SUCCESS) {
      std::fprintf(stderr, "%s: fc_barrier: %s\n", prog, fc_last_error_message());
      std::exit(1);
    }
  };
  auto settle_baseline = [&] {
#ifdef FABCOLL_PINGPONG_MPI
    if (compare_mpi) MPI_Barrier(MPI_COMM_WORLD);
#endif
  };
  for (std::size_t n = min_bytes; n <= max_bytes; n *= 2) {
    const int iters = iterations > 0 ? iterations : n <= 65536 ? 2000 : n <= (1u << 20) ? 200 : 40;
    const fabcoll::MutableBytes b(buf.data(), n);
    std::vector<double> lat, bare_lat;
    const bool paired = base && in_pair;
    // One batch of each, in the pair's order; batch 0 warms up (not kept).
    auto pair = [&](int batch, const auto& ours, const auto& theirs, std::vector<double>& mine,
                    std::vector<double>& baseline) {
      auto run_ours = [&] {
        const double v = !aa ? ours() : paired ? theirs() : 0.0;
        if (batch > 0) mine.push_back(v);
        settle();
      };
      auto run_theirs = [&] {
        if (paired) {
          const double v = theirs();
          if (batch > 0) baseline.push_back(v);
        }
        settle_baseline();
      };
      if (batch % 2 == 0) {
        run_theirs();
        run_ours();
      } else {
        run_ours();
        run_theirs();
      }
    };
    const int lat_batches = batches_opt > 0 ? batches_opt : 5;
    for (int batch = 0; batch <= lat_batches; ++batch) {
      pair(
          batch,
          [&] {
            const double sec = timed([&] {
              Channel ch(comm, comm.next_sequence());
              fabcoll::run_blocking(comm, progress, ping_pong(ch, b, iters));
            });
            return sec * 1e6 / iters / 2;
          },
          [&] {
            return timed([&] { base->ping_pong(me, buf.data(), n, iters); }) * 1e6 / iters / 2;
          },
          lat, bare_lat);
    }
    const int windows = windows_opt > 0 ? windows_opt : n <= 65536 ? 100 : n <= (1u << 20) ? 10 : 3;
    const double bytes = static_cast<double>(n) * 64 * windows;
    std::vector<double> mbs, bare_mbs;
    const int bw_batches = batches_opt > 0 ? batches_opt : 3;
    for (int rep = 0; rep <= bw_batches; ++rep) {
      const int w = rep == 0 ? 1 : windows;
      pair(
          rep,
          [&] {
            const double sec = timed([&] {
              Channel ch(comm, comm.next_sequence());
              fabcoll::run_blocking(comm, progress, stream(ch, b, w, 64));
            });
            return bytes / sec / 1e6;
          },
          [&] { return bytes / timed([&] { base->stream(me, buf.data(), n, w, 64); }) / 1e6; }, mbs,
          bare_mbs);
    }
    if (me == 0) {
      const double l = median(lat), m = median(mbs);
      if (base) {
        const double bl = median(bare_lat), bm = median(bare_mbs);
        std::printf("%-10zu %14.2f %12.2f %8.3f %16.1f %14.1f %8.3f\n", n, l, bl,
                    median_ratio(lat, bare_lat), m, bm, median_ratio(mbs, bare_mbs));
      } else {
        std::printf("%-10zu %14.2f %16.1f\n", n, l, m);
      }
    }
    std::fflush(stdout);
  }
  base.reset();
  if (mem != nullptr) fc_mem_deregister(&mem);
  fc_finalize(ctx);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
#ifdef FABCOLL_PINGPONG_MPI
  MPI_Init(&argc, &argv);
  const int rc = pingpong_main(argc, argv);
  if (rc != 0) MPI_Abort(MPI_COMM_WORLD, rc);  // the other ranks may wait in a collective
  MPI_Finalize();
  return 0;
#else
  return pingpong_main(argc, argv);
#endif
}
