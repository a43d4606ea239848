// The reduction family: broadcast, reduce, all-reduce, scan, exscan.
#include <array>

#include "algorithms/algorithms.hpp"

namespace fabcoll {

std::span<const Algorithm* const> reduction_family_algorithms() {
  static constexpr std::array kAll = {
      &algorithms::kBcastBinomial,
      &algorithms::kAllreduceRecursiveDoubling,
  };
  return kAll;
}

}  // namespace fabcoll
