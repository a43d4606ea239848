// The broadcast and reduce algorithms.
#include <array>

#include "algorithms/algorithms.hpp"

namespace fabcoll {

std::span<const Algorithm* const> bcast_reduce_algorithms() {
  static constexpr std::array kAll = {
      &algorithms::kBcastNaive,
      &algorithms::kBcastBinomial,
      &algorithms::kReduceBinomial,
      &algorithms::kReduceNaive,
      &algorithms::kBcastPipelinedBinaryTree,
      &algorithms::kBcastLinearPipeline,
      &algorithms::kReducePipelinedBinaryTree,
      &algorithms::kBcastScatterAllgather,
      &algorithms::kReduceRabenseifner,
      &algorithms::kReduceHybrid,
      &algorithms::kBcastTwoTree,
  };
  return kAll;
}

}  // namespace fabcoll
