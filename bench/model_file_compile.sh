#!/usr/bin/env bash
# bench/model_file_compile.sh — what a new model file costs its first study, against an earlier lockstep:
# builds the `lockstep` command of commit BEFORE (a git worktree, built once) and of the working tree
# (in BUILD_DIR), then runs bench/model_file_compile.py on both (first runs on empty caches, a
# second study's method, the engines' speed; docs/MODEL-FILES.md, "What is compiled"), which writes
# bench/MODEL-FILE-COMPILE.md. Not part of the test suite; run it on an idle machine.
#
# Usage: bench/model_file_compile.sh BEFORE
# About 30 minutes on 2 idle cores: two builds of the command (the first one only once per BEFORE), then
# the runs. Environment (all optional):
#   BUILD_ROOT  where BEFORE's worktree and its build (in the worktree's build/, as the repository's: a
#               compiler cache then finds the objects both share) go (default: beside the repository)
#   BUILD_DIR   the working tree's build (default build, relative to the repository root)
#   REPS        alternating first runs (default 3; medians)
#   SOLVE_REPS  alternating timed solves (default 7; the fastest)
#   MEMBERS     members of the timed studies (default 2000; fewer for the larger models)
#   MODELS, STUDIES  bench/model_file_compile.py's --models and --studies (default: all)
#   RESULTS     the file written (default bench/MODEL-FILE-COMPILE.md; "-": print only)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The command as given, with the settings passed through the environment, for the results file.
COMMAND="bench/model_file_compile.sh $*"
for v in BUILD_ROOT BUILD_DIR REPS SOLVE_REPS MEMBERS MODELS STUDIES RESULTS; do
  if [[ -n "${!v:-}" ]]; then COMMAND="$v=${!v} $COMMAND"; fi
done
BEFORE=${1:?usage: bench/model_file_compile.sh BEFORE (a commit)}
BUILD_ROOT=${BUILD_ROOT:-$(dirname "$ROOT")/lockstep-compile-bench}
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
REPS=${REPS:-3}
SOLVE_REPS=${SOLVE_REPS:-7}
MEMBERS=${MEMBERS:-2000}
revision=$(git -C "$ROOT" rev-parse --short "$BEFORE")

build() {  # source tree, build directory (configured as it is, where it already is)
  [[ -f $2/CMakeCache.txt ]] || cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOCKSTEP_CUDA=OFF >/dev/null
  cmake --build "$2" -j"$(nproc)" --target lockstep_cli
}

before_tree="$BUILD_ROOT/source-$revision"
if [[ ! -d $before_tree ]]; then
  git -C "$ROOT" worktree add --detach "$before_tree" "$revision" >/dev/null
fi
build "$before_tree" "$before_tree/build"
build "$ROOT" "$BUILD_DIR"
/usr/bin/python3 "$ROOT/bench/model_file_compile.py" --before "$before_tree/build/host/cli/lockstep" \
  --after "$BUILD_DIR/host/cli/lockstep" --reps "$REPS" --solve-reps "$SOLVE_REPS" --members "$MEMBERS" \
  --models "${MODELS:-}" --studies "${STUDIES:-}" --command "$COMMAND" --results "${RESULTS:-$ROOT/bench/MODEL-FILE-COMPILE.md}"
