// The all-reduce, scan and exscan algorithms.
#include <array>

#include "algorithms/algorithms.hpp"

namespace fabcoll {

std::span<const Algorithm* const> allreduce_scan_algorithms() {
  static constexpr std::array<const Algorithm*, 1> kAll = {
      &algorithms::kAllreduceRecursiveDoubling,
  };
  return kAll;
}

}  // namespace fabcoll
