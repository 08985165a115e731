"""Pinocchio in a virtual environment of its own, for the tests that compare lockstep's trees with it.

Pinocchio (Carpentier et al., The Pinocchio C++ library, 2019) is not packaged by Debian 12: its Python
wheel `pin` is installed from PyPI, pinned, by tests/support/pypi_venv.py. Unlike the SALib environment
(tests/study/salib_venv.py) it does not see the system's packages: the wheel brings its own dependencies
(Boost, Eigen's bindings, Coal) and the numpy 2 they are built against, which would shadow Debian's
numpy 1.24 under Debian's scipy.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "support"))
from pypi_venv import PypiVenv  # noqa: E402  (after the path is set)

PINOCCHIO = "pin==4.1.0"
_venv = PypiVenv(PINOCCHIO, system_packages=False, dependencies=True, wrapper=__file__)
python_with_pinocchio = _venv.python
run_inside = _venv.run_inside
inside = _venv.inside
