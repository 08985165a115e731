#!/usr/bin/env bash
# scripts/sanitize.sh — the sanitized set of tests built and run under AddressSanitizer +
# UndefinedBehaviorSanitizer (+ LeakSanitizer) in a build directory of their own. scripts/test.sh runs
# it after the rest of the suite: it is the half of the test command that runs these tests.
#
#   cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo (-O1 -g1) -DLOCKSTEP_TESTS=sanitized
#         -DLOCKSTEP_TEST_OPTIMIZATION=0 (the tests' own code at -O0 but the RUN_BOUND programs'; below)
#         -DLOCKSTEP_CUDA=OFF -DLOCKSTEP_BUILD_BENCH=OFF -DLOCKSTEP_MPI=OFF -DLOCKSTEP_PYTHON=OFF
#         CXX flags: -fsanitize=address,undefined -fno-omit-frame-pointer
#                    -fno-sanitize=null,nonnull-attribute,returns-nonnull-attribute,alignment,pointer-overflow
#   cmake --build build-asan --target lockstep_tests    (the set's programs and the libraries they link)
#   ctest --test-dir build-asan with ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
#
# Which tests: the sanitized set of cmake/LockstepHelpers.cmake, every unit-test program of the layers
# (core, simd, model, formulation, method, stepper, study, io, lyapunov) and the reliability tests that
# run in-process (statistics state, checkpoint format, TOML guard); their count and the stage's measured
# time: CONTRIBUTING.md. The tests that are not in it run once, uninstrumented, in the test command's
# own build: the end-to-end tests that start the lockstep binary (cli, reliability_end_to_end, model
# files, the Python API; they exercise the same host/io and host/checkpoint code these tests cover,
# plus process handling), the backend ensemble tests (minutes of ensembles at -O1 with ASan; the
# kernels are the member stepper the method tests run), the install test and the IDA peer, the
# models-on-packs test of simd (four builds, one per instruction set, run by a script; the vector math
# and the LU in lanes it builds on are covered), and the tests whose call says UNSANITIZED with the
# reason: the simd tests of the method's decisions in lanes and the model layer's derivatives test
# (automatic differentiation of every built-in model's M, Q, Phi and their kin against finite
# differences: fixed-size arrays indexed by compile-time loop bounds, nothing allocated, so nothing
# data-dependent for ASan to find; the AD code itself still runs under the sanitizers inside every
# method, formulation and stepper test, which evaluate their Jacobians through it). CUDA and the
# benchmarks are left out (nvcc code cannot run here, and the benchmarks are not tests); so is MPI
# (OpenMPI's own allocations would drown LeakSanitizer's report), and so is the Python module (an
# ASan-instrumented extension cannot be loaded into the uninstrumented interpreter: ASan must be the
# first library of the process). UBSan's three null-pointer checks are off: with any of them GCC 12 no
# longer evaluates constexpr pointer comparisons (static_assert(find_model(...) != nullptr) in
# tests/model fails to compile; GCC PR 71962); a null dereference is still an ASan SEGV report. UBSan's
# alignment and pointer-overflow checks are off too: together they were 30 of the 34 s UBSan added to
# compiling tests/lyapunov/spectrum_test.cpp (78 s with them, 47 s without; ASan alone 44 s), and
# this build's compilation is most of the stage. What they would find, ASan or the CPU finds here: on
# x86-64 a misaligned scalar access computes the same (only slower), a misaligned aligned SIMD load
# faults (an ASan SEGV report), and a pointer that wraps around the address space needs an offset far
# past any allocation, which ASan reports where it is dereferenced. The checks that stay are the ones
# with no such stand-in: signed overflow, shifts, array bounds, division by zero, bool/enum values,
# unreachable and missing returns. -O1 keeps the build within CI's budget (measured numbers:
# CONTRIBUTING.md), and the tests' own code goes further, to -O0, where it compiles for longer than it
# runs: the LU test's unit took 120 s at -O1 and 71 s at -O0 for a run of 1-2 s, the events test's 84
# and 29 s for 3 and 9. The programs whose sweeps or tight-tolerance runs -O0 would lengthen more than
# it shortens their compilation say RUN_BOUND and stay at -O1 (the trigonometric sweep ran 439 s at -O0
# instead of 41): over the set, the test programs compiled and ran in 1,684 s of CPU with all at -O1
# and 2,337 s with all at -O0. Any sanitizer report fails the test it happens in: ASan aborts on its first error,
# UBSan halts on its first (halt_on_error=1), LSan reports leaks at exit with a non-zero status.
#
# Environment: LOCKSTEP_SANITIZE_BUILD_DIR (default build-asan); LOCKSTEP_INSTRUCTION_SET (as for
# scripts/test.sh, which passes its own; default baseline); LOCKSTEP_SANITIZE_ALL=1 builds and runs the
# whole suite (LOCKSTEP_TESTS=all) instead of the sanitized set.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
build_dir=${LOCKSTEP_SANITIZE_BUILD_DIR:-build-asan}
jobs=$(nproc)
sanitize="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize=null,nonnull-attribute,returns-nonnull-attribute,alignment,pointer-overflow"
tests=sanitized
target=lockstep_tests
test_optimization=0
if [[ ${LOCKSTEP_SANITIZE_ALL:-0} == 1 ]]; then
  tests=all
  target=all
  test_optimization=""  # the ensembles of the other set are run-bound: all at -O1
fi

stage() { echo "==> $*"; }

stage "sanitizers: configure ($build_dir, LOCKSTEP_TESTS=$tests)"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLOCKSTEP_TESTS=$tests -DLOCKSTEP_TEST_OPTIMIZATION="$test_optimization" \
  -DLOCKSTEP_INSTRUCTION_SET="${LOCKSTEP_INSTRUCTION_SET:-baseline}" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DCMAKE_CXX_FLAGS="$sanitize" -DCMAKE_C_FLAGS="$sanitize" -DCMAKE_EXE_LINKER_FLAGS="$sanitize" \
  -DLOCKSTEP_CUDA=OFF -DLOCKSTEP_BUILD_BENCH=OFF -DLOCKSTEP_MPI=OFF -DLOCKSTEP_PYTHON=OFF >/dev/null

stage "sanitizers: build (-j$jobs, target $target)"
start=$SECONDS
cmake --build "$build_dir" -j "$jobs" --target "$target"
echo "sanitizer build: $((SECONDS - start)) s"

stage "sanitizers: test (-j$jobs)"
start=$SECONDS
export ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:check_initialization_order=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
ctest --test-dir "$build_dir" --output-on-failure --no-tests=error -j "$jobs"
echo "sanitizer tests: $((SECONDS - start)) s"
