// fabcoll-store-server: serves the bootstrap store on TCP for ranks started by hand (one
// `fabcoll-calibrate` per network namespace in scripts/netns_cluster.sh).
//   fabcoll-store-server HOST SECRET SECONDS
// prints "tcp:HOST:PORT" on stdout (one line, flushed) and serves until SECONDS have passed or
// stdin reaches end of file, whichever comes first.
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bootstrap/launcher_store.hpp"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s HOST SECRET SECONDS\n", argv[0]);
    return 2;
  }
  try {
    const fabcoll::StoreServerThread server(argv[2], argv[1]);
    std::printf("%s\n", server.address().c_str());
    std::fflush(stdout);
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(std::atoi(argv[3]));
    while (std::chrono::steady_clock::now() < end) {
      pollfd pfd{STDIN_FILENO, POLLIN, 0};
      if (poll(&pfd, 1, 200) > 0) {
        char c;
        if (read(STDIN_FILENO, &c, 1) <= 0) break;  // end of file: the job is over
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fabcoll-store-server: %s\n", e.what());
    return 1;
  }
  return 0;
}
