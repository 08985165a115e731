"""Andrews' squeezing mechanism as a mechanism file (tests/model_files/mechanisms/andrews.toml) against the
built-in model (include/lockstep/model/andrews.hpp) and the published reference solution.

Andrews' squeezer (Giles 1978, Manning 1981; Schiehlen, Multibody Systems Handbook, 1990; Hairer &
Wanner, Solving Ordinary Differential Equations II, 1996, section VII.7) is the IVP Test Set's
"andrews" problem (Mazzia, Iavernaro & Magherini, Test Set for IVP Solvers). The mechanism file states
its seven bodies, seven revolute joints in a tree and three revolute joints cut at the point E where
K2, K3, K4 and K6 meet; lockstep forms the equations by the tree algorithms. Its coordinates are the
hand model's seven angles (beta, gamma, delta, epsilon absolute; Theta, Phi, Omega relative), in the
order the joints join the tree, and it has the hand model's six constraint rows.
"""
import numpy as np
import pytest

import lockstep

TOL = 1e-10
T1 = 0.03  # the Test Set's interval
HAND = ["beta", "Theta", "gamma", "Phi", "delta", "Omega", "epsilon"]
# The Test Set's consistent start, in the order of HAND (v0 = 0).
START = np.array([-0.0617138900142764496358948458001, 0.0, 0.455279819163070380255912382449,
                  0.222668390165885884674473185609, 0.487364979543842550225598953530,
                  -0.222668390165885884674473185609, 1.23054744454982119249735015568])

# The Test Set's reference solution at t = 0.03 (PSIDE at rtol = atol = 1e-14; andrews.f, subroutine
# SOLN), in the order of HAND; tests/python/test_mbs_benchmarks.py and
# tests/method/test_set_reference_test.cpp hold the same values.
REFERENCE = np.array([0.1581077119629904e+2, -0.1575637105984298e+2, 0.4082224013073101e-1,
                      -0.5347301163226948e+0, 0.5244099658805304e+0, 0.5347301163226948e+0,
                      0.1048080741042263e+1])


def absolute_angles(q):
    """The absolute angles of K1 .. K7 from the seven angles in the order of HAND (the hand model's
    and, reordered by name, the mechanism's joint coordinates: relative joint angles add along the tree
    O-K1-K2, B-K3, A-K5-K4, A-K7-K6)."""
    beta, Theta, gamma, Phi, delta, Omega, epsilon = np.moveaxis(np.asarray(q, dtype=float), -1, 0)
    return np.stack([beta, beta + Theta, gamma, delta + Phi, delta, epsilon + Omega, epsilon], axis=-1)


def wrapped(a):
    return (a + np.pi) % (2 * np.pi) - np.pi


@pytest.fixture(scope="module")
def bodies(source_dir, model_cache):
    return lockstep.model(str(source_dir / "tests" / "model_files" / "mechanisms" / "andrews.toml"))


def in_hand_order(model, q):
    """The mechanism's coordinates q [..., n] reordered by name into the order of HAND."""
    return np.asarray(q)[..., [model.coordinates.index(name) for name in HAND]]


def test_the_squeezer_as_bodies_has_the_hand_models_coordinates_and_equations(bodies):
    assert bodies.n == 7 and bodies.m == 6
    assert sorted(bodies.coordinates) == sorted(HAND)
    hand = lockstep.model("andrews")
    assert hand.n == 7 and hand.m == 6
    # The same generalized coordinates: M and Q agree entry by entry once reordered, at the published
    # start (at rest) and at a state with every rate nonzero, where Q holds the Coriolis and centrifugal
    # terms of K2, K4 and K6 on their moving pivots.
    order = [bodies.coordinates.index(name) for name in HAND]
    rng = np.random.default_rng(3)
    for q, v in ((START, np.zeros(7)), (rng.uniform(-3, 3, 7), rng.uniform(-50, 50, 7))):
        theirs = hand.evaluate(q=q, v=v)
        q_ours, v_ours = np.empty(7), np.empty(7)
        q_ours[order], v_ours[order] = q, v
        ours = bodies.evaluate(q=q_ours, v=v_ours)
        M = ours["mass"][np.ix_(order, order)]
        Q = ours["force"][order]
        assert np.abs(M - theirs["mass"]).max() < 1e-12 * np.abs(theirs["mass"]).max(), (M, theirs["mass"])
        assert np.abs(Q - theirs["force"]).max() < 1e-10 * np.abs(theirs["force"]).max(), (Q, theirs["force"])
    # The mechanism's own start is the published one, on its constraints, at rest.
    ours = bodies.evaluate()
    q0 = np.empty(7)
    q0[order] = START
    assert np.abs(ours["constraint"]).max() < 1e-15
    assert np.abs(hand.evaluate(q=START)["constraint"]).max() < 1e-15
    initial = lockstep.solve(bodies, t=(0.0, 1e-12), save=[0.0], rtol=TOL, atol=TOL, backend="serial")
    assert np.abs(initial.q.values[0, 0] - q0).max() < 1e-15 and np.abs(initial.v.values[0, 0]).max() == 0.0


def test_the_squeezer_as_bodies_moves_as_the_built_in_one_and_meets_the_test_set(bodies):
    results = {}
    for name, model in (("bodies", bodies), ("hand", "andrews")):
        ds = lockstep.solve(model, t=(0.0, T1), method="radau5", formulation="index3", rtol=TOL, atol=TOL,
                            backend="serial")
        assert list(ds.status_name.values) == ["success"], ds.status_name.values
        results[name] = ds.final_q.values[0]
    ours = in_hand_order(bodies, results["bodies"])
    theirs = results["hand"]
    difference = np.abs(wrapped(absolute_angles(ours) - absolute_angles(theirs))).max()
    assert difference < 1e-6, (difference, ours, theirs)
    # Against the reference, coordinate by coordinate (beta has turned 2.5 times: no wrapping needed).
    for q, what in ((ours, "bodies"), (theirs, "hand")):
        error = np.abs(q - REFERENCE).max()
        assert error < 1e-6, (what, error, q, REFERENCE)
    print(f"max |absolute angle difference| bodies - hand = {difference:.3e}; max |q - reference|: bodies "
          f"{np.abs(ours - REFERENCE).max():.3e}, hand {np.abs(theirs - REFERENCE).max():.3e}")
