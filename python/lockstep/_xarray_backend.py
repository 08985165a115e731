"""lockstep as an xarray backend: ``xr.open_dataset("results.h5", engine="lockstep")``.

results.h5 is HDF5 in lockstep's own layout (docs/RESULTS-FORMAT.md), not netCDF: the netCDF backends
would see groups and arrays without the dimensions and coordinates they describe. This backend is
open_results (h5py, trajectories read lazily) behind xarray's plugin interface; the package metadata
registers it under the entry point group ``xarray.backends`` (pyproject.toml for a wheel,
python/CMakeLists.txt for a build tree and `cmake --install`).
"""

import os

import h5py
from xarray.backends import BackendEntrypoint

from ._results import open_results


def _is_results_file(path):
    try:
        with h5py.File(path, "r") as f:
            value = f.attrs.get("format", b"")
            return (value.decode() if isinstance(value, bytes) else str(value)) == "lockstep-results"
    except (OSError, ValueError):
        return False


class LockstepBackendEntrypoint(BackendEntrypoint):
    """Opens a lockstep results.h5 as lockstep.open_results does."""

    description = "lockstep results files (results.h5: member trajectories, statistics, Lyapunov exponents)"
    open_dataset_parameters = ("filename_or_obj", "drop_variables")

    def open_dataset(self, filename_or_obj, *, drop_variables=None):
        if not isinstance(filename_or_obj, (str, os.PathLike)):
            raise TypeError("the lockstep backend opens a results file by its path, not "
                            f"{type(filename_or_obj).__name__}")
        ds = open_results(filename_or_obj)
        if drop_variables:
            ds = ds.drop_vars(drop_variables, errors="ignore")
        return ds

    def guess_can_open(self, filename_or_obj):
        if not isinstance(filename_or_obj, (str, os.PathLike)):
            return False
        path = os.fspath(filename_or_obj)
        return path.endswith((".h5", ".hdf5")) and os.path.isfile(path) and _is_results_file(path)
