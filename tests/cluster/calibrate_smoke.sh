#!/usr/bin/env bash
# fabcoll-calibrate --quick under fabcoll-run: it must write a tuning file that fabcoll-info
# --tuning accepts without a notice, a report with the summary, CSV data and (when
# matplotlib is installed) the plots, and the written-data probe (written_probe). Its first
# attempt is counted as disturbed (FABCOLL_CALIBRATE_TEST_DISTURB=1) with --retries 1: the
# calibration must run again once, and say so.
#   calibrate_smoke.sh FABCOLL_RUN FABCOLL_CALIBRATE FABCOLL_INFO P [fabcoll-run options...]
set -euo pipefail
run=$1 cal=$2 info=$3 p=$4
shift 4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# --gamma-large-from beyond its 16 MiB: an error naming the option, before any rank starts (1e12
# threw std::bad_alloc out of main).
if "$cal" --gamma-large-from 1e12 >"$work/big" 2>&1; then
  echo "--gamma-large-from 1e12 was accepted"; cat "$work/big"; exit 1
fi
grep -q -- "--gamma-large-from" "$work/big" || { echo "no error naming --gamma-large-from"; cat "$work/big"; exit 1; }
FABCOLL_CALIBRATE_TEST_DISTURB=1 "$run" -n "$p" "$@" -- "$cal" --quick --retries 1 \
  -o "$work/tuning.json" --report "$work/report" >"$work/out" 2>"$work/err" || {
  cat "$work/out" "$work/err"; exit 1; }
grep -q "median |predicted - measured| / measured" "$work/out"
# The largest regret with its interval over the resampled rounds, on the line and per size.
grep -Eq "max selection regret = [0-9.]+% \(90% interval [0-9.]+–[0-9.]+%; " "$work/out" ||
  { echo "no regret interval on the summary line"; cat "$work/out"; exit 1; }
python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))["validation"]["regret_by_size"]
sys.exit(0 if v and all(0 <= r["interval"][0] <= r["interval"][1] for r in v) else 1)' \
  "$work/tuning.json" || { echo "no regret interval per size in the validation summary"; exit 1; }
# The written-data probe, printed and in the validation summary, before and after (> 0).
# Also after each validated size: one probe per size, their range on the line.
grep -Eq "^written data across CPUs .*: x[0-9.]+ before the fit, x[0-9.]+ after the validation \(x[0-9.]+–x[0-9.]+ after each validated size\)" "$work/out" ||
  { echo "no written-data probe line"; cat "$work/out"; exit 1; }
python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))["validation"]
w = v["written_probe"]
sizes = {(r["collective"], r["n"]) for r in v["runs"]}
ok = w["before"] > 0 and w["after"] > 0 and len(w["during"]) == len(sizes) and min(w["during"]) > 0
# Each run and each size regret carries the probe taken right after its size, one of "during".
ok = ok and all(r["probe"] in w["during"] for r in v["runs"] + v["regret_by_size"])
sys.exit(0 if ok else 1)' "$work/tuning.json" ||
  { echo "no written_probe (before, after, one per validated size during) in the validation summary"; exit 1; }
# A candidate whose run sends the same messages as another's at its size (fabcoll::
# same_messages: the hybrid at recursive doubling's strategy, at p = 2 the broadcasts of one
# whole message) is timed once: same rounds, same time, its sibling timed itself; the line says
# so.
python3 -c '
import json, sys
runs = json.load(open(sys.argv[1]))["validation"]["runs"]
twins = [r for r in runs if r["same_messages_as"]]
for t in twins:
    sib = [r for r in runs if r["collective"] == t["collective"] and r["n"] == t["n"]
           and r["algorithm"] == t["same_messages_as"]]
    assert len(sib) == 1 and not sib[0]["same_messages_as"], t
    assert sib[0]["measured"] == t["measured"] and sib[0]["rounds"] == t["rounds"], (t, sib)
