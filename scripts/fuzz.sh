#!/usr/bin/env bash
# scripts/fuzz.sh — builds the libFuzzer targets of fuzz/ with clang (AddressSanitizer, LeakSanitizer,
# UndefinedBehaviorSanitizer) and runs each for a bounded time, side by side:
#
#   fuzz_study_file   the study-file loader (host/io/study_file.cpp parse_study) and its sampling plan
#   fuzz_checkpoint   the checkpoint reader, the statistics state inside it, journal records
#
# Each run starts from the seed corpus in fuzz/corpus/<target> (which includes every input that ever
# made a target fail: regression-*), read only; new inputs go to <build>/corpus-<target>. Any crash,
# leak, timeout, out-of-memory or sanitizer report fails the script; the input is saved as
# <build>/findings/<target>-crash-<sha1> (reproduce: <build>/fuzz_<target> that-file).
#
# Environment: LOCKSTEP_FUZZ_BUILD_DIR (default build-fuzz), LOCKSTEP_FUZZ_SECONDS (per target, default 45).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
build_dir=${LOCKSTEP_FUZZ_BUILD_DIR:-build-fuzz}
seconds=${LOCKSTEP_FUZZ_SECONDS:-45}

stage() { echo "==> $*"; }

stage "fuzz: configure and build ($build_dir, clang)"
start=$SECONDS
CC=clang CXX=clang++ cmake -S fuzz -B "$build_dir" -G Ninja >/dev/null
cmake --build "$build_dir" -j "$(nproc)" --target fuzz_study_file fuzz_checkpoint
echo "fuzz build: $((SECONDS - start)) s"

mkdir -p "$build_dir/findings"
# The targets run side by side: each libFuzzer process runs on one core, so on CI's two cores both get
# their full time in the wall time of one.
fuzz_one() {
  local target=$1 work="$build_dir/corpus-$1"
  rm -rf "$work"
  mkdir -p "$work"
  local options=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
                 -artifact_prefix="$build_dir/findings/$target-")
  [[ -f fuzz/$target.dict ]] && options+=(-dict="fuzz/$target.dict")
  # Progress lines are many; the log keeps them, and the report below its start, findings and totals.
  "$build_dir/fuzz_$target" "${options[@]}" "$work" "fuzz/corpus/$target" >"$build_dir/fuzz_$target.log" 2>&1
}
targets=(study_file checkpoint)
pids=()
for target in "${targets[@]}"; do
  stage "fuzz: fuzz_$target for $seconds s"
  fuzz_one "$target" &
  pids+=($!)
done
failed=0
for i in "${!targets[@]}"; do
  target=${targets[$i]}
  if wait "${pids[$i]}"; then
    echo "fuzz_$target:"
    grep -E '^INFO: (seed corpus|Loaded)|^stat::|DONE' "$build_dir/fuzz_$target.log" || true
  else
    tail -n 60 "$build_dir/fuzz_$target.log"
    echo "fuzz: fuzz_$target found a failure; its input is in $build_dir/findings/" >&2
    failed=1
  fi
done
[[ $failed == 0 ]] || exit 1
echo "fuzz: no findings"
