#!/usr/bin/env bash
# Sets up, builds, then runs the default test suite (everything but the `cluster` and `slow`
# labels). Extra arguments go to ctest, e.g. scripts/test.sh -L unit
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
BUILD_DIR=${FABCOLL_BUILD_DIR:-build}
cd "$BUILD_DIR"
ctest --output-on-failure -j "$(nproc)" -LE "cluster|slow" "$@"
