#include "bootstrap/pmix_bootstrap.hpp"

#include <pmix.h>

#include <cstdlib>
#include <cstring>

#include "engine/errors.hpp"

namespace fabcoll::pmix {

namespace {
pmix_proc_t g_me;
bool g_initialised = false;
constexpr const char* kKey = "fabcoll.bootstrap";

std::uint32_t get_u32(const char* key) {
  pmix_proc_t wild;
  PMIX_LOAD_PROCID(&wild, g_me.nspace, PMIX_RANK_WILDCARD);
  pmix_value_t* val = nullptr;
  const pmix_status_t rc = PMIx_Get(&wild, key, nullptr, 0, &val);
  if (rc != PMIX_SUCCESS || val == nullptr)
    raise(Errc::transport, std::string("PMIx_Get(") + key + "): " + PMIx_Error_string(rc));
  std::uint32_t out = 0;
  if (val->type == PMIX_UINT32) out = val->data.uint32;
  PMIX_VALUE_RELEASE(val);
  return out;
}
}  // namespace

bool launched_by_pmix() {
  const char* r = std::getenv("PMIX_RANK");
  return r != nullptr && *r != '\0';
}

Job init() {
  const pmix_status_t rc = PMIx_Init(&g_me, nullptr, 0);
  if (rc != PMIX_SUCCESS)
    raise(Errc::transport, std::string("PMIx_Init: ") + PMIx_Error_string(rc));
  g_initialised = true;
  Job job;
  job.rank = static_cast<int>(g_me.rank);
  job.size = static_cast<int>(get_u32(PMIX_JOB_SIZE));
  job.single_node = get_u32(PMIX_LOCAL_SIZE) == static_cast<std::uint32_t>(job.size);
  return job;
}

int bcast(void* buf, int len, void* /*unused*/) {
  if (g_me.rank == 0) {
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = static_cast<char*>(buf);
    v.data.bo.size = static_cast<std::size_t>(len);
    if (PMIx_Put(PMIX_GLOBAL, kKey, &v) != PMIX_SUCCESS || PMIx_Commit() != PMIX_SUCCESS) return 1;
  }
  pmix_info_t info;
  bool collect = true;
  PMIX_INFO_CONSTRUCT(&info);
  PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
  const pmix_status_t frc = PMIx_Fence(nullptr, 0, &info, 1);
  PMIX_INFO_DESTRUCT(&info);
  if (frc != PMIX_SUCCESS) return 2;
  if (g_me.rank == 0) return 0;
  pmix_proc_t root;
  PMIX_LOAD_PROCID(&root, g_me.nspace, 0);
  pmix_value_t* val = nullptr;
  if (PMIx_Get(&root, kKey, nullptr, 0, &val) != PMIX_SUCCESS || val == nullptr) return 3;
  int rc = 4;
  if (val->type == PMIX_BYTE_OBJECT && val->data.bo.size == static_cast<std::size_t>(len)) {
    std::memcpy(buf, val->data.bo.bytes, static_cast<std::size_t>(len));
    rc = 0;
  }
  PMIX_VALUE_RELEASE(val);
  return rc;
}

void finalize() {
  if (g_initialised) {
    PMIx_Finalize(nullptr, 0);
    g_initialised = false;
  }
}

}  // namespace fabcoll::pmix
