"""The Python API's shapes, names and refusals: models, solve, open_results, run_study, model files."""

import csv
import os
import re
import shutil
import subprocess

import h5py
import numpy as np
import pytest
import xarray as xr

import lockstep
from lockstep import _lockstep


# ---- the build -------------------------------------------------------------------------------------

def test_module_and_command_report_the_same_instruction_set():
    # LOCKSTEP_INSTRUCTION_SET: the module and the command are compiled from one configuration.
    assert _lockstep.instruction_set in ("baseline", "sse4", "avx2", "avx512")
    assert (_lockstep.instruction_set == "baseline") == (_lockstep.instruction_set_cpu_features == "")
    version = subprocess.run([_lockstep.lockstep_executable, "--version"], capture_output=True, text=True,
                             check=True).stdout
    line = next(l for l in version.splitlines() if l.startswith("instruction set: "))
    assert line.split()[2] == _lockstep.instruction_set, version
    assert _lockstep.instruction_set_cpu_features in line, version


def test_module_and_command_report_the_same_builtin_lanes():
    # lockstep/engine/builtin.hpp: the set whose SIMD lanes run the built-in models' members here, or why none.
    lanes = _lockstep.builtin_lanes()
    assert set(lanes) == {"instruction_set", "lanes", "libraries", "why_none"}
    version = subprocess.run([_lockstep.lockstep_executable, "--version"], capture_output=True, text=True,
                             check=True).stdout
    line = next(l for l in version.splitlines() if l.startswith("SIMD lanes, built-in models: "))
    if lanes["lanes"]:
        assert lanes["lanes"] in (4, 8) and lanes["why_none"] == ""
        assert line.startswith(f"SIMD lanes, built-in models: {lanes['lanes']} per core ({lanes['instruction_set']})")
    else:
        assert lanes["why_none"] and line == f"SIMD lanes, built-in models: off ({lanes['why_none']})", line


# ---- models ----------------------------------------------------------------------------------------

def test_builtin_model_tables():
    names = lockstep.builtin_models()
    assert "double_pendulum" in names and "knife_edge" in names and len(names) == 11
    dp = lockstep.model("double_pendulum")
    assert (dp.name, dp.n, dp.m, dp.k) == ("double_pendulum", 4, 2, 0)
    assert dp.source is None and "Cartesian" in dp.description
    assert [p.name for p in dp.parameters] == ["m1", "m2", "L1", "L2", "g"]
    assert dp.parameters[4] == lockstep.Value("g", 9.81, "m/s^2", "gravitational acceleration along -y")
    assert [i.name for i in dp.inputs] == ["theta1", "theta2", "omega1", "omega2"]
    q0, v0 = dp.initial_state(inputs={"theta1": 0.0, "theta2": 0.0})
    assert q0.tolist() == [0.0, -1.0, 0.0, -2.0] and v0.tolist() == [0.0] * 4


def test_unknown_model_suggests_the_closest():
    with pytest.raises(ValueError, match=r"unknown model 'double_pendulm'; did you mean 'double_pendulum'\?"):
        lockstep.model("double_pendulm")


# ---- solve ------------------------------------------------------------------------------------------

def test_solve_shapes_names_and_attributes():
    ds = lockstep.solve("double_pendulum", vary={"params.L2": [0.8, 0.9, 1.0], "initial.theta1": [1.5, 2.0, 2.5]},
                        params={"m2": 1.5}, initial={"theta2": 2.0}, t=(0.0, 1.0), save=np.linspace(0, 1, 11),
                        rtol=1e-7, atol={"q": 1e-8}, threads=1)
    assert isinstance(ds, xr.Dataset)
    assert dict(ds.sizes) == {"member": 3, "time": 11, "coordinate": 4, "constraint": 2}
    assert ds.q.dims == ("member", "time", "coordinate") and ds.lam.dims == ("member", "time", "constraint")
    assert "mu" not in ds and "nu" not in ds  # index3 has no mu; the model has no velocity constraints
    assert ds.status.dtype == np.int32 and list(ds.status_name.values) == ["success"] * 3
    assert ds.status.attrs["names"][1] == "success"
    for counter in ("steps", "rejected", "newton_iterations", "lu_factorizations", "final_t", "max_phi"):
        assert ds[counter].dims == ("member",)
    assert (ds.steps > 0).all() and np.allclose(ds.final_t, 1.0)
    assert ds["params.L2"].values.tolist() == [0.8, 0.9, 1.0]
    assert ds["initial.theta1"].values.tolist() == [1.5, 2.0, 2.5]
    assert ds.attrs["method"] == "radau5" and ds.attrs["formulation"] == "index3"
    assert ds.attrs["rtol"] == 1e-7 and ds.attrs["atol_q"] == 1e-8 and ds.attrs["atol_v"] == 1e-6
    assert ds.attrs["params.m2"] == 1.5 and ds.attrs["initial.theta2"] == 2.0
    assert ds.time.values.tolist() == np.linspace(0, 1, 11).tolist()
    # The initial positions are the model's initial_state of each member's inputs.
    q0, _ = lockstep.model("double_pendulum").initial_state({"L2": 0.9, "m2": 1.5}, {"theta1": 2.0, "theta2": 2.0})
    assert np.array_equal(ds.q.values[1, 0], q0)
    # ggl adds mu; a non-holonomic model adds nu.
    assert ds.final_q.dims == ("member", "coordinate")
    ggl = lockstep.solve("double_pendulum", method="bdf", formulation="ggl", members=2, t=0.5, save=[0.25, 0.5])
    assert ggl.mu.dims == ("member", "time", "constraint") and ggl.mu.shape == (2, 2, 2)
    knife = lockstep.solve("knife_edge", members=2, t=0.5, save=[0.25, 0.5])
    assert knife.nu.dims == ("member", "time", "nonholonomic") and "mu" not in knife
    assert dict(knife.sizes) == {"member": 2, "time": 2, "coordinate": 3, "constraint": 0, "nonholonomic": 1}


