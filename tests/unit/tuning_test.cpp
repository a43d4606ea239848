// Calibration library (src/tuning): α-β fits on synthetic data with known parameters and
// noise, protocol-break recovery, crossover tables against brute force and against the
// run-time selector, and the tuning file's round trip and rejections.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "algorithms/sim_steps.hpp"
#include "bootstrap/node_map.hpp"
#include "collectives/collectives.hpp"
#include "collectives/placement.hpp"
#include "patterns/hypercube.hpp"
#include "transports/sim/sim.hpp"
#include "tuning/crossover.hpp"
#include "tuning/fit.hpp"
#include "tuning/lawn29.hpp"
#include "tuning/tuning_file.hpp"

namespace fabcoll::tuning {
namespace {

std::vector<double> log_sizes(double lo, double hi, int per_octave) {
  std::vector<double> out;
  for (double x = lo; x <= hi; x *= std::exp2(1.0 / per_octave)) out.push_back(std::floor(x));
  return out;
}

/// t = α + βn with multiplicative noise (1 + ε), ε ~ N(0, sigma): timing noise is relative.
std::vector<Point> synthetic(double alpha, double beta, double sigma, unsigned seed, double lo = 8,
                             double hi = 1 << 22, double brk = 0, double alpha2 = 0,
                             double beta2 = 0) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> eps(0, sigma);
  std::vector<Point> pts;
  for (double n : log_sizes(lo, hi, 4)) {
    for (int rep = 0; rep < 3; ++rep) {
      const double t = (brk > 0 && n >= brk) ? alpha2 + beta2 * n : alpha + beta * n;
      pts.push_back({n, t * (1 + eps(gen))});
    }
  }
  return pts;
}

TEST(Fit, ExactLineIsRecovered) {
  const auto pts = synthetic(3e-6, 1e-10, 0, 1);
  for (Weighting w : {Weighting::uniform, Weighting::relative}) {
    const LinearFit f = fit_linear(pts, w);
    EXPECT_NEAR(f.alpha, 3e-6, 1e-12);
    EXPECT_NEAR(f.beta, 1e-10, 1e-16);
    EXPECT_NEAR(f.r2, 1.0, 1e-9);
    ASSERT_EQ(f.residuals.size(), pts.size());
    for (double r : f.residuals) EXPECT_NEAR(r, 0, 1e-12);
  }
}

TEST(Fit, NoisyLineWithinTolerance) {
  // 2% relative noise, many seeds: the relative-weighted fit gets α and β within 5%.
  for (unsigned seed = 1; seed <= 20; ++seed) {
    const auto pts = synthetic(5e-6, 2.5e-10, 0.02, seed);
    const LinearFit f = fit_linear(pts, Weighting::relative);
    EXPECT_NEAR(f.alpha / 5e-6, 1.0, 0.05) << "seed " << seed;
    EXPECT_NEAR(f.beta / 2.5e-10, 1.0, 0.05) << "seed " << seed;
    EXPECT_GT(f.r2, 0.9);
    EXPECT_LT(median_abs(f.rel_residuals), 0.03);
  }
}

TEST(Fit, RelativeWeightingKeepsAlphaWhereUniformLosesIt) {
  // With noise on the large sizes, uniform least squares puts α far off (its error at 1 MiB
  // dwarfs α); relative weighting does not.
  const auto pts = synthetic(2e-6, 1e-9, 0.02, 7);
  const LinearFit rel = fit_linear(pts, Weighting::relative);
  const LinearFit uni = fit_linear(pts, Weighting::uniform);
  EXPECT_NEAR(rel.alpha / 2e-6, 1.0, 0.05);
  EXPECT_GT(std::fabs(uni.alpha / 2e-6 - 1.0), std::fabs(rel.alpha / 2e-6 - 1.0));
}

TEST(Fit, DegenerateInputs) {
  EXPECT_EQ(fit_linear(std::vector<Point>{}).points, 0u);
  const std::vector<Point> one_size = {{64, 1e-6}, {64, 3e-6}};
  const LinearFit f = fit_linear(one_size, Weighting::uniform);
  EXPECT_EQ(f.beta, 0);
  EXPECT_NEAR(f.alpha, 2e-6, 1e-15);
  EXPECT_FALSE(fit_piecewise(one_size).has_break);
}

TEST(Fit, PiecewiseRecoversProtocolBreak) {
  // Eager below 64 KiB (small α, large β: a copy), rendezvous above (a handshake: larger α,
  // smaller β). The break must be found within one sampling step (a quarter octave).
  for (double brk : {4096.0, 65536.0, 262144.0}) {
    for (unsigned seed = 1; seed <= 5; ++seed) {
      const auto pts = synthetic(1e-6, 4e-10, 0.01, seed, 8, 1 << 24, brk, 2e-5, 1e-10);
      const PiecewiseFit f = fit_piecewise(pts);
      ASSERT_TRUE(f.has_break) << brk;
      EXPECT_GE(f.break_n, brk / std::exp2(0.25) - 1) << brk;
      EXPECT_LE(f.break_n, brk * std::exp2(0.25) + 1) << brk;
      EXPECT_NEAR(f.below.beta / 4e-10, 1.0, 0.1);
      EXPECT_NEAR(f.above.beta / 1e-10, 1.0, 0.1);
      EXPECT_NEAR(f.above.alpha / 2e-5, 1.0, 0.2);
      EXPECT_LT(f.sse, f.single.sse);
      EXPECT_DOUBLE_EQ(f.predict(brk * 2), f.above.predict(brk * 2));
    }
  }
}

// A break the transport is known to have (shm's single-copy threshold) splits the points there,
// even where the gain is too small for fit_piecewise to keep one of its own: the ring/CMA
// switch of this machine (β 1.3e-10 below 32 KiB, 7.5e-11 from it, α 0.2 against 2 µs).
TEST(Fit, PiecewiseAtAKnownBreak) {
  for (unsigned seed = 1; seed <= 5; ++seed) {
    const auto pts = synthetic(2e-7, 1.3e-10, 0.03, seed, 8, 1 << 22, 32768, 2e-6, 7.5e-11);
    const PiecewiseFit f = fit_piecewise_at(pts, 32768);
    ASSERT_TRUE(f.has_break) << seed;
    EXPECT_EQ(f.break_n, 32768);
    EXPECT_NEAR(f.below.beta / 1.3e-10, 1.0, 0.1) << seed;
    EXPECT_NEAR(f.above.beta / 7.5e-11, 1.0, 0.1) << seed;
    EXPECT_NEAR(f.above.alpha / 2e-6, 1.0, 0.3) << seed;
    EXPECT_DOUBLE_EQ(f.sse, f.below.sse + f.above.sse);
    EXPECT_EQ(f.segment(32767).beta, f.below.beta);
    EXPECT_EQ(f.segment(32768).beta, f.above.beta);
  }
  // Between two measured sizes: the break is the given size, each side its own points.
  const auto pts = synthetic(2e-7, 1.3e-10, 0.0, 1, 8, 1 << 22, 20000, 2e-6, 7.5e-11);
  const PiecewiseFit g = fit_piecewise_at(pts, 20000);
  ASSERT_TRUE(g.has_break);
  EXPECT_EQ(g.break_n, 20000);
  EXPECT_NEAR(g.below.beta / 1.3e-10, 1.0, 1e-6);
  EXPECT_NEAR(g.above.beta / 7.5e-11, 1.0, 1e-6);
  // Fewer than min_points sizes on a side: the single line.
  EXPECT_FALSE(fit_piecewise_at(pts, 3.4e6).has_break);  // 2 sizes (3.5 and 4.2 MB) above
  EXPECT_FALSE(fit_piecewise_at(pts, 10).has_break);     // 2 sizes (8 and 9.5 B) below
  EXPECT_EQ(fit_piecewise_at(pts, 10).below.beta, fit_linear(pts).beta);
  EXPECT_TRUE(fit_piecewise_at(pts, 12).has_break);  // 3 below
}

TEST(Fit, PiecewiseKeepsOneLineWithoutBreak) {
  for (unsigned seed = 1; seed <= 10; ++seed) {
    const auto pts = synthetic(5e-6, 2.5e-10, 0.02, seed);
    EXPECT_FALSE(fit_piecewise(pts).has_break) << seed;
  }
}

TEST(Fit, FixedAlphaRecoversBeta) {
  const auto pts = synthetic(3e-6, 2e-10, 0.0, 1);
  const LinearFit f = fit_linear_fixed_alpha(pts, 3e-6);
  EXPECT_EQ(f.alpha, 3e-6);
  EXPECT_NEAR(f.beta / 2e-10, 1.0, 1e-9);
  EXPECT_NEAR(f.r2, 1.0, 1e-12);
  // A wrong α held: β absorbs what it can, the residuals show the rest.
  const LinearFit g = fit_linear_fixed_alpha(pts, 1e-6);
  EXPECT_GT(g.sse, 0);
  EXPECT_EQ(fit_linear_fixed_alpha(std::vector<Point>{{0, 1e-6}}, 1e-6).beta, 0);
}

// Helper B's finding (issue 6): above a break the fitted α can land below the lower segment's
// (negative, floored to 1e-9 by calibrate), which makes a packet just above the break cheaper
// than one below it. floor_upper_alpha refits β above with α held at the lower α.
TEST(Fit, UpperAlphaBelowLowerIsFloored) {
  // Above 256 KiB t = 4e-10 n - 2e-5 (a line whose intercept is negative), below 2e-6 + 3e-10 n.
  std::vector<Point> pts;
  for (double n = 8; n <= double(1 << 24); n *= std::sqrt(2.0))
    pts.push_back(
        {std::round(n), n < 262144 ? 2e-6 + 3e-10 * std::round(n) : 4e-10 * std::round(n) - 2e-5});
  PiecewiseFit f = fit_piecewise(pts);
  ASSERT_TRUE(f.has_break);
  ASSERT_LT(f.above.alpha, 0);
  const double unguarded_beta = f.above.beta;
  EXPECT_TRUE(floor_upper_alpha(f, pts));
  EXPECT_EQ(f.above.alpha, f.below.alpha);
  EXPECT_GT(f.above.beta, 0);
  EXPECT_LT(f.above.beta, unguarded_beta * 1.01);
  EXPECT_DOUBLE_EQ(f.sse, f.below.sse + f.above.sse);
  // Physical fits (α above ≥ α below) and fits without a break are left alone.
  for (unsigned seed = 1; seed <= 3; ++seed) {
    PiecewiseFit g =
        fit_piecewise(synthetic(1e-6, 4e-10, 0.01, seed, 8, 1 << 24, 65536, 2e-5, 1e-10));
    ASSERT_TRUE(g.has_break);
    const double a = g.above.alpha, b = g.above.beta;
    EXPECT_FALSE(floor_upper_alpha(g, pts));
    EXPECT_EQ(g.above.alpha, a);
    EXPECT_EQ(g.above.beta, b);
  }
  PiecewiseFit h = fit_piecewise(synthetic(5e-6, 2.5e-10, 0.02, 1));
  ASSERT_FALSE(h.has_break);
  EXPECT_FALSE(floor_upper_alpha(h, pts));
}

// β beyond the cache of a link's upper segment (quiet shm: fit_beyond_cache). Synthetic
// ping-pong: rings below 32 KiB (5e-7 + 3e-10 n), single copies above it at 6e-11 s/B in the
// cache and 1.3e-10 s/B from 1 MiB, 2% noise: the shape of p = 2 shm on this VM.
TEST(Fit, BetaBeyondTheCacheOfTheUpperSegment) {
  // Sizes 8 B - 4 MiB, doubling, three repetitions each.
  const auto make = [](unsigned seed, double beyond) {
    std::mt19937 gen(seed);
    std::normal_distribution<double> eps(0, 0.02);
    std::vector<Point> pts;
    for (double n = 8; n <= double(1 << 22); n *= 2)
      for (int rep = 0; rep < 3; ++rep) {
        const double t =
            n < 32768 ? 5e-7 + 3e-10 * n : 8e-7 + (n < double(1 << 20) ? 6e-11 : beyond) * n;
        pts.push_back({n, t * (1 + eps(gen))});
      }
    return pts;
  };
  for (unsigned seed = 1; seed <= 5; ++seed) {
    const std::vector<Point> pts = make(seed, 1.3e-10);
    PiecewiseFit pf = fit_piecewise_at(pts, 32768);
    ASSERT_TRUE(pf.has_break);
    // One line through the upper segment: its β between the two, far from either.
    EXPECT_GT(pf.above.beta, 1.2 * 6e-11);
    const double beta = fit_beyond_cache(pf, pts, double(1 << 20));
    EXPECT_NEAR(beta, 1.3e-10, 0.05 * 1.3e-10) << seed;
    EXPECT_NEAR(pf.above.beta, 6e-11, 0.05 * 6e-11) << seed;
    EXPECT_NEAR(pf.below.beta, 3e-10, 0.05 * 3e-10) << seed;
    EXPECT_DOUBLE_EQ(pf.sse, pf.below.sse + pf.above.sse);
  }
  // None where it would not cost more, where too few sizes lie on either side, or without a
  // break below it: pf unchanged.
  const std::vector<Point> flat = make(7, 6e-11);
  PiecewiseFit pf = fit_piecewise_at(flat, 32768);
  ASSERT_TRUE(pf.has_break);
  const double beta = pf.above.beta;
  EXPECT_EQ(fit_beyond_cache(pf, flat, double(1 << 20)), 0);
  EXPECT_EQ(pf.above.beta, beta);
  const std::vector<Point> steep = make(7, 1.3e-10);
  EXPECT_EQ(fit_beyond_cache(pf, steep, double(1 << 22)), 0);  // one size from it
  EXPECT_EQ(fit_beyond_cache(pf, steep, 131072), 0);           // two sizes below it
  EXPECT_EQ(fit_beyond_cache(pf, steep, 16384), 0);            // below the break
  EXPECT_EQ(pf.above.beta, beta);
  PiecewiseFit one = fit_piecewise_at(steep, 1e12);
  ASSERT_FALSE(one.has_break);
  EXPECT_EQ(fit_beyond_cache(one, steep, double(1 << 20)), 0);
}

/// The terms t = a α + b β + c of every non-pipelined bcast and all-reduce formula at p ranks
/// and four sizes under `truth`, each checked to give the formula's own time; the names of
/// formulas that are not linear in α, β go to `nonlinear`.
std::vector<CostPoint> formula_points(const CostModel& truth, int p,
                                      std::vector<std::string>& nonlinear) {
  std::vector<CostPoint> pts;
  for (const Algorithm* alg : all_algorithms()) {
    if (alg->optimal_k != nullptr || !eligible(*alg, p, true)) continue;
    if (alg->coll != Collective::bcast && alg->coll != Collective::allreduce) continue;
    for (double n : {64.0, 2048.0, 32768.0, 393216.0}) {
      double a = 0, b = 0, c = 0;
      if (!linear_cost_terms(*alg, n, p, truth, a, b, c)) {
        nonlinear.emplace_back(alg->name);
        continue;
      }
      CostQuery q;
      q.n = n;
      q.p = p;
      q.k = 1;
      q.m = truth;
      const double t = alg->cost(q);
      EXPECT_NEAR(a * truth.alpha + b * truth.beta + c, t, 1e-9 * t) << alg->name;
      pts.push_back({a, b, c, t});
    }
  }
  return pts;
}

// α, β fitted to timed collectives (the oversubscribed layout): t = a α + b β + c with a, b, c
// from the cost formulas. Synthetic times from known α, β (and noise) come back.
// ω fitted in one mode of the VM, the probe timed in the other: ω against the line the probe
// implies (tuning/fit.hpp), within 1.5 times either way. Attempts of p = 4 shm launches
// (thirty-eighth to fortieth sessions): in the mode at 2, ω 1.05 and 1.55 against probes of
// 2.11 are the probe's mode (the old bound, half the probe's excess, flagged both), 3.00
// against 2.07 the other (kept by a launch with a regret of 10.9%); in the mode at 6, 3.30
// against 5.82 is the probe's mode (flagged before), 1.95 against 5.98 and 1.05 against 5.58
// the other (kept by launches with regrets of 56%).
TEST(Fit, WrittenFitDisagreesWithTheProbe) {
  EXPECT_NEAR(tuning::written_expected(1.2), 1.0, 1e-12);  // below the floor: no excess
  EXPECT_NEAR(tuning::written_expected(5.82), 1 + 0.635 * (5.82 - 1.91), 1e-12);
  EXPECT_FALSE(tuning::written_fit_disagrees(1.05, 2.11));
  EXPECT_FALSE(tuning::written_fit_disagrees(1.55, 2.11));
  EXPECT_TRUE(tuning::written_fit_disagrees(3.00, 2.07));
  EXPECT_FALSE(tuning::written_fit_disagrees(3.30, 5.82));
  EXPECT_TRUE(tuning::written_fit_disagrees(1.95, 5.98));
  EXPECT_TRUE(tuning::written_fit_disagrees(1.05, 5.58));
  // Below a probe of 1.5 (the quiet mode of earlier sessions) nothing is judged.
  EXPECT_FALSE(tuning::written_fit_disagrees(1.15, 1.22));
  EXPECT_FALSE(tuning::written_fit_disagrees(3.0, 1.49));
  EXPECT_TRUE(tuning::written_fit_disagrees(3.0, 1.5));
  // At the bound, both ways: the excess is 1 there.
  const double e = tuning::written_expected(4.0);
  EXPECT_NEAR(tuning::written_fit_excess(e * 1.5, 4.0), 1.0, 1e-12);
  EXPECT_NEAR(tuning::written_fit_excess(e / 1.5, 4.0), 1.0, 1e-12);
  EXPECT_FALSE(tuning::written_fit_disagrees(e * 1.49, 4.0));
  EXPECT_TRUE(tuning::written_fit_disagrees(e * 1.51, 4.0));
  EXPECT_TRUE(tuning::written_fit_disagrees(e / 1.51, 4.0));
  EXPECT_NEAR(tuning::written_fit_excess(e, 4.0), 0.0, 1e-12);
}

// shm's rings timed slower by the fit than by the ping-pong before it (the thirty-fifth
// session's launches in tuning/fit.hpp: the pairs' 3.8e-10 s/B against the fit's 3.99e-10
// flagged; 1.05e-9 against 3.0e-10, 2.03e-10 against 9.08e-11 not).
TEST(Fit, RingFitDisagreesWithThePingPong) {
  EXPECT_TRUE(tuning::ring_fit_disagrees(3.99e-10, 3.8e-10));
  EXPECT_FALSE(tuning::ring_fit_disagrees(3.0e-10, 1.05e-9));
  EXPECT_FALSE(tuning::ring_fit_disagrees(1.24e-10, 3.11e-10));
  EXPECT_FALSE(tuning::ring_fit_disagrees(9.08e-11, 2.03e-10));
  // At the bound, and not fitted.
  EXPECT_FALSE(tuning::ring_fit_disagrees(1e-10, 1.5e-10));
  EXPECT_TRUE(tuning::ring_fit_disagrees(1e-10, 1.49e-10));
  EXPECT_FALSE(tuning::ring_fit_disagrees(0, 1e-10));
  EXPECT_FALSE(tuning::ring_fit_disagrees(1e-10, 0));
}

// Which disturbed attempt calibrate keeps: the smallest largest check, each as a multiple of
// its bound. The fortieth session's 23.7/56.5% launch (p = 4 shm, the VM's mode at 6): attempt
// 1, ping-pong x1.03 and probe x0.90, ω 1.95 against a probe of 5.98 (written_fit_excess 1.50);
// attempt 3, ping-pong x1.30 (|ln 1.30| / ln 1.25 = 1.18), ω 3.30 against 5.94 (0.19). Attempt 3
// is kept now; before, attempt 1 was, its machine within bounds, and its hybrid at 512 KiB took
// 56.5% longer than recursive doubling.
TEST(Fit, LeastDisturbedAttemptIsKept) {
  const double bound = std::log(1.25);
  const tuning::AttemptChange fitted_other{
      .machine = std::max(std::log(1.03), std::abs(std::log(0.90))) / bound,
      .fit = tuning::written_fit_excess(1.95, 5.98)};
  const tuning::AttemptChange drifted{.machine = std::log(1.30) / bound,
                                      .fit = tuning::written_fit_excess(3.30, 5.94)};
  EXPECT_GT(fitted_other.fit, 1.0);
  EXPECT_LT(drifted.fit, 1.0);
  EXPECT_TRUE(tuning::attempt_changed_less(drifted, fitted_other));
  EXPECT_FALSE(tuning::attempt_changed_less(fitted_other, drifted));
  // The thirty-fifth session's 29.5/77.6% launch (the VM's mode at 2): attempt 1's probe moved
  // x2.66 during its validation; attempt 4 drifted x1.08 and its probe x1.11, ω 1.00 against a
  // probe of 2.1 (within the line's bound now). Attempt 4 is kept.
  const tuning::AttemptChange moved{.machine = std::log(2.66) / bound,
                                    .fit = tuning::written_fit_excess(1.10, 2.1)};
  const tuning::AttemptChange stayed{.machine = std::log(1.11) / bound,
                                     .fit = tuning::written_fit_excess(1.00, 2.1)};
  EXPECT_TRUE(tuning::attempt_changed_less(stayed, moved));
  EXPECT_FALSE(tuning::attempt_changed_less(moved, stayed));
  // Equal largest checks tie (the earlier attempt stays kept).
  const tuning::AttemptChange same{.machine = 0.5, .fit = 1.2};
  const tuning::AttemptChange same_other_way{.machine = 1.2, .fit = 0.3};
  EXPECT_FALSE(tuning::attempt_changed_less(same, same_other_way));
  EXPECT_FALSE(tuning::attempt_changed_less(same_other_way, same));
  // A forced attempt ranks after any measured one.
  const tuning::AttemptChange forced{.forced = true};
  EXPECT_TRUE(tuning::attempt_changed_less(moved, forced));
  EXPECT_FALSE(tuning::attempt_changed_less(forced, moved));
  // Two forced tie whatever was measured in them (calibrate_retries_keep_least keeps the first).
  const tuning::AttemptChange forced_moved{.machine = 4.0, .forced = true};
  const tuning::AttemptChange forced_stayed{.machine = 0.0, .forced = true};
  EXPECT_FALSE(tuning::attempt_changed_less(forced_stayed, forced_moved));
  EXPECT_FALSE(tuning::attempt_changed_less(forced_moved, forced_stayed));
}

TEST(Fit, CostPointsRecoverAlphaBeta) {
  const CostModel truth{8e-6, 3e-10, 5e-11};
  std::vector<std::string> nonlinear;
  std::vector<CostPoint> pts = formula_points(truth, 4, nonlinear);
  for (const std::string& name : nonlinear)
    EXPECT_EQ(name, "hybrid");  // the one formula that picks a strategy by the model
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(0.0, 0.02);
  ASSERT_GE(pts.size(), 8u);
  const LinearFit exact = fit_cost_points(pts);
  EXPECT_NEAR(exact.alpha / truth.alpha, 1.0, 1e-9);
  EXPECT_NEAR(exact.beta / truth.beta, 1.0, 1e-9);
  EXPECT_NEAR(exact.r2, 1.0, 1e-9);
  for (CostPoint& p : pts) p.t *= 1 + noise(rng);
  const LinearFit noisy = fit_cost_points(pts);
  EXPECT_NEAR(noisy.alpha / truth.alpha, 1.0, 0.05);
  EXPECT_NEAR(noisy.beta / truth.beta, 1.0, 0.05);
  // Singular (only α terms) and negative solutions fall back to one non-negative parameter.
  const std::vector<CostPoint> rounds_only = {{2, 0, 0, 2e-5}, {4, 0, 0, 4e-5}};
  const LinearFit r = fit_cost_points(rounds_only);
  EXPECT_NEAR(r.alpha, 1e-5, 1e-15);
  EXPECT_EQ(r.beta, 0);
  const std::vector<CostPoint> neg = {{1, 1000, 0, 1e-6}, {1, 1e6, 0, 1e-3}, {1, 1e5, 0, 2e-4}};
  const LinearFit f = fit_cost_points(neg);
  EXPECT_GE(f.alpha, 0);
  EXPECT_GE(f.beta, 0);
}

// ω with α and β (the oversubscribed fit): synthetic times of the bcast and all-reduce formulas
// at p = 4 under a model whose written data costs 2.5 β (or 1.83 β, between the fit's steps) (each
// time from the costed model, as the selector predicts it) give back ω, α and β; the same times
// with ω = 1 give ω = 1.
// Exact cost points at p = 4 of every non-pipelined algorithm of `colls` under `truth`: the
// terms of linear_cost_terms, the time truth predicts, the written and exchange shares. As
// fabcoll-calibrate's training, without the algorithms costed as the calls they make
// (Algorithm::parts).
std::vector<CostPoint> cost_points(const CostModel& truth,
                                   std::initializer_list<Collective> colls) {
  std::vector<CostPoint> pts;
  for (const Algorithm* alg : all_algorithms()) {
    if (alg->optimal_k != nullptr || !alg->parts.empty() || !eligible(*alg, 4, true)) continue;
    if (std::find(colls.begin(), colls.end(), alg->coll) == colls.end()) continue;
    for (double n : {64.0, 2048.0, 32768.0, 393216.0}) {
      double a = 0, b = 0, c = 0;
      if (!linear_cost_terms(*alg, n, 4, truth, a, b, c)) continue;
      CostQuery q;
      q.n = n;
      q.p = 4;
      q.k = 1;
      q.m = truth;
      const double e = alg->exchange_share ? alg->exchange_share(q) : 0.0;
      pts.push_back({a, b, c, alg->predict(q), alg->written_share ? alg->written_share(q) : 0.0, e,
                     0.0, fans_in(alg->coll) ? a * (1 - e) : 0.0});
    }
  }
  return pts;
}

// The search behind fit_cost_points meets the non-negative optimum's conditions (Karush-Kuhn-
// Tucker; the problem is convex, so they certify it): x >= 0, the SSE's gradient
// g = ata·x − aty is 0 where x > 0 and not negative where x = 0. Random columns, one of zeros,
// one a copy of another (every subset holding both is singular), and right-hand sides that
// some columns fit with a negative weight (held at 0 in the optimum).
TEST(Fit, SubsetLeastSquaresMeetsTheOptimumsConditions) {
  constexpr int n = kCostFitParams;
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(0, 1);
  int held = 0;
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<std::array<double, n>> rows(40);
    std::vector<double> y(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      for (int j = 0; j < n; ++j) rows[i][j] = u(rng) * std::pow(10.0, j % 3);
      rows[i][3] = 0;
      rows[i][7] = rows[i][2];
      y[i] = rows[i][0] + 0.5 * rows[i][1] - 0.3 * rows[i][4] + 0.1 * u(rng) - 0.05;
    }
    double ata[n][n] = {}, aty[n] = {}, yty = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      yty += y[i] * y[i];
      for (int j = 0; j < n; ++j) {
        aty[j] += rows[i][j] * y[i];
        for (int k = 0; k < n; ++k) ata[j][k] += rows[i][j] * rows[i][k];
      }
    }
    double x[n];
    subset_least_squares(ata, aty, yty, x);
    EXPECT_EQ(x[3], 0.0);
    EXPECT_TRUE(x[2] == 0 || x[7] == 0) << trial;
    for (int j = 0; j < n; ++j) {
      double g = -aty[j];
      for (int k = 0; k < n; ++k) g += ata[j][k] * x[k];
      const double scale = std::sqrt(ata[j][j] * yty) + 1e-300;
      EXPECT_GE(x[j], 0.0) << trial << " " << j;
      if (x[j] > 0) {
        EXPECT_NEAR(g / scale, 0.0, 1e-9) << trial << " " << j;
      } else if (ata[j][j] > 0) {
        EXPECT_GE(g / scale, -1e-9) << trial << " " << j;
        held += g / scale > 1e-6;
      }
    }
  }
  EXPECT_GT(held, 100);  // the constraint binds: columns held at 0 that would lower the SSE
}

