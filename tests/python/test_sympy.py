"""Models from SymPy (lockstep.Model.from_sympy): the double pendulum written with SymPy agrees with
the built-in one — its equations to 1e-14 at random states, and a non-chaotic adaptive run to t = 3
within 10 (atol + rtol |y|) with equal statuses — and what an equations file cannot express is
refused by name; what the generator or the compiler refuses in the generated file is reported at the
caller's line, naming the user's entry and expression. Events given to from_sympy and
from_lagranges_method become the equations file's [events] table."""

import inspect
import math
import re
import subprocess

import numpy as np
import pytest
import sympy

import lockstep


def sympy_double_pendulum():
    x1, y1, x2, y2 = sympy.symbols("x1 y1 x2 y2", real=True)
    vx1, vy1, vx2, vy2 = sympy.symbols("vx1 vy1 vx2 vy2", real=True)
    m1, m2, L1, L2, g = sympy.symbols("m1 m2 L1 L2 g", positive=True)
    th1, th2, w1, w2 = sympy.symbols("theta1 theta2 omega1 omega2", real=True)
    # The built-in model's tables, in its order (include/lockstep/model/double_pendulum.hpp).
    parameters = {m1: 1.0, m2: 1.0, L1: 1.0, L2: 1.0, g: 9.81}
    inputs = {th1: 2.0, th2: 2.5, w1: 0.0, w2: 0.0}
    position = {x1: L1 * sympy.sin(th1), y1: -L1 * sympy.cos(th1)}
    position[x2] = position[x1] + L2 * sympy.sin(th2)
    position[y2] = position[y1] - L2 * sympy.cos(th2)
    # v0 = d position / dt along the angle rates (the built-in model differentiates the same map).
    velocity = {c: sympy.diff(e, th1) * w1 + sympy.diff(e, th2) * w2 for c, e in position.items()}
    return lockstep.Model.from_sympy(
        "sympy_double_pendulum",
        coordinates=[x1, y1, x2, y2],
        velocities=[vx1, vy1, vx2, vy2],
        mass=sympy.diag(m1, m1, m2, m2),
        force=[0, -m1 * g, 0, -m2 * g],
        constraints={"rod1": (x1**2 + y1**2 - L1**2) / 2, "rod2": ((x2 - x1)**2 + (y2 - y1)**2 - L2**2) / 2},
        parameters=parameters,
        inputs=inputs,
        initial_q=position,
        initial_v=velocity,
        description="double pendulum from SymPy")


def relative(a, b):
    scale = max(np.max(np.abs(b)), 1e-300) if np.size(b) else 1.0
    return float(np.max(np.abs(a - b)) / scale) if np.size(b) else 0.0


def test_sympy_double_pendulum_has_the_builtin_equations(model_cache):
    mine, builtin = sympy_double_pendulum(), lockstep.model("double_pendulum")
    assert (mine.n, mine.m, mine.k) == (builtin.n, builtin.m, builtin.k)
    assert mine.parameter_names == builtin.parameter_names and mine.input_names == builtin.input_names
    for inputs in ({}, {"theta1": 0.3, "theta2": -1.1, "omega1": 0.7, "omega2": -2.0}):
        for a, b in zip(mine.initial_state(inputs=inputs), builtin.initial_state(inputs=inputs)):
            assert relative(a, b) <= 1e-14
    rng = np.random.default_rng(20261125)
    worst = 0.0
    for _ in range(50):
        params = {name: value * rng.uniform(0.5, 1.5) for name, value in
                  zip(builtin.parameter_names, (p.default for p in builtin.parameters))}
        q, v, t = rng.normal(size=4), rng.normal(size=4), rng.uniform(0, 10)
        a, b = mine.evaluate(t, q, v, params), builtin.evaluate(t, q, v, params)
        for key in ("mass", "force", "constraint", "constraint_jacobian", "constraint_rate"):
            worst = max(worst, relative(a[key], b[key]))
    assert worst <= 1e-14, worst


