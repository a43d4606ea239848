#include "tuning/fit.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <set>

namespace fabcoll::tuning {

namespace {

double weight(const Point& p, Weighting w) {
  if (w == Weighting::uniform) return 1.0;
  return p.t > 0 ? 1.0 / (p.t * p.t) : 0.0;
}

constexpr int kParams = kCostFitParams;

/// fit_cost_points' search: the least-SSE solution over every subset of the parameters (the
/// others held at 0) whose solution is non-negative, given the weighted normal equations (ata,
/// aty; yty = Σ w y²). A subset is solved by Gaussian elimination on its normal equations; a
/// pivot below 1e-12 of its diagonal (a column of zeros, or one that others explain) makes it
/// singular. The least SSE wins, and of equal ones the subset of the lowest bit mask (none, x = 0,
/// the lowest of all), as a search in increasing mask order keeps the first.
///
/// Depth first, a subset extending its parent by one column of a higher index: the parent's
/// elimination is the child's over its first rows and columns, so the child adds a column and a
/// row (O(n²), the same operations in the same order as eliminating it whole, O(n³)), and a
/// subset singular at its last pivot is singular in every subset that adds columns of higher
/// index to it (not searched).
/// Its SSE sums the subset's terms alone, in the same order (the others' are 0). The same
/// results, bit for bit, as searching the masks in increasing order and eliminating each whole
/// (20 000 random problems, degenerate ones among them), in 0.30 ms a fit where that took 0.70
/// (fabcoll-fit-bench, BM_fit_cost_points: 100 points, every column reached; medians of three
/// pinned runs each).
class SubsetSearch {
 public:
  SubsetSearch(const double (&ata)[kParams][kParams], const double (&aty)[kParams], double yty)
      : ata_(ata), aty_(aty), yty_(yty) {
    for (int j = 0; j < kParams; ++j)
      if (ata_[j][j] > 0) active_ |= 1 << j;  // the columns some point reaches
    best_sse_ = sse_of(best_);
    extend(0, 0, 0);
  }
  const double (&best() const)[kParams] { return best_; }

 private:
  /// The weighted SSE Σ((t − c − Σ col·x)/t)² from the normal equations: yᵀy − 2xᵀAᵀy + xᵀAᵀAx.
  double sse_of(const double (&x)[kParams]) const {
    double e = yty_;
    for (int i = 0; i < kParams; ++i) {
      if (x[i] == 0) continue;
      e -= 2 * x[i] * aty_[i];
      for (int j = 0; j < kParams; ++j) e += x[i] * ata_[i][j] * x[j];
    }
    return e;
  }

  /// The subsets of the n columns idx_[0..n) (bit mask `mask`, eliminated into u_, rhs_, q_)
  /// and one more column from `from` up.
  void extend(int n, int from, int mask) {
    for (int j = from; j < kParams; ++j) {
      if ((active_ & (1 << j)) == 0) continue;
      // Column j at position n, through the rows' elimination so far.
      for (int r = 0; r < n; ++r) {
        double v = ata_[idx_[r]][j];
        for (int k = 0; k < r; ++k) v -= q_[r][k] * u_[k][n];
        u_[r][n] = v;
      }
      // Row n: its entries at the columns before, then eliminated by the rows above.
      for (int c = 0; c < n; ++c) u_[n][c] = ata_[j][idx_[c]];
      u_[n][n] = ata_[j][j];
      double b = aty_[j];
      for (int k = 0; k < n; ++k) {
        const double q = u_[n][k] / u_[k][k];
        q_[n][k] = q;
        for (int c = k; c <= n; ++c) u_[n][c] -= q * u_[k][c];
        b -= q * rhs_[k];
      }
      if (!(u_[n][n] > 1e-12 * ata_[j][j])) continue;  // singular, and so are its extensions
      rhs_[n] = b;
      idx_[n] = j;
      double sol[kParams] = {};
      bool negative = false;
      for (int r = n; r >= 0; --r) {
        double v = rhs_[r];
        for (int c = r + 1; c <= n; ++c) v -= u_[r][c] * sol[c];
        sol[r] = v / u_[r][r];
        if (sol[r] < 0) negative = true;
      }
      const int here = mask | (1 << j);
      if (!negative) {
        // sse_of(x) over the subset's columns, in the same order: the terms of the others are
        // 0 (x = 0 there), and adding them leaves the sum as it is.
        double e = yty_;
        for (int r = 0; r <= n; ++r) {
          if (sol[r] == 0) continue;
          e -= 2 * sol[r] * aty_[idx_[r]];
          for (int c = 0; c <= n; ++c) e += sol[r] * ata_[idx_[r]][idx_[c]] * sol[c];
        }
        if (e < best_sse_ || (e == best_sse_ && here < best_mask_)) {
          best_sse_ = e;
          best_mask_ = here;
          std::fill(std::begin(best_), std::end(best_), 0.0);
          for (int r = 0; r <= n; ++r) best_[idx_[r]] = sol[r];
        }
      }
      if (n + 1 < kParams) extend(n + 1, j + 1, here);
    }
  }

