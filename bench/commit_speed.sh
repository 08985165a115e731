#!/usr/bin/env bash
# bench/commit_speed.sh — whether a change of member code made the solver slower: bench/peers/work_precision
# built at a base commit and at the working tree, for one instruction set, run on the same ensembles in
# alternating rounds (base, tree, base, ...) on one thread: lockstep's BDF one member at a time
# (lockstep-bdf), BDF in SIMD lanes (lockstep-bdf-lanes: W = 8 in an avx512 build, 4 in an avx2 build)
# and Radau IIA 5 (lockstep-radau5). bench/instruction_set_speed.py prints the least CPU time per member
# of each build and the tree's over the base's, and fails if the tree took other steps, Newton
# iterations, Jacobians or factorizations than the base (a change that keeps the results' bits keeps
# them; tests/golden checks the bits). Not part of the test suite.
#
# Usage: bench/commit_speed.sh BASE
# About 25 minutes on 2 idle cores: two builds of work_precision (about 5 minutes each), then the rounds.
# Environment (all optional):
#   INSTRUCTION_SET  the builds' LOCKSTEP_INSTRUCTION_SET (default avx512; avx2 gives 4 lanes)
#   BUILD_ROOT       where the builds go (default /tmp/lockstep-commit-speed)
#   ROUNDS           alternating rounds (default 3; the least CPU time counts)
#   MEMBERS          members per ensemble (default 1000; the slider crank 200)
#   TOL              the rtol exponent (default 6: rtol 1e-6)
#   PROBLEMS         default andrews,car_axis,slider_crank,double_pendulum
#   SOLVERS          default lockstep-bdf,lockstep-bdf-lanes,lockstep-radau5 (the lanes need an avx2 or avx512 build)
#   RESULTS          where the table goes with the run's command, date and machine (default
#                    bench/COMMIT-SPEED.md; - for none)
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: bench/commit_speed.sh BASE   (a commit to compare the working tree with)" >&2
  exit 2
fi
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BASE=$(git -C "$ROOT" rev-parse --verify "$1^{commit}")
INSTRUCTION_SET=${INSTRUCTION_SET:-avx512}
BUILD_ROOT=${BUILD_ROOT:-/tmp/lockstep-commit-speed}
ROUNDS=${ROUNDS:-3}
MEMBERS=${MEMBERS:-1000}
TOL=${TOL:-6}
PROBLEMS=${PROBLEMS:-andrews,car_axis,slider_crank,double_pendulum}
SOLVERS=${SOLVERS:-lockstep-bdf,lockstep-bdf-lanes,lockstep-radau5}
RESULTS=${RESULTS:-$ROOT/bench/COMMIT-SPEED.md}
command="PROBLEMS=$PROBLEMS SOLVERS=$SOLVERS ROUNDS=$ROUNDS MEMBERS=$MEMBERS TOL=$TOL INSTRUCTION_SET=$INSTRUCTION_SET bench/commit_speed.sh $1"
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
load=$(cut -d' ' -f1-3 /proc/loadavg)
tree=$(git -C "$ROOT" describe --always --dirty)  # the tree as it is built, before anything may change it

# The base's sources, checked out beside the repository (a worktree of the same repository, removed
# again at the end).
base_src="$BUILD_ROOT/base-src"
mkdir -p "$BUILD_ROOT"
git -C "$ROOT" worktree remove --force "$base_src" 2>/dev/null || rm -rf "$base_src"
git -C "$ROOT" worktree add --detach "$base_src" "$BASE" >/dev/null
trap 'git -C "$ROOT" worktree remove --force "$base_src" 2>/dev/null || true' EXIT

declare -A source=([base]="$base_src" [tree]="$ROOT")
for build in base tree; do
  cmake -S "${source[$build]}" -B "$BUILD_ROOT/$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOCKSTEP_CUDA=OFF \
    -DLOCKSTEP_BUILD_TESTS=OFF -DLOCKSTEP_PYTHON=OFF -DLOCKSTEP_INSTRUCTION_SET="$INSTRUCTION_SET" >/dev/null
  cmake --build "$BUILD_ROOT/$build" -j"$(nproc)" --target work_precision
done

echo "base $(git -C "$ROOT" log -1 --format='%h %s' "$BASE")"
echo "tree $(git -C "$ROOT" log -1 --format='%h %s') + $(git -C "$ROOT" status --porcelain | wc -l) changed files"
outputs=()
for round in $(seq 1 "$ROUNDS"); do
  for build in base tree; do
    out="$BUILD_ROOT/round$round-$build.json"
    echo "round $round: $build"
    "$BUILD_ROOT/$build/bench/work_precision" --out "$out" --problems "$PROBLEMS" --members "$MEMBERS" \
      --members-slider_crank 200 --reps 1 --threads 1 --tol-min "$TOL" --tol-max "$TOL" \
      --solvers "$SOLVERS" --no-reference --idle-wait 20 >/dev/null
    outputs+=("$build=$out")
  done
done
status=0
table=$(/usr/bin/python3 "$ROOT/bench/instruction_set_speed.py" "${outputs[@]}") || status=$?
echo "$table"
if [[ $RESULTS != - ]]; then
  {
    echo "# A change of member code against its base: CPU time per member"
    echo
    echo "Written by \`bench/commit_speed.sh\` from one run; do not edit by hand, rerun the command."
    echo
    echo "- Command, from the repository root: \`$command\`"
    echo "- Date: $started (UTC, start of the run)"
    echo "- base: \`$(git -C "$ROOT" log -1 --format='%h %s' "$BASE")\`; tree: the working tree at" \
      "\`$tree\` (at the start of the run)"
    echo "- Machine: \`nproc\` = $(nproc), CPU model \"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')\"," \
      "Linux $(uname -r); load average (1, 5, 15 min) at the start: $load"
    echo "- What: bench/peers/work_precision built for $INSTRUCTION_SET at each, $MEMBERS members per ensemble" \
      "(the slider crank 200) at rtol 1e-$TOL, one thread, $ROUNDS alternating rounds (base, tree, ...);"
    echo "  the least CPU time per member of each build. The builds' work counters (steps, rejections, Newton"
    echo "  iterations, Jacobians, factorizations, model evaluations) are the same, or the command fails."
    echo
    echo "$table"
  } > "$RESULTS"
fi
exit "$status"
