#!/usr/bin/env bash
# bench/run_performance.sh — lockstep against SUNDIALS IDA: builds and runs
# bench/peers/work_precision (work-precision data of lockstep BDF, lockstep Radau IIA 5 and IDA on
# andrews, car_axis, slider_crank and the double pendulum), profiles one case per solver with perf
# where perf works, and writes docs/PERFORMANCE.md and docs/figures/performance/*.png with
# bench/write_performance.py. Not part of the test suite; needs libsundials-dev (SUNDIALS 6).
#
# In a build for avx2 or avx512 (INSTRUCTION_SET below) it also runs BDF with its members in SIMD lanes
# (the built-in engines' lanes backend) beside BDF one member at a time, and checks their results are
# the same bit for bit.
#
# Usage: bench/run_performance.sh
# Takes about 20 minutes on 2 idle cores (most of it the 1,000-member ensembles at three repetitions);
# LANES_ALSO adds about 5.
# Environment (all optional):
#   BUILD_DIR        build directory (default /tmp/lockstep-bench-performance); configured Release, CUDA off
#   OUT_DIR          where the JSON, profiles and log go (default $BUILD_DIR/performance)
#   RESULTS          the Markdown file to write (default docs/PERFORMANCE.md)
#   FIGURES          the figure directory (default docs/figures/performance)
#   MEMBERS          members per ensemble (default 1000)
#   SLIDER_MEMBERS   members of the slider_crank ensemble (default 128: its members take 10-30 times
#                    the steps of the others; 128 keeps both threads of lockstep's omp backend busy,
#                    whose dynamic schedule hands out 64 members at a time; PERFORMANCE.md says so)
#   REPS             timed repetitions of every (solver, tolerance) (default 3; the fastest counts)
#   SLIDER_REPS      repetitions for slider_crank (default 2, for the run time)
#   THREADS          threads for every solver (default 2)
#   PROBLEMS         comma-separated subset (default andrews,car_axis,slider_crank,double_pendulum)
#   IDLE_WAIT        seconds in all to wait for the machine to go idle first (default 240; 0: no wait)
#   PROFILE          1 (default): perf profiles of car_axis at rtol 1e-8; 0: none
#   RUN_IDLE_WAIT    seconds each timed run waits for an idle machine (default 20; work_precision --idle-wait)
#   RETRIES          extra runs of a case without a clean run (default 3; work_precision --retries)
#   SCALING_MAX      largest ensemble of the scaling runs (default 100000; sizes 100, 1000, ... up to it)
#   INSTRUCTION_SET  lockstep's LOCKSTEP_INSTRUCTION_SET (default baseline; sse4, avx2, avx512: the same
#                    results, compiled for those instructions; IDA is Debian's build either way)
#   LANES_ALSO       a second instruction set with lanes (avx2 or avx512; default none): after the main
#                    runs, a work_precision built for it (in $BUILD_DIR-LANES_ALSO) runs BDF one member at
#                    a time and in its lanes on the same members, and PERFORMANCE.md adds its table
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
COMMAND="bench/run_performance.sh"
for v in BUILD_DIR OUT_DIR MEMBERS SLIDER_MEMBERS REPS SLIDER_REPS THREADS PROBLEMS IDLE_WAIT PROFILE RUN_IDLE_WAIT RETRIES SCALING_MAX INSTRUCTION_SET LANES_ALSO; do
  if [[ -n "${!v:-}" ]]; then COMMAND="$v=${!v} $COMMAND"; fi
done
BUILD_DIR=${BUILD_DIR:-/tmp/lockstep-bench-performance}
OUT_DIR=${OUT_DIR:-$BUILD_DIR/performance}
RESULTS=${RESULTS:-$ROOT/docs/PERFORMANCE.md}
FIGURES=${FIGURES:-$ROOT/docs/figures/performance}
MEMBERS=${MEMBERS:-1000}
SLIDER_MEMBERS=${SLIDER_MEMBERS:-128}
REPS=${REPS:-3}
SLIDER_REPS=${SLIDER_REPS:-2}
THREADS=${THREADS:-2}
PROBLEMS=${PROBLEMS:-andrews,car_axis,slider_crank,double_pendulum}
IDLE_WAIT=${IDLE_WAIT:-240}
PROFILE=${PROFILE:-1}
SCALING_MAX=${SCALING_MAX:-100000}
RUN_IDLE_WAIT=${RUN_IDLE_WAIT:-20}
RETRIES=${RETRIES:-3}
INSTRUCTION_SET=${INSTRUCTION_SET:-baseline}
LANES_ALSO=${LANES_ALSO:-}
PYTHON=/usr/bin/python3   # Debian's interpreter with python3-matplotlib and python3-numpy

SECONDS=0
START=$(date -u +%Y-%m-%dT%H:%M:%SZ)
# The source the benchmark is built from, taken before the build (the tree may change while it runs).
REVISION="commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"  # the hash alone: docs/ quote it
if [[ -n "$(git -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null || true)" ]]; then
  REVISION="$REVISION, with uncommitted changes"
