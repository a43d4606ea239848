// The exchange family: barrier, gather, scatter, all-gather(v), all-to-all(v), reduce-scatter.
#include <array>

#include "algorithms/algorithms.hpp"

namespace fabcoll {

std::span<const Algorithm* const> exchange_family_algorithms() {
  static const std::array<const Algorithm*, 0> kAll{};
  return kAll;
}

}  // namespace fabcoll
