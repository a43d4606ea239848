// The hybrid global combine of van de Geijn, LAPACK Working Note 29 (1991), §3.4 and §4:
// the strategy vector S, its cost recursion T(S, n, d), the optimal S of Theorem 1 and its
// cost (Corollary 4). Pure functions of (n, d, α, β, γ): the all-reduce algorithms use them to
// pick S, the tests check them against exhaustive search.
//
// Header-only on purpose: the tuning layer has no compiled sources of its own (CMake compiles
// src/engine and src/algorithms), and these are a handful of arithmetic lines.
//
// Conventions (the text's): p = 2^d; S = (S_0, …, S_{d-1}) with S_j = 1 meaning "halve the
// vector at the step that combines in direction j" (Version 3's step) and S_j = 0 meaning
// "exchange and combine whole vectors" (Version 2's step). Steps run in direction d-1 first, so
// S_{d-1} is the first step. A strategy is stored as a bitmask: bit j = S_j.
// n is the vector length in the units β and γ are quoted in (bytes in fabcoll's model).
#pragma once

#include <cstdint>

#include "tuning/cost_model.hpp"

namespace fabcoll::tuning {

using Strategy = std::uint32_t;

/// Version 2 (exchange and combine): S = (0, …, 0).
inline constexpr Strategy kVersion2 = 0;
/// Version 3 (recursive halving then doubling): S = (1, …, 1).
inline constexpr Strategy version3(int d) {
  return d <= 0 ? 0 : static_cast<Strategy>((std::uint64_t{1} << d) - 1);
}

/// T(S, n, d), LAWN 29 §3.4:
///   T(S, n, d) = T(S^{d-1}, n, d-1)   + α + nβ + nγ       if S_{d-1} = 0
///              = T(S^{d-1}, n/2, d-1) + 2α + nβ + (n/2)γ  if S_{d-1} = 1
/// and 0 for d = 0 (the text writes "d < 0"; with no direction left nothing is done).
inline double hybrid_cost(Strategy s, double n, int d, const CostModel& m) {
  double t = 0;
  for (int j = d - 1; j >= 0; --j) {
    if ((s >> j) & 1u) {
      t += 2 * m.alpha + n * m.beta + n / 2 * m.gamma;
      n /= 2;
    } else {
      t += m.alpha + n * m.beta + n * m.gamma;
    }
  }
  return t;
}

/// Theorem 1's k: the smallest integer k >= 0 with n >= 2^(d-k) α / (k(β+γ) + γ), replaced by
/// d when it exceeds d (Corollary 4). Written without the division so that γ = 0 is defined.
inline int theorem1_k(double n, int d, const CostModel& m) {
  for (int k = 0; k < d; ++k) {
    const double scale = static_cast<double>(std::uint64_t{1} << (d - k));
    if (n * (k * (m.beta + m.gamma) + m.gamma) >= scale * m.alpha) return k;
  }
  return d;
}

/// Theorem 1's optimal strategy S̄: S̄_i = 0 for i < k, 1 otherwise (halve in the first d-k
/// steps, exchange whole vectors in the last k).
inline Strategy theorem1_strategy(double n, int d, const CostModel& m) {
  const int k = theorem1_k(n, d, m);
  return version3(d) & ~version3(k);
}

/// Corollary 4: the cost of the optimal hybrid strategy,
///   2(d-k)α + (1 - 2^-(d-k)) n (2β + γ) + k(α + 2^-(d-k) n (β + γ)).
inline double corollary4_cost(double n, int d, const CostModel& m) {
  const int k = theorem1_k(n, d, m);
  const double shrink = 1.0 / static_cast<double>(std::uint64_t{1} << (d - k));
  return 2 * (d - k) * m.alpha + (1 - shrink) * n * (2 * m.beta + m.gamma) +
         k * (m.alpha + shrink * n * (m.beta + m.gamma));
}

/// Folding a surplus rank into its partner when p is not a power of two (LAWN 29 assumes
/// p = 2^d). Either the whole vector goes over and is combined (α + nβ + nγ: Version 2's step),
/// or, as in the 13-rank example of Rabenseifner's algorithm (002_…), the two ranks swap
/// halves, combine one half each and the surplus rank returns its half (2α + nβ + (n/2)γ:
/// Version 3's step). Not counted: the final return of the result (α + nβ).
inline double fold_cost(bool halves, double n, const CostModel& m) {
  return halves ? 2 * m.alpha + n * m.beta + n / 2 * m.gamma : m.alpha + n * m.beta + n * m.gamma;
}

/// The bytes of the β terms of an all-reduce or reduce by strategy s on 2^d ranks (a halving
/// step's n: n/2 out, n/2 back; an exchange step's n; when p is not 2^d the fold's n and, if
/// `returns`, the result's return n), and how many of them the first step moves (n/2 when it
/// halves, n when it exchanges) and how many go in exchanges (`gathers`: a reduce, see
/// hybrid_exchange_share). Shared by the two shares below.
struct HybridBytes {
  double total = 0;
  double first = 0;
  double exchanged = 0;
};
inline HybridBytes hybrid_bytes(Strategy s, double n, int d, bool pow2, bool returns,
                                bool gathers) {
  HybridBytes b;
  double m = n;
  for (int j = d - 1; j >= 0; --j) {
    const bool halve = ((s >> j) & 1u) != 0;
    if (j == d - 1) b.first = halve ? m / 2 : m;
    b.total += m;
    b.exchanged += !gathers ? m : halve ? m / 2 : 0;
    if (halve) m /= 2;
  }
  if (!pow2) b.total += returns ? 2 * n : n;  // the fold's n (swap or whole) and the return
  return b;
}

/// The mean message of an all-reduce or reduce by strategy s on 2^d ranks (fold and return as
/// in hybrid_bytes): the bytes of its β terms over its latencies, a halving step two (n/2 out,
/// n/2 back), an exchange step one, the fold one and the return one. What the formula of the
/// strategy it runs says (Corollary 4's derivatives under the model that chose s), where the
/// derivatives of Corollary 4 under another model would count another strategy's messages.
inline double hybrid_mean_message(Strategy s, double n, int d, bool pow2, bool returns) {
  if (!(n > 0)) return 0;
  int latencies = 0;
  for (int j = d - 1; j >= 0; --j) latencies += ((s >> j) & 1u) != 0 ? 2 : 1;
  if (!pow2) latencies += returns ? 2 : 1;
  const HybridBytes b = hybrid_bytes(s, n, d, pow2, returns, false);
  return latencies > 0 ? b.total / latencies : n;
}

/// The written share (Algorithm::written_share) of an all-reduce or reduce by strategy s on
/// 2^d ranks, with the fold (fold_halves as in fold_cost) and, if `returns`, the result's
/// return to the surplus rank when p is not 2^d: of the bytes of its β terms (hybrid_bytes),
/// only the first step moves the caller's input or, when p is not 2^d, the fold does (n/2 when
/// it swaps halves, else n): every later message carries data its sender combined or received.
inline double hybrid_written_share(Strategy s, double n, int d, bool pow2, bool fold_halves,
                                   bool returns) {
  if (!(n > 0)) return 0;
  const HybridBytes b = hybrid_bytes(s, n, d, pow2, returns, false);
  const double input = pow2 ? b.first : fold_halves ? n / 2 : n;
  return b.total > 0 ? 1 - input / b.total : 0;
}

/// The exchange share (Algorithm::exchange_share) of an all-reduce or reduce by strategy s on
/// 2^d ranks, the fold and the return as in hybrid_written_share: of the bytes of its β terms,
/// those a rank sends while its partner sends to it. An all-reduce exchanges in every step (a
/// halving step's n/2 each way, and n/2 each way back); a reduce (`gathers`) only in a halving
/// step's first half (its second half is gathered to the root, one way), and an exchange step
/// sends the whole vector one way, to the partner that goes on. The fold and the return go one
/// way (a fold swapping halves too: in the sim its two halves cross one after the other,
/// its share of exchanges 0.2–0.29 at p = 3 against 0.5 were the swap counted).
inline double hybrid_exchange_share(Strategy s, double n, int d, bool pow2, bool returns,
                                    bool gathers) {
  if (!(n > 0)) return 0;
  const HybridBytes b = hybrid_bytes(s, n, d, pow2, returns, gathers);
  return b.total > 0 ? b.exchanged / b.total : 0;
}

}  // namespace fabcoll::tuning