// The search in the order the texts' exhaustive search takes it, as a reference: every bit mask
// in increasing order, each subset's normal equations eliminated whole, a pivot below 1e-12 of
// its diagonal singular, a negative solution left out, the first of strictly least SSE kept
// (x = 0 first). subset_least_squares searches depth first and eliminates incrementally, and
// must give the same x bit for bit.
void mask_order_search(const double (&ata)[kCostFitParams][kCostFitParams],
                       const double (&aty)[kCostFitParams], double yty,
                       double (&best)[kCostFitParams]) {
  constexpr int n_all = kCostFitParams;
  const auto sse_of = [&](const double(&x)[n_all]) {
    double e = yty;
    for (int i = 0; i < n_all; ++i) {
      if (x[i] == 0) continue;
      e -= 2 * x[i] * aty[i];
      for (int j = 0; j < n_all; ++j) e += x[i] * ata[i][j] * x[j];
    }
    return e;
  };
  std::fill(std::begin(best), std::end(best), 0.0);
  double best_sse = sse_of(best);
  for (int mask = 1; mask < (1 << n_all); ++mask) {
    int idx[n_all], n = 0;
    bool reached = true;
    for (int j = 0; j < n_all; ++j)
      if (mask & (1 << j)) {
        idx[n++] = j;
        reached = reached && ata[j][j] > 0;
      }
    if (!reached) continue;
    double m[n_all][n_all + 1];
    for (int r = 0; r < n; ++r) {
      for (int c = 0; c < n; ++c) m[r][c] = ata[idx[r]][idx[c]];
      m[r][n] = aty[idx[r]];
    }
    bool singular = false;
    for (int k = 0; k < n && !singular; ++k) {
      singular = !(m[k][k] > 1e-12 * ata[idx[k]][idx[k]]);
      for (int r = k + 1; r < n && !singular; ++r) {
        const double q = m[r][k] / m[k][k];
        for (int c = k; c <= n; ++c) m[r][c] -= q * m[k][c];
      }
    }
    if (singular) continue;
    double sol[n_all] = {}, x[n_all] = {};
    bool negative = false;
    for (int r = n - 1; r >= 0; --r) {
      double v = m[r][n];
      for (int c = r + 1; c < n; ++c) v -= m[r][c] * sol[c];
      sol[r] = v / m[r][r];
      negative = negative || sol[r] < 0;
    }
    if (negative) continue;
    for (int r = 0; r < n; ++r) x[idx[r]] = sol[r];
    const double e = sse_of(x);
    if (e < best_sse) {
      best_sse = e;
      std::copy(std::begin(x), std::end(x), std::begin(best));
    }
  }
}

// Random normal equations, with columns of zeros, copies of other columns and nearly
// dependent ones among them: the depth-first search gives the mask-order search's x bit for
// bit.
TEST(Fit, SubsetSearchIsTheMaskOrderSearch) {
  constexpr int n = kCostFitParams;
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> u(0, 1);
  int differing = 0, zeros = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<std::array<double, n>> rows(5 + trial % 40);
    std::vector<double> y(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      for (int j = 0; j < n; ++j) rows[i][j] = u(rng) < 0.3 ? 0.0 : u(rng) * std::pow(10.0, j % 4);
      if (trial % 3 == 0) rows[i][(trial / 3) % n] = 0;                    // a column of zeros
      if (trial % 4 == 1) rows[i][9] = rows[i][1];                         // a copy
      if (trial % 5 == 2) rows[i][6] = rows[i][2] * (1 + 1e-14 * u(rng));  // nearly one
      y[i] = u(rng) * 10 - 2;
    }
    double ata[n][n] = {}, aty[n] = {}, yty = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const double w = 0.5 + u(rng);
      yty += w * y[i] * y[i];
      for (int j = 0; j < n; ++j) {
        aty[j] += w * rows[i][j] * y[i];
        for (int k = 0; k < n; ++k) ata[j][k] += w * rows[i][j] * rows[i][k];
      }
    }
    double got[n], want[n];
    subset_least_squares(ata, aty, yty, got);
    mask_order_search(ata, aty, yty, want);
    differing += std::memcmp(got, want, sizeof got) != 0;
    zeros += std::count(std::begin(want), std::end(want), 0.0);
  }
  EXPECT_EQ(differing, 0);
  EXPECT_GT(zeros, 300);  // the constraint binds in many
}

// fit_cost_points_written's grid searched in parts, the parts' errors summed (as
// fabcoll-calibrate sums its ranks'): the same fit, bit for bit, for any number of parts; on
// the grid of ω and χ (inside a node) and on that of χα and χβ with the fabric's columns.
TEST(Fit, WrittenFitInPartsIsTheWholeFit) {
  CostModel truth{8e-6, 3e-10, 5e-11};
  truth.written = 1.6;
  truth.exchange_alpha = truth.exchange_beta = 1.3;
  std::vector<CostPoint> pts =
      cost_points(truth, {Collective::bcast, Collective::allreduce, Collective::allgather});
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> noise(-0.05, 0.05);
  for (CostPoint& p : pts) p.t *= 1 + noise(rng);
  CostFitOptions fabric;
  fabric.split_above = fabric.call = fabric.beta_below = true;
  struct Grid {
    double max_omega, chi_lo, chi_hi, chi_beta_lo, chi_beta_hi;
    CostFitOptions options;
  };
  for (const Grid& g : {Grid{3, 0.5, 2, 1, 1, {}}, Grid{1, 0.5, 1.5, 0.5, 1.5, fabric}}) {
    const WrittenFit whole = fit_cost_points_written(pts, g.max_omega, g.chi_lo, g.chi_hi,
                                                     g.chi_beta_lo, g.chi_beta_hi, g.options);
    for (int parts = 1; parts <= 4; ++parts) {
      std::vector<double> merged;
      for (int part = 0; part < parts; ++part) {
        const std::vector<double> e =
            written_fit_errors(pts, g.max_omega, g.chi_lo, g.chi_hi, g.chi_beta_lo, g.chi_beta_hi,
                               g.options, part, parts);
        if (merged.empty()) merged.assign(e.size(), 0.0);
        ASSERT_EQ(e.size(), merged.size());
        for (std::size_t i = 0; i < e.size(); ++i) {
          EXPECT_TRUE(e[i] == 0 || merged[i] == 0) << "two parts fitted point " << i;
          merged[i] += e[i];
        }
      }
      EXPECT_EQ(std::count(merged.begin(), merged.end(), 0.0), 0) << parts;
      const WrittenFit got = written_fit_from_errors(
          pts, g.max_omega, g.chi_lo, g.chi_hi, g.chi_beta_lo, g.chi_beta_hi, g.options, merged);
      EXPECT_EQ(got.omega, whole.omega) << parts;
      EXPECT_EQ(got.chi, whole.chi) << parts;
      EXPECT_EQ(got.chi_beta, whole.chi_beta) << parts;
      EXPECT_EQ(got.fit.alpha, whole.fit.alpha) << parts;
      EXPECT_EQ(got.fit.beta, whole.fit.beta) << parts;
      EXPECT_EQ(got.fit.sse, whole.fit.sse) << parts;
    }
    if (g.max_omega > 1) {
      EXPECT_NEAR(whole.omega, 1.6, 0.2);
      EXPECT_NEAR(whole.chi, 1.3, 0.2);
    }
  }
}

TEST(Fit, CostPointsRecoverTheWrittenFactor) {
  for (const double omega : {1.0, 2.5, 1.83}) {  // 1.83: between two steps of the grid
    CostModel truth{8e-6, 3e-10, 5e-11};
    truth.written = omega;
    std::vector<CostPoint> pts = cost_points(truth, {Collective::bcast, Collective::allreduce});
    ASSERT_GE(pts.size(), 8u);
    const WrittenFit wf = fit_cost_points_written(pts);
    const bool on_grid = std::fabs(omega * 20 - std::round(omega * 20)) < 1e-9;
    EXPECT_NEAR(wf.omega, omega, on_grid ? 1e-9 : 0.026);  // the nearest step
    EXPECT_NEAR(wf.fit.alpha / truth.alpha, 1.0, on_grid ? 1e-6 : 0.05);
    EXPECT_NEAR(wf.fit.beta / truth.beta, 1.0, on_grid ? 1e-6 : 0.05);
    // With 2% noise ω comes back within 0.15.
    std::mt19937 rng(11);
    std::normal_distribution<double> noise(0.0, 0.02);
    for (CostPoint& p : pts) p.t *= 1 + noise(rng);
    EXPECT_NEAR(fit_cost_points_written(pts).omega, omega, 0.15);
  }
}

// χ with ω: the collectives of the oversubscribed fit (bcast, all-reduce, all-gather at p = 4)
// mix algorithms that never exchange (binomial, naive), half (scatter +
// all-gather) and always (recursive doubling, Rabenseifner, rings), so χ comes back too.
TEST(Fit, CostPointsRecoverTheExchangeFactor) {
  for (const auto& [omega, chi] : {std::pair{1.0, 1.0}, std::pair{2.5, 1.6}, std::pair{1.5, 0.8}}) {
    CostModel truth{8e-6, 3e-10, 5e-11};
    truth.written = omega;
    truth.exchange_alpha = truth.exchange_beta = chi;
    const std::vector<CostPoint> pts =
        cost_points(truth, {Collective::bcast, Collective::allreduce, Collective::allgather});
    ASSERT_GE(pts.size(), 12u);
    const WrittenFit wf = fit_cost_points_written(pts, 10, 0.5, 3);
    // A range that leaves out the true χ gives its nearest end.
    EXPECT_NEAR(fit_cost_points_written(pts, 10, 1.7, 3).chi, std::max(chi, 1.7), 1e-9) << chi;
    EXPECT_NEAR(wf.chi, chi, 1e-9) << omega;
    EXPECT_NEAR(wf.omega, omega, 1e-9) << chi;
    EXPECT_NEAR(wf.fit.alpha / truth.alpha, 1.0, 1e-6);
    EXPECT_NEAR(wf.fit.beta / truth.beta, 1.0, 1e-6);
    // Without χ in the fit (χ held at 1) the exchanges are charged to α, β and ω instead.
    if (chi != 1) {
      EXPECT_GT(fit_cost_points_written(pts).fit.sse, wf.fit.sse * 100);
    }
  }
}

// β_x (CostModel::ring_exchange_beta) with χ: p = 4 on 2 CPUs (cyclic), shm's rings below a
// 32 KiB pull threshold. The exchanges' ring bytes across CPUs (recursive doubling's first
// step, the ring's every step) cost β_x, their other bytes χβ·β, the one-way ones β: times made
// so, at fabcoll-calibrate's training sizes with 16 KiB, give back β_x, χ, α and β, where
// each run's bx is linear_cost_terms' ring_x_terms at a model whose β_x is 0 (measured: in bx,
// not in c). Those bytes put back into b (one β under χβ, as before β_x) fit far worse.
TEST(Fit, CostPointsRecoverTheRingExchangeBeta) {
  const Placement* cyclic = placement_for_mapping("cyclic", 4, 2);
  ASSERT_NE(cyclic, nullptr);
  CostModel truth{1.2e-6, 3e-10, 2e-11};
  truth.pull_bytes = 32768;
  truth.placement = cyclic;
  truth.exchange_alpha = truth.exchange_beta = 1.8;
  truth.ring_exchange_beta = 1.1e-9;  // the VM's x6 mode: about 3.6 β
  CostModel at = truth;
  at.ring_exchange_beta = 0;
  std::vector<CostPoint> pts;
  int with_bx = 0;
  for (const Algorithm* alg : all_algorithms()) {
    if (alg->optimal_k != nullptr || !eligible(*alg, 4, true)) continue;
    if (alg->coll != Collective::bcast && alg->coll != Collective::reduce &&
        alg->coll != Collective::allreduce && alg->coll != Collective::allgather)
      continue;
    for (const double n : {64.0, 2048.0, 16384.0, 32768.0, 98304.0, 393216.0}) {
      CostPoint pt;
      if (!linear_cost_terms(*alg, n, 4, at, pt.a, pt.b, pt.c, nullptr, nullptr, &pt.bx)) continue;
      CostQuery q;
      q.n = n;
      q.p = 4;
      q.k = 1;
      q.m = truth;
      pt.t = alg->predict(q);
      pt.e = alg->clamped_exchange_share(q);
      pts.push_back(pt);
      with_bx += pt.bx > 0 ? 1 : 0;
    }
  }
  ASSERT_GE(with_bx, 6);
  const WrittenFit wf = fit_cost_points_written(pts, 1, 0.5, 3);
  EXPECT_NEAR(wf.fit.ring_exchange_beta / truth.ring_exchange_beta, 1.0, 1e-6);
  EXPECT_NEAR(wf.chi, 1.8, 1e-9);
  EXPECT_NEAR(wf.fit.alpha / truth.alpha, 1.0, 1e-6);
  EXPECT_NEAR(wf.fit.beta / truth.beta, 1.0, 1e-6);
  std::vector<CostPoint> blind = pts;
  for (CostPoint& p : blind) {
    p.b += p.bx;
    p.bx = 0;
  }
  const WrittenFit bf = fit_cost_points_written(blind, 1, 0.5, 3);
  EXPECT_LT(bf.fit.ring_exchange_beta, 0);  // no point has any
  EXPECT_GT(bf.fit.sse, 1e-3);
  EXPECT_LT(wf.fit.sse, 1e-20);
}

// W (CostModel::wake) with χ and ω: reduce + bcast is the one all-reduce whose rounds are
// one-way, as are the binomial and naive reduces; the broadcasts have none (fans_in) and the
// other all-reduces and all-gathers exchange,
// so times made with W = 2.5 µs (this machine's p = 4 fit: 2.2–3.0 µs) give back W, α, β, χ
// and ω; with 2% noise W within 20%. Fitted without the column (w = 0), χ and α absorb it badly;
// times without W give W = 0.
TEST(Fit, CostPointsRecoverTheWakeUp) {
  for (const double wake : {0.0, 2.5e-6}) {
    CostModel truth{3e-6, 1.2e-10, 2.5e-11};
    truth.written = 1.4;
    truth.exchange_alpha = truth.exchange_beta = 1.9;
    truth.wake = wake;
    std::vector<CostPoint> pts = cost_points(truth, {Collective::bcast, Collective::reduce,
                                                     Collective::allreduce, Collective::allgather});
    ASSERT_GE(pts.size(), 12u);
    const WrittenFit wf = fit_cost_points_written(pts, 10, kExchangeMin, kExchangeMax);
    EXPECT_NEAR(wf.fit.wake, wake, 1e-12) << wake;
    EXPECT_NEAR(wf.chi, 1.9, 1e-9) << wake;
    EXPECT_NEAR(wf.omega, 1.4, 1e-9) << wake;
    EXPECT_NEAR(wf.fit.alpha / truth.alpha, 1.0, 1e-6) << wake;
    EXPECT_NEAR(wf.fit.beta / truth.beta, 1.0, 1e-6) << wake;
    if (wake == 0) continue;
    std::vector<CostPoint> blind = pts;
    for (CostPoint& p : blind) p.w = 0;
    EXPECT_GT(fit_cost_points_written(blind, 10, kExchangeMin, kExchangeMax).fit.sse, 1e-3);
    std::mt19937 rng(5);
    std::normal_distribution<double> noise(0.0, 0.02);
    for (CostPoint& p : pts) p.t *= 1 + noise(rng);
    EXPECT_NEAR(fit_cost_points_written(pts, 10, kExchangeMin, kExchangeMax).fit.wake / wake, 1.0,
                0.2);
  }
}

// The fit's training runs at p = 4 (fabcoll-calibrate's: the whole-message bcast, reduce,
// all-reduce and all-gather algorithms) at each of `sizes`: fn(alg, n, a, b, c) with the
// linear terms of its cost under `at` (linear_cost_terms).
template <class Fn>
void for_each_training_run(const CostModel& at, std::initializer_list<double> sizes, Fn fn) {
  for (const Algorithm* alg : all_algorithms()) {
    if (alg->optimal_k != nullptr || !eligible(*alg, 4, true)) continue;
    if (alg->coll != Collective::bcast && alg->coll != Collective::reduce &&
        alg->coll != Collective::allreduce && alg->coll != Collective::allgather)
      continue;
    for (const double n : sizes) {
      double a = 0, b = 0, c = 0;
      if (linear_cost_terms(*alg, n, 4, at, a, b, c)) fn(*alg, n, a, b, c);
    }
  }
}

// The query of one call at p = 4, one packet, n bytes under m.
CostQuery one_packet_at_p4(double n, const CostModel& m) {
  CostQuery q;
  q.n = n;
  q.p = 4;
  q.k = 1;
  q.m = m;
  return q;
}

// An algorithm's exchange share at p = 4, one packet, n bytes under m (as calibrate marks its
// training points).
double exchange_share_at(const Algorithm& alg, double n, const CostModel& m) {
  return alg.clamped_exchange_share(one_packet_at_p4(n, m));
}

// A split column of fit_cost_points recovered: on the exact points α, β and got(fit) come back
// (want), blanking the points' split (blank) leaves them unfitted, and with 2% noise got(fit)
// is within tol of want.
void expect_column_recovered(std::vector<CostPoint> pts, const CostModel& truth,
                             double (*got)(const CostFit&), double want, void (*blank)(CostPoint&),
                             unsigned seed, double tol) {
  const CostFit f = fit_cost_points(pts);
  EXPECT_NEAR(f.alpha / truth.alpha, 1.0, 1e-6);
  EXPECT_NEAR(f.beta / truth.beta, 1.0, 1e-6);
  EXPECT_NEAR(got(f) / want, 1.0, 1e-6);
  std::vector<CostPoint> blind = pts;
  for (CostPoint& p : blind) blank(p);
  EXPECT_GT(fit_cost_points(blind).sse, 1e-3);
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0.0, 0.02);
  for (CostPoint& p : pts) p.t *= 1 + noise(rng);
  EXPECT_NEAR(got(fit_cost_points(pts)) / want, 1.0, tol);
}

// β beyond the cache (CostModel::large_from, beta_large): times made at p = 4 with whole
// messages from 512 KiB at 1.5 β (this machine's fit: 1.24 times), bcast, reduce, all-reduce
// and all-gather at the sizes fabcoll-calibrate times with 1 MiB added, each point marked with
// the sim's share of its bytes in such messages (as segment_k mixes β), give back α, β and
// beta_large; with 2% noise beta_large within 10%. Without the marks the fit is worse; with no
// point beyond, beta_large = β.
TEST(Fit, CostPointsRecoverBetaBeyondTheCache) {
  const double from = 524288;
  CostModel truth{3e-6, 1.2e-10, 2.5e-11};
  std::vector<CostPoint> pts;
  std::vector<CostPoint> small;
  for_each_training_run(truth, {64.0, 2048.0, 32768.0, 393216.0, 1048576.0},
                        [&](const Algorithm& alg, double n, double a, double b, double c) {
                          const double share =
                              n >= from ? sim_break_shares(alg, 4, n, from, -1).beta : 0.0;
                          CostQuery q;
                          q.n = n;
                          q.p = 4;
                          q.k = 1;
                          q.m = truth;
                          q.m.beta = truth.beta * (1 + 0.5 * share);
                          pts.push_back({a, b, c, alg.predict(q), 0, 0, 0, 0, share});
                          if (n < from) small.push_back(pts.back());
                        });
  ASSERT_GE(pts.size(), 40u);
  bool mixed = false;
  for (const CostPoint& p : pts) mixed = mixed || (p.large > 0 && p.large < 1);
  EXPECT_TRUE(mixed);  // Rabenseifner's n/2 and n/4 at 1 MiB: some bytes beyond, some not
  expect_column_recovered(
      pts, truth, [](const CostFit& f) { return f.beta_large; }, 1.5 * truth.beta,
      [](CostPoint& p) { p.large = 0; }, 7, 0.1);
  EXPECT_EQ(fit_cost_points(small).beta_large, fit_cost_points(small).beta);
}

// One more term refitted to timed runs with the rest held (fabcoll-calibrate's K of small
// messages, CostModel::call_wake_small): runs t = base + x·v with 2% noise give v back, runs
// the term does not reach (x = 0) count for nothing, in v or in the gain (timed far off here);
// a value below zero is 0; fewer than two runs reached: -1; the gain is the held predictions'
// error over the refitted one's.
TEST(Fit, RefitTermRecoversItsValue) {
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(0, 0.02);
  std::vector<double> t, base, x, held;
  for (int i = 0; i < 12; ++i) {
    const double b = 5e-6 + 1e-6 * i;
    const double xi = i % 3 == 0 ? 0.0 : 0.5 + 0.1 * i;
    base.push_back(b);
    x.push_back(xi);
    // Runs the term does not reach are timed far off their base: they must not pull v.
    t.push_back(xi > 0 ? (b + xi * 1.5e-5) * (1 + noise(rng)) : 10 * b);
    held.push_back(b + xi * 4e-5);  // the term at K, far above
  }
  double gain = 0;
  EXPECT_NEAR(refit_term(t, base, x, held, &gain), 1.5e-5, 0.05e-5);
  EXPECT_GT(gain, 10);
  std::vector<double> reached_none = x;
  for (double& v : reached_none) v = 0;
  reached_none[1] = 1;
  EXPECT_EQ(refit_term(t, base, reached_none, held, &gain), -1);
  EXPECT_EQ(gain, 1);
  std::vector<double> faster = base;
  for (double& v : faster) v *= 0.5;
  EXPECT_EQ(refit_term(faster, base, x, held), 0);
}

// The timed collectives' points at p = 4 (256 B – 384 KiB) made with their rounds of messages
// below 256 B at factor × α, each marked with its share of them (CostPoint::small).
std::vector<CostPoint> small_message_points(const CostModel& truth, double factor) {
  std::vector<CostPoint> pts;
  for_each_training_run(truth, {256.0, 2048.0, 32768.0, 393216.0},
                        [&](const Algorithm& alg, double n, double a, double b, double c) {
                          const double small = 1 - sim_break_shares(alg, 4, n, 256, -1).alpha;
                          CostQuery q;
                          q.n = n;
                          q.p = 4;
                          q.k = 1;
                          q.m = truth;
                          q.m.alpha = truth.alpha * (1 + (factor - 1) * small);
                          CostPoint pt{a, b, c, alg.predict(q)};
                          pt.small = small;
                          pts.push_back(pt);
                        });
  return pts;
}

// α of small messages (CostModel::small_below): points whose rounds partly carry messages below
// 256 B (the ring's and Rabenseifner's all-reduces at 256 B, p = 4) at half α give it back as
// alpha_small, with α and β; fitted without the column they do not fit; with no point below,
// alpha_small is α.
TEST(Fit, CostPointsRecoverAlphaOfSmallMessages) {
  CostModel truth{4e-5, 2.5e-10, 2.5e-11};
  const std::vector<CostPoint> pts = small_message_points(truth, 0.5);
  std::vector<CostPoint> large;
  std::copy_if(pts.begin(), pts.end(), std::back_inserter(large),
               [](const CostPoint& p) { return p.small == 0; });
  ASSERT_GE(pts.size(), 30u);
  EXPECT_TRUE(std::any_of(pts.begin(), pts.end(), [](const CostPoint& p) { return p.small > 0; }));
  expect_column_recovered(
      pts, truth, [](const CostFit& f) { return f.alpha_small; }, 0.5 * truth.alpha,
      [](CostPoint& p) { p.small = 0; }, 11, 0.15);
  EXPECT_EQ(fit_cost_points(large).alpha_small, fit_cost_points(large).alpha);
}

