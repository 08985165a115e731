"""Ctrl-C during lockstep.solve: a SIGINT ends a long solve with KeyboardInterrupt within 2 s, and the
interpreter goes on (its SIGINT handler is Python's again, a later solve works) and exits cleanly.

The solve runs in a child interpreter, which is sent SIGINT as a terminal's Ctrl-C would. chain16
with 2,000 members is chosen because one launch of it (every active member taking up to 32 attempts)
lasts seconds on two cores: answered only at launch boundaries, the interrupt would miss the 2 s;
the backend's threads must stop between blocks.
"""

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

CHILD = textwrap.dedent("""
    import signal, sys, time
    import lockstep
    print("solving", flush=True)
    started = time.time()
    try:
        lockstep.solve("chain16", members=2000, t=(0.0, 100.0), backend=sys.argv[1], threads=2, progress=False)
        print("finished: not interrupted", flush=True)
        sys.exit(3)
    except KeyboardInterrupt:
        print(f"KeyboardInterrupt after {time.time() - started:.2f} s", flush=True)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler, signal.getsignal(signal.SIGINT)
    after = lockstep.solve("pendulum", members=2, t=0.1)
    assert list(after.status_name.values) == ["success", "success"]
    print("solved again", flush=True)
""")


@pytest.mark.parametrize("backend", ["omp"])
def test_sigint_stops_a_long_solve(backend):
    child = subprocess.Popen([sys.executable, "-c", CHILD, backend], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=dict(os.environ))
    try:
        assert child.stdout.readline().strip() == "solving"
        time.sleep(0.5)
        assert child.poll() is None, child.communicate()
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=30)
        answered = time.monotonic() - sent
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 0, f"exit status {child.returncode}\n{out}\n{err}"
    assert "KeyboardInterrupt after" in out and "solved again" in out, out + err
    # The child's exit includes a pendulum solve and the interpreter's shutdown (tenths of a second).
    assert answered < 2.0, f"the child took {answered:.2f} s to answer SIGINT and exit"


def test_progress_callback_error_stops_the_solve():
    """An exception from the progress callback ends the solve with that exception (the other way a
    solve is abandoned, at a launch boundary)."""
    import lockstep
    from lockstep import _lockstep

    model = lockstep.model("double_pendulum")._engine
    P = np.tile([1.0, 1.0, 1.0, 1.0, 9.81], (50, 1))
    q0, v0 = model.initial_state(P, np.tile([2.0, 2.5, 0.0, 0.0], (50, 1)))

    class Stop(Exception):
        pass

    calls = []

    def progress(finished, total, steps, seconds):
        calls.append(finished)
        raise Stop("from the callback")

    with pytest.raises(Stop, match="from the callback"):
        _lockstep.solve(model, P, q0, v0, 0.0, 10.0, [10.0], {}, "serial", 0, 0, 32, progress, 0.0)
    assert len(calls) == 1


def test_solve_releases_the_gil():
    """Another Python thread runs while a solve computes (the solve holds the GIL only at launch
    boundaries, briefly)."""
    import threading

    import lockstep

    ticks = []
    done = threading.Event()

    def solve():
        lockstep.solve("double_pendulum", vary={"initial.theta1": np.linspace(1.5, 2.5, 400)}, t=5.0, threads=1)
        done.set()

    worker = threading.Thread(target=solve)
    worker.start()
    while not done.is_set():
        ticks.append(time.monotonic())
        time.sleep(0.001)
    worker.join()
    assert len(ticks) > 50, f"the main thread ran {len(ticks)} times during the solve"
    assert max(b - a for a, b in zip(ticks, ticks[1:])) < 0.5
