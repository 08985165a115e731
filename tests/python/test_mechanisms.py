"""Mechanism files (docs/reference/mechanism-file.md): bodies, joints and forces give the motion of the
same mechanism written by hand.

Each mechanism of tests/model_files/mechanisms/ is solved beside its hand-written counterpart -- the
built-in double pendulum and slider crank, both in absolute coordinates with their joints as
constraints, the four-bar of examples/mechanisms/ against examples/models/fourbar.toml in absolute link
angles, and Bricard's linkage against examples/mbs/a04_bricard.hpp in natural coordinates -- from the same
parameters and initial inputs, and the positions both describe agree to the solver's tolerance. The
joint-coordinate models are smaller (n = 2, 3, 3 against 4, 9, 3) and none of their equations was
written by hand: the tree algorithms and the cut joints (include/lockstep/multibody/) formed them.
"""
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import lockstep

RTOL = 1e-10


def solve(model, t1, **keywords):
    ds = lockstep.solve(model, t=(0.0, t1), rtol=RTOL, atol=RTOL, **keywords)
    assert (ds.status_name.values == "success").all(), ds.status_name.values
    return ds


@pytest.fixture(scope="module")
def mechanisms(source_dir, model_cache):
    return source_dir / "tests" / "model_files" / "mechanisms"


def test_the_double_pendulum_as_bodies_moves_as_the_built_in_one(mechanisms):
    bodies = lockstep.model(str(mechanisms / "double_pendulum.toml"))
    assert bodies.n == 2 and bodies.m == 0
    vary = {"initial.theta1": [0.3, 1.2, 2.0], "initial.omega2": [0.0, -1.0, 0.5]}
    ours = solve(bodies, 2.0, vary=vary, params={"m2": 0.7, "L1": 0.9})
    theirs = solve("double_pendulum", 2.0, vary=vary, params={"m2": 0.7, "L1": 0.9})
    L1, L2 = 0.9, 1.0
    a1 = ours.final_q.values[:, 0]
    a2 = a1 + ours.final_q.values[:, 1]
    x2 = L1 * np.sin(a1) + L2 * np.sin(a2)
    y2 = -L1 * np.cos(a1) - L2 * np.cos(a2)
    q = theirs.final_q.values
    assert np.abs(x2 - q[:, 2]).max() < 1e-7 and np.abs(y2 - q[:, 3]).max() < 1e-7, (x2, y2, q[:, 2:])


def test_the_slider_crank_as_bodies_moves_as_the_built_in_one(mechanisms):
    bodies = lockstep.model(str(mechanisms / "slider_crank.toml"))
    assert bodies.n == 3 and bodies.m == 2
    params = {"T": 0.3, "k": 40.0, "c": 0.5}
    vary = {"initial.phi1_0": [0.0, 0.7, 2.5]}
    ours = solve(bodies, 0.1, vary=vary, params=params)
    theirs = solve("slider_crank", 0.1, vary=vary, params=params)
    l1, l2 = 0.15, 0.30
    phi1 = ours.final_q.values[:, 0]
    phi2 = phi1 + ours.final_q.values[:, 1]
    x3 = l1 * np.cos(phi1) + l2 * np.cos(phi2)
    q = theirs.final_q.values
    wrapped = lambda a: (a + np.pi) % (2 * np.pi) - np.pi
    assert np.abs(wrapped(phi1 - q[:, 2])).max() < 1e-7, (phi1, q[:, 2])
    assert np.abs(wrapped(phi2 - q[:, 5])).max() < 1e-7, (phi2, q[:, 5])
    assert np.abs(x3 - q[:, 6]).max() < 1e-8, (x3, q[:, 6])
    # The slider stays on its guide and keeps its orientation.
    phi3 = phi2 + ours.final_q.values[:, 2]
    assert np.abs(wrapped(phi3)).max() < 1e-9
    assert np.abs(l1 * np.sin(phi1) + l2 * np.sin(phi2)).max() < 1e-9