// α of small messages at most α: the same points with their small messages' rounds at 1.5 α
// (an injected message dearer than one above the inject size) fit with alpha_small = α, with
// SSE > 0 and α between the truth's and 1.5 times it; at 0.99 α (below it) they come back
// exactly, as at 0.5 α above.
TEST(Fit, AlphaOfSmallMessagesIsAtMostAlpha) {
  CostModel truth{4e-5, 2.5e-10, 2.5e-11};
  for (const double factor : {1.5, 0.99}) {
    const std::vector<CostPoint> pts = small_message_points(truth, factor);
    const CostFit f = fit_cost_points(pts);
    EXPECT_LE(f.alpha_small, f.alpha * (1 + 1e-12)) << factor;
    if (factor > 1) {
      EXPECT_NEAR(f.alpha_small / f.alpha, 1.0, 1e-9);
      EXPECT_GT(f.sse, 1e-6);
      EXPECT_GT(f.alpha, truth.alpha);
      EXPECT_LT(f.alpha, 1.5 * truth.alpha);
    } else {
      EXPECT_NEAR(f.alpha / truth.alpha, 1.0, 1e-6);
      EXPECT_NEAR(f.alpha_small / (factor * truth.alpha), 1.0, 1e-6);
    }
  }
}

// Over the fabric (CostFitOptions): χα apart from χβ, an exchange's α above the break of its
// own and K, a call's first wake-up, below the break and above it, come back from points made
// with them (p = 4, a break at 2 KiB, the timed collectives' algorithms at 256 B – 384 KiB),
// with χ on the grid; without the options the same points do not fit.
TEST(Fit, CostPointsRecoverExchangesApartAndACallsFirstWakeUp) {
  const double brk = 2048;
  CostModel truth{3e-5, 2.5e-10, 2.5e-11};
  const double alpha_above = 6e-5, chi_a = 3.0, chi_b = 2.0, chi_above = 2.5, call = 4e-5,
               call_above = 1.5e-5;
  // The points with K above the break at k_above (0: none).
  const auto points = [&](double k_above) {
    std::vector<CostPoint> out;
    for_each_training_run(truth, {256.0, 2048.0, 32768.0, 393216.0},
                          [&](const Algorithm& alg, double n, double a, double b, double c) {
                            const double e = exchange_share_at(alg, n, truth);
                            const double above = sim_break_shares(alg, 4, n, brk, -1).alpha;
                            const double t =
                                c + a * (1 - above) * truth.alpha * (1 + e * (chi_a - 1)) +
                                a * above * alpha_above * (1 - e + e * chi_above) +
                                b * truth.beta * (1 + e * (chi_b - 1)) +
                                (1 - e) * (1 - above) * call + (1 - e) * above * k_above;
                            out.push_back({a, b, c, t, 0, e, above});
                          });
    return out;
  };
  const std::vector<CostPoint> pts = points(call_above);
  ASSERT_GE(pts.size(), 40u);
  CostFitOptions both;
  both.split_above = both.call = true;
  // With none above the break, none is fitted there, and α above is not lowered for it.
  const WrittenFit none = fit_cost_points_written(points(0), 1.0, 0.25, 8, 0.25, 4, both);
  EXPECT_NEAR(none.fit.call_wake_above, 0, 1e-12);
  EXPECT_NEAR(none.fit.alpha_above / alpha_above, 1.0, 1e-6);
  EXPECT_NEAR(none.fit.call_wake / call, 1.0, 1e-6);
  const WrittenFit w = fit_cost_points_written(pts, 1.0, 0.25, 8, 0.25, 4, both);
  EXPECT_NEAR(w.chi, chi_a, 1e-9);
  EXPECT_NEAR(w.chi_beta, chi_b, 1e-9);
  EXPECT_NEAR(w.fit.alpha / truth.alpha, 1.0, 1e-6);
  EXPECT_NEAR(w.fit.alpha_above / alpha_above, 1.0, 1e-6);
  EXPECT_NEAR(w.fit.exchange_alpha_above / (chi_above * alpha_above), 1.0, 1e-6);
  EXPECT_NEAR(w.fit.beta / truth.beta, 1.0, 1e-6);
  EXPECT_NEAR(w.fit.call_wake / call, 1.0, 1e-6);
  EXPECT_NEAR(w.fit.call_wake_above / call_above, 1.0, 1e-6);
  EXPECT_GT(fit_cost_points_written(pts, 1.0, 0.25, 4).fit.sse, 100 * (w.fit.sse + 1e-9));
  EXPECT_EQ(fit_cost_points(pts).call_wake, 0);
  EXPECT_EQ(fit_cost_points(pts).call_wake_above, 0);
  EXPECT_EQ(fit_cost_points(pts).exchange_alpha_above, -1);
}

// β below the break apart from β above it (CostFitOptions::beta_below): the bytes of each
// point split by the sim's share of them above the break. Synthetic points with a steep β
// below (the sockets provider's one-way time climbs from 256 B to 1 KiB) come back exactly,
// with every other parameter; one β through both misses them.
TEST(Fit, CostPointsRecoverBetaBelowTheBreak) {
  const double brk = 1024;
  CostModel truth{2e-5, 4e-10, 2.5e-11};
  const double alpha_above = 6e-5, chi = 2.0, call = 4e-5, beta_below = 2e-8;
  std::vector<CostPoint> pts;
  for_each_training_run(
      truth, {256.0, 512.0, 2048.0, 32768.0, 393216.0},
      [&](const Algorithm& alg, double n, double a, double b, double c) {
        const double e = exchange_share_at(alg, n, truth);
        const BreakShares sh = sim_break_shares(alg, 4, n, brk, -1);
        const double x = 1 + e * (chi - 1);
        const double t = c + a * (1 - sh.alpha) * truth.alpha * x + a * sh.alpha * alpha_above * x +
                         b * x * (sh.beta * truth.beta + (1 - sh.beta) * beta_below) +
                         (1 - e) * (1 - sh.alpha) * call;
        CostPoint pt{a, b, c, t, 0, e, sh.alpha};
        pt.above_bytes = sh.beta;
        pts.push_back(pt);
      });
  ASSERT_GE(pts.size(), 40u);
  CostFitOptions opt;
  opt.call = opt.beta_below = true;
  const WrittenFit w = fit_cost_points_written(pts, 1.0, 0.25, 4, 0, 0, opt);
  EXPECT_NEAR(w.chi, chi, 1e-9);
  EXPECT_NEAR(w.fit.alpha / truth.alpha, 1.0, 1e-6);
  EXPECT_NEAR(w.fit.alpha_above / alpha_above, 1.0, 1e-6);
  EXPECT_NEAR(w.fit.beta / truth.beta, 1.0, 1e-6);
  EXPECT_NEAR(w.fit.beta_below / beta_below, 1.0, 1e-6);
  EXPECT_NEAR(w.fit.call_wake / call, 1.0, 1e-6);
  opt.beta_below = false;
  const WrittenFit one = fit_cost_points_written(pts, 1.0, 0.25, 4, 0, 0, opt);
  EXPECT_EQ(one.fit.beta_below, -1);
  EXPECT_GT(one.fit.sse, 100 * (w.fit.sse + 1e-9));
  // No point above the break: β_below is β (one β of every byte), not fitted apart.
  std::vector<CostPoint> low;
  for (CostPoint pt : pts)
    if (pt.above == 0 && pt.above_bytes == 0) low.push_back(pt);
  ASSERT_FALSE(low.empty());
  opt.beta_below = true;
  const CostFit f = fit_cost_points(low, opt);
  EXPECT_EQ(f.beta_below, -1);
  EXPECT_GT(f.beta, 0);
}

// The selector mixes α of small messages by the share of an algorithm's rounds in them:
// recursive doubling's all-reduce at 256 B, p = 4 (256 B messages) keeps α, the ring's (64 B)
// takes alpha_small, Rabenseifner's and the pipelines' packets by theirs; at 2 KiB none do.
TEST(Crossover, AlphaOfSmallMessagesByTheShareOfRounds) {
  const Algorithm* rd = find_algorithm(Collective::allreduce, "recursive_doubling");
  const Algorithm* ring = find_algorithm(Collective::allreduce, "ring");
  const Algorithm* rb = find_algorithm(Collective::allreduce, "reduce_bcast");
  const Algorithm* lin = find_algorithm(Collective::bcast, "linear_pipeline");
  for (const Algorithm* a : {rd, ring, rb, lin}) ASSERT_NE(a, nullptr);
  CostModel m{4e-5, 2.5e-10, 2.5e-11};
  CostModel sm = m;
  sm.small_below = 256;
  sm.alpha_small = 2e-5;
  ASSERT_TRUE(sm.has_small());
  EXPECT_EQ(segment_k(*rd, 256, 4, sm, sm, 0).m.alpha, 4e-5);
  EXPECT_EQ(segment_k(*ring, 256, 4, sm, sm, 0).m.alpha, 2e-5);
  EXPECT_EQ(segment_k(*ring, 2048, 4, sm, sm, 0).m.alpha, 4e-5);
  EXPECT_EQ(segment_k(*ring, 256, 4, m, m, 0).m.alpha, 4e-5);
  EXPECT_LT(algorithm_cost(*ring, 256, 4, LinkModel::uniform(sm)),
            algorithm_cost(*ring, 256, 4, LinkModel::uniform(m)));
  // With a break above: the small rounds leave the lower segment's α, the others stay mixed.
  CostModel up = sm;
  up.alpha = 8e-5;
  const double at = sim_break_shares(*rb, 4, 1024, 512, -1).alpha;
  const double small = 1 - sim_break_shares(*rb, 4, 1024, 256, -1).alpha;
  EXPECT_NEAR(segment_k(*rb, 1024, 4, sm, up, 512).m.alpha, 4e-5 + at * 4e-5 - small * 2e-5, 1e-15);
  // A pipeline by its packet: 64 B packets of 4 KiB take alpha_small.
  const PacketChoice piped = segment_k(*lin, 4096, 4, sm, sm, 0);
  EXPECT_EQ(piped.m.alpha, std::ceil(4096 / piped.k) < 256 ? 2e-5 : 4e-5);
  // The sender's o alike where o of small messages is measured (CostModel::overhead_small;
  // fiftieth session): the naive broadcast at 128 B (every send injected) takes it and costs
  // less by its root's p − 2 sends, at 512 B keeps o; Rabenseifner's at 512 B mixes it by the
  // share that mixes α, a pipeline's small packet takes it. Not measured: o; o not measured
  // (o = α): unmeasured still.
  const Algorithm* naive = find_algorithm(Collective::bcast, "naive");
  ASSERT_NE(naive, nullptr);
  CostModel so = sm;
  so.overhead = 3e-6;
  CostModel so_small = so;
  so_small.overhead_small = 1e-6;
  EXPECT_EQ(segment_k(*naive, 128, 4, so_small, so_small, 0).m.overhead, 1e-6);
  EXPECT_NEAR(algorithm_cost(*naive, 128, 4, LinkModel::uniform(so)) -
                  algorithm_cost(*naive, 128, 4, LinkModel::uniform(so_small)),
              2 * 2e-6, 1e-15);
  EXPECT_EQ(segment_k(*naive, 512, 4, so_small, so_small, 0).m.overhead, 3e-6);
  // Rabenseifner's at 512 B, p = 4: its 128 B rounds below, its 256 B ones not.
  const Algorithm* rab = find_algorithm(Collective::allreduce, "rabenseifner");
  ASSERT_NE(rab, nullptr);
  const double rab_rounds = 1 - sim_break_shares(*rab, 4, 512, 256, -1).alpha;
  ASSERT_GT(rab_rounds, 0);
  ASSERT_LT(rab_rounds, 1);
  EXPECT_NEAR(segment_k(*rab, 512, 4, so_small, so_small, 0).m.overhead, 3e-6 - rab_rounds * 2e-6,
              1e-18);
  const PacketChoice piped_o = segment_k(*lin, 128, 4, so_small, so_small, 0);
  ASSERT_LT(std::ceil(128 / std::max(1.0, piped_o.k)), 256);
  EXPECT_EQ(piped_o.m.overhead, 1e-6);
  EXPECT_EQ(segment_k(*naive, 128, 4, so, so, 0).m.overhead, 3e-6);
  so_small.overhead = -1;
  EXPECT_EQ(segment_k(*naive, 128, 4, so_small, so_small, 0).m.overhead, -1);
  // K alike where K of small messages is fitted (CostModel::call_wake_small): the naive
  // broadcast at 128 B costs K_s in place of K, at 512 B K; Rabenseifner's at 512 B mixes it
  // by the share that mixes α, and across a break (p = 8, 1 KiB: messages of 512, 256 and
  // 128 B, the break at 512 B) the upper segment's K by its share above and K_s by its share
  // below 256 B; a pipeline's small packet takes it; not fitted (-1): K.
  CostModel sk = sm;
  sk.call_wake = 4e-5;
  CostModel sk_small = sk;
  sk_small.call_wake_small = 1e-5;
  EXPECT_EQ(segment_k(*naive, 128, 4, sk_small, sk_small, 0).m.call_wake, 1e-5);
  EXPECT_NEAR(algorithm_cost(*naive, 128, 4, LinkModel::uniform(sk)) -
                  algorithm_cost(*naive, 128, 4, LinkModel::uniform(sk_small)),
              3e-5, 1e-15);
  EXPECT_EQ(segment_k(*naive, 512, 4, sk_small, sk_small, 0).m.call_wake, 4e-5);
  EXPECT_NEAR(segment_k(*rab, 512, 4, sk_small, sk_small, 0).m.call_wake, 4e-5 - rab_rounds * 3e-5,
              1e-18);
  CostModel up_k = sk_small;
  up_k.alpha = 8e-5;
  up_k.call_wake = 6e-5;
  const double above8 = sim_break_shares(*rab, 8, 1024, 512, -1).alpha;
  const double small8 = 1 - sim_break_shares(*rab, 8, 1024, 256, -1).alpha;
  ASSERT_GT(above8, 0);
  ASSERT_GT(small8, 0);
  ASSERT_LT(above8 + small8, 1);
  EXPECT_NEAR(segment_k(*rab, 1024, 8, sk_small, up_k, 512).m.call_wake,
              4e-5 + above8 * 2e-5 - small8 * 3e-5, 1e-15);
  const PacketChoice piped_k = segment_k(*lin, 128, 4, sk_small, sk_small, 0);
  ASSERT_LT(std::ceil(128 / std::max(1.0, piped_k.k)), 256);
  EXPECT_EQ(piped_k.m.call_wake, 1e-5);
  EXPECT_EQ(segment_k(*naive, 128, 4, sk, sk, 0).m.call_wake, 4e-5);
  // β below the break (fitted apart over the fabric) is not the small messages': their bytes
  // cost the upper segment's β. The ring's 64 B messages at 256 B all of them, reduce + bcast's
  // at 1 KiB (256 B messages) none, recursive doubling's at 1 KiB (messages of 1 KiB) none.
  CostModel steep = sm;
  steep.beta = 2e-8;
  CostModel flat = sm;
  flat.alpha = 8e-5;
  EXPECT_NEAR(segment_k(*ring, 256, 4, steep, flat, 1024).m.beta, 2.5e-10, 1e-20);
  EXPECT_EQ(segment_k(*rb, 512, 4, steep, flat, 1024).m.beta, 2e-8);
  EXPECT_EQ(segment_k(*rd, 1024, 4, steep, flat, 1024).m.beta, 2.5e-10);
  const double rab_small =
      1 - sim_break_shares(*find_algorithm(Collective::allreduce, "rabenseifner"), 4, 768, 256, -1)
              .beta;
  ASSERT_GT(rab_small, 0);
  ASSERT_LT(rab_small, 1);
  EXPECT_NEAR(
      segment_k(*find_algorithm(Collective::allreduce, "rabenseifner"), 768, 4, steep, flat, 1024)
          .m.beta,
      2e-8 - rab_small * (2e-8 - 2.5e-10), 1e-20);
}

// A hybrid's mix of α of small messages: both shares (its rounds' and its bytes') are those of
// one strategy. p = 4 over sockets, 256 B, a break at 384 B with β below it at 266 times β
// above: Theorem 1 under the lower segment takes recursive halving (64-128 B messages, all
// injected), under the injected α recursive doubling (256 B messages, none). Until the
// forty-ninth session the rounds' share was taken under the β the bytes' share had lowered:
// α below the break with β above it, 3.6 µs for an all-reduce measured at 65 µs (recursive
// doubling's prediction 68 µs).
TEST(Crossover, AlphaOfSmallMessagesMixesOneStrategysShares) {
  const Algorithm* hybrid = find_algorithm(Collective::allreduce, "hybrid");
  const Algorithm* rd = find_algorithm(Collective::allreduce, "recursive_doubling");
  ASSERT_NE(hybrid, nullptr);
  ASSERT_NE(rd, nullptr);
  CostModel below{7.98e-7, 3.61e-8, 4.66e-11};
  below.exchange_alpha = 2.1;
  below.exchange_beta = 3.5;
  below.small_below = 256;
  below.alpha_small = 1.05e-5;
  CostModel above = below;
  above.alpha = 3.16e-6;
  above.beta = 1.36e-10;
  above.exchange_alpha = 8;
  const PacketChoice c = segment_k(*hybrid, 256, 4, below, above, 384);
  const auto same = [](double x, double y) { return std::abs(x - y) <= 1e-9 * y; };
  const bool halving = same(c.m.alpha, below.alpha_small) && same(c.m.beta, above.beta);
  const bool doubling = same(c.m.alpha, below.alpha) && same(c.m.beta, below.beta);
  EXPECT_TRUE(halving || doubling) << "alpha " << c.m.alpha << " beta " << c.m.beta;
  const LinkModel link{below, above, 384};
  EXPECT_GT(algorithm_cost(*hybrid, 256, 4, link), 0.5 * algorithm_cost(*rd, 256, 4, link));
}

// The oversubscribed fit's break at shm's single-copy threshold: the share of a point's rounds
// whose messages reach it (on the sim) pay α_above (β shared). Times made so at p = 4, bcast,
// all-reduce and all-gather at the sizes fabcoll-calibrate times (with 96 KiB), give back α,
// α_above and β; with 2% noise within 10%. Fitted without the marks, one α cannot fit them as well;
// with no point marked, alpha_above is alpha.
TEST(Fit, CostPointsRecoverTheUpperAlpha) {
  CostModel truth{4e-6, 2e-10, 5e-11};
  const double threshold = 32768, alpha_above = 2.4e-5;
  std::vector<CostPoint> pts;
  int above = 0, mixed = 0;
  for (const Algorithm* alg : all_algorithms()) {
    if (alg->optimal_k != nullptr || !eligible(*alg, 4, true)) continue;
    if (alg->coll != Collective::bcast && alg->coll != Collective::allreduce &&
        alg->coll != Collective::allgather)
      continue;
    for (double n : {64.0, 2048.0, 32768.0, 98304.0, 393216.0}) {
      CostPoint pt;
      if (!linear_cost_terms(*alg, n, 4, truth, pt.a, pt.b, pt.c)) continue;
      pt.above = sim_break_shares(*alg, 4, n, threshold, -1).alpha;
      pt.t =
          pt.a * (truth.alpha * (1 - pt.above) + alpha_above * pt.above) + pt.b * truth.beta + pt.c;
      above += pt.above > 0 ? 1 : 0;
      mixed += pt.above > 0 && pt.above < 1 ? 1 : 0;
      pts.push_back(pt);
    }
  }
  ASSERT_GE(above, 6);
  ASSERT_GE(mixed, 2);  // Rabenseifner's n/2 and n/4, scatter + all-gather's blocks
  ASSERT_GE(pts.size() - above, 6u);
  const CostFit exact = fit_cost_points(pts);
  EXPECT_NEAR(exact.alpha / truth.alpha, 1.0, 1e-9);
  EXPECT_NEAR(exact.alpha_above / alpha_above, 1.0, 1e-9);
  EXPECT_NEAR(exact.beta / truth.beta, 1.0, 1e-9);
  std::vector<CostPoint> unmarked = pts;
  for (CostPoint& p : unmarked) p.above = 0;
  const CostFit one = fit_cost_points(unmarked);
  EXPECT_EQ(one.alpha_above, one.alpha);
  EXPECT_GT(one.sse, 1e-3);
  std::mt19937 rng(5);
  std::normal_distribution<double> noise(0.0, 0.02);
  for (CostPoint& p : pts) p.t *= 1 + noise(rng);
  const CostFit noisy = fit_cost_points(pts);
  EXPECT_NEAR(noisy.alpha / truth.alpha, 1.0, 0.1);
  EXPECT_NEAR(noisy.alpha_above / alpha_above, 1.0, 0.1);
  EXPECT_NEAR(noisy.beta / truth.beta, 1.0, 0.1);
  // Every point above: alpha (no point of its own) is alpha_above.
  for (CostPoint& p : pts) p.above = 1;
  const CostFit all_above = fit_cost_points(pts);
  EXPECT_EQ(all_above.alpha, all_above.alpha_above);
}

// choose_break (the fit to timed collectives over the fabric): of the same points fitted with
// their rounds above each candidate break, the break the times have is kept, by the
// information criterion; times with one α through all sizes keep none; a "break" whose α
// above comes out below α is never kept.
TEST(Fit, ChooseBreakKeepsTheBreakTheTimesHave) {
  const CostModel truth{4e-5, 2.5e-10, 2.5e-11};
  const std::vector<double> breaks{0, 2048, 32768};
  const auto fits_for = [&](double true_break, double alpha_above, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<double> noise(0.0, 0.05);
    std::vector<std::vector<CostPoint>> per(breaks.size());
    for (const Algorithm* alg : all_algorithms()) {
      if (alg->optimal_k != nullptr || !eligible(*alg, 4, true)) continue;
      if (alg->coll != Collective::bcast && alg->coll != Collective::allreduce &&
          alg->coll != Collective::allgather)
        continue;
      for (double n : {256.0, 2048.0, 32768.0, 393216.0}) {
        CostPoint pt;
        if (!linear_cost_terms(*alg, n, 4, truth, pt.a, pt.b, pt.c)) continue;
        const double up = true_break > 0 ? sim_break_shares(*alg, 4, n, true_break, -1).alpha : 0.0;
        pt.t = (pt.a * (truth.alpha * (1 - up) + alpha_above * up) + pt.b * truth.beta + pt.c) *
               (1 + noise(rng));
        for (std::size_t i = 0; i < breaks.size(); ++i) {
          per[i].push_back(pt);
          per[i].back().above =
              breaks[i] > 0 ? sim_break_shares(*alg, 4, n, breaks[i], -1).alpha : 0.0;
        }
      }
    }
    std::vector<WrittenFit> fits;
    for (const auto& pts : per) fits.push_back(fit_cost_points_written(pts));
    return fits;
  };
  for (unsigned seed = 1; seed <= 5; ++seed) {
    const std::vector<WrittenFit> at2k = fits_for(2048, 7e-5, seed);
    ASSERT_GE(at2k[0].fit.points, 20u);
    EXPECT_EQ(choose_break(at2k, breaks), 1u) << seed;
    EXPECT_NEAR(at2k[1].fit.alpha_above / 7e-5, 1.0, 0.15) << seed;
    EXPECT_EQ(choose_break(fits_for(32768, 7e-5, seed), breaks), 2u) << seed;
    EXPECT_EQ(choose_break(fits_for(0, 0, seed), breaks), 0u) << seed;
    // Per-message cost falling above 2 KiB: not a break this model keeps.
    EXPECT_EQ(choose_break(fits_for(2048, 1e-5, seed), breaks), 0u) << seed;
    // The ping-pong's step preferred: kept where it passes the same tests, whatever the
    // others' error; where it does not, the search as without it.
    ASSERT_LT(at2k[1].fit.sse, at2k[2].fit.sse) << seed;
    EXPECT_EQ(choose_break(at2k, breaks, 2), 2u) << seed;
    EXPECT_EQ(choose_break(at2k, breaks, 1), 1u) << seed;
    EXPECT_EQ(choose_break(fits_for(0, 0, seed), breaks, 1), 0u) << seed;
    EXPECT_EQ(choose_break(fits_for(2048, 1e-5, seed), breaks, 1), 0u) << seed;
    EXPECT_EQ(choose_break(at2k, breaks, 7), 1u) << seed;  // not an index of breaks
  }
}

// A break is tried only where two timed sizes lie below it: over the fabric's training sizes
// (256 B up) not at 384 B, at 512 B and above.
TEST(Fit, BreakNeedsTwoSizesBelowIt) {
  const std::vector<double> sizes{256, 384, 512, 768, 2048, 32768, 98304, 393216};
  EXPECT_FALSE(break_has_sizes_below(256, sizes));
  EXPECT_FALSE(break_has_sizes_below(384, sizes));
  EXPECT_TRUE(break_has_sizes_below(512, sizes));
  EXPECT_TRUE(break_has_sizes_below(1024, sizes));
  EXPECT_TRUE(break_has_sizes_below(32768, sizes));
  EXPECT_FALSE(break_has_sizes_below(32768, std::vector<double>{64, 65536}));
}

