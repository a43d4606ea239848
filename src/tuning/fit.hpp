// Fitting the α-β model (LAWN 29 §2: a message of n bytes costs α + βn) to measured
// (size, time) points. Pure functions, no I/O: fabcoll-calibrate feeds them ping-pong times,
// the unit tests feed them synthetic points with known α, β and noise.
//
// Why weighted: measured times span several decades (a few µs at 8 B, milliseconds at
// megabytes). Ordinary least squares would let the large sizes decide α as well, so that the
// start-up term ends up wherever the rounding of the big points puts it (often negative).
// Weighting each point by 1/t² minimises the *relative* residuals instead, which is what the
// selector cares about (the ratio of two algorithms' times). Both weightings are offered.
//
// Why piecewise: real transports switch protocol with the message size (eager copy below a
// limit, rendezvous above; LAWN 29 §6 reports the same drop on the Touchstone Delta), so one
// line through all points fits neither side. fit_piecewise finds the split that minimises the
// weighted squared error of two independent lines and keeps it only when it is clearly better.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace fabcoll::tuning {

/// One measurement: n bytes took t seconds.
struct Point {
  double n = 0;
  double t = 0;
};

enum class Weighting {
  uniform,   // minimise Σ (t - α - βn)²
  relative,  // minimise Σ ((t - α - βn) / t)²
};

/// t ≈ alpha + beta n over the points it was fitted on.
struct LinearFit {
  double alpha = 0;
  double beta = 0;
  double r2 = 0;                      // weighted coefficient of determination (1 = perfect)
  double sse = 0;                     // weighted sum of squared residuals
  std::vector<double> residuals;      // t - (α + βn) per point, in input order (seconds)
  std::vector<double> rel_residuals;  // residual / t per point
  std::size_t points = 0;

  [[nodiscard]] double predict(double n) const { return alpha + beta * n; }
};

/// Weighted least squares for α, β. Needs at least 2 points with distinct n (otherwise β = 0
/// and α is the weighted mean of t). Points with t <= 0 are ignored under relative weighting.
LinearFit fit_linear(std::span<const Point> pts, Weighting w = Weighting::relative);

/// Two lines: `below` for n < break_n, `above` for n >= break_n.
struct PiecewiseFit {
  bool has_break = false;  // false: `below` = `above` = the single line through all points
  double break_n = 0;      // first size of the upper segment
  LinearFit below;
  LinearFit above;
  LinearFit single;  // the one-line fit, for comparison
  double sse = 0;    // weighted SSE of the chosen model

  [[nodiscard]] const LinearFit& segment(double n) const {
    return (has_break && n >= break_n) ? above : below;
  }
  [[nodiscard]] double predict(double n) const { return segment(n).predict(n); }
};

/// Tries every split of the points sorted by n that leaves at least min_points distinct sizes
/// on each side, fits each side separately, and keeps the split with the least total weighted
/// SSE if that is below `gain` times the single line's SSE (default: a 4x better fit);
/// otherwise reports no break. break_n is the smallest n of the upper side.
PiecewiseFit fit_piecewise(std::span<const Point> pts, Weighting w = Weighting::relative,
                           std::size_t min_points = 3, double gain = 0.25);

/// Two lines split at a break the transport is known to have (shm's single-copy threshold: rings
/// below, one CMA copy from it): `below` through the points with n < break_n, `above` through
/// the rest, whatever the split gains. No break (the single line, as fit_piecewise without
/// one) when either side has fewer than min_points distinct sizes. break_n of the result is
/// the given one.
PiecewiseFit fit_piecewise_at(std::span<const Point> pts, double break_n,
                              Weighting w = Weighting::relative, std::size_t min_points = 3);

/// Weighted least squares for β alone with α held at `alpha` (t ≈ alpha + βn): β =
/// Σ w n (t − α) / Σ w n². β is 0 when no point has n > 0.
LinearFit fit_linear_fixed_alpha(std::span<const Point> pts, double alpha,
                                 Weighting w = Weighting::relative);

