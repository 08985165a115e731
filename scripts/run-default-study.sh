#!/usr/bin/env bash
# scripts/run-default-study.sh — the README's main command: installs what is needed, builds, and runs
# the built-in default study (a 10,000-member Monte Carlo of the chaotic double pendulum, see
# host/cli/default_study.cpp), then says where the results are.
#
# Environment: LOCKSTEP_BUILD_DIR (default build), LOCKSTEP_OUT (default lockstep-out/default),
# LOCKSTEP_MEMBERS (default 10000), LOCKSTEP_THREADS (default: all cores).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build_dir=${LOCKSTEP_BUILD_DIR:-build}

bash scripts/install-deps.sh
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOCKSTEP_CUDA="${LOCKSTEP_CUDA:-AUTO}" > /dev/null
cmake --build "$build_dir" -j "$(nproc)" --target lockstep-default-study
"$build_dir/host/cli/lockstep-default-study" "${LOCKSTEP_OUT:-lockstep-out/default}" "${LOCKSTEP_MEMBERS:-10000}" \
  "${LOCKSTEP_THREADS:-0}"