  const double (&ata_)[kParams][kParams];
  const double (&aty_)[kParams];
  const double yty_;
  int active_ = 0;
  double u_[kParams][kParams] = {};  // the eliminated rows, by position
  double rhs_[kParams] = {};
  double q_[kParams][kParams] = {};  // the multipliers that eliminated them
  int idx_[kParams] = {};            // the column at each position
  double best_[kParams] = {};
  double best_sse_ = 0;
  int best_mask_ = 0;
};

}  // namespace

void subset_least_squares(const double (&ata)[kCostFitParams][kCostFitParams],
                          const double (&aty)[kCostFitParams], double yty,
                          double (&x)[kCostFitParams]) {
  const SubsetSearch search(ata, aty, yty);
  std::copy(std::begin(search.best()), std::end(search.best()), std::begin(x));
}

LinearFit fit_linear(std::span<const Point> pts, Weighting w) {
  LinearFit f;
  f.points = pts.size();
  // Weighted normal equations: centre on the weighted means so that the 2x2 system is well
  // conditioned even when n spans 1 B … 1 GB.
  double sw = 0, sn = 0, st = 0;
  for (const Point& p : pts) {
    const double wi = weight(p, w);
    sw += wi;
    sn += wi * p.n;
    st += wi * p.t;
  }
  if (sw <= 0) return f;
  const double mn = sn / sw, mt = st / sw;
  double snn = 0, snt = 0, stt = 0;
  for (const Point& p : pts) {
    const double wi = weight(p, w);
    snn += wi * (p.n - mn) * (p.n - mn);
    snt += wi * (p.n - mn) * (p.t - mt);
    stt += wi * (p.t - mt) * (p.t - mt);
  }
  f.beta = snn > 0 ? snt / snn : 0.0;
  f.alpha = mt - f.beta * mn;
  f.residuals.reserve(pts.size());
  f.rel_residuals.reserve(pts.size());
  for (const Point& p : pts) {
    const double r = p.t - f.predict(p.n);
    f.residuals.push_back(r);
    f.rel_residuals.push_back(p.t != 0 ? r / p.t : 0.0);
    f.sse += weight(p, w) * r * r;
  }
  f.r2 = stt > 0 ? 1.0 - f.sse / stt : (f.sse == 0 ? 1.0 : 0.0);
  return f;
}

PiecewiseFit fit_piecewise(std::span<const Point> pts, Weighting w, std::size_t min_points,
                           double gain) {
  PiecewiseFit out;
  std::vector<Point> sorted(pts.begin(), pts.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Point& a, const Point& b) { return a.n < b.n; });
  out.single = fit_linear(sorted, w);
  out.below = out.above = out.single;
  out.sse = out.single.sse;
  // Candidate splits sit between two distinct sizes (repeats of one size stay together).
  std::vector<std::size_t> starts;  // index of the first point of each distinct size
  for (std::size_t i = 0; i < sorted.size(); ++i)
    if (i == 0 || sorted[i].n != sorted[i - 1].n) starts.push_back(i);
  if (min_points < 2) min_points = 2;
  double best = out.single.sse;
  std::size_t best_split = 0;
  for (std::size_t s = min_points; s + min_points <= starts.size(); ++s) {
    const std::size_t i = starts[s];
    const std::span<const Point> lo(sorted.data(), i), hi(sorted.data() + i, sorted.size() - i);
    const double sse = fit_linear(lo, w).sse + fit_linear(hi, w).sse;
    if (sse < best) {
      best = sse;
      best_split = i;
    }
  }
  if (best_split == 0 || !(best < gain * out.single.sse)) return out;
  const std::span<const Point> lo(sorted.data(), best_split);
  const std::span<const Point> hi(sorted.data() + best_split, sorted.size() - best_split);
  out.has_break = true;
  out.break_n = sorted[best_split].n;
  out.below = fit_linear(lo, w);
  out.above = fit_linear(hi, w);
  out.sse = best;
  return out;
}