// ping_pong_step: the size where a ping-pong's medians step up, by a line with a step fitted
// at each split. A line of any β has none (from 256 B to 4 MiB); a step below `lowest` (an
// inject limit) or above `highest` is not looked for; the order of the medians does not matter.
TEST(Fit, PingPongStepFindsTheProtocolBreak) {
  const auto curve = [](double beta, double step_at, double step_by, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<double> noise(0.0, 0.03);
    std::vector<Point> pts;
    for (double n = 8; n <= double(4 << 20); n *= 2) {
      double t = 2e-5 + beta * n;
      if (n >= 256) t += 2e-5;  // the inject limit
      if (step_at > 0 && n >= step_at) t += (step_by - 1) * (4e-5 + beta * step_at);
      pts.push_back({n, t * (1 + noise(rng))});
    }
    return pts;
  };
  const double top = 393216;
  for (unsigned seed = 1; seed <= 20; ++seed) {
    const PingPongStep at1k = ping_pong_step(curve(2e-10, 1024, 1.4, seed), 256, top);
    EXPECT_EQ(at1k.n, 1024) << seed;
    EXPECT_NEAR(at1k.ratio, 1.4, 0.1) << seed;
    std::vector<Point> reversed = curve(2e-10, 1024, 1.4, seed);
    std::reverse(reversed.begin(), reversed.end());
    EXPECT_EQ(ping_pong_step(reversed, 256, top).n, at1k.n) << seed;
    for (const double beta : {2e-10, 1e-8})
      EXPECT_EQ(ping_pong_step(curve(beta, 0, 1, seed), 256, double(4 << 20)).n, 0) << seed;
    // The inject step lies at `lowest` (256), not above it; from 128 it is the step.
    EXPECT_EQ(ping_pong_step(curve(2e-10, 0, 1, seed), 128, top).n, 256) << seed;
    EXPECT_EQ(ping_pong_step(curve(2e-10, 131072, 1.5, seed), 256, 65536).n, 0) << seed;
    EXPECT_EQ(ping_pong_step(curve(2e-10, 65536, 1.5, seed), 256, top).n, 65536) << seed;
    EXPECT_EQ(ping_pong_step(curve(2e-10, 131072, 1.5, seed), 256, top).n, 0)
        << seed;  // 2 sizes from it
  }
  EXPECT_EQ(ping_pong_step(std::vector<Point>{{512, 1e-5}, {1024, 9e-5}, {2048, 9e-5}}, 0, 1e9).n,
            0);  // too few sizes
}

// α, β come back exactly from the formulas' times at p = 8 under `truth`, whose o and G terms
// linear_cost_terms counts as known.
void expect_fit_recovers(const CostModel& truth) {
  std::vector<std::string> nonlinear;
  const std::vector<CostPoint> pts = formula_points(truth, 8, nonlinear);
  ASSERT_GE(pts.size(), 8u);
  const LinearFit exact = fit_cost_points(pts);
  EXPECT_NEAR(exact.alpha / truth.alpha, 1.0, 1e-9);
  EXPECT_NEAR(exact.beta / truth.beta, 1.0, 1e-9);
}

// With a measured sender overhead o the o terms are known, like the γ term: they go into c,
// and α, β come back from times that carry them. Unmeasured (o = α) they count as α rounds.
TEST(Fit, CostPointsWithMeasuredOverhead) {
  CostModel truth{8e-6, 3e-10, 5e-11};
  truth.overhead = 1e-6;
  const Algorithm* naive = find_algorithm(Collective::bcast, "naive");
  ASSERT_NE(naive, nullptr);
  double a = 0, b = 0, c = 0;
  ASSERT_TRUE(linear_cost_terms(*naive, 64, 8, truth, a, b, c));
  EXPECT_DOUBLE_EQ(a, 1);       // α + βn + (p − 2)(o + βn): one α
  EXPECT_DOUBLE_EQ(b, 7 * 64);  // (p − 1) n
  EXPECT_DOUBLE_EQ(c, 6 * 1e-6);
  double o_terms = -1;
  ASSERT_TRUE(linear_cost_terms(*naive, 64, 8, truth, a, b, c, &o_terms));
  EXPECT_DOUBLE_EQ(o_terms, 6);  // (p − 2) o, held in c
  CostModel texts = truth;
  texts.overhead = -1;
  ASSERT_TRUE(linear_cost_terms(*naive, 64, 8, texts, a, b, c, &o_terms));
  EXPECT_DOUBLE_EQ(a, 7);  // (p − 1)(α + βn)
  EXPECT_DOUBLE_EQ(c, 0);
  EXPECT_DOUBLE_EQ(o_terms, 0);  // every o an α
  // The naive reduce's folding rank charges o_r, not o: (p − 2) o_r, held in c at o_r (o where
  // o_r is not measured).
  const Algorithm* fold = find_algorithm(Collective::reduce, "naive");
  ASSERT_NE(fold, nullptr);
  double o_recv_terms = -1;
  ASSERT_TRUE(linear_cost_terms(*fold, 64, 8, truth, a, b, c, &o_terms, &o_recv_terms));
  EXPECT_DOUBLE_EQ(o_terms, 0);
  EXPECT_DOUBLE_EQ(o_recv_terms, 6);
  EXPECT_DOUBLE_EQ(c, 6 * 1e-6 + 7 * 64 * 5e-11);  // o_r = o, and γ's (p − 1) n
  CostModel apart = truth;
  apart.receive_overhead = 3e-6;
  ASSERT_TRUE(linear_cost_terms(*fold, 64, 8, apart, a, b, c, &o_terms, &o_recv_terms));
  EXPECT_DOUBLE_EQ(c, 6 * 3e-6 + 7 * 64 * 5e-11);
  ASSERT_TRUE(linear_cost_terms(*naive, 64, 8, apart, a, b, c, &o_terms, &o_recv_terms));
  EXPECT_DOUBLE_EQ(o_terms, 6);
  EXPECT_DOUBLE_EQ(o_recv_terms, 0);
  EXPECT_DOUBLE_EQ(c, 6 * 1e-6);

  expect_fit_recovers(truth);
}

// o refitted to the points whose formulas charge it (fabcoll-calibrate over the fabric: the
// burst's o is an injected 8-byte send's, the naive broadcast's root sends more). Costed with
// the burst's o, timed with another: the rest of the model held, that o comes back from the
// points with o terms, whatever the others' residuals.
TEST(Fit, OverheadRefitToThePointsThatChargeIt) {
  CostModel truth{8e-6, 3e-10, 5e-11};
  truth.overhead = 5e-6;
  truth.receive_overhead = 2e-6;
  CostModel burst = truth;
  burst.overhead = 1e-6;
  burst.receive_overhead = -1;  // o_r = o
  std::vector<CostPoint> pts;
  std::vector<double> residuals;
  int with_o = 0, with_o_recv = 0;
  for (const Algorithm* alg : all_algorithms()) {
    if (alg->optimal_k != nullptr || !eligible(*alg, 8, true)) continue;
    if (alg->coll != Collective::bcast && alg->coll != Collective::reduce) continue;
    for (double n : {256.0, 2048.0, 32768.0}) {
      CostPoint pt;
      if (!linear_cost_terms(*alg, n, 8, burst, pt.a, pt.b, pt.c, &pt.o, &pt.o_recv)) continue;
      CostQuery q;
      q.n = n;
      q.p = 8;
      q.k = 1;
      q.m = truth;
      pt.t = alg->cost(q);
      // The held model's residual; points without o terms get a large one of their own.
      const double model = pt.a * truth.alpha + pt.b * truth.beta + pt.c;
      residuals.push_back(pt.o > 0 || pt.o_recv > 0 ? pt.t - model : 0.3 * pt.t);
      with_o += pt.o > 0 ? 1 : 0;
      with_o_recv += pt.o_recv > 0 ? 1 : 0;
      pts.push_back(pt);
    }
  }
  ASSERT_GE(with_o, 3);       // the naive broadcast's root sends
  ASSERT_GE(with_o_recv, 3);  // the naive reduce's folding rank receives
  EXPECT_NEAR(refit_overhead(pts, residuals, burst.overhead), truth.overhead, 1e-12);
  // o_r from the naive reduce's points, held at the burst's o too.
  EXPECT_NEAR(refit_overhead(pts, residuals, burst.overhead, true), truth.receive_overhead, 1e-12);
  // Timed below what o = 0 predicts: 0, never negative.
  for (std::size_t i = 0; i < pts.size(); ++i)
    if (pts[i].o > 0) residuals[i] = -pts[i].o * burst.overhead - 1e-6;
  EXPECT_EQ(refit_overhead(pts, residuals, burst.overhead), 0.0);
  // No point with o terms: not fitted.
  for (CostPoint& pt : pts) pt.o = 0;
  EXPECT_EQ(refit_overhead(pts, residuals, burst.overhead), -1.0);
  for (CostPoint& pt : pts) pt.o_recv = 0;
  EXPECT_EQ(refit_overhead(pts, residuals, burst.overhead, true), -1.0);
}

// A measured sender time per byte G (LogGP's G) is known like o: its terms go into c and b
// keeps the βn of the one message on the critical path. Unmeasured (G = β) they count in b.
TEST(Fit, CostPointsWithMeasuredGap) {
  CostModel truth{8e-6, 3e-10, 5e-11};
  truth.overhead = 1e-6;
  truth.gap = 1e-10;
  const Algorithm* naive = find_algorithm(Collective::bcast, "naive");
  ASSERT_NE(naive, nullptr);
  double a = 0, b = 0, c = 0;
  ASSERT_TRUE(linear_cost_terms(*naive, 64, 8, truth, a, b, c));
  EXPECT_DOUBLE_EQ(a, 1);   // α + βn + (p − 2)(o + Gn)
  EXPECT_DOUBLE_EQ(b, 64);  // one n at β
  EXPECT_DOUBLE_EQ(c, 6 * (1e-6 + 64 * 1e-10));
  CostModel unmeasured = truth;
  unmeasured.gap = -1;
  ASSERT_TRUE(linear_cost_terms(*naive, 64, 8, unmeasured, a, b, c));
  EXPECT_DOUBLE_EQ(b, 7 * 64);  // (p − 1) n
  EXPECT_DOUBLE_EQ(c, 6 * 1e-6);
  // Pulled messages (n >= pull_bytes) cost the root o alone, G or not: the unit models keep
  // the link's pull threshold.
  CostModel pulled = truth;
  pulled.pull_bytes = 64;
  ASSERT_TRUE(linear_cost_terms(*naive, 64, 8, pulled, a, b, c));
  EXPECT_DOUBLE_EQ(a, 1);
  EXPECT_DOUBLE_EQ(b, 64);
  EXPECT_DOUBLE_EQ(c, 6 * 1e-6);

  expect_fit_recovers(truth);
}

// G is kept only below the model's break (gap_kept), and calibrate's fit to timed collectives
// costs its points with the G that the model fitted under each break keeps. Held at a measured
// G under a break that drops it, the naive broadcast root's p − 2 further sends put (p − 2)Gn into
// the points' c, which the fit cannot take back (p = 4 sockets, ten launches of 121: G held at
// 5.1e-10–1.3e-9 s/B, the break kept at 1 KiB, seven of them missed a target). Synthetic times
// from a model without G (as the one fitted with a break at 1 KiB is) come back exactly from
// points costed that way, and not from points holding a measured G.
TEST(Fit, PointsCostedWithTheGapTheModelKeeps) {
  EXPECT_TRUE(gap_kept(0, 8192));      // no break: G measured below it
  EXPECT_FALSE(gap_kept(1024, 8192));  // the sockets provider's step at 1 KiB
  EXPECT_FALSE(gap_kept(8192, 8192));  // G's messages at the break: the other segment
  EXPECT_TRUE(gap_kept(16384, 8192));
  CostModel truth{2.5e-5, 5e-10, 2e-11};
  truth.overhead = 5e-6;
  truth.gap = -1;
  CostModel held = truth;
  held.gap = 1.3e-9;  // the burst's G, as the ten launches held it
  std::vector<CostPoint> costed, holding;
  for (const Algorithm* alg : all_algorithms()) {
    if (alg->optimal_k != nullptr || !eligible(*alg, 4, true)) continue;
    if (alg->coll != Collective::bcast && alg->coll != Collective::allreduce) continue;
    for (double n : {2048.0, 32768.0, 98304.0, 393216.0}) {
      double a = 0, b = 0, c = 0, ha = 0, hb = 0, hc = 0;
      if (!linear_cost_terms(*alg, n, 4, truth, a, b, c)) continue;
      ASSERT_TRUE(linear_cost_terms(*alg, n, 4, held, ha, hb, hc));
      const double t = a * truth.alpha + b * truth.beta + c;
      costed.push_back({a, b, c, t});
      holding.push_back({ha, hb, hc, t});
    }
  }
  ASSERT_GE(costed.size(), 12u);
  const CostFit right = fit_cost_points(costed);
  EXPECT_NEAR(right.alpha / truth.alpha, 1.0, 1e-6);
  EXPECT_NEAR(right.beta / truth.beta, 1.0, 1e-6);
  EXPECT_NEAR(right.r2, 1.0, 1e-9);
  // Held at G, the naive broadcast's c alone exceeds its time at 384 KiB, and the fit is off.
  const Algorithm* naive = find_algorithm(Collective::bcast, "naive");
  ASSERT_NE(naive, nullptr);
  double a = 0, b = 0, c = 0, ta = 0, tb = 0, tc = 0;
  ASSERT_TRUE(linear_cost_terms(*naive, 393216, 4, held, a, b, c));
  ASSERT_TRUE(linear_cost_terms(*naive, 393216, 4, truth, ta, tb, tc));
  EXPECT_GT(c, ta * truth.alpha + tb * truth.beta + tc);
  const CostFit wrong = fit_cost_points(holding);
  EXPECT_LT(wrong.r2, 0.9);                                // 0.80
  EXPECT_GT(std::abs(wrong.beta / truth.beta - 1), 0.05);  // 11% under
}

TEST(Fit, MedianAbs) {
  EXPECT_EQ(median_abs(std::vector<double>{}), 0);
  EXPECT_EQ(median_abs(std::vector<double>{-3, 1, 2}), 2);
  EXPECT_EQ(median_abs(std::vector<double>{-4, 1, 2, 3}), 2.5);
}

// The regret's interval resamples whole rounds. Synthetic validation: every round scales all
// candidates alike by a large factor (load that comes and goes, σ = 0.5 in the log), each
// candidate adds 3% of its own; A and B take the same time, C 20% more. Paired, C's regret
// is resolved from the 10% target (0.15–0.26 in a Python model of this test; an unpaired
// bootstrap, one draw of rounds per candidate, gave 0.01–0.49); A's (a tie with B) stays
// within it.
TEST(Fit, RegretIntervalPairsTheRounds) {
  std::mt19937 rng(7);
  std::normal_distribution<double> round_effect(0, 0.5), own(0, 0.03);
  const std::size_t rounds = 101;
  std::vector<std::vector<double>> t(3, std::vector<double>(rounds));
  for (std::size_t i = 0; i < rounds; ++i) {
    const double r = std::exp(round_effect(rng));
    t[0][i] = 100e-6 * r * std::exp(own(rng));
    t[1][i] = 100e-6 * r * std::exp(own(rng));
    t[2][i] = 120e-6 * r * std::exp(own(rng));
  }
  const RegretInterval c = regret_interval(t, 2);
  EXPECT_NEAR(c.regret, 0.20, 0.03);
  EXPECT_LE(c.lo, c.regret);
  EXPECT_GE(c.hi, c.regret);
  EXPECT_GT(c.lo, 0.12);
  EXPECT_LT(c.hi, 0.32);
  const RegretInterval a = regret_interval(t, 0);
  EXPECT_GE(a.lo, 0);  // the chosen is never faster than the fastest
  EXPECT_LT(a.hi, 0.05);
  // The same seed gives the same interval; another seed a close one.
  const RegretInterval again = regret_interval(t, 2);
  EXPECT_EQ(again.lo, c.lo);
  EXPECT_EQ(again.hi, c.hi);
  const RegretInterval other = regret_interval(t, 2, 0.9, 2000, 99);
  EXPECT_NEAR(other.lo, c.lo, 0.01);
  // Nothing to resample: all zero.
  EXPECT_EQ(regret_interval(t, 3).hi, 0);
  t[1].pop_back();
  EXPECT_EQ(regret_interval(t, 2).hi, 0);
  EXPECT_EQ(regret_interval({}, 0).regret, 0);
}

// The ping-pong's drift has a median per regime: large messages that slowed down alone (as
// on this VM) move it, where one median over 8 B … 4 MiB (13 of 20 sizes below 64 KiB) stays at 1.
TEST(Fit, PingPongDriftPerRegime) {
  std::vector<Point> before, large_slow, small_fast;
  for (double n = 8; n <= double(4 << 20); n *= 2) {
    const double t = 1e-6 + n * 2e-10;
    before.push_back({n, t});
    large_slow.push_back({n, n >= 65536 ? 2.5 * t : t});
    small_fast.push_back({n, n < 65536 ? 0.7 * t : 1.02 * t});
  }
  std::vector<double> all;
  for (std::size_t i = 0; i < before.size(); ++i) all.push_back(large_slow[i].t / before[i].t);
  EXPECT_NEAR(median_abs(all), 1.0, 1e-12);  // one median over all sizes: no drift seen

  const Drift d = pingpong_drift(before, large_slow, 65536);
  EXPECT_NEAR(d.small, 1.0, 1e-12);
  EXPECT_NEAR(d.large, 2.5, 1e-12);
  EXPECT_NEAR(d.drift, 2.5, 1e-12);

  const Drift f = pingpong_drift(before, small_fast, 65536);
  EXPECT_NEAR(f.small, 0.7, 1e-12);
  EXPECT_NEAR(f.large, 1.02, 1e-12);
  EXPECT_NEAR(f.drift, 0.7, 1e-12);  // further from 1 as a ratio than 1.02

  // Only small sizes (a run that stops below 64 KiB): the large median stays 1.
  const std::vector<Point> few(before.begin(), before.begin() + 3);
  std::vector<Point> few_again = few;
  for (Point& q : few_again) q.t *= 1.3;
  const Drift g = pingpong_drift(few, few_again, 65536);
  EXPECT_NEAR(g.small, 1.3, 1e-12);
  EXPECT_EQ(g.large, 1.0);
  EXPECT_NEAR(g.drift, 1.3, 1e-12);
}

// ---- crossovers ---------------------------------------------------------------------------

const std::vector<Collective> kColls = {Collective::bcast,     Collective::reduce,
                                        Collective::allreduce, Collective::allgather,
                                        Collective::alltoall,  Collective::reduce_scatter_block,
                                        Collective::scan,      Collective::gather};

const std::vector<CostModel> kModels = {
    CostModel{},                    // built-in defaults
    CostModel{1e-6, 1e-10, 5e-11},  // shm-like: small α
    CostModel{5e-5, 1e-9, 1e-10},   // slow network: large α
    CostModel{2e-6, 4e-10, 0},      // no combine cost
};

TEST(Crossover, TableCoversRangeAndAlternates) {
  for (Collective c : kColls) {
    for (int p : {2, 3, 4, 7, 8, 13, 16}) {
      const auto t = crossover_table(c, p, CostModel{}, {.n_min = 1, .n_max = 1 << 24});
      ASSERT_FALSE(t.empty());
      EXPECT_EQ(t.front().lo, 1);
      EXPECT_EQ(t.back().hi, 1 << 24);
      for (std::size_t i = 0; i < t.size(); ++i) {
        EXPECT_LT(t[i].lo, t[i].hi);
        if (i > 0) {
          EXPECT_EQ(t[i].lo, t[i - 1].hi);
          EXPECT_NE(t[i].algorithm, t[i - 1].algorithm);
        }
      }
    }
  }
}

TEST(Crossover, MatchesBruteForceOnFineGrid) {
  // The table against the argmin over a grid 16 times finer than its own scan (1024 per
  // octave) and every byte around each boundary. Exact below exhaustive_below (every size is
  // evaluated there). Above, the selector's rounded k makes a pipelined algorithm's cost a
  // saw-tooth, so near a crossover two algorithms can trade places for a few bytes at a time
  // (bcast, p = 3: linear_pipeline and scatter_allgather alternate over 120-245 KB); a flip
  // narrower than the scan step can be missed. There the table's pick must still be within
  // 1% of the best predicted time, and such misses (ties up to rounding aside) must be rare.
  for (Collective c : kColls) {
    for (int p : {2, 3, 4, 5, 8, 12, 16}) {
      for (const CostModel& m : kModels) {
        const CrossoverOptions opts{.n_min = 1, .n_max = 1 << 22};
        const auto t = crossover_table(c, p, m, opts);
        int checked = 0, missed = 0;
        const auto check = [&](double n) {
          const Algorithm* best = fastest(c, n, p, m, true);
          const Algorithm* pick = table_lookup(t, n);
          ASSERT_NE(pick, nullptr);
          ++checked;
          if (pick == best) return;
          // Equal costs up to rounding (e.g. two formulas that coincide at p = 2) are ties.
          const double excess = algorithm_cost(*pick, n, p, m) / algorithm_cost(*best, n, p, m);
          if (excess <= 1 + 1e-9) return;
          ++missed;
          ASSERT_GE(n, opts.exhaustive_below)
              << collective_name(c) << " p=" << p << " n=" << n << " " << format_table(t);
          EXPECT_LE(algorithm_cost(*pick, n, p, m), 1.01 * algorithm_cost(*best, n, p, m))
              << collective_name(c) << " p=" << p << " n=" << n << " " << format_table(t);
        };
        for (double n : log_sizes(1, (1 << 22) - 1, 1024)) check(n);
        for (const CrossoverSegment& s : t)
          for (double n = std::max(1.0, s.lo - 3); n < s.lo + 3 && n < opts.n_max; n += 1) check(n);
        EXPECT_GT(checked, 1000);
        EXPECT_LT(missed, checked / 50) << collective_name(c) << " p=" << p;
      }
    }
  }
}

TEST(Crossover, AgreesWithRunTimeSelector) {
  // The table's winner is what select_algorithm picks on a communicator with that model.
  for (int p : {2, 4, 6, 8}) {
    for (const CostModel& m : kModels) {
      sim::World world(p, m);
      const Comm& comm = world.comm(0);
      for (Collective c :
           {Collective::bcast, Collective::allreduce, Collective::reduce, Collective::allgather}) {
        const auto t = crossover_table(c, p, m, {.n_min = 1, .n_max = 1 << 22});
        for (double n : log_sizes(1, (1 << 22) - 1, 8)) {
          CollArgs args;
          args.coll = c;
          args.elem_size = 1;
          args.count = static_cast<std::size_t>(n);
          args.op = ReduceOp(FC_SUM, FC_UINT8);
          const Algorithm& sel = select_algorithm(comm, args);
          if (&sel != table_lookup(t, n)) {  // only a tie up to rounding may differ
            EXPECT_NEAR(
                predicted_cost(comm, sel, args) / predicted_cost(comm, *table_lookup(t, n), args),
                1.0, kTieTolerance)
                << collective_name(c) << " p=" << p << " n=" << n;
          }
          EXPECT_NEAR(predicted_cost(comm, *table_lookup(t, n), args),
                      algorithm_cost(*table_lookup(t, n), n, p, m), 1e-15);
        }
      }
    }
  }
}

TEST(Crossover, NonCommutativeExcludesCommutativeOnly) {
  for (int p : {3, 4, 8}) {
    const auto t = crossover_table(Collective::allreduce, p, CostModel{},
                                   {.commutative = false, .n_min = 1, .n_max = 1 << 22});
    for (const CrossoverSegment& s : t) EXPECT_FALSE(s.algorithm->needs_commutative);
  }
}

// ---- tuning file ----------------------------------------------------------------------------

TuningFile sample() {
  TuningFile f;
  f.created = "2026-11-21T00:00:00Z";
  f.machine = this_machine("sockets");
  LinkParams shm;
  shm.link_class = "shm";
  shm.model = {1.5e-6, 1e-10, 6e-11};
  shm.r2 = 0.99;
  shm.points = 40;
  LinkParams ofi;
  ofi.link_class = "ofi/sockets";
  ofi.model = {2e-5, 8e-10, 6e-11};
  ofi.break_bytes = 65536;
  ofi.alpha_above = 6e-5;
  ofi.beta_above = 5e-10;
  f.links = {shm, ofi};
  f.gammas = {{"sum", "float64", 7e-11}, {"max", "int32", 5e-11}};
  f.k_rules = {{"bcast", "pipelined_binary_tree", 4, "shm", {{65536, 4}, {1 << 20, 16}}}};
  f.crossovers = {
      {"bcast", 4, "shm", {{"binomial", 1, 8192}, {"scatter_allgather", 8192, 1 << 30}}}};
  f.validation_json = R"({"median_rel_error":0.1})";
  return f;
}

