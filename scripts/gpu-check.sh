#!/usr/bin/env bash
# scripts/gpu-check.sh — proves the CUDA backend on a borrowed GPU machine, in stages that each fit one
# command of a lease (at most 10 minutes each, 30 in all), from binaries built here.
#
#   gpu-check.sh pack [--no-fmad] [--model-files | --docs]
#                                   on a machine with nvcc (no GPU needed): builds the CUDA tests and
#                                   gpu_bench (tests/cuda) for sm_90 in the build directory
#                                   scripts/test.sh uses (LOCKSTEP_BUILD_DIR, default build; it must
#                                   compile for sm_90, as test.sh's build and CMake's default 80;90
#                                   do, and not be a CUDA compile check, as CI's build is:
#                                   LOCKSTEP_CUDA_COMPILE_CHECK), so a developer's build is
#                                   reused, and copies them with every shared library they need that a
#                                   bare machine may lack into the pack folder (LOCKSTEP_GPU_PACK,
#                                   default build-gpu-pack: git-ignored; carry it to the GPU machine;
#                                   a pack over the 64 MiB a lease carries is also archived, in
#                                   build-gpu-pack-archive/pack.tar.gz: carry that folder instead,
#                                   and `run` unpacks it).
#                                   --no-fmad also packs a second build (build-nofmad, -DLOCKSTEP_CUDA_NO_FMAD=ON,
#                                   sm_90 only: a full nvcc compile of its own) whose comparison with the
#                                   serial backend is ten times tighter.
#                                   --model-files also packs model_file_device_test and the engines, with
#                                   their CUDA backends, of the model files named in model_files below,
#                                   compiled here as `lockstep run --backend cuda` compiles them (nvcc;
#                                   Python with SymPy for an equations file; about 80 s a model on 2
#                                   cores, once: the engine cache keeps them).
#                                   --docs packs, instead of the tests, the `lockstep` command of that
#                                   build (with CUDA) and the documentation's examples that need a GPU
#                                   (docs/run_examples.py and the pages with needs-gpu blocks), for
#                                   the docs stage; a pack of its own, as the command alone is large.
#                                   --install packs, instead of the tests, an installed lockstep
#                                   (`cmake --install` of that build, without its Python package) with
#                                   the libraries its command loads, Highway's headers and a model
#                                   header (examples/models/heavy_top.hpp), for the install stage; a
#                                   pack of its own (85 MB, 40 MB archived).
#   gpu-check.sh run [STAGE...]     on the GPU machine, from the pack folder: the stages below (all of
#                                   them when none is named: lab first where the pack has it, then the
#                                   others in this order). Each ends within 8 minutes
#                                   (timeout; LOCKSTEP_GPU_STAGE_LIMIT seconds) and writes one file, OUT/<stage>.txt (OUT: --out DIR or
#                                   LOCKSTEP_GPU_OUT, default gpu-results), headed by the device name and
#                                   the driver and CUDA versions. One stage per lease command.
#       tests      every CUDA test (tests/cuda): the device check kernels, every device model with BDF,
#                  Radau IIA, the explicit pairs (tsit5, dopri5) and auto against the serial backend
#                  (statuses equal, positions within 10 (atol + rtol |q|), 1 x with --no-fmad), fused
#                  and forced split, and the packed model files' engines likewise; a skipped test fails;
#                  then, from a plain pack, member_trace 1 (one BDF member on the device and the host,
#                  attempt by attempt)
#       sanitize   compute-sanitizer memcheck, racecheck, initcheck and synccheck on gpu_bench small (every device
#                  model, BDF and Radau IIA 5 fused and split, split projections, tsit5 and auto fused;
#                  100 members in 2 chunks), and memcheck on the packed model files' engines (BDF, fused
#                  and split)
#       bench      members per second, cuda against the best CPU path of the pack's build: omp on all
#                  cores with the SIMD lanes of its instruction set (pack a build for avx512, made with
#                  LOCKSTEP_BUILD_DIR, to compare with AVX-512's 8 lanes). Pendulum, double pendulum
#                  and andrews (over its standard interval), BDF, Radau IIA 5 and tsit5, at 10^4 .. 10^6
#                  members, least of three runs where they are short (gpu_bench rate); lscpu first
#       profile    Nsight Compute: occupancy and local-memory traffic of the step kernels
#       lab        (a plain pack: no --model-files, no --no-fmad) the kernel-shape lab (bench/gpu_shapes):
#                  every candidate kernel shape at N = 4, 8, 19 and 32 with BDF and Radau IIA 5, timed
#                  (one process per N), then Nsight Compute's DRAM and L2 bytes per member-attempt of
#                  each (bench/gpu_shapes/lab_bytes.py; the raw CSV beside the stage file,
#                  OUT/lab-ncu.csv); then the timed runs again from the lab built with
#                  --fmad=false; about a minute and a half on an H200 (docs/GPU.md 9)
#                  The FP64 peak its rates are a fraction of: LOCKSTEP_GPU_FP64_PEAK TFLOP/s, default
#                  33.5 (the H100 SXM's vector rate, section 3 of docs/GPU.md; the H200's is the same)
#       docs       (a --docs pack: the only stage it runs) the site's needs-gpu examples, with
#                  docs/run_examples.py --gpu --only-gpu (Python 3's standard library only); a block
#                  that also needs nvcc runs only where the machine has it
#       install    (an --install pack: the only stage it runs) the installed command compiles the model
#                  header for --backend cuda with this machine's nvcc and host compiler, against the
#                  installed headers and CUDA kernels (share/lockstep/kernels/cuda), and runs it on the
#                  device and on omp: statuses equal, positions within 10 (atol + rtol |q|); NOT RUN
#                  where the machine lacks nvcc or c++
#   gpu-check.sh dry-run [--with-lab]
#                                   what runs without a GPU: pack (without the kernel-shape lab and
#                                   member_trace: their nvcc compile is minutes that CI's budget cannot
#                                   spare, and `pack` compiles them on the machine that packs, before
#                                   any device time is spent; --with-lab packs them too, without the lab
#                                   built with --fmad=false, and runs the lab's host check), then the
#                                   checks of the pack on this machine (every library resolves, every
#                                   binary loads and its tests skip cleanly, `run` refuses for want of a
#                                   device). CI runs it (.ci/run).
#
# What the machine refuses (no compute-sanitizer or ncu installed, profiling counters not permitted to
# this user) is recorded as such in the stage's file and does not fail the stage; anything else that
# goes wrong (a failed or skipped test, a sanitizer error, a timeout, a missing library) fails it with
# a non-zero status and says what.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
build_dir=${LOCKSTEP_BUILD_DIR:-build}
pack=${LOCKSTEP_GPU_PACK:-build-gpu-pack}
[[ $pack == /* ]] || pack=$root/$pack
archive_dir=$pack-archive  # a pack too large to carry travels as $archive_dir/pack.tar.gz
# The lab built with --fmad=false too (the lab stage runs it): another nvcc compile of minutes, which
# dry-run leaves out (its host check is the same host code as the plain lab's).
lab_nofmad=1
with_lab=1  # the plain pack holds the lab and member_trace (dry-run: only with --with-lab)
dry=0      # 1 in dry-run: the pack is checked here, never run on a GPU
nofmad_dir=${LOCKSTEP_NOFMAD_BUILD_DIR:-build-nofmad}
targets=(cuda_device_check_test cuda_ensemble_test gpu_bench)
lab_target=kernel_shape_lab  # bench/gpu_shapes, packed beside them for the lab stage
# The model files --model-files compiles for the device: a model header (a spatial top in Euler
# parameters), an equations file (a four-bar linkage, through the SymPy generator) and a model header
# with events (a driven arm that stops at the horizontal). No built-in model is any of them, so the
# device runs code that only a model file brings.
model_files=(examples/models/heavy_top.hpp examples/models/fourbar.toml examples/models/driven_arm.hpp)
# Seconds each stage may take: it must end well inside a lease command's 10 minutes. A lease shorter
# than four stages of 8 minutes runs them with smaller limits (LOCKSTEP_GPU_STAGE_LIMIT), one per call.
stage_limit=${LOCKSTEP_GPU_STAGE_LIMIT:-480}

say() { echo "gpu-check: $*"; }
die() {
  echo "gpu-check: error: $*" >&2
  exit 1
}
[[ $stage_limit =~ ^[0-9]+$ ]] && ((stage_limit >= 30)) || die "LOCKSTEP_GPU_STAGE_LIMIT must be a whole number of seconds, at least 30 (got '$stage_limit')"

# Shared libraries a machine with a CUDA driver has for certain (the C library and the loader; libcuda
# is the driver itself, loaded by the CUDA runtime at run time), and those too large for the pack
# (cuBLAS, cuSOLVER and what cuSOLVER loads: libcublas 54 MB, libcublasLt 542 MB, libcusolver 141 MB,
# libcusparse and libnvJitLink, against the 64 MiB a lease carries, and CUDA 13 installs no static
# cuBLAS here; the CUDA toolkit of the GPU machine provides them, and `run` fails naming them where it
# does not).
is_system_library() {
  case $1 in
    linux-vdso.so* | ld-linux*.so* | libc.so* | libm.so* | libdl.so* | librt.so* | libpthread.so* | libcuda.so*) return 0 ;;
  esac
  return 1
}
is_toolkit_library() {
  case $1 in
    libcublas.so* | libcublasLt.so* | libcusolver.so* | libcusparse.so* | libnvJitLink.so*) return 0 ;;
  esac
  return 1
}

cuda_archs() { grep -o 'sm_[0-9]*\|compute_[0-9]*' "$1/build.ninja" 2>/dev/null | sed 's/.*_//' | sort -u | tr '\n' ' '; }

# Configures `dir` (when it is not yet) and builds the pack's targets there.
build_targets() {
  local dir=$1
  shift
  if [[ ! -f $dir/CMakeCache.txt ]]; then
    cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOCKSTEP_CUDA=ON "$@"
  fi
  grep -q 'cuda_ensemble_test' "$dir/build.ninja" 2>/dev/null ||
    die "$dir has no CUDA targets (configured without nvcc or with LOCKSTEP_CUDA=OFF)"
  grep -q 'compute_90\|sm_90' "$dir/build.ninja" ||
    die "$dir does not compile CUDA for sm_90: reconfigure it with -DCMAKE_CUDA_ARCHITECTURES='80;90'"
  local start=$SECONDS
  nice -n 5 cmake --build "$dir" -j "$(nproc)" --target "${targets[@]}"
  say "built ${targets[*]} in $dir: $((SECONDS - start)) s"
}

# Copies binaries of build dir $1 (the targets named after $2, default all three) into $pack/$2, and
# the libraries they need into $pack/lib.
copy_binaries() {
  local dir=$1 into=$pack/$2 t bin
  shift 2
  local names=("$@")
  ((${#names[@]})) || names=("${targets[@]}")
  mkdir -p "$into" "$pack/lib"
  for t in "${names[@]}"; do
    bin=$(find "$dir/tests/cuda" -maxdepth 1 -type f -name "$t" | head -n 1)
    [[ -n $bin ]] || die "$t not found under $dir/tests/cuda"
    cp "$bin" "$into/$t"
    copy_libraries "$into/$t"
  done
}

# Copies the shared libraries binary or library $1 loads into $pack/lib, but for the system's and the
# CUDA toolkit's (listed in expected-on-gpu-machine.txt).
copy_libraries() {
  local lib path
  mkdir -p "$pack/lib"
  while read -r lib path; do
    [[ $path == "not" ]] && die "$(basename "$1"): $lib is not found on this machine (ldd)"
    is_system_library "$lib" && continue
    if is_toolkit_library "$lib"; then
      echo "$lib" >>"$pack/expected-on-gpu-machine.txt"
      continue
    fi
    [[ -f $pack/lib/$lib ]] || cp -L "$path" "$pack/lib/$lib"
  done < <(ldd "$1" | awk '$2 == "=>" { print $1, $3 } $2 != "=>" && $1 ~ /^\// { n = split($1, p, "/"); print p[n], $1 }')
}

pack_all() {
  local no_fmad=0 with_model_files=0 with_docs=0 with_install=0
  while (($#)); do
    case $1 in
      --no-fmad) no_fmad=1 ;;
      --model-files) with_model_files=1 ;;
      --docs) with_docs=1 ;;
      --install) with_install=1 ;;
      *) die "pack: unknown option $1 (--no-fmad, --model-files, --docs, --install)" ;;
    esac
    shift
  done
  ((with_docs && (no_fmad || with_model_files || with_install))) && die "pack: --docs is a pack of its own (the lockstep command is large)"
  ((with_install && (no_fmad || with_model_files))) && die "pack: --install is a pack of its own (an installed lockstep is large)"
  # Known before the second build's minutes: the two together exceed the 64 MiB a lease carries.
  ((no_fmad && with_model_files)) && die "pack: --no-fmad and --model-files do not fit one lease's 64 MiB together; pack them apart"
  command -v nvcc >/dev/null || [[ -x /usr/local/cuda/bin/nvcc ]] || die "pack needs nvcc (CUDA toolkit)"
  # A compile check's device code is unoptimized PTX (kernels/cuda/CMakeLists.txt): fine for dry-run,
  # which never starts it, but no measure of anything on a GPU.
  if ((!dry)) && grep -qx 'LOCKSTEP_CUDA_COMPILE_CHECK:BOOL=ON' "$build_dir/CMakeCache.txt" 2>/dev/null; then
    die "$build_dir is a CUDA compile check (LOCKSTEP_CUDA_COMPILE_CHECK=ON: PTX without device optimization); pack another build (LOCKSTEP_BUILD_DIR) or reconfigure it with -DLOCKSTEP_CUDA_COMPILE_CHECK=OFF"
  fi
  build_targets "$build_dir"
  rm -rf "$pack"
  mkdir -p "$pack"
  touch "$pack/expected-on-gpu-machine.txt"
  if ((with_docs)); then
    pack_docs
  elif ((with_install)); then
    pack_install
  else
    copy_binaries "$build_dir" bin
    # The labs (22 MB) only in the plain pack: beside --model-files' engines or --no-fmad's second build
    # a pack would outgrow the 64 MiB a lease carries.
    ((with_model_files || no_fmad || !with_lab)) || pack_lab
  fi
  if ((with_model_files)); then
    local start=$SECONDS
    nice -n 5 cmake --build "$build_dir" -j "$(nproc)" --target model_file_device_test
    copy_binaries "$build_dir" bin model_file_device_test
    "$pack/bin/model_file_device_test" compile "$pack/model-files" "${model_files[@]}" ||
      die "the model files' device engines did not compile"
    local engine engines=0
    for engine in "$pack"/model-files/*.so; do
      [[ -f $engine ]] || continue
      copy_libraries "$engine"
      engines=$((engines + 1))
    done
    ((engines == ${#model_files[@]})) || die "expected ${#model_files[@]} model-file engines in $pack/model-files, found $engines"
    say "model files' device engines packed in $((SECONDS - start)) s"
  fi
  if ((no_fmad)); then
    local launcher=()
    command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    build_targets "$nofmad_dir" -DLOCKSTEP_CUDA_NO_FMAD=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DLOCKSTEP_BUILD_BENCH=OFF \
      "${launcher[@]}"
    # Only its ensemble test: the comparison it tightens (the whole second set may not fit 64 MiB
    # beside CI's sm_80/sm_90 build).
    copy_binaries "$nofmad_dir" bin-nofmad cuda_ensemble_test
  fi
  sort -u -o "$pack/expected-on-gpu-machine.txt" "$pack/expected-on-gpu-machine.txt"
  {
    echo "lockstep GPU pack"
    echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"
    echo "packed: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname) from $build_dir (CUDA archs $(cuda_archs "$build_dir"))"
    echo "nvcc: $( (nvcc --version 2>/dev/null || /usr/local/cuda/bin/nvcc --version) | tail -n 2 | head -n 1)"
    echo "size: $(du -sh "$pack" | cut -f1) ($(du -sb "$pack" | cut -f1) bytes)"
    echo "files:"
    (cd "$pack" && find . -type f ! -name MANIFEST -printf '  %p %s\n' | sort)
    echo "from the GPU machine's CUDA toolkit (too large to carry): $(tr '\n' ' ' <"$pack/expected-on-gpu-machine.txt")"
  } >"$pack/MANIFEST"
  cat "$pack/MANIFEST"
  local bytes archive_bytes
  bytes=$(du -sb "$pack" | cut -f1)
  rm -rf "$archive_dir"
  ((bytes <= 64 * 1024 * 1024)) && return 0
  # A pack over what a lease carries (a build for avx512 with the labs: its engines in lanes make
  # gpu_bench twice the size) travels as a gzip archive, about half the size, which `run` unpacks.
  mkdir -p "$archive_dir"
  tar -C "$(dirname "$pack")" -czf "$archive_dir/pack.tar.gz" "$(basename "$pack")"
  archive_bytes=$(stat -c %s "$archive_dir/pack.tar.gz")
  ((archive_bytes <= 64 * 1024 * 1024)) ||
    die "the pack is $bytes bytes and its archive $archive_bytes, over the 64 MiB a lease carries"
  say "the pack is $bytes bytes, over the 64 MiB a lease carries: carry $archive_dir ($archive_bytes bytes)" \
    "instead of $pack; 'run' unpacks it"
}

# The kernel-shape lab and its Nsight Compute summary, and member_trace (tests/cuda), which the tests
# stage runs.
pack_lab() {
  local start=$SECONDS t
  local labs=("$lab_target")
  ((lab_nofmad)) && labs+=("${lab_target}_nofmad")
  nice -n 5 cmake --build "$build_dir" -j "$(nproc)" --target "${labs[@]}" member_trace
  for t in "${labs[@]}"; do cp "$build_dir/bench/gpu_shapes/$t" "$pack/bin/"; done
  copy_libraries "$pack/bin/$lab_target"
  copy_binaries "$build_dir" bin member_trace
  mkdir -p "$pack/tools"  # not bin/: every file there is a binary that ldd checks
  cp bench/gpu_shapes/lab_bytes.py "$pack/tools/"
  say "packed the kernel-shape lab and member_trace ($((SECONDS - start)) s)"
}

# The install pack: gpu_bench (which finds the device), an installed lockstep (`cmake --install` of the
# build, without its Python package) with the libraries its command loads, Highway's headers (which the
# model's host code includes and a bare machine lacks), and a model header, for the install stage.
pack_install() {
  # Everything `cmake --install` installs must be built (the Python module among it): the default target.
  nice -n 5 cmake --build "$build_dir" -j "$(nproc)"
  copy_binaries "$build_dir" bin gpu_bench
  cmake --install "$build_dir" --prefix "$pack/prefix" >/dev/null
  rm -rf "$pack/prefix/lib/python3"*
  copy_libraries "$pack/prefix/bin/lockstep"
  local hwy
  hwy=$(echo '#include <hwy/base.h>' | c++ -std=c++20 -M -x c++ - | tr ' \\' '\n\n' | grep '/hwy/base\.h$' | head -n 1)
  [[ -n $hwy ]] || die "pack --install: Highway's headers (hwy/base.h) not found by c++"
  mkdir -p "$pack/deps" "$pack/study"
  cp -r "$(dirname "$hwy")" "$pack/deps/"
  cp examples/models/heavy_top.hpp "$pack/study/"
  say "packed an installed lockstep ($(du -sh "$pack/prefix" | cut -f1)) and Highway's headers"
}

# The docs pack: gpu_bench (which finds the device), the lockstep command of the CUDA build, and the
# pages whose examples need a GPU with the script that runs them.
pack_docs() {
  nice -n 5 cmake --build "$build_dir" -j "$(nproc)" --target lockstep_cli
  copy_binaries "$build_dir" bin gpu_bench
  cp "$build_dir/host/cli/lockstep" "$pack/bin/lockstep"
  copy_libraries "$pack/bin/lockstep"
  mkdir -p "$pack/docs"
  cp docs/run_examples.py "$pack/docs/"
  local page pages=0
  while read -r page; do
    mkdir -p "$pack/$(dirname "$page")"
    cp "$page" "$pack/$page"
    pages=$((pages + 1))
  done < <(grep -rl --include='*.md' 'needs-gpu' docs | grep -v '^docs/reference/_generated/')
  ((pages > 0)) || die "no page of docs/ has a needs-gpu example"
  say "packed the lockstep command and $pages pages with needs-gpu examples"
}

# ---- run (GPU machine) ----

pack_env() {
  local cuda_lib=""
  for d in "${CUDA_HOME:-}/lib64" /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib; do
    [[ -d $d ]] && cuda_lib="$cuda_lib:$d"
  done
  export LD_LIBRARY_PATH="$pack/lib$cuda_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
}

find_tool() {  # a CUDA tool on PATH or in the toolkit
  command -v "$1" 2>/dev/null || { [[ -x /usr/local/cuda/bin/$1 ]] && echo "/usr/local/cuda/bin/$1"; } || true
}

# The header of every stage file: device, driver, CUDA versions.
header() {
  echo "== gpu-check $1, $(date -u +%Y-%m-%dT%H:%M:%SZ), host $(hostname)"
  sed -n '1,3p' "$pack/MANIFEST"
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader | sed 's/^/nvidia-smi: /'
    nvidia-smi | sed -n 's/.*\(CUDA Version: [0-9.]*\).*/nvidia-smi: driver supports \1/p'
  else
    echo "nvidia-smi: not installed"
  fi
  "$pack/bin/gpu_bench" info || true
  local nvcc_path
  nvcc_path=$(find_tool nvcc)
  [[ -n $nvcc_path ]] && echo "nvcc on this machine: $("$nvcc_path" --version | tail -n 2 | head -n 1)"
  echo "cores: $(nproc)"
  echo
}

# Runs "$@" (after the limit in seconds, $1) under that time limit; fails on a non-zero status.
limited() {
  local limit=$1 rc=0
  shift
  timeout --kill-after=10 "$limit" "$@" || rc=$?
  ((rc == 124 || rc == 137)) && echo "TIMEOUT after $limit s: $*"
  return $rc
}

stage_tests() {
  local t bin log rc=0 dirs=("$pack/bin") share binaries=2
  [[ -d $pack/bin-nofmad ]] && dirs+=("$pack/bin-nofmad") && binaries=$((binaries + 1))
  [[ -x $pack/bin/model_file_device_test ]] && binaries=$((binaries + 1))
  share=$((stage_limit / binaries))  # each test binary's part of the stage's time
  # The engines the pack's model_file_device_test loads (compiled with the default build's flags, so
  # only bin/ runs it).
  export LOCKSTEP_MODEL_FILE_ENGINES=$pack/model-files
  for bin in "${dirs[@]}"; do
    for t in cuda_device_check_test cuda_ensemble_test model_file_device_test; do
      [[ -x $bin/$t ]] || continue
      log=$(mktemp)
      echo "-- $bin/$t (at most $share s)"
      limited "$share" "$bin/$t" --gtest_color=no 2>&1 | tee "$log" || rc=1
      if grep -q '^\[  SKIPPED \]' "$log"; then
        echo "FAIL: $t skipped tests on a machine with a GPU"
        rc=1
      fi
      grep -q '^\[  PASSED  \]' "$log" || rc=1
      rm -f "$log"
    done
  done
  # One BDF member on the device and on the host, attempt by attempt (docs/GPU.md 9.2): where the
  # ensemble tests see a wrong status, this says at which attempt the device parts from the host.
  if [[ -x $pack/bin/member_trace ]]; then
    echo "-- $pack/bin/member_trace 1 (at most 60 s)"
    limited 60 "$pack/bin/member_trace" 1 || rc=1
  fi
  return $rc
}

# Runs a CUDA tool's command within $3 seconds. Returns 0 when it passed, 2 when the machine refused it
# (its output matches the pattern $1: no permission for the performance counters, an unsupported
# device), 1 when it failed or timed out; says which ($2 names the tool).
tool_run() {
  local refused=$1 what=$2 limit=$3 log r=0 start=$SECONDS
  shift 3
  log=$(mktemp)
  timeout --kill-after=10 "$limit" "$@" 2>&1 | tee "$log" || r=$?
  echo "($what: $((SECONDS - start)) s of the $limit s it may take)"
  if grep -qi "$refused" "$log"; then
    echo "NOT RUN: $what was refused by this machine (status $r)"
    r=2
  elif ((r != 0)); then
    echo "FAIL: $what (status $r$( ((r == 124 || r == 137)) && echo ', timed out'))"
    r=1
  fi
  rm -f "$log"
  return $r
}

stage_sanitize() {
  local sanitizer tool rc=0 r
  sanitizer=$(find_tool compute-sanitizer)
  if [[ -z $sanitizer ]]; then
    echo "NOT RUN: compute-sanitizer is not installed on this machine"
    return 0
  fi
  # Racecheck takes half the stage: on an H100 it needed 119 s for gpu_bench small, almost all of it in
  # the split path's cuBLAS and cuSOLVER kernels (shared memory, which it instruments access by access);
  # memcheck, initcheck and synccheck needed 3-10 s each.
  local limit
  for tool in memcheck racecheck initcheck synccheck; do
    [[ $tool == racecheck ]] && limit=$((stage_limit / 2)) || limit=$((stage_limit / 7))
    echo "-- compute-sanitizer --tool $tool gpu_bench small"
    r=0
    tool_run 'ERR_NVGPUCTRPERM\|device not supported\|not supported on this' "compute-sanitizer $tool" "$limit" \
      "$sanitizer" --tool "$tool" --error-exitcode 99 "$pack/bin/gpu_bench" small || r=$?
    ((r == 1)) && rc=1
  done
  # A model file's device engine (pack --model-files): memcheck on its BDF runs, fused and split.
  if [[ -x $pack/bin/model_file_device_test ]]; then
    echo "-- compute-sanitizer --tool memcheck model_file_device_test (BDF)"
    r=0
    export LOCKSTEP_MODEL_FILE_ENGINES=$pack/model-files
    local log
    log=$(mktemp)
    tool_run 'ERR_NVGPUCTRPERM\|device not supported\|not supported on this' \
      "compute-sanitizer memcheck, model files" $((stage_limit / 7)) "$sanitizer" --tool memcheck --error-exitcode 99 \
      "$pack/bin/model_file_device_test" --gtest_filter='*Bdf*' --gtest_color=no >"$log" 2>&1 || r=$?
    cat "$log"
    if ((r == 0)) && ! grep -q '^\[  PASSED  \] 1 test' "$log"; then
      echo "FAIL: the model files' memcheck ran no test (a skip, or a filter that matched nothing)"
      r=1
    fi
    rm -f "$log"
    ((r == 1)) && rc=1
  fi
  return $rc
}

stage_docs() {
  [[ -x $pack/bin/lockstep && -f $pack/docs/run_examples.py ]] || {
    echo "FAIL: this pack has no documentation examples (pack it with 'gpu-check.sh pack --docs')"
    return 1
  }
  command -v python3 >/dev/null || { echo "FAIL: the docs stage needs python3 on this machine"; return 1; }
  local pages=()
  mapfile -t pages < <(cd "$pack" && find docs -name '*.md' | sort)
  (cd "$pack" && limited "$stage_limit" python3 docs/run_examples.py --gpu --only-gpu --lockstep "$pack/bin/lockstep" \
    --pythonpath "" "${pages[@]}")
}

# An installed lockstep on the GPU machine: its command compiles a model header for --backend cuda
# with this machine's nvcc and host compiler against the installed headers and CUDA kernels, runs it
# on the device and on the CPU, and compares: statuses equal, positions within 10 (atol + rtol |q|).
stage_install() {
  local prefix=$pack/prefix nvcc
  [[ -x $prefix/bin/lockstep ]] || {
    echo "FAIL: this pack has no installed lockstep (pack it with 'gpu-check.sh pack --install')"
    return 1
  }
  nvcc=$(find_tool nvcc)
  if [[ -z $nvcc ]] || ! command -v c++ >/dev/null; then
    echo "NOT RUN: this machine lacks nvcc or a host compiler (c++), which a model file's device engine needs"
    return 0
  fi
  echo "host compiler: $(c++ --version | head -n 1); nvcc: $("$nvcc" --version | tail -n 1)"
  # The pack's C++ runtime only where the machine's is older than the one lockstep was built with: an
  # engine compiled here by a newer g++ needs the newer one.
  local libs=$pack/lib system_cxx newest
  system_cxx=$(ldconfig -p | awk '/libstdc\+\+\.so\.6 / { print $NF; exit }')
  newest=$(strings "$pack/lib/libstdc++.so.6" | grep '^GLIBCXX_3' | sort -V | tail -n 1)
  if [[ -n $system_cxx ]] && (($(strings "$system_cxx" | grep -c -x -F "$newest") > 0)); then
    libs=$(mktemp -d)
    find "$pack/lib" -maxdepth 1 -type f ! -name 'libstdc++*' ! -name 'libgcc_s*' ! -name 'libgomp*' -exec ln -s {} "$libs/" \;
    echo "the machine's C++ runtime ($system_cxx) instead of the pack's"
  fi
  local work rc=0 start
  work=$(mktemp -d)
  cp "$pack/study/heavy_top.hpp" "$work/"
  cat >"$work/study.toml" <<'TOML'
[model]
source = "heavy_top.hpp"

[solver]
method = "bdf"
formulation = "ggl"
rtol = 1e-8
atol = 1e-8

[time]
t1 = 0.2

[ensemble]
members = 4096
sampler = "sobol"
vary = { "initial.spin0" = { uniform = [50.0, 200.0] } }
TOML
  (
    cd "$work" || exit 1
    export LD_LIBRARY_PATH=${LD_LIBRARY_PATH/#$pack\/lib/$libs} CPATH=$pack/deps LOCKSTEP_CACHE_DIR=$work/cache
    export PATH=$(dirname "$nvcc"):$PATH
    "$prefix/bin/lockstep" --version | head -n 3
    for backend in cuda omp; do
      echo "-- lockstep run study.toml --backend $backend (an empty engine cache)"
      start=$SECONDS
      limited $((stage_limit / 2)) "$prefix/bin/lockstep" run study.toml --backend "$backend" -o "$backend" || exit 1
      echo "($((SECONDS - start)) s)"
    done
    python3 - <<'PY'
import csv
def members(folder):
    with open(f"{folder}/members.csv", newline="") as f:
        return list(csv.DictReader(f))
gpu, cpu = members("cuda"), members("omp")
worst = 0.0
for g, c in zip(gpu, cpu, strict=True):
    assert g["status"] == c["status"], (g["member"], g["status"], c["status"])
    for x in ("e0", "e1", "e2", "e3"):
        worst = max(worst, abs(float(g[x]) - float(c[x])) / (10 * 1e-8 * (1 + abs(float(c[x])))))
print(f"{len(gpu)} members: statuses equal; largest |q_cuda - q_omp| / (10 (atol + rtol |q|)) = {worst:.3g}")
assert worst <= 1.0
PY
  ) || rc=1
  rm -rf "$work"
  return $rc
}

stage_bench() {
  echo "-- lscpu"
  lscpu | grep -E '^(Model name|CPU\(s\)|Thread|Core|Socket|Flags)' | fold -w 200 | head -n 8 || true
  echo
  # Two thirds of the stage for the timed runs: the rest covers the probes and warm-ups they skip.
  limited "$stage_limit" "$pack/bin/gpu_bench" rate $((stage_limit * 11 / 16)) pendulum double_pendulum andrews
}

stage_lab() {
  local lab=$pack/bin/$lab_target lab_nofmad=$pack/bin/${lab_target}_nofmad rc=0 size r
  [[ -x $lab ]] || {
    echo "FAIL: this pack has no $lab_target (packed with an older gpu-check.sh?)"
    return 1
  }
  local peak=${LOCKSTEP_GPU_FP64_PEAK:-33.5}
  echo "-- the lab's host check"
  limited 60 "$lab" --host-check || rc=1
  # One process per N: a fault in one shape's kernel (which ends its CUDA context) loses that N's
  # remaining rows only.
  for size in 4 8 19 32; do
    echo "-- $lab_target --size $size --fp64-peak $peak (timed)"
    limited $((stage_limit / 8)) "$lab" --size "$size" --fp64-peak "$peak" || rc=1
  done
  # The lab built with --fmad=false: its rates beside the ones above, and whether its teams' bits
  # still depend on T.
  if [[ -x $lab_nofmad ]]; then
    for size in 4 8 19 32; do
      echo "-- ${lab_target}_nofmad --size $size --fp64-peak $peak (timed; built with --fmad=false)"
      limited $((stage_limit / 8)) "$lab_nofmad" --size "$size" --fp64-peak "$peak" || rc=1
    done
  fi
  local ncu
  ncu=$(find_tool ncu)
  if [[ -z $ncu ]]; then
    echo "NOT RUN: Nsight Compute (ncu) is not installed on this machine: no bytes per member-attempt"
    return $rc
  fi
  # DRAM and L2 bytes, duration and achieved occupancy of every kernel of one untimed launch of each
  # configuration, one attempt each, the clocks left as they are (--clock-control none).
  local metrics=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,gpu__time_duration.sum
  metrics+=,sm__warps_active.avg.pct_of_peak_sustained_active
  local members=65536 csv=${out:-.}/lab-ncu.csv
  echo "-- Nsight Compute over $lab_target --once --attempts 1 --members $members"
  r=0
  tool_run 'ERR_NVGPUCTRPERM\|Profiling is not supported\|not supported on this' "Nsight Compute" $((stage_limit / 3)) \
    "$ncu" --clock-control none --csv --print-units base --metrics "$metrics" \
    "$lab" --once --attempts 1 --members "$members" >"$csv" || r=$?
  grep -v '^"' "$csv" || true  # the lab's own table and ncu's messages; the CSV stays in the file
  ((r == 2)) && return $rc
  ((r == 1)) && rc=1
  python3 "$pack/tools/lab_bytes.py" "$csv" --members "$members" --attempts 1 || rc=1
  return $rc
}

stage_profile() {
  local ncu model r rc=0
  ncu=$(find_tool ncu)
  if [[ -z $ncu ]]; then
    echo "NOT RUN: Nsight Compute (ncu) is not installed on this machine"
    return 0
  fi
  # Achieved occupancy and its limits; local-memory (stack, spill) traffic of the step kernels and where
  # it is served (L1 and L2 hit rates, DRAM bytes); FP64 instructions; threads per executed warp
  # instruction (32 = no divergence). With the speed-of-light, memory and occupancy sections: 13 replay
  # passes, 2-4 s a kernel on an H100.
  local metrics=sm__warps_active.avg.pct_of_peak_sustained_active,sm__maximum_warps_per_active_cycle_pct
  metrics+=,launch__occupancy_limit_registers,launch__registers_per_thread,launch__stack_size
  metrics+=,l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum,l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum,gpu__time_duration.sum
  metrics+=,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct
  metrics+=,smsp__sass_thread_inst_executed_op_dfma_pred_on.sum,smsp__sass_thread_inst_executed_op_dadd_pred_on.sum
  metrics+=,smsp__sass_thread_inst_executed_op_dmul_pred_on.sum,smsp__thread_inst_executed_per_inst_executed.ratio
  local method which
  for model in pendulum double_pendulum andrews; do
    for method in bdf radau5 tsit5; do
      echo "-- ncu, $model, $method, 100000 members, the second step-kernel launch"
      which=()
      [[ $method != bdf ]] && which=("$method")
      r=0
      tool_run 'ERR_NVGPUCTRPERM\|Profiling is not supported\|not supported on this' "Nsight Compute" $((stage_limit / 10)) \
        "$ncu" --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --metrics "$metrics" \
        --kernel-name regex:for_each_active_member --launch-skip 1 --launch-count 1 \
        "$pack/bin/gpu_bench" one "$model" 100000 "${which[@]}" || r=$?
      ((r == 2)) && return 0  # refused once, refused for every model
      ((r == 1)) && rc=1
    done
  done
  return $rc
}

run_stages() {
  local out=${LOCKSTEP_GPU_OUT:-gpu-results} stages=()
  while (($#)); do
    case $1 in
      --out) out=$2; shift 2 ;;
      tests | sanitize | bench | profile | lab | docs | install) stages+=("$1"); shift ;;
      *) die "unknown stage $1 (tests, sanitize, bench, profile, lab, docs, install)" ;;
    esac
  done
  if ((${#stages[@]} == 0)); then
    if [[ -d $pack/docs ]]; then
      stages=(docs)
    elif [[ -d $pack/prefix ]]; then
      stages=(install)
    else
      stages=(tests sanitize bench profile)
      [[ -x $pack/bin/$lab_target ]] && stages=(lab "${stages[@]}")
    fi
  fi
  if [[ ! -f $pack/MANIFEST && -f $archive_dir/pack.tar.gz ]]; then
    say "unpacking $archive_dir/pack.tar.gz"
    tar -C "$(dirname "$pack")" -xzf "$archive_dir/pack.tar.gz"
  fi
  [[ -f $pack/MANIFEST ]] || die "no pack in $pack: run 'gpu-check.sh pack' on a machine with nvcc and carry $pack here"
  pack_env
  local missing
  missing=$( (ldd "$pack"/bin*/* "$pack"/model-files/*.so 2>/dev/null || true) | awk '/not found/ { print $1 }' | sort -u | tr '\n' ' ')
  [[ -z $missing ]] || die "libraries not found on this machine: $missing(LD_LIBRARY_PATH=$LD_LIBRARY_PATH)"
  "$pack/bin/gpu_bench" info >/dev/null 2>&1 || {
    "$pack/bin/gpu_bench" info || true
    echo "gpu-check: no CUDA device: nothing to run here (use dry-run on a machine without a GPU)" >&2
    exit 3
  }
  mkdir -p "$out"
  local s rc=0 start
  for s in "${stages[@]}"; do
    start=$SECONDS
    say "stage $s -> $out/$s.txt"
    {
      header "$s"
      local r=0
      "stage_$s" || r=$?
      echo
      echo "== stage $s: $( ((r == 0)) && echo passed || echo FAILED), $((SECONDS - start)) s"
      exit $r
    } 2>&1 | tee "$out/$s.txt" || rc=1
  done
  return $rc
}

# ---- dry-run (no GPU) ----

dry_run() {
  local start=$SECONDS
  lab_nofmad=0
  with_lab=0
  dry=1
  case ${1:-} in
    --with-lab) with_lab=1 ;;
    "") ;;
    *) die "dry-run: unknown option $1 (--with-lab)" ;;
  esac
  pack_all
  say "dry-run: checking the pack on this machine"
  pack_env
  local bin t missing
  missing=$(ldd "$pack"/bin/* | awk '/not found/ { print $1 }' | sort -u | tr '\n' ' ')
  [[ -z $missing ]] || die "packed binaries miss libraries: $missing"
  # Every packed library is one the binaries load from the pack (LD_LIBRARY_PATH first).
  for bin in "$pack"/bin/*; do
    ldd "$bin" | awk -v pack="$pack/lib/" '$2 == "=>" && index($3, pack) == 1 { print $1 }' >>"$pack/.loaded"
  done
  for lib in "$pack"/lib/*; do
    [[ -e $lib ]] || continue
    grep -qx "$(basename "$lib")" "$pack/.loaded" || die "$(basename "$lib") is packed but not loaded from the pack"
  done
  rm -f "$pack/.loaded"
  for t in cuda_device_check_test cuda_ensemble_test; do
    local log
    log=$(mktemp)
    "$pack/bin/$t" --gtest_color=no >"$log" 2>&1 || { cat "$log"; die "$t failed without a GPU"; }
    grep -q '^\[  PASSED  \]' "$log" || { cat "$log"; die "$t did not report its tests"; }
    say "$t loads from the pack: $(grep -c '^\[ RUN' "$log") tests run, $(grep -c '^\[  SKIPPED \] .* ms)$' "$log") of them skipped (no GPU)"
    rm -f "$log"
  done
  local r=0
  if ((with_lab)); then
    "$pack/bin/$lab_target" --host-check || die "the kernel-shape lab's host check failed"
    r=0
    "$pack/bin/member_trace" >/dev/null 2>&1 || r=$?
    ((r == 3)) || die "member_trace without a GPU should stop with status 3 (no device), got $r"
    r=0
    "$pack/bin/$lab_target" >/dev/null 2>&1 || r=$?
    ((r == 3)) || die "the kernel-shape lab without a GPU should stop with status 3 (no device), got $r"
    say "the kernel-shape lab's member text passes its host check, and the lab refuses without a GPU"
  else
    say "the kernel-shape lab and member_trace are not packed (dry-run --with-lab packs and checks them)"
  fi
  r=0
  bash "$0" run --out "$(mktemp -d)" >/dev/null 2>&1 || r=$?
  ((r == 3)) || die "'run' without a GPU should stop with status 3 (no device), got $r"
  say "'run' refuses without a GPU (status 3), as it should"
  if [[ -x $build_dir/tests/backend/backend_batched_factor_test ]]; then
    "$build_dir/tests/backend/backend_batched_factor_test" --gtest_brief=1 || die "the host tests of the factor phase failed"
  fi
  say "dry-run passed in $((SECONDS - start)) s; pack: $(du -sh "$pack" | cut -f1) in $pack"
}

case ${1:-} in
  pack) shift; pack_all "$@" ;;
  run) shift; run_stages "$@" ;;
  dry-run) shift; dry_run "$@" ;;
  *)
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
    exit 2
    ;;
esac