PiecewiseFit fit_piecewise_at(std::span<const Point> pts, double break_n, Weighting w,
                              std::size_t min_points) {
  PiecewiseFit out;
  out.single = fit_linear(pts, w);
  out.below = out.above = out.single;
  out.sse = out.single.sse;
  std::vector<Point> lo, hi;
  std::set<double> lo_sizes, hi_sizes;
  for (const Point& p : pts) {
    (p.n < break_n ? lo : hi).push_back(p);
    (p.n < break_n ? lo_sizes : hi_sizes).insert(p.n);
  }
  min_points = std::max<std::size_t>(min_points, 2);
  if (lo_sizes.size() < min_points || hi_sizes.size() < min_points) return out;
  out.has_break = true;
  out.break_n = break_n;
  out.below = fit_linear(lo, w);
  out.above = fit_linear(hi, w);
  out.sse = out.below.sse + out.above.sse;
  return out;
}

LinearFit fit_linear_fixed_alpha(std::span<const Point> pts, double alpha, Weighting w) {
  LinearFit f;
  f.points = pts.size();
  f.alpha = alpha;
  double snn = 0, snt = 0, sw = 0, st = 0;
  for (const Point& p : pts) {
    const double wi = weight(p, w);
    snn += wi * p.n * p.n;
    snt += wi * p.n * (p.t - alpha);
    sw += wi;
    st += wi * p.t;
  }
  f.beta = snn > 0 ? snt / snn : 0.0;
  const double mt = sw > 0 ? st / sw : 0.0;
  double stt = 0;
  for (const Point& p : pts) {
    const double r = p.t - f.predict(p.n);
    f.residuals.push_back(r);
    f.rel_residuals.push_back(p.t != 0 ? r / p.t : 0.0);
    f.sse += weight(p, w) * r * r;
    stt += weight(p, w) * (p.t - mt) * (p.t - mt);
  }
  f.r2 = stt > 0 ? 1.0 - f.sse / stt : (f.sse == 0 ? 1.0 : 0.0);
  return f;
}

bool floor_upper_alpha(PiecewiseFit& pf, std::span<const Point> pts, Weighting w) {
  const double floor = std::max(0.0, pf.below.alpha);
  if (!pf.has_break || !(pf.above.alpha < floor)) return false;
  std::vector<Point> hi;
  for (const Point& p : pts)
    if (p.n >= pf.break_n) hi.push_back(p);
  pf.above = fit_linear_fixed_alpha(hi, floor, w);
  pf.sse = pf.below.sse + pf.above.sse;
  return true;
}

double fit_beyond_cache(PiecewiseFit& pf, std::span<const Point> pts, double large_bytes,
                        Weighting w) {
  if (!pf.has_break || !(large_bytes > pf.break_n)) return 0;
  std::vector<Point> in_cache, beyond;
  std::set<double> in_sizes, beyond_sizes;
  for (const Point& p : pts) {
    if (p.n < pf.break_n) continue;
    (p.n < large_bytes ? in_cache : beyond).push_back(p);
    (p.n < large_bytes ? in_sizes : beyond_sizes).insert(p.n);
  }
  if (in_sizes.size() < 3 || beyond_sizes.size() < 2) return 0;
  PiecewiseFit cut = pf;
  cut.above = fit_linear(in_cache, w);
  floor_upper_alpha(cut, in_cache, w);
  const double beta = fit_linear_fixed_alpha(beyond, cut.above.alpha, w).beta;
  if (!(beta > cut.above.beta)) return 0;
  cut.sse = cut.below.sse + cut.above.sse;
  pf = cut;
  return beta;
}

