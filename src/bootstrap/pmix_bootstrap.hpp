// Bootstrap under a PMIx launcher (Open MPI's mpirun/prterun, srun --mpi=pmix): PMIx gives
// rank and size, and carries one small broadcast (put + commit + fence with data collection +
// get): rank 0's bootstrap-store address. Everything else then goes through that store.
#pragma once

#include <string>

namespace fabcoll::pmix {

/// True when this process was started by a PMIx launcher (PMIX_RANK in the environment).
bool launched_by_pmix();

struct Job {
  int rank = 0;
  int size = 1;
  bool single_node = true;  // every rank on this node (PMIX_LOCAL_SIZE == PMIX_JOB_SIZE)
};

/// PMIx_Init and the job's geometry; throws EngineError on failure.
Job init();
/// Broadcasts `len` bytes of buf from rank 0 to every rank (collective). Returns 0 or an error.
int bcast(void* buf, int len, void* unused);
void finalize();

}  // namespace fabcoll::pmix
