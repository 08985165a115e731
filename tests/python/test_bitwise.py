"""lockstep.solve gives bitwise the results of `lockstep run` for the same members.

The reference is the command, not the C++ API: a study file with sampled members runs through
`lockstep run` (the study-file reader, the sampling plan, the model's initial_state, the serial
backend, results.h5), and lockstep.solve is given the members' sampled values read back from that
results.h5 (ds["params.NAME"], ds["initial.NAME"]) and the same save times, on the omp backend. Equal
bits then say that the Python path builds each member's parameters and initial state as a study does
and hands them to the same engine, and that results.h5 and the solve's arrays are laid out alike
(open_results reads the reference). Every built-in model; radau5 on index3 (the study default) and
bdf on ggl, which adds the multipliers mu; knife_edge adds nu (k = 1).
"""

import subprocess

import numpy as np
import pytest

import lockstep

# Arrays that must agree bit for bit between the command's results and the Python solve.
COMPARED = ("q", "v", "lam", "mu", "nu", "status", "final_q", "final_v") + tuple(
    name for name in lockstep._dataset.MEMBER_COUNTERS)


def study_text(model, method, formulation, t1):
    """Six members, the model's first parameter and first initial input (if any) drawn within 1 %
    (plus 1e-3 for a zero default) of their defaults."""
    vary = []
    for group, values in (("params", model.parameters), ("initial", model.inputs)):
        if values:
            v = values[0]
            spread = 0.01 * abs(v.default) + 1e-3
            vary.append(f'"{group}.{v.name}" = {{ uniform = [{v.default - spread!r}, {v.default + spread!r}] }}')
    return f"""[model]
name = "{model.name}"
[solver]
method = "{method}"
formulation = "{formulation}"
rtol = 1e-7
atol = 1e-7
[time]
t1 = {t1!r}
save = {{ every = {t1 / 8!r} }}
[ensemble]
members = 6
sampler = "random"
seed = 3
[ensemble.vary]
{chr(10).join(vary)}
[output]
trajectories = true
statistics = ["mean"]
"""


CASES = [(name, "radau5", "index3") for name in lockstep.builtin_models()] + [
    (name, "bdf", "ggl") for name in ("double_pendulum", "slider_crank", "knife_edge")]


@pytest.mark.parametrize("name,method,formulation", CASES)
def test_solve_equals_lockstep_run(name, method, formulation, tmp_path, lockstep_exe):
    model = lockstep.model(name)
    t1 = 0.02 if name == "andrews" else 0.5
    study = tmp_path / "study.toml"
    study.write_text(study_text(model, method, formulation, t1))
    run = subprocess.run([lockstep_exe, "run", str(study), "-o", str(tmp_path / "out"), "--backend", "serial",
                          "--quiet"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    ref = lockstep.open_results(tmp_path / "out" / "results.h5")
    varied = [v for v in ref.data_vars if v.startswith(("params.", "initial."))]
    assert varied, "the study varies something"

    ds = lockstep.solve(model, vary={v: ref[v].values for v in varied}, t=(ref.attrs["t0"], ref.attrs["t1"]),
                        save=ref.time.values, method=method, formulation=formulation, rtol=1e-7, atol=1e-7,
                        backend="omp", threads=2)

    assert (ref.status.values == 1).all(), ref.status_name.values
    assert ds.sizes == {k: v for k, v in ref.sizes.items() if k != "value"}
    for variable in COMPARED:
        if variable not in ref:
            assert variable not in ds, variable
            continue
        a, b = ds[variable].values, ref[variable].values
        assert a.shape == b.shape and a.dtype == b.dtype, variable
        assert a.tobytes() == b.tobytes(), f"{variable} differs: max |diff| {np.nanmax(np.abs(a - b))}"
    for v in varied:
        assert ds[v].values.tobytes() == ref[v].values.tobytes()
    assert ds.attrs["method"] == ref.attrs["method"] and ds.attrs["formulation"] == ref.attrs["formulation"]
