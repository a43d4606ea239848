#include "bootstrap/node_map.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

namespace fabcoll {

std::string local_node_name() {
  if (const char* v = std::getenv("FABCOLL_NODE"); v != nullptr && *v != '\0') return v;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) return "localhost";
  return host;
}

std::vector<int> allowed_cpus() {
  // A dynamically sized set, doubled while the kernel's mask is larger (EINVAL): a fixed
  // cpu_set_t holds only 1024 CPUs.
  for (int n = 1024; n <= (1 << 20); n *= 2) {
    cpu_set_t* set = CPU_ALLOC(static_cast<std::size_t>(n));
    if (set == nullptr) return {};
    const std::size_t bytes = CPU_ALLOC_SIZE(static_cast<std::size_t>(n));
    CPU_ZERO_S(bytes, set);
    if (::sched_getaffinity(0, bytes, set) == 0) {
      std::vector<int> out;
      for (int c = 0; c < n; ++c)
        if (CPU_ISSET_S(static_cast<std::size_t>(c), bytes, set)) out.push_back(c);
      CPU_FREE(set);
      return out;
    }
    const int err = errno;
    CPU_FREE(set);
    if (err != EINVAL) return {};
  }
  return {};
}

bool pin_to_cpu(int cpu) {
  if (cpu < 0) return false;
  const auto n = static_cast<std::size_t>(cpu) + 1;
  cpu_set_t* set = CPU_ALLOC(n);
  if (set == nullptr) return false;
  const std::size_t bytes = CPU_ALLOC_SIZE(n);
  CPU_ZERO_S(bytes, set);
  CPU_SET_S(static_cast<std::size_t>(cpu), bytes, set);
  const bool ok = ::sched_setaffinity(0, bytes, set) == 0;
  CPU_FREE(set);
  return ok;
}

int pinned_cpu() {
  const std::vector<int> cpus = allowed_cpus();
  return cpus.size() == 1 ? cpus.front() : -1;
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
    cyclic = cyclic && cpus[i] == used[mapped_cpu("cyclic", i, n, c)];
    block = block && cpus[i] == used[mapped_cpu("block", i, n, c)];
  }
  return cyclic ? "cyclic" : block ? "block" : "other";
}

std::size_t mapped_cpu(std::string_view mapping, std::size_t r, std::size_t n, std::size_t c) {
  if (c == 0) return 0;
  return mapping == "block" && n > c ? r * c / n : r % c;
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
