#!/usr/bin/env bash
# Point-to-point latency and bandwidth of every path, each beside its baseline, ranks pinned
# to cores 0 and 1. Run on an otherwise idle machine (no build or test beside it).
#   scripts/bench_p2p.sh [build-dir] [max-bytes]
set -euo pipefail
B=${1:-build}
MAX=${2:-16777216}
RUN="$B/fabcoll-run -n 2 --bind-to core"
echo "## own shm transport"
$RUN --transport shm -- "$B/bench/fabcoll-pingpong" --max "$MAX"
for prov in "tcp;ofi_rxm" sockets shm; do
  echo "## ofi transport, provider $prov, beside bare libfabric on the same provider"
  $RUN --transport ofi --provider "$prov" -- "$B/bench/fabcoll-pingpong" --compare-bare --max "$MAX"
done
if [[ -x "$B/bench/fabcoll-pingpong-mpi" ]]; then
  echo "## own shm transport beside Open MPI (MPI_Send/MPI_Recv, its default shared-memory path)"
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    mpirun -n 2 --bind-to core -x FABCOLL_QUIET=1 "$B/bench/fabcoll-pingpong-mpi" --compare-mpi --max "$MAX"
fi
