// Buffers at every kind of offset from each other across real processes: shm's copies (ring
// and single-copy CMA reads) go around REP MOVSB where it is slow for the buffers' alignment
// (engine/copy.hpp; read_remote's bounce buffer). Broadcast, all-gather and all-reduce, with
// each rank's buffers at its own offset from a page (so that a sender's and a receiver's
// differ by 1-31 bytes modulo 64 for some pairs, and not for others), at sizes below and above
// the CMA threshold and above read_remote's piece (256 KiB, not a multiple of it), checked
// against a serial reference each rank computes locally. With the naive broadcast forced
// (tests/CMakeLists.txt) every receiver reads from the root: the run asks FABCOLL_STATS for
// the bytes realigned and fails where a rank reports none.
//
//   mp_misaligned          (run under fabcoll-run -n P --transport shm)
#include <fabcoll/fabcoll.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "support/mp_checks.hpp"

namespace {

using namespace fabcoll::testing::mp;  // g_rank, g_size, g_failures, ok

/// A page-aligned allocation, used from `offset` bytes in.
struct Buffer {
  Buffer(std::size_t bytes, std::size_t offset) : offset_(offset) {
    if (posix_memalign(&raw_, 4096, bytes + offset + 64) != 0) std::abort();
  }
  ~Buffer() { std::free(raw_); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  [[nodiscard]] unsigned char* bytes() const { return static_cast<unsigned char*>(raw_) + offset_; }

 private:
  void* raw_ = nullptr;
  std::size_t offset_;
};

unsigned char byte_of(int rank, std::size_t i) {
  return static_cast<unsigned char>((static_cast<std::size_t>(rank) * 29 + i * 7 + i / 251) & 0xff);
}

double value(int rank, std::size_t i) {
  return static_cast<double>((rank * 5 + static_cast<int>(i % 997)) % 13 + 1);
}

void check_bytes(const unsigned char* got, const std::vector<unsigned char>& want,
                 const std::string& what) {
  if (std::memcmp(got, want.data(), want.size()) == 0) return;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (got[i] != want[i]) {
      std::fprintf(stderr, "rank %d: %s: wrong byte at %zu of %zu\n", g_rank, what.c_str(), i,
                   want.size());
      break;
    }
  }
  ++g_failures;
}

}  // namespace

int main() {
  fc_comm_t world = FC_COMM_NULL;
  fc_context_t ctx = start(world);
  if (ctx == nullptr) return 1;
  const int p = g_size;
  // Each rank's own offsets past a page: the broadcast's receivers 16 bytes past the root (slow
  // for REP MOVSB); the all-gather's and the all-reduce's buffers 8r + 1 and 24r + 3, 8r and
  // 16r + 8 bytes in, so that some pairs differ by 1-31 bytes modulo 64 and others do not.
  const auto mine = static_cast<std::size_t>(g_rank);
  for (const std::size_t n : {std::size_t{3000}, std::size_t{40000}, std::size_t{600008}}) {
    const std::string at = " of " + std::to_string(n) + " B";
    {  // broadcast from each root in turn
      for (int root = 0; root < p; ++root) {
        // The root's buffer 1 byte past a page, the others' 17: 16 bytes past the root's.
        Buffer buf(n, g_rank == root ? 1 : 17);
        std::vector<unsigned char> want(n);
        for (std::size_t i = 0; i < n; ++i) want[i] = byte_of(root, i);
        if (g_rank == root)
          std::memcpy(buf.bytes(), want.data(), n);
        else
          std::memset(buf.bytes(), 0, n);
        if (ok(fc_bcast(buf.bytes(), n, FC_BYTE, root, world), "bcast" + at))
          check_bytes(buf.bytes(), want, "bcast" + at + " from root " + std::to_string(root));
      }
    }
    {  // all-gather: the send buffer and the receive buffer at offsets of their own
      Buffer send(n, 8 * mine + 1), recv(n * static_cast<std::size_t>(p), 24 * mine + 3);
      for (std::size_t i = 0; i < n; ++i) send.bytes()[i] = byte_of(g_rank, i);
      std::vector<unsigned char> want(n * static_cast<std::size_t>(p));
      for (int r = 0; r < p; ++r)
        for (std::size_t i = 0; i < n; ++i)
          want[static_cast<std::size_t>(r) * n + i] = byte_of(r, i);
      std::memset(recv.bytes(), 0, want.size());
      if (ok(fc_allgather(send.bytes(), n, FC_BYTE, recv.bytes(), n, FC_BYTE, world),
             "allgather" + at))
        check_bytes(recv.bytes(), want, "allgather" + at);
    }
    {  // all-reduce, sum of doubles (exact: small integers)
      const std::size_t count = n / sizeof(double);
      Buffer send(n, 8 * mine), recv(n, 16 * mine + 8);
      auto* s = reinterpret_cast<double*>(send.bytes());
      auto* r = reinterpret_cast<double*>(recv.bytes());
      for (std::size_t i = 0; i < count; ++i) s[i] = value(g_rank, i);
      if (ok(fc_allreduce(s, r, count, FC_DOUBLE, FC_SUM, world), "allreduce" + at)) {
        for (std::size_t i = 0; i < count; ++i) {
          double want = 0;
          for (int q = 0; q < p; ++q) want += value(q, i);
          if (r[i] != want) {
            std::fprintf(stderr, "rank %d: allreduce%s: wrong value at %zu of %zu\n", g_rank,
                         at.c_str(), i, count);
            ++g_failures;
            break;
          }
        }
      }
    }
  }
  fc_finalize(ctx);
  if (g_failures > 0) {
    std::fprintf(stderr, "rank %d: %d check(s) failed\n", g_rank, g_failures);
    return 1;
  }
  if (g_rank == 0) std::printf("mp_misaligned: p = %d, all checks passed\n", p);
  return 0;
}
