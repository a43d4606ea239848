// fabcoll-run: the embedded launcher. Starts N local ranks, serves the bootstrap key-value
// store they use to exchange addresses (a Unix socket in a private directory, guarded by a
// random per-job secret passed in the environment), and supervises them: the first non-zero
// exit code is returned; if a rank dies or the timeout passes, all others are stopped.
#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bootstrap/launcher_store.hpp"
#include "bootstrap/node_map.hpp"

namespace {

volatile std::sig_atomic_t g_stop_signal = 0;
void on_signal(int sig) { g_stop_signal = sig; }

struct Rank {
  pid_t pid = -1;
  bool running = false;
  int status = 0;
  int out_fd = -1;  // --tag-output: read end of the rank's stdout+stderr pipe
  std::string partial;
};

void forward_output(int rank, Rank& r, bool flush) {
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(r.out_fd, buf, sizeof buf);
    if (n <= 0) break;
    r.partial.append(buf, static_cast<std::size_t>(n));
    if (n < static_cast<ssize_t>(sizeof buf)) break;
  }
  std::size_t nl;
  while ((nl = r.partial.find('\n')) != std::string::npos) {
    std::printf("[%d] %s\n", rank, r.partial.substr(0, nl).c_str());
    r.partial.erase(0, nl + 1);
  }
  if (flush && !r.partial.empty()) {
    std::printf("[%d] %s\n", rank, r.partial.c_str());
    r.partial.clear();
  }
  std::fflush(stdout);
}