CostFit fit_cost_points(std::span<const CostPoint> pts, const CostFitOptions& opt) {
  CostFit f;
  f.points = pts.size();
  // Columns: α's rounds below the break (not small), α's rounds above it (with split_above
  // their one-way share), β's bytes, the wake-ups, the bytes beyond the cache, the small
  // messages' rounds, the exchange share of the rounds above the break (split_above), a call's
  // first wake-up (call; below the break, and an eleventh above it). A point's a is scaled by
  // xa for its exchanges: the split columns take a / xa. With beta_below, where some point has
  // bytes above the break, β takes those (and small messages' bytes) and a ninth column the others,
  // at β below the break; else one β of them all. A tenth: the exchanges' ring bytes across CPUs,
  // at β_x (CostPoint::bx).
  const bool split_beta =
      opt.beta_below && std::any_of(pts.begin(), pts.end(), [](const CostPoint& p) {
        return p.t > 0 && p.b * (1 - p.large) != 0 && p.above_bytes > 0;
      });
  const auto at_beta = [split_beta](const CostPoint& p) {
    return split_beta ? std::min(1.0, p.above_bytes + (p.small > 0 ? p.small_bytes : 0.0)) : 1.0;
  };
  // Which split columns have points on each side: a parameter no point reaches takes its
  // twin's value (α above the break, β beyond the cache).
  bool any_below = false, any_above = false, any_cached = false, any_large = false,
       any_small = false, any_bytes_below = false;
  for (const CostPoint& p : pts) {
    if (!(p.t > 0)) continue;
    any_bytes_below = any_bytes_below || (p.b * (1 - p.large) != 0 && at_beta(p) < 1);
    any_above = any_above || (p.a != 0 && p.above > 0);
    any_below = any_below || (p.a != 0 && p.above + p.small < 1);
    any_large = any_large || (p.b != 0 && p.large > 0);
    any_cached = any_cached || (p.b != 0 && p.large < 1);
    any_small = any_small || (p.a != 0 && p.small > 0);
  }
  // α of small messages at most α: with rounds of both, the sixth column takes them all (α of
  // small messages) and the first the excess of α over it (α − alpha_small >= 0). An injected
  // message skips the wait for its completion (sockets' one-way time at p = 2: 19.5 µs at
  // 128 B, 20.2 at 256 B); over sockets at p = 4 on 2 cores the fit put alpha_small at
  // 0.54-0.88 times α in 65 of 68 --quick launches, and above it in three (1.02, 1.20, 2.94 times,
  // with β below a break at 512-768 B of 1.3-2.6e-8 s/B), two of them misses: the two-tree
  // broadcast at 256 B in halves of 128 B chosen (regret 18.31%) and recursive doubling at
  // 128 B (23.93%). Where the unconstrained fit has alpha_small <= α it is this one (20 000
  // random problems: the same SSE within 1e-9 relative; the parameters other only in 251,
  // where several solutions reach it).
  const bool small_under = any_small && any_below;
  const auto column = [&opt, &at_beta, split_beta, small_under](const CostPoint& p, int j) {
    const double raw = p.xa > 0 ? p.a / p.xa : p.a;
    if (j == 0) return p.a * std::max(0.0, 1 - p.above - p.small);
    if (j == 1) return opt.split_above ? raw * (1 - p.e) * p.above : p.a * p.above;
    if (j == 2) return p.b * (1 - p.large) * at_beta(p);
    if (j == 3) return p.w;
    if (j == 4) return p.b * p.large;
    if (j == 5)
      return small_under ? p.a * p.small + p.a * std::max(0.0, 1 - p.above - p.small)
                         : p.a * p.small;
    if (j == 6) return opt.split_above ? raw * p.e * p.above : 0.0;
    if (j == 7) return opt.call ? (1 - p.e) * (1 - p.above) : 0.0;
    if (j == 9) return p.bx;
    if (j == 10) return opt.call ? (1 - p.e) * p.above : 0.0;
    return split_beta ? p.b * (1 - p.large) * (1 - at_beta(p)) : 0.0;
  };
  double ata[kParams][kParams] = {}, aty[kParams] = {}, yty = 0;
  for (const CostPoint& p : pts) {
    if (!(p.t > 0)) continue;
    const double w = 1.0 / (p.t * p.t), y = p.t - p.c;
    double col[kParams];
    for (int i = 0; i < kParams; ++i) col[i] = column(p, i);
    yty += w * y * y;
    for (int i = 0; i < kParams; ++i) {
      aty[i] += w * col[i] * y;
      for (int j = 0; j < kParams; ++j) ata[i][j] += w * col[i] * col[j];
    }
  }
  double best[kParams] = {};
  subset_least_squares(ata, aty, yty, best);
  f.alpha = small_under ? best[0] + best[5]
            : any_below ? best[0]
            : any_above ? best[1]
            : any_small ? best[5]
                        : best[0];
  f.alpha_above = any_above ? best[1] : f.alpha;
  f.alpha_small = any_small ? best[5] : f.alpha;
  f.beta = any_cached || !any_large ? best[2] : best[4];
  // β holds the bytes above the break (and small messages'); below it β_below.
  if (split_beta && any_bytes_below) f.beta_below = best[8];
  f.wake = best[3];
  f.beta_large = any_large ? best[4] : f.beta;
  bool any_above_exchange = false;
  for (const CostPoint& p : pts)
    any_above_exchange = any_above_exchange || (p.t > 0 && p.a != 0 && p.above > 0 && p.e > 0);
  f.exchange_alpha_above =
      opt.split_above && any_above_exchange ? best[6] : -1;  // -1: not fitted apart
  f.call_wake = opt.call ? best[7] : 0;
  f.call_wake_above = opt.call ? best[10] : 0;
  const bool any_ring_x =
      std::any_of(pts.begin(), pts.end(), [](const CostPoint& p) { return p.t > 0 && p.bx > 0; });
  // Left out of the best subset (0), β_x is not taken as free: -1, those bytes at χβ·β.
  f.ring_exchange_beta = any_ring_x && best[9] > 0 ? best[9] : -1;
  double sw = 0, st = 0;
  for (const CostPoint& p : pts)
    if (p.t > 0) {
      sw += 1.0 / (p.t * p.t);
      st += p.t / (p.t * p.t);
    }
  const double mt = sw > 0 ? st / sw : 0;
  double stt = 0;
  for (const CostPoint& p : pts) {
    double model = p.c;
    for (int j = 0; j < kParams; ++j) model += column(p, j) * best[j];
    const double r = p.t - model;
    f.residuals.push_back(r);
    f.rel_residuals.push_back(p.t != 0 ? r / p.t : 0.0);
    if (p.t > 0) {
      f.sse += r * r / (p.t * p.t);
      stt += (p.t - mt) * (p.t - mt) / (p.t * p.t);
    }
  }
  f.r2 = stt > 0 ? 1.0 - f.sse / stt : (f.sse == 0 ? 1.0 : 0.0);
  return f;
}

