// Point-to-point latency (half round trip) and streaming bandwidth between ranks 0 and 1 over
// whatever path fabcoll chose (own shm, or ofi with a provider). Run it with the launcher:
//   fabcoll-run -n 2 --bind-to core [--transport ofi --provider sockets] -- fabcoll-pingpong
// Output: one row per size: bytes, latency (us), bandwidth (MB/s, 10^6 bytes/s).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "collectives/collectives.hpp"
#include "collectives/context_info.hpp"
#include "engine/channel.hpp"
#include "fabcoll/fabcoll.h"

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

}  // namespace

int main(int argc, char** argv) {
  std::size_t max_bytes = std::size_t{16} << 20;
  std::size_t min_bytes = 8;
  bool register_buffer = true;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0) {
      std::puts(
          "usage: fabcoll-run -n 2 [--transport ofi --provider P] -- fabcoll-pingpong [--max "
          "BYTES] [--min BYTES] [--no-register]\n"
          "Latency = half the round trip of a ping-pong (median of 5 batches); bandwidth =\n"
          "bytes of 64-message windows streamed from rank 0 to rank 1 per second.\n"
          "The buffer is registered once with fc_mem_register (as fabcoll-fi-pingpong registers\n"
          "its buffer once); --no-register leaves it to the per-call registration.");
      return 0;
    }
    if (std::strcmp(argv[i], "--max") == 0 && i + 1 < argc)
      max_bytes = std::strtoull(argv[++i], nullptr, 10);
    if (std::strcmp(argv[i], "--min") == 0 && i + 1 < argc)
      min_bytes = std::max<std::size_t>(1, std::strtoull(argv[++i], nullptr, 10));
    if (std::strcmp(argv[i], "--no-register") == 0) register_buffer = false;
  }
  fc_context_t ctx = nullptr;
  if (fc_init(&ctx) != FC_SUCCESS) {
    std::fprintf(stderr, "fabcoll-pingpong: fc_init: %s\n", fc_last_error_message());
    return 1;
  }
  fabcoll::Comm& comm = fabcoll::world_comm(ctx);
  fabcoll::Progress& progress = fabcoll::context_progress(ctx);
  const fabcoll::ContextInfo info = fabcoll::describe_context(ctx);
  if (comm.size() < 2) {
    std::fprintf(stderr, "fabcoll-pingpong: needs 2 ranks (fabcoll-run -n 2)\n");
    return 1;
  }
  std::vector<std::byte> buf(max_bytes);
  fc_mem_t mem = nullptr;
  if (register_buffer && fc_mem_register(ctx, buf.data(), buf.size(), &mem) != FC_SUCCESS) {
    std::fprintf(stderr, "fabcoll-pingpong: fc_mem_register: %s\n", fc_last_error_message());
    return 1;
  }
  if (comm.rank() == 0) {
    std::printf("# fabcoll point-to-point, rank 0 <-> 1 over %s, buffer %s\n",
                info.transport_of[1].c_str(),
                register_buffer ? "registered (fc_mem_register)" : "registered per call");
    std::printf("%-10s %14s %16s\n", "# Size", "Latency(us)", "Bandwidth(MB/s)");
  }
  for (std::size_t n = min_bytes; n <= max_bytes; n *= 2) {
    const int iters = n <= 65536 ? 2000 : n <= (1u << 20) ? 200 : 40;
    const fabcoll::MutableBytes b(buf.data(), n);
    std::vector<double> lat;
    for (int batch = 0; batch < 6; ++batch) {
      Channel ch(comm, comm.next_sequence());
      const auto t0 = std::chrono::steady_clock::now();
      fabcoll::run_blocking(comm, progress, ping_pong(ch, b, iters));
      const double us =
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      if (batch > 0) lat.push_back(us / iters / 2);  // batch 0 warms up
    }
    std::sort(lat.begin(), lat.end());
    const int windows = n <= 65536 ? 100 : n <= (1u << 20) ? 10 : 3;
    double mbs = 0;
    {
      Channel warm(comm, comm.next_sequence());
      fabcoll::run_blocking(comm, progress, stream(warm, b, 1, 64));
      Channel ch(comm, comm.next_sequence());
      const auto t0 = std::chrono::steady_clock::now();
      fabcoll::run_blocking(comm, progress, stream(ch, b, windows, 64));
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      mbs = static_cast<double>(n) * 64 * windows / s / 1e6;
    }
    if (comm.rank() == 0) std::printf("%-10zu %14.2f %16.1f\n", n, lat[lat.size() / 2], mbs);
    std::fflush(stdout);
  }
  if (mem != nullptr) fc_mem_deregister(&mem);
  fc_finalize(ctx);
  return 0;
}
