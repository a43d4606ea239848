#!/usr/bin/env bash
# fabcoll-run --bind-to core pins each rank to one of the launcher's allowed CPUs: with more
# ranks (n) than CPUs (C), --map-by cyclic (default) gives rank r the (r mod C)-th, --map-by
# block the floor(r C / n)-th; with n <= C rank r gets the r-th either way. --map-by without
# --bind-to core is refused (exit 2). Each rank prints the CPUs it may run on, and the engine
# names the mapping it finds (fabcoll-info --layout: "ranks sharing a CPU"). With a
# calibration made under each mapping, a job takes the tuning entry of its own mapping, and
# says so when the file has only the other one; its model places the ranks on their CPUs.
#   bind_map.sh FABCOLL_RUN FABCOLL_INFO FABCOLL_CALIBRATE
# Needs two allowed CPUs (exit 77, skipped, with fewer).
set -uo pipefail
RUN=$1
INFO=$2
CAL=$3
fail() { echo "bind_map: $*" >&2; exit 1; }
# The first two of this shell's allowed CPUs; the launcher is then held to them.
read -r -a all <<<"$(python3 -c 'import os; print(*sorted(os.sched_getaffinity(0))[:2])')"
((${#all[@]} >= 1)) || fail "cannot read the allowed CPUs"
if ((${#all[@]} < 2)); then
  echo "bind_map: one allowed CPU: nothing to map, skipped"
  exit 77
fi
cpus=${all[0]},${all[1]}
C=2
check() {  # check N MAP: every rank of an N-rank job on the CPU that MAP gives it
  local n=$1 map=$2 args=(--bind-to core) out r slot
  [[ -n $map ]] && args+=(--map-by "$map")
  out=$(taskset -c "$cpus" "$RUN" -n "$n" "${args[@]}" --tag-output -- \
        grep Cpus_allowed_list /proc/self/status 2>&1) || fail "launch (n=$n ${map:-default}) failed: $out"
  for ((r = 0; r < n; ++r)); do
    if [[ $map == block ]] && ((n > C)); then slot=$((r * C / n)); else slot=$((r % C)); fi
    grep -Eq "^\[$r\] Cpus_allowed_list:[[:space:]]+${all[$slot]}\$" <<<"$out" ||
      fail "n=$n ${map:-default} map: rank $r is not on CPU ${all[$slot]} only:"$'\n'"$out"
  done
  echo "bind_map: n=$n ${map:-default (cyclic)}: ok"
}
for map in "" cyclic block; do check 5 "$map"; done
check 2 block
out=$("$RUN" -n 2 --map-by block true 2>&1)
rc=$?
((rc == 2)) || fail "--map-by without --bind-to core: exit $rc, expected 2 ($out)"
grep -q "needs --bind-to core" <<<"$out" || fail "no clear error for --map-by alone: $out"
# The engine reads the ranks' affinities (node map): the mapping that selects the tuning entry.
for map in cyclic block; do
  out=$(FABCOLL_QUIET=1 taskset -c "$cpus" "$RUN" -n 4 --bind-to core --map-by $map -- \
        "$INFO" --layout 2>&1) || fail "fabcoll-info --layout ($map) failed: $out"
  grep -q "ranks sharing a CPU: $map\$" <<<"$out" || fail "engine did not find $map mapping: $out"
  # and its model places them so (Placement: ω only on written data that crosses CPUs)
  if [[ $map == cyclic ]]; then want="${all[0]} ${all[1]} ${all[0]} ${all[1]}"
  else want="${all[0]} ${all[0]} ${all[1]} ${all[1]}"; fi
  grep -q "model places ranks on CPUs: $want " <<<"$out" || fail "model not placed $map: $out"
done
out=$(FABCOLL_QUIET=1 taskset -c "$cpus" "$RUN" -n 2 --bind-to core -- "$INFO" --layout 2>&1)
grep -q "ranks sharing a CPU: none" <<<"$out" || fail "2 ranks on 2 CPUs share one: $out"
grep -q "model places ranks" <<<"$out" && fail "a placement although no CPU is shared: $out"
echo "bind_map: engine mapping: ok"
# Tuning entries per mapping: 2 ranks per core of this machine, held to two CPUs (measure and
# fit only). Skipped on machines of more than 4 cores (it would start 2 ranks per core).
cores=$(getconf _NPROCESSORS_ONLN)  # what std::thread::hardware_concurrency reports
if ((cores > 4)); then
  echo "bind_map: $cores cores: tuning entries per mapping not exercised"
  echo "bind_map: ok"
  exit 0
fi
n=$((2 * cores))
layout="$n ranks on $cores cores"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
f=$work/tuning.json
calibrate() {  # calibrate MAP: into $f, ranks mapped so
  taskset -c "$cpus" "$RUN" -n $n --bind-to core --map-by "$1" -- "$CAL" --quick --no-validate \
    -o "$f" >"$work/cal.out" 2>&1 || fail "calibration under $1 failed: $(cat "$work/cal.out")"
}
layout_of() {  # layout_of MAP: fabcoll-info --layout of a job mapped so, with the file
  FABCOLL_TUNING=$f taskset -c "$cpus" "$RUN" -n $n --bind-to core --map-by "$1" -- \
    "$INFO" --layout 2>&1
}
calibrate block
grep -q "\"layout\": \"$layout, block\"" "$f" || fail "no '$layout, block' entry: $(cat "$f")"
out=$(layout_of cyclic)
grep -q "measured $layout, block" <<<"$out" || fail "cyclic job without its entry: $out"
grep -q "measured with block mapping.*these ranks are cyclic" <<<"$out" ||
  fail "no notice that the entry was measured under another mapping: $out"
calibrate cyclic
out=$(layout_of cyclic)
grep -q "measured $layout, cyclic" <<<"$out" || fail "cyclic job does not take its entry: $out"
grep -q "measured with" <<<"$out" && fail "notice although the mapping matches: $out"
out=$(layout_of block)
grep -q "measured $layout, block" <<<"$out" || fail "block job does not take its entry: $out"
out=$("$INFO" --explain allreduce 65536 --p $n --tuning "$f" --mapping block 2>&1)
grep -q "measured $layout, block" <<<"$out" || fail "--explain --mapping block: $out"
# 4 ranks on the two CPUs: recursive doubling's written data (its second step, partners 2
# apart) stays on a CPU under cyclic (ranks r and r + 2 share one) and crosses under block:
# its written share f. --explain places the ranks on this shell's allowed CPUs.
written_of() {  # written_of MAP: recursive doubling's 'written' column at 128 KiB
  taskset -c "$cpus" "$INFO" --explain allreduce 131072 --p 4 --tuning "$f" --mapping "$1" 2>&1 |
    awk '$1 == "recursive_doubling" { print $5 }'
}
[[ $(written_of cyclic) == 0.000 ]] || fail "cyclic: recursive doubling written $(written_of cyclic)"
[[ $(written_of block) != 0.000 && -n $(written_of block) ]] ||
  fail "block: recursive doubling written '$(written_of block)'"
# Where ranks are placed (pinned), the fit also gives β_x, the exchanges' ring bytes across
# CPUs: every entry whose fit held (R² above 0.5, β above its 1e-13 floor, α under 100 µs),
# block and cyclic; --explain costs recursive
# doubling's at 16 KiB with it (half its bytes cross under cyclic: its first step, partners 1
# apart). Beside other tests (ctest -j2) a fit failed outright until the forty-third session:
# a barrier measured alone took 4 ms and every timed run came out at the 1 ns floor
# (docs/calibration.md, "Forty-second session"; calibrate_busy_barrier tests the fix). A
# machine busy enough can still fit α far above a quiet one's (α 795 µs with two busy
# processes beside the ranks); such an entry is not judged here.
sane=$(python3 - "$f" <<'PY'
import json, sys
for l in json.load(open(sys.argv[1]))["links"]:
    held = l["r2"] > 0.5 and l["beta"] > 1e-12 and l["alpha"] < 1e-4
    if l.get("mapping") in ("cyclic", "block") and held:
        assert l.get("ring_exchange_beta", -1) >= 0, l
        print(l["mapping"])
PY
) || fail "an entry without beta_x: $(cat "$f")"
if grep -q cyclic <<<"$sane"; then
  out=$(taskset -c "$cpus" "$INFO" --explain allreduce 16384 --p 4 --tuning "$f" --mapping cyclic 2>&1)
  grep -q "cost beta_x = " <<<"$out" || fail "--explain does not say beta_x: $out"
  grep -Eq "^recursive_doubling .*ring x 0\.50" <<<"$out" || fail "recursive doubling's ring x: $out"
fi
echo "bind_map: beta_x in the entries that fitted: ${sane//$'\n'/ }"
echo "bind_map: tuning entries per mapping: ok"
echo "bind_map: ok"
