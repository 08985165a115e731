"""The installed package, as a user gets it from `cmake --install` (and, through the same install rules,
from a wheel): the runtime and python components installed into a fresh prefix, then used by Debian's
interpreter with nothing of the source or build tree on its path and no LOCKSTEP_* variable set.

What must hold there: the package and its module import from the prefix; the module knows the prefix
and runs the installed `lockstep` command; an equations file compiles against the installed headers with
the installed generator; run_study runs a study through the installed command; and xarray finds the
results backend through the installed package metadata (engine="lockstep")."""

import json
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import pytest

import lockstep
from lockstep import _lockstep


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    build = pathlib.Path(_lockstep.__file__).resolve().parents[2]
    if not (build / "CMakeCache.txt").is_file():
        pytest.skip("the module under test is not a build tree's")
    cmake = shutil.which("cmake")
    if cmake is None:
        pytest.skip("cmake is not on PATH")
    prefix = tmp_path_factory.mktemp("prefix")
    for component in ("runtime", "python"):
        r = subprocess.run([cmake, "--install", str(build), "--prefix", str(prefix), "--component", component],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
    return prefix


def build_compiler(prefix):
    build = pathlib.Path(_lockstep.__file__).resolve().parents[2]
    for line in (build / "CMakeCache.txt").read_text().splitlines():
        if line.startswith("CMAKE_CXX_COMPILER:"):
            return line.split("=", 1)[1]
    pytest.fail("CMAKE_CXX_COMPILER is not in the build's CMakeCache.txt")


def site_dir(prefix):
    found = [p.parent.parent for p in prefix.rglob("lockstep/__init__.py")]
    assert len(found) == 1, f"the package is installed once under the prefix, found {found}"
    return found[0]


def test_install_layout(prefix):
    site = site_dir(prefix)
    relative = site.relative_to(prefix).parts
    assert relative[0] == "lib" and relative[-1] in ("dist-packages", "site-packages"), relative
    for path in ("bin/lockstep", "include/lockstep/version.hpp", "include/lockstep/model/concept.hpp",
                 "share/lockstep/equations_to_header.py", "share/lockstep/equations/__init__.py",
                 "share/lockstep/mechanism/__init__.py", "include/lockstep/multibody/tree.hpp",
                 "share/lockstep/lockstep_plot.py"):
        assert (prefix / path).is_file(), path
    assert os.access(prefix / "bin/lockstep", os.X_OK)
    assert list(site.glob("lockstep/_lockstep*.so")), "the compiled module"
    assert (site / "lockstep/_xarray_backend.py").is_file()
    assert (site / f"lockstep-{_lockstep.__version__}.dist-info/entry_points.txt").is_file()
    # The built-in models' libraries of lanes, where the build made them (for avx2 and avx512; the build
    # tree's module loads them where this CPU runs one of those sets).
    if _lockstep.builtin_lanes()["libraries"]:
        names = {p.name for p in (prefix / "lib/lockstep/builtin").glob("*.so")}
        assert names == {f"{m}_{s}.so" for m in lockstep.builtin_models() for s in ("avx2", "avx512")}, names
    # The development component (libraries, the CMake package) was not asked for.
    assert not (prefix / "lib/cmake").exists()


def test_the_build_tree_is_not_an_installation():
    assert _lockstep.install_prefix is None
    assert pathlib.Path(_lockstep.lockstep_executable).is_file()


def test_installed_package_runs_without_the_source_or_build_tree(prefix, source_dir, tmp_path):
    site = site_dir(prefix)
    study = tmp_path / "grid.toml"
    study.write_text(textwrap.dedent("""\
        [model]
        name = "pendulum"
        [time]
        t1 = 0.5
        save = { every = 0.25 }
        [ensemble]
        vary = { "params.L" = { grid = [0.5, 1.0, 1.5] } }
        [output]
        trajectories = true
        """))
    fourbar = str(source_dir / "examples/models/fourbar.toml")
    out = tmp_path / "out"
    results = out / "results.h5"
    code = textwrap.dedent(f"""\
        import json, os, sys
        import numpy as np, xarray as xr
        import lockstep
        from lockstep import _lockstep
        report = {{"package": lockstep.__file__, "module": _lockstep.__file__, "prefix": _lockstep.install_prefix,
                   "command": _lockstep.lockstep_executable, "path": sys.path}}
        fourbar = lockstep.model({fourbar!r})
        ds = lockstep.solve(fourbar, t=(0.0, 0.2), save=[0.0, 0.1, 0.2], backend="serial")
        report["fourbar_ok"] = bool((ds.status_name == "success").all()) and bool(np.isfinite(ds.q).all())
        study = lockstep.run_study({str(study)!r}, out_dir={str(out)!r}, progress=False)
        report["study_members"] = int(study.sizes['member'])
        opened = xr.open_dataset({str(results)!r}, engine="lockstep")
        report["backend_equal"] = bool((opened.q.values == study.q.values).all())
        report["lanes"] = _lockstep.builtin_lanes()
        print(json.dumps(report))
        """)
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOCKSTEP_") and k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(site)  # what Debian's python3 has on its path for a /usr/local install
    env["LOCKSTEP_CACHE_DIR"] = str(tmp_path / "cache")  # empty: the model compiles from the installed files
    # The compiler of the build behind a wrapper that notes its arguments: the engine must be compiled
    # against the installed headers.
    log = tmp_path / "compiler.log"
    wrapper = tmp_path / "c++"
    wrapper.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" >> "{log}"\nexec "{build_compiler(prefix)}" "$@"\n')
    wrapper.chmod(0o755)
    env["LOCKSTEP_CXX"] = str(wrapper)
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    report = json.loads(r.stdout.strip().splitlines()[-1])
    resolved = str(prefix.resolve())
    assert report["package"].startswith(str(site)), report
    assert report["module"].startswith(str(site)), report
    assert report["prefix"] == resolved, report
    assert report["command"] == str(pathlib.Path(resolved) / "bin/lockstep"), report
    assert not any(str(source_dir) in p for p in report["path"] if p), report["path"]
    assert report["fourbar_ok"] and report["study_members"] == 3 and report["backend_equal"], report
    # The installed module runs the built-in models in the installed libraries of lanes, not the build tree's.
    if _lockstep.builtin_lanes()["libraries"]:
        assert report["lanes"]["libraries"] == str(pathlib.Path(resolved) / "lib/lockstep/builtin"), report["lanes"]
        assert report["lanes"]["lanes"] == _lockstep.builtin_lanes()["lanes"], report["lanes"]
    arguments = log.read_text().splitlines()
    assert f"-I{prefix / 'include'}" in arguments or f"-I{pathlib.Path(resolved) / 'include'}" in arguments, arguments
    assert not any(str(source_dir) in a for a in arguments if a.startswith("-I")), arguments


def test_installed_lockstep_compiles_a_model_files_device_engine_from_its_own_kernels(prefix, source_dir, tmp_path):
    """--backend cuda from an installation: the device unit includes the installed kernels' headers
    (share/lockstep/kernels/cuda), not the source tree's. nvcc is a wrapper that notes its arguments and
    stops there (a CPU test never compiles device code), so the run fails after the compile began."""
    build = pathlib.Path(_lockstep.__file__).resolve().parents[2]
    if not (build / "kernels" / "cuda").is_dir():
        pytest.skip("this build has no CUDA backend, so its installation has no CUDA kernels")
    kernels = prefix / "share/lockstep/kernels/cuda"
    for name in ("ensemble_cuda_impl.cuh", "ensemble_cuda.hpp", "batched_factor.hpp", "device_solve.hpp"):
        assert (kernels / name).is_file(), name
    shutil.copy(source_dir / "examples/models/heavy_top.hpp", tmp_path / "heavy_top.hpp")
    (tmp_path / "top.toml").write_text(textwrap.dedent("""\
        [model]
        source = "heavy_top.hpp"
        [time]
        t1 = 0.1
        """))
    log = tmp_path / "nvcc.log"
    nvcc = tmp_path / "nvcc"
    nvcc.write_text(f'#!/bin/sh\nif [ "$1" = --version ]; then echo "nvcc stand-in"; exit 0; fi\n'
                    f'printf "%s\\n" "$@" >> "{log}"\necho "nvcc stand-in: stops here" >&2\nexit 1\n')
    nvcc.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOCKSTEP_") and k != "PYTHONPATH"}
    env["LOCKSTEP_CACHE_DIR"] = str(tmp_path / "cache")
    env["LOCKSTEP_NVCC"] = str(nvcc)
    r = subprocess.run([str(prefix / "bin/lockstep"), "run", "top.toml", "--backend", "cuda", "-o", "out"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode != 0 and "nvcc stand-in: stops here" in r.stderr, r.stdout + r.stderr
    assert "are not there" not in r.stderr, r.stderr
    arguments = log.read_text().splitlines()
    installed = {f"-I{prefix / 'share/lockstep'}", f"-I{prefix.resolve() / 'share/lockstep'}"}
    assert installed & set(arguments), arguments
    assert not any(str(source_dir) in a for a in arguments if a.startswith("-I")), arguments
