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


def test_events_in_lanes_and_through_every_route_are_the_members_alone_bit_for_bit(source_dir, model_cache, tmp_path,
                                                                                     lockstep_exe, model_file_lanes):
    # The command line with its members one at a time (LOCKSTEP_LANES=0, the serial backend), read back
    # by open_results; lockstep.solve with them in the SIMD lanes of the CPU at hand (where it has any),
    # on two threads in chunks of 3. The model is loaded here, not taken from the module's fixture,
    # whose engine the other tests compiled without lanes (conftest.py).
    arm = lockstep.model(str(source_dir / "examples" / "models" / "driven_arm.hpp"))
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


def test_describe_lists_the_events(arm, source_dir, lockstep_exe):
    out = subprocess.run([lockstep_exe, "describe", str(source_dir / "examples" / "models" / "driven_arm.hpp")],
                         capture_output=True, text=True, check=True).stdout
    lines = out.splitlines()
    at = lines.index("events (results.h5 /events, docs/how-to/events.md):")
    assert lines[at + 1].split()[:3] == ["horizontal", "rising", "stop"], lines[at + 1]
    assert lines[at + 2].split()[:3] == ["turn", "falling", "count"], lines[at + 2]


def test_the_events_argument_is_checked(arm):
    with pytest.raises(ValueError, match="declares no event functions"):
        lockstep.solve("pendulum", events={"records": 2})
    with pytest.raises(ValueError, match="unknown key 'recrods'.*did you mean 'records'"):
        lockstep.solve(arm, events={"recrods": 2})
    with pytest.raises(ValueError, match="interior_checks=-1"):
        lockstep.solve(arm, events={"interior_checks": -1})


DOUBLE_PENDULUM_EVENTS = """
#include "lockstep/model/double_pendulum.hpp"
// The built-in double pendulum with one event: the second bob crosses x = 0, either way.
struct double_pendulum_x2 {
  using base = lockstep::models::double_pendulum;
  template <class T, int N> using vec = lockstep::vec<T, N>;
  static constexpr const char* name = "double_pendulum_x2";
  static constexpr const char* description = "the built-in double pendulum, recording x2 = 0";
  static constexpr int n = base::n, m = base::m, k = base::k, n_params = base::n_params, n_inputs = base::n_inputs;
  static constexpr const auto& params = base::params;
  static constexpr const auto& inputs = base::inputs;
  static constexpr const auto& coordinate_names = base::coordinate_names;
  static constexpr int n_events = 1;
  static constexpr lockstep::event_declaration events[n_events] = {
      {"x2", lockstep::event_direction::both, lockstep::event_action::record, "the second bob crosses x = 0"}};
  template <class T, class P>
  LOCKSTEP_HD static auto mass(const vec<T, n>& q, const P* p) { return base::mass<T, P>(q, p); }
  template <class T, class P>
  LOCKSTEP_HD static auto force(const T& t, const vec<T, n>& q, const vec<T, n>& v, const P* p) {
    return base::force<T, P>(t, q, v, p);
  }
  template <class T, class P>
  LOCKSTEP_HD static auto constraint(const T& t, const vec<T, n>& q, const P* p) { return base::constraint<T, P>(t, q, p); }
  template <class T, class P>
  LOCKSTEP_HD static vec<T, n_events> event(const T&, const vec<T, n>& q, const vec<T, n>&, const P*) {
    vec<T, n_events> g;
    g[0] = q[2];
    return g;
  }
  LOCKSTEP_HD static void initial_state(const double* p, const double* in, vec<double, n>& q0, vec<double, n>& v0) {
    base::initial_state(p, in, q0, v0);
  }
};
"""