// Issue 6: a pipelined algorithm's packets are messages of their own, costed with the model of
// the segment that holds their size. The fit of a calibration that ran for minutes (ofi/sockets,
// loaded machine): below the 1 MiB break α = 2.05 ms; above it α came out at the fit's 1e-9
// floor. Costed with the model of n's segment, two_tree at 1 MiB took k ≈ 1900 packets of
// ~550 B (12 s per call there); those packets lie below the break, where α is 2 ms: one packet.
TEST(Crossover, SegmentKCostsPacketsWithTheirOwnSegment) {
  const Algorithm* tt = find_algorithm(Collective::allreduce, "two_tree");
  ASSERT_NE(tt, nullptr);
  const CostModel below{2.04625e-3, 2.14115e-10, 2.29012e-11};
  const CostModel above{1e-9, 2.2006e-9, 2.29012e-11};
  const double brk = 1048576;
  const double n = 1048576;
  EXPECT_GT(selector_k(*tt, n, 4, above), 1000);  // what the validation forced before
  const PacketChoice c = segment_k(*tt, n, 4, below, above, brk);
  EXPECT_EQ(c.k, 1);
  EXPECT_EQ(c.m.alpha, above.alpha);  // one packet of 1 MiB: above the break
  // Brute force: no packet count does better (1%: the selectors round a formula's k*) with its
  // packets' own segment.
  const auto cost_at = [&](const Algorithm& a, double bytes, int p, const CostModel& lo,
                           const CostModel& hi, double b, double k) {
    CostQuery q;
    q.n = bytes;
    q.p = p;
    q.k = k;
    // As the engine runs it: below the break only where its whole-element packets are, for
    // every element (segment_k, kWidestElement).
    q.m = bytes / k + kWidestElement <= b ? lo : hi;
    return a.cost(q);
  };
  const auto best_cost = [&](const Algorithm& a, double bytes, int p, const CostModel& lo,
                             const CostModel& hi, double b) {
    double best = std::numeric_limits<double>::infinity();
    for (double k = 1; k <= std::min(bytes / 8, 16384.0); ++k)
      best = std::min(best, cost_at(a, bytes, p, lo, hi, b, k));
    return best;
  };
  // Packets above the break keep the model above (large messages, costly starts above).
  const CostModel quiet{1e-6, 7e-10, 5e-11};
  const CostModel big_above{1e-4, 1e-10, 5e-11};
  const double n2 = 16.0 * 1048576;
  const double brk2 = 65536;
  const PacketChoice c2 = segment_k(*tt, n2, 4, quiet, big_above, brk2);
  EXPECT_GT(c2.k, 1);
  EXPECT_GE(std::ceil(n2 / c2.k), brk2);
  EXPECT_EQ(c2.k, selector_k(*tt, n2, 4, big_above));
  for (const int p : {2, 3, 4, 7, 16}) {
    for (const auto& [bytes, b, lo, hi] :
         {std::tuple{n, brk, below, above}, std::tuple{n2, brk2, quiet, big_above},
          std::tuple{n2, brk2, big_above, quiet}, std::tuple{n, 32768.0, quiet, above}}) {
      for (const Algorithm* a : all_algorithms()) {
        if (a->optimal_k == nullptr) continue;
        const PacketChoice got = segment_k(*a, bytes, p, lo, hi, b);
        EXPECT_EQ(got.m.alpha, std::ceil(bytes / got.k) >= b ? hi.alpha : lo.alpha);
        EXPECT_LE(cost_at(*a, bytes, p, lo, hi, b, got.k),
                  best_cost(*a, bytes, p, lo, hi, b) * 1.01)
            << a->name << " p = " << p << " n = " << bytes << " k = " << got.k;
      }
    }
  }
  // Below the break, or without one: the selector's k under the model below.
  for (const double m : {256.0, 262144.0}) {
    EXPECT_EQ(segment_k(*tt, m, 2, quiet, above, brk).k, selector_k(*tt, m, 2, quiet));
    EXPECT_EQ(segment_k(*tt, m, 2, quiet, above, 0).k, selector_k(*tt, m, 2, quiet));
  }
}

// A pipeline's packets that segment_k costs below the break stay below it as the engine cuts
// them, whole elements of up to 16 B (the largest ⌈count/k⌉ of them): at 262136 B and a break
// of 32768 B, 8 packets of 32767 B are 4096 doubles of 32768 B each, which shm sends
// single-copy (three p = 4 launches: 158–180 µs against 73–77 predicted). Around every
// multiple of the break, for every element size that divides n.
TEST(Crossover, SegmentKKeepsPacketsBelowTheBreakInWholeElements) {
  const Algorithm* lin = find_algorithm(Collective::bcast, "linear_pipeline");
  ASSERT_NE(lin, nullptr);
  const CostModel below{2e-6, 1.6e-10, 5e-11};  // small packets cheap: the pipeline wants many
  const CostModel above{6.3e-6, 1.6e-10, 5e-11};
  const double brk = 32768;
  const PacketChoice at = segment_k(*lin, 262136, 4, below, above, brk);
  EXPECT_FALSE(at.above);
  EXPECT_NE(at.k, 8);
  int below_checked = 0;
  for (const double m : {2.0, 4.0, 8.0, 9.0, 16.0})
    for (double n = m * brk - 64; n <= m * brk + 64; n += 8) {
      const PacketChoice c = segment_k(*lin, n, 4, below, above, brk);
      if (c.above) continue;
      for (const double e : {1.0, 2.0, 4.0, 8.0, 16.0}) {
        if (std::fmod(n, e) != 0) continue;
        const double largest = std::ceil(n / e / c.k) * e;
        EXPECT_LT(largest, brk) << "n = " << n << " k = " << c.k << " element " << e;
      }
      ++below_checked;
    }
  EXPECT_GT(below_checked, 40);
}

// Issue 6: whole messages are costed with the segment that holds them, not n's. The fit of a
// p = 2 shm calibration (this machine, --quick): the break at the CMA threshold, 32 KiB, α 0.26
// µs below and 6.5 µs above. At n = 44352 B, recursive doubling sends one message of n (above),
// Rabenseifner's two of n/2 (below): costed with the model of n's segment Rabenseifner came out
// at 18.6 µs against recursive doubling's 12.6, and was measured at 11.0 µs against 16.0.
TEST(Crossover, WholeMessagesAreCostedWithTheSegmentThatHoldsThem) {
  const CostModel below{2.56e-7, 1.776e-10, 2.31e-11, 1.52e-7};
  const CostModel above{6.51e-6, 1.134e-10, 2.31e-11, 1.52e-7};
  const double brk = 32768;
  const LinkModel link{below, above, brk};
  const Algorithm* rab = find_algorithm(Collective::allreduce, "rabenseifner");
  const Algorithm* rd = find_algorithm(Collective::allreduce, "recursive_doubling");
  const Algorithm* ring = find_algorithm(Collective::allreduce, "ring");
  const Algorithm* hyper = find_algorithm(Collective::alltoall, "hypercube");
  const Algorithm* naive = find_algorithm(Collective::bcast, "naive");
  const Algorithm* binomial = find_algorithm(Collective::bcast, "binomial");
  for (const Algorithm* a : {rab, rd, ring, hyper, naive, binomial}) ASSERT_NE(a, nullptr);
  const double n = 44352;
  EXPECT_NEAR(mean_message_bytes(*rab, n, 2, below), n / 2, 1e-3 * n);
  EXPECT_NEAR(mean_message_bytes(*rab, n, 2, above), n / 2, 1e-3 * n);
  EXPECT_NEAR(mean_message_bytes(*ring, n, 4, below), n / 4, 1e-3 * n);
  EXPECT_NEAR(mean_message_bytes(*rd, n, 4, above), n, 1e-3 * n);
  EXPECT_NEAR(mean_message_bytes(*binomial, n, 8, above), n, 1e-3 * n);
  EXPECT_NEAR(mean_message_bytes(*hyper, n, 8, below), 4 * n, 4e-3 * n);  // blocks of n, p/2 each
  EXPECT_EQ(mean_message_bytes(*naive, n, 8, below), n);                  // its own, not (p - 1)n
  CostQuery q;
  q.n = n;
  q.p = 2;
  q.m = below;
  EXPECT_EQ(algorithm_cost(*rab, n, 2, link), rab->cost(q));
  q.m = above;
  EXPECT_EQ(algorithm_cost(*rd, n, 2, link), rd->cost(q));
  EXPECT_LT(algorithm_cost(*rab, n, 2, link), algorithm_cost(*rd, n, 2, link));
  const auto t = crossover_table(Collective::allreduce, 2, link, {.n_min = 1, .n_max = 1 << 24});
  EXPECT_NE(table_lookup(t, n), rd);
  // The hypercube's messages of p/2 blocks of 16 KiB lie above the break though n does not.
  q.n = 16384;
  q.p = 8;
  q.m = above;
  EXPECT_EQ(algorithm_cost(*hyper, 16384, 8, link), hyper->cost(q));
  // Below the break everything stays below for a broadcast (no message exceeds n).
  q.n = 1024;
  q.m = below;
  EXPECT_EQ(algorithm_cost(*binomial, 1024, 8, link), binomial->cost(q));
}

// A whole-message algorithm whose messages lie on both sides of the break: α and β mixed by
// the shares of its critical path above it, counted on the sim. Rabenseifner's all-reduce at
// p = 4 sends n/2, n/4, n/4, n/2: from n = 2 breaks to 4 breaks half its rounds and two thirds
// of its bytes are above; recursive doubling's n all above or all below. (The whole-message
// rule, by the mean message 3n/8, charged it the lower α at 64 KiB, where a p = 4 shm
// validation measured it 34% over its prediction.)
// β beyond the cache in the selector (segment_k): the binomial broadcast's whole 1 MiB
// messages cost beta_large, Rabenseifner's all-reduce (n/2 and n/4 at p = 4, 512 KiB at or
// beyond 512 KiB) β mixed by the sim's share of its bytes, the same n below large_from and a
// model without it as before; a pipeline's packets below it keep β, and packets that would
// reach it are cut smaller or cost beta_large, whichever is cheaper.
TEST(Crossover, BetaBeyondTheCacheByTheShareOfBytes) {
  const Algorithm* bin = find_algorithm(Collective::bcast, "binomial");
  const Algorithm* rab = find_algorithm(Collective::allreduce, "rabenseifner");
  const Algorithm* lin = find_algorithm(Collective::bcast, "linear_pipeline");
  for (const Algorithm* a : {bin, rab, lin}) ASSERT_NE(a, nullptr);
  CostModel m{3e-6, 1.2e-10, 2.5e-11, 2e-7};
  CostModel big = m;
  big.large_from = 524288;
  big.beta_large = 1.8e-10;
  ASSERT_TRUE(big.has_large());
  EXPECT_EQ(segment_k(*bin, 1048576, 4, big, big, 0).m.beta, 1.8e-10);
  EXPECT_EQ(segment_k(*bin, 393216, 4, big, big, 0).m.beta, 1.2e-10);
  EXPECT_EQ(segment_k(*bin, 1048576, 4, m, m, 0).m.beta, 1.2e-10);
  const double share = sim_break_shares(*rab, 4, 1048576, 524288, -1).beta;
  EXPECT_GT(share, 0.3);
  EXPECT_LT(share, 0.9);
  EXPECT_NEAR(segment_k(*rab, 1048576, 4, big, big, 0).m.beta, 1.2e-10 + share * 0.6e-10, 1e-20);
  const LinkModel link = LinkModel::uniform(big);
  EXPECT_GT(algorithm_cost(*bin, 1048576, 4, link),
            algorithm_cost(*bin, 1048576, 4, LinkModel::uniform(m)));
  // The linear pipeline at 1 MiB: packets far below 512 KiB, β as it was.
  const PacketChoice lp = segment_k(*lin, 1048576, 4, big, big, 0);
  EXPECT_LT(std::ceil(1048576 / lp.k), 524288);
  EXPECT_EQ(lp.m.beta, 1.2e-10);
  // With α large against β its k is small: packets of at least 512 KiB at 4 MiB cost
  // beta_large unless cutting them below it is cheaper; either way not β at 512 KiB packets.
  CostModel slow = big;
  slow.alpha = 2e-3;
  const PacketChoice few = segment_k(*lin, 4194304, 4, slow, slow, 0);
  if (std::ceil(4194304 / few.k) >= 524288)
    EXPECT_EQ(few.m.beta, 1.8e-10);
  else
    EXPECT_EQ(few.m.beta, 1.2e-10);
  CostModel flat = slow;
  flat.large_from = 0;
  const PacketChoice before = segment_k(*lin, 4194304, 4, flat, flat, 0);
  EXPECT_GE(std::ceil(4194304 / before.k), 524288);  // so the rule above was exercised
}

// γ beyond the cache in the selector (segment_k): recursive doubling's all-reduce at p = 2
// combines its whole 1 MiB message at gamma_large, Rabenseifner's its 512 KiB below
// gamma_large_from at γ; at p = 4 Rabenseifner's γ is mixed by the sim's share of its bytes in
// messages that reach it; below it, and without it, γ as before. With the figures of a p = 2
// sockets calibration (the forty-fifth session) the choice at 768 KiB turns from recursive
// doubling to Rabenseifner, and at 256 KiB stays.
TEST(Crossover, GammaBeyondTheCacheByTheShareOfBytes) {
  const Algorithm* rd = find_algorithm(Collective::allreduce, "recursive_doubling");
  const Algorithm* rab = find_algorithm(Collective::allreduce, "rabenseifner");
  const Algorithm* pbt = find_algorithm(Collective::reduce, "pipelined_binary_tree");
  for (const Algorithm* a : {rd, rab, pbt}) ASSERT_NE(a, nullptr);
  CostModel m{1.26e-5, 1.48e-10, 3.6e-11, 8.8e-7};
  m.exchange_alpha = 1.42;
  m.exchange_beta = 1.55;
  CostModel big = m;
  big.gamma_large_from = 699008;
  big.gamma_large = 1.28e-10;
  ASSERT_TRUE(big.has_gamma_large());
  EXPECT_EQ(segment_k(*rd, 1048576, 2, big, big, 0).m.gamma, 1.28e-10);
  EXPECT_EQ(segment_k(*rab, 1048576, 2, big, big, 0).m.gamma, 3.6e-11);
  EXPECT_EQ(segment_k(*rd, 524288, 2, big, big, 0).m.gamma, 3.6e-11);
  EXPECT_EQ(segment_k(*rd, 1048576, 2, m, m, 0).m.gamma, 3.6e-11);
  const double share = sim_break_shares(*rab, 4, 2097152, 699008, -1).beta;
  EXPECT_GT(share, 0.3);
  EXPECT_LT(share, 0.9);
  EXPECT_NEAR(segment_k(*rab, 2097152, 4, big, big, 0).m.gamma,
              3.6e-11 + share * (1.28e-10 - 3.6e-11), 1e-22);
  // A pipeline's packets: at gamma_large where they reach gamma_large_from, else at γ (with
  // this α, k = 6 at 4 MiB: packets of 699051 B; at 1 MiB smaller ones).
  bool both[2] = {false, false};
  for (const double n : {1048576.0, 4194304.0}) {
    const PacketChoice pc = segment_k(*pbt, n, 4, big, big, 0);
    const bool reach = std::ceil(n / pc.k) >= 699008;
    both[reach ? 1 : 0] = true;
    EXPECT_EQ(pc.m.gamma, reach ? 1.28e-10 : 3.6e-11) << "n = " << n << ", k = " << pc.k;
  }
  EXPECT_TRUE(both[0] && both[1]);
  // The choice: recursive doubling at 768 KiB without it, Rabenseifner with it.
  const auto fastest = [&](const CostModel& at, double n) {
    const LinkModel link = LinkModel::uniform(at);
    return algorithm_cost(*rd, n, 2, link) < algorithm_cost(*rab, n, 2, link) ? rd : rab;
  };
  EXPECT_EQ(fastest(m, 786432), rd);
  EXPECT_EQ(fastest(big, 786432), rab);
  EXPECT_EQ(fastest(big, 262144), rd);
  EXPECT_EQ(fastest(m, 262144), rd);
}

// With pulls (pull_bytes) a pipeline's pulled packets at n >= large_from cost beta_large
// however small against large_from (the receiver fills its whole buffer, as from a whole
// message); ring packets keep β. And with ranks sharing CPUs (a placement) a broadcast costs
// at least its busiest CPU's copies at beta_large (sim_bcast_cpu_copies): the linear pipeline's
// ring packets at p = 4 on 2 CPUs, cyclic, 3n, where its formula alone lies under that.
TEST(Crossover, PulledPacketsAndTheBusiestCpusCopiesBeyondTheCache) {
  const Algorithm* tree = find_algorithm(Collective::bcast, "pipelined_binary_tree");
  const Algorithm* lin = find_algorithm(Collective::bcast, "linear_pipeline");
  ASSERT_NE(tree, nullptr);
  ASSERT_NE(lin, nullptr);
  CostModel m{3e-6, 1.2e-10, 2.5e-11, 2e-7};
  m.pull_bytes = 32768;
  m.large_from = 524288;
  m.beta_large = 1.3e-10;
  const double n = 1048576;
  // Pulled packets (p = 8, where the tree pipelines: at p = 4 its root's two sends of every
  // packet make one packet cheapest under the formula alone): beta_large from the threshold,
  // though below large_from; without pulls such packets keep β.
  const PacketChoice big = segment_k(*tree, n, 8, m, m, 0);
  ASSERT_GE(std::ceil(n / big.k), m.pull_bytes) << "k = " << big.k;
  ASSERT_LT(std::ceil(n / big.k), m.large_from) << "k = " << big.k;  // the pull rule decides
  EXPECT_EQ(big.m.beta, m.beta_large);
  CostModel unpulled = m;
  unpulled.pull_bytes = 0;
  const PacketChoice before = segment_k(*tree, n, 8, unpulled, unpulled, 0);
  ASSERT_LT(std::ceil(n / before.k), m.large_from) << "k = " << before.k;
  EXPECT_EQ(before.m.beta, m.beta);
  // The busiest CPU's copies: the linear pipeline in ring packets (3n on each CPU).
  CostModel ring = m;
  ring.streamed = 0.5;  // κ: its formula well under the copies
  const Placement* cyclic = placement_for_mapping("cyclic", 4, 2);
  ASSERT_NE(cyclic, nullptr);
  CostModel placed = ring;
  placed.placement = cyclic;
  const auto cost = [&](const Algorithm& a, const CostModel& x) {
    const PacketChoice c = segment_k(a, n, 4, x, x, 0);
    CostQuery q;
    q.n = n;
    q.p = 4;
    q.k = c.k;
    q.m = c.m;
    return std::make_pair(a.predict(q), c.k);
  };
  const auto [free_cost, free_k] = cost(*lin, ring);
  const auto [floored_cost, floored_k] = cost(*lin, placed);
  const double copies = sim_bcast_cpu_copies(*lin, 4, floored_k, cyclic->cpus(), n, m.pull_bytes);
  EXPECT_GE(copies, 2);
  // The floor: the copies at beta_large, its formula's latencies (β = 0) on top.
  CostQuery lat;
  lat.n = n;
  lat.p = 4;
  lat.k = floored_k;
  lat.m = placed;
  lat.m.beta = 0;
  const double floor = copies * n * m.beta_large + lin->predict(lat);
  EXPECT_LT(free_cost, floor);  // so the floor was exercised
  EXPECT_NEAR(floored_cost, floor, 0.005 * floor);
  // Without a placement each rank has a CPU of its own: the floor is its busiest rank's copies,
  // fewer than a shared CPU's.
  const double own_copies = sim_bcast_cpu_copies(*lin, 4, free_k, {0, 1, 2, 3}, n, m.pull_bytes);
  EXPECT_LT(own_copies, copies);
  CostQuery own_lat = lat;
  own_lat.k = free_k;
  own_lat.m = ring;
  own_lat.m.beta = 0;
  EXPECT_GE(free_cost, 0.995 * (own_copies * n * m.beta_large + lin->predict(own_lat)));
  // The same n below large_from: no floor.
  const double small_n = 262144;
  const PacketChoice s1 = segment_k(*lin, small_n, 4, ring, ring, 0);
  const PacketChoice s2 = segment_k(*lin, small_n, 4, placed, placed, 0);
  EXPECT_EQ(s1.k, s2.k);
  EXPECT_EQ(s1.m.alpha, s2.m.alpha);
  EXPECT_EQ(s1.m.beta, s2.m.beta);
}

// Quiet shm (a core per rank, beta_large from the ping-pong): at p = 2 and 1 MiB scatter +
// all-gather's messages of 512 KiB lie below large_from, but its receiver copies n as the naive
// broadcast's does: the floor keeps it over the naive broadcast (p = 2 shm had chosen it there,
// 1.8-2.1 times slower).
TEST(Crossover, QuietBroadcastCostsItsRanksCopiesBeyondTheCache) {
  const Algorithm* naive = find_algorithm(Collective::bcast, "naive");
  const Algorithm* sag = find_algorithm(Collective::bcast, "scatter_allgather");
  ASSERT_NE(naive, nullptr);
  ASSERT_NE(sag, nullptr);
  CostModel m{1.2e-6, 5.15e-11, 3.3e-11, 2.3e-7};
  m.pull_bytes = 32768;
  m.large_from = 1 << 20;
  m.beta_large = 1.06e-10;
  const double n = 1 << 20;
  const auto cost = [&](const Algorithm& a, const CostModel& x) {
    const PacketChoice c = segment_k(a, n, 2, x, x, 0);
    CostQuery q;
    q.n = n;
    q.p = 2;
    q.k = c.k;
    q.m = c.m;
    return a.predict(q);
  };
  EXPECT_NEAR(cost(*naive, m), m.alpha + m.beta_large * n, 0.01 * cost(*naive, m));
  EXPECT_GT(cost(*sag, m), cost(*naive, m));
  EXPECT_GE(cost(*sag, m), 0.995 * m.beta_large * n);
  // Without a pull threshold (not shm's copies) no such floor: its formula alone, under the
  // naive broadcast's.
  CostModel unpulled = m;
  unpulled.pull_bytes = 0;
  EXPECT_LT(cost(*sag, unpulled), cost(*naive, unpulled));
  // Below large_from (its formula alone): scatter + all-gather's two half messages.
  CostModel below = m;
  below.large_from = 2 * n;
  CostQuery q;
  q.n = n;
  q.p = 2;
  q.k = 1;
  q.m = below;
  EXPECT_LT(sag->predict(q), m.beta_large * n);
}

// K (CostModel::call_wake) is added once per call for the share of its path not in exchanges:
// the naive broadcast's whole, none of recursive doubling's. Each segment's χα is kept where an
// algorithm's rounds are mixed across a break: reduce + bcast at 1 KiB (its 1 KiB messages above
// a 512 B break) takes the upper segment's exchange α, mixed by the share of its rounds.
TEST(Crossover, ACallsFirstWakeUpAndEachSegmentsExchanges) {
  const Algorithm* naive = find_algorithm(Collective::bcast, "naive");
  const Algorithm* rd = find_algorithm(Collective::allreduce, "recursive_doubling");
  const Algorithm* rab = find_algorithm(Collective::allreduce, "rabenseifner");
  for (const Algorithm* a : {naive, rd, rab}) ASSERT_NE(a, nullptr);
  CostModel m{3e-5, 2.5e-10, 2.5e-11};
  m.exchange_alpha = 3;
  CostModel k = m;
  k.call_wake = 4e-5;
  const auto cost = [](const Algorithm& a, const CostModel& model, double n) {
    return a.predict(one_packet_at_p4(n, model));
  };
  EXPECT_NEAR(cost(*naive, k, 256) - cost(*naive, m, 256), 4e-5, 1e-12);
  EXPECT_NEAR(cost(*rd, k, 256), cost(*rd, m, 256), 1e-12);
  CostModel up = m;
  up.alpha = 6e-5;
  up.exchange_alpha = 2;
  // Rabenseifner's all-reduce at 2 KiB, p = 4: 1 KiB and 512 B messages about a 1 KiB break.
  const double share = sim_break_shares(*rab, 4, 2048, 1024, -1).alpha;
  ASSERT_GT(share, 0.2);
  ASSERT_LT(share, 0.8);
  const PacketChoice c = segment_k(*rab, 2048, 4, m, up, 1024);
  const double ow = 3e-5 + share * 3e-5, ex = 9e-5 + share * (12e-5 - 9e-5);
  EXPECT_NEAR(c.m.alpha, ow, 1e-15);
  EXPECT_NEAR(c.m.alpha * c.m.exchange_alpha, ex, 1e-15);
  // K is the lower segment's, mixed by the share of the rounds below the break; with a K above
  // the break, by the share above too.
  CostModel kb = m;
  kb.call_wake = 4e-5;
  EXPECT_NEAR(segment_k(*rab, 2048, 4, kb, up, 1024).m.call_wake, (1 - share) * 4e-5, 1e-15);
  CostModel ka = up;
  ka.call_wake = 1e-5;
  EXPECT_NEAR(segment_k(*rab, 2048, 4, kb, ka, 1024).m.call_wake, (1 - share) * 4e-5 + share * 1e-5,
              1e-15);
  // One χα in both segments: as before, χα itself.
  CostModel same = up;
  same.exchange_alpha = 3;
  EXPECT_NEAR(segment_k(*rab, 2048, 4, m, same, 1024).m.exchange_alpha, 3, 1e-12);
}

// κ (CostModel::streamed) scales the rounds a broadcast's further packets add (k >= 2) when
// they go through the rings: the linear pipeline, the pipelined binary tree and the two-tree
// broadcast at 256 KiB in 16 KiB packets cost their first packet's trip (the formula at k = 1
// and 16 KiB) plus κ times the rest; at one packet, with packets at or above the single-copy
// threshold, the pipelined reduce, the all-reduce's two trees and the binomial broadcast do
// not change.
TEST(Crossover, StreamedPacketsOfTheBroadcastsPipelines) {
  CostModel m{3e-6, 1.2e-10, 2.5e-11, 2e-7};
  m.pull_bytes = 32768;
  CostModel s = m;
  s.streamed = 0.65;
  const auto cost = [](const Algorithm& a, const CostModel& model, double n, double k) {
    CostQuery q;
    q.n = n;
    q.p = 4;
    q.k = k;
    q.m = model;
    return a.predict(q);
  };
  for (const char* name : {"linear_pipeline", "pipelined_binary_tree", "two_tree"}) {
    const Algorithm* a = find_algorithm(Collective::bcast, name);
    ASSERT_NE(a, nullptr);
    const double fill = cost(*a, m, 16384, 1), whole = cost(*a, m, 262144, 16);
    EXPECT_GT(fill, 0) << name;
    EXPECT_LT(fill, whole / 3) << name;
    EXPECT_NEAR(cost(*a, s, 262144, 16), fill + 0.65 * (whole - fill), 1e-15) << name;
    EXPECT_EQ(cost(*a, s, 262144, 1), cost(*a, m, 262144, 1)) << name;
    EXPECT_EQ(cost(*a, s, 262144, 4), cost(*a, m, 262144, 4)) << name;  // 64 KiB: pulled
    CostQuery q;
    q.n = 262144;
    q.p = 4;
    q.k = 16;
    q.m = s;
    const CostModel once = a->costed(q);
    EXPECT_EQ(once.streamed, 1);
    q.m = once;
    EXPECT_EQ(a->costed(q).alpha, once.alpha) << name;  // costing twice changes nothing
  }
  const Algorithm* pbt = find_algorithm(Collective::reduce, "pipelined_binary_tree");
  const Algorithm* tt = find_algorithm(Collective::allreduce, "two_tree");
  const Algorithm* bin = find_algorithm(Collective::bcast, "binomial");
  for (const Algorithm* a : {pbt, tt, bin}) {
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(cost(*a, s, 262144, 16), cost(*a, m, 262144, 16)) << a->name;
  }
}

