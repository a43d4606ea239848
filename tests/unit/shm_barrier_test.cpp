// The shared-memory barriers of Sanders et al. §13.4.3 (Listings 13.1 and 13.2) under real
// threads: with 2 … 16 threads × 10000 episodes, no thread may leave episode e before every
// thread has arrived at it. Each thread publishes the episode it has reached before waiting;
// right after the barrier every thread must have reached e (and none can be past e + 1, since
// e + 1's barrier cannot complete without this thread).
#include "engine/shm_barrier.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace fabcoll {
namespace {

constexpr int kEpisodes = 10000;

struct alignas(kCacheLine) Progress {
  std::atomic<int> episode{0};
};

template <class Barrier>
void expect_no_early_exit(int p) {
  Barrier barrier(p);
  std::vector<Progress> progress(static_cast<std::size_t>(p));
  std::atomic<int> violations{0};
  std::atomic<int> first_bad_episode{-1};
  std::vector<std::thread> threads;
  for (int t = 0; t < p; ++t) {
    threads.emplace_back([&, t] {
      for (int e = 1; e <= kEpisodes; ++e) {
        progress[static_cast<std::size_t>(t)].episode.store(e, std::memory_order_relaxed);
        barrier.wait(t);
        for (int j = 0; j < p; ++j) {
          const int seen =
              progress[static_cast<std::size_t>(j)].episode.load(std::memory_order_relaxed);
          if (seen < e || seen > e + 1) {
            violations.fetch_add(1, std::memory_order_relaxed);
            int expected = -1;
            first_bad_episode.compare_exchange_strong(expected, e);
          }
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(violations.load(), 0) << "p=" << p << ", first bad episode "
                                  << first_bad_episode.load();
}

const int kThreadCounts[] = {2, 3, 5, 8, 16};

TEST(ShmBarrier, SimpleBarrierHoldsEveryThreadEveryEpisode) {
  for (const int p : kThreadCounts) expect_no_early_exit<SimpleBarrier>(p);
}

TEST(ShmBarrier, BinomialBarrierHoldsEveryThreadEveryEpisode) {
  for (const int p : kThreadCounts) expect_no_early_exit<BinomialBarrier>(p);
}

TEST(ShmBarrier, BinomialBarrierTreeMatchesListing13_2) {
  // p = 8: PE 0 has children 1, 2, 4; PE 4 has 5, 6; PE 2 has 3; odd PEs are leaves.
  const BinomialBarrier b8(8);
  const int want8[] = {3, 0, 1, 0, 2, 0, 1, 0};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(b8.num_children(i), want8[i]) << i;
  // p = 6: subtrees clipped: 0 → 1, 2, 4; 4 → 5 (4 + 2 = 6 is outside); 2 → 3.
  const BinomialBarrier b6(6);
  const int want6[] = {3, 0, 1, 0, 1, 0};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(b6.num_children(i), want6[i]) << i;
  // every PE except 0 is exactly one PE's child
  for (const int p : {1, 2, 3, 5, 13, 16, 100}) {
    const BinomialBarrier b(p);
    int edges = 0;
    for (int i = 0; i < p; ++i) edges += b.num_children(i);
    EXPECT_EQ(edges, p - 1) << p;
  }
}

TEST(ShmBarrier, OnePeNeverWaits) {
  SimpleBarrier s(1);
  BinomialBarrier b(1);
  for (int e = 0; e < 100; ++e) {
    s.wait(0);
    b.wait(0);
  }
}

}  // namespace
}  // namespace fabcoll