def test_sympy_double_pendulum_solves_as_the_builtin_one(model_cache):
    # Small angles: the motion is regular, so a last-bit difference cannot grow chaotically.
    vary = {"initial.theta1": np.linspace(0.1, 0.3, 6), "initial.theta2": np.linspace(-0.2, 0.2, 6)}
    rtol = 1e-8
    a = lockstep.solve(sympy_double_pendulum(), vary=vary, t=(0.0, 3.0), rtol=rtol, atol=rtol)
    b = lockstep.solve("double_pendulum", vary=vary, t=(0.0, 3.0), rtol=rtol, atol=rtol)
    assert (a.status.values == b.status.values).all() and (b.status.values == 1).all()
    for name in ("q", "v"):
        x, y = a[name].values, b[name].values
        assert np.all(np.abs(x - y) <= 10 * (rtol + rtol * np.abs(y))), name


def test_what_an_equations_file_cannot_say_is_refused(model_cache):
    x, v, L = sympy.symbols("x v L")
    with pytest.raises(ValueError, match=r"^force for coordinate x = besselj\(0, x\): function 'besselj'"):
        lockstep.Model.from_sympy("bad", coordinates=[x], velocities=[v], mass=[[1]],
                                  force=[sympy.besselj(0, x)], parameters={L: 1.0})
    with pytest.raises(ValueError, match="not a string"):  # text is never parsed (sympify would evaluate it)
        lockstep.Model.from_sympy("bad", coordinates=[x], velocities=[v], mass=[[1]],
                                  force=["__import__('os').getcwd()"], parameters={L: 1.0})
    with pytest.raises(ValueError, match=r"mass\[0\]\[0\]: .*not a string"):
        lockstep.Model.from_sympy("bad", coordinates=[x], velocities=[v], mass=[["x**2"]], force=[0],
                                  parameters={L: 1.0})
    with pytest.raises(ValueError, match="mass must be 1 x 1"):
        lockstep.Model.from_sympy("bad", coordinates=[x], velocities=[v], mass=[[1, 0], [0, 1]],
                                  force=[0], parameters={L: 1.0})


def test_a_lagranges_method_pendulum_moves_as_the_builtin_one(model_cache):
    # The planar pendulum in Cartesian coordinates from its Lagrangian, L = m (x'^2 + y'^2) / 2 - m g y,
    # with the rod as a holonomic constraint written as the built-in model writes it, (x^2 + y^2 - L^2) / 2
    # (another scaling of Phi leaves the motion alone but scales lambda, and with it the error weights
    # and the steps taken, so the runs would agree only to their tolerance, not to 10 (atol + rtol |y|)).
    from sympy.physics.mechanics import LagrangesMethod, dynamicsymbols

    x, y = dynamicsymbols("x y")
    m, L, g, th, w = sympy.symbols("m L g theta0 omega0", real=True)
    t = dynamicsymbols._t
    lagrangian = m * (x.diff(t) ** 2 + y.diff(t) ** 2) / 2 - m * g * y
    method = LagrangesMethod(lagrangian, [x, y], hol_coneqs=[(x**2 + y**2 - L**2) / 2])
    pend = lockstep.Model.from_lagranges_method(
        "lagrange_pendulum", method, parameters={m: 1.0, L: 1.0, g: 9.81}, inputs={th: 1.0, w: 0.0},
        initial_q={x: L * sympy.sin(th), y: -L * sympy.cos(th)},
        initial_v={x: L * w * sympy.cos(th), y: L * w * sympy.sin(th)})
    assert (pend.n, pend.m, pend.k) == (2, 1, 0)
    vary = {"initial.theta0": np.linspace(0.2, 1.2, 5), "initial.omega0": np.linspace(-0.5, 0.5, 5)}
    rtol = 1e-8
    a = lockstep.solve(pend, vary=vary, t=(0.0, 3.0), rtol=rtol, atol=rtol)
    b = lockstep.solve("pendulum", vary=vary, t=(0.0, 3.0), rtol=rtol, atol=rtol)
    assert (a.status.values == b.status.values).all() and (b.status.values == 1).all()
    # The same equations to the last bits (x**2/2 + y**2/2 - L**2/2 against 0.5 (x x + y y - L L)), so a
    # step decision may flip: positions agree within 10 (atol + rtol |y|); velocities and multipliers,
    # index-2 and index-3 components whose errors Radau IIA weighs by h and h^2 on index 3, agree to
    # their own accuracy, about 100 times coarser (docs/METHODS.md, digits per tolerance).
    for name, factor in (("q", 10), ("v", 1000), ("lam", 1000)):
        x_, y_ = a[name].values, b[name].values
        assert np.all(np.abs(x_ - y_) <= factor * (rtol + rtol * np.abs(y_))), name
    rng = np.random.default_rng(7)
    for _ in range(20):
        q, v = rng.normal(size=2), rng.normal(size=2)
        e, f = pend.evaluate(0.3, q, v), lockstep.model("pendulum").evaluate(0.3, q, v)
        for key in ("mass", "force", "constraint", "constraint_jacobian", "constraint_rate"):
            assert relative(e[key], f[key]) <= 1e-14, key