def test_double_pendulum_event_times_agree_with_scipy_on_the_angles(tmp_path, model_cache):
    # The first crossings of x2 = L1 sin(theta1) + L2 sin(theta2) = 0 by the chaotic double pendulum,
    # against scipy's solve_ivp with events on its ODE in the two angles (DOP853 at 1e-12), within a
    # few Lyapunov times: five crossings, which differ by 1.5e-11 at the first and 3.6e-8 at the fifth
    # (measured; the difference grows with the chaos).
    from scipy.integrate import solve_ivp

    header = tmp_path / "double_pendulum_x2.hpp"
    header.write_text(DOUBLE_PENDULUM_EVENTS)
    model = lockstep.model(str(header))
    th1, th2, t1 = 2.0, 2.5, 4.0
    ds = lockstep.solve(model, initial={"theta1": th1, "theta2": th2}, t=(0.0, t1), rtol=1e-10, atol=1e-12,
                        events={"records": 32})
    m1 = m2 = L1 = L2 = 1.0
    g = 9.81

    def rhs(_, y):
        a, b, wa, wb = y
        d = a - b
        den = 2 * m1 + m2 - m2 * math.cos(2 * d)
        dda = (-g * (2 * m1 + m2) * math.sin(a) - m2 * g * math.sin(a - 2 * b)
               - 2 * math.sin(d) * m2 * (wb * wb * L2 + wa * wa * L1 * math.cos(d))) / (L1 * den)
        ddb = (2 * math.sin(d) * (wa * wa * L1 * (m1 + m2) + g * (m1 + m2) * math.cos(a)
                                  + wb * wb * L2 * m2 * math.cos(d))) / (L2 * den)
        return [wa, wb, dda, ddb]

    def x2(_, y):
        return L1 * math.sin(y[0]) + L2 * math.sin(y[1])

    ref = solve_ivp(rhs, (0.0, t1), [th1, th2, 0.0, 0.0], method="DOP853", rtol=1e-12, atol=1e-12, events=x2)
    expected = ref.t_events[0]
    found = ds.event_t.values[0, :int(ds.event_records.values[0])]
    assert len(expected) >= 5, expected
    assert len(found) == len(expected), (found, expected)
    assert np.max(np.abs(found - expected)) < 1e-6, np.abs(found - expected)
    assert np.all(np.abs(ds.event_q.values[0, :len(found), 2]) < 1e-8)  # x2 = 0 at each record


def pendulum_with_force_events():
    """The pendulum in Cartesian coordinates from SymPy, with an event of its multiplier (the rod's
    tension passes the bob's weight) and one of its acceleration (y'' rises through 0)."""
    import sympy

    x, y, vx, vy, ax, ay, lam = sympy.symbols("x y vx vy ax ay lam", real=True)
    m, length, g, theta0 = sympy.symbols("m L g theta0", real=True)
    return lockstep.Model.from_sympy(
        "pendulum_forces", coordinates=[x, y], velocities=[vx, vy], mass=[[m, 0], [0, m]], force=[0, -m * g],
        parameters={m: M, length: L, g: G}, inputs={theta0: 1.0},
        constraints={"rod": (x**2 + y**2 - length**2) / 2}, accelerations=[ax, ay], multipliers=[lam],
        events={"tension": (lam * length - m * g, "both", "record", "the rod's tension passes the weight"),
                "lift": (ay, "rising", "count")},
        initial_q={x: length * sympy.sin(theta0), y: -length * sympy.cos(theta0)})


def time_from_release(theta0, theta):
    """The time the pendulum released at rest from theta0 takes to reach theta (0 <= theta <= theta0):
    with sin(theta / 2) = k sin(phi), k = sin(theta0 / 2), the time from the bottom to theta is
    sqrt(L / g) F(phi | k^2) (Whittaker & Watson 1927, 22.735), and the quarter period sqrt(L / g) K(k^2)."""
    from scipy.special import ellipk, ellipkinc

    k = math.sin(theta0 / 2.0)
    phi = math.asin(min(1.0, math.sin(theta / 2.0) / k))
    return math.sqrt(L / G) * (ellipk(k * k) - ellipkinc(phi, k * k))


