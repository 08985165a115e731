#!/usr/bin/env bash
# scripts/write-methods-doc.sh — regenerates docs/METHODS.md: builds bench/method_orders (Release, CUDA
# off) and writes its output to the document. The fixed-step orders it contains are recomputed and
# asserted by tests/method/method_orders_test.cpp (the same measurement code:
# tests/support/method_orders.hpp). Takes a few seconds once built; the output does not depend on the
# machine's speed, so a rerun on an unchanged tree reproduces the file.
#
# Usage: scripts/write-methods-doc.sh
# Environment (optional):
#   BUILD_DIR   build directory (default build); configured if it has no CMakeCache.txt yet
#   OUT         the file to write (default docs/METHODS.md)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
OUT=${OUT:-$ROOT/docs/METHODS.md}

if [[ ! -f "$BUILD_DIR/CMakeCache.txt" ]]; then
  cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DLOCKSTEP_CUDA=OFF -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$BUILD_DIR" -j2 --target method_orders
"$BUILD_DIR/bench/method_orders" > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "wrote $OUT"