def test_a_lagranges_method_knife_edge_has_the_builtin_nonholonomic_row(model_cache):
    # The knife edge on an inclined plane from its Lagrangian, L = m (x'^2 + y'^2) / 2 + I theta'^2 / 2
    # + m g sin(alpha) x, and the blade's non-holonomic constraint sin(theta) x' - cos(theta) y' = 0.
    from sympy.physics.mechanics import LagrangesMethod, dynamicsymbols

    x, y, theta = dynamicsymbols("x y theta")
    m, I, g, alpha, tau = sympy.symbols("m I g alpha tau", real=True)
    omega0, u0, x0, y0, theta0 = sympy.symbols("omega0 u0 x0 y0 theta0", real=True)
    t = dynamicsymbols._t
    lagrangian = (m * (x.diff(t) ** 2 + y.diff(t) ** 2) / 2 + I * theta.diff(t) ** 2 / 2
                  + m * g * sympy.sin(alpha) * x)
    method = LagrangesMethod(lagrangian, [x, y, theta],
                             nonhol_coneqs=[sympy.sin(theta) * x.diff(t) - sympy.cos(theta) * y.diff(t)])
    knife = lockstep.Model.from_lagranges_method(
        "lagrange_knife_edge", method,
        parameters={m: 1.0, I: 0.1, g: 9.81, alpha: 0.3, tau: 0.0},  # tau: no torque in this Lagrangian
        inputs={omega0: 2.0, u0: 0.0, x0: 0.0, y0: 0.0, theta0: 0.0},
        initial_q={x: x0, y: y0, theta: theta0},
        initial_v={x: u0 * sympy.cos(theta0), y: u0 * sympy.sin(theta0), theta: omega0})
    builtin = lockstep.model("knife_edge")
    assert (knife.n, knife.m, knife.k) == (3, 0, 1)
    rng = np.random.default_rng(11)
    for _ in range(20):
        q, v = rng.normal(size=3), rng.normal(size=3)
        e, f = knife.evaluate(0.0, q, v), builtin.evaluate(0.0, q, v)
        for key in ("mass", "force", "velocity_constraint", "velocity_jacobian"):
            assert relative(e[key], f[key]) <= 1e-14, key
    vary = {"initial.omega0": np.linspace(0.5, 3.0, 4), "initial.u0": np.linspace(0.0, 1.0, 4)}
    rtol = 1e-8
    a = lockstep.solve(knife, vary=vary, t=(0.0, 3.0), rtol=rtol, atol=rtol)
    b = lockstep.solve(builtin, vary=vary, t=(0.0, 3.0), rtol=rtol, atol=rtol)
    assert (a.status.values == b.status.values).all() and (b.status.values == 1).all()
    assert np.all(np.abs(a.q.values - b.q.values) <= 10 * (rtol + rtol * np.abs(b.q.values)))


