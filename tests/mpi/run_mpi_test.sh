#!/usr/bin/env bash
# The same MPI program under mpirun without and with LD_PRELOAD=libfabcoll_mpi.so:
#  - both runs pass their own checks (results against locally computed references);
#  - both print the same per-rank digests of every defined result byte;
#  - with the preload and FABCOLL_MPI_VERBOSE=2, every rank reports calls routed to fabcoll
#    (total > 0 and every collective listed below > 0) and some handed to PMPI (the program
#    makes calls the interposer must not route: derived datatype, user op, in-place alltoall).
# usage: run_mpi_test.sh MPIRUN NPROCS PROGRAM LIBFABCOLL_MPI [collective...]
set -u
mpirun=$1 np=$2 prog=$3 lib=$4
shift 4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
args=(--oversubscribe -n "$np" -x FABCOLL_TIMEOUT=60)
[ -n "${MPI_COLLS_INIT:-}" ] && args+=(-x MPI_COLLS_INIT)
fail=0

"$mpirun" "${args[@]}" "$prog" >"$work/plain.out" 2>"$work/plain.err"
rc=$?
if [ $rc -ne 0 ]; then echo "run without preload failed (rc=$rc)"; cat "$work/plain.out" "$work/plain.err"; exit 1; fi

"$mpirun" "${args[@]}" -x LD_PRELOAD="$lib" -x FABCOLL_MPI_VERBOSE=2 "$prog" >"$work/pre.out" 2>"$work/pre.err"
rc=$?
if [ $rc -ne 0 ]; then echo "run with preload failed (rc=$rc)"; cat "$work/pre.out"; tail -50 "$work/pre.err"; exit 1; fi

cat "$work/pre.out"
if ! diff <(grep '^digest' "$work/plain.out") <(grep '^digest' "$work/pre.out"); then
  echo "FAIL: digests differ with and without the preload"; fail=1
fi
if [ "$(grep -c '^digest' "$work/pre.out")" -ne "$np" ]; then echo "FAIL: expected $np digests"; fail=1; fi

for r in $(seq 0 $((np - 1))); do
  line=$(grep "^fabcoll_mpi: rank $r: total " "$work/pre.err")
  echo "$line"
  routed=$(sed -n 's/.*total fabcoll=\([0-9]*\) pmpi=\([0-9]*\).*/\1/p' <<<"$line")
  pmpi=$(sed -n 's/.*total fabcoll=\([0-9]*\) pmpi=\([0-9]*\).*/\2/p' <<<"$line")
  if [ -z "$routed" ] || [ "$routed" -le 0 ]; then echo "FAIL: rank $r routed nothing to fabcoll"; fail=1; fi
  if [ -z "$pmpi" ] || [ "$pmpi" -le 0 ]; then echo "FAIL: rank $r handed nothing to PMPI"; fail=1; fi
  for c in "$@"; do
    n=$(sed -n "s/^fabcoll_mpi: rank $r: MPI_$c fabcoll=\([0-9]*\) .*/\1/p" "$work/pre.err")
    if [ -z "$n" ] || [ "$n" -le 0 ]; then echo "FAIL: rank $r: MPI_$c never routed to fabcoll"; fail=1; fi
  done
done
# the one error the program provokes (an invalid root) must be reported by fabcoll on every rank;
# any other fabcoll error fails the test
n_root=$(grep -c "fabcoll_mpi: rank [0-9]*: bcast failed: .*root" "$work/pre.err")
if [ "$n_root" -ne "$np" ]; then echo "FAIL: the invalid root was reported on $n_root of $np ranks"; fail=1; fi
if grep "failed:" "$work/pre.err" | grep -qv "bcast failed: .*root"; then
  echo "FAIL: fabcoll reported errors"; grep "failed:" "$work/pre.err" | head; fail=1
fi
[ $fail -eq 0 ] && echo "interposer test passed on $np ranks"
exit $fail
