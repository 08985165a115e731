"""lockstep.lyapunov and lockstep.sensitivities.

lyapunov: the reference is the command. A study with a [lyapunov] section runs through
lockstep.run_study (`lockstep run` on the serial backend: one thread), and lockstep.lyapunov is given
the members' sampled values read back from its results and the same settings, on two threads; every
Lyapunov array must agree bit for bit (both run host/engine/lyapunov_batch.hpp, and a member's run
depends on its inputs only).

sensitivities: against central differences of lockstep.solve's final state, on the double pendulum at
small angles (regular motion over t = 2: no chaotic growth that would amplify the differences' errors),
for parameters and initial-state directions.
"""


import numpy as np
import pytest

import lockstep

LYAPUNOV_ARRAYS = ("lyapunov_exponents", "lyapunov_status", "lyapunov_t_start", "lyapunov_t_end",
                   "lyapunov_renormalizations", "lyapunov_steps", "lyapunov_history_t", "lyapunov_history")


def lyapunov_study(method):
    extra = 'separation = 1e-7\n' if method == "clone" else 'exponents = "all"\nmetric = "euclidean"\n'
    return f"""[model]
name = "double_pendulum"
[solver]
method = "radau5"
formulation = "index3"
rtol = 1e-8
atol = 1e-8
[time]
t1 = 6.0
save = {{ every = 3.0 }}
[ensemble]
members = 5
sampler = "random"
seed = 11
[ensemble.vary]
"initial.theta1" = {{ uniform = [1.8, 2.2] }}
"params.L2" = {{ uniform = [0.9, 1.1] }}
[output]
statistics = ["mean"]
[lyapunov]
method = "{method}"
renormalize = 0.5
transient = 1.0
history = true
{extra}"""


@pytest.mark.parametrize("method", ["qr", "clone"])
def test_lyapunov_equals_lockstep_run(method, tmp_path, lockstep_exe):
    study = tmp_path / "study.toml"
    study.write_text(lyapunov_study(method))
    ref = lockstep.run_study(study, backend="serial")
    assert (ref.lyapunov_status.values == 1).all(), ref.lyapunov_status.values
    varied = {name: ref[name].values for name in ("initial.theta1", "params.L2")}

    settings = dict(exponents="all", metric="euclidean") if method == "qr" else dict(separation=1e-7)
    ds = lockstep.lyapunov("double_pendulum", vary=varied, t=(0.0, 6.0), method=method, renormalize=0.5,
                           transient=1.0, history=True, solver_method="radau5", formulation="index3", rtol=1e-8,
                           atol=1e-8, threads=2, **settings)

    for name in LYAPUNOV_ARRAYS:
        assert ds[name].dims == ref[name].dims, name
        assert ds[name].shape == ref[name].shape, name
        expected = np.asarray(ref[name].values)
        got = np.asarray(ds[name].values).astype(expected.dtype)
        assert got.tobytes() == expected.tobytes(), f"{name}: {got} != {expected}"
    assert ds.lyapunov_exponents.shape == (5, 4 if method == "qr" else 1)
    assert np.isfinite(ds.lyapunov_exponents.values).all()
    for key in ("method", "metric", "renormalize", "transient", "dimension", "exponents", "history_length"):
        assert ds.lyapunov_exponents.attrs[f"lyapunov_{key}"] == ref.lyapunov_exponents.attrs[f"lyapunov_{key}"], key


def test_lyapunov_without_history_and_thread_counts():
    kwargs = dict(vary={"initial.theta1": [1.9, 2.0, 2.1]}, t=(0.0, 4.0), exponents=2, rtol=1e-7, atol=1e-7)
    one = lockstep.lyapunov("double_pendulum", threads=1, **kwargs)
    two = lockstep.lyapunov("double_pendulum", threads=2, history=True, **kwargs)
    assert "lyapunov_history" not in one and "lyapunov_history" in two
    assert one.lyapunov_exponents.shape == (3, 2)
    assert one.lyapunov_exponents.values.tobytes() == two.lyapunov_exponents.values.tobytes()
    assert list(one.lyapunov_message.values) == ["", "", ""]


