// Barrier, gather, scatter, all-gather and all-gatherv algorithms.
#include <array>

#include "algorithms/algorithms.hpp"

namespace fabcoll {

std::span<const Algorithm* const> gather_barrier_algorithms() {
  static constexpr std::array<const Algorithm*, 0> kAll = {};
  return kAll;
}

}  // namespace fabcoll
