#!/usr/bin/env bash
# fabcoll-bench smoke tests (ctest label multiprocess; tiny runs only).
#   bench_smoke.sh FABCOLL_RUN FABCOLL_BENCH MODE [ARGS...]
# MODE:
#   coll P NAME     NAME and iNAME under fabcoll-run -n P with -m 1:4096 -i 5 -x 1 -c -f pass,
#                   and the table has the OSU shape (# header lines, one row per size)
#   json P          --json writes a document that parses and has a row per size;
#                   scripts/plot_bench.py makes PNGs of it
#   bad-algorithm   an unknown --algorithm fails with a message listing the valid names
#   inject P        -c with --inject-error fails (the validation can fail)
#   types P         -c passes for other datatypes and ops (fp16, bf16, int8 wrap-around, pairs
#                   with MINLOC/MAXLOC, logical and bitwise ops) and for rooted collectives with
#                   --root P-1; a root outside the ranks and an op the datatype lacks are errors
#   pingpong        (FABCOLL_BENCH is fabcoll-pingpong) --compare-bare on sockets, tcp and
#                   libfabric shm has its columns and rows; refused on the own shm transport
#   pingpong-mpi MPIRUN  (FABCOLL_BENCH is fabcoll-pingpong-mpi) --compare-mpi under mpirun
#   mpi MPIRUN P    (FABCOLL_BENCH is fabcoll-bench-mpi) under mpirun with --compare-mpi -c: an
#                   MPI Avg and a Ratio column, mpi_avg_us in the JSON, every row Pass
set -u
run=$1 bench=$2 mode=$3
shift 3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

case $mode in
  coll)
    p=$1 name=$2
    for form in "$name" "i$name"; do
      "$run" -n "$p" --timeout 60 -- "$bench" "$form" -m 1:4096 -i 5 -x 1 -c -f >"$work/out" 2>"$work/err" ||
        { cat "$work/out" "$work/err" >&2; fail "$form on $p ranks exited non-zero"; }
      cat "$work/out"
      grep -q '^# fabcoll ' "$work/out" || fail "$form: no '# fabcoll ...' header"
      # Every line is a '#' header or a row of numbers ending in Pass.
      awk '!/^#/ && NF > 0 && $NF != "Pass" { bad = 1 } END { exit bad }' "$work/out" ||
        fail "$form: a row is not marked Pass"
      rows=$(grep -vc '^#' "$work/out")
      if [[ $name == barrier ]]; then want=1
      elif [[ $name == reduce_scatter ]]; then want=$(( $(seq 0 12 | awk -v p="$p" '{ if (2^$1 / 4 >= p) n++ } END { print n }') ))
      elif [[ $name =~ ^(reduce|allreduce|scan|exscan)$ ]]; then want=11   # float: 4..4096
      else want=13; fi                                                     # byte: 1..4096
      [[ $rows -eq $want ]] || fail "$form: $rows rows, expected $want"
    done
    ;;
  json)
    p=$1
    "$run" -n "$p" --timeout 60 -- "$bench" allgather -m 1:1024 -i 5 -x 1 -c --json "$work/r.json" >/dev/null ||
      fail "allgather --json exited non-zero"
    /usr/bin/python3 - "$work/r.json" "$p" <<'PY' || fail "the JSON document is not as expected"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["benchmark"] == "fabcoll-bench" and d["collective"] == "allgather", d
assert d["ranks"] == int(sys.argv[2]) and d["library"] == "fabcoll", d
sizes = [r["size"] for r in d["results"]]
assert sizes == [2 ** k for k in range(11)], sizes
for r in d["results"]:
    assert r["validation"] == "pass" and r["iterations"] == 5 and r["min_us"] <= r["avg_us"] <= r["max_us"], r
