#!/usr/bin/env bash
# scripts/run-default-study.sh — the README's main command: installs what is needed, builds the
# `lockstep` command, runs the built-in default study (examples/double_pendulum_monte_carlo.toml:
# 10,000 chaotic double pendulums with uncertain release angles and rod length, randomized Sobol
# points, statistics with quasi-Monte Carlo error bars), draws its figures, and says where they are.
#
# Environment: LOCKSTEP_BUILD_DIR (default build), LOCKSTEP_OUT (default
# lockstep-out/double_pendulum_monte_carlo), LOCKSTEP_THREADS (default: all cores), LOCKSTEP_CUDA
# (AUTO | ON | OFF, default AUTO), LOCKSTEP_INSTRUCTION_SET (baseline | sse4 | avx2 | avx512, default
# baseline: the x86-64 instructions the build assumes; the results are the same bits in each).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build_dir=${LOCKSTEP_BUILD_DIR:-build}
out=${LOCKSTEP_OUT:-lockstep-out/double_pendulum_monte_carlo}

bash scripts/install-deps.sh
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOCKSTEP_CUDA="${LOCKSTEP_CUDA:-AUTO}" \
  -DLOCKSTEP_INSTRUCTION_SET="${LOCKSTEP_INSTRUCTION_SET:-baseline}" > /dev/null
cmake --build "$build_dir" -j "$(nproc)" --target lockstep_cli
lockstep="$build_dir/host/cli/lockstep"

threads=()
[[ -n ${LOCKSTEP_THREADS:-} ]] && threads=(--threads "$LOCKSTEP_THREADS")
# Exit code 1 means some member failed; its results are written all the same.
rc=0
"$lockstep" run examples/double_pendulum_monte_carlo.toml -o "$out" "${threads[@]}" || rc=$?
if ((rc > 1)); then exit "$rc"; fi
"$lockstep" plot "$out/results.h5" -o "$out/plots" > /dev/null
echo
echo "lockstep: the default study's files:"
echo "  $out/results.h5    statistics over time (mean, std, min, max, quantiles, mean_stderr), per-member status and counters"
echo "  $out/members.csv   one row per member: its varied inputs, status, steps and final x1, y1, x2, y2"
echo "  $out/plots/*.png   band plots of x1, y1, x2, y2 over time and histograms at t1 ($(ls "$out"/plots/*.png | wc -l) figures)"
echo "  $out/study.toml    the study file as run"
exit "$rc"