/// Guards the upper segment of a break: a start-up cost above the break below the one under it
/// (often α at or below 0: the upper points span a decade or two, and their line extrapolated to
/// n = 0 lands anywhere) would make a packet just above the break cheaper than one just below,
/// and every pipelined algorithm would be costed with packets of the break size and no start-up.
/// When pf has a break and pf.above.alpha < max(0, pf.below.alpha), refits the upper segment
/// (the points of pts with n >= break_n) with α fixed at that value and updates pf.sse. True if
/// it did.
bool floor_upper_alpha(PiecewiseFit& pf, std::span<const Point> pts,
                       Weighting w = Weighting::relative);

/// β beyond the cache (CostModel::large_from) of a link's upper segment, from the ping-pong:
/// where pf has a break below large_bytes, at least three sizes of pts from the break lie
/// below large_bytes and at least two from it, refits pf's upper segment to those below
/// (floor_upper_alpha as for the whole segment) and returns β of those from it at that
/// segment's α (fit_linear_fixed_alpha): a message of n >= large_bytes then costs
/// pf.above.alpha + β n. Kept only where it costs more than the segment's β; else 0, pf
/// unchanged. pf.sse is then its two segments' (the points beyond the cache left out).
double fit_beyond_cache(PiecewiseFit& pf, std::span<const Point> pts, double large_bytes,
                        Weighting w = Weighting::relative);

/// One timed collective whose model cost is linear in α and β: t ≈ a α + b β + c, where a
/// (rounds), b (bytes on the critical path) and c (the γ term, known) come from the
/// algorithm's cost formula evaluated at unit models.
struct CostPoint {
  double a = 0;
  double b = 0;
  double c = 0;
  double t = 0;
  double f = 0;  // the share of b that moves written data (Algorithm::written_share)
  double e = 0;  // the share of a and b spent in exchanges (Algorithm::exchange_share)
  // The share of its a rounds whose messages lie above a protocol break (shm's single-copy
  // threshold): those cost the upper segment's α (CostFit::alpha_above), the same β (unless
  // CostFitOptions::beta_below: above_bytes).
  double above = 0;
  // The rounds that wait for a wake-up (CostModel::wake): a(1 − e) for a fan-in collective
  // (fabcoll::fans_in), 0 otherwise. A fourth parameter W, as α not scaled by χ.
  double w = 0;
  // The share of its b bytes in whole messages of at least CostModel::large_from (the sim's
  // share of the critical path's bytes): those cost β beyond the cache (CostFit::beta_large).
  double large = 0;
  // The share of its a rounds whose messages lie below CostModel::small_below (the sim's share
  // of the critical path's latencies): those cost α of small messages (CostFit::alpha_small).
  // Below the break too: above + small <= 1.
  double small = 0;
  // The factor a was scaled by for its exchanges (1 + e(χα − 1); fit_cost_points_written):
  // the columns that split a point's rounds above the break take a / xa.
  double xa = 1;
  // The share of its b bytes in messages above the break (the sim's share of the critical
  // path's bytes, as tuning::mixed_segments mixes β): with CostFitOptions::beta_below those cost
  // β, and so do those in small messages (small_bytes), the rest β below the break
  // (CostFit::beta_below).
  double above_bytes = 0;
  // The share of its b bytes in messages below CostModel::small_below (injected; as
  // tuning::segment_k mixes β); 0 where small is 0.
  double small_bytes = 0;
  // Its sender-overhead terms: how many o (CostModel::overhead) its formula charges (the naive
  // broadcast's root p − 2, tuning::linear_cost_terms); c holds them at the o it was costed
  // with. Not a column of the fit: refit_overhead fits o to them afterwards.
  double o = 0;
  // Its receiver-overhead terms likewise: how many o_r (CostModel::receive_overhead) it charges
  // (the naive reduce's folding rank p − 2); refit_overhead fits o_r to them.
  double o_recv = 0;
  // Its exchanges' ring bytes across CPUs (Algorithm::ring_shares; linear_cost_terms' bx
  // terms), where β_x is fitted (CostModel::ring_exchange_beta): a column of their own at
  // CostFit::ring_exchange_beta, not scaled by ω or χ (not in b).
  double bx = 0;
};

