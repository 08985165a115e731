#!/usr/bin/env bash
# bench/instruction_set_speed.sh — what a build for a wider instruction set buys a member's solve:
# bench/peers/work_precision built once per LOCKSTEP_INSTRUCTION_SET, run on the same ensembles in
# alternating rounds (baseline, avx2, avx512, baseline, ...) on one thread, lockstep's BDF (ggl) and
# Radau IIA 5 (index3). bench/instruction_set_speed.py prints the least CPU time per member of each
# build over the baseline's, and fails if any build took other steps, Newton iterations, Jacobians or
# factorizations than the baseline (the results' bits are the builds' to keep: tests/golden checks
# them; equal counters are the cheap sign of it here). Not part of the test suite.
#
# Usage: bench/instruction_set_speed.sh
# About 25 minutes on 2 idle cores: three builds of work_precision (about 5 minutes each), then the rounds.
# Environment (all optional):
#   SETS       the builds (default "baseline avx2 avx512"; the first is the reference)
#   BUILD_ROOT where the builds go, one directory per set (default /tmp/lockstep-instruction-sets)
#   ROUNDS     alternating rounds (default 3; the least CPU time counts)
#   MEMBERS    members per ensemble (default 1000; the slider crank 200)
#   TOL        the rtol exponent (default 6: rtol 1e-6)
#   PROBLEMS   default andrews,car_axis,slider_crank,double_pendulum
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SETS=${SETS:-baseline avx2 avx512}
BUILD_ROOT=${BUILD_ROOT:-/tmp/lockstep-instruction-sets}
ROUNDS=${ROUNDS:-3}
MEMBERS=${MEMBERS:-1000}
TOL=${TOL:-6}
PROBLEMS=${PROBLEMS:-andrews,car_axis,slider_crank,double_pendulum}

for set in $SETS; do
  cmake -S "$ROOT" -B "$BUILD_ROOT/$set" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOCKSTEP_CUDA=OFF \
    -DLOCKSTEP_BUILD_TESTS=OFF -DLOCKSTEP_PYTHON=OFF -DLOCKSTEP_INSTRUCTION_SET="$set" >/dev/null
  cmake --build "$BUILD_ROOT/$set" -j"$(nproc)" --target work_precision
done

outputs=()
for round in $(seq 1 "$ROUNDS"); do
  for set in $SETS; do
    out="$BUILD_ROOT/round$round-$set.json"
    echo "round $round: $set"
    "$BUILD_ROOT/$set/bench/work_precision" --out "$out" --problems "$PROBLEMS" --members "$MEMBERS" \
      --members-slider_crank 200 --reps 1 --threads 1 --tol-min "$TOL" --tol-max "$TOL" \
      --solvers lockstep-bdf,lockstep-radau5 --no-reference --idle-wait 20 >/dev/null
    outputs+=("$set=$out")
  done
done
/usr/bin/python3 "$ROOT/bench/instruction_set_speed.py" "${outputs[@]}"
