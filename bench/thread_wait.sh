#!/usr/bin/env bash
# bench/thread_wait.sh — what idle threads cost: the `lockstep` command (the omp backend on its thread
# team, whose idle workers sleep) against the same command with the launch as an OpenMP loop
# (bench/openmp_launch.cpp: libgomp's threads spin between launches), on an idle machine and on one
# loaded by a CPU hog per core. Builds both commands, then bench/thread_wait.py runs the studies and
# writes section 6 of bench/RESULTS.md. About 2 minutes on 2 idle cores (after the build and the wait for
# an idle machine); not part of the test suite.
#
# Usage: bench/thread_wait.sh
# Environment (all optional):
#   BUILD_DIR  build directory (default /tmp/lockstep-bench-thread-wait; configured Release, CUDA off,
#              when it has no CMakeCache.txt; an existing Release build such as build/ saves the compile)
#   ROUNDS     interleaved rounds (default 5; the fastest run of each case counts)
#   RESULTS    the Markdown file whose section 6 is written (default bench/RESULTS.md; "-": print only)
#   IDLE_WAIT  seconds to wait, before the runs, for the machine to go idle (default 240; 0: no wait)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The command as given, with the settings passed through the environment, for RESULTS.md.
COMMAND="bench/thread_wait.sh"
for v in BUILD_DIR ROUNDS RESULTS IDLE_WAIT; do
  if [[ -n "${!v:-}" ]]; then COMMAND="$v=${!v} $COMMAND"; fi
done
BUILD_DIR=${BUILD_DIR:-/tmp/lockstep-bench-thread-wait}
ROUNDS=${ROUNDS:-5}
RESULTS=${RESULTS:-$ROOT/bench/RESULTS.md}
IDLE_WAIT=${IDLE_WAIT:-240}
PYTHON=/usr/bin/python3   # Debian's interpreter: standard library only

if [[ ! -f "$BUILD_DIR/CMakeCache.txt" ]]; then
  launcher=()
  if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
  cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOCKSTEP_CUDA=OFF \
        -DLOCKSTEP_BUILD_TESTS=OFF -DLOCKSTEP_PYTHON=OFF "${launcher[@]}" >/dev/null
fi
if ! grep -q '^CMAKE_BUILD_TYPE:STRING=Release$' "$BUILD_DIR/CMakeCache.txt"; then
  echo "thread_wait.sh: $BUILD_DIR is not a Release build" >&2
  exit 1
fi
if grep -q '^LOCKSTEP_BENCH_COMPILE_CHECK:BOOL=ON$' "$BUILD_DIR/CMakeCache.txt"; then
  echo "thread_wait.sh: $BUILD_DIR builds the benchmarks at -O0 (LOCKSTEP_BENCH_COMPILE_CHECK=ON, as CI's" \
       "build does): give a BUILD_DIR without it" >&2
  exit 1
fi
cmake --build "$BUILD_DIR" -j"$(nproc)" --target lockstep_cli lockstep_openmp_launch

exec "$PYTHON" "$ROOT/bench/thread_wait.py" --team "$BUILD_DIR/host/cli/lockstep" \
  --openmp "$BUILD_DIR/bench/lockstep_openmp_launch" --rounds "$ROUNDS" --results "$RESULTS" \
  --idle-wait "$IDLE_WAIT" --command "$COMMAND"
