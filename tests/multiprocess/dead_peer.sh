#!/usr/bin/env bash
# Rank 1 of 3 kills itself before its 5th collective. The survivors must fail within
# FABCOLL_TIMEOUT with FC_ERR_PEER or FC_ERR_TIMEOUT naming world rank 1, and fabcoll-run must
# exit non-zero and say which rank died and how.
set -uo pipefail
RUN=$1
PROG=$2
shift 2  # the rest: extra fabcoll-run options (e.g. --transport ofi --provider sockets)
out=$(FABCOLL_TIMEOUT=5 "$RUN" -n 3 --grace 20 --tag-output "$@" -- "$PROG" --die-rank 1 --die-at 5 --quick 2>&1)
rc=$?
echo "$out"
fail() { echo "dead_peer: $*" >&2; exit 1; }
[[ $rc -ne 0 ]] || fail "fabcoll-run exited 0"
grep -q "rank 1 (pid [0-9]*) was killed by signal 9" <<<"$out" || fail "launcher did not name the dead rank"
for r in 0 2; do
  grep -E "^\[$r\] rank $r: .*(peer failure|timed out).*(world rank|rank\(s\)) .*1" <<<"$out" >/dev/null ||
    fail "rank $r did not report a peer failure / timeout naming rank 1"
done
echo "dead_peer: ok"