print("json ok:", len(sizes), "rows")
PY
    # scripts/plot_bench.py turns it into a PNG (where matplotlib is installed).
    if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
      "$run" -n "$p" --timeout 60 -- "$bench" iallgather -m 1:64 -i 3 -x 1 --json "$work/nb.json" >/dev/null ||
        fail "iallgather --json exited non-zero"
      plot=$(dirname "$0")/../../scripts/plot_bench.py
      /usr/bin/python3 "$plot" "$work/r.json" "$work/nb.json" -o "$work/all.png" >/dev/null ||
        fail "plot_bench.py failed"
      /usr/bin/python3 "$plot" "$work/r.json" "$work/nb.json" --per-collective -o "$work/plots" >/dev/null ||
        fail "plot_bench.py --per-collective failed"
      for f in all.png plots/allgather.png plots/iallgather.png; do
        [[ $(head -c 8 "$work/$f" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] || fail "$f is not a PNG"
      done
      echo "plot ok"
    fi
    ;;
  bad-algorithm)
    if "$run" -n 2 --timeout 60 --grace 5 -- "$bench" allreduce --algorithm no_such_algorithm -m 4:8 -i 1 -x 0 \
        >"$work/out" 2>"$work/err"; then
      fail "an unknown algorithm was accepted"
    fi
    cat "$work/err"
    grep -q "unknown algorithm 'no_such_algorithm' for allreduce; valid: .*recursive_doubling" "$work/err" ||
      fail "the error does not list the valid algorithms"
    # A valid one runs and is named in the header.
    "$run" -n 2 --timeout 60 -- "$bench" allreduce --algorithm recursive_doubling -m 4:64 -i 3 -x 1 -c \
      >"$work/out" 2>&1 || { cat "$work/out"; fail "--algorithm recursive_doubling failed"; }
    grep -q "Algorithm: recursive_doubling" "$work/out" || fail "the header does not name the algorithm"
    ;;
  inject)
    p=$1
    for coll in allreduce bcast barrier alltoall; do
      if "$run" -n "$p" --timeout 60 -- "$bench" "$coll" -m 1:64 -i 3 -x 1 -c --inject-error \
          >"$work/out" 2>"$work/err"; then
        cat "$work/out" "$work/err"
        fail "$coll: a corrupted result passed the validation"
      fi
      grep -q 'Fail' "$work/out" || { cat "$work/out"; fail "$coll: no row marked Fail"; }
      # Without the hook the same run passes.
      "$run" -n "$p" --timeout 60 -- "$bench" "$coll" -m 1:64 -i 3 -x 1 -c >/dev/null 2>&1 ||
        fail "$coll: the run without --inject-error failed"
    done
    echo "inject ok"
    ;;
  types)
    p=$1
    for combo in "float16 sum" "bfloat16 max" "int8 prod" "int8 sum" "double_int minloc" \
                 "float_int maxloc" "byte bxor" "uint64 band" "int32 lxor" "int16 land"; do
      read -r dt op <<<"$combo"
      for coll in allreduce reduce_scatter; do
        "$run" -n "$p" --timeout 60 -- "$bench" "$coll" --datatype "$dt" --op "$op" -m 1:64 -i 3 -x 1 -c \
          >"$work/out" 2>"$work/err" || { cat "$work/out" "$work/err" >&2; fail "$coll $dt $op failed"; }
      done
    done
    for coll in bcast reduce gather scatter ibcast igather; do
      "$run" -n "$p" --timeout 60 -- "$bench" "$coll" --root $((p - 1)) --datatype int32 -m 1:256 -i 3 -x 1 -c \
        >"$work/out" 2>"$work/err" || { cat "$work/out" "$work/err" >&2; fail "$coll --root $((p - 1)) failed"; }
      grep -q "Root: $((p - 1))\." "$work/out" || fail "$coll: the header does not name the root"
    done
    if "$run" -n "$p" --timeout 60 -- "$bench" bcast --root "$p" -i 1 >/dev/null 2>"$work/err"; then
      fail "--root $p (not a rank) was accepted"
    fi
    grep -q "is not a rank" "$work/err" || fail "no message for a bad --root"
    if "$run" -n "$p" --timeout 60 -- "$bench" allreduce --datatype float --op bor -m 4:4 -i 1 \
        >/dev/null 2>"$work/err"; then
      fail "FC_BOR on float was accepted"
    fi
    grep -q "not defined for datatype float" "$work/err" || fail "no message for an op the datatype lacks"
    echo "types ok"
    ;;
  mpi)
    mpirun=$1 p=$2
    for combo in "allreduce 10" "ibcast 1" "alltoallv 3"; do
      read -r coll rounds <<<"$combo"
      "$mpirun" --oversubscribe -n "$p" "$bench" "$coll" -m 4:1024 -i 5 -x 1 -c --compare-mpi \
        --rounds "$rounds" --json "$work/m.json" >"$work/out" 2>"$work/err" ||
        { cat "$work/out" "$work/err" >&2; fail "$coll --compare-mpi exited non-zero"; }
      cat "$work/out"
      grep -q '^# Size .*MPI Avg(us) *Ratio *Validation$' "$work/out" || fail "$coll: no MPI Avg / Ratio columns"
      grep -q "alternating in up to $rounds rounds" "$work/out" || fail "$coll: the header does not give the rounds"
      awk '!/^#/ && NF > 0 && $NF != "Pass" { bad = 1 } END { exit bad }' "$work/out" ||
        fail "$coll: a row is not marked Pass"
      /usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["results"] and all(r["mpi_avg_us"] > 0 and r["mpi_validation"] == "pass" for r in d["results"]), d