// κ's fill is the first packet's trip as a lone message of its size (k = 1), whose exchange
// share is none for the broadcast's pipelines: with χ the linear pipeline's p − 1 hops cost no
// χ, while the further packets' rounds keep the exchange share of k packets (e > 0 at k = 16).
// The two-tree is paced (Algorithm::paced): its fill keeps the stream's share, as before the
// thirty-second session, when the linear pipeline's did too (the first assertion then fails).
TEST(Crossover, StreamedFillIsALonePacketsTrip) {
  CostModel m{3e-6, 1.2e-10, 2.5e-11, 2e-7};
  m.pull_bytes = 32768;
  m.exchange_alpha = m.exchange_beta = 1.8;
  CostModel s = m;
  s.streamed = 0.65;
  const auto query = [](const CostModel& model, double n, double k) {
    CostQuery q;
    q.n = n;
    q.p = 4;
    q.k = k;
    q.m = model;
    return q;
  };
  for (const char* name : {"linear_pipeline", "two_tree"}) {
    const Algorithm* a = find_algorithm(Collective::bcast, name);
    ASSERT_NE(a, nullptr);
    const double e = a->clamped_exchange_share(query(m, 262144, 16));
    ASSERT_GT(e, 0) << name;
    EXPECT_EQ(a->clamped_exchange_share(query(m, 16384, 1)), 0) << name;
    const double lone = a->predict(query(m, 16384, 1));  // no χ: a lone packet
    const double whole = a->predict(query(m, 262144, 16));
    const double in_stream = lone * (1 + e * 0.8);  // the same rounds at the stream's share
    const double fill = a->paced ? in_stream : lone;
    EXPECT_EQ(a->paced, std::string(name) == "two_tree");
    EXPECT_NEAR(a->predict(query(s, 262144, 16)), fill + 0.65 * (whole - in_stream), 1e-12 * whole)
        << name;
  }
}

TEST(Crossover, WholeMessagesOnBothSidesMixTheSegments) {
  const double brk = 32768;
  const Algorithm* rab = find_algorithm(Collective::allreduce, "rabenseifner");
  const Algorithm* rd = find_algorithm(Collective::allreduce, "recursive_doubling");
  const Algorithm* sag = find_algorithm(Collective::bcast, "scatter_allgather");
  for (const Algorithm* a : {rab, rd, sag}) ASSERT_NE(a, nullptr);
  // (Run at the middle of the sizes with the same messages above: 92680 B, whole doubles not
  // divisible by 4, so the bytes' share within 1e-4.)
  BreakShares s = sim_break_shares(*rab, 4, 65536, brk, -1);
  EXPECT_NEAR(s.alpha, 0.5, 1e-12);
  EXPECT_NEAR(s.beta, 2.0 / 3, 1e-4);
  EXPECT_EQ(sim_break_shares(*rab, 4, 16384, brk, -1).alpha, 0);
  EXPECT_EQ(sim_break_shares(*rab, 4, 131072, brk, -1).alpha, 1);
  EXPECT_EQ(sim_break_shares(*rd, 4, 65536, brk, -1).alpha, 1);
  EXPECT_EQ(sim_break_shares(*rd, 4, 16384, brk, -1).alpha, 0);
  // Scatter + all-gather at p = 4, 64 KiB: blocks of 16 KiB in the all-gather, the scatter's
  // first message n/2 above.
  s = sim_break_shares(*sag, 4, 65536, brk, -1);
  EXPECT_GT(s.alpha, 0);
  EXPECT_LT(s.alpha, 1);
  // The mixed model: α halfway, β two thirds of the way; everything else the whole rule's.
  CostModel below{3e-6, 1.5e-10, 2.5e-11, 2e-7};
  CostModel above = below;
  above.alpha = 9e-6;
  above.beta = 1.2e-10;
  above.gap = -1;
  below.gap = 5e-11;
  const LinkModel link{below, above, brk};
  const PacketChoice pc = segment_k(*rab, 65536, 4, below, above, brk);
  EXPECT_NEAR(pc.m.alpha, 6e-6, 1e-15);
  EXPECT_NEAR(pc.m.beta, 1.5e-10 - 2.0 / 3 * 0.3e-10, 1e-14);
  EXPECT_EQ(pc.m.gap, below.gap);  // its mean message (24 KiB) is below: the lower segment's
  EXPECT_TRUE(pc.above);           // half its latencies: shown as above
  EXPECT_NEAR(pc.alpha_share, 0.5, 1e-12);
  CostQuery q;
  q.n = 65536;
  q.p = 4;
  q.k = 1;
  q.m = pc.m;
  EXPECT_EQ(algorithm_cost(*rab, 65536, 4, link), rab->predict(q));
  q.m = below;
  EXPECT_GT(algorithm_cost(*rab, 65536, 4, link), rab->predict(q));
  // Recursive doubling: one segment, exactly.
  q.m = above;
  EXPECT_EQ(algorithm_cost(*rd, 65536, 4, link), rd->predict(q));
}

// The built-in link for ranks sharing cores: its break at the single-copy threshold was
// measured on pairwise all-to-alls (exchanges), +6.8 µs a message at p = 4 on 2 cores (r = 2)
// and +11.9 µs at p = 8 (r = 4), against the rings. An exchange is costed with χα·α, so the
// break's extra α is 3.4 µs × r over χα: an exchange above the break then costs 3.4 µs × r more
// than one below (6.8 and 13.6 µs), where charging χα on top made it 8.1 and 16.2.
TEST(Crossover, BuiltInBreakIsTheExchangesMeasuredExtra) {
  for (const double r : {2.0, 4.0}) {
    const LinkModel l = builtin_link("shm", r, 32768);
    ASSERT_TRUE(l.has_break());
    EXPECT_GT(l.below.exchange_alpha, 1.0);
    EXPECT_NEAR((l.above.alpha - l.below.alpha) * l.below.exchange_alpha, 3.4e-6 * r, 1e-12);
  }
}

// A hybrid runs Theorem 1's strategy under the model it is costed with (χα raises α by its
// exchange share), and that strategy's messages decide its segment. The built-in oversubscribed
// shm link with χα = 1.75 at p = 4, 32 KiB: under the raw model below the break the hybrid
// halves once (16 KiB messages, below), under the costed one (α × 1.75) it exchanges whole
// vectors (32 KiB, above). It was costed below as if it sent 16 KiB messages (22.2 against
// recursive doubling's 46.0 µs) and ran as recursive doubling with single copies.
TEST(Crossover, HybridIsCostedWithTheSegmentOfTheStrategyItRuns) {
  const double brk = 32768;
  for (const double chi : {1.0, 1.75}) {
    LinkModel link = builtin_link("shm", 2.0, brk);
    link.below.exchange_alpha = link.above.exchange_alpha = chi;
    for (const char* coll : {"allreduce", "reduce"}) {
      const Collective c =
          std::string(coll) == "allreduce" ? Collective::allreduce : Collective::reduce;
      const Algorithm* hy = find_algorithm(c, "hybrid");
      ASSERT_NE(hy, nullptr);
      for (const int p : {4, 8, 16}) {
        const int d = Hypercube{p}.dim();
        for (const double n : log_sizes(1024, double(1 << 22), 4)) {
          const PacketChoice pc = segment_k(*hy, n, p, link.below, link.above, brk);
          CostQuery q;
          q.n = n;
          q.p = p;
          q.m = pc.m;
          const CostModel run = hy->costed(q);
          const Strategy s = theorem1_strategy(n, d, run);
          // Its messages: n/2 in a halving step (then n halves), n in an exchange step; whole
          // doubles, as the run splits them (a halving's two halves differ by one element:
          // the smallest message from the smaller halves, the largest from the larger).
          double m_lo = std::floor(n / 8), m_hi = m_lo, lo = n, hi = 0;
          for (int j = d - 1; j >= 0; --j) {
            const bool halve = ((s >> j) & 1u) != 0;
            if (halve) {
              m_lo = std::floor(m_lo / 2);
              m_hi = std::ceil(m_hi / 2);
            }
            lo = std::min(lo, 8 * m_lo);
            hi = std::max(hi, 8 * m_hi);
          }
          if (lo >= brk) {
            EXPECT_TRUE(pc.above) << coll << " χα " << chi << " p " << p << " n " << n;
          }
          if (hi < brk) {
            EXPECT_FALSE(pc.above) << coll << " χα " << chi << " p " << p << " n " << n;
          }
        }
      }
    }
  }
  // The case above: the hybrid costs what recursive doubling costs, whose messages it sends.
  LinkModel link = builtin_link("shm", 2.0, brk);
  link.below.exchange_alpha = link.above.exchange_alpha = 1.75;
  const Algorithm* hy = find_algorithm(Collective::allreduce, "hybrid");
  const Algorithm* rd = find_algorithm(Collective::allreduce, "recursive_doubling");
  ASSERT_NE(rd, nullptr);
  EXPECT_NEAR(algorithm_cost(*hy, brk, 4, link) / algorithm_cost(*rd, brk, 4, link), 1.0, 1e-9);
}

// The run-time selector costs with both segments of its communicator's link, as the tables and
// the validation do: every algorithm's predicted cost is algorithm_cost under the LinkModel,
// and the choice is the fastest under it (up to ties within rounding).
TEST(Crossover, RunTimeSelectorCostsWithTheLinksSegments) {
  const CostModel below{3e-6, 1.5e-10, 1e-10, 2e-7, 32768, 4e-11};
  CostModel above = below;
  above.alpha = 16.6e-6;
  const LinkModel link{below, above, 32768};
  for (const int p : {2, 4, 8}) {
    sim::World world(p, below);
    world.comm(0).set_link(link);
    const Comm& comm = world.comm(0);
    for (const Collective c :
         {Collective::bcast, Collective::allreduce, Collective::alltoall, Collective::allgather}) {
      for (double n : log_sizes(64, double(1 << 22), 8)) {
        CollArgs args;
        args.coll = c;
        args.elem_size = 1;
        args.count = static_cast<std::size_t>(n);
        args.op = ReduceOp(FC_SUM, FC_UINT8);
        for (const Algorithm* a : all_algorithms()) {
          if (a->coll != c || (a->needs_power_of_two && (p & (p - 1)) != 0)) continue;
          EXPECT_NEAR(predicted_cost(comm, *a, args) / algorithm_cost(*a, n, p, link), 1.0, 1e-12)
              << a->name << " p=" << p << " n=" << n;
        }
        const Algorithm& sel = select_algorithm(comm, args);
        const Algorithm* want = fastest(c, n, p, link, true);
        ASSERT_NE(want, nullptr);
        EXPECT_NEAR(algorithm_cost(sel, n, p, link) / algorithm_cost(*want, n, p, link), 1.0,
                    kTieTolerance)
            << collective_name(c) << " p=" << p << " n=" << n;
      }
    }
  }
  // The oversubscribed built-in link: the hypercube all-to-all's messages of p/2 blocks of
  // 8 KiB (32 KiB) pay the single-copy latency at p = 8, and the direct exchange wins.
  sim::World world(8, below);
  world.comm(0).set_link(builtin_link("shm", 4.0, 32768));
  CollArgs args;
  args.coll = Collective::alltoall;
  args.elem_size = 1;
  args.count = 8192;
  const SegmentChoice hyper =
      choose_segment(world.comm(0), *find_algorithm(Collective::alltoall, "hypercube"), args);
  EXPECT_TRUE(hyper.above);
  EXPECT_NE(select_algorithm(world.comm(0), args).name, "hypercube");
}

// The calibration's tables under a link with a break: one scan costing every algorithm as the
// validation predicts it (segment_k per size), so the table's choice is the predicted fastest
// at every size on both sides of the break.
TEST(Crossover, LinkModelTableIsTheFastestUnderSegmentCosts) {
  const CostModel below{2e-6, 3e-10, 5e-11};
  const CostModel above{1e-9, 2.2e-9, 5e-11};  // a floored α above the break
  const LinkModel link{below, above, 65536};
  for (const int p : {2, 4}) {
    for (const Collective c : {Collective::bcast, Collective::allreduce}) {
      const auto t = crossover_table(c, p, link, {.n_min = 1, .n_max = double(1 << 24)});
      ASSERT_FALSE(t.empty());
      for (double n : log_sizes(8, double(1 << 24) - 1, 16)) {
        const Algorithm* want = fastest(c, n, p, link, true);
        const Algorithm* got = table_lookup(t, n);
        ASSERT_NE(got, nullptr);
        if (got != want) {  // only a tie within rounding may differ
          EXPECT_NEAR(algorithm_cost(*got, n, p, link) / algorithm_cost(*want, n, p, link), 1.0,
                      1e-6)
              << collective_name(c) << " p = " << p << " n = " << n << ": table " << got->name
              << ", fastest " << want->name;
        }
      }
      // Below the break and without one: the plain table of the lower model.
      const LinkModel flat{below, above, 0};
      const auto plain = crossover_table(c, p, below, {.n_min = 1, .n_max = double(1 << 24)});
      EXPECT_EQ(format_table(crossover_table(c, p, flat, {.n_min = 1, .n_max = double(1 << 24)})),
                format_table(plain));
      for (double n : log_sizes(8, 65535, 8))
        EXPECT_EQ(table_lookup(t, n), table_lookup(plain, n)) << n;
    }
  }
  // A pipelined algorithm above the break is costed with packets of its own segment.
  const Algorithm* tt = find_algorithm(Collective::allreduce, "two_tree");
  ASSERT_NE(tt, nullptr);
  const PacketChoice pc = segment_k(*tt, 1 << 20, 4, below, above, 65536);
  CostQuery q;
  q.n = 1 << 20;
  q.p = 4;
  q.k = pc.k;
  q.m = pc.m;
  EXPECT_EQ(algorithm_cost(*tt, 1 << 20, 4, link), tt->cost(q));
}

// `text` with its one `entry` (a link's "key": value, as to_json_text writes it) replaced by
// `by`: the optional keys' tests read a file without the key, with a negative value, with text.
std::string replaced(std::string text, const std::string& entry, const std::string& by) {
  const auto pos = text.find(entry);
  EXPECT_NE(pos, std::string::npos) << entry << " not in " << text;
  return pos == std::string::npos ? text : text.replace(pos, entry.size(), by);
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("fabcoll_tuning_test_" + std::to_string(getpid()) + "_" + name))
      .string();
}

