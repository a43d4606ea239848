/* fabcoll for codes that already run under MPI: initialise fabcoll over the ranks of an MPI
 * communicator. Link with -lfabcoll_mpi (CMake: fabcoll::fabcoll_mpi). */
#ifndef FABCOLL_FABCOLL_MPI_H
#define FABCOLL_FABCOLL_MPI_H

/* Only MPI's C API is needed (the deprecated C++ bindings would need libmpi_cxx). */
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include "fabcoll/fabcoll.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Collective over comm: a fabcoll context whose world communicator has comm's ranks in comm's
 *  order. MPI must be initialised; call fc_finalize before MPI_Finalize. */
int fc_init_from_mpi(MPI_Comm comm, fc_context_t* ctx);

#ifdef __cplusplus
}

#include <stdexcept>
#include <string>

namespace fabcoll {
/// C++: a Context over the ranks of an MPI communicator.
inline fc_context_t init_from_mpi(MPI_Comm comm) {
  fc_context_t ctx = nullptr;
  const int rc = fc_init_from_mpi(comm, &ctx);
  if (rc != FC_SUCCESS) {
    throw std::runtime_error(std::string("fc_init_from_mpi: ") + fc_strerror(rc) + ": " +
                             fc_last_error_message());
  }
  return ctx;
}
}  // namespace fabcoll
#endif

#endif /* FABCOLL_FABCOLL_MPI_H */