def cart_pendulum(**changes):
    """from_sympy's arguments for a cart on a spring with a pendulum, its bob in Cartesian coordinates
    (xc, xb, yb; velocities vxc, vxb, vyb), with `changes` applied."""
    xc, xb, yb, vxc, vxb, vyb = sympy.symbols("xc xb yb vxc vxb vyb", real=True)
    mc, mb, k, L, g, th = sympy.symbols("mc mb k L g theta0", real=True)
    arguments = dict(coordinates=[xc, xb, yb], velocities=[vxc, vxb, vyb], mass=sympy.diag(mc, mb, mb),
                     force=[-k * xc, 0, -mb * g], constraints={"rod": (xb - xc)**2 + yb**2 - L**2},
                     parameters={mc: 1.0, mb: 0.5, k: 20.0, L: 0.8, g: 9.81}, inputs={th: 1.0},
                     initial_q={xb: L * sympy.sin(th), yb: -L * sympy.cos(th)})
    arguments.update(changes)
    return arguments


def test_a_pendulum_on_a_stiff_spring_switches_to_the_implicit_method_and_agrees_with_scipy(model_cache):
    # The cart on a spring with a pendulum, the spring damped by c. Members 0-1 (k = 20, 200 N/m,
    # undamped) are not stiff and stay in dopri5; members 2-3 (k = 1e6 N/m, c = 2000 and 20000 N s/m:
    # the cart's mode decays at about -1000 and -20000 per second while the bob swings at 3.5 rad/s)
    # are at rtol 1e-6, and switch to Radau IIA 5. (Stiffness is relative to the accuracy asked for: at
    # rtol 1e-8, dopri5's steps on member 2 are below its stability limit, and it stays explicit.)
    # Each against SciPy's Radau at rtol 1e-12 on the equations in the
    # cart's position xc and the rod's angle theta from the downward vertical, written by hand:
    #     (mc + mb) xc'' + mb L (cos theta theta'' - sin theta theta'^2) = -k xc - c xc',
    #     cos theta xc'' + L theta'' + g sin theta = 0.
    integrate = pytest.importorskip("scipy.integrate")
    xc, vxc = sympy.symbols("xc vxc", real=True)
    k, c = sympy.symbols("k c", real=True)
    mb, g = sympy.symbols("mb g", real=True)
    arguments = cart_pendulum(force=[-k * xc - c * vxc, 0, -mb * g])
    arguments["parameters"] = {**arguments["parameters"], c: 0.0}
    model = lockstep.Model.from_sympy("stiff_spring_pendulum", **arguments)
    springs = {"params.k": np.array([20.0, 200.0, 1e6, 1e6]), "params.c": np.array([0.0, 0.0, 2000.0, 20000.0])}
    rtol, t1 = 1e-6, 2.0
    ds = lockstep.solve(model, method="auto", vary=springs, t=(0.0, t1), save=[t1], rtol=rtol, atol=rtol)
    assert list(ds.status_name.values) == ["success"] * 4
    assert list(ds.method_switches.values[:2]) == [0, 0] and (ds.method_switches.values[2:] >= 1).all()
    assert (ds.steps.values[2:] > ds.explicit_steps.values[2:]).all()
    mc, m_bob, L, gravity, theta0 = 1.0, 0.5, 0.8, 9.81, 1.0
    for i in range(4):
        k_i, c_i = springs["params.k"][i], springs["params.c"][i]

        def rhs(_, y, k_i=k_i, c_i=c_i):
            x, theta, vx, w = y
            matrix = np.array([[mc + m_bob, m_bob * L * np.cos(theta)], [np.cos(theta), L]])
            right = np.array([-k_i * x - c_i * vx + m_bob * L * np.sin(theta) * w**2, -gravity * np.sin(theta)])
            return np.concatenate([[vx, w], np.linalg.solve(matrix, right)])

        x, theta, _, _ = integrate.solve_ivp(rhs, (0.0, t1), [0.0, theta0, 0.0, 0.0], method="Radau", rtol=1e-12,
                                             atol=1e-14).y[:, -1]
        expected = np.array([x, x + L * np.sin(theta), -L * np.cos(theta)])
        assert np.max(np.abs(ds.q.values[i, -1] - expected)) < 20 * rtol, (i, ds.q.values[i, -1], expected)