double median_abs(std::span<const double> xs) {
  if (xs.empty()) return 0;
  std::vector<double> a;
  a.reserve(xs.size());
  for (double x : xs) a.push_back(std::fabs(x));
  const std::size_t mid = a.size() / 2;
  std::nth_element(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(mid), a.end());
  double m = a[mid];
  if (a.size() % 2 == 0) {
    const double lo = *std::max_element(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(mid));
    m = (m + lo) / 2;
  }
  return m;
}

Drift pingpong_drift(std::span<const Point> before, std::span<const Point> again,
                     double large_from) {
  std::vector<double> small, large;
  for (std::size_t i = 0; i < before.size() && i < again.size(); ++i)
    if (before[i].t > 0)
      (before[i].n < large_from ? small : large).push_back(again[i].t / before[i].t);
  Drift d;
  if (!small.empty()) d.small = median_abs(small);
  if (!large.empty()) d.large = median_abs(large);
  d.drift = std::fabs(std::log(d.large)) > std::fabs(std::log(d.small)) ? d.large : d.small;
  return d;
}

RegretInterval regret_interval(const std::vector<std::vector<double>>& samples, std::size_t chosen,
                               double level, int resamples, unsigned seed) {
  RegretInterval out;
  if (chosen >= samples.size() || samples[chosen].empty()) return out;
  const std::size_t rounds = samples[chosen].size();
  for (const auto& s : samples)
    if (s.size() != rounds) return out;
  std::vector<double> scratch(rounds);
  // The regret of the rounds idx (the medians of each candidate over them).
  const auto regret_of = [&](const std::vector<std::size_t>& idx) {
    double best = 0;
    double mine = 0;
    for (std::size_t j = 0; j < samples.size(); ++j) {
      for (std::size_t i = 0; i < rounds; ++i) scratch[i] = samples[j][idx[i]];
      const double m = median_abs(scratch);
      if (j == 0 || m < best) best = m;
      if (j == chosen) mine = m;
    }
    return best > 0 ? mine / best - 1 : 0.0;
  };
  std::vector<std::size_t> idx(rounds);
  std::iota(idx.begin(), idx.end(), std::size_t{0});
  out.regret = regret_of(idx);
  // A fixed engine and a hand-rolled index draw: the same resamples on every platform (the
  // standard distributions' algorithms are the library's choice).
  std::mt19937_64 rng(seed);
  std::vector<double> regrets;
  regrets.reserve(static_cast<std::size_t>(std::max(resamples, 1)));
  for (int b = 0; b < resamples; ++b) {
    for (auto& i : idx) i = static_cast<std::size_t>(rng() % rounds);
    regrets.push_back(regret_of(idx));
  }
  std::sort(regrets.begin(), regrets.end());
  const auto quantile = [&](double q) {
    const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(regrets.size() - 1);
    return regrets[static_cast<std::size_t>(std::lround(pos))];
  };
  out.lo = regrets.empty() ? out.regret : quantile((1 - level) / 2);
  out.hi = regrets.empty() ? out.regret : quantile((1 + level) / 2);
  return out;
}

