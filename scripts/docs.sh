#!/usr/bin/env bash
# scripts/docs.sh — builds the documentation site (HTML) into build-docs/html, from the repository root:
#
#     bash scripts/docs.sh            # then open build-docs/html/index.html
#     bash scripts/docs.sh --check    # also runs every code example of the site and the README (CI)
#
# It installs what it needs (scripts/install-deps.sh: Sphinx, MyST, Breathe, Doxygen, the theme), builds
# the `lockstep` command and the Python module into build/ where they are missing (the references are
# printed by the program, the Python reference imports the module), then:
#   1. generates the references from the code's own tables into docs/reference/_generated/ (ignored by
#      git): `lockstep reference study-file|cli|results-file` and
#      host/model_files/equations_reference.py;
#   2. runs Doxygen on the public headers (docs/Doxyfile) into build-docs/doxygen;
#   3. runs Sphinx with every warning an error (-W --keep-going: all of them are listed, then it fails);
#   4. with --check, runs docs/run_examples.py on every page (docs/**/*.md) and README.md, a page per
#      CPU at a time, with the model files the examples compile at -O1 and without SIMD lanes
#      (LOCKSTEP_MODEL_OPTIMIZATION and LOCKSTEP_MODEL_LANES, unless the environment sets them: the same
#      results in about half and two thirds of the compile time, which is most of the examples' time;
#      what they check is that they run, not how fast, and tests/model_files proves the lanes' bits).
# A build outside build/ is named by LOCKSTEP_BUILD_DIR. Nothing tracked is written.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
check=0
for arg in "$@"; do
  case $arg in
    --check) check=1 ;;
    -h | --help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "docs.sh: unknown argument '$arg' (--check, --help)" >&2; exit 2 ;;
  esac
done

build=${LOCKSTEP_BUILD_DIR:-build}
out=build-docs
bash scripts/install-deps.sh

lockstep_bin=$build/host/cli/lockstep
if [[ ! -x $lockstep_bin ]] || ! compgen -G "$build/python/lockstep/_lockstep*.so" >/dev/null; then
  echo "docs.sh: building the lockstep command and the Python module in $build"
  if [[ ! -f $build/build.ninja ]]; then
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOCKSTEP_CUDA=OFF -DLOCKSTEP_BUILD_BENCH=OFF
  fi
  cmake --build "$build" -j"$(nproc)" --target lockstep_cli lockstep_python
fi

start=$SECONDS
generated=docs/reference/_generated
mkdir -p "$generated" "$out"
"$lockstep_bin" reference study-file -o "$generated/study-file-keys.md"
"$lockstep_bin" reference cli -o "$generated/cli.md"
"$lockstep_bin" reference results-file -o "$generated/results-file.md"
/usr/bin/python3 host/model_files/equations_reference.py -o "$generated/equations-file-keys.md"

rm -rf "$out/doxygen"
LOCKSTEP_DOXYGEN_OUT=$out/doxygen doxygen docs/Doxyfile

LOCKSTEP_DOXYGEN_XML=$PWD/$out/doxygen/xml LOCKSTEP_PYTHONPATH=$PWD/$build/python \
  /usr/bin/python3 -m sphinx -b html -E -W --keep-going -q -j "$(nproc)" docs "$out/html"
echo "docs.sh: the site is in $out/html/index.html ($((SECONDS - start)) s)"

if ((check)); then
  mapfile -t pages < <(find docs -name '*.md' -not -path "docs/reference/_generated/*" | sort)
  LOCKSTEP_MODEL_OPTIMIZATION=${LOCKSTEP_MODEL_OPTIMIZATION:-1} LOCKSTEP_MODEL_LANES=${LOCKSTEP_MODEL_LANES:-0} \
    /usr/bin/python3 docs/run_examples.py --lockstep "$lockstep_bin" \
    --pythonpath "$PWD/$build/python:$PWD/python" README.md "${pages[@]}"
fi
