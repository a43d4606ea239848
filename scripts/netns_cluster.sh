#!/usr/bin/env bash
# A two-"node" cluster on one machine: two network namespaces joined by a veth pair with
# private addresses (10.77.0.1 and 10.77.0.2, only inside the namespaces), the link shaped by
# `tc tbf` to RATE in both directions. One rank runs in each namespace over the ofi transport
# (libfabric tcp;ofi_rxm), bootstrapped through a TCP store served inside the first namespace
# (tests/cluster/store_server.cpp). fabcoll-calibrate fits α, β over that link; the script
# compares 1/β with the shaped rate and fails if they differ by more than TOL (default 15%).
#
#   scripts/netns_cluster.sh [--build DIR] [--store-server PATH] [--rate 200mbit] [--tol 0.15]
#                            [--keep DIR]
# Needs root (ip netns, veth, tc). Everything it creates is removed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=build
STORE_SERVER=""
RATE=200mbit
TOL=0.15
KEEP=""
while (($#)); do
  case "$1" in
    --build) BUILD=$2; shift 2 ;;
    --store-server) STORE_SERVER=$2; shift 2 ;;
    --rate) RATE=$2; shift 2 ;;
    --tol) TOL=$2; shift 2 ;;
    --keep) KEEP=$2; shift 2 ;;
    *) echo "netns_cluster: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -n $STORE_SERVER ]] || STORE_SERVER=$BUILD/tests/fabcoll-store-server
CALIBRATE=$(realpath "$BUILD/fabcoll-calibrate")
STORE_SERVER=$(realpath "$STORE_SERVER")
[[ $(id -u) -eq 0 ]] || { echo "netns_cluster: needs root" >&2; exit 77; }

TAG=fch7$$
NS=("${TAG}a" "${TAG}b")
VETH=("${TAG}x" "${TAG}y")
ADDR=(10.77.0.1 10.77.0.2)
WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for ns in "${NS[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
  if [[ -n $KEEP ]]; then mkdir -p "$KEEP" && cp -r "$WORK"/. "$KEEP"/; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# ---- the two namespaces and the shaped link -----------------------------------------------
for i in 0 1; do ip netns add "${NS[$i]}"; ip -n "${NS[$i]}" link set lo up; done
ip link add "${VETH[0]}" type veth peer name "${VETH[1]}"
for i in 0 1; do
  ip link set "${VETH[$i]}" netns "${NS[$i]}"
  ip -n "${NS[$i]}" addr add "${ADDR[$i]}/24" dev "${VETH[$i]}"
  ip -n "${NS[$i]}" link set "${VETH[$i]}" up
  # Token bucket: RATE sustained, a burst of 64 KiB, packets queue up to 200 ms.
  ip netns exec "${NS[$i]}" tc qdisc add dev "${VETH[$i]}" root tbf rate "$RATE" burst 64kb latency 200ms
done
command -v ping >/dev/null && ip netns exec "${NS[0]}" ping -c 1 -W 2 "${ADDR[1]}" >/dev/null

# ---- the bootstrap store, inside namespace 0 ---------------------------------------------
SECRET=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
mkfifo "$WORK/hold"
sleep 3600 >"$WORK/hold" &
PIDS+=($!)
ip netns exec "${NS[0]}" "$STORE_SERVER" "${ADDR[0]}" "$SECRET" 900 <"$WORK/hold" >"$WORK/store" &
PIDS+=($!)
for _ in $(seq 50); do [[ -s $WORK/store ]] && break; sleep 0.1; done
STORE=$(head -n1 "$WORK/store")
[[ $STORE == tcp:* ]] || { echo "netns_cluster: store server did not start" >&2; exit 1; }
echo "netns_cluster: namespaces ${NS[*]}, link ${ADDR[0]} <-> ${ADDR[1]} shaped to $RATE, store $STORE" >&2

# ---- one rank per namespace ----------------------------------------------------------------
RANKS=()
for r in 0 1; do
  extra=()
  [[ $r -eq 0 ]] && extra=(-o "$WORK/tuning.json" --report "$WORK/report")
  ip netns exec "${NS[$r]}" env FABCOLL_STORE="$STORE" FABCOLL_SECRET="$SECRET" FABCOLL_RANK=$r \
    FABCOLL_SIZE=2 FABCOLL_NODE="node$r" FABCOLL_TRANSPORT=ofi FABCOLL_PROVIDER="tcp;ofi_rxm" \
    FI_TCP_IFACE="${VETH[$r]}" FABCOLL_TIMEOUT=300 \
    "$CALIBRATE" --quick --no-validate "${extra[@]}" >"$WORK/rank$r.out" 2>"$WORK/rank$r.err" &
  RANKS+=($!)
done
rc=0
for pid in "${RANKS[@]}"; do wait "$pid" || rc=$?; done
if ((rc)); then
  echo "netns_cluster: a rank failed ($rc)" >&2
  tail -n 20 "$WORK"/rank*.err >&2
  exit 1
fi
cat "$WORK/rank0.out"

# ---- compare β with the shaped rate ----------------------------------------------------------
python3 - "$WORK/tuning.json" "$RATE" "$TOL" "$WORK/report/pingpong.csv" <<'PY'
import csv, json, re, sys
path, rate, tol, pp = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
m = re.fullmatch(r"([0-9.]+)([kmg]?)bit", rate.lower())
bits = float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2)]
link = json.load(open(path))["links"][0]
beta_file = link["beta_above"] if link["break_bytes"] > 0 else link["beta"]
# The token bucket lets its burst (64 KiB) through at line rate, so a shaped link has three
# regimes (latency, burst, shaped rate), one more than the two-segment fit knows: the tuning
# file's β can land anywhere between line rate and the shaped rate depending on where the
# break is put. β of the shaped rate is the slope over the bandwidth-bound sizes, >= 8 bursts
# (512 KiB): ordinary least squares on the per-size medians there.
med = sorted((float(r["n"]), float(r["t"])) for r in csv.DictReader(open(pp)) if r["kind"] == "median")
big = [(n, t) for n, t in med if n >= 512 * 1024]
if len(big) < 2:
    sys.exit("netns_cluster: fewer than 2 sizes >= 512 KiB")
mn = sum(n for n, _ in big) / len(big)
mt = sum(t for _, t in big) / len(big)
beta = sum((n - mn) * (t - mt) for n, t in big) / sum((n - mn) ** 2 for n, _ in big)
shaped = 8.0 / bits  # seconds per byte at the shaped rate
err = beta / shaped - 1
print(f"netns_cluster: link {link['class']}: alpha = {link['alpha']*1e6:.1f} us; beta over sizes >= 512 KiB "
      f"= {beta:.4g} s/B ({8/beta/1e6:.1f} Mbit/s); shaped {rate} = {shaped:.4g} s/B; error {100*err:+.1f}% "
      f"(tolerance {100*tol:.0f}%); tuning file's beta {8/beta_file/1e6:.1f} Mbit/s"
      + (f" above its break at {link['break_bytes']:.0f} B" if link["break_bytes"] > 0 else ""))
sys.exit(0 if abs(err) <= tol else 1)
PY
