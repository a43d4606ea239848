// fc_init_from_mpi: fabcoll over the ranks of an MPI communicator. MPI carries the one
// broadcast the bootstrap needs (rank 0's store address); everything else goes through fabcoll.
#include "fabcoll/fabcoll_mpi.h"

namespace {

int mpi_bcast(void* buf, int len, void* arg) {
  const MPI_Comm comm = *static_cast<MPI_Comm*>(arg);
  return MPI_Bcast(buf, len, MPI_BYTE, 0, comm) == MPI_SUCCESS ? 0 : 1;
}

}  // namespace

extern "C" int fc_init_from_mpi(MPI_Comm comm, fc_context_t* ctx) {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised || ctx == nullptr) return FC_ERR_INVALID_ARG;
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  // Single node when the shared-memory split of comm is all of comm.
  MPI_Comm local;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local);
  int local_size = 0;
  MPI_Comm_size(local, &local_size);
  MPI_Comm_free(&local);
  int single = local_size == size ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &single, 1, MPI_INT, MPI_MIN, comm);
  MPI_Comm c = comm;
  return fc_init_bcast(rank, size, single, mpi_bcast, &c, ctx);
}
