#include "bootstrap/node_map.hpp"

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

NodeMap exchange_node_map(Store& store, double timeout_s) {
  NodeMap m;
  const std::string mine = local_node_name();
  store.put("node/" + std::to_string(store.rank()), mine);
  m.node_of.resize(static_cast<std::size_t>(store.size()));
  std::vector<std::string> distinct;
  for (int r = 0; r < store.size(); ++r) {
    std::string n = store.get("node/" + std::to_string(r), timeout_s);
    if (n == mine) m.local.push_back(r);
    if (std::find(distinct.begin(), distinct.end(), n) == distinct.end()) distinct.push_back(n);
    m.node_of[static_cast<std::size_t>(r)] = std::move(n);
  }
  m.nodes = static_cast<int>(distinct.size());
  m.node_index =
      static_cast<int>(std::find(distinct.begin(), distinct.end(), mine) - distinct.begin());
  return m;
}

}  // namespace fabcoll