/// Which further columns fit_cost_points fits (fabcoll-calibrate: over the fabric where ranks
/// share cores). split_above: the rounds above the break in two, one-way a(1 − e) at
/// alpha_above and exchanges a·e at exchange_alpha_above (an α of their own instead of χα
/// times it). call: (1 − e)(1 − above) once per point at call_wake (CostModel::call_wake: the
/// lower segment's), and (1 − e)·above at call_wake_above (the upper segment's K).
/// beta_below: the bytes below the break at a β of their own (CostFit::beta_below; the lower
/// segment's), those above it at β (inside a node too: shm's rings below its single-copy
/// threshold, one copy from it).
struct CostFitOptions {
  bool split_above = false;
  bool call = false;
  bool beta_below = false;
};

/// α, β of the collectives themselves: weighted (relative) least squares of t − c ≈ a α + b β
/// over the points (normal equations, no intercept). Used where the link cannot be measured
/// apart from the collectives' own layout (more ranks than cores). alpha and beta of the
/// result; r2, sse and residuals as in fit_linear (residuals of t).
///
/// A point's rounds a are a(1 − above) at alpha and a·above at alpha_above (a third
/// parameter, β shared: the break of CostModel's LinkModel where only the per-message cost
/// changes); with no round above alpha_above = alpha, and with none below alpha =
/// alpha_above. Its wake-ups w are a fourth, at wake (CostModel::wake; 0 when no point has any).
/// Its bytes b are b(1 − large) at beta and b·large at beta_large, a fifth (CostModel::
/// beta_large; = beta where no point has any). Its rounds a·small at alpha_small, a sixth
/// (CostModel::alpha_small; = alpha where no point has any), and a(1 − above − small) at alpha;
/// alpha_small at most alpha (an injected message is not dearer than one above the inject
/// size) where some point has rounds of both below the break: the fit is then in alpha_small
/// and alpha − alpha_small, both >= 0.
///
/// Non-negative: the least-SSE solution over every subset of the parameters (the others held
/// at 0) whose solution is non-negative, which is the non-negative least-squares optimum. With
/// two parameters: the full solution where it is non-negative, else the better of α alone and
/// β alone.
struct CostFit : LinearFit {
  double alpha_above = 0;
  double wake = 0;         // W, from the points' w (CostPoint::w); 0 where every w is 0
  double beta_large = 0;   // from the points' large bytes (CostPoint::large); beta where none
  double alpha_small = 0;  // from the points' small rounds (CostPoint::small); alpha where
                           // none; at most alpha where some point has rounds below not small
  /// With CostFitOptions::split_above: an exchange's α above the break (seconds, not a
  /// multiple); -1 where not fitted apart.
  double exchange_alpha_above = -1;
  double call_wake = 0;  // with CostFitOptions::call; else 0
  /// With CostFitOptions::call: K of the upper segment, from the points' one-way share above the
  /// break ((1 − e)·above); 0 where no point has rounds above it, or where the best fit leaves
  /// it out.
  double call_wake_above = 0;
  /// With CostFitOptions::beta_below: β of the bytes below the break but not in small
  /// messages (s/B; beta is then the upper segment's and the small messages'); -1 where not
  /// fitted apart (no point has bytes above the break, or none below it outside small
  /// messages: beta holds all of them).
  double beta_below = -1;
  /// β_x (CostModel::ring_exchange_beta) from the points' bx (CostPoint::bx), s/B; -1 where
  /// no point has any, or where the best fit leaves it out (0: those bytes are not free).
  double ring_exchange_beta = -1;
};
CostFit fit_cost_points(std::span<const CostPoint> pts, const CostFitOptions& options = {});

