#!/usr/bin/env bash
# ctest wrapper (label cluster): skips (exit 77) unless root with ip netns and tc available.
set -u
if [[ $(id -u) -ne 0 ]]; then echo "SKIP: needs root (ip netns, veth, tc)"; exit 77; fi
for t in ip tc; do command -v "$t" >/dev/null || { echo "SKIP: $t not found"; exit 77; }; done
exec bash "$(dirname "$0")/../../scripts/netns_cluster.sh" "$@"
