// The calibration's least-squares fits (src/tuning/fit.cpp): fit_cost_points, which searches
// every subset of its eleven parameters for the non-negative optimum, and
// fit_cost_points_written, which runs it at every point of its χα × χβ grid (fabcoll-calibrate
// over the fabric: 78 × 38 points, for each candidate break). On synthetic points shaped as a
// p = 4 sockets launch's training (about 100 timed collectives, every column reached).
// Run pinned: taskset -c 1 build/bench/fabcoll-fit-bench
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <vector>

#include "tuning/fit.hpp"
#include "tuning/tuning_file.hpp"

namespace {

using fabcoll::tuning::CostFitOptions;
using fabcoll::tuning::CostPoint;

std::vector<CostPoint> training_points(int count) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<CostPoint> pts;
  for (int i = 0; i < count; ++i) {
    CostPoint p;
    p.a = 1 + std::floor(6 * u(rng));
    p.b = 256 * std::pow(2.0, std::floor(12 * u(rng)));
    p.e = u(rng) < 0.5 ? 0 : u(rng);
    p.above = u(rng) < 0.5 ? 0 : u(rng);
    p.small = p.above == 0 && u(rng) < 0.2 ? u(rng) : 0;
    p.above_bytes = p.above;
    p.small_bytes = p.small;
    p.large = u(rng) < 0.2 ? u(rng) : 0;
    p.w = u(rng) < 0.3 ? p.a * (1 - p.e) : 0;
    p.bx = u(rng) < 0.2 ? p.b * p.e : 0;
    p.t = (p.a * 2e-5 + p.b * 2e-10 + p.w * 3e-6 + 5e-5 * (1 - p.e)) * (1 + 0.1 * (u(rng) - 0.5));
    pts.push_back(p);
  }
  return pts;
}

void BM_fit_cost_points(benchmark::State& state) {
  const std::vector<CostPoint> pts = training_points(static_cast<int>(state.range(0)));
  CostFitOptions opt;
  opt.split_above = opt.call = opt.beta_below = true;
  for (auto _ : state) benchmark::DoNotOptimize(fabcoll::tuning::fit_cost_points(pts, opt));
}

void BM_fit_cost_points_written(benchmark::State& state) {
  const std::vector<CostPoint> pts = training_points(100);
  CostFitOptions opt;
  opt.split_above = opt.call = opt.beta_below = true;
  using namespace fabcoll::tuning;
  for (auto _ : state)
    benchmark::DoNotOptimize(fit_cost_points_written(pts, 1.0, kExchangeMin, kExchangeFileMax,
                                                     kExchangeMin, kExchangeMax, opt));
}

}  // namespace

BENCHMARK(BM_fit_cost_points)->Arg(100);
BENCHMARK(BM_fit_cost_points_written)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
