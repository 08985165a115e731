"""Events through the Python API (docs/how-to/events.md): the driven arm of examples/models/driven_arm.hpp,
undamped, against its energy balance; lockstep.solve against lockstep run and open_results, bit for bit;
and the events argument's checks."""

import math
import os
import subprocess

import numpy as np
import pytest
from scipy.integrate import quad

import lockstep

M, L, G = 1.0, 1.0, 9.81
# Undamped and from rest at the bottom, the arm's energy balance is (1/2) m L^2 omega^2 = tau theta -
# m g L (1 - cos theta): it reaches the horizontal (theta = pi/2) exactly when the torque's work there,
# tau pi/2, exceeds the lift m g L.
TAU_STAR = 2.0 * M * G * L / math.pi


def time_to_horizontal(tau):
    """t* = integral of d theta / omega over [0, pi/2], with theta = s^2 (the integrand's 1/sqrt(theta)
    at the start becomes smooth)."""
    def integrand(s):
        theta = s * s
        if s == 0.0:
            return 2.0 / math.sqrt(2.0 * tau / (M * L * L))
        omega = math.sqrt(2.0 * (tau * theta - M * G * L * (1.0 - math.cos(theta))) / (M * L * L))
        return 2.0 * s / omega
    value, _ = quad(integrand, 0.0, math.sqrt(math.pi / 2.0), epsabs=1e-13, epsrel=1e-13)
    return value


@pytest.fixture(scope="module")
def arm(source_dir, model_cache):
    return lockstep.model(str(source_dir / "examples" / "models" / "driven_arm.hpp"))


def test_the_undamped_arm_stops_at_the_horizontal_exactly_when_its_energy_allows(arm):
    taus = np.array([TAU_STAR - 0.05, TAU_STAR - 0.5, TAU_STAR + 0.3, TAU_STAR + 2.0, 12.0])
    ds = lockstep.solve(arm, vary={"params.tau": taus}, params={"c": 0.0}, t=(0.0, 6.0), rtol=1e-9, atol=1e-10)
    reached = taus > TAU_STAR
    assert list(ds.event.values) == ["horizontal", "turn"]
    assert list(ds.event_count.attrs["actions"]) == ["stop", "count"]
    names = ds.status_name.values
    assert (names[reached] == "stopped_by_event").all() and (names[~reached] == "success").all(), names
    first = ds.event_first_time.sel(event="horizontal").values
    assert np.isnan(first[~reached]).all()
    for i in np.flatnonzero(reached):
        expected = time_to_horizontal(taus[i])
        assert abs(first[i] - expected) < 1e-6, (taus[i], first[i], expected)
        assert ds.final_t.values[i] == first[i]
        assert ds.stop_event.values[i] == 0 and ds.event_records.values[i] == 1
        assert ds.event_index.values[i, 0] == 0 and ds.event_t.values[i, 0] == first[i]
        x, y = ds.event_q.values[i, 0]
        assert abs(y) < 1e-7 and abs(x - L) < 1e-12  # at the horizontal, on the rod's circle
        # Energy at the horizontal: (1/2) m |v|^2 = tau pi/2 - m g L.
        speed2 = float(np.sum(ds.event_v.values[i, 0] ** 2))
        assert abs(0.5 * M * speed2 - (taus[i] * math.pi / 2 - M * G * L)) < 1e-6
    # On the way up the swing never turns back; below the threshold it turns at every crest.
    turns = ds.event_count.sel(event="turn").values
    assert (turns[reached] == 0).all() and (turns[~reached] > 0).all(), turns
    assert np.isnan(ds.event_t.values[~reached]).all() and (ds.event_index.values[~reached] == -1).all()


STUDY = """
[model]
source = "{source}"
[solver]
rtol = 1e-8
[time]
t1 = 4.0
save = {{ every = 1.0 }}
[ensemble]
members = 8
sampler = "sobol"
vary = {{ "params.tau" = {{ uniform = [5.0, 12.0] }} }}
[events]
records = 3
interior_checks = 2
"""

EVENT_VARIABLES = ("event_count", "event_first_time", "event_records", "stop_event", "event_t", "event_index",
                   "event_q", "event_v", "event_lam")


def test_events_in_lanes_and_through_every_route_are_the_members_alone_bit_for_bit(arm, source_dir, tmp_path,
                                                                                     lockstep_exe):
    # The command line with its members one at a time (LOCKSTEP_LANES=0, the serial backend), read back
    # by open_results; lockstep.solve with them in the SIMD lanes of the CPU at hand (where it has any),
    # on two threads in chunks of 3.
    study = tmp_path / "arm.toml"
    study.write_text(STUDY.format(source=source_dir / "examples" / "models" / "driven_arm.hpp"))
    run = subprocess.run([lockstep_exe, "run", str(study), "-o", str(tmp_path / "out"), "--quiet", "--backend",
                          "serial"], capture_output=True, text=True, env={**os.environ, "LOCKSTEP_LANES": "0"})
    assert run.returncode == 0, run.stderr
    ref = lockstep.open_results(tmp_path / "out" / "results.h5")
    assert ref.attrs["simd_lanes"] == 0
    assert ref.event_t.shape == (8, 3)
    assert (ref.event_records.values > 0).any() and (ref.status_name.values == "stopped_by_event").any()
    ds = lockstep.solve(arm, vary={"params.tau": ref["params.tau"].values}, t=(0.0, 4.0), save=ref.time.values,
                        rtol=1e-8, events={"records": 3, "interior_checks": 2}, threads=2, chunk_size=3)
    if lockstep._lockstep.builtin_lanes()["lanes"]:  # the CPU has SIMD lanes: the solve ran in them
        assert ds.attrs["lane_attempts"] > 0
    assert (ds.status.values == ref.status.values).all()
    for name in EVENT_VARIABLES + ("final_t",):
        a, b = ds[name].values, ref[name].values
        assert a.shape == b.shape and a.tobytes() == b.tobytes(), name
    assert list(ds.event.values) == list(ref.event.values)
    # The file's distribution of the first times (/events/fraction): no member ends before t1 without
    # its event, so the fraction by each save time is the share of all members.
    first = ref.event_first_time.sel(event="horizontal").values
    for time in ref.time.values:
        assert ref.event_fraction.sel(event="horizontal", time=time) == np.mean(first <= time)
    assert list(ref.probability.values) == [0.05, 0.25, 0.5, 0.75, 0.95]
    assert ref.event_first_time_quantiles.dims == ("probability", "event")


def test_the_events_argument_is_checked(arm):
    with pytest.raises(ValueError, match="declares no event functions"):
        lockstep.solve("pendulum", events={"records": 2})
    with pytest.raises(ValueError, match="unknown key 'recrods'.*did you mean 'records'"):
        lockstep.solve(arm, events={"recrods": 2})
    with pytest.raises(ValueError, match="interior_checks=-1"):
        lockstep.solve(arm, events={"interior_checks": -1})
