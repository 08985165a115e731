#!/bin/sh
# bench/simd_choice/run.sh [OUT_DIR] — the measurements behind the choice of SIMD base layer for
# lanes (docs/SIMD.md): xsimd 8.1.0, Highway 1.0.3 and GCC 12's std::experimental::simd checked for
# bitwise equality of their math across pack widths and ISAs, dependence of a lane on its neighbours,
# accuracy against glibc, FMA in the generated code, masked division and FP flags, and speed; and an
# FMA-free prototype of exp, sin and cos written on Highway's basic operations. Outside the CMake
# build (it needs libhwy-dev, which lockstep itself does not): Debian 12, g++ 12.2, libxsimd-dev
# 8.1.0-7, libhwy-dev 1.0.3-3+deb12u1 (apt-get install -y libxsimd-dev libhwy-dev). Builds one
# program at a time into OUT_DIR (default build/simd_choice) and leaves the logs there; about
# 15 minutes on 2 cores.
set -e
src=$(cd "$(dirname "$0")" && pwd)
out=${1:-$src/../../build/simd_choice}
mkdir -p "$out"
cd "$out"
CXX=/usr/bin/g++
AVX512="-mavx512f -mavx512dq -mavx512bw -mavx512vl -mfma"
I="-I$src"

# 1. xsimd: sse2 / avx2 / fma3<avx2> / avx512f / avx512bw batches and xsimd::f(double)
$CXX -std=c++20 -O2 -ffp-contract=off $AVX512 $I -o xsimd_eval "$src/xsimd_eval.cpp"
# 2. Highway: every attainable x86 target in one binary (SCALAR, SSSE3, SSE4, AVX2, AVX3)
$CXX -std=c++20 -O2 -ffp-contract=off -DHWY_COMPILE_ALL_ATTAINABLE $I -o hwy_eval "$src/hwy_eval.cpp" -lhwy
# 3. std::experimental::simd: scalar ABI, deduce_t<2>, deduce_t<4>, native (8), fixed_size<8>
$CXX -std=c++20 -O2 -ffp-contract=off $AVX512 $I -o stdx_eval "$src/stdx_eval.cpp"
# 4. the FMA-free prototype (exp, sin, cos) on Highway's basic operations
$CXX -std=c++20 -O2 -ffp-contract=off -DHWY_COMPILE_ALL_ATTAINABLE $I -o own_eval "$src/own_eval.cpp" -lhwy
# 5. sin error by argument magnitude at W = 8; exp and log at the edges of their ranges
$CXX -std=c++20 -O2 -ffp-contract=off -march=x86-64-v4 -mpclmul -maes $I -o trig_ranges "$src/trig_ranges.cpp"
$CXX -std=c++20 -O2 -ffp-contract=off -march=x86-64-v4 -mpclmul -maes $I -o exp_log_edges "$src/exp_log_edges.cpp"
# 6. glibc's libm: its FMA variants against its non-FMA variants
$CXX -std=c++20 -O2 -ffp-contract=off -o libm_isa "$src/libm_isa.cpp"
$CXX -std=c++20 -O2 -o libm_cmp "$src/libm_cmp.cpp"
# 7. masked division in builds without AVX-512
$CXX -std=c++20 -O2 -ffp-contract=off -mavx2 -mfma $I -o stdx_eval_avx2 "$src/stdx_eval.cpp"
$CXX -std=c++20 -O2 -ffp-contract=off -mavx2 -mfma $I -o xsimd_eval_avx2 "$src/xsimd_eval.cpp"

# Each *_eval prints MASKDIV, ACC, ACC-typ, TIME and FEXC lines (argument a: accuracy only, t: timing only).
./xsimd_eval > xsimd_out.txt
./hwy_eval > hwy_out.txt
./stdx_eval > stdx_out.txt
./own_eval > own_out.txt
./trig_ranges > trig_ranges_out.txt
./exp_log_edges > exp_log_edges_out.txt
./libm_isa libm_default.bin
GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2,-FMA,-AVX512F,-AVX_Fast_Unaligned_Load ./libm_isa libm_nofma.bin
./libm_cmp libm_default.bin libm_nofma.bin > libm_isa_out.txt
./stdx_eval_avx2 none > stdx_avx2build_maskdiv.txt
./xsimd_eval_avx2 none > xsimd_avx2build_maskdiv.txt
/usr/bin/python3 "$src/summarize.py" > tables.md

# FMA instructions per function: only xsimd's fma3<avx2>, and Highway's AVX2 and AVX3 targets.
for b in xsimd_eval hwy_eval stdx_eval own_eval; do
  echo "== $b"
  objdump -d --no-show-raw-insn -C $b | awk '/^[0-9a-f]+ <.*>:$/{fn=$0} /vf(n)?m(add|sub)[0-9]+[ps]d/{c[fn]++} END{for(f in c) print c[f], f}'
done > fma_scan.txt

# Highway with HWY_DISABLE_BMI2_FMA: does not compile in 1.0.3.
$CXX -std=c++20 -O2 -ffp-contract=off -DHWY_COMPILE_ALL_ATTAINABLE -DHWY_DISABLE_BMI2_FMA $I -o hwy_eval_nofma \
  "$src/hwy_eval.cpp" -lhwy > hwy_nofma_build.txt 2>&1 || echo "hwy_eval_nofma: does not compile (see hwy_nofma_build.txt)"

# What -mno-fma and -ffp-contract do to a * b + c and to FMA intrinsics (object files only).
for fl in "-mavx512f -mno-fma" "-mavx512f -ffp-contract=off" "-std=c++20 -mfma" "-std=c++20 -mfma -ffp-contract=off"; do
  echo "== g++ -O2 $fl -c fma_flags_test.cpp"
  $CXX -O2 $fl -Wno-psabi -c "$src/fma_flags_test.cpp" -o fma_flags_test.o && objdump -d --no-show-raw-insn -C fma_flags_test.o | grep -E '>:|vfm'
done > fma_flags_test_out.txt 2>&1
echo "logs and tables in $out"