namespace {

/// fit_cost_points_written's grid, in the order it searches it: (ω, χα, χβ) by χα, then χβ,
/// then ω.
struct GridPoint {
  double omega, chi, chi_beta;
};
std::vector<GridPoint> written_grid(double max_omega, double chi_lo, double chi_hi,
                                    double chi_beta_lo, double chi_beta_hi) {
  const int steps = static_cast<int>(std::floor((std::max(1.0, max_omega) - 1) / 0.05 + 1e-9));
  // A grid over [lo, hi]: the point nearest 1 first, then outwards (nearest 1 wins a tie); 1
  // alone when the range is empty or a point.
  const auto grid = [](double lo, double hi, double step) {
    std::vector<double> xs;
    const auto inside = [&](double x) { return x >= lo - 1e-9 && x <= hi + 1e-9; };
    if (inside(1.0) || !(lo < hi)) xs.push_back(1.0);
    for (int i = 1; lo < hi; ++i) {
      const double up = 1 + step * i, down = 1 - step * i;
      if (up > hi + 1e-9 && down < lo - 1e-9) break;
      if (inside(up)) xs.push_back(up);
      if (inside(down) && down > 0) xs.push_back(down);
    }
    return xs;
  };
  const bool apart = chi_beta_lo < chi_beta_hi;
  const std::vector<double> chis = grid(chi_lo, chi_hi, apart ? 0.1 : 0.05);
  const std::vector<double> chi_betas =
      apart ? grid(chi_beta_lo, chi_beta_hi, 0.1) : std::vector<double>{-1};  // -1: χβ = χα
  std::vector<GridPoint> out;
  for (const double chi : chis)
    for (const double chi_beta_at : chi_betas)
      for (int i = 0; i <= steps; ++i)
        out.push_back({1 + 0.05 * i, chi, chi_beta_at < 0 ? chi : chi_beta_at});
  return out;
}

CostFit fit_at(std::span<const CostPoint> pts, const GridPoint& g, std::vector<CostPoint>& scaled,
               const CostFitOptions& options) {
  for (std::size_t j = 0; j < pts.size(); ++j) {
    const double xa = 1 + pts[j].e * (g.chi - 1), xb = 1 + pts[j].e * (g.chi_beta - 1);
    scaled[j].a = pts[j].a * xa;
    scaled[j].xa = xa;
    scaled[j].b = pts[j].b * (1 + pts[j].f * (g.omega - 1)) * xb;
  }
  return fit_cost_points(scaled, options);
}

}  // namespace

std::vector<double> written_fit_errors(std::span<const CostPoint> pts, double max_omega,
                                       double chi_lo, double chi_hi, double chi_beta_lo,
                                       double chi_beta_hi, const CostFitOptions& options, int part,
                                       int parts) {
  const std::vector<GridPoint> grid =
      written_grid(max_omega, chi_lo, chi_hi, chi_beta_lo, chi_beta_hi);
  std::vector<double> errors(grid.size(), 0.0);
  std::vector<CostPoint> scaled(pts.begin(), pts.end());
  for (std::size_t i = 0; i < grid.size(); ++i)
    if (parts <= 1 || static_cast<int>(i % static_cast<std::size_t>(parts)) == part)
      errors[i] = fit_at(pts, grid[i], scaled, options).sse;
  return errors;
}

