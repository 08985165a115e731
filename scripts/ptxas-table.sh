#!/usr/bin/env bash
# scripts/ptxas-table.sh — the sm_90 ptxas figures of a CUDA build as the Markdown table of
# docs/GPU.md section 2.1: every kernel's registers, stack frame, spill stores and loads, and the device
# functions ptxas kept as calls with a frame or spills of their own.
#
#   ptxas-table.sh PTXAS_DIR                  print the table (PTXAS_DIR: <build>/ptxas, written by
#                                             cmake/ptxas_capture.sh during the compile)
#   ptxas-table.sh PTXAS_DIR --check DOC OUT  write the table to OUT (a file in the build tree) and say
#                                             whether DOC's table differs from it; DOC is only read.
#                                             Every build of the CUDA libraries runs this
#                                             (kernels/cuda/CMakeLists.txt, target lockstep_ptxas_table)
#   ptxas-table.sh PTXAS_DIR --update DOC     replace the lines between DOC's markers
#                                             "<!-- ptxas-table begin" and "<!-- ptxas-table end -->"
#                                             with the table when it changed: the explicit command
#                                             `cmake --build build --target update-gpu-doc` runs this
#                                             on docs/GPU.md; it fails when the build has no sm_90
#                                             figures
# An ordinary build never writes a tracked file: only --update writes DOC, and only on request.
set -euo pipefail

dir=$1
arch=sm_90

# The name column (before the tab) without the kernel template, model namespace and Radau tableau
# spelled out; CUB's kernels by their own name.
short_names() {
  sed -E 's/cuda::for_each_(active_member|index)<//; s/models:://g;
          s/^(cub::)CUB_[0-9]+_SM_[0-9_]+::detail::([a-z_]+::)?([A-Za-z_]+)[^\t]*/\1\3/;
          s/^(attempt_result|corrector_outcome|member_status|detail::completion) //; s/ *(>|, false>)* *\t/\t/;
          s/radau_iia_method<radau5_tableau,[^\t]*/radau5_method/;
          s/explicit_pair_method<(dopri5|tsit5)_tableau,[^\t]*/\1_method/; s/<([^<>]*)\t/<\1>\t/'
}

table() {
  local f
  for f in "$dir"/ensemble_cuda.txt "$dir"/device_check.txt; do
    [[ -f $f ]] || continue
    echo
    echo "\`$(basename "$f" .txt).cu\`, $arch, bytes per thread (kernels, then non-inlined device functions with a frame or spills):"
    echo
    echo "| kernel | registers | stack frame | cumulative stack | spill stores | spill loads |"
    echo "|---|---|---|---|---|---|"
    # Kernel rows: "name | arch | regs | frame | cumulative | spill st | spill ld" up to the first blank line.
    sed -n '/^$/q; /^#/d; p' "$f" | awk -F' [|] ' -v arch="$arch" '$2 == arch { print $1 "\t" $3 " | " $4 " | " $5 " | " $6 " | " $7 }' |
      short_names | sort | awk -F'\t' '{ printf "| %s | %s |\n", $1, $2 }'
    echo
    echo "| function | stack frame | spill stores | spill loads |"
    echo "|---|---|---|---|"
    sed -n '/^# function | arch/,/^$/p' "$f" | sed '/^#/d; /^$/d' |
      awk -F' [|] ' -v arch="$arch" '$2 == arch { print $1 "\t" $3 " | " $4 " | " $5 }' |
      short_names | sort | uniq -c | sed -E 's/^ *1 //; s/^ *([0-9]+) ([^\t]*)\t/\2 (x\1)\t/' |
      awk -F'\t' '{ printf "| %s | %s |\n", $1, $2 }'
  done
}

case ${2:-} in
  "") table; exit 0 ;;
  --check) (($# == 4)) || { echo "usage: ptxas-table.sh PTXAS_DIR --check DOC OUT" >&2; exit 2; } ;;
  --update) (($# == 3)) || { echo "usage: ptxas-table.sh PTXAS_DIR --update DOC" >&2; exit 2; } ;;
  *) echo "usage: ptxas-table.sh PTXAS_DIR [--check DOC OUT | --update DOC]" >&2; exit 2 ;;
esac
mode=$2
doc=$3
if ! grep -q " | $arch | " "$dir"/ensemble_cuda.txt 2>/dev/null; then
  # No sm_90 figures in this build (CMAKE_CUDA_ARCHITECTURES without 90): nothing to compare.
  if [[ $mode == --update ]]; then
    echo "ptxas-table: $dir/ensemble_cuda.txt has no $arch figures; build for $arch to update $doc" >&2
    exit 1
  fi
  rm -f "$4"
  exit 0
fi
grep -q '^<!-- ptxas-table begin' "$doc" || { echo "ptxas-table: no markers in $doc" >&2; exit 1; }
new=$(mktemp)
trap 'rm -f "$new"' EXIT
{
  sed -n '1,/^<!-- ptxas-table begin/p' "$doc"
  table
  echo
  sed -n '/^<!-- ptxas-table end -->/,$p' "$doc"
} >"$new"
if [[ $mode == --check ]]; then
  out=$4
  table >"$out.tmp"
  mv "$out.tmp" "$out"
  if ! cmp -s "$new" "$doc"; then
    echo "ptxas-table: this build's $arch figures ($out) differ from the table in $doc;" \
      "\`cmake --build <build> --target update-gpu-doc\` writes them there"
  fi
  exit 0
fi
if cmp -s "$new" "$doc"; then
  echo "ptxas-table: the $arch table in $doc is already this build's"
else
  cp "$new" "$doc"
  echo "ptxas-table: updated the $arch table in $doc"
fi
