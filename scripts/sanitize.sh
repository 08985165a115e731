#!/usr/bin/env bash
# scripts/sanitize.sh — the tests built and run under AddressSanitizer + UndefinedBehaviorSanitizer
# (issue 9), in a build directory of their own:
#
#   cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo (-O1 -g1)
#         -DLOCKSTEP_CUDA=OFF -DLOCKSTEP_BUILD_BENCH=OFF -DLOCKSTEP_MPI=OFF
#         CXX flags: -fsanitize=address,undefined -fno-omit-frame-pointer
#   ctest with ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
#
# CUDA and the benchmarks are left out (nvcc code cannot run here, and the benchmarks are not tests);
# so is MPI (OpenMPI's own allocations would drown LeakSanitizer's report). -O1 keeps the build
# within CI's budget (measured numbers: .ci/run's banner). Any sanitizer report fails the test it
# happens in: ASan aborts on its first error, UBSan halts on its first (halt_on_error=1), LSan reports
# leaks at exit with a non-zero status.
#
# Environment: LOCKSTEP_SANITIZE_BUILD_DIR (default build-asan); LOCKSTEP_SANITIZE_CTEST_ARGS (extra
# ctest arguments, e.g. -L reliability; default: none, the whole suite).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
build_dir=${LOCKSTEP_SANITIZE_BUILD_DIR:-build-asan}
jobs=$(nproc)
sanitize="-fsanitize=address,undefined -fno-omit-frame-pointer"

stage() { echo "==> $*"; }

stage "sanitizers: configure ($build_dir)"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DCMAKE_CXX_FLAGS="$sanitize" -DCMAKE_C_FLAGS="$sanitize" -DCMAKE_EXE_LINKER_FLAGS="$sanitize" \
  -DLOCKSTEP_CUDA=OFF -DLOCKSTEP_BUILD_BENCH=OFF -DLOCKSTEP_MPI=OFF >/dev/null

stage "sanitizers: build (-j$jobs)"
start=$SECONDS
cmake --build "$build_dir" -j "$jobs"
echo "sanitizer build: $((SECONDS - start)) s"

stage "sanitizers: test (-j$jobs)"
start=$SECONDS
export ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:check_initialization_order=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# shellcheck disable=SC2086  # the extra arguments are words
ctest --test-dir "$build_dir" --output-on-failure --no-tests=error -j "$jobs" ${LOCKSTEP_SANITIZE_CTEST_ARGS:-}
echo "sanitizer tests: $((SECONDS - start)) s"