def line_of(text, content):
    """The 1-based number of the line of text that is `content`."""
    return text.splitlines().index(content) + 1


def test_a_refused_sympy_model_is_reported_at_the_callers_line_in_the_models_terms(model_cache):
    # Arrange: a symbol in the force and one in the mass matrix that are no parameter.
    xc, mb = sympy.symbols("xc mb", real=True)
    kappa, mbx = sympy.symbols("kappa mbx", real=True)
    arguments = cart_pendulum(force=[-kappa * xc, 0, -mb * 9.81], mass=sympy.diag(1, mb, mbx))

    # Act
    with pytest.raises(ValueError) as raised:
        call_line = inspect.currentframe().f_lineno + 1
        lockstep.Model.from_sympy("cart", **arguments)

    # Assert: each of the generator's references names the user's entry and expression, at this file's
    # call; velocities by the user's names; the generated file and its places kept on the last line.
    lines = str(raised.value).splitlines()
    here = f"{__file__}:{call_line}: from_sympy model 'cart', "
    assert lines[0] == here + "mass[2][2] = mbx: error: unknown name 'mbx' in [mass]; did you mean 'mb'? " \
                              "(allowed here: g, k, L, mb, mc, pi, xb, xc, yb)", lines
    assert lines[1].startswith(here + "force for coordinate xc = -kappa*xc: error: unknown name 'kappa' in [force] "), lines
    assert "vxb" in lines[1] and "xb_dot" not in lines[1], lines[1]
    generated = re.fullmatch(r"\(generated equations file: (\S+/sympy/[0-9a-f]{64}\.toml), at (\d+):\d+, (\d+):\d+\)",
                             lines[2])
    assert generated, lines[2]
    with open(generated.group(1)) as f:
        text = f.read()
    assert int(generated.group(2)) == line_of(text, '    "mbx",')
    assert int(generated.group(3)) == line_of(text, 'xc = "-kappa*xc"')


def test_sympy_events_become_the_equations_files_events_table(tmp_path, source_dir):
    # Arrange: events in the bob's height and velocity, the cart's position and time, with and without
    # their optional keys.
    from lockstep import _sympy

    xc, xb, yb, vyb = sympy.symbols("xc xb yb vyb", real=True)
    t = sympy.Symbol("t", real=True)
    events = {"horizontal": (yb, "rising", "stop", "the bob's height"), "bottom": (xb - xc, "both", "count"),
              "rising": vyb, "late": [t - 1, "falling"]}

    # Act
    generated = _sympy.equations_text("cart", **cart_pendulum(events=events, time=t))

    # Assert: one line each, velocities as <coordinate>_dot, only the keys given; each line's origin
    # names the user's event; the generator turns them into the header's event table.
    lines = generated.text.splitlines()
    first = lines.index("[events]") + 1
    assert lines[first:first + 5] == [
        'horizontal = { g = "yb", direction = "rising", action = "stop", description = "the bob\'s height" }',
        'bottom = { g = "xb - xc", direction = "both", action = "count" }',
        'rising = { g = "yb_dot" }',
        'late = { g = "-1 + t", direction = "falling" }',
        ""], lines
    assert [generated.origins[first + i + 1] for i in range(4)] == [
        ("events[horizontal]", "yb"), ("events[bottom]", "xb - xc"), ("events[rising]", "vyb"),
        ("events[late]", "t - 1")]
    (tmp_path / "cart.toml").write_text(generated.text)
    script = source_dir / "host" / "model_files" / "equations_to_header.py"
    subprocess.run(["/usr/bin/python3", str(script), str(tmp_path / "cart.toml"), "-o", str(tmp_path / "cart.hpp")],
                   check=True, timeout=120)
    header = (tmp_path / "cart.hpp").read_text()
    assert "  static constexpr int n_events = 4;\n" in header
    for declared in ('{"horizontal", event_direction::rising, event_action::stop, "the bob\'s height"},',
                     '{"bottom", event_direction::both, event_action::count, ""},',
                     '{"rising", event_direction::both, event_action::record, ""},',
                     '{"late", event_direction::falling, event_action::record, ""},'):
        assert declared in header, declared
    with pytest.raises(ValueError, match=r"events\[late\]: the action must be a string"):
        _sympy.equations_text("cart", **cart_pendulum(events={"late": (t - 1, "falling", 2)}, time=t))


