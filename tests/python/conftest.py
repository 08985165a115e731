"""Shared fixtures of the Python API tests (run by ctest as python_api, or by hand:
PYTHONPATH=build/python:python /usr/bin/python3 -m pytest -q tests/python)."""

import os
import pathlib

import pytest

# Model files compile at -O1 here unless the environment says otherwise: about half the build's -O3
# compile time, which is most of this suite's, and the same bits (tests/model_files' header_bitwise
# proves them against the built-in model; docs/MODEL-FILES.md, "Optimization level").
os.environ.setdefault("LOCKSTEP_MODEL_OPTIMIZATION", "1")

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