@pytest.mark.parametrize("kwargs,error,text", [
    (dict(method="qrr"), ValueError, "did you mean 'qr'?"),
    (dict(method="radau5"), ValueError, "solver_method='radau5'"),
    (dict(metric="mas"), ValueError, "did you mean 'mass'?"),
    (dict(exponents=5), ValueError, "between 1 and 4"),
    (dict(exponents="al"), ValueError, "did you mean 'all'?"),
    (dict(method="clone", exponents=2), ValueError, "exponents must be 1"),
    (dict(separation=1e-6), ValueError, "method='clone' only"),
    (dict(transient=2.0), ValueError, "transient must be < t1 - t0"),
    (dict(transient=1.5, renormalize=1.0), ValueError, "leaves no re-orthonormalization"),
    (dict(renormalize=0.0), ValueError, "renormalize must be"),
    (dict(solver_method="rhoinf"), ValueError, "not for rhoinf"),
    (dict(solver_method="radau"), ValueError, "did you mean 'radau5'?"),
    (dict(vary={"params.L22": [1.0]}), ValueError, "did you mean 'params.L2'?"),
    (dict(params={"l2": 1.0}), ValueError, "did you mean 'L2'?"),
    (dict(rtoll=1e-8), TypeError, "did you mean 'rtol'?"),
])
def test_lyapunov_bad_arguments(kwargs, error, text):
    with pytest.raises(error) as e:
        lockstep.lyapunov("double_pendulum", t=(0.0, 2.0), **kwargs)
    assert text in str(e.value)


# The reference: five-point central differences (Abramowitz and Stegun, Handbook of Mathematical
# Functions, 1964, 25.3.6) of lockstep.solve's final state at rtol = atol = 1e-12. The solve's global
# error changes unsmoothly with the inputs (step-size selection), so a difference over +-h carries an
# error of about (global error) / h, some 1e-11 / h here, beside the truncation of order h^4 |y^(5)|;
# at h = 3e-3 of the value, or of 1 for a value below 1, both stay near 1e-8 (measured: at most 1e-7
# over the four derivatives; omega1 = 0.1 with h = 3e-3 of its value, 3e-4, was noise-bound at
# 0.9-1.1e-6; the same stencil on solves at rtol 1e-10 is noise-bound at some 1e-6, and the three-point
# one at h = 1e-3 truncation-bound at 1e-5). The engine's sensitivities at rtol = 1e-10 are those of
# the method's own solution with its steps held (lockstep/lyapunov/sensitivity.hpp), within the
# method's accuracy of the exact derivative: they move by 2e-8 from rtol 1e-10 to 1e-12. A bound of
# 1e-6 of the derivative's largest component leaves a factor of 10 over both.
RTOL = 1e-10
REFERENCE_RTOL = 1e-12
TOLERANCE = 1e-6
STATE = {"theta1": 0.3, "theta2": 0.2, "omega1": 0.1}
T = (0.0, 2.0)


def final_state(params=None, initial=None, rtol=REFERENCE_RTOL):
    ds = lockstep.solve("double_pendulum", params=params, initial={**STATE, **(initial or {})}, t=T, save=[T[1]],
                        rtol=rtol, atol=rtol)
    assert ds.status.item() == 1
    return np.concatenate([ds.final_q.values[0], ds.final_v.values[0]])


def central(group, name, value):
    h = 3e-3 * max(abs(value), 1.0)

    def f(k):
        return final_state(**{group: {name: value + k * h}})

    return (8 * (f(1) - f(-1)) - (f(2) - f(-2))) / (12 * h)


def relative_error(got, expected):
    return np.max(np.abs(got - expected)) / np.max(np.abs(expected))


def test_sensitivities_match_central_differences():
    model = lockstep.model("double_pendulum")
    # Initial-state directions: d (q0, v0) / d omega1 (v0 is linear in the angular velocities, so the
    # difference of initial_state is exact up to rounding) and d (q0, v0) / d L1 (q0 moves with the rod
    # length; the parameter sensitivity holds (q0, v0), so the total derivative is the sum of both).
    def phase(params=None, initial=None):
        q0, v0 = model.initial_state(params=params, inputs={**STATE, **(initial or {})})
        return np.concatenate([q0, v0])

    d_omega = (phase(initial={"omega1": 1.1}) - phase(initial={"omega1": 0.9})) / 0.2
    d_length = (phase(params={"L1": 1.0 + 1e-6}) - phase(params={"L1": 1.0 - 1e-6})) / 2e-6
    se = lockstep.sensitivities(model, initial=STATE, t=T, parameters=["g", "m2", "L1"],
                                directions=[d_omega, d_length], rtol=RTOL, atol=RTOL)
    assert se.attrs["status_name"] == "success"
    assert list(se.parameter.values) == ["g", "m2", "L1"]
    assert se.dq_dp.dims == ("parameter", "coordinate") and se.dq_dx0.dims == ("direction", "coordinate")

    def derivative(parameter=None, direction=None):
        if parameter is not None:
            return np.concatenate([se.dq_dp.sel(parameter=parameter).values, se.dv_dp.sel(parameter=parameter).values])
        return np.concatenate([se.dq_dx0.values[direction], se.dv_dx0.values[direction]])

    errors = {
        "g": relative_error(derivative("g"), central("params", "g", 9.81)),
        "m2": relative_error(derivative("m2"), central("params", "m2", 1.0)),
        "L1": relative_error(derivative("L1") + derivative(direction=1), central("params", "L1", 1.0)),
        "omega1": relative_error(derivative(direction=0), central("initial", "omega1", STATE["omega1"])),
    }
    assert max(errors.values()) < TOLERANCE, errors
    # The final state is the solve's within its accuracy (the steps differ: the tangents' error control).
    y = np.concatenate([se.final_q.values, se.final_v.values])
    assert np.max(np.abs(y - final_state(rtol=RTOL))) < 1e-7