sys.exit(0)' "$work/tuning.json" || { echo "a twin run not timed as its sibling"; exit 1; }
if python3 -c '
import json, sys
sys.exit(0 if any(r["same_messages_as"] for r in json.load(open(sys.argv[1]))["validation"]["runs"]) else 1)' \
  "$work/tuning.json"; then
  grep -q ", timed once)" "$work/out" || { echo "twin not marked on its line"; exit 1; }
fi
# How each run was timed: over the fabric each call apart (a barrier before each) at every size,
# inside a node back to back in batches (time_candidates).
python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))
fabric = any(l["class"].startswith("ofi") for l in t["links"])
runs = t["validation"]["runs"]
want = lambda r: "apart" if fabric else "batch"
bad = [r for r in runs if r["timed"] != want(r)]
assert runs and not bad, bad
sys.exit(0)' "$work/tuning.json" || { echo "a run not timed as its link and size say"; exit 1; }
if grep -q '"class": "ofi' "$work/tuning.json"; then
  grep -Eq "^barrier: [0-9.]+ us measured alone \(each call timed apart, between barriers: none taken off\)" \
    "$work/out" || { echo "no barrier line for calls timed apart: $(grep '^barrier' "$work/out")"; exit 1; }
fi
# Each size is timed in the validation's passes (kValidationPasses): every run has the rounds of
# each pass, at least 11 in each (31 over 3, the budget's floor), summing to its rounds.
python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))["validation"]
k = v["passes"]
runs = v["runs"]
bad = [r for r in runs if len(r["rounds_per_pass"]) != k or sum(r["rounds_per_pass"]) != r["rounds"]
       or min(r["rounds_per_pass"]) < 11]
assert k == 3 and runs and not bad, bad
sys.exit(0)' "$work/tuning.json" || { echo "a validated run not timed in the passes"; exit 1; }
# Where the pace moved: the ping-pong before the validation and the validation's passes, in the
# output, the summary and the JSON (positive ratios).
grep -Eq "^the pace within the run: ping-pong before the validation x[0-9.]+ the first; the validation's last pass x[0-9.]+ its first" \
  "$work/out" || { echo "no pace line"; cat "$work/out"; exit 1; }
grep -q "Timed once more just before the validation it took x" "$work/report/summary.md" ||
  { echo "no pace sentence in summary.md"; exit 1; }
python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))["validation"]
# (1 exactly is what they hold when nothing was measured: a ratio of timed medians is not.)
ok = all(v[k] > 0 and v[k] != 1 for k in ("pingpong_drift_before_validation",
                                          "validation_last_pass_over_first"))
sys.exit(0 if ok else 1)' "$work/tuning.json" || { echo "no pace figures in the JSON"; exit 1; }
# The retry: announced, counted in the output, the summary and the report.
grep -q "attempt 1: the machine changed speed during the run" "$work/err" ||
  { echo "no retry announced"; cat "$work/err"; exit 1; }
grep -q "^attempts: 2 " "$work/out" || { echo "no 'attempts: 2' line"; cat "$work/out"; exit 1; }
python3 -c '
import json, sys
sys.exit(0 if json.load(open(sys.argv[1]))["validation"]["attempts"] == 2 else 1)' \
  "$work/tuning.json" || { echo "attempts != 2 in the validation summary"; exit 1; }
grep -q "This was attempt 2" "$work/report/summary.md" ||
  { echo "report does not name the attempt"; exit 1; }
# γ beyond the cache: over the fabric, and inside a node where every rank has a core (layout
# 0), measured (both keys, the sum into a third buffer in gamma.csv at four sizes from the
# threshold, and its line); where ranks share cores inside a node none.
python3 -c '
import csv, json, sys
t = json.load(open(sys.argv[1]))
rows = [r for r in csv.reader(open(sys.argv[2])) if r and r[0] == "sum/float64/combine_to"]
for l in t["links"]:
    if l["class"].startswith("ofi") or l["local_ranks"] == 0:
        assert len(rows) == 4, rows
        # Kept where it came out above γ (sum, float64): the median time per byte of the rows.
        per_byte = sorted(float(r[2]) / float(r[1]) for r in rows)
        gamma = next(g["gamma"] for g in t["gamma"] if g["op"] == "sum" and g["datatype"] == "float64")
        if "gamma_large" not in l:
            assert "gamma_large_from" not in l and (per_byte[1] + per_byte[2]) / 2 <= gamma, (l, rows)
            continue
        assert l["gamma_large_from"] > 0 and l["gamma_large"] > gamma, l
        assert float(rows[0][1]) >= l["gamma_large_from"] - 8, rows
    else:
        assert "gamma_large" not in l and "gamma_large_from" not in l and not rows, l
