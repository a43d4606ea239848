#include "bootstrap/node_map.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

namespace fabcoll {

std::string local_node_name() {
  if (const char* v = std::getenv("FABCOLL_NODE"); v != nullptr && *v != '\0') return v;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) return "localhost";
  return host;
}

int pinned_cpu() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0 || CPU_COUNT(&set) != 1) return -1;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) return c;
  return -1;
}

std::string cpu_mapping(const std::vector<int>& cpus, int cores) {
  if (cpus.size() < 2) return "";
  if (std::find(cpus.begin(), cpus.end(), -1) != cpus.end())
    return cores > 0 && cpus.size() <= static_cast<std::size_t>(cores) ? "" : "unpinned";
  std::vector<int> used = cpus;
  std::sort(used.begin(), used.end());
  used.erase(std::unique(used.begin(), used.end()), used.end());
  const std::size_t n = cpus.size();
  const std::size_t c = used.size();
  if (n <= c) return "";
  bool cyclic = true;
  bool block = true;
  for (std::size_t i = 0; i < n; ++i) {
    cyclic = cyclic && cpus[i] == used[i % c];
    block = block && cpus[i] == used[i * c / n];
  }
  return cyclic ? "cyclic" : block ? "block" : "other";
}

NodeMap exchange_node_map(Store& store, double timeout_s) {
  NodeMap m;
  const std::string mine = local_node_name();
  store.put("cpu/" + std::to_string(store.rank()), std::to_string(pinned_cpu()));
  store.put("node/" + std::to_string(store.rank()), mine);
  m.node_of.resize(static_cast<std::size_t>(store.size()));
  std::vector<std::string> distinct;
  for (int r = 0; r < store.size(); ++r) {
    std::string n = store.get("node/" + std::to_string(r), timeout_s);
    if (n == mine) m.local.push_back(r);
    if (std::find(distinct.begin(), distinct.end(), n) == distinct.end()) distinct.push_back(n);
    m.node_of[static_cast<std::size_t>(r)] = std::move(n);
  }
  for (const int r : m.local)
    m.local_cpus.push_back(std::atoi(store.get("cpu/" + std::to_string(r), timeout_s).c_str()));
  m.nodes = static_cast<int>(distinct.size());
  m.node_index =
      static_cast<int>(std::find(distinct.begin(), distinct.end(), mine) - distinct.begin());
  return m;
}

}  // namespace fabcoll
