#!/usr/bin/env bash
# Installs the built tree into a scratch prefix, then builds a tiny C and a tiny C++ program
# against the *installed* package both ways (find_package and pkg-config) and runs them.
set -euo pipefail
BUILD=$1
WORK=$2
HERE=$(cd "$(dirname "$0")" && pwd)
CMAKE=${CMAKE_COMMAND:-cmake}
rm -rf "$WORK"
mkdir -p "$WORK"
PREFIX=$WORK/prefix
"$CMAKE" --install "$BUILD" --prefix "$PREFIX" >/dev/null

# 1. CMake package
"$CMAKE" -S "$HERE/consumer" -B "$WORK/cmake-build" -DCMAKE_PREFIX_PATH="$PREFIX" >/dev/null
"$CMAKE" --build "$WORK/cmake-build" >/dev/null
"$WORK/cmake-build/consumer_c"
"$WORK/cmake-build/consumer_cpp"

# 2. pkg-config
export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig:$PREFIX/lib/x86_64-linux-gnu/pkgconfig:${PKG_CONFIG_PATH:-}"
LIBDIR=$(pkg-config --variable=libdir fabcoll)
cc -std=c11 -Wall -Werror "$HERE/consumer/consumer.c" $(pkg-config --cflags --libs fabcoll) -o "$WORK/pc_c"
c++ -std=c++20 -Wall -Werror "$HERE/consumer/consumer.cpp" $(pkg-config --cflags --libs fabcoll) -o "$WORK/pc_cpp"
LD_LIBRARY_PATH="$LIBDIR" "$WORK/pc_c"
LD_LIBRARY_PATH="$LIBDIR" "$WORK/pc_cpp"
echo "install test: ok"
