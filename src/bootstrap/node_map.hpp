// The node map: which world ranks share a node. Ranks are grouped by hostname, or by
// FABCOLL_NODE when set (virtual nodes on one machine, e.g. from `fabcoll-run --nodes K`).
#pragma once

#include <string>
#include <vector>

#include "bootstrap/store.hpp"

namespace fabcoll {

struct NodeMap {
  std::vector<std::string> node_of;  // world rank -> node name
  std::vector<int> local;            // world ranks on this rank's node, ascending
  int node_index = 0;                // index of this rank's node among the distinct nodes
  int nodes = 1;                     // number of distinct nodes
};

/// This process's node name: FABCOLL_NODE, else the hostname.
std::string local_node_name();
/// Exchanges node names through the store (collective over all ranks).
NodeMap exchange_node_map(Store& store, double timeout_s);

}  // namespace fabcoll
