#!/usr/bin/env bash
# scripts/install-deps.sh — installs the Debian 12 (bookworm) packages lockstep builds, tests, plots
# and benchmarks with. Idempotent: when every package is already installed it says so and returns at
# once, without touching apt. Run as root (CI and our machines are root); a non-root user with
# password-less sudo works too; anyone else gets the command to run.
#
# The CUDA toolkit (nvcc 13 in /usr/local/cuda) is not a Debian package and is not installed here:
# the build uses it when present (LOCKSTEP_CUDA=AUTO).
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build
  # libraries: linear algebra reference, tests, benchmarks
  libeigen3-dev libgtest-dev libgmock-dev libbenchmark-dev
  # SIMD packs of members: Highway (its basic operations under lockstep/simd, docs/SIMD.md)
  libhwy-dev
  # reference LAPACK: the CUDA factor phase's host code is tested against dgetrf, zgetrf, dpotrf
  liblapack-dev
  # front end: results files, study files, command line, random numbers (Philox)
  libhdf5-dev libtomlplusplus-dev libcli11-dev librandom123-dev libboost-dev
  # MPI sharding
  libopenmpi-dev openmpi-bin
  # checkpoints: CRC-32 (zlib, also a dependency of HDF5)
  zlib1g-dev
  # model files compiled at run time: SHA-256 cache keys (OpenSSL's libcrypto)
  libssl-dev
  # fuzzing (scripts/fuzz.sh): clang with libFuzzer and the sanitizer runtimes (libclang-rt-dev)
  clang libclang-rt-dev
  # peer comparisons in bench/: IDA; gfortran for the user's copy of HEM5 (bench/explicit_andrews.py --hem5)
  libsundials-dev gfortran
  # Debian's Python for plots and result checks, used as /usr/bin/python3
  python3-numpy python3-h5py python3-matplotlib python3-scipy
  # equations files -> C++ model headers (host/model_files/equations_to_header.py)
  python3-sympy
  # SALib's analysis beside lockstep's sensitivity indices (tests/study/sensitivity_vs_salib.py): SALib
  # from PyPI in a virtual environment that sees these
  python3-venv python3-pip python3-pandas python3-multiprocess
  # the Python API (python/, docs/PYTHON.md): the pybind11 module built for Debian's python3, its
  # results as xarray Datasets, and its tests (pytest)
  pybind11-dev python3-dev python3-xarray python3-pytest
  # the documentation site (scripts/docs.sh): Sphinx with Markdown pages (MyST), the C++ reference from
  # Doxygen's XML (Breathe), and its theme
  python3-sphinx python3-myst-parser python3-breathe doxygen furo
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [[ $status == installed ]] || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi

as_root=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    as_root=(sudo -n)
  else
    echo "install-deps: error: not root, and these packages are missing: ${missing[*]}" >&2
    echo "install-deps: run as root:  apt-get update && apt-get install -y --no-install-recommends ${missing[*]}" >&2
    exit 1
  fi
fi

echo "install-deps: installing ${#missing[@]} missing package(s): ${missing[*]}"

export DEBIAN_FRONTEND=noninteractive
apt_get=("${as_root[@]}" apt-get -q -o Dpkg::Use-Pty=0)

# Refresh the package lists only when they are needed: when some missing package has no install
# candidate (no lists yet, or lists too old to know it), or when an install from the current lists
# fails (a mirror that moved on answers 404). A failing update is tolerated; the install that follows
# says what is really wrong.
update() {
  echo "install-deps: apt-get update"
  "${apt_get[@]}" update || echo "install-deps: warning: apt-get update failed; trying with the lists we have" >&2
}
needs_update=0
for p in "${missing[@]}"; do
  candidate=$(apt-cache policy "$p" 2>/dev/null | awk '/Candidate:/ { print $2 }')
  if [[ -z $candidate || $candidate == "(none)" ]]; then
    needs_update=1
    break
  fi
done
((needs_update)) && update

if ! "${apt_get[@]}" install -y --no-install-recommends "${missing[@]}"; then
  ((needs_update)) && exit 1
  update
  "${apt_get[@]}" install -y --no-install-recommends "${missing[@]}"
fi
echo "install-deps: done"