def test_events_of_the_multipliers_and_accelerations_at_the_closed_form_times(tmp_path, model_cache, lockstep_exe):
    # Released at rest from theta0, the bob at theta pulls the rod with T = m g (3 cos(theta) - 2
    # cos(theta0)) (energy and the radial balance), which passes m g at cos(theta) = (1 + 2 cos(theta0))
    # / 3, rising on the way down and falling after the bottom; y = -L cos(theta) has y'' = g (3
    # cos^2(theta) - 2 cos(theta) cos(theta0) - 1), which rises through 0 at cos(theta) = (cos(theta0) +
    # sqrt(cos^2(theta0) + 3)) / 3. The multiplier lambda = T / L (Phi = (x^2 + y^2 - L^2) / 2).
    model = pendulum_with_force_events()
    thetas = np.array([0.6, 1.0, 1.3, math.pi / 2])
    quarter = np.array([time_from_release(th, 0.0) for th in thetas])
    ds = lockstep.solve(model, vary={"initial.theta0": thetas}, t=(0.0, 1.7 * quarter.max()), rtol=1e-10, atol=1e-10,
                        method="radau5", formulation="index3", events={"records": 4})
    assert (ds.status_name.values == "success").all()
    described = subprocess.run([lockstep_exe, "describe", model.source], capture_output=True, text=True, check=True)
    if "SIMD lanes: members in" in described.stdout:  # the engine has lanes: the solve ran in them
        assert ds.attrs["lane_attempts"] > 0
    for i, th in enumerate(thetas):
        down = time_from_release(th, math.acos((1.0 + 2.0 * math.cos(th)) / 3.0))
        records = int(ds.event_records.values[i])
        assert records == 2, records
        assert abs(ds.event_t.values[i, 0] - down) < 1e-7, (th, ds.event_t.values[i, 0], down)
        assert abs(ds.event_t.values[i, 1] - (2.0 * quarter[i] - down)) < 1e-7
        # Each record holds the multiplier its event function saw: the tension is the weight there.
        assert np.all(np.abs(ds.event_lam.values[i, :2, 0] * L - M * G) < 1e-6), ds.event_lam.values[i]
        lift = time_from_release(th, math.acos((math.cos(th) + math.sqrt(math.cos(th) ** 2 + 3.0)) / 3.0))
        assert abs(ds.event_first_time.sel(event="lift").values[i] - lift) < 1e-7
        assert ds.event_count.sel(event="lift").values[i] == 1

    # The same members on the command line, one at a time (no lanes, the serial backend), bit for bit.
    study = tmp_path / "forces.toml"
    save = ", ".join(repr(float(s)) for s in ds.time.values)
    study.write_text(f'[model]\nsource = "{model.source}"\n[solver]\nmethod = "radau5"\nformulation = "index3"\n'
                     f'rtol = 1e-10\natol = 1e-10\n[time]\nt1 = {1.7 * quarter.max()!r}\n'
                     f'save = {{ times = [{save}] }}\n'
                     f'[ensemble]\nvary = {{ "initial.theta0" = {{ grid = [{", ".join(map(repr, thetas))}] }} }}\n'
                     f'[events]\nrecords = 4\n')
    run = subprocess.run([lockstep_exe, "run", str(study), "-o", str(tmp_path / "out"), "--quiet", "--backend",
                          "serial"], capture_output=True, text=True, env={**os.environ, "LOCKSTEP_LANES": "0"})
    assert run.returncode == 0, run.stderr
    ref = lockstep.open_results(tmp_path / "out" / "results.h5")
    assert ref.attrs["simd_lanes"] == 0
    for name in EVENT_VARIABLES + ("final_t",):
        a, b = ds[name].values, ref[name].values
        assert a.shape == b.shape and a.tobytes() == b.tobytes(), name


def test_accelerations_and_multipliers_are_the_event_functions_alone(model_cache):
    import sympy

    x, vx, ax, lam, k = sympy.symbols("x vx ax lam k", real=True)
    with pytest.raises(ValueError, match=r"from_sympy model 'spring', force for coordinate x = .*ax.*can be used only "
                                         r"in \[events\]"):
        lockstep.Model.from_sympy("spring", coordinates=[x], velocities=[vx], mass=[[1]], force=[-k * x * (1 + ax)],
                                  parameters={k: 1.0}, accelerations=[ax], events={"turn": vx})
    with pytest.raises(ValueError, match="multipliers: 1 symbols for 0 constraint rows"):
        lockstep.Model.from_sympy("spring", coordinates=[x], velocities=[vx], mass=[[1]], force=[-k * x],
                                  parameters={k: 1.0}, multipliers=[lam], events={"turn": vx})


ADDED_STUDY = """
[model]
name = "pendulum"
[solver]
rtol = 1e-10
atol = 1e-10
[time]
t1 = 1.0
save = {{ every = 0.05 }}
[ensemble]
vary = {{ "initial.theta0" = {{ grid = [0.6, 1.0, 1.3, 1.5707963267948966] }} }}
[output]
trajectories = true
{events}"""

