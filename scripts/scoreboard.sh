#!/usr/bin/env bash
# The issue-7 scoreboard: fabcoll against the MPI library it is built with (Open MPI from
# Debian), every listed collective, 8 B … MAX, one run each, same process, same buffers
# (fabcoll-bench-mpi --compare-mpi). Writes one JSON file per (p, collective) and a Markdown
# summary with the ratio (fabcoll / MPI) at every size and the worst one.
#
#   scripts/scoreboard.sh [-b BUILD] [-o DIR] [-p "2 4 8"] [-c "allreduce bcast ..."] [-m MAX]
#
# p = 2 runs one rank per core (--bind-to core); larger p run oversubscribed (--oversubscribe,
# ranks yield when idle). Run it on an otherwise idle machine: a build or test beside it makes
# the figures meaningless.
set -euo pipefail

build=build
out=build/scoreboard
ps="2"
colls="allreduce bcast reduce allgather alltoall barrier"
max=16777216
usage() { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; }
while getopts "b:o:p:c:m:h" opt; do
  case $opt in
    b) build=$OPTARG ;;
    o) out=$OPTARG ;;
    p) ps=$OPTARG ;;
    c) colls=$OPTARG ;;
    m) max=$OPTARG ;;
    h) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done
bench=$build/fabcoll-bench-mpi
if [[ ! -x $bench ]]; then
  echo "scoreboard: $bench not found (build with MPI present: scripts/setup.sh)" >&2
  exit 1
fi
command -v mpirun >/dev/null || { echo "scoreboard: mpirun not found" >&2; exit 1; }
mkdir -p "$out"
root=()
[[ $(id -u) -eq 0 ]] && root=(--allow-run-as-root)
for p in $ps; do
  if (( p <= $(nproc) )); then bind=(--bind-to core); else bind=(--oversubscribe --bind-to none); fi
  for c in $colls; do
    echo "scoreboard: p=$p $c" >&2
    mpirun "${root[@]}" -n "$p" "${bind[@]}" -x FABCOLL_QUIET=1 \
      "$bench" "$c" --compare-mpi -m "8:$max" --json "$out/p${p}_$c.json" >"$out/p${p}_$c.txt"
  done
done
python3 - "$out" <<'EOF'
import glob, json, os, sys
out = sys.argv[1]
rows = []
for f in sorted(glob.glob(os.path.join(out, "p*_*.json"))):
    j = json.load(open(f))
    res = [r for r in j["results"] if r.get("ratio") is not None]
    if not res:
        continue
    worst = max(res, key=lambda r: r["ratio"])
    good = sum(1 for r in res if r["ratio"] <= 1.0)
    rows.append((j["ranks"], j["collective"], res, worst, good))
with open(os.path.join(out, "scoreboard.md"), "w") as md:
    md.write("| p | collective | sizes at ratio <= 1.0 | worst ratio (size) | ratio per size |\n")
    md.write("| --- | --- | --- | --- | --- |\n")
    for p, c, res, worst, good in sorted(rows, key=lambda r: (r[0], r[1])):
        per = " ".join(f"{r['size']}:{r['ratio']:.2f}" for r in res)
        md.write(f"| {p} | {c} | {good}/{len(res)} | {worst['ratio']:.2f} ({worst['size']} B) | {per} |\n")
print(open(os.path.join(out, "scoreboard.md")).read())
EOF
