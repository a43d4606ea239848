// A tiny C++ program against the installed fabcoll: two threads, one all-reduce.
#include <fabcoll/fabcoll.hpp>

#include <cstdio>
#include <thread>
#include <vector>

int main() {
  fabcoll::ThreadWorld world(2);
  int bad = 0;
  auto body = [&](int rank) {
    fabcoll::Context ctx(world, rank);
    auto comm = ctx.world();
    std::vector<int> in(4, rank + 1), out(4);
    comm.allreduce(std::span<const int>(in), std::span<int>(out), fabcoll::Op::sum);
    if (out[3] != 3) ++bad;
  };
  std::thread t0(body, 0), t1(body, 1);
  t0.join();
  t1.join();
  std::printf("consumer.cpp: %s\n", bad == 0 ? "ok" : "WRONG");
  return bad;
}
