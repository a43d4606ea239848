// Shared-memory barriers for threads (or processes) that share an address space: the two
// implementations of Sanders et al. §13.4.3, with the spin-wait discipline of §13.4.1.
//
//  SimpleBarrier (Listing 13.1): one arrival counter c and one epoch counter, each on its own
//    cache line. The last arrival resets c and bumps the epoch; everyone else spins on the epoch.
//    All p arrivals hit one cache line: Θ(p) coherence traffic per barrier on one line.
//  BinomialBarrier (Listing 13.2, Fig. 13.10): a binomial-tree reduce of "ready" flags into
//    PE 0, followed by an implicit broadcast (everyone polls PE 0's cell). Each PE writes only
//    its own padded readyEpoch cell, so nothing is ever reset: epochs count up instead of flags.
//
//   PE:     0   1   2   3   4   5   6   7       children of i: i + 2^j (subtree sizes 1, 2, 4 …)
//   ready:  0 ← 1   2 ← 3   4 ← 5   6 ← 7       then 0 ← 2, 4 ← 6, then 0 ← 4;
//   all poll readyEpoch@0 == epoch              PE 0 stores its epoch last: the broadcast
//
// Memory ordering (what the text does with a seq_cst fence and volatile): every "I have
// arrived" is a release store / RMW and every "has X arrived?" an acquire load, so all writes
// made before the barrier by any PE happen-before all reads made after it by any PE, through
// the chain of release/acquire pairs (child → parent → … → PE 0 → everyone).
//
// Waiting (§13.4.1): `pause` first, then an exponentially growing number of pauses, capped at
// Θ(p); past the cap the waiter sleeps on the cell (C++20 atomic wait) — the "suspend the
// waiting thread" lock of §13.4.1 — and on an oversubscribed machine (more PEs than hardware
// threads, as in CI) it sleeps almost at once, so that the PEs it waits for get the cores.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

namespace fabcoll {

inline constexpr std::size_t kCacheLine = 64;

/// One spin-wait hint to the core (x86 `pause`, Arm `yield`).
inline void cpu_pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  asm volatile("yield");
#endif
}

/// Exponential backoff: 1, 2, 4, … pauses per call up to a cap of Θ(p) (§13.4.1). Past the
/// cap the waiter should stop spinning and sleep (exhausted()). With more PEs than hardware
/// threads the PE being waited for may not be running at all, so spinning only delays it: then
/// the waiter sleeps after a few pauses.
class Backoff {
 public:
  explicit Backoff(int p)
      : cap_(static_cast<unsigned>(p) > std::thread::hardware_concurrency()
                 ? 4u
                 : 16u * static_cast<std::uint32_t>(p > 1 ? p : 1)) {}
  void operator()() {
    for (std::uint32_t i = 0; i < spins_; ++i) cpu_pause();
    if (spins_ < cap_) spins_ *= 2;
  }
  [[nodiscard]] bool exhausted() const { return spins_ >= cap_; }

 private:
  std::uint32_t spins_ = 1;
  std::uint32_t cap_;
};

/// Spins (with backoff), then sleeps on `cell` (C++20 atomic wait: a futex on Linux) until
/// pred(value) holds; returns that value. Writers of `cell` call notify_all after storing,
/// which costs no system call while nobody sleeps.
template <class Pred>
std::uint32_t wait_for(const std::atomic<std::uint32_t>& cell, Backoff& backoff, Pred pred) {
  for (;;) {
    const std::uint32_t v = cell.load(std::memory_order_acquire);
    if (pred(v)) return v;
    if (backoff.exhausted()) {
      cell.wait(v, std::memory_order_acquire);
    } else {
      backoff();
    }
  }
}

/// Listing 13.1: the folklore counter barrier for p PEs.
class SimpleBarrier {
 public:
  explicit SimpleBarrier(int p) : p_(p) {}
  SimpleBarrier(const SimpleBarrier&) = delete;
  SimpleBarrier& operator=(const SimpleBarrier&) = delete;