def test_a_sympy_model_with_events_compiles(model_cache):
    yb, vyb = sympy.symbols("yb vyb", real=True)
    model = lockstep.Model.from_sympy("cart_events", **cart_pendulum(events={"horizontal": (yb, "rising", "stop"),
                                                                             "turn": (vyb, "falling", "count")}))
    assert (model.n, model.m, model.k) == (3, 1, 0)


def test_a_bad_event_direction_is_reported_at_the_callers_line(model_cache):
    yb = sympy.Symbol("yb", real=True)

    with pytest.raises(ValueError) as raised:
        call_line = inspect.currentframe().f_lineno + 1
        lockstep.Model.from_sympy("cart", **cart_pendulum(events={"up": (yb, "upwards")}))

    assert str(raised.value).splitlines()[0] == (
        f"{__file__}:{call_line}: from_sympy model 'cart', events[up] = yb: error: the direction of event 'up' "
        "must be one of 'rising', 'falling', 'both', not 'upwards'")


def pendulum_lagranges_method():
    """The pendulum's Lagrangian in Cartesian coordinates: (LagrangesMethod, y(t), t, (m, L, g))."""
    from sympy.physics.mechanics import LagrangesMethod, dynamicsymbols

    x, y = dynamicsymbols("x y")
    m, L, g = sympy.symbols("m L g", real=True)
    t = dynamicsymbols._t
    method = LagrangesMethod(m * (x.diff(t)**2 + y.diff(t)**2) / 2 - m * g * y, [x, y],
                             hol_coneqs=[(x**2 + y**2 - L**2) / 2])
    return method, y, t, (m, L, g)


def test_lagranges_method_events_are_shown_in_dynamicsymbols(model_cache):
    # Arrange: the pendulum's Lagrangian and an event in y'(t) whose action is misspelt.
    method, y, t, (m, L, g) = pendulum_lagranges_method()

    # Act
    with pytest.raises(ValueError) as raised:
        call_line = inspect.currentframe().f_lineno + 1
        lockstep.Model.from_lagranges_method("pendulum_events", method, parameters={m: 1.0, L: 1.0, g: 9.81},
                                             events={"turn": (y.diff(t), "falling", "stopp")})

    # Assert: the event's g as the user wrote it, in y(t); the action's suggestion.
    first = str(raised.value).splitlines()[0]
    assert first == (f"{__file__}:{call_line}: from_lagranges_method model 'pendulum_events', events[turn] = "
                     "Derivative(y(t), t): error: the action of event 'turn' must be one of 'record', 'stop', "
                     "'count', not 'stopp'; did you mean 'stop'?"), first


