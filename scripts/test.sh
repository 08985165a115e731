#!/usr/bin/env bash
# scripts/test.sh — the one command that installs, builds and tests lockstep (README.md, "The two commands").
#
#   scripts/install-deps.sh                      Debian packages (fast no-op when all are present)
#   cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOCKSTEP_CUDA=AUTO -DLOCKSTEP_TESTS=unsanitized
#         -DCMAKE_CUDA_ARCHITECTURES=90 (80;90 where a GPU is present; below) -DLOCKSTEP_INSTRUCTION_SET=baseline
#   cmake --build build -j$(nproc)               also compiles the CUDA kernels where nvcc exists
#   ctest --output-on-failure -j$(nproc)         GPU tests skip themselves without a GPU
#   scripts/sanitize.sh                          the other tests, under ASan + UBSan, in build-asan
#
# The suite is two sets (cmake/LockstepHelpers.cmake): the unit tests of the layers, which
# scripts/sanitize.sh builds and runs under the sanitizers, and the rest, which this build runs. Each
# test compiles once: building the layers' tests here as well would run the same assertions twice, for
# a large share of the command's compilation (measured: CONTRIBUTING.md, "Continuous integration"). A
# build configured by hand keeps LOCKSTEP_TESTS=all, every test in one build.
#
# Environment: LOCKSTEP_BUILD_DIR (default: build, relative to the repository root), LOCKSTEP_CUDA
# (AUTO, ON or OFF; default AUTO), LOCKSTEP_CUDA_ARCHITECTURES (the GPU architectures nvcc compiles for;
# default: the build's own, 80;90, on a machine with an NVIDIA GPU, and 90 alone on one without),
# LOCKSTEP_INSTRUCTION_SET (baseline, sse4, avx2 or avx512: the x86-64 instructions everything is
# compiled for; default baseline; the results' bits are the same in each, docs/SIMD.md),
# LOCKSTEP_SANITIZE_BUILD_DIR (the sanitizers' build, default build-asan: scripts/sanitize.sh),
# LOCKSTEP_BENCH_COMPILE_CHECK (ON or OFF; default ON where CI=true, else OFF: ON builds the benchmarks at
# -O0 into $build_dir/bench/compile-check/, which proves they compile and link and saves CI a sixth of
# its build; bench/CMakeLists.txt), LOCKSTEP_BUILTIN_LIBRARY_OPTIMIZATION (the -O level of the built-in
# models' engines and libraries of lanes; default 1 where CI=true, else the build type's: the same bits
# in about half the compile time, the top-level CMakeLists.txt says why), LOCKSTEP_CUDA_COMPILE_CHECK (ON or
# OFF; default ON where CI=true on a machine without a GPU, else OFF: ON compiles the CUDA code as PTX
# without device optimization and without ptxas, which proves it compiles in a tenth of nvcc's time but
# makes no code for a GPU and no ptxas figures; kernels/cuda/CMakeLists.txt).
# Exits non-zero when any stage fails or when no test ran.
#
# Why 90 alone without a GPU: there no test runs device code, so what the CUDA build proves is that the
# kernels compile (nvcc's host-from-device diagnostics are errors) and ptxas's figures for them, and
# docs/GPU.md records sm_90's (the H100's); scripts/gpu-check.sh packs sm_90 code. sm_80 would double
# nvcc's device work for nothing this machine checks: ensemble_cuda.cu took 484 s of CPU for both and
# 248 s for sm_90 alone (nvcc 13.0.88, on the 2-core AMD EPYC machines this project is built on). CI
# keeps only the first of the two (LOCKSTEP_CUDA_COMPILE_CHECK): the ptxas figures of its log are
# kept nowhere, and the file took 425 s of CPU with them and 40 s without.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
build_dir=${LOCKSTEP_BUILD_DIR:-build}
jobs=$(nproc)

stage() { echo "==> $*"; }

stage "dependencies"
bash scripts/install-deps.sh

cuda_architectures=${LOCKSTEP_CUDA_ARCHITECTURES:-}
if [[ -z $cuda_architectures ]]; then
  if nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    cuda_architectures="80;90"
  else
    cuda_architectures=90
  fi
fi

bench_compile_check=${LOCKSTEP_BENCH_COMPILE_CHECK:-}
if [[ -z $bench_compile_check ]]; then
  if [[ ${CI:-} == true ]]; then bench_compile_check=ON; else bench_compile_check=OFF; fi
fi

cuda_compile_check=${LOCKSTEP_CUDA_COMPILE_CHECK:-}
if [[ -z $cuda_compile_check ]]; then
  if [[ ${CI:-} == true && $cuda_architectures == 90 ]]; then cuda_compile_check=ON; else cuda_compile_check=OFF; fi
fi

builtin_library_optimization=${LOCKSTEP_BUILTIN_LIBRARY_OPTIMIZATION-}
if [[ -z ${LOCKSTEP_BUILTIN_LIBRARY_OPTIMIZATION+set} && ${CI:-} == true ]]; then builtin_library_optimization=1; fi

stage "configure ($build_dir)"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOCKSTEP_CUDA="${LOCKSTEP_CUDA:-AUTO}" --no-warn-unused-cli \
  -DLOCKSTEP_TESTS=unsanitized \
  -DCMAKE_CUDA_ARCHITECTURES="$cuda_architectures" -DLOCKSTEP_INSTRUCTION_SET="${LOCKSTEP_INSTRUCTION_SET:-baseline}" \
  -DLOCKSTEP_BENCH_COMPILE_CHECK="$bench_compile_check" -DLOCKSTEP_BUILTIN_LIBRARY_OPTIMIZATION="$builtin_library_optimization" \
  -DLOCKSTEP_CUDA_COMPILE_CHECK="$cuda_compile_check"

stage "build (-j$jobs)"
start=$SECONDS
cmake --build "$build_dir" -j "$jobs"
echo "build: $((SECONDS - start)) s"

# The ptxas resource figures the CUDA build records (kernels/cuda/CMakeLists.txt): print each file's
# kernel table (up to its first blank line) so that the build's log carries them; the files hold the
# rest. A compile check (CI's) records none (a build that was not one before may have left its files).
if [[ $cuda_compile_check == ON ]]; then
  if grep -q 'compute_[0-9]' "$build_dir/build.ninja"; then
    stage "no ptxas figures: the CUDA code is compiled as a compile check (LOCKSTEP_CUDA_COMPILE_CHECK)"
  fi
else
  shopt -s nullglob
  for figures in "$build_dir"/ptxas/*.txt; do
    stage "ptxas resource usage (kernels; non-inlined functions and raw output in $figures)"
    sed -n '/^$/q;p' "$figures"
  done
  shopt -u nullglob
fi

stage "test (-j$jobs)"
ctest --test-dir "$build_dir" --output-on-failure --no-tests=error -j "$jobs"

# The sanitized set, in the sanitizers' build, for the same instruction set.
LOCKSTEP_INSTRUCTION_SET="${LOCKSTEP_INSTRUCTION_SET:-baseline}" bash scripts/sanitize.sh