std::string describe(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return std::string("was killed by signal ") + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  return "ended";
}

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "fabcoll-run: start N ranks of a fabcoll program on this machine.\n"
      "Example: fabcoll-run -n 4 ./app args   (or: fabcoll-run -n 4 -- ./app args)"};
  int n = 1;
  int nodes = 1;
  std::string transport = "auto";
  std::string provider;
  double timeout = 0;
  double grace = 0;
  bool tag_output = false;
  std::string bind = "none";
  std::string map_by = "cyclic";
  std::vector<std::string> command;
  app.add_option("-n,--np", n, "number of ranks")->required()->check(CLI::Range(1, 4096));
  app.add_option("--nodes", nodes,
                 "split the ranks into K virtual nodes (blocks of consecutive ranks); ranks on "
                 "different virtual nodes talk over the fabric transport")
      ->check(CLI::Range(1, 4096));
  app.add_option("--transport", transport, "auto (shm inside a node, ofi between), shm or ofi")
      ->check(CLI::IsMember({"auto", "shm", "ofi"}));
  app.add_option("--provider", provider, "libfabric provider for the ofi transport, e.g. sockets");
  app.add_option("--timeout", timeout, "stop the job after S seconds (0: never)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--grace", grace,
                 "after a rank fails, let the others run S more seconds to report their own "
                 "errors before they are stopped (default 0)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--tag-output", tag_output, "prefix every output line with [rank]");
  app.add_option("--bind-to", bind,
                 "none, or core: pin every rank to one allowed CPU (which one: --map-by)")
      ->check(CLI::IsMember({"none", "core"}));
  CLI::Option* map_opt =
      app.add_option(
             "--map-by", map_by,
             "with --bind-to core and more ranks (n) than allowed CPUs (C), which ranks "
             "share a CPU: cyclic (the default; rank r on the (r mod C)-th allowed CPU, "
             "so ranks 0 and 1 on different CPUs) or block (consecutive ranks together: "
             "rank r on the floor(r C / n)-th). With n <= C rank r gets the r-th either way")
          ->check(CLI::IsMember({"cyclic", "block"}));
  // Everything from the program name on belongs to the program (like mpirun): `fabcoll-run
  // -n 4 ./app -x` passes -x to the app; `--` before the program is accepted too.
  app.prefix_command();
  app.footer(
      "Each rank gets FABCOLL_RANK, FABCOLL_SIZE, FABCOLL_STORE, FABCOLL_SECRET and, with "
      "--nodes,\n"
      "FABCOLL_NODE. Exit status: 0 if every rank exited 0, else the first failure's code\n"
      "(128 + signal for a killed rank, 124 for --timeout).");
  CLI11_PARSE(app, argc, argv);
  command = app.remaining();
  if (!command.empty() && command.front() == "--") command.erase(command.begin());
  if (command.empty()) {
    std::fprintf(stderr, "fabcoll-run: no program to run (try --help)\n");
    return 2;
  }
  if (map_opt->count() > 0 && bind != "core") {
    std::fprintf(stderr, "fabcoll-run: --map-by places ranks on CPUs: it needs --bind-to core\n");
    return 2;
  }
  if (nodes > n) {
    std::fprintf(stderr, "fabcoll-run: --nodes %d is more than -n %d\n", nodes, n);
    return 2;
  }

  std::unique_ptr<fabcoll::StoreServer> server;
  const std::string secret = fabcoll::random_hex(16);
  try {
    server = std::make_unique<fabcoll::StoreServer>(secret);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fabcoll-run: cannot start the bootstrap store: %s\n", e.what());
    return 1;
  }
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  std::signal(SIGPIPE, SIG_IGN);

  const pid_t launcher = ::getpid();
  const std::vector<int> cpus = fabcoll::allowed_cpus();  // for --bind-to core
  std::vector<Rank> ranks(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    int fds[2] = {-1, -1};
    if (tag_output && ::pipe2(fds, O_CLOEXEC) != 0) {
      std::perror("fabcoll-run: pipe");
      return 1;
    }
    std::fflush(stdout);
    const pid_t pid = ::fork();
    if (pid < 0) {
      std::perror("fabcoll-run: fork");
      return 1;
    }
    if (pid == 0) {
      // No orphans: a rank dies with its launcher.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != launcher) _exit(1);
      ::setenv("FABCOLL_RANK", std::to_string(r).c_str(), 1);
      ::setenv("FABCOLL_SIZE", std::to_string(n).c_str(), 1);
      ::setenv("FABCOLL_STORE", server->address().c_str(), 1);
      ::setenv("FABCOLL_SECRET", secret.c_str(), 1);
      if (nodes > 1) {
        const long node = static_cast<long>(r) * nodes / n;
        ::setenv("FABCOLL_NODE", ("vnode" + std::to_string(node)).c_str(), 1);
      }
      if (transport != "auto") ::setenv("FABCOLL_TRANSPORT", transport.c_str(), 1);
      if (!provider.empty()) ::setenv("FABCOLL_PROVIDER", provider.c_str(), 1);
      if (bind == "core" && !cpus.empty()) {
        // Block differs from cyclic only where ranks outnumber CPUs (else rank r gets the r-th).
        const std::size_t slot = fabcoll::mapped_cpu(map_by, static_cast<std::size_t>(r),
                                                     static_cast<std::size_t>(n), cpus.size());
        if (!fabcoll::pin_to_cpu(cpus[slot]))
          std::fprintf(stderr,
                       "fabcoll-run: rank %d: cannot pin to CPU %d (%s); running unpinned\n", r,
                       cpus[slot], std::strerror(errno));
      }
      if (tag_output) {
        ::dup2(fds[1], 1);
        ::dup2(fds[1], 2);
      }
      std::vector<char*> args;
      for (std::string& a : command) args.push_back(a.data());
      args.push_back(nullptr);
      ::execvp(args[0], args.data());
      std::fprintf(stderr, "fabcoll-run: cannot start '%s': %s\n", args[0], std::strerror(errno));
      _exit(127);
    }
    Rank& rk = ranks[static_cast<std::size_t>(r)];
    rk.pid = pid;
    rk.running = true;
    if (tag_output) {
      ::close(fds[1]);
      rk.out_fd = fds[0];
      server->watch(fds[0]);
    }
  }

  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto elapsed = [&](Clock::time_point since) {
    return std::chrono::duration<double>(Clock::now() - since).count();
  };
  int running = n;
  int exit_code = 0;
  bool stopping = false;
  Clock::time_point failed_at{};
  bool failed = false;
  Clock::time_point term_sent{};
  bool killed = false;

  auto stop_all = [&](int sig) {
    for (const Rank& rk : ranks)
      if (rk.running) ::kill(rk.pid, sig);
  };

  while (running > 0) {
    server->serve(20);
    if (tag_output) {
      for (int r = 0; r < n; ++r) {
        Rank& rk = ranks[static_cast<std::size_t>(r)];
        for (const int fd : server->readable())
          if (fd == rk.out_fd) forward_output(r, rk, false);
      }
    }
    int status = 0;
    pid_t pid;
    while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
      for (int r = 0; r < n; ++r) {
        Rank& rk = ranks[static_cast<std::size_t>(r)];
        if (rk.pid != pid || !rk.running) continue;
        rk.running = false;
        rk.status = status;
        --running;
        if (tag_output) forward_output(r, rk, true);
        const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        if (!ok && !stopping) {
          std::fprintf(stderr, "fabcoll-run: rank %d (pid %d) %s\n", r, pid,
                       describe(status).c_str());
          if (exit_code == 0) exit_code = exit_code_of(status);
          if (!failed) {
            failed = true;
            failed_at = Clock::now();
          }
        }
      }
    }
    if (g_stop_signal != 0 && !stopping) {
      std::fprintf(stderr, "fabcoll-run: got signal %d; stopping the ranks\n",
                   static_cast<int>(g_stop_signal));
      stopping = true;
      exit_code = 128 + g_stop_signal;
    }
    if (timeout > 0 && !stopping && elapsed(start) > timeout) {
      std::fprintf(stderr, "fabcoll-run: timeout after %.1f s; stopping %d running rank(s)\n",
                   timeout, running);
      stopping = true;
      exit_code = 124;
    }
    if (failed && !stopping && running > 0 && elapsed(failed_at) >= grace) {
      std::fprintf(stderr, "fabcoll-run: stopping the %d remaining rank(s)\n", running);
      stopping = true;
    }
    if (stopping && running > 0) {
      if (term_sent == Clock::time_point{}) {
        stop_all(SIGTERM);
        term_sent = Clock::now();
      } else if (!killed && elapsed(term_sent) > 2.0) {
        stop_all(SIGKILL);
        killed = true;
      }
    }
  }
  return exit_code;
}