WrittenFit written_fit_from_errors(std::span<const CostPoint> pts, double max_omega, double chi_lo,
                                   double chi_hi, double chi_beta_lo, double chi_beta_hi,
                                   const CostFitOptions& options, std::span<const double> errors) {
  const std::vector<GridPoint> grid =
      written_grid(max_omega, chi_lo, chi_hi, chi_beta_lo, chi_beta_hi);
  // The first grid point whose error no later one undercuts by more than a relative 1e-12.
  std::size_t kept = 0;
  for (std::size_t i = 1; i < grid.size() && i < errors.size(); ++i)
    if (errors[i] < errors[kept] * (1 - 1e-12)) kept = i;
  WrittenFit best;
  if (grid.empty()) return best;
  std::vector<CostPoint> scaled(pts.begin(), pts.end());
  best.fit = fit_at(pts, grid[kept], scaled, options);
  best.omega = grid[kept].omega;
  best.chi = grid[kept].chi;
  best.chi_beta = grid[kept].chi_beta;
  return best;
}

WrittenFit fit_cost_points_written(std::span<const CostPoint> pts, double max_omega, double chi_lo,
                                   double chi_hi, double chi_beta_lo, double chi_beta_hi,
                                   const CostFitOptions& options) {
  return written_fit_from_errors(
      pts, max_omega, chi_lo, chi_hi, chi_beta_lo, chi_beta_hi, options,
      written_fit_errors(pts, max_omega, chi_lo, chi_hi, chi_beta_lo, chi_beta_hi, options, 0, 1));
}

bool break_has_sizes_below(double break_bytes, std::span<const double> sizes) {
  return std::count_if(sizes.begin(), sizes.end(), [&](double n) { return n < break_bytes; }) >= 2;
}

std::size_t choose_break(std::span<const WrittenFit> fits, std::span<const double> breaks,
                         std::size_t preferred) {
  std::size_t best = 0;
  if (fits.empty() || fits.size() != breaks.size()) return best;
  const auto n = static_cast<double>(fits[0].fit.points);
  const double sse0 = fits[0].fit.sse;
  // ln N once, though a break can add more than α above it (an exchange's α above it, β below
  // it and K above it, where fitted apart): charged ln N for each (9d5167a), one p = 4 sockets
  // launch of eleven kept no break and missed (23.4%, median error 31.1%), so that was taken
  // back. With K above fitted apart the break was kept in 14 of 14 p = 4 sockets launches.
  const auto passes = [&](std::size_t i) {
    const CostFit& f = fits[i].fit;
    return breaks[i] > 0 && f.alpha_above >= f.alpha && f.sse > 0 && n > 1 &&
           n * std::log(sse0 / f.sse) > std::log(n);
  };
  if (preferred > 0 && preferred < fits.size() && passes(preferred)) return preferred;
  for (std::size_t i = 1; i < fits.size(); ++i)
    if (passes(i) && (best == 0 || fits[i].fit.sse < fits[best].fit.sse)) best = i;
  return best;
}

double refit_term(std::span<const double> t, std::span<const double> base,
                  std::span<const double> x, std::span<const double> held, double* gain,
                  int min_runs) {
  if (gain != nullptr) *gain = 1;
  const std::size_t n = std::min({t.size(), base.size(), x.size()});
  double num = 0, den = 0;
  int charged = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!(t[i] > 0) || !(x[i] > 0)) continue;
    const double w = 1.0 / (t[i] * t[i]);
    num += w * x[i] * (t[i] - base[i]);
    den += w * x[i] * x[i];
    ++charged;
  }
  if (charged < min_runs || !(den > 0)) return -1;
  const double v = std::max(0.0, num / den);
  if (gain != nullptr) {
    double before = 0, after = 0;
    for (std::size_t i = 0; i < n && i < held.size(); ++i) {
      if (!(t[i] > 0) || !(x[i] > 0)) continue;
      before += std::pow((held[i] - t[i]) / t[i], 2);
      after += std::pow((base[i] + x[i] * v - t[i]) / t[i], 2);
    }
    *gain = after > 0 ? before / after : 1;
  }
  return v;
}