def test_the_explicit_method_takes_its_own_defaults_and_is_refused_tangents():
    # dopri5 integrates index1 and projects after every step unless told otherwise (as a study file);
    # the constraints then hold to round-off, and no Newton iteration runs.
    ds = lockstep.solve("double_pendulum", method="dopri5", members=2, t=2.0, save=[1.0, 2.0], rtol=1e-8, atol=1e-8)
    assert ds.attrs["method"] == "dopri5"
    assert ds.attrs["formulation"] == "index1" and ds.attrs["projection"] == "coordinate"
    assert list(ds.status_name.values) == ["success"] * 2
    assert (ds.max_phi.values < 1e-12).all() and (ds.newton_iterations.values == 0).all()
    assert (ds.projections.values == ds.steps.values).all()
    unprojected = lockstep.solve("double_pendulum", method="dopri5", projection="none", t=2.0, save=[2.0])
    assert unprojected.attrs["projection"] == "none" and unprojected.max_phi.values[0] > 1e-12
    with pytest.raises(ValueError, match="index-1 equations"):
        lockstep.solve("double_pendulum", method="dopri5", formulation="ggl", t=1.0)
    with pytest.raises(ValueError, match="not for the explicit pairs"):
        lockstep.lyapunov("double_pendulum", t=1.0, solver_method="dopri5", formulation="index1")
    # tsit5 takes the same defaults, and its own coefficients: the same members end elsewhere.
    tsit5 = lockstep.solve("double_pendulum", method="tsit5", members=2, t=2.0, save=[1.0, 2.0], rtol=1e-8, atol=1e-8)
    assert tsit5.attrs["method"] == "tsit5" and tsit5.attrs["formulation"] == "index1"
    assert tsit5.attrs["projection"] == "coordinate" and (tsit5.max_phi.values < 1e-12).all()
    assert (tsit5.explicit_steps.values == tsit5.steps.values).all()
    assert not np.array_equal(tsit5.q.values, ds.q.values)
    assert np.abs(tsit5.q.values - ds.q.values).max() < 1e-6


def test_auto_switches_the_stiff_members_and_each_agrees_with_scipy():
    # The linear oscillator on its plane z = a x + b y, damped by d: in (x, y), with g = (a, b),
    #     m (I + g g^T) q'' = -(diag(k1, k2) + k3 g g^T) q - d (I + g g^T) q',
    # solved by SciPy's Radau at rtol 1e-12, an independent solution. Damping 0.2 and 1 is not stiff
    # (auto stays explicit); 500 and 3000 is (an eigenvalue near -d: auto switches to Radau IIA 5).
    integrate = pytest.importorskip("scipy.integrate")
    names = [p.name for p in lockstep.model("linear_oscillator").parameters]
    defaults = dict(zip(names, [p.default for p in lockstep.model("linear_oscillator").parameters]))
    damping = [0.2, 1.0, 500.0, 3000.0]
    ds = lockstep.solve("linear_oscillator", method="auto", vary={"params.d": damping}, t=2.0, save=[2.0],
                        rtol=1e-8, atol=1e-8)
    assert ds.attrs["method"] == "auto" and ds.attrs["formulation"] == "index3"
    assert list(ds.status_name.values) == ["success"] * 4
    switches = ds.method_switches.values
    assert list(switches[:2]) == [0, 0] and (switches[2:] >= 1).all()
    assert (ds.explicit_steps.values[:2] == ds.steps.values[:2]).all()
    assert (ds.explicit_steps.values[2:] < ds.steps.values[2:]).all()
    g = np.array([defaults["a"], defaults["b"]])
    mass = defaults["m"] * (np.eye(2) + np.outer(g, g))
    stiffness = np.diag([defaults["k1"], defaults["k2"]]) + defaults["k3"] * np.outer(g, g)
    x0 = np.array([1.0, 0.0, 0.0, 0.0])  # the model's default initial inputs: x0 = 1, at rest
    for i, d in enumerate(damping):
        def rhs(_, y, d=d):
            q, v = y[:2], y[2:]
            return np.concatenate([v, np.linalg.solve(mass, -stiffness @ q) - d / defaults["m"] * v])
        ref = integrate.solve_ivp(rhs, (0.0, 2.0), x0, method="Radau", rtol=1e-12, atol=1e-14).y[:, -1]
        q = ds.q.values[i, -1]
        assert np.max(np.abs(q[:2] - ref[:2])) < 1e-6, (d, q, ref)
        assert abs(q[2] - g @ ref[:2]) < 1e-6, (d, q, ref)


