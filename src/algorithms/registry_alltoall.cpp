// All-to-all(v), reduce-scatter and circular-shift algorithms.
#include <array>

#include "algorithms/algorithms.hpp"

namespace fabcoll {

std::span<const Algorithm* const> alltoall_algorithms() {
  static constexpr std::array kAll = {
      &algorithms::kAlltoallOneFactor,
      &algorithms::kAlltoallPairwiseXor,
      &algorithms::kAlltoallCircular,
      &algorithms::kAlltoallHypercube,
      &algorithms::kAlltoallBruck,
      &algorithms::kAlltoallGrid,
      &algorithms::kAlltoallGridNd,
      &algorithms::kAlltoallPostAll,  // after the others: ties go to the texts' algorithms
      &algorithms::kAlltoallvDirect,
      &algorithms::kAlltoallvTwoPhase,
      &algorithms::kReduceScatterRecursiveHalving,
      &algorithms::kReduceScatterPairwise,
      &algorithms::kReduceScatterRing,
      &algorithms::kReduceScatterRecursiveDoubling,
  };
  return kAll;
}

}  // namespace fabcoll
