// Messages to one peer arrive in the order they were posted, also when a small one follows a
// large one that is still queued: rank 0 posts a message larger than the ring (it streams in
// fragments while rank 1 drains the ring) and then, without waiting, small ones of 0 … 64 bytes,
// the kind Transport::send_now writes straight into the ring when nothing is queued ahead.
// A small frame written while the large message is half sent would be taken for the start of
// a new message and cut the large one. Run with the rings only (FABCOLL_SHM_CMA=0) at p = 2.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "collectives/collectives.hpp"
#include "collectives/context_info.hpp"
#include "engine/channel.hpp"
#include "fabcoll/fabcoll.h"

namespace {

using fabcoll::Channel;
using fabcoll::Task;
using fabcoll::Transfer;

constexpr std::size_t kLarge = std::size_t{1} << 20;  // 8 times the ring
constexpr int kSmall = 9;                             // 0, 8, 16, …, 64 bytes

std::byte pattern(std::size_t i, int message) {
  return static_cast<std::byte>((i * 131 + static_cast<std::size_t>(message) * 17 + 7) & 0xff);
}

Task<> exchange(Channel& ch, std::vector<std::vector<std::byte>>& bufs) {
  std::vector<Transfer> ts;
  for (std::size_t m = 0; m < bufs.size(); ++m) {
    const auto step = static_cast<std::uint32_t>(m);
    if (ch.rank() == 0) {
      ts.push_back(ch.send(1, bufs[m], step));
    } else {
      ts.push_back(ch.recv(0, bufs[m], step));
    }
  }
  for (Transfer& t : ts) co_await t;
}

}  // namespace

int main() {
  fc_context_t ctx = nullptr;
  if (fc_init(&ctx) != FC_SUCCESS) {
    std::fprintf(stderr, "mp_shm_order: fc_init: %s\n", fc_last_error_message());
    return 1;
  }
  fabcoll::Comm& comm = fabcoll::world_comm(ctx);
  fabcoll::Progress& progress = fabcoll::context_progress(ctx);
  if (comm.size() != 2) {
    std::fprintf(stderr, "mp_shm_order: run with 2 ranks\n");
    return 2;
  }
  const int me = comm.rank();
  int bad = 0;
  for (int round = 0; round < 20; ++round) {
    std::vector<std::vector<std::byte>> bufs;
    bufs.emplace_back(kLarge);
    for (int s = 0; s < kSmall; ++s) bufs.emplace_back(static_cast<std::size_t>(8 * s));
    for (std::size_t m = 0; m < bufs.size(); ++m)
      for (std::size_t i = 0; i < bufs[m].size(); ++i)
        bufs[m][i] = me == 0 ? pattern(i, static_cast<int>(m) + round) : std::byte{0};
    Channel ch(comm, comm.next_sequence());
    try {
      fabcoll::run_blocking(comm, progress, exchange(ch, bufs));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "mp_shm_order: rank %d round %d: %s\n", me, round, e.what());
      return 1;
    }
    if (me != 1) continue;
    for (std::size_t m = 0; m < bufs.size(); ++m) {
      for (std::size_t i = 0; i < bufs[m].size(); ++i) {
        if (bufs[m][i] != pattern(i, static_cast<int>(m) + round)) {
          std::fprintf(stderr, "mp_shm_order: round %d message %zu (%zu bytes): byte %zu wrong\n",
                       round, m, bufs[m].size(), i);
          ++bad;
          break;
        }
      }
    }
  }
  if (fc_finalize(ctx) != FC_SUCCESS) return 1;
  if (bad != 0) return 1;
  if (me == 1)
    std::printf("mp_shm_order: 20 rounds of 1 large and %d small messages in order\n", kSmall);
  return 0;
}
