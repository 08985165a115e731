"""lockstep from Python: ensembles of constrained mechanical systems (index-3 DAEs).

    import lockstep
    pend = lockstep.model("double_pendulum")            # or a model file: lockstep.model("fourbar.toml")
    ds = lockstep.solve(pend, vary={"params.L2": [0.8, 0.9, 1.0]}, t=(0.0, 10.0))
    ds.q.sel(coordinate=3)                               # xarray.Dataset [member, time, coordinate]

    ds = lockstep.run_study("examples/double_pendulum_monte_carlo.toml")   # as `lockstep run`
    ds = lockstep.open_results("lockstep-out/study/results.h5")
    ly = lockstep.lyapunov(pend, vary={"initial.theta1": [1.9, 2.0]}, t=(0.0, 100.0))   # exponents
    se = lockstep.sensitivities(pend, t=(0.0, 1.0), parameters=["g"])                  # d y(t1) / d g

The compiled core is the extension module lockstep._lockstep (python/src/module.cpp); docs/PYTHON.md
is the guide.
"""

# The package is split over two directories: these sources, and the build's python/lockstep/ holding
# the compiled _lockstep. With both parents on sys.path (the source python/ and <build>/python),
# extend_path adds the second to __path__, so the extension is found without copying the sources
# into the build tree.
from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)

from . import _lockstep  # noqa: E402
from ._model import Model, Value, builtin_models, model  # noqa: E402
from ._results import open_results, run_study  # noqa: E402
from ._solve import InitialCorrectionWarning, solve  # noqa: E402
from ._tangents import lyapunov, sensitivities  # noqa: E402

__version__ = _lockstep.__version__
status_names = tuple(_lockstep.status_names)

__all__ = ["InitialCorrectionWarning", "Model", "Value", "builtin_models", "model", "lyapunov", "open_results", "run_study", "sensitivities", "solve",
           "status_names"]