TEST(TuningFile, RoundTrip) {
  const TuningFile f = sample();
  std::string err;
  const auto g = parse_tuning(to_json_text(f), err);
  ASSERT_TRUE(g) << err;
  EXPECT_EQ(to_json_text(*g), to_json_text(f));
  EXPECT_EQ(g->machine.hostname, f.machine.hostname);
  EXPECT_EQ(g->links.size(), 2u);
  EXPECT_EQ(g->links[1].break_bytes, 65536);
  EXPECT_EQ(g->k_rules[0].sizes[1].second, 16);
  EXPECT_EQ(g->crossovers[0].segments[1].algorithm, "scatter_allgather");

  const std::string path = temp_path("roundtrip/tuning.json");
  ASSERT_TRUE(save_tuning(f, path, err)) << err;
  std::string notice;
  const auto h = load_tuning_from(path, notice);
  ASSERT_TRUE(h);
  EXPECT_EQ(notice, "");
  EXPECT_EQ(to_json_text(*h), to_json_text(f));
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

// The sender's overhead o (LogP's o) measured by fabcoll-calibrate travels in the link entry
// ("overhead") and reaches the CostModel through model_for, in both segments of a break.
TEST(TuningFile, OverheadRoundTripsIntoModelFor) {
  TuningFile f = sample();
  f.links[1].model.overhead = 3e-6;  // ofi/sockets: measured; shm: not (-1)
  const std::string text = to_json_text(f);
  EXPECT_NE(text.find("\"overhead\": 3e-06"), std::string::npos) << text;
  std::string err;
  const auto g = parse_tuning(text, err);
  ASSERT_TRUE(g) << err;
  EXPECT_EQ(to_json_text(*g), text);
  EXPECT_EQ(g->links[1].model.overhead, 3e-6);
  EXPECT_LT(g->links[0].model.overhead, 0);
  EXPECT_EQ(model_for(*g, "ofi/sockets").overhead, 3e-6);
  EXPECT_EQ(model_for(*g, "ofi/sockets").send_overhead(), 3e-6);
  EXPECT_EQ(model_for(*g, "ofi/sockets", 1 << 20).overhead, 3e-6);  // above the break too
  EXPECT_LT(model_for(*g, "shm").overhead, 0);
  EXPECT_EQ(model_for(*g, "shm").send_overhead(), 1.5e-6);  // o = α
  // The receiver's o_r: absent, o; present, its own, in both segments.
  EXPECT_EQ(text.find("receive_overhead"), std::string::npos) << text;
  EXPECT_EQ(model_for(*g, "ofi/sockets").recv_overhead(), 3e-6);
  f.links[1].model.receive_overhead = 1.25e-6;
  const std::string with_recv = to_json_text(f);
  EXPECT_NE(with_recv.find("\"receive_overhead\": 1.25e-06"), std::string::npos) << with_recv;
  const auto r = parse_tuning(with_recv, err);
  ASSERT_TRUE(r) << err;
  EXPECT_EQ(model_for(*r, "ofi/sockets").recv_overhead(), 1.25e-6);
  EXPECT_EQ(model_for(*r, "ofi/sockets", 1 << 20).recv_overhead(), 1.25e-6);
  EXPECT_EQ(model_for(*r, "ofi/sockets").send_overhead(), 3e-6);
  const auto neg = parse_tuning(
      replaced(with_recv, "\"receive_overhead\": 1.25e-06", "\"receive_overhead\": -5.0"), err);
  ASSERT_TRUE(neg) << err;  // negative: not fitted, o_r = o
  EXPECT_EQ(model_for(*neg, "ofi/sockets").recv_overhead(), 3e-6);

  const std::string path = temp_path("overhead/tuning.json");
  ASSERT_TRUE(save_tuning(f, path, err)) << err;
  std::string notice;
  const auto h = load_tuning_from(path, notice);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->links[1].model.overhead, 3e-6);
  EXPECT_EQ(h->links[1].model.receive_overhead, 1.25e-6);
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

// Every field of both segments and the break, compared exactly.
void expect_same_link(const LinkModel& got, const LinkModel& want) {
  for (const auto& [g, w] : {std::pair{got.below, want.below}, std::pair{got.above, want.above}}) {
    EXPECT_EQ(g.alpha, w.alpha);
    EXPECT_EQ(g.beta, w.beta);
    EXPECT_EQ(g.gamma, w.gamma);
    EXPECT_EQ(g.overhead, w.overhead);
    EXPECT_EQ(g.receive_overhead, w.receive_overhead);
    EXPECT_EQ(g.pull_bytes, w.pull_bytes);
    EXPECT_EQ(g.copy, w.copy);
    EXPECT_EQ(g.written, w.written);
    EXPECT_EQ(g.written_from, w.written_from);
    EXPECT_EQ(g.exchange_alpha, w.exchange_alpha);
    EXPECT_EQ(g.exchange_beta, w.exchange_beta);
    EXPECT_EQ(g.gap, w.gap);
    EXPECT_EQ(g.wake, w.wake);
    EXPECT_EQ(g.large_from, w.large_from);
    EXPECT_EQ(g.beta_large, w.beta_large);
    EXPECT_EQ(g.gamma_large_from, w.gamma_large_from);
    EXPECT_EQ(g.gamma_large, w.gamma_large);
    EXPECT_EQ(g.streamed, w.streamed);
    EXPECT_EQ(g.small_below, w.small_below);
    EXPECT_EQ(g.alpha_small, w.alpha_small);
    EXPECT_EQ(g.overhead_small, w.overhead_small);
    EXPECT_EQ(g.call_wake_small, w.call_wake_small);
    EXPECT_EQ(g.call_wake, w.call_wake);
    EXPECT_EQ(g.ring_exchange_beta, w.ring_exchange_beta);
  }
  EXPECT_EQ(got.break_bytes, want.break_bytes);
}

// Rank 0's link model reaches every rank as one line (c_api's bootstrap): every field that
// selection reads comes back exactly, in its place, both segments; a garbled line is refused.
TEST(TuningFile, LinkModelLineRoundTrips) {
  LinkModel l;
  CostModel& m = l.below;
  // Every field a distinct value, so that two swapped fields cannot pass.
  m = CostModel{1.5e-6, 1.25e-10, 2.5e-11, 2e-7, 32768, 2e-11, 1.8, 32768, 1.3, 1.1};
  m.written_from = 16384;
  m.gap = 3e-11;
  m.wake = 2.25e-6;
  m.large_from = 524288;
  m.beta_large = 1.75e-10;
  m.gamma_large_from = 699008;
  m.gamma_large = 1.375e-10;
  m.streamed = 0.625;
  m.small_below = 256;
  m.alpha_small = 1.125e-6;
  m.overhead_small = 6.25e-7;
  m.call_wake_small = 8.5e-6;
  m.receive_overhead = 1.75e-7;
  m.ring_exchange_beta = 6.5e-10;
  l.break_bytes = 65536;
  l.above = m;
  l.above.alpha = 4.5e-6;
  l.above.beta = 7.5e-11;
  l.above.gap = -1;
  l.above.exchange_alpha = 2.25;
  m.call_wake = 3.5e-5;
  l.above.call_wake = 1.25e-5;  // K above the break, its own
  const std::string line = format_link_model(l) + " tuning text, with spaces";
  LinkModel back;
  const std::size_t used = parse_link_model(line, back);
  ASSERT_GT(used, 0u);
  EXPECT_EQ(line.substr(used), "tuning text, with spaces");
  expect_same_link(back, l);
  LinkModel untouched;
  untouched.break_bytes = 7;
  EXPECT_EQ(parse_link_model("1 2 3 garbled", untouched), 0u);
  EXPECT_EQ(parse_link_model("", untouched), 0u);
  EXPECT_EQ(parse_link_model(format_link_model(l) + "x more", untouched), 0u);  // glued on
  EXPECT_EQ(parse_link_model(format_link_model(l), back), format_link_model(l).size());
  EXPECT_EQ(untouched.break_bytes, 7);
}

// Rank 0 selects with its model as the bootstrap line reads back, as every other rank does
// (c_api.cpp), so a field the line does not carry would silently change rank 0's model. Every
// built-in link the context can set (fabric, shm quiet and with 1.5 … 8 ranks per core, with
// and without the single-copy threshold) reads back whole.
TEST(TuningFile, BuiltInLinksSurviveTheBootstrapLine) {
  for (const char* cls : {"shm", "ofi/sockets"}) {
    for (const double r : {0.5, 1.0, 1.5, 2.0, 4.0, 8.0}) {
      for (const double single_copy : {0.0, 32768.0}) {
        LinkModel l = builtin_link(cls, r, single_copy);
        if (single_copy > 0) l.set_single_copy(single_copy);
        LinkModel back;
        ASSERT_GT(parse_link_model(format_link_model(l), back), 0u) << cls << " r " << r;
        expect_same_link(back, l);
      }
    }
  }
}

// The sender's time per byte G (LogGP's G) travels in the link entry ("gap") into the model
// below the break only (above it the sender moves every byte: G = β); absent or negative
// means not measured (G = β), a value that is not a number is rejected.
TEST(TuningFile, GapRoundTripsIntoModelForBelowTheBreak) {
  TuningFile f = sample();
  f.links[1].model.gap = 5e-11;  // ofi/sockets: measured; shm: not (-1)
  const std::string text = to_json_text(f);
  const std::string entry = "\"gap\": 5e-11";
  ASSERT_NE(text.find(entry), std::string::npos) << text;
  std::string err;
  const auto g = parse_tuning(text, err);
  ASSERT_TRUE(g) << err;
  EXPECT_EQ(to_json_text(*g), text);
  EXPECT_EQ(g->links[1].model.gap, 5e-11);
  EXPECT_LT(g->links[0].model.gap, 0);
  EXPECT_EQ(model_for(*g, "ofi/sockets").send_gap(), 5e-11);
  ASSERT_GT(g->links[1].break_bytes, 0);
  const CostModel above = model_for(*g, "ofi/sockets", g->links[1].break_bytes);
  EXPECT_LT(above.gap, 0);
  EXPECT_EQ(above.send_gap(), above.beta);
  EXPECT_EQ(model_for(*g, "shm").send_gap(), model_for(*g, "shm").beta);
  const auto link = link_model_for(*g, "ofi/sockets");
  ASSERT_TRUE(link);
  EXPECT_EQ(link->below.gap, 5e-11);
  EXPECT_LT(link->above.gap, 0);

  const std::string without = replaced(text, entry, "\"r2_x\": 0.0");  // same shape, key gone
  ASSERT_EQ(without.find("\"gap\""), std::string::npos) << without;
  const auto old = parse_tuning(without, err);
  ASSERT_TRUE(old) << err;
  EXPECT_LT(old->links[1].model.gap, 0);
  const auto neg = parse_tuning(replaced(text, entry, "\"gap\": -1e-9"), err);
  ASSERT_TRUE(neg) << err;
  EXPECT_EQ(neg->links[1].model.gap, -1);
  EXPECT_FALSE(parse_tuning(replaced(text, entry, "\"gap\": \"x\""), err));
}

// ω (CostModel::written) travels in the link entry ("written") into both segments' models; a
// file without it (written before calibrate measured it) means 1, the texts' model; a value
// below 1 or not a number is rejected.
TEST(TuningFile, WrittenFactorRoundTripsAndIsChecked) {
  TuningFile f = sample();
  f.links[0].model.written = 1.75;
  const std::string text = to_json_text(f);
  std::string err;
  const auto g = parse_tuning(text, err);
  ASSERT_TRUE(g) << err;
  EXPECT_EQ(to_json_text(*g), text);
  EXPECT_EQ(model_for(*g, "shm").written, 1.75);
  EXPECT_EQ(model_for(*g, "ofi/sockets").written, 1);
  EXPECT_EQ(model_for(*g, "ofi/sockets", 1 << 20).written, 1);
  const std::string entry = "\"written\": 1.75";
  ASSERT_NE(text.find(entry), std::string::npos) << text;
  const auto h = parse_tuning(replaced(text, entry, "\"r2_more\": 1.0"), err);
  ASSERT_TRUE(h) << err;
  EXPECT_EQ(model_for(*h, "shm").written, 1);
  for (const char* bad : {"\"written\": 0.50", "\"written\": \"x\"", "\"written\": -1.0"})
    EXPECT_FALSE(parse_tuning(replaced(text, entry, bad), err)) << bad;
}

// φ (CostModel::pull_fanout) travels in the link entry ("pull_fanout", written only when
// measured) into both segments' models; absent means 0 (pulls side by side); a negative value
// or not a number is rejected. The naive broadcast of pulled messages charges it per receiver
// beyond the first.
TEST(TuningFile, PullFanoutRoundTripsAndIsCharged) {
  TuningFile f = sample();
  f.links[0].model.pull_fanout = 1.5;
  const std::string text = to_json_text(f);
  std::string err;
  const auto g = parse_tuning(text, err);
  ASSERT_TRUE(g) << err;
  EXPECT_EQ(to_json_text(*g), text);
  EXPECT_EQ(model_for(*g, "shm").pull_fanout, 1.5);
  EXPECT_EQ(model_for(*g, "shm", 1 << 20).pull_fanout, 1.5);  // both segments
  EXPECT_EQ(model_for(*g, "ofi/sockets").pull_fanout, 0);
  const std::string entry = "\"pull_fanout\": 1.5";
  ASSERT_NE(text.find(entry), std::string::npos) << text;
  EXPECT_EQ(to_json_text(sample()).find("pull_fanout"), std::string::npos);  // not measured
  const auto h = parse_tuning(replaced(text, entry, "\"r2_more\": 1.0"), err);
  ASSERT_TRUE(h) << err;
  EXPECT_EQ(model_for(*h, "shm").pull_fanout, 0);
  for (const char* bad : {"\"pull_fanout\": -0.5", "\"pull_fanout\": \"x\""})
    EXPECT_FALSE(parse_tuning(replaced(text, entry, bad), err)) << bad;
  // α + βn(1 + φ(p − 2)) + (p − 2)o for pulled messages; below pull_bytes φ plays no part.
  const Algorithm* naive = find_algorithm(Collective::bcast, "naive");
  ASSERT_NE(naive, nullptr);
  CostModel m{.alpha = 1e-6, .beta = 1e-10, .gamma = 0, .overhead = 2e-7};
  m.pull_bytes = 32768;
  m.pull_fanout = 1.5;
  CostQuery q;
  q.n = 65536;
  q.p = 5;
  q.m = m;
  EXPECT_DOUBLE_EQ(naive->cost(q), 1e-6 + 1e-10 * 65536 * (1 + 1.5 * 3) + 3 * 2e-7);
  q.n = 16384;
  const double below = naive->cost(q);
  q.m.pull_fanout = 0;
  EXPECT_EQ(naive->cost(q), below);
}

TEST(TuningFile, ExchangeFactorsRoundTripAndAreChecked) {
  TuningFile f = sample();
  f.links[0].model.exchange_alpha = 1.375;
  f.links[0].model.exchange_beta = 2.25;
  const std::string text = to_json_text(f);
  std::string err;
  const auto g = parse_tuning(text, err);
  ASSERT_TRUE(g) << err;
  EXPECT_EQ(to_json_text(*g), text);
  EXPECT_EQ(model_for(*g, "shm").exchange_alpha, 1.375);
  EXPECT_EQ(model_for(*g, "shm").exchange_beta, 2.25);
  EXPECT_EQ(model_for(*g, "shm", 1 << 20).exchange_beta, 2.25);  // both segments
  EXPECT_EQ(model_for(*g, "ofi/sockets").exchange_beta, 1);
  // Absent (a file from before they were measured): 1.
  for (const char* key : {"\"exchange_alpha\": 1.375", "\"exchange_beta\": 2.25"}) {
    ASSERT_NE(text.find(key), std::string::npos) << text;
    const auto h = parse_tuning(replaced(text, key, "\"r2_more\": 1.0"), err);
    ASSERT_TRUE(h) << err;
    const CostModel got = model_for(*h, "shm");
    const bool alpha_key = std::string(key).find("alpha") != std::string::npos;
    EXPECT_EQ(alpha_key ? got.exchange_alpha : got.exchange_beta, 1) << key;
    EXPECT_EQ(alpha_key ? got.exchange_beta : got.exchange_alpha, alpha_key ? 2.25 : 1.375) << key;
    for (const char* bad : {"0.1", "\"x\"", "-1.0", "9.0"}) {
      const std::string b =
          replaced(text, key, std::string(key).substr(0, std::string(key).find(':') + 2) + bad);
      EXPECT_FALSE(parse_tuning(b, err)) << b;
      if (bad[0] != '"') {
        EXPECT_NE(err.find("exchange_alpha and exchange_beta"), std::string::npos) << err;
      }
    }
  }
}

// β_x (CostModel::ring_exchange_beta) travels in the link entry ("ring_exchange_beta", written
// only when fitted) into both segments; absent it is -1 (not fitted: χβ·β); a negative or
// non-number value is refused.
TEST(TuningFile, RingExchangeBetaRoundTripsAndIsChecked) {
  TuningFile f = sample();
  EXPECT_EQ(to_json_text(f).find("ring_exchange_beta"), std::string::npos);
  EXPECT_LT(model_for(f, "shm").ring_exchange_beta, 0);
  f.links[0].model.ring_exchange_beta = 1.125e-9;
  const std::string text = to_json_text(f);
  std::string err;
  const auto g = parse_tuning(text, err);
  ASSERT_TRUE(g) << err;
  EXPECT_EQ(to_json_text(*g), text);
  EXPECT_EQ(model_for(*g, "shm").ring_exchange_beta, 1.125e-9);
  EXPECT_EQ(model_for(*g, "shm", 1 << 20).ring_exchange_beta, 1.125e-9);  // both segments
  const std::string key = "\"ring_exchange_beta\": 1.125e-09";
  ASSERT_NE(text.find(key), std::string::npos) << text;
  for (const char* bad : {"-1.0", "\"x\""}) {
    const std::string b = replaced(text, key, "\"ring_exchange_beta\": " + std::string(bad));
    EXPECT_FALSE(parse_tuning(b, err)) << b;
    EXPECT_NE(err.find("ring_exchange_beta must be a number >= 0"), std::string::npos) << err;
  }
}

// W (CostModel::wake) travels in the link entry ("wake", written only when fitted) into both
// segments' models; absent means 0; negative or not a number is rejected.
TEST(TuningFile, WakeUpRoundTripsAndIsChecked) {
  TuningFile f = sample();
  f.links[1].model.wake = 2.5e-6;
  const std::string text = to_json_text(f);
  std::string err;
  const auto g = parse_tuning(text, err);
  ASSERT_TRUE(g) << err;
  EXPECT_EQ(to_json_text(*g), text);
  EXPECT_EQ(model_for(*g, "ofi/sockets").wake, 2.5e-6);
  EXPECT_EQ(model_for(*g, "ofi/sockets", 1 << 20).wake, 2.5e-6);  // both segments
  EXPECT_EQ(model_for(*g, "shm").wake, 0);
  EXPECT_EQ(text.find("\"wake\"", text.find("\"shm\"")), text.rfind("\"wake\""));  // shm: none
  const std::string entry = "\"wake\": 2.5e-06";
  ASSERT_NE(text.find(entry), std::string::npos) << text;
  const auto h = parse_tuning(replaced(text, entry, "\"r2_more\": 1.0"), err);
  ASSERT_TRUE(h) << err;
  EXPECT_EQ(model_for(*h, "ofi/sockets").wake, 0);
  EXPECT_FALSE(parse_tuning(replaced(text, entry, "\"wake\": \"x\""), err));
  EXPECT_FALSE(parse_tuning(replaced(text, entry, "\"wake\": -1e-06"), err));
  EXPECT_NE(err.find("wake must be a number >= 0"), std::string::npos) << err;
}

// β beyond the cache travels in the link entry ("large_from", "beta_large", written only when
// fitted) into both segments' models; absent means none; one without the other, zero or not a
// number is rejected.
// A pair of optional link keys that go together (both or neither, each a number > 0): written
// when set (as `first` and `second` read in the JSON text), read back into both segments'
// models (`has`), absent reading as unset; one alone, zero, negative or not a number refused
// with `message`.
void expect_key_pair_checked(const TuningFile& f, const std::string& first,
                             const std::string& second, bool (CostModel::*has)() const,
                             const std::string& message) {
  const std::string text = to_json_text(f);
  std::string err;
  const auto g = parse_tuning(text, err);
  ASSERT_TRUE(g) << err;
  EXPECT_EQ(to_json_text(*g), text);
  for (const double at : {0.0, double(1 << 20)})  // both segments
    EXPECT_TRUE((model_for(*g, "ofi/sockets", at).*has)());
  EXPECT_FALSE((model_for(*g, "shm").*has)());
  ASSERT_NE(text.find(first), std::string::npos) << text;
  ASSERT_NE(text.find(second), std::string::npos) << text;
  const auto h = parse_tuning(
      replaced(replaced(text, first, "\"r2_more\": 1.0"), second, "\"r2_less\": 1.0"), err);
  ASSERT_TRUE(h) << err;
  EXPECT_FALSE((model_for(*h, "ofi/sockets").*has)());
  const std::string first_key = first.substr(0, first.find(':'));
  const std::string second_key = second.substr(0, second.find(':'));
  for (const auto& [what, with] :
       {std::pair{first, std::string("\"r2_more\": 1.0")},
        std::pair{second, std::string("\"r2_more\": 1.0")}, std::pair{second, second_key + ": 0"},
        std::pair{first, first_key + ": \"x\""}, std::pair{second, second_key + ": -1e-10"}}) {
    err.clear();
    EXPECT_FALSE(parse_tuning(replaced(text, what, with), err)) << with;
    EXPECT_NE(err.find(message), std::string::npos) << err;
  }
}

// β beyond the cache travels in the link entry into both segments' models.
TEST(TuningFile, BetaBeyondTheCacheRoundTripsAndIsChecked) {
  TuningFile f = sample();
  f.links[1].model.large_from = 524288;
  f.links[1].model.beta_large = 1.5e-10;
  EXPECT_EQ(model_for(f, "ofi/sockets", 1 << 20).beta_large, 1.5e-10);
  expect_key_pair_checked(f, "\"large_from\": 524288.0", "\"beta_large\": 1.5e-10",
                          &CostModel::has_large, "large_from and beta_large must both be given");
}

// γ beyond the cache likewise.
TEST(TuningFile, GammaBeyondTheCacheRoundTripsAndIsChecked) {
  TuningFile f = sample();
  f.links[1].model.gamma_large_from = 699008;
  f.links[1].model.gamma_large = 1.25e-10;
  EXPECT_EQ(model_for(f, "ofi/sockets", 1 << 20).gamma_large, 1.25e-10);
  EXPECT_EQ(model_for(f, "ofi/sockets").gamma_large_from, 699008);
  expect_key_pair_checked(f, "\"gamma_large_from\": 699008.0", "\"gamma_large\": 1.25e-10",
                          &CostModel::has_gamma_large,
                          "gamma_large_from and gamma_large must both be given");
}

// α of small messages likewise, and only below the link's break.
TEST(TuningFile, AlphaOfSmallMessagesRoundTripsAndIsChecked) {
  TuningFile f = sample();
  f.links[1].model.small_below = 256;
  f.links[1].model.alpha_small = 2.5e-5;
  EXPECT_EQ(model_for(f, "ofi/sockets", 1 << 20).alpha_small, 2.5e-5);
  expect_key_pair_checked(f, "\"small_below\": 256.0", "\"alpha_small\": 2.5e-05",
                          &CostModel::has_small, "small_below and alpha_small must both be given");
  // o of small messages with them (written where measured; absent: o), not without them.
  std::string err;
  EXPECT_EQ(to_json_text(f).find("overhead_small"), std::string::npos);
  EXPECT_EQ(model_for(f, "ofi/sockets").overhead_small, -1);
  f.links[1].model.overhead_small = 1.25e-6;
  const auto with_o = parse_tuning(to_json_text(f), err);
  ASSERT_TRUE(with_o) << err;
  EXPECT_EQ(model_for(*with_o, "ofi/sockets").overhead_small, 1.25e-6);
  EXPECT_EQ(model_for(*with_o, "ofi/sockets", 1 << 20).overhead_small, 1.25e-6);
  const std::string text = to_json_text(f);
  const std::string key = "\"overhead_small\": 1.25e-06";
  ASSERT_NE(text.find(key), std::string::npos) << text;
  for (const std::string bad : {"\"overhead_small\": \"x\"", "\"overhead_small\": null"}) {
    std::string t = text;
    t.replace(t.find(key), key.size(), bad);
    EXPECT_FALSE(parse_tuning(t, err)) << bad;
    EXPECT_NE(err.find("overhead_small must be a number"), std::string::npos) << err;
  }
  std::string alone = text;
  const std::string small_key = "\"small_below\": 256.0";
  ASSERT_NE(alone.find(small_key), std::string::npos);
  alone.replace(alone.find(small_key), small_key.size(), "\"small_below_\": 256.0");
  const std::string alpha_key = "\"alpha_small\": 2.5e-05";
  ASSERT_NE(alone.find(alpha_key), std::string::npos);
  alone.replace(alone.find(alpha_key), alpha_key.size(), "\"alpha_small_\": 2.5e-05");
  EXPECT_FALSE(parse_tuning(alone, err));
  EXPECT_NE(err.find("only with small_below and alpha_small"), std::string::npos) << err;
  // K of small messages likewise.
  f.links[1].model.overhead_small = -1;
  EXPECT_EQ(to_json_text(f).find("call_wake_small"), std::string::npos);
  f.links[1].model.call_wake_small = 7.5e-6;
  const auto with_k = parse_tuning(to_json_text(f), err);
  ASSERT_TRUE(with_k) << err;
  EXPECT_EQ(model_for(*with_k, "ofi/sockets").call_wake_small, 7.5e-6);
  const std::string k_text = to_json_text(f);
  const std::string k_key = "\"call_wake_small\": 7.5e-06";
  ASSERT_NE(k_text.find(k_key), std::string::npos) << k_text;
  std::string bad_k = k_text;
  bad_k.replace(bad_k.find(k_key), k_key.size(), "\"call_wake_small\": \"x\"");
  EXPECT_FALSE(parse_tuning(bad_k, err));
  EXPECT_NE(err.find("call_wake_small must be a number"), std::string::npos) << err;
  f.links[1].model.call_wake_small = -1;
  f.links[1].model.small_below = f.links[1].break_bytes;
  EXPECT_FALSE(parse_tuning(to_json_text(f), err));
  EXPECT_NE(err.find("small_below must lie below break_bytes"), std::string::npos) << err;
}

// κ travels in the link entry ("streamed", written only when not 1) into both segments'
// models; absent means 1; zero, negative or not a number is rejected.
TEST(TuningFile, StreamedRoundTripsAndIsChecked) {
  TuningFile f = sample();
  f.links[1].model.streamed = 0.625;
  const std::string text = to_json_text(f);
  std::string err;
  const auto g = parse_tuning(text, err);
  ASSERT_TRUE(g) << err;
  EXPECT_EQ(to_json_text(*g), text);
  EXPECT_EQ(model_for(*g, "ofi/sockets").streamed, 0.625);
  EXPECT_EQ(model_for(*g, "ofi/sockets", 1 << 20).streamed, 0.625);
  EXPECT_EQ(model_for(*g, "shm").streamed, 1);
  EXPECT_EQ(text.find("\"streamed\""), text.rfind("\"streamed\""));  // shm: none
  const std::string entry = "\"streamed\": 0.625";
  ASSERT_NE(text.find(entry), std::string::npos) << text;
  const auto h = parse_tuning(replaced(text, entry, "\"r2_more\": 1.0"), err);
  ASSERT_TRUE(h) << err;
  EXPECT_EQ(model_for(*h, "ofi/sockets").streamed, 1);
  for (const char* bad : {"\"streamed\": 0", "\"streamed\": -0.5", "\"streamed\": \"x\""}) {
    err.clear();
    EXPECT_FALSE(parse_tuning(replaced(text, entry, bad), err)) << bad;
    EXPECT_NE(err.find("streamed must be a number > 0"), std::string::npos) << err;
  }
}

// χα above the break and K travel in the link entry: χα above into the upper segment's model
// only, K into the lower one and K above the break into the upper one; absent means χα and 0;
// out of range or not a number is rejected.
TEST(TuningFile, ExchangesAboveTheBreakAndACallsFirstWakeUpRoundTrip) {
  TuningFile f = sample();
  f.links[1].exchange_alpha_above = 2.5;
  f.links[1].model.call_wake = 4e-5;
  f.links[1].call_wake_above = 1.5e-5;
  f.links[1].model.exchange_alpha = 5.5;  // above kExchangeMax, within what a file may hold
  const std::string text = to_json_text(f);
  std::string err;
  const auto g = parse_tuning(text, err);
  ASSERT_TRUE(g) << err;
  EXPECT_EQ(to_json_text(*g), text);
  EXPECT_EQ(model_for(*g, "ofi/sockets").exchange_alpha, 5.5);
  EXPECT_EQ(model_for(*g, "ofi/sockets", 1 << 20).exchange_alpha, 2.5);
  EXPECT_EQ(model_for(*g, "ofi/sockets").call_wake, 4e-5);
  EXPECT_EQ(model_for(*g, "ofi/sockets", 1 << 20).call_wake, 1.5e-5);  // the upper segment's
  const auto link = link_model_for(*g, "ofi/sockets");
  ASSERT_TRUE(link);
  EXPECT_EQ(link->above.exchange_alpha, 2.5);
  EXPECT_EQ(link->above.call_wake, 1.5e-5);
  EXPECT_EQ(link->below.call_wake, 4e-5);
  EXPECT_EQ(link->below.exchange_alpha, 5.5);
  EXPECT_EQ(model_for(*g, "shm").call_wake, 0);
  const std::string above = "\"exchange_alpha_above\": 2.5", call = "\"call_wake\": 4e-05",
                    call_above = "\"call_wake_above\": 1.5e-05";
  ASSERT_NE(text.find(above), std::string::npos) << text;
  ASSERT_NE(text.find(call), std::string::npos) << text;
  ASSERT_NE(text.find(call_above), std::string::npos) << text;
  const auto h = parse_tuning(
      replaced(replaced(replaced(text, above, "\"r2_more\": 1.0"), call, "\"r2_less\": 1.0"),
               call_above, "\"r2_most\": 1.0"),
      err);
  ASSERT_TRUE(h) << err;
  EXPECT_EQ(model_for(*h, "ofi/sockets", 1 << 20).exchange_alpha, 5.5);
  EXPECT_EQ(model_for(*h, "ofi/sockets").call_wake, 0);
  EXPECT_EQ(model_for(*h, "ofi/sockets", 1 << 20).call_wake, 0);
  for (const auto& [what, with, message] :
       {std::tuple{above, std::string("\"exchange_alpha_above\": 9"),
                   "exchange_alpha_above must be a number in"},
        std::tuple{above, std::string("\"exchange_alpha_above\": \"x\""),
                   "exchange_alpha_above must be a number in"},
        std::tuple{call, std::string("\"call_wake\": -1e-6"), "call_wake must be a number >= 0"},
        std::tuple{call, std::string("\"call_wake\": \"x\""), "call_wake must be a number"},
        std::tuple{call_above, std::string("\"call_wake_above\": -1e-6"),
                   "call_wake_above must be a number >= 0"},
        std::tuple{call_above, std::string("\"call_wake_above\": \"x\""),
                   "call_wake_above must be a number"}}) {
    err.clear();
    EXPECT_FALSE(parse_tuning(replaced(text, what, with), err)) << with;
    EXPECT_NE(err.find(message), std::string::npos) << err;
  }
}

// Reduce + bcast is costed as the two calls it makes (Algorithm::parts): the binomial reduce's
// prediction plus the binomial broadcast's, each with its own K, W, written and exchange shares,
// so a call's first wake-up K twice. Under the texts' model (no K, W, ω or χ) that is LAWN 29's
// Version 1 at p = 2^d, 2d(α + βn) + dγn, its own formula.
TEST(Crossover, ReduceBcastIsCostedAsItsTwoCalls) {
  const Algorithm* rb = find_algorithm(Collective::allreduce, "reduce_bcast");
  const Algorithm* reduce = find_algorithm(Collective::reduce, "binomial");
  const Algorithm* bcast = find_algorithm(Collective::bcast, "binomial");
  for (const Algorithm* a : {rb, reduce, bcast}) ASSERT_NE(a, nullptr);
  ASSERT_EQ(rb->parts.size(), 2u);
  EXPECT_EQ(rb->parts[0], reduce);
  // The binomial broadcast of the result its root combined: the broadcast's run and formula,
  // every byte written (the broadcast's own share counts its root's sends as input).
  const Algorithm* result = rb->parts[1];
  EXPECT_EQ(result->coll, Collective::bcast);
  EXPECT_EQ(result->name, "binomial");
  EXPECT_EQ(result->run, bcast->run);
  EXPECT_EQ(result->cost, bcast->cost);
  ASSERT_NE(result->written_share, nullptr);
  CostQuery q4;
  q4.n = 65536;
  q4.p = 4;
  EXPECT_EQ(result->written_share(q4), 1.0);
  EXPECT_LT(bcast->written_share(q4), 1.0);
  CostModel m{7.4e-6, 2.7e-10, 4.9e-11};
  m.call_wake = 2.4e-5;
  m.wake = 3.8e-6;
  m.exchange_alpha = 5.5;
  m.exchange_beta = 3.1;
  m.written = 1.5;
  for (const int p : {2, 4, 5, 8})
    for (const double n : {256.0, 18424.0, 393216.0}) {
      CostQuery q;
      q.n = n;
      q.p = p;
      q.m = m;
      const double sum = reduce->predict(q) + result->predict(q);
      EXPECT_NEAR(rb->predict(q), sum, 1e-12 * sum) << p << " " << n;
      EXPECT_NEAR(algorithm_cost(*rb, n, p, m),
                  algorithm_cost(*reduce, n, p, m) + algorithm_cost(*result, n, p, m), 1e-12 * sum);
      // ω = 1.5 on written bytes: more than the broadcast alone is charged.
      EXPECT_GT(rb->predict(q), reduce->predict(q) + bcast->predict(q)) << p << " " << n;
    }
  CostModel once = m;
  once.call_wake = 0;
  EXPECT_NEAR(algorithm_cost(*rb, 2048, 4, m) - algorithm_cost(*rb, 2048, 4, once), 2 * m.call_wake,
              1e-12);
  // Below the inject size (α of small messages; fifty-first session) the broadcast after the
  // reduce pays no K: its receivers have just sent, and its injected first message finds
  // them awake. At and above it, and without α of small messages, K twice as before.
  CostModel sm = m;
  sm.small_below = 256;
  sm.alpha_small = 3e-6;
  sm.call_wake_small = 1.8e-5;
  ASSERT_TRUE(sm.has_small());
  CostModel sm0 = sm;
  sm0.call_wake = 0;
  sm0.call_wake_small = 0;
  for (const double n : {128.0, 255.0, 256.0, 2048.0}) {
    const double k_paid = algorithm_cost(*rb, n, 4, sm) - algorithm_cost(*rb, n, 4, sm0);
    const double k_call = algorithm_cost(*reduce, n, 4, sm) - algorithm_cost(*reduce, n, 4, sm0);
    EXPECT_GT(k_call, 0) << n;
    EXPECT_NEAR(k_paid, n < 256 ? k_call : 2 * k_call, 1e-12) << n;
  }
  EXPECT_NEAR(algorithm_cost(*rb, 128, 4, m) - algorithm_cost(*rb, 128, 4, once), 2 * m.call_wake,
              1e-12);
  // As the selector costs it (segment_k mixes K_s in for rounds below small_below): at 128 B
  // K_s once; at 512 B K twice.
  for (const double n : {128.0, 512.0}) {
    const LinkModel with = LinkModel::uniform(sm), without = LinkModel::uniform(sm0);
    const double k_paid = algorithm_cost(*rb, n, 4, with) - algorithm_cost(*rb, n, 4, without);
    EXPECT_NEAR(k_paid, n < 256 ? sm.call_wake_small : 2 * sm.call_wake, 1e-12) << n;
  }
  // The two-tree all-reduce, a reduce and then a broadcast in one algorithm: K twice too
  // (Algorithm::calls), on the share of its path not in exchanges; recursive doubling once.
  const Algorithm* tt = find_algorithm(Collective::allreduce, "two_tree");
  const Algorithm* rd = find_algorithm(Collective::allreduce, "recursive_doubling");
  ASSERT_NE(tt, nullptr);
  ASSERT_NE(rd, nullptr);
  EXPECT_EQ(tt->calls, 2);
  EXPECT_EQ(rd->calls, 1);
  for (const double k : {1.0, 4.0}) {
    CostQuery q;
    q.n = 65536;
    q.p = 4;
    q.k = k;
    q.m = m;
    CostQuery q0 = q;
    q0.m = once;
    EXPECT_NEAR(tt->predict(q) - tt->predict(q0),
                2 * m.call_wake * (1 - tt->clamped_exchange_share(q)), 1e-12)
        << k;
    EXPECT_NEAR(rd->predict(q) - rd->predict(q0), 0, 1e-12);  // all exchanges
  }
  const CostModel texts{7.4e-6, 2.7e-10, 4.9e-11};
  for (const int p : {2, 4, 8})
    for (const double n : {1.0, 2048.0, 1e6}) {
      CostQuery q;
      q.n = n;
      q.p = p;
      q.m = texts;
      const double d = std::log2(p);
      const double lawn = 2 * d * (texts.alpha + texts.beta * n) + d * texts.gamma * n;
      EXPECT_NEAR(rb->predict(q), lawn, 1e-12 * lawn) << p << " " << n;
      EXPECT_NEAR(rb->cost(q), lawn, 1e-12 * lawn) << p << " " << n;
    }
}

// W is charged to the one-way rounds of the fan-in collectives' whole-message algorithms only:
// the binomial reduce's rounds (a from linear_cost_terms) each add W, and so do reduce +
// bcast's reduce rounds (not its broadcast's) and the barrier's, recursive doubling's (all
// exchanges) none, nor the broadcast's nor the pipelined two-tree all-reduce's. At p = 4 with this
// machine's p = 4 shm fit (α 2.9 µs, χ 1.9, W 2.2 µs) it moves the barrier choice away from the
// binomial tree's one-way rounds, as measured there: fabcoll-bench barrier, binomial 22.1–24.4 µs
// against the dissemination barrier's 12.4–14.1.
TEST(Crossover, WakeUpChargesOneWayRoundsOfFanInCollectives) {
  CostModel m{2.9e-6, 9.5e-11, 2.6e-11, 1.1e-7};
  m.exchange_alpha = m.exchange_beta = 1.9;
  CostModel w = m;
  w.wake = 2.2e-6;
  const auto extra = [&](Collective c, const char* name, double n) {
    const Algorithm* alg = find_algorithm(c, name);
    EXPECT_NE(alg, nullptr) << name;
    if (alg == nullptr) return -1.0;
    return algorithm_cost(*alg, n, 4, w) - algorithm_cost(*alg, n, 4, m);
  };
  for (const double n : {256.0, 16384.0}) {
    double a = 0, b = 0, c = 0;
    EXPECT_NEAR(extra(Collective::allreduce, "recursive_doubling", n), 0, 1e-12) << n;
    EXPECT_NEAR(extra(Collective::bcast, "binomial", n), 0, 1e-12) << n;
    EXPECT_NEAR(extra(Collective::scatter, "binomial", n), 0, 1e-12) << n;
    ASSERT_TRUE(
        linear_cost_terms(*find_algorithm(Collective::reduce, "binomial"), n, 4, m, a, b, c));
    EXPECT_GE(a, 2);
    EXPECT_NEAR(extra(Collective::reduce, "binomial", n), a * w.wake, 1e-12) << n;
    // Reduce + bcast: its reduce's rounds, not its broadcast's (Algorithm::parts).
    EXPECT_NEAR(extra(Collective::allreduce, "reduce_bcast", n), a * w.wake, 1e-12) << n;
    // The two-tree all-reduce's rounds too, pipelined or not: W on the share of each round not
    // in exchanges (none at one packet), as the whole-message algorithms' (rounds: its cost at
    // unit α, at the same packet count).
    const Algorithm* tt = find_algorithm(Collective::allreduce, "two_tree");
    ASSERT_NE(tt, nullptr);
    for (const double k : {1.0, 4.0}) {
      CostQuery q;
      q.n = n;
      q.p = 4;
      q.k = k;
      q.m = CostModel{1, 0, 0};
      const double rounds = tt->predict(q);
      const double e = tt->clamped_exchange_share(q);
      q.m = w;
      const double with = tt->predict(q);
      q.m = m;
      EXPECT_NEAR(with - tt->predict(q), rounds * (1 - e) * w.wake, 1e-12) << n << " k " << k;
      EXPECT_GT(rounds * (1 - e), 2) << n << " k " << k;
    }
  }
  double a = 0, b = 0, c = 0;
  ASSERT_TRUE(
      linear_cost_terms(*find_algorithm(Collective::barrier, "binomial"), 0, 4, m, a, b, c));
  EXPECT_NEAR(extra(Collective::barrier, "binomial", 0), a * w.wake, 1e-12);
  const Algorithm* bin = find_algorithm(Collective::barrier, "binomial");
  const Algorithm* dis = find_algorithm(Collective::barrier, "dissemination");
  ASSERT_NE(bin, nullptr);
  ASSERT_NE(dis, nullptr);
  EXPECT_GT(algorithm_cost(*bin, 0, 4, w), 1.5 * algorithm_cost(*dis, 0, 4, w));
}

// With χ measured, an algorithm is charged for the share of its critical path spent in
// exchanges. At p = 4 van de Geijn's scatter + all-gather (half its bytes exchanged) beats the
// binomial tree on large messages under the texts' model and loses when exchanges cost twice
// the β (this machine's sockets provider: 1.36–1.92 in fabcoll-calibrate's exchanges).
TEST(Crossover, ExchangeCostMovesTheBcastChoiceAtP4) {
  CostModel m{1e-5, 1.7e-10, 2.5e-11};
  const Algorithm* bin = find_algorithm(Collective::bcast, "binomial");
  const Algorithm* sag = find_algorithm(Collective::bcast, "scatter_allgather");
  ASSERT_NE(bin, nullptr);
  ASSERT_NE(sag, nullptr);
  const double n = 1 << 22;
  EXPECT_LT(algorithm_cost(*sag, n, 4, m), algorithm_cost(*bin, n, 4, m));
  m.exchange_alpha = 1.4;
  m.exchange_beta = 2;
  EXPECT_GT(algorithm_cost(*sag, n, 4, m), algorithm_cost(*bin, n, 4, m));
  // Binomial has no exchange: its cost is unchanged, 2(α + βn).
  EXPECT_DOUBLE_EQ(algorithm_cost(*bin, n, 4, m), 2 * (m.alpha + m.beta * n));
  // Recursive doubling exchanges in every step: d(χα α + χβ βn + γn).
  const Algorithm* rd = find_algorithm(Collective::allreduce, "recursive_doubling");
  ASSERT_NE(rd, nullptr);
  EXPECT_DOUBLE_EQ(algorithm_cost(*rd, n, 4, m),
                   2 * (1.4 * m.alpha + 2 * m.beta * n + m.gamma * n));
}

// With ω measured, the selector charges Rabenseifner's written half at p = 2 (f = 1/2) and
// recursive doubling nothing (it sends its input only): on a link where written data costs
// twice as much, recursive doubling wins at every size, as measured on this machine (p = 2,
// 64 KiB … 16 MiB, fabcoll-bench allreduce --algorithm …: 12–5733 against 21–6433 µs).
TEST(Crossover, WrittenDataMovesTheAllreduceChoiceAtP2) {
  CostModel m{1e-6, 1.5e-10, 2.5e-11, 1e-7};
  const Algorithm* rd = find_algorithm(Collective::allreduce, "recursive_doubling");
  const Algorithm* rab = find_algorithm(Collective::allreduce, "rabenseifner");
  ASSERT_NE(rd, nullptr);
  ASSERT_NE(rab, nullptr);
  EXPECT_EQ(fastest(Collective::allreduce, 1 << 22, 2, m, true), rab);  // ω = 1: γn/2 > α
  m.written = 2;
  for (double n : {1024.0, 65536.0, 1048576.0, 16777216.0}) {
    EXPECT_EQ(fastest(Collective::allreduce, n, 2, m, true), rd) << n;
    EXPECT_DOUBLE_EQ(algorithm_cost(*rab, n, 2, m),
                     2 * m.alpha + 1.5 * m.beta * n + m.gamma * n / 2);
  }
  // On shm with a core per rank, messages below the single-copy threshold go through rings
  // whose cells the sender writes anyway: ω is not charged to them (written_from, which the
  // context sets to that threshold). Rabenseifner's messages at p = 2 are n/2: at 32 KiB
  // (16 KiB messages) no ω, at 64 KiB (32 KiB messages) ω again.
  m.written_from = 32768;
  EXPECT_DOUBLE_EQ(algorithm_cost(*rab, 32768, 2, m),
                   2 * m.alpha + m.beta * 32768 + m.gamma * 32768 / 2);
  EXPECT_DOUBLE_EQ(algorithm_cost(*rab, 65536, 2, m),
                   2 * m.alpha + 1.5 * m.beta * 65536 + m.gamma * 65536 / 2);
  CostQuery q;
  q.n = 32768;
  q.p = 2;
  q.m = m;
  EXPECT_EQ(rab->mean_message(q), 16384);
}

// A file without "overhead" (written before calibrate measured it) loads with o not measured
// (overhead < 0, o = α: the texts' model), schema unchanged; a negative value reads the same.
TEST(TuningFile, FileWithoutOverheadMeansOEqualsAlpha) {
  TuningFile f = sample();
  f.links[0].model.overhead = 2e-7;
  const std::string text = to_json_text(f);
  const std::string entry = "\"overhead\": 2e-07";
  ASSERT_NE(text.find(entry), std::string::npos) << text;
  const std::string without = replaced(text, entry, "\"r2_extra\": 0.0");  // key gone
  ASSERT_EQ(without.find("overhead"), std::string::npos);
  std::string err;
  const auto g = parse_tuning(without, err);
  ASSERT_TRUE(g) << err;
  EXPECT_EQ(g->schema_version, kSchemaVersion);
  EXPECT_LT(g->links[0].model.overhead, 0);
  EXPECT_LT(model_for(*g, "shm").overhead, 0);
  EXPECT_EQ(model_for(*g, "shm").send_overhead(), model_for(*g, "shm").alpha);
  const auto n = parse_tuning(replaced(text, entry, "\"overhead\": -5.0"), err);
  ASSERT_TRUE(n) << err;
  EXPECT_EQ(n->links[0].model.overhead, -1);
  EXPECT_FALSE(parse_tuning(replaced(text, entry, "\"overhead\": \"x\""), err));
}

TEST(TuningFile, ModelFor) {
  const TuningFile f = sample();
  const CostModel shm = model_for(f, "shm");
  EXPECT_EQ(shm.alpha, 1.5e-6);
  EXPECT_EQ(shm.gamma, 7e-11);  // measured (sum, float64) wins over the link's own γ
  EXPECT_EQ(model_for(f, "ofi/sockets").alpha, 2e-5);
  EXPECT_EQ(model_for(f, "ofi").alpha, 2e-5);                   // prefix match
  EXPECT_EQ(model_for(f, "ofi/tcp;ofi_rxm").beta, 8e-10);       // same family
  EXPECT_EQ(model_for(f, "ofi/sockets", 1 << 20).alpha, 6e-5);  // above the break
  EXPECT_EQ(model_for(f, "inproc").alpha, CostModel{}.alpha);   // unknown: defaults
  EXPECT_EQ(*gamma_for(f, "max", "int32"), 5e-11);
  EXPECT_FALSE(gamma_for(f, "min", "int32"));
}

TEST(TuningFile, RejectsWrongSchemaAndGarbage) {
  std::string err;
  EXPECT_FALSE(parse_tuning("{ not json", err));
  EXPECT_NE(err.find("JSON"), std::string::npos);
  EXPECT_FALSE(parse_tuning(R"({"format":"something-else","schema_version":1})", err));
  EXPECT_NE(err.find("format"), std::string::npos);
  std::string text = to_json_text(sample());
  const auto pos = text.find("\"schema_version\": 2");
  ASSERT_NE(pos, std::string::npos);
  text.replace(pos, 19, "\"schema_version\": 99");
  EXPECT_FALSE(parse_tuning(text, err));
  EXPECT_NE(err.find("99"), std::string::npos);
  EXPECT_FALSE(parse_tuning(
      R"({"format":"fabcoll-tuning","schema_version":1,"machine":{"hostname":3}})", err));
  EXPECT_NE(err.find("malformed"), std::string::npos);
  EXPECT_FALSE(parse_tuning(R"({"format":"fabcoll-tuning","schema_version":1})", err));
}

// Issue 6: the same link class measured in another layout (4 ranks time-sharing 2 cores) is an
// entry of its own; model_for takes the one whose layout matches the job's.
TEST(TuningFile, LayoutEntriesArePickedByLocalRanks) {
  TuningFile f = sample();
  f.machine.cores = 2;
  LinkParams over = f.links[0];  // shm, quiet: α = 1.5e-6
  over.model.alpha = 7e-6;
  over.model.beta = 4e-10;
  over.local_ranks = 4;
  f.links.push_back(over);
  EXPECT_EQ(layout_key(4, 2), 4);
  EXPECT_EQ(layout_key(2, 2), 0);
  EXPECT_EQ(layout_key(4, 0), 0);  // cores unknown: quiet
  EXPECT_EQ(layout_name(4, 2), "4 ranks on 2 cores");
  EXPECT_EQ(layout_name(1, 2), "quiet");
  EXPECT_EQ(model_for(f, "shm").alpha, 1.5e-6);        // local ranks unknown: quiet
  EXPECT_EQ(model_for(f, "shm", 0, 2).alpha, 1.5e-6);  // 2 ranks on 2 cores: quiet
  EXPECT_EQ(model_for(f, "shm", 0, 4).alpha, 7e-6);    // the layout measured
  EXPECT_EQ(model_for(f, "shm", 0, 4).beta, 4e-10);
  EXPECT_EQ(model_for(f, "shm", 0, 3).alpha, 7e-6);          // oversubscribed: nearest layout
  EXPECT_EQ(model_for(f, "ofi/sockets", 0, 4).alpha, 2e-5);  // class without it: its quiet one
  ASSERT_NE(link_for(f, "shm", 4), nullptr);
  EXPECT_EQ(link_for(f, "shm", 4)->local_ranks, 4);
  EXPECT_EQ(link_for(f, "inproc", 4), nullptr);
  // Two oversubscribed layouts: the exact one, else the nearest.
  LinkParams over8 = over;
  over8.local_ranks = 8;
  over8.model.alpha = 9e-6;
  f.links.push_back(over8);
  EXPECT_EQ(model_for(f, "shm", 0, 8).alpha, 9e-6);
  EXPECT_EQ(model_for(f, "shm", 0, 7).alpha, 9e-6);
  EXPECT_EQ(model_for(f, "shm", 0, 5).alpha, 7e-6);
  EXPECT_EQ(model_for(f, "shm", 0, 1).alpha, 1.5e-6);
  // Round trip keeps the layout; the text names it.
  std::string err;
  const std::string text = to_json_text(f);
  EXPECT_NE(text.find("4 ranks on 2 cores"), std::string::npos);
  const auto g = parse_tuning(text, err);
  ASSERT_TRUE(g) << err;
  ASSERT_EQ(g->links.size(), 4u);
  EXPECT_EQ(g->links[2].local_ranks, 4);
  EXPECT_EQ(model_for(*g, "shm", 0, 4).alpha, 7e-6);
  // A file with only the oversubscribed entry still serves a quiet job (better than nothing).
  TuningFile only = f;
  only.links = {over};
  EXPECT_EQ(model_for(only, "shm", 0, 2).alpha, 7e-6);
}

TEST(NodeMap, CpuMappingNamesWhichRanksShareACpu) {
  using fabcoll::cpu_mapping;
  EXPECT_EQ(cpu_mapping({}), "");
  EXPECT_EQ(cpu_mapping({3}), "");
  EXPECT_EQ(cpu_mapping({0, 1}), "");           // one rank per CPU
  EXPECT_EQ(cpu_mapping({1, 0, 2}), "");        // one rank per CPU, any order
  EXPECT_EQ(cpu_mapping({0, -1}), "unpinned");  // cores not known
  EXPECT_EQ(cpu_mapping({0, -1}, 2), "");       // 2 ranks, 2 cores: none need share
  EXPECT_EQ(cpu_mapping({-1, -1, -1}, 2), "unpinned");
  EXPECT_EQ(cpu_mapping({0, 1, 0, 1}), "cyclic");  // fabcoll-run --bind-to core
  EXPECT_EQ(cpu_mapping({0, 0, 1, 1}), "block");   // --map-by block
  EXPECT_EQ(cpu_mapping({4, 6, 4, 6, 4}), "cyclic");
  EXPECT_EQ(cpu_mapping({4, 4, 4, 6, 6}), "block");  // rank i on the floor(2i/5)-th
  EXPECT_EQ(cpu_mapping({1, 0, 1, 0}), "other");     // cyclic over CPUs in descending order
  EXPECT_EQ(cpu_mapping({0, 1, 1, 0}), "other");
  EXPECT_EQ(cpu_mapping({2, 2, 2}), "cyclic");  // all on one CPU: both patterns; cyclic first
}

TEST(TuningFile, OversubscribedEntriesArePickedByMapping) {
  // Which ranks share a CPU decides which algorithm is fastest (README, Calibration): entries
  // of one layout measured under different mappings are kept apart and matched.
  TuningFile f = sample();
  f.machine.cores = 2;
  LinkParams cyclic = f.links[0];  // shm
  cyclic.local_ranks = 4;
  cyclic.mapping = "cyclic";
  cyclic.model.alpha = 7e-6;
  LinkParams block = cyclic;
  block.mapping = "block";
  block.model.alpha = 5e-6;
  f.links.push_back(cyclic);
  f.links.push_back(block);
  EXPECT_EQ(model_for(f, "shm", 0, 4, "block").alpha, 5e-6);
  EXPECT_EQ(model_for(f, "shm", 0, 4, "cyclic").alpha, 7e-6);
  EXPECT_EQ(model_for(f, "shm", 0, 4).alpha, 7e-6);              // mapping not known: the first
  EXPECT_EQ(model_for(f, "shm", 0, 4, "unpinned").alpha, 7e-6);  // none measured so: the first
  EXPECT_EQ(model_for(f, "shm", 0, 2, "block").alpha, 1.5e-6);   // quiet: mapping irrelevant
  EXPECT_EQ(model_for(f, "shm", 0, 5, "block").alpha, 5e-6);     // nearest layout, same mapping
  EXPECT_EQ(model_for(f, "shm", 0, 3, "cyclic").alpha, 7e-6);
  ASSERT_TRUE(link_model_for(f, "shm", 4, "block"));
  EXPECT_EQ(link_model_for(f, "shm", 4, "block")->below.alpha, 5e-6);
  EXPECT_EQ(layout_name(4, 2, "block"), "4 ranks on 2 cores, block");
  EXPECT_EQ(layout_name(2, 2, "block"), "quiet");
  // Round trip: the mapping and the layout text that names it.
  std::string err;
  const std::string text = to_json_text(f);
  EXPECT_NE(text.find("\"layout\": \"4 ranks on 2 cores, block\""), std::string::npos) << text;
  const auto g = parse_tuning(text, err);
  ASSERT_TRUE(g) << err;
  EXPECT_EQ(g->links[0].mapping, "");
  EXPECT_EQ(g->links[3].mapping, "block");
  EXPECT_EQ(model_for(*g, "shm", 0, 4, "block").alpha, 5e-6);
  // Merging: a fresh calibration under block replaces the old block entry only; an old entry
  // of unknown mapping (files before the mapping) gives way to any fresh one of its layout.
  TuningFile fresh = f;
  fresh.links = {block};
  fresh.links[0].model.alpha = 6e-6;
  EXPECT_EQ(merge_tuning(fresh, f), 3);  // shm quiet, ofi/sockets quiet, shm 4 cyclic kept
  EXPECT_EQ(model_for(fresh, "shm", 0, 4, "block").alpha, 6e-6);
  EXPECT_EQ(model_for(fresh, "shm", 0, 4, "cyclic").alpha, 7e-6);
  TuningFile unknown = f;
  unknown.links = {f.links[0], cyclic};
  unknown.links[1].mapping = "";
  TuningFile fresh2 = f;
  fresh2.links = {block};
  EXPECT_EQ(merge_tuning(fresh2, unknown), 1);  // only the quiet shm entry kept
  EXPECT_EQ(model_for(fresh2, "shm", 0, 4, "cyclic").alpha, 5e-6);
}

TEST(TuningFile, ReadsSchemaVersion1) {
  // A version 1 file (no local_ranks): its links are the quiet layout.
  std::string text = to_json_text(sample());
  const auto pos = text.find("\"schema_version\": 2");
  ASSERT_NE(pos, std::string::npos);
  text.replace(pos, 19, "\"schema_version\": 1");
  for (std::size_t at; (at = text.find("\"local_ranks\": 0,")) != std::string::npos;)
    text.erase(at, 17);
  ASSERT_EQ(text.find("local_ranks"), std::string::npos);
  std::string err;
  const auto f = parse_tuning(text, err);
  ASSERT_TRUE(f) << err;
  EXPECT_EQ(f->schema_version, kSchemaVersion);
  ASSERT_EQ(f->links.size(), 2u);
  EXPECT_EQ(f->links[0].local_ranks, 0);
  EXPECT_EQ(model_for(*f, "shm", 0, 64).alpha, 1.5e-6);
  // Version 0 and versions after this build's are rejected, saying which ones it reads.
  text.replace(text.find("\"schema_version\": 1"), 19, "\"schema_version\": 0");
  EXPECT_FALSE(parse_tuning(text, err));
  EXPECT_NE(err.find("reads 1 to 2"), std::string::npos) << err;
}

TEST(TuningFile, MergeKeepsOtherLayoutsAndClasses) {
  TuningFile old = sample();  // shm quiet, ofi/sockets quiet; crossovers and k rules at p = 4
  old.machine.cores = 2;
  old.crossovers.push_back({"bcast", 2, "shm", {{"binomial", 1, 1 << 30}}});
  TuningFile fresh = old;
  LinkParams over = old.links[0];
  over.local_ranks = 4;
  over.model.alpha = 7e-6;
  fresh.links = {over};
  fresh.crossovers = {{"bcast", 4, "shm", {{"two_tree", 1, 1 << 30}}}};
  fresh.k_rules = {};
  EXPECT_EQ(merge_tuning(fresh, old), 2);  // both quiet entries kept
  ASSERT_EQ(fresh.links.size(), 3u);
  EXPECT_EQ(model_for(fresh, "shm", 0, 4).alpha, 7e-6);
  EXPECT_EQ(model_for(fresh, "shm", 0, 2).alpha, 1.5e-6);
  ASSERT_EQ(fresh.crossovers.size(), 2u);  // p = 4 shm replaced, p = 2 shm kept
  EXPECT_EQ(fresh.crossovers[0].segments[0].algorithm, "two_tree");
  EXPECT_EQ(fresh.crossovers[1].p, 2);
  EXPECT_EQ(fresh.k_rules.size(), 1u);  // fresh had none for (4, shm): the old ones stay
  // A fresh entry of the same class and layout replaces the old one.
  TuningFile again = old;
  again.links = {old.links[0]};
  again.links[0].model.alpha = 3e-6;
  EXPECT_EQ(merge_tuning(again, old), 1);  // only ofi/sockets kept
  EXPECT_EQ(model_for(again, "shm").alpha, 3e-6);
}

TEST(TuningFile, RejectsAnotherMachineWithNotice) {
  TuningFile f = sample();
  f.machine.hostname = "some-other-host";
  const std::string path = temp_path("other.json");
  std::string err;
  ASSERT_TRUE(save_tuning(f, path, err));
  std::string notice;
  EXPECT_FALSE(load_tuning_from(path, notice));
  EXPECT_NE(notice.find("some-other-host"), std::string::npos) << notice;
  EXPECT_NE(notice.find("built-in defaults"), std::string::npos) << notice;
  EXPECT_EQ(notice.find('\n'), std::string::npos);  // one line
  f.machine = this_machine();
  f.machine.cores += 1;
  ASSERT_TRUE(save_tuning(f, path, err));
  EXPECT_FALSE(load_tuning_from(path, notice));
  EXPECT_NE(notice.find("cores"), std::string::npos) << notice;
  f.machine = this_machine();
  f.machine.fabcoll_version = "0.0.1";
  ASSERT_TRUE(save_tuning(f, path, err));
  EXPECT_TRUE(load_tuning_from(path, notice));  // accepted, with a remark
  EXPECT_NE(notice.find("0.0.1"), std::string::npos) << notice;
  std::filesystem::remove(path);
}

TEST(TuningFile, LoadTuningFollowsEnvironment) {
  const char* old = std::getenv("FABCOLL_TUNING");
  const std::string saved = old != nullptr ? old : "";
  std::string notice;
  const std::string missing = temp_path("missing.json");
  setenv("FABCOLL_TUNING", missing.c_str(), 1);
  EXPECT_EQ(tuning_path(), missing);
  EXPECT_FALSE(load_tuning(notice));
  EXPECT_NE(notice.find("cannot be read"), std::string::npos) << notice;
  const std::string good = temp_path("good.json");
  std::string err;
  ASSERT_TRUE(save_tuning(sample(), good, err));
  setenv("FABCOLL_TUNING", good.c_str(), 1);
  EXPECT_TRUE(load_tuning(notice));
  EXPECT_EQ(notice, "");
  // No FABCOLL_TUNING: the XDG path; absent there is silent.
  unsetenv("FABCOLL_TUNING");
  const std::string xdg = temp_path("xdg");
  setenv("XDG_CONFIG_HOME", xdg.c_str(), 1);
  EXPECT_EQ(tuning_path(), xdg + "/fabcoll/tuning.json");
  EXPECT_FALSE(load_tuning(notice));
  EXPECT_EQ(notice, "");
  unsetenv("XDG_CONFIG_HOME");
  std::filesystem::remove(good);
  if (old != nullptr) setenv("FABCOLL_TUNING", saved.c_str(), 1);
}

}  // namespace
}  // namespace fabcoll::tuning
