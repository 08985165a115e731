#!/usr/bin/env bash
# cmake/ptxas_capture.sh — compiler launcher that records ptxas resource figures in the build tree.
#
# Usage (set by kernels/cuda/CMakeLists.txt as a target's CUDA_COMPILER_LAUNCHER):
#     ptxas_capture.sh OUTPUT_DIR [further launcher, e.g. ccache] nvcc ... -c SOURCE.cu -o OBJECT
#
# The .cu files are compiled with --resource-usage, so ptxas prints, per kernel and per architecture,
# the registers, stack frame and spill stores/loads on stderr (docs/ARCHITECTURE.md section 2 asks the build to
# record them). This wrapper runs the compile command unchanged, moves those ptxas lines out of the
# console into OUTPUT_DIR/SOURCE.txt (a summary table, then ptxas' own words), and passes every other
# line of stderr through, so the build log stays readable and real warnings stay visible. The compile's
# exit status is returned unchanged; the figures file is replaced only by a successful compile.
set -u

out_dir=$1
shift

source_file=""
args=("$@")
for ((i = 0; i < ${#args[@]}; ++i)); do
  if [[ ${args[i]} == "-c" && $((i + 1)) -lt ${#args[@]} ]]; then
    source_file=${args[i + 1]}
  fi
done

stderr_file=$(mktemp)
trap 'rm -f "$stderr_file" "${stderr_file}.ptxas"' EXIT

"$@" 2>"$stderr_file"
status=$?

# ptxas -v lines: "ptxas info ..." and the indented "N bytes stack frame, ..." continuation lines.
is_ptxas='^(ptxas info|[[:space:]]+[0-9]+ bytes stack frame)'
grep -Ev "$is_ptxas" "$stderr_file" >&2 || true

if [[ $status -eq 0 && -n $source_file ]]; then
  mkdir -p "$out_dir"
  name=$(basename "$source_file")
  name=${name%.*}
  grep -E "$is_ptxas" "$stderr_file" >"${stderr_file}.ptxas" || true
  demangle=cat
  command -v c++filt >/dev/null 2>&1 && demangle=c++filt
  {
    echo "# ptxas resource usage for $(basename "$source_file"), written by cmake/ptxas_capture.sh"
    # ptxas prints, per architecture and entry function: "Compiling entry function 'K' for 'sm_XX'",
    # "Function properties for K" followed by "F bytes stack frame, S bytes spill stores, L bytes spill
    # loads", then "Used R registers, ..., C bytes cumulative stack size". Device functions it keeps as
    # real calls (not inlined) get their own "Function properties" block, with their own spills. For
    # width the summary drops lockstep:: qualifiers, return types and parameter lists; the raw output
    # below keeps full signatures.
    awk '
      /Compiling entry function/ {
        split($0, quoted, "\047"); entry = quoted[2]; arch = quoted[4]; next
      }
      /Function properties for/ { sub(/.*Function properties for /, ""); function_name = $0; next }
      /bytes stack frame/ {
        if (function_name == entry) {
          frame = $1; spill_st = $5; spill_ld = $9
        } else if ($1 + $5 + $9 > 0) {
          calls[++n_calls] = sprintf("%s | %s | %s | %s | %s", function_name, arch, $1, $5, $9)
        }
        next
      }
      /Used [0-9]+ registers/ {
        match($0, /Used [0-9]+ registers/); regs = substr($0, RSTART + 5, RLENGTH - 15)
        cumulative = "?"
        if (match($0, /[0-9]+ bytes cumulative stack size/)) cumulative = substr($0, RSTART, RLENGTH - 28)
        entries[++n_entries] = sprintf("%s | %s | %s | %s | %s | %s | %s", entry, arch, regs, frame, cumulative, spill_st, spill_ld)
      }
      END {
        print "# kernel | arch | registers | stack frame | cumulative stack | spill stores | spill loads   (bytes)"
        for (i = 1; i <= n_entries; ++i) print entries[i]
        if (n_calls > 0) {
          print ""
          print "# device functions called, not inlined, with a stack frame or spills of their own"
          print "# function | arch | stack frame | spill stores | spill loads   (bytes)"
          for (i = 1; i <= n_calls; ++i) print calls[i]
        }
      }
' "${stderr_file}.ptxas" | $demangle | sed -E 's/lockstep:://g; s/^void //; s/\([^|]*\) \|/ |/'
    echo
    echo "# ptxas output"
    $demangle <"${stderr_file}.ptxas"
  } >"$out_dir/$name.txt.tmp"
  mv "$out_dir/$name.txt.tmp" "$out_dir/$name.txt"
fi

exit $status