def test_the_four_bar_as_bodies_moves_as_the_equations_file(mechanisms, source_dir, model_file_lanes,
                                                             model_files_get_lanes):
    """In SIMD lanes where model files get them here (the suite's other mechanisms go without:
    conftest.py): the tree algorithms and cut joints a mechanism file's model is made of compile on
    packs."""
    bodies = lockstep.model(str(source_dir / "examples" / "mechanisms" / "fourbar.toml"))
    assert bodies.n == 3 and bodies.m == 2
    vary = {"initial.theta0": [0.5, 1.0, 2.0], "params.tau": [0.2, 0.5, 1.0]}
    ours = solve(bodies, 2.0, vary=vary)
    assert ("lane_attempts" in ours.attrs) == model_files_get_lanes(), ours.attrs
    theirs = solve(lockstep.model(str(source_dir / "examples" / "models" / "fourbar.toml")), 2.0, vary=vary)
    th1 = ours.final_q.values[:, 0]
    th2 = th1 + ours.final_q.values[:, 1]
    th3 = th2 + ours.final_q.values[:, 2]
    q = theirs.final_q.values
    wrapped = lambda a: (a + np.pi) % (2 * np.pi) - np.pi
    for mine, hand in ((th1, q[:, 0]), (th2, q[:, 1]), (th3, q[:, 2])):
        assert np.abs(wrapped(mine - hand)).max() < 1e-7, (mine, hand)


def test_a_heavy_top_on_a_spherical_joint_precesses_steadily_at_its_closed_form_rate(mechanisms):
    """Steady precession of a heavy symmetric top about the vertical at rate Omega with spin omega3 about
    its axis, tilted by theta: m g l = Omega (C omega3 - A' Omega cos(theta)), A' = A + m l^2 about the
    tip (the gyroscopic moment balancing gravity's; Goldstein, Poole & Safko, Classical Mechanics, 2002, section
    5.7). The Cardan angles x-y-z (a, b, c) start at (theta, 0, 0) with rates (0, Omega sin(theta),
    Omega cos(theta) + s), the top's angular velocity Omega e_z + s e_axis; the axis must then turn
    about the vertical at Omega with the tilt unchanged."""
    top = lockstep.model(str(mechanisms / "heavy_top.toml"))
    assert top.n == 3 and top.m == 0
    mass, l, A, C, g = 0.5, 0.1, 2e-3, 3e-3, 9.81
    A_tip = A + mass * l * l
    theta = np.array([0.3, 0.5, 1.0])
    omega3 = np.array([60.0, 80.0, 100.0])
    cos = np.cos(theta)
    Omega = (C * omega3 - np.sqrt((C * omega3) ** 2 - 4 * A_tip * cos * mass * g * l)) / (2 * A_tip * cos)
    spin = omega3 - Omega * cos
    vary = {"initial.theta0": theta, "initial.rate_y": Omega * np.sin(theta), "initial.rate_z": Omega * cos + spin}
    t1 = 1.0
    ds = solve(top, t1, vary=vary, save=np.linspace(0.0, t1, 11))
    a, b = ds.q.values[:, :, 0], ds.q.values[:, :, 1]
    axis = np.stack([np.sin(b), -np.sin(a) * np.cos(b), np.cos(a) * np.cos(b)], axis=-1)  # R e_z
    times = ds.time.values
    for i in range(len(theta)):
        phase = Omega[i] * times
        expected = np.stack([np.sin(theta[i]) * np.sin(phase), -np.sin(theta[i]) * np.cos(phase),
                             np.full_like(phase, np.cos(theta[i]))], axis=-1)
        assert np.abs(axis[i] - expected).max() < 1e-7, (i, np.abs(axis[i] - expected).max())


