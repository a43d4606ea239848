// Small helpers the benchmark tools share (fabcoll-bench, fabcoll-pingpong and their MPI builds).
#pragma once

#include <cstdlib>
#include <cstring>
#include <string>

namespace fabcoll::bench {

/// This process's rank as its launcher passes it (fabcoll-run, Open MPI, PMI), or nullptr.
inline const char* env_rank() {
  for (const char* v : {"FABCOLL_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK"})
    if (const char* s = std::getenv(v); s != nullptr && *s != '\0') return s;
  return nullptr;
}

/// Before the library is up: rank 0 of the job, or a process started alone (who prints usage).
inline bool first_process() {
  const char* r = env_rank();
  return r == nullptr || std::strcmp(r, "0") == 0;
}

#ifdef MPI_VERSION  // include <mpi.h> first
/// The MPI library's name and version, e.g. "Open MPI v4.1.4" (up to its first comma).
inline std::string mpi_library_name() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(version, &len);
  const std::string s(version, static_cast<std::size_t>(len));
  return s.substr(0, s.find_first_of(",\n"));
}
#endif

}  // namespace fabcoll::bench