def test_multiplier_convention_and_constraint_rank_counters():
    # The built-in double pendulum has independent constraints: no row dropped, both conventions the
    # same multipliers, and the convention recorded.
    a = lockstep.solve("double_pendulum", t=0.5, save=[0.0, 0.25, 0.5])
    b = lockstep.solve("double_pendulum", t=0.5, save=[0.0, 0.25, 0.5], multipliers="minimum-norm")
    assert a.attrs["multipliers"] == "independent" and b.attrs["multipliers"] == "minimum-norm"
    assert (a.dropped_rows.values == 0).all() and (a.rank_changes.values == 0).all()
    assert (a.max_dropped_phi.values == 0.0).all()
    assert np.array_equal(a.lam.values, b.lam.values)
    with pytest.raises(ValueError, match="minimum-norm"):
        lockstep.solve("double_pendulum", t=0.5, multipliers="smallest")


def test_failed_members_are_flagged_not_raised():
    ds = lockstep.solve("double_pendulum", vary={"params.L2": [1.0, 1.0]}, t=5.0, save=[1.0, 5.0], max_steps=20)
    assert list(ds.status_name.values) == ["max_steps", "max_steps"]
    assert np.isnan(ds.q.values[:, -1]).all() and (ds.final_t < 5.0).all()


def test_solve_warns_of_starts_off_the_constraints_and_refuses_gross_ones_by_default():
    # The car axle's published start, with axle lengths 1 (on its constraints), 1.003 (3 mm off: beyond
    # the tolerance) and 1.25 (25 % off: gross, refused unless init="project").
    kwargs = dict(vary={"params.L": [1.0, 1.003, 1.25]}, t=0.01, save=[0.0, 0.01])
    with pytest.warns(lockstep.InitialCorrectionWarning) as caught:
        ds = lockstep.solve("car_axis", **kwargs)
    messages = [str(w.message) for w in caught]
    assert list(ds.status_name.values) == ["success", "success", "inconsistent_initial"]
    positions = next(m for m in messages if m.startswith("the initial positions"))
    assert "of 1 member violated" in positions and "(member 1)" in positions, messages
    refused = next(m for m in messages if "refused" in m)
    assert refused.startswith("1 member refused (inconsistent_initial)") and "(member 2)" in refused, messages
    assert f"up to {ds.init_q_correction.values[2]:.3g} (member 2)" in refused and 'init="project"' in refused, messages
    # A member that never started reports t0 and the start it was given.
    assert ds.final_t.values[2] == 0.0 and ds.final_q.values[2].tolist() == [0.0, 0.5, 1.0, 0.5]

    with pytest.warns(lockstep.InitialCorrectionWarning) as caught:
        projected = lockstep.solve("car_axis", init="project", **kwargs)
    assert (projected.status_name.values == "success").all()
    assert any("of 2 members violated" in str(w.message) and "(member 2)" in str(w.message) for w in caught)
    assert not any("refused" in str(w.message) for w in caught)


def test_backends_and_threads_agree_bitwise():
    kwargs = dict(vary={"initial.theta1": np.linspace(1.0, 2.5, 40)}, t=2.0)
    a = lockstep.solve("double_pendulum", backend="serial", **kwargs)
    b = lockstep.solve("double_pendulum", backend="omp", threads=2, chunk_size=7, **kwargs)
    assert a.q.values.tobytes() == b.q.values.tobytes() and a.steps.values.tobytes() == b.steps.values.tobytes()


def test_the_dataset_records_the_threads_the_run_used():
    # threads=0 asks for the omp backend's default: OMP_NUM_THREADS where set (the first number of a
    # list), else the CPUs this process may run on; the serial backend runs on one.
    given = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    expected = int(given) if given.isdigit() and int(given) > 0 else len(os.sched_getaffinity(0))
    kwargs = dict(vary={"initial.theta1": np.linspace(1.0, 2.5, 4)}, t=0.1)
    assert lockstep.solve("double_pendulum", backend="omp", threads=0, **kwargs).attrs["threads"] == expected
    assert lockstep.solve("double_pendulum", backend="omp", threads=2, **kwargs).attrs["threads"] == 2
    assert lockstep.solve("double_pendulum", backend="serial", **kwargs).attrs["threads"] == 1


