// Reduction kernel throughput (bytes of the inout buffer per second) beside memcpy of the same
// size. Target (issue 2): float32/float64 sum at >= 70% of memcpy's bytes/s in L2, memory
// bandwidth for large buffers. Run pinned: taskset -c 1 build/bench/fabcoll-kernels-bench
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "engine/copy.hpp"
#include "engine/datatype.hpp"

namespace {

void BM_memcpy(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  std::vector<char> a(bytes, 1);
  std::vector<char> b(bytes, 2);
  for (auto _ : state) {
    std::memcpy(b.data(), a.data(), bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}

template <class T>
void BM_sum(benchmark::State& state, fc_datatype_t dt) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const std::size_t n = bytes / sizeof(T);
  std::vector<T> a(n, T(1));
  std::vector<T> b(n, T(2));
  const fabcoll::ReduceOp op(FC_SUM, dt);
  for (auto _ : state) {
    op.combine_left(a.data(), b.data(), n);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}

void BM_sum_f32(benchmark::State& s) { BM_sum<float>(s, FC_FLOAT); }
void BM_sum_f64(benchmark::State& s) { BM_sum<double>(s, FC_DOUBLE); }
void BM_sum_i32(benchmark::State& s) { BM_sum<std::int32_t>(s, FC_INT32); }

/// A copy of range(0) bytes with the destination range(1) bytes past the source modulo 64
/// (both from page-aligned allocations): memcpy (glibc: REP MOVSB from 2 KiB) against
/// fabcoll::copy_bytes, which the engine's shm copies use (engine/copy.hpp).
template <bool kEngine>
void BM_copy_at(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const auto ahead = static_cast<std::size_t>(state.range(1));
  void* src = nullptr;
  void* dst = nullptr;
  if (posix_memalign(&src, 4096, bytes + 64) != 0 || posix_memalign(&dst, 4096, bytes + 64) != 0) {
    state.SkipWithError("posix_memalign failed");
    return;
  }
  std::memset(src, 1, bytes + 64);
  std::memset(dst, 2, bytes + 64);
  auto* d = static_cast<char*>(dst) + ahead;
  for (auto _ : state) {
    if constexpr (kEngine)
      fabcoll::copy_bytes(d, src, bytes);
    else
      std::memcpy(d, src, bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  std::free(src);
  std::free(dst);
}
void BM_memcpy_at(benchmark::State& s) { BM_copy_at<false>(s); }
void BM_copy_bytes_at(benchmark::State& s) { BM_copy_at<true>(s); }

}  // namespace

BENCHMARK(BM_memcpy)->RangeMultiplier(4)->Range(4 << 10, 64 << 20);
BENCHMARK(BM_sum_f32)->RangeMultiplier(4)->Range(4 << 10, 64 << 20);
BENCHMARK(BM_sum_f64)->RangeMultiplier(4)->Range(4 << 10, 64 << 20);
BENCHMARK(BM_sum_i32)->RangeMultiplier(4)->Range(4 << 10, 64 << 20);
BENCHMARK(BM_memcpy_at)->ArgsProduct({{4 << 10, 96 << 10, 1 << 20}, {0, 16, 48}});
BENCHMARK(BM_copy_bytes_at)->ArgsProduct({{4 << 10, 96 << 10, 1 << 20}, {0, 16, 48}});
BENCHMARK_MAIN();
