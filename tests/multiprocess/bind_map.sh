#!/usr/bin/env bash
# fabcoll-run --bind-to core places rank r on one CPU of the launcher's allowed set: --map-by
# cyclic (default) on CPU r mod C, --map-by block on CPU floor(r C / n); --map-by without
# --bind-to core is refused. Each rank prints the CPUs it may run on.
set -uo pipefail
RUN=$1
fail() { echo "bind_map: $*" >&2; exit 1; }
# The launcher's allowed CPUs (at most the first two), as a list the launcher is then held to.
mapfile -t all < <(python3 -c 'import os; print(*sorted(os.sched_getaffinity(0))[:2], sep="\n")')
cpus=$(IFS=,; echo "${all[*]}")
C=${#all[@]}
n=5
for map in "" cyclic block; do
  args=(--bind-to core)
  [[ -n $map ]] && args+=(--map-by "$map")
  out=$(taskset -c "$cpus" "$RUN" -n $n "${args[@]}" --tag-output -- \
        grep Cpus_allowed_list /proc/self/status 2>&1) || fail "launch (${map:-default}) failed: $out"
  for ((r = 0; r < n; ++r)); do
    if [[ $map == block ]]; then slot=$((r * C / n)); else slot=$((r % C)); fi
    want=${all[$slot]}
    grep -Eq "^\[$r\] Cpus_allowed_list:[[:space:]]+$want\$" <<<"$out" ||
      fail "${map:-default} map: rank $r is not on CPU $want only:"$'\n'"$out"
  done
  echo "bind_map: ${map:-default (cyclic)}: ok"
done
out=$("$RUN" -n 2 --map-by block true 2>&1) && fail "--map-by without --bind-to core was accepted"
grep -q "needs --bind-to core" <<<"$out" || fail "no clear error for --map-by alone: $out"
echo "bind_map: ok"