def test_arrays_of_any_float_dtype_and_order():
    # The compiled solve converts float32 / Fortran-order arrays; values exact in float32 give the
    # same bits as float64 C-order arrays.
    model = lockstep.model("double_pendulum")._engine
    P = np.tile([1.0, 1.0, 1.0, 0.75, 9.8125], (3, 1))
    q0, v0 = model.initial_state(P, np.tile([2.0, 2.5, 0.0, 0.0], (3, 1)))
    q0, v0 = q0.astype(np.float32).astype(float), v0.astype(np.float32).astype(float)
    save = np.array([0.5, 1.0])
    ref = _lockstep.solve(model, P, q0, v0, 0.0, 1.0, save)
    other = _lockstep.solve(model, np.asfortranarray(P, dtype=np.float32), np.asfortranarray(q0, dtype=np.float32),
                            v0.astype(np.float32), 0.0, 1.0, save.astype(np.float32), {}, "serial")
    assert ref["outputs"].tobytes() == other["outputs"].tobytes()
    assert ref["outputs"].shape == (3, 2, 12) and ref["y_final"].shape == (3, 12)


# ---- refusals: each names the argument, the expected shape or the closest valid name ------------------

@pytest.mark.parametrize("kwargs,message", [
    (dict(vary={"params.L22": [1.0]}), r"unknown parameter 'params.L22' of model 'double_pendulum'; did you mean 'params.L2'\?"),
    (dict(vary={"L2": [1.0]}), r"'L2' must be 'params.NAME' or 'initial.NAME'; did you mean 'params.L2'\?"),
    (dict(vary={"initial.theta": [1.0]}), r"did you mean 'initial.theta1'\?"),
    (dict(vary={"params.L2": [[1.0, 2.0]]}), r"vary\['params.L2'\] must be a 1-D array .* got shape \(1, 2\)"),
    (dict(vary={"params.L2": [1.0, 2.0], "params.L1": [1.0]}), r"same length .*'params.L2': \(2,\), 'params.L1': \(1,\)"),
    (dict(vary={"params.L2": [1.0, 2.0]}, members=3), r"members=3 disagrees with the length of the vary arrays \(2\)"),
    (dict(params={"l2": 1.0}), r"unknown parameter 'l2' of model 'double_pendulum'; did you mean 'L2'\?"),
    (dict(initial={"omega": 1.0}), r"unknown initial input 'omega'.*did you mean 'omega1'\?"),
    (dict(method="radua5"), r"method='radua5' is not one of .*; did you mean 'radau5'\?"),
    (dict(formulation="index-3"), r"did you mean 'index3'\?"),
    (dict(backend="opm"), r"did you mean 'omp'\?"),
    (dict(save=[[0.1, 0.2]]), r"save must be a 1-D array of times, got shape \(1, 2\)"),
    (dict(t=(0.0, 1.0), save=[0.5, 2.0]), r"save: every time must lie in \[t0, t1\]"),
    (dict(t=(1.0, 0.0)), r"t must be \(t0, t1\) with finite t0 < t1"),
    (dict(rtol=-1.0), r"rtol must be a finite number > 0"),
    (dict(atol={"lambda": 1e-6, "x": 1.0}), r"atol: unknown group 'x'"),
    (dict(method="bdf"), r"BDF on the index-3 formulation is allowed with fixed steps only"),  # the engine's refusal
])
def test_bad_arguments_raise_value_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        lockstep.solve("double_pendulum", **kwargs)


def test_a_member_count_beyond_the_machines_memory_raises_value_error_before_allocating():
    # 10^15 double pendulums: their parameters alone are 40 bytes each, beyond any machine's memory.
    huge = 10 ** 15
    said = (r"members=1000000000000000: 1000000000000000 members would need ([0-9.e+]+) GiB for the per-member "
            r"arrays alone \(([0-9]+) bytes each: parameters and initial inputs, [^)]*\); this machine has "
            r"([0-9.e+]+) GiB")
    with pytest.raises(ValueError, match=said) as solve_refused:
        lockstep.solve("double_pendulum", members=huge, t=0.1, save=[0.1])
    with pytest.raises(ValueError, match=said.replace("initial inputs, ", "initial inputs, initial state, exponents")):
        lockstep.lyapunov("double_pendulum", members=huge, t=1.0)
    needed, per_member, physical = (float(x) for x in re.search(said, str(solve_refused.value)).groups())
    # The double pendulum's 5 parameters, q0 and v0 (n = 2) and y at two points (ny = 10) at the least.
    assert per_member >= 8 * (5 + 2 * 2 + 2 * 10)
    assert needed == pytest.approx(huge * per_member / 1024 ** 3, rel=1e-2)
    assert 0 < physical < needed


