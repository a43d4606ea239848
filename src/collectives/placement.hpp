// Placements (algorithms/placement.hpp) as the engine and the tools make them: interned per CPU
// vector, their written_across measured on the sim transport.
#pragma once

#include <string_view>
#include <vector>

#include "algorithms/placement.hpp"

namespace fabcoll {

/// The placement of ranks on CPUs cpu[0 … p − 1], one object per distinct vector, never freed
/// (CostModel points at it); nullptr where it changes nothing: no two ranks share a CPU, or
/// a rank's CPU is not known (< 0).
const Placement* placement_of(const std::vector<int>& cpu);
/// p ranks on c CPUs under fabcoll-run's --map-by `mapping` (cyclic or block, mapped_cpu), as
/// placement_of; nullptr for any other mapping, or where the ranks do not outnumber the CPUs.
const Placement* placement_for_mapping(std::string_view mapping, int p, int c);

}  // namespace fabcoll
