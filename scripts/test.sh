#!/usr/bin/env bash
# scripts/test.sh — the one command that installs, builds and tests lockstep (README: "Testing").
#
#   scripts/install-deps.sh                      Debian packages (fast no-op when all are present)
#   cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOCKSTEP_CUDA=AUTO
#   cmake --build build -j$(nproc)               also compiles the CUDA kernels where nvcc exists
#   ctest --output-on-failure -j$(nproc)         GPU tests skip themselves without a GPU
#
# Environment: LOCKSTEP_BUILD_DIR (default: build, relative to the repository root), LOCKSTEP_CUDA
# (AUTO, ON or OFF; default AUTO). Exits non-zero when any stage fails or when no test ran.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
build_dir=${LOCKSTEP_BUILD_DIR:-build}
jobs=$(nproc)

stage() { echo "==> $*"; }

stage "dependencies"
bash scripts/install-deps.sh

stage "configure ($build_dir)"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOCKSTEP_CUDA="${LOCKSTEP_CUDA:-AUTO}"

stage "build (-j$jobs)"
start=$SECONDS
cmake --build "$build_dir" -j "$jobs"
echo "build: $((SECONDS - start)) s"

# The ptxas resource figures the CUDA build records (kernels/cuda/CMakeLists.txt): print each file's
# kernel table (up to its first blank line) so every CI log carries them; the files hold the rest.
shopt -s nullglob
for figures in "$build_dir"/ptxas/*.txt; do
  stage "ptxas resource usage (kernels; non-inlined functions and raw output in $figures)"
  sed -n '/^$/q;p' "$figures"
done
shopt -u nullglob

stage "test (-j$jobs)"
ctest --test-dir "$build_dir" --output-on-failure --no-tests=error -j "$jobs"