def test_unknown_keyword_suggests_the_solver_option():
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'hmax'; did you mean 'h_max'\?"):
        lockstep.solve("pendulum", hmax=0.1)


def test_compiled_solve_checks_shapes():
    model = lockstep.model("double_pendulum")._engine
    P = np.ones((3, 5))
    with pytest.raises(ValueError, match=r"q0 must have shape \(3, 4\), got \(3, 5\)"):
        _lockstep.solve(model, P, np.zeros((3, 5)), np.zeros((3, 4)), 0.0, 1.0, [1.0])
    with pytest.raises(ValueError, match=r"params must have shape \(3, 5\), got \(3, 4\)"):
        _lockstep.solve(model, np.ones((3, 4)), np.zeros((3, 4)), np.zeros((3, 4)), 0.0, 1.0, [1.0])
    with pytest.raises(ValueError, match=r"unknown solver option 'rtoll'"):
        _lockstep.solve(model, P, np.zeros((3, 4)), np.zeros((3, 4)), 0.0, 1.0, [1.0], {"rtoll": 1e-6})


# ---- results files and studies ----------------------------------------------------------------------

STUDY = """[model]
name = "double_pendulum"
params = { m2 = 1.5 }
[time]
t1 = 1.0
save = { every = 0.25 }
[ensemble]
members = 5
sampler = "sobol"
vary = { "params.L2" = { uniform = [0.8, 1.0] }, "initial.theta1" = { uniform = [1.5, 2.5] } }
[output]
trajectories = true
statistics = ["mean", "q95"]
"""


def test_run_study_and_open_results(tmp_path, lockstep_exe):
    study = tmp_path / "study.toml"
    study.write_text(STUDY)
    kept = lockstep.run_study(study, out_dir=tmp_path / "out")
    assert (tmp_path / "out" / "results.h5").is_file() and (tmp_path / "out" / "members.csv").is_file()
    temporary = lockstep.run_study(study)  # into a temporary directory, loaded, removed
    assert "results_path" not in temporary.attrs
    for ds in (kept, temporary):
        assert dict(ds.sizes) == {"member": 5, "time": 5, "coordinate": 4, "constraint": 2, "value": 12}
        assert ds.time.values.tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
        assert list(ds.status_name.values) == ["success"] * 5
        assert ds.attrs["t0"] == 0.0 and ds.attrs["t1"] == 1.0 and ds.attrs["model"] == "double_pendulum"
        assert ds.mean_q.dims == ("time", "coordinate") and ds.q95_lam.attrs["probability"] == 0.95
    assert kept.q.values.tobytes() == temporary.q.values.tobytes()
    # The same members through lockstep.solve: the fixed override, the sampled values, the same bits.
    ds = lockstep.solve("double_pendulum", vary={k: kept[k].values for k in ("params.L2", "initial.theta1")},
                        params={"m2": 1.5}, t=1.0, save=kept.time.values)
    assert ds.q.values.tobytes() == kept.q.values.tobytes()


def test_coordinates_are_labelled_with_the_models_names(tmp_path, lockstep_exe, source_dir, monkeypatch):
    """The coordinate dimension carries the model's names (built-in, equations file) or q0, q1, ...
    (a header without coordinate_names), in solve's Dataset, in results.h5 and in open_results'."""
    monkeypatch.setenv("LOCKSTEP_CACHE_DIR", str(tmp_path / "cache"))  # not the session's cache
    dp = lockstep.model("double_pendulum")
    assert dp.coordinates == ["x1", "y1", "x2", "y2"]
    ds = lockstep.solve(dp, vary={"initial.theta1": [1.5, 2.0]}, t=0.5, save=[0.0, 0.25, 0.5])
    assert list(ds.coordinate.values) == ["x1", "y1", "x2", "y2"]
    assert ds.q.sel(coordinate="y2").values.tobytes() == ds.q.isel(coordinate=3).values.tobytes()
    assert list(lockstep.model("chain2").coordinates) == ["x1", "y1", "x2", "y2"]
    assert lockstep.model("andrews").coordinates[1] == "Theta"
    fourbar = lockstep.model(str(source_dir / "examples/models/fourbar.toml"))
    assert fourbar.coordinates == ["th1", "th2", "th3"]
    header = tmp_path / "unnamed.hpp"
    text = (source_dir / "include/lockstep/model/double_pendulum.hpp").read_text()
    unnamed = text.replace("namespace lockstep::models {", "namespace mine {\nusing namespace lockstep;")
    unnamed = unnamed.replace('name = "double_pendulum"', 'name = "unnamed_pendulum"')
    unnamed = "\n".join(line for line in unnamed.splitlines() if "coordinate_names" not in line)
    header.write_text(unnamed)
    assert lockstep.model(str(header)).coordinates == ["q0", "q1", "q2", "q3"]
    study = tmp_path / "study.toml"
    study.write_text(STUDY)
    kept = lockstep.run_study(study, out_dir=tmp_path / "out")
    with h5py.File(tmp_path / "out" / "results.h5", "r") as f:
        assert [c.decode() if isinstance(c, bytes) else c for c in f.attrs["coordinate_names"]] == ["x1", "y1", "x2", "y2"]
    assert list(kept.coordinate.values) == ["x1", "y1", "x2", "y2"]
    assert "coordinate_names" not in kept.attrs
    assert kept.mean_q.sel(coordinate="x2").dims == ("time",)


