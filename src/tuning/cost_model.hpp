// The α-β-γ cost model of the reference texts (LAWN 29 §2, Sanders et al. §13): a message of
// n bytes costs α + βn, combining n bytes costs γn. Times in seconds, β and γ per byte.
#pragma once

namespace fabcoll {

struct CostModel {
  double alpha = 5e-6;    // start-up latency (s)
  double beta = 2.5e-10;  // time per byte (s/B)
  double gamma = 1e-10;   // time per byte combined (s/B)
};

}  // namespace fabcoll
