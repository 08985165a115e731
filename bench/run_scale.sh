#!/usr/bin/env bash
# bench/run_scale.sh — builds and runs bench/ensemble_scale (Google Benchmark, JSON output) and writes
# bench/RESULTS.md with bench/write_results.py. Takes about 5-8 minutes on a 2-core machine; it is not
# part of the test suite.
#
# Usage: bench/run_scale.sh
# Environment (all optional):
#   BUILD_DIR       build directory (default /tmp/lockstep-bench-scale); configured Release, CUDA off
#   OUT_DIR         where the JSON files go (default $BUILD_DIR/scale-json)
#   RESULTS         the Markdown file to write (default bench/RESULTS.md)
#   REPS            repetitions of the small and medium cases (default 5; the fastest is reported)
#   BIG_REPS        repetitions of the 1e5 and 1e6 member cases (default 2)
#   IDLE_WAIT       seconds in all to wait, before the benchmark processes, for the machine to go
#                   idle (default 240; 0 disables the wait)
#   THREAD_RETRIES  reruns of the thread-ratio cases when other processes disturbed them (default 2)
#
# The cases run in separate processes so that getrusage's peak RSS of a large run is its own: the
# thread-ratio cases, the small and medium cases, then one process per large case (N >= 1e5).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The command as given, with the settings passed through the environment, for RESULTS.md.
COMMAND="bench/run_scale.sh"
for v in BUILD_DIR OUT_DIR REPS BIG_REPS IDLE_WAIT THREAD_RETRIES; do
  if [[ -n "${!v:-}" ]]; then COMMAND="$v=${!v} $COMMAND"; fi
done
BUILD_DIR=${BUILD_DIR:-/tmp/lockstep-bench-scale}
OUT_DIR=${OUT_DIR:-$BUILD_DIR/scale-json}
RESULTS=${RESULTS:-$ROOT/bench/RESULTS.md}
REPS=${REPS:-5}
BIG_REPS=${BIG_REPS:-2}
IDLE_WAIT=${IDLE_WAIT:-240}
THREAD_RETRIES=${THREAD_RETRIES:-2}
PYTHON=/usr/bin/python3   # Debian's interpreter: standard library only

cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DLOCKSTEP_CUDA=OFF -DCMAKE_BUILD_TYPE=Release -DLOCKSTEP_BUILD_TESTS=OFF >/dev/null
cmake --build "$BUILD_DIR" -j2 --target ensemble_scale
BIN=$BUILD_DIR/bench/ensemble_scale

rm -rf "$OUT_DIR"
mkdir -p "$OUT_DIR"
LOG=$OUT_DIR/run.log
: >"$LOG"
START=$(date -u +%Y-%m-%dT%H:%M:%SZ)
SECONDS=0
echo "start $START loadavg $(cat /proc/loadavg)" >>"$LOG"

# Busy fraction of the whole machine over 2 s, from /proc/stat (0 = idle, 1 = every core busy).
busy_fraction() {
  local before after
  before=$(head -n1 /proc/stat)
  sleep 2
  after=$(head -n1 /proc/stat)
  awk -v a="$before" -v b="$after" 'BEGIN {
    split(a, x, " "); split(b, y, " ")
    busy = (y[2] - x[2]) + (y[3] - x[3]) + (y[4] - x[4]) + (y[7] - x[7]) + (y[8] - x[8]) + (y[9] - x[9])
    idle = (y[5] - x[5]) + (y[6] - x[6])
    printf "%.3f", busy / (busy + idle > 0 ? busy + idle : 1) }'
}

# Waits until other processes use less than 10% of the machine, for at most what is left of IDLE_WAIT.
IDLE_LEFT=$IDLE_WAIT
wait_idle() {
  local label=$1 waited=0 busy
  while :; do
    busy=$(busy_fraction)
    if awk -v x="$busy" 'BEGIN { exit !(x < 0.10) }'; then
      echo "$label: machine idle (busy fraction $busy) after waiting ${waited}s; loadavg $(cat /proc/loadavg)" >>"$LOG"
      return
    fi
    if (( waited >= IDLE_LEFT )); then
      echo "$label: machine still busy (busy fraction $busy) after ${waited}s; running anyway; loadavg $(cat /proc/loadavg)" >>"$LOG"
      return
    fi
    sleep 8
    waited=$((waited + 10))
    IDLE_LEFT=$((IDLE_LEFT - 10))
  done
}

# run NAME FILTER REPETITIONS: one benchmark process, JSON to $OUT_DIR/NAME.json.
run() {
  local name=$1 filter=$2 reps=$3
  wait_idle "$name"
  echo "== $name: $filter ($reps repetitions)"
  "$BIN" --benchmark_filter="$filter" --benchmark_repetitions="$reps" --benchmark_enable_random_interleaving=true \
    --benchmark_format=json --benchmark_out="$OUT_DIR/$name.json" --benchmark_out_format=json >/dev/null
  echo "$name: done at ${SECONDS}s; loadavg $(cat /proc/loadavg)" >>"$LOG"
}

# The thread ratio first: it is the figure other processes disturb most, and the run starts after
# the machine was found idle. Rerun while disturbed, at most THREAD_RETRIES times.
attempt=0
while :; do
  run "threads-$attempt" '^threads/' "$REPS"
  if "$PYTHON" "$ROOT/bench/write_results.py" --check-threads "$OUT_DIR/threads-$attempt.json" >>"$LOG"; then break; fi
  if (( attempt >= THREAD_RETRIES )); then break; fi
  attempt=$((attempt + 1))
done
run medium '^(scale/(pendulum|andrews)/serial/N:(1|100|1000|10000)/|path/)' "$REPS"
run pendulum-1e5 '^scale/pendulum/serial/N:100000/' "$BIG_REPS"
run pendulum-1e6 '^scale/pendulum/serial/N:1000000/' "$BIG_REPS"
run andrews-1e5 '^scale/andrews/serial/N:100000/' "$BIG_REPS"
echo "end $(date -u +%Y-%m-%dT%H:%M:%SZ) after ${SECONDS}s loadavg $(cat /proc/loadavg)" >>"$LOG"

"$PYTHON" "$ROOT/bench/write_results.py" --json-dir "$OUT_DIR" --build-dir "$BUILD_DIR" --command "$COMMAND" \
  --start "$START" --seconds "$SECONDS" --out "$RESULTS"
echo "wrote $RESULTS"
