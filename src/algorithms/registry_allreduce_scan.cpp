// The all-reduce, scan and exscan algorithms.
#include <array>

#include "algorithms/algorithms.hpp"

namespace fabcoll {

std::span<const Algorithm* const> allreduce_scan_algorithms() {
  static constexpr std::array kAll = {
      &algorithms::kAllreduceRecursiveDoubling,
      &algorithms::kAllreduceRabenseifner,
      &algorithms::kAllreduceHybrid,
      &algorithms::kAllreduceRing,
      &algorithms::kAllreduceReduceBcast,
      &algorithms::kScanHypercube,
      &algorithms::kExscanHypercube,
      &algorithms::kScanInorderTree,
      &algorithms::kExscanInorderTree,
      &algorithms::kAllreduceTwoTree,
  };
  return kAll;
}

}  // namespace fabcoll
