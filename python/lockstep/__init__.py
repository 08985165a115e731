"""lockstep from Python: ensembles of constrained mechanical systems (index-3 DAEs).

A model, built in or read from a model file, is solved for a whole ensemble of members at once:
``solve`` returns the members' trajectories as an xarray.Dataset, ``run_study`` runs a study file as
``lockstep run`` does, ``open_results`` reads a results.h5, ``lyapunov`` estimates Lyapunov
exponents and ``sensitivities`` one member's forward sensitivities. The compiled core is the
extension module ``lockstep._lockstep`` (python/src/module.cpp); docs/PYTHON.md is the guide.

Examples
--------
A built-in model by name (or a model file: ``lockstep.model("fourbar.toml")``), three members that
differ in one parameter:

>>> import lockstep
>>> pend = lockstep.model("double_pendulum")
>>> ds = lockstep.solve(pend, vary={"params.L2": [0.8, 0.9, 1.0]}, t=(0.0, 10.0))
>>> y2 = ds.q.sel(coordinate="y2")  # ds.q: [member, time, coordinate]

A study file run as by ``lockstep run``, and the results.h5 of a run:

>>> ds = lockstep.run_study("examples/double_pendulum_monte_carlo.toml")
>>> ds = lockstep.open_results("lockstep-out/study/results.h5")

Lyapunov exponents, and the forward sensitivity d y(t1) / d g:

>>> ly = lockstep.lyapunov(pend, vary={"initial.theta1": [1.9, 2.0]}, t=(0.0, 100.0))
>>> se = lockstep.sensitivities(pend, t=(0.0, 1.0), parameters=["g"])
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
