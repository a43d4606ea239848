#!/usr/bin/env bash
# Point-to-point latency and bandwidth of every path, each beside its baseline, ranks pinned
# to cores 0 and 1. Run on an otherwise idle machine (no build or test beside it).
#   scripts/bench_p2p.sh [build-dir] [max-bytes] [batches]
# batches: paired batches per size (default: fabcoll-pingpong's); 61 resolves a 3% difference
# at >= 1 MiB on the development VM, where 21 came out up to 8% apart against itself.
set -euo pipefail
B=${1:-build}
MAX=${2:-16777216}
BATCH_ARGS=()
[[ -n "${3:-}" ]] && BATCH_ARGS=(--batches "$3")
RUN="$B/fabcoll-run -n 2 --bind-to core"
echo "## own shm transport"
$RUN --transport shm -- "$B/bench/fabcoll-pingpong" --max "$MAX" "${BATCH_ARGS[@]}"
for prov in "tcp;ofi_rxm" sockets shm; do
  echo "## ofi transport, provider $prov, beside bare libfabric on the same provider"
  $RUN --transport ofi --provider "$prov" -- "$B/bench/fabcoll-pingpong" --compare-bare --max "$MAX" "${BATCH_ARGS[@]}"
done
if [[ -x "$B/bench/fabcoll-pingpong-mpi" ]]; then
  echo "## own shm transport beside Open MPI (MPI_Send/MPI_Recv, its default shared-memory path)"
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    mpirun -n 2 --bind-to core -x FABCOLL_QUIET=1 "$B/bench/fabcoll-pingpong-mpi" --compare-mpi --max "$MAX" "${BATCH_ARGS[@]}"
fi
