#!/bin/sh
# tests/simd/pack_model_test.sh BUILD... — runs the builds of tests/simd/pack_model_test.cpp (with
# lu_test.cpp, cholesky_test.cpp, newton_matrix_test.cpp, corrector_test.cpp, bdf_attempt_test.cpp, and in the
# AVX2 and AVX-512 builds radau_attempt_test.cpp and member_test.cpp), one per
# instruction set, given as "CPUFLAGS=EXECUTABLE" (CPUFLAGS: the /proc/cpuinfo flags the build needs,
# comma-separated, "-" for none):
# those this CPU can run must pass and print the same digest of their one-lane results (the same bits
# on every instruction set); those it cannot run are reported and skipped (the build leaves them out
# where the machine that configured it could not run them: tests/simd/CMakeLists.txt). Fails when a
# program this CPU can run was not built, and when fewer than two builds could run, since then nothing
# was compared across instruction sets.
set -u
cpu_flags=$(grep -m1 '^flags' /proc/cpuinfo)
digests=""
ran=0
status=0
for pair in "$@"; do
  flag=${pair%%=*}
  executable=${pair#*=}
  missing=""
  if [ "$flag" != "-" ]; then
    for f in $(echo "$flag" | tr ',' ' '); do
      echo " $cpu_flags " | grep -q " $f " || missing="$missing $f"
    done
  fi
  if [ -n "$missing" ]; then
    echo "skipped $(basename "$executable"): this CPU has no$missing"
    continue
  fi
  if [ ! -x "$executable" ]; then
    echo "$(basename "$executable") was not built, though this CPU can run it: the machine that configured"
    echo "the build could not (LOCKSTEP_PACK_TESTS_EVERY_SET=ON builds it everywhere)"
    status=1
    continue
  fi
  output=$("$executable" 2>&1)
  rc=$?
  echo "$output" | grep -E '^\[ (pack|digest|newton matrix|corrector|bdf attempts|bdf members) \]|FAILED|Failure' | sed "s|^|$(basename "$executable"): |"
  if [ $rc -ne 0 ]; then
    echo "$output" | tail -30
    echo "$(basename "$executable") failed (exit $rc)"
    status=1
    continue
  fi
  digest=$(echo "$output" | awk '/^\[ digest \]/ { print $NF }')
  [ -n "$digest" ] || { echo "$(basename "$executable") printed no digest"; status=1; continue; }
  digests="$digests $digest"
  ran=$((ran + 1))
done
distinct=$(echo $digests | tr ' ' '\n' | sort -u | grep -c .)
if [ "$distinct" -gt 1 ]; then
  echo "the instruction sets disagree: digests$digests"
  status=1
fi
if [ $ran -lt 2 ]; then
  echo "only $ran build(s) could run: nothing compared across instruction sets"
  status=1
fi
[ $status -eq 0 ] && echo "$ran instruction sets, one digest:$digests"
exit $status