/// fit_cost_points' parameters (its columns).
inline constexpr int kCostFitParams = 11;
/// The search behind fit_cost_points, given its weighted normal equations (ata = AᵀWA,
/// aty = AᵀWy, yty = yᵀWy): the x of least SSE yty − 2xᵀaty + xᵀ·ata·x over every subset of the
/// columns (the others held at 0) whose own solution is non-negative, which is the
/// non-negative least-squares optimum. Columns with ata[j][j] = 0 stay at 0; a subset whose
/// elimination meets a pivot below 1e-12 of its diagonal (a column others explain) is left out;
/// of equal SSEs the subset of the lowest bit mask (bit j: column j) wins.
void subset_least_squares(const double (&ata)[kCostFitParams][kCostFitParams],
                          const double (&aty)[kCostFitParams], double yty,
                          double (&x)[kCostFitParams]);

/// fit_cost_points with ω (CostModel::written) as a third parameter: each point's β bytes
/// become b(1 + f(ω − 1)). Profile fit: for every ω of a grid over [1, max_omega] (steps of
/// 0.05) α, β are fitted as above; the ω of least weighted SSE wins (the smallest on a tie, so
/// points with f = 0 everywhere give ω = 1). With chi_lo < chi_hi, χ (one factor for both
/// CostModel::exchange_alpha and exchange_beta) is a fourth: a becomes a(1 + e(χ − 1)) and b
/// b(1 + f(ω − 1))(1 + e(χ − 1)), profiled over a grid of [chi_lo, chi_hi] in steps of 0.05
/// (on a tie the χ nearest 1, so points with e = 0 everywhere give χ = 1).
///
/// With chi_beta_lo < chi_beta_hi, χβ is profiled apart from χα (chi, then for χα) over
/// [chi_beta_lo, chi_beta_hi] in steps of 0.1, and χα in steps of 0.1 too (a grid of two
/// dimensions; used where ω is held at 1). options go to fit_cost_points.
struct WrittenFit {
  CostFit fit;
  double omega = 1;
  double chi = 1;       // χα (and χβ unless profiled apart)
  double chi_beta = 1;  // χβ
};
WrittenFit fit_cost_points_written(std::span<const CostPoint> pts, double max_omega = 10,
                                   double chi_lo = 1, double chi_hi = 1, double chi_beta_lo = 1,
                                   double chi_beta_hi = 1, const CostFitOptions& options = {});

/// fit_cost_points_written in parts, which one may search apart (fabcoll-calibrate: a part on
/// each rank): written_fit_errors gives the error (CostFit::sse) of every point of its grid in
/// part `part` of `parts` (the points i with i mod parts = part; every point where parts <= 1),
/// 0 at the others; written_fit_from_errors, given every point's (the parts' errors summed:
/// each point's comes from one part, so the sum is exact in any order, and a NaN stays one),
/// returns what fit_cost_points_written returns, the same arguments given to both: the grid
/// point it keeps, fitted again.
std::vector<double> written_fit_errors(std::span<const CostPoint> pts, double max_omega,
                                       double chi_lo, double chi_hi, double chi_beta_lo,
                                       double chi_beta_hi, const CostFitOptions& options, int part,
                                       int parts);
WrittenFit written_fit_from_errors(std::span<const CostPoint> pts, double max_omega, double chi_lo,
                                   double chi_hi, double chi_beta_lo, double chi_beta_hi,
                                   const CostFitOptions& options, std::span<const double> errors);

