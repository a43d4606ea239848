// Barrier, gather, scatter, all-gather and all-gatherv algorithms.
#include <array>

#include "algorithms/algorithms.hpp"

namespace fabcoll {

std::span<const Algorithm* const> gather_barrier_algorithms() {
  static constexpr std::array kAll = {
      &algorithms::kBarrierDissemination, &algorithms::kBarrierButterfly,
      &algorithms::kBarrierBinomial,      &algorithms::kBarrierTournament,
      &algorithms::kGatherBinomial,       &algorithms::kGatherLinear,
      &algorithms::kScatterBinomial,      &algorithms::kScatterLinear,
      &algorithms::kAllgatherRing,        &algorithms::kAllgatherRecursiveDoubling,
      &algorithms::kAllgatherBruck,       &algorithms::kAllgatherMesh2d,
      &algorithms::kAllgathervRing,       &algorithms::kAllgathervBruck,
      &algorithms::kBarrierLinear,
  };
  return kAll;
}

}  // namespace fabcoll
