// The same ping-pong and streaming test as fabcoll-pingpong, written directly on libfabric
// (RDM endpoint, tagged messages, manual progress, one registered buffer): the baseline that
// fabcoll's fabric path is compared with. Addresses go through fabcoll-run's store.
//   fabcoll-run -n 2 --bind-to core -- fabcoll-fi-pingpong --provider "tcp;ofi_rxm"
// (fabcoll-pingpong --compare-bare runs this baseline beside fabcoll in one process.)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bootstrap/launcher_store.hpp"
#include "fi_bare.hpp"

int main(int argc, char** argv) {
  std::string provider = "tcp;ofi_rxm";
  std::size_t max_bytes = std::size_t{16} << 20;
  bool spin_only = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--provider") == 0 && i + 1 < argc)
      provider = argv[++i];
    else if (std::strcmp(argv[i], "--max") == 0 && i + 1 < argc)
      max_bytes = std::strtoull(argv[++i], nullptr, 10);
    else if (std::strcmp(argv[i], "--spin") == 0)
      spin_only = true;
    else {
      std::puts(
          "usage: fabcoll-run -n 2 -- fabcoll-fi-pingpong [--provider P] [--max BYTES] [--spin]\n"
          "--spin: busy-poll the completion queue (default: yield the core after 64 empty polls,\n"
          "as fabcoll's engine does)");
      return 0;
    }
  }
  const char* store_addr = std::getenv("FABCOLL_STORE");
  if (store_addr == nullptr) {
    std::fprintf(stderr, "fi_pingpong: run it under fabcoll-run -n 2\n");
    return 1;
  }
  fabcoll::LauncherStore store(store_addr, std::getenv("FABCOLL_SECRET"),
                               std::atoi(std::getenv("FABCOLL_RANK")),
                               std::atoi(std::getenv("FABCOLL_SIZE")), 60);
  const int me = store.rank();
  std::vector<char> buf(max_bytes + 64);
  fabcoll::bench::BareFabric f(provider, buf.data(), buf.size(), spin_only);
  store.put("fi/" + std::to_string(me), f.name());
  f.connect(store.get("fi/" + std::to_string(1 - me), 60));
  store.barrier("fi-ready", 60);
  if (me == 0) {
    std::printf("# bare libfabric point-to-point (%s), rank 0 <-> 1\n", f.provider());
    std::printf("%-10s %14s %16s\n", "# Size", "Latency(us)", "Bandwidth(MB/s)");
  }
  for (std::size_t n = 8; n <= max_bytes; n *= 2) {
    const int iters = n <= 65536 ? 2000 : n <= (1u << 20) ? 200 : 40;
    std::vector<double> lat;
    for (int batch = 0; batch < 6; ++batch) {
      const auto t0 = std::chrono::steady_clock::now();
      f.ping_pong(me, buf.data(), n, iters);
      const double us =
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      if (batch > 0) lat.push_back(us / iters / 2);
    }
    std::sort(lat.begin(), lat.end());
    const int windows = n <= 65536 ? 100 : n <= (1u << 20) ? 10 : 3;
    double mbs = 0;
    for (int rep = 0; rep < 2; ++rep) {  // rep 0 warms up
      const auto t0 = std::chrono::steady_clock::now();
      f.stream(me, buf.data(), n, windows, 64);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      mbs = static_cast<double>(n) * 64 * windows / s / 1e6;
    }
    if (me == 0) std::printf("%-10zu %14.2f %16.1f\n", n, lat[lat.size() / 2], mbs);
    std::fflush(stdout);
  }
  store.barrier("fi-done", 60);
  return 0;
}