@pytest.mark.parametrize("kwargs,error,text", [
    (dict(parameters=["g2"]), ValueError, "did you mean 'g'?"),
    (dict(parameters=["g", "g"]), ValueError, "at most once"),
    (dict(directions=np.zeros((1, 3))), ValueError, "[D, 8]"),
    (dict(method="rhoinf"), ValueError, "not for rhoinf"),
    (dict(method="bdf", formulation="index1"), ValueError, "ggl and index3 only"),
    (dict(rtoll=1e-8), TypeError, "did you mean 'rtol'?"),
])
def test_sensitivities_bad_arguments(kwargs, error, text):
    with pytest.raises(error) as e:
        lockstep.sensitivities("double_pendulum", t=(0.0, 1.0), **{"parameters": ["g"], **kwargs})
    assert text in str(e.value)


def test_a_model_files_tangents_are_compiled_as_calls_need_them(tmp_path, source_dir, monkeypatch, model_files_get_lanes):
    """A model file's engine compiles each of its tangents, a part of its own, when a call first needs
    it (docs/MODEL-FILES.md, "What is compiled"): Lyapunov exponents by QR, by clone, sensitivities;
    each gives the built-in model's bits (the same code, compiled again)."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("LOCKSTEP_CACHE_DIR", str(cache))  # not the session's cache: its parts are counted
    header = tmp_path / "copied_pendulum.hpp"
    text = (source_dir / "include/lockstep/model/double_pendulum.hpp").read_text()
    text = text.replace("namespace lockstep::models {", "namespace mine {\nusing namespace lockstep;")
    header.write_text(text.replace('name = "double_pendulum"', 'name = "copied_pendulum"'))
    mine = lockstep.model(str(header))

    def compiled_parts():
        return sorted(line[len("part "):] for record in cache.glob("parts/*/part.txt")
                      for line in record.read_text().splitlines() if line.startswith("part "))

    # Loading compiles the model's own part alone; the tangents need no method part of their own.
    assert compiled_parts() == ["model"]
    tangents = ["model", "one member", "tangents"]
    kwargs = dict(vary={"initial.theta1": [1.9, 2.1]}, t=(0.0, 2.0), renormalize=0.5)
    for method, settings, part in (("qr", dict(exponents=2), "radau5 lyapunov"),
                                   ("clone", {}, "radau5 lyapunov clone")):
        got = lockstep.lyapunov(mine, method=method, **kwargs, **settings)
        assert part in compiled_parts()
        expected = lockstep.lyapunov("double_pendulum", method=method, **kwargs, **settings)
        assert got.lyapunov_exponents.values.tobytes() == expected.lyapunov_exponents.values.tobytes(), method
    assert compiled_parts() == sorted(tangents + ["radau5 lyapunov", "radau5 lyapunov clone"])
    got = lockstep.sensitivities(mine, initial=STATE, t=T, parameters=["g", "L1"])
    expected = lockstep.sensitivities("double_pendulum", initial=STATE, t=T, parameters=["g", "L1"])
    assert got.dq_dp.values.tobytes() == expected.dq_dp.values.tobytes()
    assert got.dv_dp.values.tobytes() == expected.dv_dp.values.tobytes()
    assert compiled_parts() == sorted(tangents + ["radau5 lyapunov", "radau5 lyapunov clone", "radau5 sensitivities"])
    # A solve adds the method's part (and its lanes, where model files get lanes here), nothing else.
    lanes = model_files_get_lanes()
    lockstep.solve(mine, initial=STATE, t=T, method="radau5")
    assert compiled_parts() == sorted(tangents + ["radau5", "radau5 lyapunov", "radau5 lyapunov clone",
                                                  "radau5 sensitivities"] + (["radau5 in SIMD lanes"] if lanes else []))
