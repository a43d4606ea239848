// fabcoll-demo: the collectives on the virtual-time sim transport (modelled time against the
// texts' formulas) and through the C++ API on a world of threads (real time).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "algorithms/registry.hpp"
#include "collectives/collectives.hpp"
#include "fabcoll/fabcoll.hpp"
#include "transports/sim/sim.hpp"

namespace {

using fabcoll::CollArgs;
using fabcoll::Collective;

void usage() {
  std::puts(
      "usage: fabcoll-demo [--help]\n"
      "Runs every registered algorithm on the sim transport (virtual time, alpha = 5 us,\n"
      "beta = 0.25 ns/B, gamma = 0.1 ns/B) for several p and message sizes, checks the\n"
      "results against a serial reference and prints modelled vs formula time; then runs\n"
      "bcast and allreduce through the C++ API on a world of 4 threads.");
}

int sim_part() {
  const fabcoll::CostModel model{};
  std::printf("# sim transport: alpha=%.3g s, beta=%.3g s/B, gamma=%.3g s/B\n", model.alpha,
              model.beta, model.gamma);
  std::printf("%-12s %-22s %6s %10s %14s %14s %8s %s\n", "collective", "algorithm", "p", "bytes",
              "modelled(us)", "formula(us)", "rounds", "result");
  int failures = 0;
  for (const fabcoll::Algorithm* alg : fabcoll::all_algorithms()) {
    if (alg->coll != Collective::bcast && alg->coll != Collective::allreduce) continue;
    for (const int p : {8, 13, 1000}) {
      for (const std::size_t count : {std::size_t{1}, std::size_t{4096}}) {
        fabcoll::sim::World world(p, model);
        std::vector<std::vector<double>> bufs(static_cast<std::size_t>(p),
                                              std::vector<double>(count));
        for (int r = 0; r < p; ++r)
          for (std::size_t i = 0; i < count; ++i)
            bufs[static_cast<std::size_t>(r)][i] = alg->coll == Collective::bcast
                                                      ? (r == 0 ? double(i) : -1.0)
                                                      : double(r + 1);
        std::vector<CollArgs> args(static_cast<std::size_t>(p));
        const fabcoll::sim::Stats st = world.run([&](fabcoll::Comm& c) {
          CollArgs& a = args[static_cast<std::size_t>(c.rank())];
          a.coll = alg->coll;
          a.recvbuf = bufs[static_cast<std::size_t>(c.rank())].data();
          a.sendbuf = a.recvbuf;
          a.count = count;
          a.elem_size = sizeof(double);
          a.op = fabcoll::ReduceOp(FC_SUM, FC_DOUBLE);
          return fabcoll::run_collective(c, a, alg);
        });
        bool ok = true;
        const double total = double(p) * double(p + 1) / 2;
        for (int r = 0; r < p && ok; ++r)
          for (std::size_t i = 0; i < count && ok; ++i)
            ok = bufs[static_cast<std::size_t>(r)][i] ==
                 (alg->coll == Collective::bcast ? double(i) : total);
        failures += ok ? 0 : 1;
        fabcoll::CostQuery q;
        q.n = double(count * sizeof(double));
        q.p = p;
        q.m = model;
        std::printf("%-12s %-22s %6d %10zu %14.3f %14.3f %8d %s\n",
                    fabcoll::collective_name(alg->coll), std::string(alg->name).c_str(), p,
                    count * sizeof(double), st.finish_time * 1e6, alg->cost(q) * 1e6, st.rounds,
                    ok ? "ok" : "WRONG");
      }
    }
  }
  return failures;
}

int thread_part() {
  constexpr int kRanks = 4;
  fabcoll::ThreadWorld world(kRanks);
  std::vector<std::thread> threads;
  std::vector<int> ok(kRanks, 0);
  std::vector<double> micros(kRanks, 0);
  for (int r = 0; r < kRanks; ++r) {
    threads.emplace_back([&, r] {
      fabcoll::Context ctx(world, r);
      fabcoll::Communicator comm = ctx.world();
      std::vector<float> in(1 << 16, float(r + 1));
      std::vector<float> out(in.size());
      const auto t0 = std::chrono::steady_clock::now();
      comm.allreduce(std::span<const float>(in), std::span<float>(out), fabcoll::Op::sum);
      std::vector<int> b(8, r == 2 ? 42 : 0);
      comm.bcast(std::span<int>(b), 2);
      const auto t1 = std::chrono::steady_clock::now();
      micros[static_cast<std::size_t>(r)] = std::chrono::duration<double, std::micro>(t1 - t0).count();
      bool good = b[7] == 42;
      for (const float v : out) good = good && v == 10.0f;
      ok[static_cast<std::size_t>(r)] = good ? 1 : 0;
    });
  }
  for (auto& t : threads) t.join();
  const int good = std::accumulate(ok.begin(), ok.end(), 0);
  std::printf("\n# C++ API on a world of %d threads: allreduce(256 KiB float sum) + bcast: %s "
              "(rank 0: %.1f us)\n",
              kRanks, good == kRanks ? "ok" : "WRONG", micros[0]);
  return kRanks - good;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      usage();
      return 0;
    }
    std::fprintf(stderr, "fabcoll-demo: unknown argument '%s' (try --help)\n", argv[i]);
    return 2;
  }
  const int failures = sim_part() + thread_part();
  return failures == 0 ? 0 : 1;
}
