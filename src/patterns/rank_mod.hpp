// x mod p for rank arithmetic, in [0, p) for every x (p > 0).
#pragma once

namespace fabcoll {

/// x mod p without a division when x lies in [-p, 2p), as the ranks the patterns compute
/// almost always do: an integer division takes 20–40 cycles here, on the critical path of a
/// small message (two per round of the dissemination barrier).
[[nodiscard]] constexpr int rank_mod(int x, int p) {
  if (x >= 0) {
    if (x < p) return x;
    if (x - p < p) return x - p;  // x < 2p without forming 2p
    return x % p;
  }
  if (x >= -p) return x + p;
  const int r = x % p;  // in (-p, 0]
  return r == 0 ? 0 : r + p;
}

static_assert(rank_mod(0, 5) == 0 && rank_mod(7, 5) == 2 && rank_mod(12, 5) == 2);
static_assert(rank_mod(-1, 5) == 4 && rank_mod(-5, 5) == 0 && rank_mod(-6, 5) == 4);
static_assert(rank_mod(-10, 5) == 0 && rank_mod(-11, 5) == 4 && rank_mod(4, 1) == 0);

}  // namespace fabcoll