def test_lagranges_method_events_of_its_multipliers_and_accelerations(model_cache):
    # The pendulum released at rest from the horizontal (x = L, y = 0): its rod's tension T = 3 m g
    # cos(theta) passes 2 m g, rising, at cos(theta*) = 2/3, and y'' = g (3 cos^2(theta) - 1) rises
    # through 0 at cos(theta) = 1/sqrt(3). With sin(theta / 2) = k sin(phi), k = sin(pi / 4), the time
    # from the bottom to theta is sqrt(L / g) F(phi | k^2) and the quarter period sqrt(L / g) K(k^2)
    # (Whittaker & Watson 1927, 22.735). The LagrangesMethod's multiplier is T / L: lam_coeffs = -dPhi/dq
    # gives M q'' + G^T lambda = Q, the sign of lockstep's.
    from scipy.special import ellipk, ellipkinc

    method, y, t, (m, L, g) = pendulum_lagranges_method()
    method.form_lagranges_equations()
    lam = method.lam_vec[0]
    model = lockstep.Model.from_lagranges_method(
        "pendulum_forces", method, parameters={m: 1.0, L: 1.0, g: 9.81},
        initial_q={"x": L}, events={"tension": (lam * L - 2 * m * g, "rising", "count"),
                                    "lift": (y.diff(t, 2), "rising", "count")})
    ds = lockstep.solve(model, t=(0.0, 0.5), rtol=1e-10, atol=1e-10)

    def time_to(theta):
        k2 = 0.5
        phi = math.asin(math.sin(theta / 2.0) / math.sqrt(k2))
        return math.sqrt(1.0 / 9.81) * (ellipk(k2) - ellipkinc(phi, k2))

    first = ds.event_first_time.values[0]
    assert abs(first[0] - time_to(math.acos(2.0 / 3.0))) < 1e-7, first
    assert abs(first[1] - time_to(math.acos(1.0 / math.sqrt(3.0)))) < 1e-7, first


def test_a_cpp_keyword_as_a_coordinate_is_reported_as_that_coordinate(model_cache):
    klass, v = sympy.symbols("class v", real=True)

    with pytest.raises(ValueError) as raised:
        lockstep.Model.from_sympy("keyword", coordinates=[klass], velocities=[v], mass=[[1]], force=[-klass],
                                  parameters={sympy.Symbol("k"): 1.0})

    assert ": from_sympy model 'keyword', coordinate class: error: coordinate 'class' is a C++ keyword" \
        in str(raised.value).splitlines()[0]


def test_a_refused_lagranges_method_model_shows_its_expressions_in_dynamicsymbols(model_cache):
    # Arrange: the pendulum's Lagrangian with g left out of the parameters.
    method, _, _, (m, L, _) = pendulum_lagranges_method()

    # Act
    with pytest.raises(ValueError) as raised:
        call_line = inspect.currentframe().f_lineno + 1
        lockstep.Model.from_lagranges_method("forgotten_g", method, parameters={m: 1.0, L: 1.0})

    # Assert: the force of coordinate y as SymPy's forcing has it; velocities as derivatives of q(t).
    first = str(raised.value).splitlines()[0]
    assert first.startswith(f"{__file__}:{call_line}: from_lagranges_method model 'forgotten_g', force for coordinate y = -g*m: "
                            "error: unknown name 'g' in [force]"), first
    assert "Derivative(y(t), t)" in first and "y__velocity" not in first and "y_dot" not in first, first


def test_compiler_messages_through_the_headers_line_directives_name_the_users_entry():
    # Arrange: the compiler's form of a message about a line of the generated file (the header's #line
    # directives point there), with its context lines around it.
    from lockstep import _sympy

    generated = _sympy.equations_text("cart", **cart_pendulum())
    path = "/cache/sympy/" + "0" * 64 + ".toml"
    line = line_of(generated.text, 'yb = "-g*mb"')
    message = (f"In file included from /cache/engines/.build-1/engine.cpp:4:\n"
               f"{path}: In static member function 'force':\n"
               f"{path}:{line}:5: error: 'yb_dot' was not declared in this scope\n"
               f"cannot compile the model in '{path}' (the compiler's messages are above)")

    # Act
    told = _sympy.explain(message, path, generated, "from_sympy model 'cart'", "user.py:7", {"yb_dot": "vyb"})

    # Assert: the reference names the user's entry (-mb*g, as SymPy prints it) and velocity; every
    # other line is kept as it was.
    assert told.splitlines() == [
        "In file included from /cache/engines/.build-1/engine.cpp:4:",
        f"{path}: In static member function 'force':",
        "user.py:7: from_sympy model 'cart', force for coordinate yb = -g*mb: error: 'vyb' was not declared in this scope",
        f"cannot compile the model in '{path}' (the compiler's messages are above)",
        f"(generated equations file: {path}, at {line}:5)"]
