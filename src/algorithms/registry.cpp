#include "algorithms/registry.hpp"

#include <algorithm>
#include <vector>

namespace fabcoll {

const char* collective_name(Collective c) noexcept {
  switch (c) {
    case Collective::bcast:
      return "bcast";
    case Collective::reduce:
      return "reduce";
    case Collective::allreduce:
      return "allreduce";
    case Collective::scan:
      return "scan";
    case Collective::exscan:
      return "exscan";
    case Collective::barrier:
      return "barrier";
    case Collective::gather:
      return "gather";
    case Collective::scatter:
      return "scatter";
    case Collective::allgather:
      return "allgather";
    case Collective::allgatherv:
      return "allgatherv";
    case Collective::alltoall:
      return "alltoall";
    case Collective::alltoallv:
      return "alltoallv";
    case Collective::reduce_scatter_block:
      return "reduce_scatter_block";
    case Collective::count_:
      break;
  }
  return "unknown";
}

std::span<const Algorithm* const> all_algorithms() {
  static const std::vector<const Algorithm*> all = [] {
    std::vector<const Algorithm*> v;
    for (const auto family : {bcast_reduce_algorithms(), allreduce_scan_algorithms(),
                              gather_barrier_algorithms(), alltoall_algorithms()})
      for (const Algorithm* a : family) v.push_back(a);
    return v;
  }();
  return all;
}

CostModel Algorithm::costed(const CostQuery& q) const {
  CostModel m = q.m;
  if (m.written != 1 && written_share != nullptr)
    m.beta *= 1 + std::clamp(written_share(q), 0.0, 1.0) * (m.written - 1);
  m.written = 1;
  if ((m.exchange_alpha != 1 || m.exchange_beta != 1) && exchange_share != nullptr) {
    const double e = std::clamp(exchange_share(q), 0.0, 1.0);
    m.alpha *= 1 + e * (m.exchange_alpha - 1);
    m.beta *= 1 + e * (m.exchange_beta - 1);
  }
  m.exchange_alpha = m.exchange_beta = 1;
  return m;
}

const Algorithm* find_algorithm(Collective c, std::string_view name) {
  for (const Algorithm* a : all_algorithms())
    if (a->coll == c && a->name == name) return a;
  return nullptr;
}

}  // namespace fabcoll