def test_xarray_backend_opens_results_by_engine_name(tmp_path, lockstep_exe):
    """engine="lockstep" is found through the package's entry point (the build tree's dist-info, an
    installation's, or a wheel's) and gives open_results' Dataset; drop_variables is honoured; the
    backend claims lockstep's results files and nothing else."""
    from xarray.backends.plugins import list_engines

    from lockstep._xarray_backend import LockstepBackendEntrypoint

    assert isinstance(list_engines().get("lockstep"), LockstepBackendEntrypoint)
    study = tmp_path / "study.toml"
    study.write_text(STUDY)
    kept = lockstep.run_study(study, out_dir=tmp_path / "out")
    results = tmp_path / "out" / "results.h5"
    opened = xr.open_dataset(results, engine="lockstep")
    assert opened.q.values.tobytes() == kept.q.values.tobytes()
    assert set(opened.data_vars) == set(kept.data_vars)
    dropped = xr.open_dataset(results, engine="lockstep", drop_variables=["q", "mean_q"])
    assert "q" not in dropped and "mean_q" not in dropped and "v" in dropped
    backend = LockstepBackendEntrypoint()
    assert backend.guess_can_open(str(results))
    other = tmp_path / "other.h5"
    with h5py.File(other, "w") as f:
        f["x"] = [1.0]
    assert not backend.guess_can_open(str(other))
    assert not backend.guess_can_open(str(tmp_path / "missing.h5"))
    assert not backend.guess_can_open(str(study))
    with pytest.raises(ValueError, match="not a lockstep results file"):
        xr.open_dataset(other, engine="lockstep")


LYAPUNOV_STUDY = """[model]
name = "linear_oscillator"
params = {{ d = 5.0 }}
[solver]
rtol = 1e-8
atol = 1e-8
{limit}
[time]
t1 = 50.0
[ensemble]
vary = {{ "params.k1" = {{ grid = [1.0, 3.0] }} }}
[lyapunov]
renormalize = 1.0
"""


def test_open_results_reads_the_lyapunov_group(tmp_path, lockstep_exe):
    study = tmp_path / "lyapunov.toml"
    study.write_text(LYAPUNOV_STUDY.format(limit=""))
    ds = lockstep.run_study(study, out_dir=tmp_path / "out")
    p = ds.attrs.get("lyapunov_exponents", ds.lyapunov_exponents.attrs["lyapunov_exponents"])
    assert ds.lyapunov_exponents.dims == ("member", "exponent") and ds.lyapunov_exponents.shape == (2, p)
    assert ds.lyapunov_history.dims == ("member", "estimate", "exponent")
    # The same values as the file and as members.csv (lambda_j, lyapunov_t_end), bit for bit.
    with h5py.File(tmp_path / "out" / "results.h5", "r") as f:
        assert ds.lyapunov_exponents.values.tobytes() == f["lyapunov/exponents"][()].tobytes()
        assert ds.lyapunov_t_end.values.tobytes() == f["lyapunov/t_end"][()].tobytes()
    rows = list(csv.DictReader(open(tmp_path / "out" / "members.csv")))
    for i, row in enumerate(rows):
        assert float(row["lambda_1"]) == ds.lyapunov_exponents.values[i, 0]
        assert float(row["lyapunov_t_end"]) == ds.lyapunov_t_end.values[i] == 50.0
    assert list(ds.lyapunov_status.values) == [1, 1]
    # A run stopped by max_steps: its status, the estimate it reached, and where it stopped (< t1).
    study.write_text(LYAPUNOV_STUDY.format(limit="max_steps = 300"))
    stopped = lockstep.run_study(study)
    assert (stopped.lyapunov_status.values == 2).all()  # max_steps
    assert np.isfinite(stopped.lyapunov_exponents.values).all()
    assert (stopped.lyapunov_t_end.values < 50.0).all() and (stopped.lyapunov_t_end.values > stopped.lyapunov_t_start.values).all()


SENSITIVITY_STUDY = """
[model]
name = "pendulum"
[time]
t1 = 0.5
save = { every = 0.25 }
[ensemble.vary]
"initial.theta0" = { uniform = [0.2, 0.6] }
"params.L" = { uniform = [0.9, 1.1] }
[output]
exceedance = { y = -0.9 }
[lyapunov]
exponents = 1
renormalize = 0.25
[sensitivity]
base = 64
second_order = true
"""