/// Which of several fits of the same timed points to keep, each with the points' rounds placed
/// above its own candidate break (fits[i] with breaks[i]; breaks[0] = 0 is the fit without a
/// break): the one of least error (CostFit::sse) among those whose α above is not below their
/// α, kept where its one more parameter pays by the Bayesian information criterion over the
/// fits' points N (N ln(sse without / sse with) > ln N); else 0. fabcoll-calibrate's fit to
/// timed collectives over the fabric, where no break is known beforehand (inside a node it is
/// shm's single-copy threshold). preferred > 0 (an index of breaks): that break wins whenever
/// it passes the same tests (α above not below α, the criterion against no break), whatever the
/// others' error: the ping-pong's step (ping_pong_step), which the timed collectives' few
/// sizes only straddle.
std::size_t choose_break(std::span<const WrittenFit> fits, std::span<const double> breaks,
                         std::size_t preferred = 0);

/// Whether a break leaves the segment below it at least two of the timed sizes (`sizes`, those
/// below it counted), so that its own α and β have two sizes to be told apart by. Over sockets
/// (p = 4 on 2 cores, --quick, 124 launches of the forty-sixth to forty-ninth sessions) the fit
/// kept a break at 384 B, with the training's 256 B alone below it, in 14: its lower segment
/// came out at α 1e-9 to 8e-7 s and β 3.6-3.8e-8 s/B, and 7 of the 14 missed the regret target
/// at 128-920 B (17-51%), against 24 of the other 110.
bool break_has_sizes_below(double break_bytes, std::span<const double> sizes);

/// The least step ping_pong_step reports: over sockets (p = 4 on 2 cores, rank 0's pair in
/// fifteen --quick launches, sizes 256 B – 256 KiB, refitted offline) the step to 1 KiB came
/// out x1.18–2.81; in calibrate (all pairs' mean) x1.17–1.52 in six launches.
inline constexpr double kStepMinRatio = 1.1;

/// Where a ping-pong's time steps up, and by how much (n = 0: no step).
struct PingPongStep {
  double n = 0;
  double ratio = 0;  // (α + δ + βn) / (α + βn) at n
};

/// The step of a protocol break the ping-pong's curve shows: over the medians with n in
/// [lowest, highest], the line with a step, t ≈ α + βn + δ[n >= s], fitted by relative least
/// squares at each split s with a size below it and three from it; the split of least error with
/// δ > 0 (and less error than the line's), where the step's ratio is at least min_ratio. Else
/// none. Each size's median counts once: noise in one moves the whole line, not the step.
PingPongStep ping_pong_step(std::span<const Point> medians, double lowest, double highest,
                            double min_ratio = kStepMinRatio);

/// ω as the written-data probe implies it, where ranks share cores inside a node:
/// 1 + kWrittenSlope · max(0, probe − kWrittenProbeFloor). Fitted by least squares to the
/// attempts kept by 105 p = 4 shm --quick launches on 2 cores (thirty-fifth to fortieth
/// sessions) that met both of issue 6's targets, with the probe before the fit at 1.5 or more:
/// ω − 1 = 0.635 probe − 1.216. The VM's two modes lie on that line: 28 with a probe of
/// 1.88–2.36 and ω 1.00–1.55, 77 with 4.67–6.34 and ω 2.50–3.90; their ω came out 0.76–1.42
/// times the line's.
/// (The probe's excess over 1 is not ω's: in the mode at 2 the collectives show almost no
/// excess on written data.)
inline constexpr double kWrittenProbeFloor = 1.91;
inline constexpr double kWrittenSlope = 0.635;
/// How far a fitted ω may lie from written_expected, as a ratio either way, before the fit is
/// taken to have seen another mode than the probe (written_fit_disagrees). The same launches'
/// kept attempts that missed with ω off the line read 0.32, 0.54 (ω fitted in the mode at 2
/// with the probe at 5.6–6.0) and 1.56–2.89 (ω above the line, the probe at 2.05–2.27). Of the
/// 384 attempts that the check with a bound of half the probe's excess flagged (nearly every
/// attempt in the mode at 2, and most in the other), this one flags 30, all at 0.27–0.64 of
/// the line.
inline constexpr double kWrittenBand = 1.5;

