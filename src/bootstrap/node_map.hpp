// The node map: which world ranks share a node. Ranks are grouped by hostname, or by
// FABCOLL_NODE when set (virtual nodes on one machine, e.g. from `fabcoll-run --nodes K`).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "bootstrap/store.hpp"

namespace fabcoll {

struct NodeMap {
  std::vector<std::string> node_of;  // world rank -> node name
  std::vector<int> local;            // world ranks on this rank's node, ascending
  std::vector<int> local_cpus;       // the CPU each of them is pinned to (-1: not to one CPU)
  int node_index = 0;                // index of this rank's node among the distinct nodes
  int nodes = 1;                     // number of distinct nodes
};

/// The CPUs this process may run on (sched_getaffinity, any number of CPUs), ascending; empty
/// when they cannot be read.
std::vector<int> allowed_cpus();
/// Pins this process to one CPU; false if the kernel refuses.
bool pin_to_cpu(int cpu);
/// The one CPU this process may run on, or -1 when its affinity allows several (or is unknown).
int pinned_cpu();
/// Which ranks of a node share a CPU, from the CPU each local rank (in rank order) is pinned
/// to (-1: not to one) and the node's CPU count `cores` (0: not known):
///   ""          the ranks do not outnumber the CPUs they use (one rank, or one per CPU), or,
///               some unpinned, they do not outnumber the node's cores;
///   "unpinned"  some rank is not pinned to one CPU, and the ranks outnumber the cores (or
///               the cores are not known);
///   "cyclic"    rank i of n sits on the (i mod C)-th of the C CPUs in use (ascending);
///   "block"     rank i sits on the floor(i C / n)-th;
///   "other"     any other placement.
/// fabcoll-run --bind-to core --map-by cyclic | block makes the two named ones.
std::string cpu_mapping(const std::vector<int>& cpus, int cores = 0);
/// Which of c CPUs (0 … c − 1, in the order used) rank r of n runs on under a named mapping:
/// "block" ⌊rc/n⌋ where the ranks outnumber the CPUs, else (cyclic) r mod c.
std::size_t mapped_cpu(std::string_view mapping, std::size_t r, std::size_t n, std::size_t c);

/// This process's node name: FABCOLL_NODE, else the hostname.
std::string local_node_name();
/// Exchanges node names and pinned CPUs through the store (collective over all ranks).
NodeMap exchange_node_map(Store& store, double timeout_s);

}  // namespace fabcoll
