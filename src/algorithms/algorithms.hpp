// Declarations of the algorithm registry entries, one per textbook algorithm file.
#pragma once

#include "algorithms/registry.hpp"

namespace fabcoll::algorithms {

// bcast
extern const Algorithm kBcastBinomial;
// allreduce
extern const Algorithm kAllreduceRecursiveDoubling;

}  // namespace fabcoll::algorithms