def test_open_results_reads_the_sensitivity_group(tmp_path, lockstep_exe):
    study = tmp_path / "sensitivity.toml"
    study.write_text(SENSITIVITY_STUDY)
    ds = lockstep.run_study(study, out_dir=tmp_path / "out")
    assert list(ds.input.values) == ["initial.theta0", "params.L"]
    assert ds.sensitivity_first_q.dims == ("time", "coordinate", "input") and ds.sensitivity_first_q.shape == (3, 2, 2)
    assert ds.sensitivity_second.dims == ("time", "value", "input", "input2")
    assert ds.sensitivity_first_q.attrs["sensitivity_intervals"] == "bootstrap"
    # The file's values, bit for bit, and the design's members: 64 rows of 2 + 2 + 2.
    with h5py.File(tmp_path / "out" / "results.h5", "r") as f:
        assert ds.sensitivity_total_v.values.tobytes() == f["sensitivity/total/v"][()].tobytes()
        assert ds.sensitivity_rows_used.values.tobytes() == f["sensitivity/rows_used"][()].tobytes()
    assert ds.sizes["member"] == 64 * 6
    assert ds.sensitivity_lyapunov_first.dims == ("exponent", "input") and ds.sensitivity_lyapunov_first.shape == (1, 2)
    # The exceedance of the bob's height, beside the indices: its threshold in the state layout (y is
    # coordinate 1), and the count the probability comes from.
    assert ds.exceedance_threshold.values[1] == -0.9 and np.isnan(ds.exceedance_threshold.values[0])
    assert ds.exceedance_probability.dims == ("time", "value")
    assert (ds.exceedance_probability.values[:, 1] == ds.exceedance_above.values[:, 1] / 384).all()
    # At t1 = 0.5, about a quarter period, the bob passes near the bottom, where its height is -L: the
    # length causes nearly all of the height's spread. Every total index is at least about its
    # first-order one.
    assert ds.sensitivity_total_q.sel(input="params.L", coordinate="y").isel(time=-1) > 0.9
    assert (ds.sensitivity_total_q.isel(time=-1) >= ds.sensitivity_first_q.isel(time=-1) - 0.05).all()


DERIVATIVE_STUDY = """
[model]
name = "pendulum"
[time]
t1 = 0.5
[ensemble]
members = 64
sampler = "sobol"
[ensemble.vary]
"initial.theta0" = { uniform = [0.2, 0.6] }
"params.L" = { uniform = [0.9, 1.1] }
[derivative_measures]
"""


def test_open_results_reads_the_derivative_measures(tmp_path, lockstep_exe):
    study = tmp_path / "derivatives.toml"
    study.write_text(DERIVATIVE_STUDY)
    ds = lockstep.run_study(study, out_dir=tmp_path / "out")
    assert list(ds.input.values) == ["initial.theta0", "params.L"]
    assert ds.derivative_nu_q.dims == ("coordinate", "input") and ds.derivative_nu_q.shape == (2, 2)
    assert ds.derivative_total_bound_lam.dims == ("constraint", "input")
    assert ds.derivative_variance.dims == ("state",) and ds.derivative_members_used.dims == ("state",)
    assert ds.derivative_nu_q.attrs["derivative_t"] == 0.5 and ds.derivative_nu_q.attrs["derivative_refused"] == ""
    with h5py.File(tmp_path / "out" / "results.h5", "r") as f:
        assert ds.derivative_nu_stderr_v.values.tobytes() == f["derivative_measures/nu_stderr/v"][()].tobytes()
        assert ds.derivative_total_bound_q.values.tobytes() == f["derivative_measures/total_bound/q"][()].tobytes()
    assert (ds.derivative_members_used.values == 64).all()
    # Near the bottom at t1 (about a quarter period) the bob's height is about -L: L's bound on it is
    # at least its total index, near 1, and nu of y by L near 1 (dy/dL is about -1).
    assert ds.derivative_total_bound_q.sel(input="params.L", coordinate="y") > 0.9
    assert abs(ds.derivative_nu_q.sel(input="params.L", coordinate="y") - 1.0) < 0.1


def test_open_results_reads_trajectories_lazily(tmp_path, lockstep_exe):
    study = tmp_path / "study.toml"
    study.write_text(STUDY)
    lockstep.run_study(study, out_dir=tmp_path / "out")
    ds = lockstep.open_results(tmp_path / "out" / "results.h5")
    q = ds.q.isel(member=1).values  # reads one member
    moved = tmp_path / "elsewhere.h5"
    shutil.move(tmp_path / "out" / "results.h5", moved)
    assert list(ds.status_name.values) == ["success"] * 5  # member values were read at open
    with pytest.raises(OSError):
        ds.v.values  # trajectories are read when used: the file is gone
    shutil.move(moved, tmp_path / "out" / "results.h5")
    assert ds.q.isel(member=1).values.tobytes() == q.tobytes()