assert d["max_rounds"] == int(sys.argv[2]), d["max_rounds"]
assert all(r["rounds"] == min(int(sys.argv[2]), r["iterations"]) for r in d["results"]), d
' "$work/m.json" "$rounds" || fail "$coll: the JSON has no MPI results or rounds"
    done
    ;;
  pingpong)
    # FABCOLL_BENCH is fabcoll-pingpong: --compare-bare on each provider (sizes around the shm
    # provider's inject size) gives rows of positive figures and ratios; on the own shm
    # transport it is refused with a message.
    for prov in sockets "tcp;ofi_rxm" shm; do
      "$run" -n 2 --timeout 60 --transport ofi --provider "$prov" -- "$bench" --compare-bare \
        --min 2048 --max 8192 --iterations 20 --windows 4 >"$work/out" 2>"$work/err" ||
        { cat "$work/out" "$work/err" >&2; fail "pingpong --compare-bare on $prov exited non-zero"; }
      cat "$work/out"
      grep -q '^# Size .*Bare(us) *Ratio .*Bare(MB/s) *Ratio$' "$work/out" || fail "$prov: no Bare / Ratio columns"
      awk '!/^#/ && NF > 0 { n++; if (NF != 7) bad = 1; for (i = 2; i <= 7; i++) if ($i + 0 <= 0) bad = 1 }
           END { exit bad || n != 3 }' "$work/out" || fail "$prov: expected 3 rows of 7 positive fields"
    done
    # --aa (the baseline in both turns) with --batches: the same columns; without a baseline,
    # refused with a message.
    "$run" -n 2 --timeout 60 --transport ofi --provider sockets -- "$bench" --compare-bare --aa \
      --batches 2 --min 8 --max 16 --iterations 20 --windows 2 >"$work/out" 2>"$work/err" ||
      { cat "$work/out" "$work/err" >&2; fail "pingpong --compare-bare --aa exited non-zero"; }
    cat "$work/out"
    grep -q '^# A/A' "$work/out" || fail "--aa: no A/A header line"
    awk '!/^#/ && NF > 0 { n++; if (NF != 7) bad = 1; for (i = 2; i <= 7; i++) if ($i + 0 <= 0) bad = 1 }
         END { exit bad || n != 2 }' "$work/out" || fail "--aa: expected 2 rows of 7 positive fields"
    if "$run" -n 2 --timeout 60 -- "$bench" --aa --max 8 >"$work/out" 2>"$work/err"; then
      fail "--aa without a baseline was accepted"
    fi
    grep -q "needs --compare-bare or --compare-mpi" "$work/err" ||
      { cat "$work/err" >&2; fail "no message for --aa without a baseline"; }
    if "$run" -n 2 --timeout 60 --transport shm -- "$bench" --compare-bare --max 8 >"$work/out" 2>"$work/err"; then
      fail "--compare-bare on the shm transport was accepted"
    fi
    grep -q "needs the fabric path" "$work/err" ||
      { cat "$work/err" >&2; fail "no message for --compare-bare without the fabric path"; }
    echo "pingpong ok"
    ;;
  pingpong-mpi)
    # FABCOLL_BENCH is fabcoll-pingpong-mpi: --compare-mpi under mpirun has its columns and rows.
    mpirun=$1
    "$mpirun" -n 2 --oversubscribe "$bench" --compare-mpi --min 2048 --max 8192 --iterations 20 \
      --windows 4 >"$work/out" 2>"$work/err" ||
      { cat "$work/out" "$work/err" >&2; fail "pingpong-mpi --compare-mpi exited non-zero"; }
    cat "$work/out"
    grep -q '^# Size .*MPI(us) *Ratio .*MPI(MB/s) *Ratio$' "$work/out" || fail "no MPI / Ratio columns"
    awk '!/^#/ && NF > 0 { n++; if (NF != 7) bad = 1; for (i = 2; i <= 7; i++) if ($i + 0 <= 0) bad = 1 }
         END { exit bad || n != 3 }' "$work/out" || fail "expected 3 rows of 7 positive fields"
    echo "pingpong-mpi ok"
    ;;
  *) fail "unknown mode $mode" ;;
esac
