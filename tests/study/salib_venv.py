"""SALib in a virtual environment of its own, for the tests that hand lockstep's outputs to it.

SALib is not packaged by Debian: it is installed from PyPI, pinned, with the system's packages visible
(numpy, scipy, pandas and multiprocess from Debian), by tests/support/pypi_venv.py.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "support"))
from pypi_venv import PypiVenv  # noqa: E402  (after the path is set)

SALIB = "SALib==1.4.8"  # the last release that runs on Debian 12's numpy (1.5 needs numpy 2)
_venv = PypiVenv(SALIB, system_packages=True, dependencies=False, wrapper=__file__)
python_with_salib = _venv.python
run_inside = _venv.run_inside
inside = _venv.inside