fi
cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DLOCKSTEP_CUDA=OFF -DCMAKE_BUILD_TYPE=Release -DLOCKSTEP_BUILD_TESTS=OFF \
  -DLOCKSTEP_INSTRUCTION_SET="$INSTRUCTION_SET" >/dev/null
cmake --build "$BUILD_DIR" -j2 --target work_precision method_orders
BIN=$BUILD_DIR/bench/work_precision
if [[ ! -x $BIN ]]; then
  echo "run_performance.sh: $BIN was not built (is libsundials-dev, SUNDIALS 6, installed?)" >&2
  exit 1
fi
if [[ -n $LANES_ALSO ]]; then
  if [[ ! $LANES_ALSO =~ ^(avx2|avx512)$ ]]; then
    echo "run_performance.sh: LANES_ALSO=$LANES_ALSO: the lanes need avx2 or avx512" >&2
    exit 1
  fi
  ALSO_BUILD_DIR=$BUILD_DIR-$LANES_ALSO
  cmake -S "$ROOT" -B "$ALSO_BUILD_DIR" -G Ninja -DLOCKSTEP_CUDA=OFF -DCMAKE_BUILD_TYPE=Release -DLOCKSTEP_BUILD_TESTS=OFF \
    -DLOCKSTEP_INSTRUCTION_SET="$LANES_ALSO" >/dev/null
  cmake --build "$ALSO_BUILD_DIR" -j2 --target work_precision
  ALSO_BIN=$ALSO_BUILD_DIR/bench/work_precision
fi

rm -rf "$OUT_DIR"
mkdir -p "$OUT_DIR"
LOG=$OUT_DIR/run.log
: >"$LOG"
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

# One process per problem, so that the run log brackets each with the machine's load.
JSONS=()
IFS=, read -r -a PROBLEM_LIST <<<"$PROBLEMS"
for problem in "${PROBLEM_LIST[@]}"; do
  wait_idle "$problem"
  echo "== $problem"
  "$BIN" --out "$OUT_DIR/$problem.json" --problems "$problem" --members "$MEMBERS" --members-slider_crank "$SLIDER_MEMBERS" \
    --reps "$REPS" --reps-slider_crank "$SLIDER_REPS" --threads "$THREADS" --idle-wait "$RUN_IDLE_WAIT" --retries "$RETRIES" 2> >(tee "$OUT_DIR/$problem.log" >&2)
  echo "$problem: done at ${SECONDS}s; loadavg $(cat /proc/loadavg)" >>"$LOG"
  JSONS+=("$OUT_DIR/$problem.json")
done

# The second instruction set's lanes: BDF one member at a time and in lanes, the same members, no IDA.
ALSO_JSONS=()
if [[ -n $LANES_ALSO ]]; then
  for problem in "${PROBLEM_LIST[@]}"; do
    wait_idle "$problem ($LANES_ALSO)"
    echo "== $problem ($LANES_ALSO lanes)"
    "$ALSO_BIN" --out "$OUT_DIR/$LANES_ALSO-$problem.json" --problems "$problem" --members "$MEMBERS" \
      --members-slider_crank "$SLIDER_MEMBERS" --reps "$REPS" --reps-slider_crank "$SLIDER_REPS" --threads "$THREADS" \
      --idle-wait "$RUN_IDLE_WAIT" --retries "$RETRIES" --solvers lockstep-bdf,lockstep-bdf-lanes --no-reference \
      2> >(tee "$OUT_DIR/$LANES_ALSO-$problem.log" >&2)
    echo "$problem ($LANES_ALSO): done at ${SECONDS}s; loadavg $(cat /proc/loadavg)" >>"$LOG"
    ALSO_JSONS+=("$OUT_DIR/$LANES_ALSO-$problem.json")
  done
fi

# Scaling: time per member against N (10^2 ... SCALING_MAX) for lockstep and IDA, lockstep on 1 and THREADS threads.
SCALING_SIZES=100
for n in 1000 10000 100000 1000000; do
  if (( n <= SCALING_MAX )); then SCALING_SIZES="$SCALING_SIZES,$n"; fi
done
wait_idle scaling
echo "== scaling (N = $SCALING_SIZES)"
"$BIN" --scaling --out "$OUT_DIR/scaling.json" --scaling-sizes "$SCALING_SIZES" --threads "$THREADS" --idle-wait "$RUN_IDLE_WAIT" \
  2> >(tee "$OUT_DIR/scaling.log" >&2)
echo "scaling: done at ${SECONDS}s; loadavg $(cat /proc/loadavg)" >>"$LOG"