def test_run_study_bad_file_raises_value_error(tmp_path, lockstep_exe):
    study = tmp_path / "bad.toml"
    study.write_text(STUDY.replace("[time]", "[time]\natoll = 1"))
    with pytest.raises(ValueError, match=r"bad.toml:\d+:\d+: error: unknown key"):
        lockstep.run_study(study)


def test_open_results_refuses_other_versions(tmp_path, lockstep_exe):
    import h5py

    study = tmp_path / "study.toml"
    study.write_text(STUDY)
    lockstep.run_study(study, out_dir=tmp_path / "out")
    with h5py.File(tmp_path / "out" / "results.h5", "r+") as f:
        f.attrs["format_version"] = 2
    with pytest.raises(ValueError, match="results format version 2"):
        lockstep.open_results(tmp_path / "out" / "results.h5")


# ---- a model file ------------------------------------------------------------------------------------

def test_model_file_compiles_into_the_given_cache_and_agrees_with_the_command(model_cache, source_dir, tmp_path,
                                                                               lockstep_exe, model_file_lanes):
    path = source_dir / "examples" / "models" / "fourbar.toml"
    fourbar = lockstep.model(path)
    assert fourbar.source == str(path) and fourbar._engine.compiled
    assert any(model_cache.rglob("*.so")), "the engine went to LOCKSTEP_CACHE_DIR"
    again = lockstep.model(str(path))
    assert not again._engine.compiled  # found in the cache
    assert (fourbar.n, fourbar.m, fourbar.k) == (3, 2, 0)
    names = [p.name for p in fourbar.parameters]
    with pytest.raises(ValueError, match=r"did you mean"):
        lockstep.solve(fourbar, params={names[0] + "x": 1.0})

    first = fourbar.parameters[0]
    study = tmp_path / "fourbar_study.toml"
    study.write_text(f"""[model]
source = "{path}"
[time]
t1 = 1.0
save = {{ every = 0.25 }}
[ensemble]
members = 3
vary = {{ "params.{first.name}" = {{ uniform = [{first.default * 0.9!r}, {first.default * 1.1!r}] }} }}
[output]
trajectories = true
""")
    ref = lockstep.run_study(study, backend="serial")  # the command finds the engine in the same cache
    ds = lockstep.solve(fourbar, vary={f"params.{first.name}": ref[f"params.{first.name}"].values}, t=1.0,
                        save=ref.time.values)
    assert list(ds.status_name.values) == ["success"] * 3
    assert ds.q.values.tobytes() == ref.q.values.tobytes() and ds.lam.values.tobytes() == ref.lam.values.tobytes()

    # BDF and Radau IIA, in SIMD lanes where the engine has them: every step attempt of every member one
    # lane-attempt.
    bdf = lockstep.solve(fourbar, vary={f"params.{first.name}": ref[f"params.{first.name}"].values}, t=1.0,
                         method="bdf", formulation="ggl")
    assert list(bdf.status_name.values) == ["success"] * 3
    told = subprocess.run([lockstep_exe, "describe", str(path)], capture_output=True, text=True, check=True).stdout
    in_lanes = "lanes per core with every method" in told  # describe says how this engine runs its members here
    for solved in (ds, bdf):
        assert ("lane_attempts" in solved.attrs) == in_lanes, (told, solved.attrs)
        if not in_lanes:
            continue
        width = int(re.search(r"SIMD lanes: members in (\d+) lanes per core", told).group(1))
        attempts = int(solved.steps.sum() + solved.rejected.sum())
        assert solved.attrs["lane_attempts_of_members"] == attempts <= solved.attrs["lane_attempts"]
        assert solved.attrs["lane_attempts"] % width == 0
        assert solved.attrs["lane_utilization"] == attempts / solved.attrs["lane_attempts"]
        # The corrector's Newton iterations and factorizations likewise: the members' counts, in whole packs.
        for name, counter in (("newton_iterations", solved.newton_iterations),
                              ("factorizations", solved.lu_factorizations)):
            ran, useful = solved.attrs[f"lane_{name}"], solved.attrs[f"lane_{name}_of_members"]
            assert 0 < useful == int(counter.sum()) <= ran and ran % width == 0, (name, ran, useful)
            assert solved.attrs[f"lane_{name}_utilization"] == useful / ran


def test_model_file_errors_raise_value_error(model_cache, source_dir):
    equations = source_dir / "tests" / "model_files" / "equations"
    with pytest.raises(ValueError, match=r"typo.toml:16:\d+: error: syntax error"):
        lockstep.model(equations / "typo.toml")
    with pytest.raises(ValueError, match=r"unknown_symbol.toml:\d+:\d+: error: .*did you mean 'theta1'\?"):
        lockstep.model(equations / "unknown_symbol.toml")
    with pytest.raises(ValueError, match="no such file"):
        lockstep.model("no/such/model.toml")
