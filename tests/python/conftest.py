"""Shared fixtures of the Python API tests (run by ctest as python_api, or by hand:
PYTHONPATH=build/python:python /usr/bin/python3 -m pytest -q tests/python)."""

import os
import pathlib
import re
import subprocess

import pytest

# Model files compile at -O1 here unless the environment says otherwise: about half the build's -O3
# compile time, which is most of this suite's, and the same bits (tests/model_files' header_bitwise
# proves them against the built-in model; docs/MODEL-FILES.md, "Optimization level").
os.environ.setdefault("LOCKSTEP_MODEL_OPTIMIZATION", "1")

# And without SIMD lanes, unless the environment says otherwise (LOCKSTEP_MODEL_LANES, docs/MODEL-FILES.md):
# a model file's lanes give each member the bits it gets alone, which tests/model_files' `lanes` case
# proves through the command line, on the engine entry points this module calls too; here they would
# be about a third of each model's compile, most of this suite's time. The tests that are about the
# lanes of a model file ask for the environment's own setting back (model_file_lanes).
LANES_FROM_ENVIRONMENT = os.environ.get("LOCKSTEP_MODEL_LANES")
os.environ.setdefault("LOCKSTEP_MODEL_LANES", "0")

SOURCE_DIR = pathlib.Path(os.environ.get("LOCKSTEP_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))


@pytest.fixture(scope="session")
def source_dir():
    return SOURCE_DIR


@pytest.fixture(scope="session")
def lockstep_exe():
    """The lockstep command the package runs (LOCKSTEP_EXECUTABLE, else the one of the module's build)."""
    from lockstep import _results

    exe = _results._executable()
    if not os.path.isfile(exe):
        pytest.skip(f"the lockstep command {exe} is not built")
    return exe


@pytest.fixture
def model_file_lanes(monkeypatch):
    """Model files compiled with SIMD lanes, where this machine and toolchain have them (the environment's
    own LOCKSTEP_MODEL_LANES), for one test."""
    if LANES_FROM_ENVIRONMENT is None:
        monkeypatch.delenv("LOCKSTEP_MODEL_LANES", raising=False)
    else:
        monkeypatch.setenv("LOCKSTEP_MODEL_LANES", LANES_FROM_ENVIRONMENT)


@pytest.fixture(scope="session")
def model_files_get_lanes(lockstep_exe):
    """A call that says whether model files compiled now get SIMD lanes: what `lockstep --version` says in
    this process's environment at the time (model_file_lanes changes it)."""
    def get_lanes():
        version = subprocess.run([lockstep_exe, "--version"], capture_output=True, text=True, check=True).stdout
        return not re.search(r"^SIMD lanes, model files: off", version, re.M)
    return get_lanes


@pytest.fixture(scope="session")
def model_cache(tmp_path_factory):
    """An empty cache of compiled models for this session: model files compile once, into it."""
    cache = tmp_path_factory.mktemp("model-cache")
    old = os.environ.get("LOCKSTEP_CACHE_DIR")
    os.environ["LOCKSTEP_CACHE_DIR"] = str(cache)
    yield cache
    if old is None:
        del os.environ["LOCKSTEP_CACHE_DIR"]
    else:
        os.environ["LOCKSTEP_CACHE_DIR"] = old
