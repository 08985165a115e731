#!/bin/sh
# tests/simd/no_fused_multiply_add.sh [--except REGEX] BINARY... — fails when a binary contains a fused
# multiply-add instruction (vfmadd, vfmsub, vfnmadd, vfnmsub in any form). A fused multiply-add rounds
# once where a * b + c rounds twice, so one in any target's code path would make that target's bits
# differ from the others' (docs/SIMD.md): the math is written without MulAdd and compiled with
# -ffp-contract=off, and this checks the machine code that came out. --except: functions whose
# (mangled) names match REGEX (awk's extended expressions) are not counted, for code that computes
# no member's result (Eigen's kernels, which only the model doctor runs).
set -eu
except='^$'
if [ "${1:-}" = "--except" ]; then
  except=$2
  shift 2
fi
status=0
for binary in "$@"; do
  found=$(objdump -d --no-show-raw-insn "$binary" | awk -v except="$except" '
    /^[0-9a-f]+ <.*>:$/ { symbol = $2 }
    /\tvf(n)?m(add|sub)[0-9a-z]*/ { if (symbol !~ except) count[symbol]++ }
    END { for (s in count) printf "%s: %d\n", s, count[s] }')
  if [ -n "$found" ]; then
    echo "$binary contains fused multiply-adds, in:" >&2
    echo "$found" | c++filt | head -20 >&2
    status=1
  else
    echo "$binary: no fused multiply-add"
  fi
done
exit $status
