"""SALib in a virtual environment of its own, for the tests that hand lockstep's outputs to it.

SALib is not packaged by Debian: it is installed from PyPI, pinned, into VENV (made once, with the
system's packages: numpy, scipy, pandas and multiprocess from Debian), under a lock so that tests run
in parallel make it once. `python_with_salib(VENV)` returns the environment's interpreter, or exits 77
(ctest: skipped) when PyPI cannot be reached to install SALib.
"""
import fcntl
import os
import subprocess
import sys

SALIB = "SALib==1.4.8"  # the last release that runs on Debian 12's numpy (1.5 needs numpy 2)


def python_with_salib(venv):
    python = os.path.join(venv, "bin", "python")
    marker = os.path.join(venv, "installed-" + SALIB)
    os.makedirs(os.path.dirname(os.path.abspath(venv)), exist_ok=True)
    with open(os.path.abspath(venv) + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(marker):
            return python
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--clear", venv], check=True)
        r = subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps", SALIB],
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(f"skipped: cannot install {SALIB} from PyPI:\n{r.stdout}{r.stderr}")
            sys.exit(77)
        open(marker, "w").close()
    return python


def run_inside(venv, script, args):
    """Runs `script args` with the environment's interpreter (once: the child sees SALIB_VENV_INSIDE)."""
    python = python_with_salib(venv)
    env = dict(os.environ, SALIB_VENV_INSIDE="1", PYTHONPATH=os.path.dirname(os.path.abspath(__file__)))
    return subprocess.run([python, os.path.abspath(script)] + list(args), env=env).returncode


def inside():
    return os.environ.get("SALIB_VENV_INSIDE") == "1"