ADDED_EVENTS = """[events]
records = 4
[events.functions]
tension = { g = "lambda_0*L - m*g", direction = "both", description = "the rod's tension passes the weight" }
bottom = { g = "x", direction = "falling", action = "stop" }
"""


def run_study(lockstep_exe, path, text, out):
    path.write_text(text)
    run = subprocess.run([lockstep_exe, "run", str(path), "-o", str(out), "--quiet"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return lockstep.open_results(out / "results.h5")


def test_a_study_adds_events_to_a_builtin_model(tmp_path, model_cache, lockstep_exe):
    # The built-in pendulum released from theta0 with two event functions of the study's own: the rod's
    # tension passes the weight (falling and rising as in the closed form above), and the bob reaches the
    # bottom (x falls through 0), which stops the member at the quarter period.
    ds = run_study(lockstep_exe, tmp_path / "added.toml", ADDED_STUDY.format(events=ADDED_EVENTS), tmp_path / "added")
    assert list(ds.event.values) == ["tension", "bottom"]
    assert list(ds.event_count.attrs["actions"]) == ["record", "stop"]
    assert (ds.status_name.values == "stopped_by_event").all()
    thetas = ds["initial.theta0"].values
    for i, th in enumerate(thetas):
        quarter = time_from_release(th, 0.0)
        down = time_from_release(th, math.acos((1.0 + 2.0 * math.cos(th)) / 3.0))
        assert abs(ds.final_t.values[i] - quarter) < 1e-7, (th, ds.final_t.values[i], quarter)
        assert abs(ds.event_first_time.sel(event="tension").values[i] - down) < 1e-7
        assert ds.event_index.values[i, 0] == 0 and ds.event_index.values[i, 1] == 1
    # The model with the study's events is the built-in one: the same save points, bit for bit, up to the
    # stop, and none after it.
    plain = run_study(lockstep_exe, tmp_path / "plain.toml", ADDED_STUDY.format(events=""), tmp_path / "plain")
    for i in range(len(thetas)):
        before = ds.time.values <= ds.final_t.values[i]
        assert 5 <= before.sum() < len(before)
        for name in ("q", "v", "lam"):
            assert ds[name].values[i][before].tobytes() == plain[name].values[i][before].tobytes(), name
        assert np.isnan(ds.q.values[i][~before]).all()
    assert ds.attrs["model"] == plain.attrs["model"] == "pendulum"


def test_a_study_adds_events_after_a_model_files_own(tmp_path, model_cache, lockstep_exe, source_dir):
    arm = source_dir / "examples" / "models" / "driven_arm.hpp"
    study = (f'[model]\nsource = "{arm}"\n[solver]\nrtol = 1e-8\n[time]\nt1 = 4.0\n[ensemble]\n'
             'vary = { "params.tau" = { grid = [5.0, 8.0, 12.0] } }\n[events]\nrecords = 4\n{added}')
    added = '[events.functions]\nreversed = { g = "-lambda_0", direction = "rising", action = "count" }\n'
    ds = run_study(lockstep_exe, tmp_path / "arm.toml", study.replace("{added}", added), tmp_path / "arm")
    own = run_study(lockstep_exe, tmp_path / "own.toml", study.replace("{added}", ""), tmp_path / "own")
    assert list(ds.event.values) == ["horizontal", "turn", "reversed"]
    for name in ("event_first_time", "event_count"):
        assert ds[name].values[:, :2].tobytes() == own[name].values.tobytes(), name
    for name in ("event_t", "event_index", "event_records", "final_t"):
        assert ds[name].values.tobytes() == own[name].values.tobytes(), name


def test_a_study_events_mistake_is_reported_at_its_line(tmp_path, model_cache, lockstep_exe):
    study = tmp_path / "typo.toml"
    study.write_text(ADDED_STUDY.format(events=ADDED_EVENTS.replace("lambda_0*L", "lambda_1*L")))
    run = subprocess.run([lockstep_exe, "run", str(study), "-o", str(tmp_path / "typo"), "--quiet"],
                         capture_output=True, text=True)
    assert run.returncode == 2
    assert (f"{study}:17:18: error: unknown name 'lambda_1' in [events.functions]; did you mean 'lambda_0'?"
            in run.stderr), run.stderr