def test_a_spatial_loop_without_forces_keeps_its_kinetic_energy(mechanisms):
    """The RSSR four-bar has no gravity and no force elements: its kinetic energy (1/2) v^T M(q) v, with
    M from the model's own evaluation, must stay what it was while the constraint forces do no work."""
    loop = lockstep.model(str(mechanisms / "rssr.toml"))
    assert loop.n == 7 and loop.m == 5
    ds = solve(loop, 0.1, vary={"initial.omega0": [1.0, 3.0, -2.0]}, save=np.linspace(0.0, 0.1, 6))
    for i in range(3):
        energies = []
        for j in range(ds.time.size):
            q, v = ds.q.values[i, j], ds.v.values[i, j]
            found = loop.evaluate(q=q, v=v)
            assert np.abs(found["constraint"]).max() < 1e-9
            energies.append(0.5 * v @ found["mass"] @ v)
        energies = np.array(energies)
        assert energies[0] > 1e-3 and np.abs(energies / energies[0] - 1).max() < 1e-8, energies


def rotation(axis, angle):
    """Rodrigues' rotation about a unit axis."""
    u = np.asarray(axis, dtype=float)
    K = np.array([[0, -u[2], u[1]], [u[2], 0, -u[0]], [-u[1], u[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def test_bricards_linkage_as_bodies_moves_as_the_natural_coordinates_model(mechanisms, source_dir):
    """Five revolute joints in the tree and a sixth cut, whose five equations hold one redundant row
    along the whole motion, against examples/mbs/a04_bricard.hpp (24 natural coordinates, 24
    constraints). The loop is cut at V3: the tree is ground - rod1 - rod2 (joints V1, V2) and
    ground - rod5 - rod4 - rod3 (V0, then V5 and V4 stated from the far side, so reversed). The joint
    points V2 .. V5 follow from the joint angles by turning the rods about their joints' axes (all rods'
    frames are the world's at the start)."""
    bodies = lockstep.model(str(mechanisms / "bricard.toml"))
    assert bodies.n == 5 and bodies.m == 5
    vary = {"initial.omega": [0.5, 2.0, 4.0]}
    ours = solve(bodies, 2.0, vary=vary)
    theirs = solve(lockstep.model(str(source_dir / "examples" / "mbs" / "a04_bricard.hpp")), 2.0, vary=vary,
                   formulation="ggl")
    assert (ours.dropped_rows.values != 0).all(), "one of the cut joint's rows is redundant"
    V = np.array([(0, 0, 0), (1, 0, 0), (1, 1, 0), (1, 1, 1), (0, 1, 1), (0, 0, 1)], dtype=float)
    axes = {"V0": (0, 1, 0), "V1": (0, 0, 1), "V2": (1, 0, 0), "V4": (0, 0, 1), "V5": (1, 0, 0)}

    def joint(name, angle):
        """The joint's motion x -> R x + p: a turn about its axis through its point."""
        R = rotation(axes[name], angle)
        return R, V[int(name[1])] - R @ V[int(name[1])]

    def then(a, b):  # a after b
        return a[0] @ b[0], a[0] @ b[1] + a[1]

    def inverse(a):
        return a[0].T, -a[0].T @ a[1]

    for i in range(3):
        q = {name: float(ours.final_q.sel(coordinate=name).values[i]) for name in axes}
        rod1 = joint("V1", q["V1"])
        rod2 = then(rod1, joint("V2", q["V2"]))
        rod5 = joint("V0", q["V0"])
        rod4 = then(rod5, inverse(joint("V5", q["V5"])))
        rod3 = then(rod4, inverse(joint("V4", q["V4"])))
        at = lambda pose, k: pose[0] @ V[k] + pose[1]
        found = np.array([at(rod2, 2), at(rod2, 3), at(rod4, 4), at(rod4, 5)])
        hand = theirs.final_q.values[i, :12].reshape(4, 3)
        assert np.abs(found - hand).max() < 1e-7, (i, np.abs(found - hand).max())
        # Across the cut joint V3 the two rods meet: the loop stays closed.
        assert np.abs(at(rod3, 3) - at(rod2, 3)).max() < 1e-9


def test_a_driven_crank_follows_its_drive_and_the_slider_its_kinematics(mechanisms, tmp_path, lockstep_exe):
    """The slider crank with its crank driven at phi1 = w t (a drive, a constraint row) instead of given a
    start: the assembly starts it at phi1 = 0 with rate w, and the slider stays where the crank's angle
    puts it, x3 = l1 cos(phi1) + sqrt(l2^2 - l1^2 sin^2(phi1))."""
    text = (mechanisms / "slider_crank.toml").read_text()
    text = text.replace('initial = { position = "phi1_0", velocity = "omega0" }', 'drive = "w*t"')
    text = text.replace('[inputs]', 'w = { default = 40.0, unit = "rad/s" }\n\n[inputs]', 1)
    assert 'drive = "w*t"' in text
    (tmp_path / "driven.toml").write_text(text)
    driven = lockstep.model(str(tmp_path / "driven.toml"))
    assert driven.n == 3 and driven.m == 3
    ds = solve(driven, 0.2, vary={"params.w": [10.0, 40.0, -25.0]}, save=np.linspace(0.0, 0.2, 5))
    w = np.array([10.0, 40.0, -25.0])[:, None]
    t = ds.time.values[None, :]
    l1, l2 = 0.15, 0.30
    phi1 = ds.q.values[:, :, 0]
    assert np.abs(phi1 - w * t).max() < 1e-9
    assert np.abs(ds.v.values[:, :, 0] - w).max() < 1e-7
    phi2 = phi1 + ds.q.values[:, :, 1]
    x3 = l1 * np.cos(phi1) + l2 * np.cos(phi2)
    expected = l1 * np.cos(w * t) + np.sqrt(l2 ** 2 - (l1 * np.sin(w * t)) ** 2)
    assert np.abs(x3 - expected).max() < 1e-9
    # Driven to no freedom at all: `lockstep check` counts it so, and it is no defect.
    done = subprocess.run([lockstep_exe, "check", str(tmp_path / "driven.toml")], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"ok\s+mobility\s+the Grubler-Kutzbach count gives n - m = 3 - 3 = 0 degrees of freedom, as "
                     r"the rank of G does: its 1 drive prescribes the whole motion", done.stdout), done.stdout


def test_check_counts_the_mobility_and_names_the_joints_rows(source_dir, mechanisms, tmp_path, lockstep_exe):
    """`lockstep check` on mechanism files: the Grubler-Kutzbach count n - m against the rank of G, the
    rows named by joint and condition. The four-bar's count agrees with the rank; Bricard's linkage
    counts 0 but moves (one row of its cut joint is redundant along the whole motion); a parallelogram
    four-bar started with all its links on one line is a singular assembly (a fold, where it can change
    into an anti-parallelogram): the rank drops there and nowhere near it. A loop that cannot close
    is named by its joint's row with the largest residual."""
    def check(path, expect=0):
        done = subprocess.run([lockstep_exe, "check", str(path)], capture_output=True, text=True, timeout=600)
        assert done.returncode == expect, done.stdout + done.stderr
        return done.stdout

    said = check(source_dir / "examples" / "mechanisms" / "fourbar.toml")
    assert re.search(r"ok\s+mobility\s+the Grubler-Kutzbach count gives n - m = 3 - 2 = 1 degree of freedom, as "
                     r"the rank of G does", said), said
    said = check(mechanisms / "bricard.toml")
    assert re.search(r"ok\s+rank\s+constraint Phi\[4\] \(joint V3, revolute, closes a loop: the axis' alignment "
                     r"\(2 of 2\)\) is redundant", said), said
    assert re.search(r"ok\s+mobility\s+the Grubler-Kutzbach count gives n - m = 5 - 5 = 0 degrees of freedom; "
                     r"the rank of G, 4, gives 1, here and at a configuration along the motion", said), said
    text = (source_dir / "examples" / "mechanisms" / "fourbar.toml").read_text()
    for old, new in (("L2  = { default = 0.35", "L2  = { default = 0.30"), ("L3  = { default = 0.25", "L3  = { default = 0.10"),
                     ("theta0 = { default = 1.0", "theta0 = { default = 0.0"), ("guess = -0.5", "guess = 0"),
                     ("guess = 0.8", "guess = 0")):
        assert old in text, old
        text = text.replace(old, new)
    (tmp_path / "parallelogram.toml").write_text(text)
    said = check(tmp_path / "parallelogram.toml", expect=1)
    assert re.search(r"DEFECT\s+rank\s+constraint Phi\[0\] \(joint D, revolute, closes a loop: the offset along x "
                     r"of the parent side's frame\) has no gradient", said), said
    assert re.search(r"WARN\s+mobility\s+.*gives 2 at the initial state, but 1 at a configuration along the "
                     r"motion: the start is a singular assembly", said), said
    # A rocker too short for the loop to close at the given crank angle: the assembly leaves a residual,
    # and the check names the row of the joint that does not close.
    short = (source_dir / "examples" / "mechanisms" / "fourbar.toml").read_text().replace(
        "L3  = { default = 0.25", "L3  = { default = 0.05")
    (tmp_path / "short_rocker.toml").write_text(short)
    said = check(tmp_path / "short_rocker.toml", expect=1)
    assert re.search(r"DEFECT\s+initial\s+the default initial positions are off the constraints by .* The largest "
                     r"residual of the initial positions, [0-9.e-]+, is in Phi\[[01]\] \(joint D, revolute, closes a "
                     r"loop: the offset along [xy] of the parent side's frame\)", said), said


# ---- what a mechanism reports: poses, points and joint reactions (docs/reference/mechanism-file.md) ----

PENDULUM = """
[mechanism]
name = "compound_pendulum"
planar = true
gravity = [0, "-g", 0]

[parameters]
mass = 2.0
L = 0.8
J = 0.05
g = 9.81

[inputs]
theta0 = 0.4
omega0 = 1.5

[bodies.link]
mass = "mass"
centre_of_mass = ["L", 0]
inertia = "J"
points = { bob = ["L", 0] }

[joints.pivot]
type = "revolute"
parent = "ground"
child = "link"
coordinates = ["theta"]
initial = { position = "theta0", velocity = "omega0" }
"""


def test_a_pendulums_pose_point_and_pivot_reaction_are_the_hand_derived_ones(tmp_path):
    """A compound pendulum, mass m with its centre of mass at distance L from the pivot on its x axis and
    inertia J about it, at angle theta from the world x axis (gravity -g e_y). In the body's axes (the
    pivot's frame on the link) Newton's law for the centre of mass, with theta'' from the moment about the
    pivot, (J + m L^2) theta'' = -m g L cos(theta), gives the pivot's force on the link
        fx = m (g sin(theta) - L theta'^2),   fy = m g cos(theta) J / (J + m L^2),
    and no moment (a revolute joint transmits none about its axis)."""
    (tmp_path / "pendulum.toml").write_text(PENDULUM)
    pendulum = lockstep.model(str(tmp_path / "pendulum.toml"))
    names = [name for name, _ in pendulum._engine.quantities]
    assert names == ["link.x", "link.y", "link.angle", "link.bob.x", "link.bob.y", "pivot.fx", "pivot.fy",
                     "pivot.tz"]
    ds = solve(pendulum, 3.0, vary={"initial.theta0": [0.4, -1.2, 2.5], "initial.omega0": [1.5, 0.0, -4.0]},
               save=np.linspace(0.0, 3.0, 13))
    m, L, J, g = 2.0, 0.8, 0.05, 9.81
    theta, omega = ds.q.values[:, :, 0], ds.v.values[:, :, 0]
    z = ds.quantities
    assert np.abs(z.sel(quantity="link.x").values).max() == 0.0 and np.abs(z.sel(quantity="link.y").values).max() == 0.0
    turn = np.angle(np.exp(1j * (z.sel(quantity="link.angle").values - theta)))
    assert np.abs(turn).max() < 1e-12
    assert np.abs(z.sel(quantity="link.bob.x").values - L * np.cos(theta)).max() < 1e-12
    assert np.abs(z.sel(quantity="link.bob.y").values - L * np.sin(theta)).max() < 1e-12
    scale = m * (g + L * np.abs(omega).max() ** 2)
    fx = m * (g * np.sin(theta) - L * omega ** 2)
    fy = m * g * np.cos(theta) * J / (J + m * L * L)
    assert np.abs(z.sel(quantity="pivot.fx").values - fx).max() < 1e-10 * scale
    assert np.abs(z.sel(quantity="pivot.fy").values - fy).max() < 1e-10 * scale
    assert np.abs(z.sel(quantity="pivot.tz").values).max() < 1e-12 * scale
    assert "quantity_descriptions" in ds.attrs and len(ds.attrs["quantity_descriptions"]) == len(names)


def test_the_slider_cranks_reactions_at_dead_centre_are_the_hand_derived_ones(mechanisms):
    """The slider crank at phi1 = 0 turning at omega (the crank, rod and slider on the x axis): every
    angular acceleration enters the centres' x accelerations times sin(phi1) = 0, so they are the
    centripetal ones alone, -omega^2 l1 / 2 (crank), -omega^2 l1 (1 + l1 / (2 l2)) (the rod's centre,
    its angular rate -omega l1 / l2) and -omega^2 l1 (1 + l1 / l2) (the slider). So the wrist pin pushes
    the slider with m3 times the last, the guide pushes it along x not at all and carries it in y with the
    wrist pin (m3 g together), and the ground's pin pushes the crank with the sum of all three. The
    guide is a cut joint (its multipliers), the pins tree joints (Newton-Euler at the accelerations)."""
    crank = lockstep.model(str(mechanisms / "slider_crank.toml"))
    omega = np.array([150.0, 80.0, -40.0])
    ds = solve(crank, 1e-3, vary={"initial.omega0": omega}, save=[0.0, 1e-3])
    z = ds.quantities.isel(time=0)
    l1, l2, m1, m2, m3, g = 0.15, 0.30, 0.36, 0.151104, 0.075552, 9.81
    w2 = omega ** 2
    slider = -m3 * w2 * l1 * (1 + l1 / l2)
    ground = -w2 * l1 * (m1 / 2 + m2 * (1 + l1 / (2 * l2)) + m3 * (1 + l1 / l2))
    scale = np.abs(ground).max()
    assert np.abs(z.sel(quantity="wrist_pin.fx").values - slider).max() < 1e-9 * scale
    assert np.abs(z.sel(quantity="guide.fx").values).max() < 1e-9 * scale
    assert np.abs(z.sel(quantity="guide.fy").values + z.sel(quantity="wrist_pin.fy").values - m3 * g).max() < 1e-9 * scale
    assert np.abs(z.sel(quantity="crank.fx").values - ground).max() < 1e-9 * scale
    for joint in ("crank", "crank_pin", "wrist_pin"):  # revolute: no moment about the axis
        assert np.abs(z.sel(quantity=f"{joint}.tz").values).max() < 1e-9 * scale


def quaternion_matrix(w, x, y, z):
    """The rotation matrices of unit quaternions (arrays of the same shape): [..., 3, 3]."""
    return np.stack([np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
                     np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
                     np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1)], -2)


def test_a_precessing_tops_orientation_and_tip_reaction_are_the_closed_form_ones(mechanisms):
    """The heavy top in steady precession (the test above): its axis turns about the vertical at Omega
    with the tilt theta, so its centre of mass, l along the axis from the tip, runs round a horizontal
    circle and the tip's force on the top is m (a_c - g_vec) = m (-Omega^2 l a_x, -Omega^2 l a_y, g), a the
    axis, with no moment (a spherical joint). The reported quaternion must turn e_z into that axis, and
    turn the reported force (in the top's axes, the joint's frame on it) into that world force."""
    top = lockstep.model(str(mechanisms / "heavy_top.toml"))
    mass, l, A, C, g = 0.5, 0.1, 2e-3, 3e-3, 9.81
    A_tip = A + mass * l * l
    theta, omega3 = np.array([0.3, 1.0]), np.array([60.0, 100.0])
    cos = np.cos(theta)
    Omega = (C * omega3 - np.sqrt((C * omega3) ** 2 - 4 * A_tip * cos * mass * g * l)) / (2 * A_tip * cos)
    vary = {"initial.theta0": theta, "initial.rate_y": Omega * np.sin(theta), "initial.rate_z": omega3}
    ds = solve(top, 0.5, vary=vary, save=np.linspace(0.0, 0.5, 6))
    z = ds.quantities
    R = quaternion_matrix(*(z.sel(quantity=f"top.q{c}").values for c in "wxyz"))
    times = ds.time.values
    for i in range(len(theta)):
        phase = Omega[i] * times
        axis = np.stack([np.sin(theta[i]) * np.sin(phase), -np.sin(theta[i]) * np.cos(phase),
                         np.full_like(phase, np.cos(theta[i]))], axis=-1)
        assert np.abs(R[i, :, :, 2] - axis).max() < 1e-7
        expected = mass * np.stack([-Omega[i] ** 2 * l * axis[:, 0], -Omega[i] ** 2 * l * axis[:, 1],
                                    np.full_like(phase, g)], axis=-1)
        local = np.stack([z.sel(quantity=f"tip.f{c}").values[i] for c in "xyz"], axis=-1)
        world = np.einsum("sij,sj->si", R[i], local)
        assert np.abs(world - expected).max() < 1e-6 * mass * g, np.abs(world - expected).max()
        moment = np.stack([z.sel(quantity=f"tip.t{c}").values[i] for c in "xyz"], axis=-1)
        assert np.abs(moment).max() < 1e-9 * mass * g * l
    for c in "xyz":
        assert np.abs(z.sel(quantity=f"top.{c}").values).max() == 0.0


def test_a_studys_quantities_are_those_python_computes_and_enter_its_statistics(source_dir, tmp_path, lockstep_exe):
    """The four-bar's study through `lockstep run` (serial, with a checkpoint: the journaled path) and
    the same members through lockstep.solve (omp): the quantities results.h5 holds are the solve's bit
    for bit, its mean and max over the members are those of the trajectories it holds, and an exceedance
    may name a quantity."""
    (tmp_path / "fourbar.toml").write_text((source_dir / "examples" / "mechanisms" / "fourbar.toml").read_text())
    study = tmp_path / "study.toml"
    study.write_text("""[model]
source = "fourbar.toml"
[solver]
formulation = "ggl"
rtol = 1e-7
atol = 1e-7
[time]
t1 = 0.5
save = { every = 0.125 }
[ensemble]
members = 5
[ensemble.vary]
"initial.theta0" = { uniform = [0.5, 1.5] }
[output]
trajectories = true
statistics = ["mean", "max"]
exceedance = { "D.fy" = 0.0 }
""")
    for flags, out in (([], "out"), (["--checkpoint-every", "60"], "journaled")):
        run = subprocess.run([lockstep_exe, "run", str(study), "-o", str(tmp_path / out), "--backend", "serial",
                              "--quiet"] + flags, capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stderr
    ref = lockstep.open_results(tmp_path / "out" / "results.h5")
    journaled = lockstep.open_results(tmp_path / "journaled" / "results.h5")
    model = lockstep.model(str(tmp_path / "fourbar.toml"))
    ds = lockstep.solve(model, vary={"initial.theta0": ref["initial.theta0"].values}, t=(0.0, 0.5),
                        save=ref.time.values, formulation="ggl", rtol=1e-7, atol=1e-7, backend="omp", threads=2)
    assert list(ref.quantity.values) == [name for name, _ in model._engine.quantities]
    assert ref.quantities.shape == (5, 5, len(ref.quantity)) and np.isfinite(ref.quantities.values).all()
    assert ref.quantities.values.tobytes() == ds.quantities.values.tobytes()
    assert ref.quantities.values.tobytes() == journaled.quantities.values.tobytes()
    assert ref.max_quantities.values.tobytes() == ref.quantities.max("member").values.tobytes()
    assert np.abs(ref.mean_quantities.values - ref.quantities.mean("member").values).max() < 1e-12 * np.abs(
        ref.quantities.values).max()
    column = 2 * model.n + 2 * model.m + list(ref.quantity.values).index("D.fy")  # the value order: state, quantities
    above = (ref.quantities.sel(quantity="D.fy").values > 0.0).sum(axis=0)
    assert (ref.exceedance_above.values[:, column] == above).all()
    assert np.isnan(ref.exceedance_threshold.values[:column]).all() and ref.exceedance_threshold.values[column] == 0.0


MASS_AND_FORCE_CHECK = r"""
#include "lockstep/core/elementary_definitions.hpp"
#include <cstdio>
#include <cstring>
#include <random>
#include "lockstep/core/dual.hpp"
#include "planar.hpp"
#include "spatial.hpp"

// M and Q by mass_and_force and by mass and force, at random states, on doubles and on the dual
// numbers the solvers differentiate with: the same bits, or a line that says where not.
template <class Model, class T>
int check(std::mt19937_64& engine, const char* name) {
  using namespace lockstep;
  constexpr int n = Model::n;
  double p[Model::n_params];
  for (int i = 0; i < Model::n_params; ++i) p[i] = Model::params[i].default_value;
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  int failures = 0;
  for (int state = 0; state < 20; ++state) {
    vec<T, n> q, v;
    for (int i = 0; i < n; ++i) {
      q[i] = T(u(engine));
      v[i] = T(u(engine));
    }
    const T t(u(engine));
    const mat<T, n, n> M = Model::template mass<T, double>(q, p);
    const vec<T, n> Q = Model::template force<T, double>(t, q, v, p);
    mat<T, n, n> M2;
    vec<T, n> Q2;
    Model::template mass_and_force<T, double>(t, q, v, p, M2, Q2);
    if (std::memcmp(&M, &M2, sizeof M) != 0 || std::memcmp(&Q, &Q2, sizeof Q) != 0) {
      std::printf("%s: state %d differs\n", name, state);
      ++failures;
    }
  }
  return failures;
}

int main() {
  std::mt19937_64 engine(7);
  using A = lockstep::mechanisms::andrews_bodies;
  using B = lockstep::mechanisms::bricard_bodies;
  const int failures = check<A, double>(engine, "andrews, double") +
                       check<A, lockstep::dual<double, 4>>(engine, "andrews, dual") +
                       check<B, double>(engine, "bricard, double") +
                       check<B, lockstep::dual<double, 4>>(engine, "bricard, dual");
  std::printf("%s\n", failures == 0 ? "same bits" : "differ");
  return failures == 0 ? 0 : 1;
}
"""


def test_mass_and_force_give_the_bits_of_mass_and_force(source_dir, mechanisms, tmp_path):
    """A mechanism file's mass_and_force, which places its tree once for M and Q (model/concept.hpp), gives
    the bits of its mass and force, which place it each: the solvers call it where they need both. A planar
    mechanism with force elements (Andrews' squeezer) and a spatial one (Bricard's linkage), on doubles
    and on dual numbers."""
    compiler = shutil.which("c++") or shutil.which("g++")
    if compiler is None:
        pytest.skip("no C++ compiler on PATH")
    script = source_dir / "host" / "model_files" / "equations_to_header.py"
    for name, header in (("andrews.toml", "planar.hpp"), ("bricard.toml", "spatial.hpp")):
        subprocess.run([sys.executable, str(script), str(mechanisms / name), "-o", str(tmp_path / header)], check=True)
    (tmp_path / "check.cpp").write_text(MASS_AND_FORCE_CHECK)
    built = subprocess.run([compiler, "-std=c++20", "-O1", "-ffp-contract=off", f"-I{source_dir / 'include'}",
                            f"-I{tmp_path}", str(tmp_path / "check.cpp"), "-o", str(tmp_path / "check")],
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr[-4000:]
    ran = subprocess.run([str(tmp_path / "check")], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0 and "same bits" in ran.stdout, ran.stdout