  [[nodiscard]] int size() const { return p_; }

  /// Returns once all p PEs have called wait for this episode. `pe` is unused (the interface
  /// of BinomialBarrier, as in the text).
  void wait(int /*pe*/) {
    // Read the epoch before arriving: once c reaches p the epoch may move on at once.
    const std::uint32_t start = epoch_.load(std::memory_order_acquire);
    if (c_.fetch_add(1, std::memory_order_acq_rel) == p_ - 1) {
      // The last arrival: nobody touches c until the new epoch is visible, so a plain reset
      // ordered before the release of the epoch is safe.
      c_.store(0, std::memory_order_relaxed);
      epoch_.store(start + 1, std::memory_order_release);
      epoch_.notify_all();
      return;
    }
    Backoff backoff(p_);
    wait_for(epoch_, backoff, [start](std::uint32_t e) { return e != start; });
  }

 private:
  alignas(kCacheLine) std::atomic<int> c_{0};
  alignas(kCacheLine) std::atomic<std::uint32_t> epoch_{0};
  int p_;
};

/// Listing 13.2: the binomial-tree barrier with epochs for p PEs, numbered 0 … p-1.
class BinomialBarrier {
 public:
  explicit BinomialBarrier(int p)
      : p_(p), ready_(static_cast<std::size_t>(p)), pe_(static_cast<std::size_t>(p)) {
    init_num_children(0, p);
  }
  BinomialBarrier(const BinomialBarrier&) = delete;
  BinomialBarrier& operator=(const BinomialBarrier&) = delete;

  [[nodiscard]] int size() const { return p_; }
  /// Children of `pe` in the binomial tree (PE pe + 2^i for i < this number).
  [[nodiscard]] int num_children(int pe) const {
    return pe_[static_cast<std::size_t>(pe)].num_children;
  }

  /// Returns once all p PEs have called wait for this episode. Each PE passes its own number.
  void wait(int pe) {
    PeData& mine = pe_[static_cast<std::size_t>(pe)];
    const std::uint32_t my_epoch = ++mine.epoch;  // only PE `pe` touches its PeData
    Backoff backoff(p_);
    for (int i = 0; i < mine.num_children; ++i) {  // reduce: my subtree has arrived
      const std::atomic<std::uint32_t>& child =
          ready_[static_cast<std::size_t>(pe + (1 << i))].epoch;
      wait_for(child, backoff, [my_epoch](std::uint32_t e) { return e == my_epoch; });
    }
    std::atomic<std::uint32_t>& ready = ready_[static_cast<std::size_t>(pe)].epoch;
    ready.store(my_epoch, std::memory_order_release);
    ready.notify_all();
    // Implicit broadcast: PE 0's cell reaches my_epoch once everyone has arrived. It cannot
    // move on to my_epoch + 1 before this PE has arrived again, so equality is the right test.
    wait_for(ready_[0].epoch, backoff, [my_epoch](std::uint32_t e) { return e == my_epoch; });
  }

 private:
  // Listing 13.2's initNumChildren: the subtree [begin, begin + size) has children at
  // begin + 1, begin + 2, begin + 4, … whose subtrees have sizes 1, 2, 4, … (the last clipped).
  void init_num_children(int begin, int size) {
    for (int i = 1; i < size; i *= 2) {
      ++pe_[static_cast<std::size_t>(begin)].num_children;
      const int child_size = size < 2 * i ? size - i : i;
      init_num_children(begin + i, child_size);
    }
  }

  struct alignas(kCacheLine) PaddedEpoch {
    std::atomic<std::uint32_t> epoch{0};
  };
  struct alignas(kCacheLine) PeData {  // co-located: one cache miss for both
    std::uint32_t epoch = 0;
    int num_children = 0;
  };
  static_assert(sizeof(PaddedEpoch) == kCacheLine && sizeof(PeData) == kCacheLine);

  int p_;
  std::vector<PaddedEpoch> ready_;
  std::vector<PeData> pe_;
};

}  // namespace fabcoll