sys.exit(0)' "$work/tuning.json" "$work/report/gamma.csv" ||
  { echo "gamma beyond the cache not as its link says"; exit 1; }
# β beyond the cache inside a node where every rank has a core: fitted to the ping-pong above
# the single-copy threshold (from half the L2), kept where it costs more than β above it, with
# at least two of the ping-pong's sizes from it, and named on the link line; none over the
# fabric.
python3 -c '
import csv, json, sys
t = json.load(open(sys.argv[1]))
sizes = {float(r["n"]) for r in csv.DictReader(open(sys.argv[2])) if r["kind"] == "median"}
for l in t["links"]:
    if l["class"] == "shm" and l["local_ranks"] == 0 and "large_from" in l:
        assert l["break_bytes"] > 0 and l["large_from"] > l["break_bytes"], l
        assert l["beta_large"] > l["beta_above"], l
        assert len([n for n in sizes if n >= l["large_from"]]) >= 2, (l, sorted(sizes))
        print("large")
    elif l["class"].startswith("ofi"):
        assert "large_from" not in l and "beta_large" not in l, l
' "$work/tuning.json" "$work/report/pingpong.csv" >"$work/large" ||
  { echo "beta beyond the cache not as its link says"; exit 1; }
if grep -q large "$work/large"; then
  grep -Eq "^link shm: .*whole messages from [0-9]+ B \(beyond the cache\): beta = " "$work/out" ||
    { echo "no beta beyond the cache on the link line"; cat "$work/out"; exit 1; }
  grep -q "β beyond the cache: a single copy from" "$work/report/summary.md" ||
    { echo "the report does not explain beta beyond the cache"; exit 1; }
elif grep -q "^link shm: " "$work/out"; then
  # None kept: calibrate says why (it did not turn off silently).
  grep -q "no beta beyond the cache" "$work/err" ||
    { echo "no beta beyond the cache and no reason given"; cat "$work/err"; exit 1; }
fi
if grep -q '"gamma_large"' "$work/tuning.json"; then
  grep -Eq "^gamma beyond the cache = [0-9.e+-]+ s/B .*from [0-9]+ B" "$work/out" ||
    { echo "no gamma beyond the cache line"; exit 1; }
  "$info" --explain allreduce 1048576 --p "$p" --tuning "$work/tuning.json" >"$work/explain_big"
  grep -q "beyond the cache: combines of messages (or packets) of [0-9]* B and more cost gamma" \
    "$work/explain_big" ||
    { echo "fabcoll-info --explain does not show gamma beyond the cache"; exit 1; }
fi
for f in tuning.json summary.md pingpong.csv validation.csv gamma.csv; do
  test -s "$work/report/$f" || { echo "missing report/$f"; exit 1; }
done
if /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
  test -s "$work/report/pingpong.png" || { echo "missing pingpong.png"; cat "$work/err"; exit 1; }
fi
"$info" --explain allreduce 65536 --p "$p" --tuning "$work/tuning.json" >"$work/explain" 2>"$work/notice"
if [[ -s $work/notice ]]; then echo "unexpected notice:"; cat "$work/notice"; exit 1; fi
grep -q "tuning file" "$work/explain"
grep -q "CHOSEN" "$work/explain"
grep -q "exchange" "$work/explain"
echo "calibrate_smoke: ok"; grep -E "^link|^median" "$work/out"
