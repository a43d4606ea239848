// What a context is made of, for fabcoll-info and the benchmarks (internal API).
#pragma once

#include <string>
#include <vector>

#include "fabcoll/fabcoll.h"

namespace fabcoll {

class Comm;
class Progress;
namespace ofi {
class Endpoint;
}

struct ContextInfo {
  int rank = 0;
  int size = 1;
  std::string bootstrap;                  // "lone process", "fabcoll-run", "PMIx", "threads", ...
  std::vector<std::string> node_of;       // world rank -> node name (launched jobs)
  std::vector<std::string> transport_of;  // world rank -> "shm", "ofi (tcp;ofi_rxm)", "inproc"
  std::string mapping;  // which ranks of rank 0's node share a CPU (cpu_mapping; "": none do)
  bool shm_cma = false;
  std::string tuning;  // where the cost model came from
};

ContextInfo describe_context(fc_context_t ctx);
/// The world communicator and progress engine behind a context (benchmarks drive them).
Comm& world_comm(fc_context_t ctx);
Progress& context_progress(fc_context_t ctx);
/// The context's fabric endpoint (its stats, its registry), or nullptr when it has none.
ofi::Endpoint* context_ofi(fc_context_t ctx);

}  // namespace fabcoll
