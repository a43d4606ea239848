#!/usr/bin/env bash
# Installs the Debian packages fabcoll needs (idempotent, quiet when all are present) and
# configures + builds into build/. Usage: scripts/setup.sh [extra cmake -D options]
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(build-essential cmake pkg-config googletest libgtest-dev libbenchmark-dev
          libfabric-dev libfabric-bin libhwloc-dev libpmix-dev nlohmann-json3-dev libcli11-dev
          libfmt-dev openmpi-bin libopenmpi-dev python3-matplotlib)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

BUILD_DIR=${FABCOLL_BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFABCOLL_WERROR=ON "$@" >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)" 2>&1 | grep -E "error|warning|Error" || true
test -x "$BUILD_DIR/fabcoll-demo"   # fail loudly if the build failed