# Profiles: one thread, car_axis at rtol = atol = 1e-8, 200 members, each solver alone (no reference).
PROFILES_JSON="[]"
if [[ $PROFILE == 1 ]] && perf stat -e task-clock true >/dev/null 2>&1; then
  entries=()
  profiled=(lockstep-bdf lockstep-radau5 ida)
  # A build for avx2 or avx512 runs BDF in SIMD lanes as well (work_precision's lockstep-bdf-lanes).
  if [[ $INSTRUCTION_SET == avx2 || $INSTRUCTION_SET == avx512 ]]; then profiled+=(lockstep-bdf-lanes); fi
  for solver in "${profiled[@]}"; do
    data=$OUT_DIR/perf-$solver.data
    report=$OUT_DIR/perf-$solver.txt
    perf record -F 4000 -o "$data" -- "$BIN" --out "$OUT_DIR/profile-$solver.json" --problems car_axis --members 200 \
      --reps 1 --threads 1 --tol-min 8 --tol-max 8 --solvers "$solver" --no-reference >/dev/null 2>&1
    perf report -i "$data" --stdio --no-children --sort dso,symbol --percent-limit 0.05 >"$report" 2>/dev/null
    entries+=("{\"title\": \"car_axis, rtol = atol = 1e-8, $solver (200 members, 1 thread)\", \"report\": \"$report\"}")
  done
  PROFILES_JSON="[$(IFS=,; echo "${entries[*]}")]"
  echo "profiles: done at ${SECONDS}s" >>"$LOG"
else
  echo "profiles: skipped (PROFILE=$PROFILE or perf unavailable)" >>"$LOG"
fi
echo "end $(date -u +%Y-%m-%dT%H:%M:%SZ) after ${SECONDS}s loadavg $(cat /proc/loadavg)" >>"$LOG"

# The problems' JSON files as one (argument 2: the instruction set to record, or ""), and the
# description of the run.
merge_json() {
  "$PYTHON" - "$@" <<'EOF'
import json, sys
out, instruction_set, parts = sys.argv[1], sys.argv[2], sys.argv[3:]
merged = None
for p in parts:
    d = json.load(open(p))
    if merged is None:
        merged = d
    else:
        merged["problems"] += d["problems"]
        merged["seconds"] += d["seconds"]
if instruction_set:
    merged["instruction_set"] = instruction_set
json.dump(merged, open(out, "w"))
EOF
}
merge_json "$OUT_DIR/work_precision.json" "" "${JSONS[@]}"
ALSO_ARGS=()
if [[ -n $LANES_ALSO ]]; then
  merge_json "$OUT_DIR/lanes-$LANES_ALSO.json" "$LANES_ALSO" "${ALSO_JSONS[@]}"
  ALSO_ARGS=(--lanes-also "$OUT_DIR/lanes-$LANES_ALSO.json")
fi

COMMAND="$COMMAND" SECONDS_TOTAL=$SECONDS START="$START" REVISION="$REVISION" LOG="$LOG" PROFILES_JSON="$PROFILES_JSON" \
  NPROC=$(nproc) CPU_MODEL="$(lscpu | sed -n 's/^Model name: *//p' | head -n1)" KERNEL="$(uname -r)" \
  COMPILER="$(c++ --version | head -n1)" INSTRUCTION_SET="$INSTRUCTION_SET" SUNDIALS_PACKAGE="$(dpkg-query -W -f='${Version}' libsundials-dev 2>/dev/null || echo unknown)" \
  "$PYTHON" - "$OUT_DIR/machine.json" <<'EOF'
import json, os, sys
e = os.environ
json.dump({
    "command": e["COMMAND"], "seconds": int(e["SECONDS_TOTAL"]), "start": e["START"], "revision": e["REVISION"],
    "nproc": e["NPROC"], "cpu_model": e["CPU_MODEL"], "kernel": e["KERNEL"], "compiler": e["COMPILER"],
    "flags": "-O3 -DNDEBUG", "instruction_set": e["INSTRUCTION_SET"], "sundials_package": e["SUNDIALS_PACKAGE"],
    "load_log": open(e["LOG"]).read().splitlines(), "profiles": json.loads(e["PROFILES_JSON"]),
}, open(sys.argv[1], "w"), indent=1)
EOF

# Andrews' digits on RADAU5's measure (the published problem against the published end point), which
# PERFORMANCE.md sets beside Hairer's RADAU5: one solve per solver and tolerance, well under a second.
"$BUILD_DIR/bench/method_orders" --test-set-json > "$OUT_DIR/test_set_digits.json"

"$PYTHON" "$ROOT/bench/write_performance.py" --json "$OUT_DIR/work_precision.json" --machine "$OUT_DIR/machine.json" \
  --out "$RESULTS" --figures "$FIGURES" --scaling "$OUT_DIR/scaling.json" --test-set-digits "$OUT_DIR/test_set_digits.json" \
  "${ALSO_ARGS[@]}"
echo "wrote $RESULTS and $FIGURES/ after ${SECONDS}s"