/// ω as the written-data probe before the fit implies it (kWrittenSlope).
double written_expected(double probe);

/// The least written-data probe from which a fitted ω is judged against it: below, the probe
/// shows no slow mode to compare with, and a machine without this VM's modes is not judged by
/// its line. (The quiet mode of the twenty-ninth to thirty-fourth sessions read 1.09–1.32;
/// since, four p = 4 shm launches of 162 read 0.93–1.47, with ω 1.00–1.40.)
inline constexpr double kWrittenProbeJudged = 1.5;

/// How far ω fitted to timed collectives (ranks sharing cores inside a node) lies from what the
/// written-data probe timed just before them implies (written_expected): |ln(ω / expected)| as
/// a multiple of ln kWrittenBand (1 at the bound); 0 where the probe is below
/// kWrittenProbeJudged.
double written_fit_excess(double omega, double probe);

/// Whether that ω disagrees with the probe (written_fit_excess above 1): the machine left the
/// probe's mode while the collectives were timed, and the model fitted there is validated in
/// the other (fabcoll-calibrate measures again, as when the probe moves).
bool written_fit_disagrees(double omega, double probe);

/// The least ratio of the pairs' ping-pong β below shm's single-copy threshold (every pair at
/// once, ranks sharing cores) to the β below it fitted to the timed collectives right after
/// (CostFitOptions::beta_below) in an attempt whose rings kept their speed. p = 4 shm on
/// 2 cores, eleven launches of the thirty-fifth session: 2.2–3.6 in ten, in both of the VM's
/// slow modes (the ping-pong's 2.0–10.8e-10 s/B against the fit's 0.9–3.1e-10). The eleventh
/// read 0.95: its fit took the slow rings' β (4.0e-10) between a ping-pong and a validation
/// that both ran them 2–3 times faster, and every algorithm came out 30–150% over its time at
/// 3–16 KiB (median error 35.3%). Three launches with the check: 1.73–2.87 in the attempts
/// kept; it flagged one attempt (0.93), which the ping-pong's drift (x1.26) and the written
/// probe (x2.63) flagged too.
inline constexpr double kRingRatioLow = 1.5;
/// True where the ratio (pingpong_beta_below / fit_beta_below) is below kRingRatioLow: the
/// timed collectives saw shm's rings slower than the ping-pong just before them did
/// (fabcoll-calibrate measures again). False where either β is not positive (not fitted).
bool ring_fit_disagrees(double fit_beta_below, double pingpong_beta_below);

/// Whether a model with a protocol break at break_bytes (0: none) keeps the sender's time per
/// byte G measured on messages of gap_bytes (CostModel::gap): G is for messages below the
/// break, and one at or below G's messages leaves G measured in the other segment (then
/// unmeasured, G = β). fabcoll-calibrate asks it of the ping-pong's break, of each break its
/// fit to timed collectives tries (the points are costed with the G the model fitted under
/// that break keeps) and of the break kept.
bool gap_kept(double break_bytes, double gap_bytes);

/// How much one of fabcoll-calibrate's attempts was disturbed, for keeping the least disturbed
/// where every attempt was (attempt_changed_less), each check as a multiple of its own bound
/// (1 at the bound, past it above 1). `machine`: how far the machine itself changed speed
/// during it: the larger of |ln drift| (the ping-pong after the validation) and |ln probe
/// change| (the written-data probe), over ln 1.25. `fit`: how far its fit disagrees with what
/// was timed before it: the larger of written_fit_excess and, where the rings' check flags it,
/// 1 + ln(kRingRatioLow / ratio) / ln kRingRatioLow. `forced`: the tests'
/// FABCOLL_CALIBRATE_TEST_DISTURB.
struct AttemptChange {
  double machine = 0;
  double fit = 0;
  bool forced = false;
};
/// Whether attempt a is to be kept before attempt b: the one whose largest check, max(machine,
/// fit), is smaller. A forced attempt ranks last (two forced tie, whatever was measured in them:
/// the earlier is kept). The fit's checks count as much as the machine's own: with ω judged
/// against written_expected they flag an attempt fitted in the other mode, and two p = 4 shm
/// launches that kept such an attempt (ω 1.05 and 1.95 against probes of 5.6 and 6.0) over
/// ones whose ping-pong drifted x1.30 or whose ω the old bound flagged in the probe's own mode
/// had regrets of 56%. (Before, the machine's change ranked first, as the old ω check flagged
/// every attempt in the VM's mode at 2.)
bool attempt_changed_less(const AttemptChange& a, const AttemptChange& b);