double refit_overhead(std::span<const CostPoint> pts, std::span<const double> residuals,
                      double overhead, bool receive) {
  // One more term, the rest held: each point's model without its o terms is t less the
  // residual less the o it charged them (a single point is enough here).
  std::vector<double> t, base, x;
  for (std::size_t i = 0; i < pts.size() && i < residuals.size(); ++i) {
    const CostPoint& p = pts[i];
    const double terms = receive ? p.o_recv : p.o;
    t.push_back(p.t);
    base.push_back(p.t - residuals[i] - terms * overhead);
    x.push_back(terms);
  }
  return refit_term(t, base, x, {}, nullptr, 1);
}

bool ring_fit_disagrees(double fit_beta_below, double pingpong_beta_below) {
  return fit_beta_below > 0 && pingpong_beta_below > 0 &&
         pingpong_beta_below / fit_beta_below < kRingRatioLow;
}

bool gap_kept(double break_bytes, double gap_bytes) {
  return !(break_bytes > 0 && gap_bytes >= break_bytes);
}

bool attempt_changed_less(const AttemptChange& a, const AttemptChange& b) {
  // Forced attempts rank after every measured one and tie among themselves (the first kept).
  if (a.forced || b.forced) return !a.forced;
  return std::max(a.machine, a.fit) < std::max(b.machine, b.fit);
}

double written_expected(double probe) {
  return 1 + kWrittenSlope * std::max(0.0, probe - kWrittenProbeFloor);
}

double written_fit_excess(double omega, double probe) {
  if (omega <= 0 || probe < kWrittenProbeJudged) return 0;
  return std::abs(std::log(omega / written_expected(probe))) / std::log(kWrittenBand);
}

bool written_fit_disagrees(double omega, double probe) {
  return written_fit_excess(omega, probe) > 1;
}

PingPongStep ping_pong_step(std::span<const Point> medians, double lowest, double highest,
                            double min_ratio) {
  std::vector<Point> pts;
  for (const Point& pt : medians)
    if (pt.n >= lowest && pt.n <= highest && pt.t > 0) pts.push_back(pt);
  std::stable_sort(pts.begin(), pts.end(),
                   [](const Point& a, const Point& b) { return a.n < b.n; });
  PingPongStep step;
  if (pts.size() < 4) return step;
  const double scale = pts.back().n;  // n in units of the largest: the system well conditioned
  double best = fit_linear(pts).sse;  // a split must beat the line
  // Each split with a size below it and three from it: t ≈ α + βn + δ[n >= split], by relative
  // least squares (the 3x3 normal equations, by Cramer's rule).
  for (std::size_t i = 1; i + 3 <= pts.size(); ++i) {
    if (pts[i].n == pts[i - 1].n) continue;
    const double split = pts[i].n;
    double m[3][3] = {}, v[3] = {};
    for (const Point& pt : pts) {
      const double x[3] = {1, pt.n / scale, pt.n >= split ? 1.0 : 0.0};
      const double w = 1 / (pt.t * pt.t);
      for (int r = 0; r < 3; ++r) {
        v[r] += w * x[r] * pt.t;
        for (int c = 0; c < 3; ++c) m[r][c] += w * x[r] * x[c];
      }
    }
    const auto det = [](const double(&a)[3][3]) {
      return a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) -
             a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
             a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
    };
    const double d = det(m);
    if (!(std::abs(d) > 0)) continue;
    double coef[3];
    for (int c = 0; c < 3; ++c) {
      double mc[3][3];
      for (int r = 0; r < 3; ++r)
        for (int k = 0; k < 3; ++k) mc[r][k] = k == c ? v[r] : m[r][k];
      coef[c] = det(mc) / d;
    }
    const double below = coef[0] + coef[1] * split / scale;  // the line's time at the split
    if (!(coef[2] > 0) || !(below > 0)) continue;
    double sse = 0;
    for (const Point& pt : pts) {
      const double r = pt.t - (coef[0] + coef[1] * pt.n / scale + (pt.n >= split ? coef[2] : 0.0));
      sse += r * r / (pt.t * pt.t);
    }
    if (sse < best) {
      best = sse;
      step = {split, (below + coef[2]) / below};
    }
  }
  return step.ratio >= min_ratio ? step : PingPongStep{};
}

}  // namespace fabcoll::tuning
