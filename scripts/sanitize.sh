#!/usr/bin/env bash
# scripts/sanitize.sh — the unit tests built and run under AddressSanitizer + UndefinedBehaviorSanitizer
# in a build directory of their own:
#
#   cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo (-O1 -g1)
#         -DLOCKSTEP_CUDA=OFF -DLOCKSTEP_BUILD_BENCH=OFF -DLOCKSTEP_MPI=OFF -DLOCKSTEP_PYTHON=OFF
#         CXX flags: -fsanitize=address,undefined -fno-omit-frame-pointer
#                    -fno-sanitize=null,nonnull-attribute,returns-nonnull-attribute,alignment,pointer-overflow
#   ctest -L 'core|simd|model|formulation|method|stepper|study|io|lyapunov|reliability' with
#         ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
#
# Which tests: every unit-test executable of the layers (core, simd, model, formulation, method, stepper,
# study, io, lyapunov) and the reliability tests that run in-process (statistics state, checkpoint
# format, TOML guard); their count and the stage's measured time: CONTRIBUTING.md.
# Left out, to keep this second build short (the whole suite has already run in Release): the
# end-to-end tests that start the lockstep binary (cli, reliability_end_to_end; they exercise the same
# host/io and host/checkpoint code these tests cover, plus process handling), the backend ensemble
# tests (minutes of ensembles at -O1 with ASan; the kernels are the member stepper the method tests
# run), the install test and the IDA peer, and the models-on-packs test of simd (four builds, one per
# instruction set, run by a script; the vector math and the LU in lanes it builds on are covered), and
# the simd tests of the method's decisions in lanes (step_control, bdf_history, newton_control: every
# array index in their headers is a compile-time loop bound and a lane's counts are masks, so there is
# no data-dependent access for ASan to find, and their five instruction sets each would cost this build
# a minute of compilation), and the model layer's derivatives test (automatic differentiation of
# every built-in model's M, Q, Phi and their kin against finite differences: fixed-size arrays indexed
# by compile-time loop bounds, nothing allocated, so again nothing data-dependent for ASan to find; its
# unit was this build's largest (CONTRIBUTING.md, "Continuous integration"), and the AD code itself
# still runs under the sanitizers inside every method, formulation and stepper test, which evaluate
# their Jacobians through it). CUDA and the benchmarks are left out (nvcc code cannot run
# here, and the benchmarks are not tests); so is MPI (OpenMPI's own allocations would drown
# LeakSanitizer's report), and so is the Python module (an ASan-instrumented extension cannot be loaded
# into the uninstrumented interpreter: ASan must be the first library of the process). UBSan's three null-pointer checks are off: with any of them GCC 12 no
# longer evaluates constexpr pointer comparisons (static_assert(find_model(...) != nullptr) in
# tests/model fails to compile; GCC PR 71962); a null dereference is still an ASan SEGV report. UBSan's
# alignment and pointer-overflow checks are off too: together they were 30 of the 34 s UBSan added to
# compiling tests/lyapunov/spectrum_test.cpp (78 s with them, 47 s without; ASan alone 44 s), and
# this build's compilation is most of the stage. What they would find, ASan or the CPU finds here: on
# x86-64 a misaligned scalar access computes the same (only slower), a misaligned aligned SIMD load
# faults (an ASan SEGV report), and a pointer that wraps around the address space needs an offset far past any allocation,
# which ASan reports where it is dereferenced. The checks that stay are the ones with no such
# stand-in: signed overflow, shifts, array bounds, division by zero, bool/enum values, unreachable and
# missing returns. -O1
# keeps the build within CI's budget (measured numbers: CONTRIBUTING.md). Any sanitizer report fails
# the test it happens in: ASan aborts on its first error, UBSan halts on its first (halt_on_error=1),
# LSan reports leaks at exit with a non-zero status.
#
# Environment: LOCKSTEP_SANITIZE_BUILD_DIR (default build-asan); LOCKSTEP_SANITIZE_ALL=1 builds and runs
# the whole suite instead of the subset above.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
build_dir=${LOCKSTEP_SANITIZE_BUILD_DIR:-build-asan}
jobs=$(nproc)
sanitize="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize=null,nonnull-attribute,returns-nonnull-attribute,alignment,pointer-overflow"
labels='^(core|simd|model|formulation|method|stepper|study|io|lyapunov|reliability)$'
lanes_method_tests='step_control|bdf_history|newton_control'  # not built here (the header says why)
left_out_tests='model_derivatives_test'                         # nor this one (the header says why)
# The executables behind those labels, except the end-to-end one (it needs the lockstep binary).
# Not built: the end-to-end test (it needs the lockstep binary). sobol_dump and sensitivity_dump are
# the helpers behind study's sobol_vs_scipy and sensitivity_vs_salib, instruction_set_refusal_probe
# the program behind core's core_instruction_set_refusal.
targets="$(grep -rhoE 'lockstep_add_test\(NAME (core|simd|model|formulation|method|stepper|study|io|lyapunov|reliability)_[a-z0-9_]+' \
            tests/*/CMakeLists.txt | sed 's/.*NAME //' | grep -vE "^(reliability_end_to_end_test|${left_out_tests})\$")
         $(grep -rhoE '^lockstep_add_simd_test\(simd_[a-z0-9_]+' tests/simd/CMakeLists.txt | sed 's/.*(//' |
             grep -vE "^simd_(${lanes_method_tests})_test$") sobol_dump sensitivity_dump
         instruction_set_refusal_probe"

stage() { echo "==> $*"; }

stage "sanitizers: configure ($build_dir)"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DCMAKE_CXX_FLAGS="$sanitize" -DCMAKE_C_FLAGS="$sanitize" -DCMAKE_EXE_LINKER_FLAGS="$sanitize" \
  -DLOCKSTEP_CUDA=OFF -DLOCKSTEP_BUILD_BENCH=OFF -DLOCKSTEP_MPI=OFF -DLOCKSTEP_PYTHON=OFF >/dev/null

stage "sanitizers: build (-j$jobs)"
start=$SECONDS
if [[ ${LOCKSTEP_SANITIZE_ALL:-0} == 1 ]]; then
  cmake --build "$build_dir" -j "$jobs"
else
  echo "targets:" $targets
  # shellcheck disable=SC2086  # one word per target
  cmake --build "$build_dir" -j "$jobs" --target $targets
fi
echo "sanitizer build: $((SECONDS - start)) s"

stage "sanitizers: test (-j$jobs)"
start=$SECONDS
export ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:check_initialization_order=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
if [[ ${LOCKSTEP_SANITIZE_ALL:-0} == 1 ]]; then
  ctest --test-dir "$build_dir" --output-on-failure --no-tests=error -j "$jobs"
else
  # Executables that were not built register a placeholder test *_NOT_BUILT; -E leaves those out.
  ctest --test-dir "$build_dir" --output-on-failure --no-tests=error -j "$jobs" -L "$labels" -E "_NOT_BUILT\$|pack_model|simd_(${lanes_method_tests})_test"
fi
echo "sanitizer tests: $((SECONDS - start)) s"