/// One more term of a model refitted to timed runs, the rest held: the least relative squares
/// of t ≈ base + x·v over the runs with t > 0 and x > 0 (base: a run's prediction without the
/// term, x: what one unit of it adds), at least 0. -1 where fewer than min_runs runs have
/// x > 0.
/// gain (when not null): those runs' sum of squared relative errors under `held` (their
/// predictions with the term as the model had it) over that with v; 1 where v is -1.
/// fabcoll-calibrate: K of small messages (CostModel::call_wake_small) to the runs below the
/// inject size; refit_overhead (one run enough).
double refit_term(std::span<const double> t, std::span<const double> base,
                  std::span<const double> x, std::span<const double> held, double* gain = nullptr,
                  int min_runs = 2);

/// The sender's overhead o (CostModel::overhead) refitted to the points whose formulas charge
/// it (CostPoint::o > 0), the rest of a fit held: `residuals` are the fit's (t − its model, as
/// CostFit::residuals), whose c held the points' o terms at `overhead`. The least relative
/// squares of t − (model − o_terms · overhead) ≈ o_terms · o, at least 0. -1 where no point
/// has o terms (or no residual for it). receive: the receiver's o_r instead
/// (CostModel::receive_overhead), to the points' CostPoint::o_recv terms, c holding them at
/// `overhead` (each refitted with the other held).
double refit_overhead(std::span<const CostPoint> pts, std::span<const double> residuals,
                      double overhead, bool receive = false);

/// Median of |x| over xs (0 for none).
double median_abs(std::span<const double> xs);

/// The selection regret at one validated size, with its sampling interval. samples[j] holds
/// candidate j's time per round (every candidate the same number of rounds, round i of each
/// timed in the same round of interleaved turns). regret = median(samples[chosen]) / the least
/// median over the candidates − 1. lo, hi: the `level` interval of the same statistic over
/// `resamples` bootstrap resamples of the rounds (one draw of round indices for every
/// candidate, so that what a round shared stays paired; the fastest is found again in each
/// resample, as a rerun would find it), the (1 − level)/2 and (1 + level)/2 quantiles. It
/// says how far the validation's own sampling moves the regret, not what a drift of the
/// machine between launches does. Deterministic for a seed. All zero when chosen is out of
/// range or a candidate has no rounds or a different count.
struct RegretInterval {
  double regret = 0;
  double lo = 0;
  double hi = 0;
};
RegretInterval regret_interval(const std::vector<std::vector<double>>& samples, std::size_t chosen,
                               double level = 0.9, int resamples = 2000, unsigned seed = 1);

/// How far a ping-pong timed again moved from the one before (points per size, matched by
/// index): the median of again / before over the sizes below large_from (small) and over those
/// from it (large); drift is whichever of the two lies further from 1 as a ratio. Each is 1
/// where it has no sizes. Two medians, because one over all sizes is mostly small messages and
/// did not see large ones slow down alone (fabcoll-calibrate, kDriftLargeFrom).
struct Drift {
  double small = 1;
  double large = 1;
  double drift = 1;
};
Drift pingpong_drift(std::span<const Point> before, std::span<const Point> again,
                     double large_from);

}  // namespace fabcoll::tuning
