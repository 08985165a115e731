"""A package from PyPI in a virtual environment of its own, for the tests that compare lockstep with it.

Debian does not package some references the tests use (SALib, Pinocchio): each is installed from PyPI,
pinned, into a virtual environment VENV made once, under a lock so that tests run in parallel make it
once. A test script calls `run_inside(...)`, which re-runs it with the environment's interpreter, or
exits 77 (ctest: skipped) when PyPI cannot be reached to install the package.
"""
import fcntl
import os
import subprocess
import sys


class PypiVenv:
    """`requirement` (e.g. "SALib==1.4.8"); `system_packages`: whether the environment sees Debian's
    python3-* packages; `dependencies`: whether pip installs the requirement's own dependencies."""

    def __init__(self, requirement, system_packages, dependencies, wrapper):
        self.requirement = requirement
        self.system_packages = system_packages
        self.dependencies = dependencies
        self.wrapper = wrapper  # the module that configures this environment: the child imports it too
        self.flag = "LOCKSTEP_VENV_INSIDE_" + requirement.split("=")[0].upper().replace("-", "_")

    def python(self, venv):
        python = os.path.join(venv, "bin", "python")
        marker = os.path.join(venv, "installed-" + self.requirement)
        os.makedirs(os.path.dirname(os.path.abspath(venv)), exist_ok=True)
        with open(os.path.abspath(venv) + ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if os.path.exists(marker):
                return python
            options = ["--system-site-packages"] if self.system_packages else []
            subprocess.run([sys.executable, "-m", "venv", *options, "--clear", venv], check=True)
            pip = [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
            r = subprocess.run(pip + ([] if self.dependencies else ["--no-deps"]) + [self.requirement],
                               capture_output=True, text=True)
            if r.returncode != 0:
                print(f"skipped: cannot install {self.requirement} from PyPI:\n{r.stdout}{r.stderr}")
                sys.exit(77)
            open(marker, "w").close()
        return python

    def run_inside(self, venv, script, args):
        """Runs `script args` with the environment's interpreter (once: the child sees the flag)."""
        python = self.python(venv)
        path = os.pathsep.join([os.path.dirname(os.path.abspath(self.wrapper)), os.path.dirname(os.path.abspath(__file__))])
        env = dict(os.environ, **{self.flag: "1"}, PYTHONPATH=path)
        return subprocess.run([python, os.path.abspath(script)] + list(args), env=env).returncode

    def inside(self):
        return os.environ.get(self.flag) == "1"
