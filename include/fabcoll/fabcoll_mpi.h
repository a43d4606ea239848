/* fabcoll for codes that already run under MPI: initialise fabcoll over the ranks of an MPI
 * communicator. Header-only on top of fc_init_bcast (MPI carries the one broadcast the
 * bootstrap needs), so it builds with whatever MPI the code uses: link fabcoll and MPI.
 * (libfabcoll_mpi.so is something else: the PMPI interposer for unchanged MPI codes.) */
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

static inline int fc_mpi_bcast_(void* buf, int len, void* arg) {
  return MPI_Bcast(buf, len, MPI_BYTE, 0, *(MPI_Comm*)arg) == MPI_SUCCESS ? 0 : 1;
}

/** Collective over comm: a fabcoll context whose world communicator has comm's ranks in comm's
 *  order. MPI must be initialised; call fc_finalize before MPI_Finalize. */
static inline int fc_init_from_mpi(MPI_Comm comm, fc_context_t* ctx) {
  int initialised = 0, rank = 0, size = 0, local_size = 0, single = 0;
  MPI_Comm local;
  MPI_Initialized(&initialised);
  if (!initialised || ctx == NULL) return FC_ERR_INVALID_ARG;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  /* single node when the shared-memory split of comm is all of comm on every rank */
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local);
  MPI_Comm_size(local, &local_size);
  MPI_Comm_free(&local);
  single = local_size == size ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &single, 1, MPI_INT, MPI_MIN, comm);
  return fc_init_bcast(rank, size, single, fc_mpi_bcast_, &comm, ctx);
}

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
