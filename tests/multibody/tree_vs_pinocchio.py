#!/usr/bin/python3
"""Rebuild lockstep's kinematic trees in Pinocchio and compare poses, velocities, M(q) and Q(q, v).

Usage: tree_vs_pinocchio.py PATH/TO/tree_dump VENV

tree_dump prints lockstep's trees (multibody/tree.hpp) and, at several states, each body's world pose
and spatial velocity, the mass matrix by the composite-rigid-body algorithm and the generalized forces
Q = -C(q, v) by the recursive Newton-Euler algorithm (Featherstone, Rigid Body Dynamics Algorithms, 2008,
sections 6.2 and 5.3), with gravity and with a point force on one body. Pinocchio (Carpentier et al.,
The Pinocchio C++ library, 2019) computes the same with its own algorithms in local coordinates:
pin.crba for M, pin.rnea at zero acceleration for C(q, v) = -Q; each must agree to 1e-12 relative to
the largest entry of the matrix or vector compared. At random accelerations, with gravity and the load,
the spatial force each joint transmits (multibody/tree.hpp, transmitted_forces: what the parent exerts
on the subtree, the joint reactions of a mechanism file) must agree likewise with Pinocchio's data.f
after pin.rnea, the same force in the joint's local frame. Pinocchio comes from PyPI into the virtual
environment VENV (pinocchio_venv.py); exits 77 (ctest: skipped) when PyPI cannot be reached to install it.

The same tree in Pinocchio's terms. Lockstep places body i at X_i = X_parent . P_i . J_i(q_i) . C_i^-1
(P_i, C_i the joint frame in the parent and in the child, J_i the joint's motion); Pinocchio places
joint i's frame at F_i = F_parent . (joint placement) . J_i(q_i), and the bodies on it at F_i . (body
placement). Taking Pinocchio's joint frame to be lockstep's joint frame after the motion, F_i = X_i . C_i,
gives the joint placement B_parent . P_i and the body placement B_i = C_i^-1, where B_parent is where
the parent body sits on its own Pinocchio joint (the identity on the ground). A fixed joint adds no
Pinocchio joint: its body goes onto its parent's Pinocchio joint at B_i = B_parent . P_i . C_i^-1.
Lockstep's revolute joint is exp([u] q) about the unit axis u through the joint frame's origin and its
prismatic joint the translation q u: JointModelRevoluteUnaligned(u) and JointModelPrismaticUnaligned(u).
"""
import os
import subprocess
import sys

import pinocchio_venv

TOLERANCE = 1e-12


def parse(text):
    """The dump as a list of models, each a dict with its bodies, joints and states."""
    models = []
    state = None
    for line in text.splitlines():
        t = line.split()
        key = t[0]
        if key == "model":
            models.append({"name": t[1], "bodies": [], "joints": [], "states": [],
                           "B": int(t[3]), "N": int(t[5])})
            continue
        model = models[-1]
        numbers = lambda a, b: [float(x) for x in t[a:b]]
        if key == "gravity":
            model["gravity"] = numbers(1, 4)
        elif key == "body":
            assert t[2] == "mass" and t[4] == "com" and t[8] == "inertia", line
            model["bodies"].append({"mass": float(t[3]), "com": numbers(5, 8), "inertia": numbers(9, 18)})
        elif key == "joint":
            assert t[2] == "type" and t[4] == "parent" and t[6] == "coordinate" and t[8] == "axis", line
            assert t[12] == "in_parent" and t[25] == "in_child", line
            model["joints"].append({"type": t[3], "parent": int(t[5]), "coordinate": int(t[7]), "axis": numbers(9, 12),
                                    "in_parent": numbers(13, 25), "in_child": numbers(26, 38)})
        elif key == "state":
            state = {"poses": [], "velocities": [], "transmitted": []}
            model["states"].append(state)
        elif key in ("q", "v", "M", "Q", "Q_load", "a"):
            state[key] = [float(x) for x in t[1:]]
        elif key == "pose":
            state["poses"].append(numbers(2, 14))
        elif key == "velocity":
            state["velocities"].append(numbers(2, 8))
        elif key == "transmitted":
            state["transmitted"].append(numbers(2, 8))
        elif key == "load":
            assert t[2] == "point" and t[6] == "world" and t[10] == "force", line
            state["load"] = {"body": int(t[1]), "point": numbers(3, 6), "world": numbers(7, 10),
                             "force": numbers(11, 14)}
        else:
            raise ValueError(f"unknown line: {line}")
    return models


def se3(numbers):
    import numpy as np
    import pinocchio as pin

    return pin.SE3(np.array(numbers[:9]).reshape(3, 3), np.array(numbers[9:12]))


def build(m):
    """The Pinocchio model of lockstep's tree m, each body's (Pinocchio joint, placement on it) and each
    lockstep coordinate's index in Pinocchio's q and v."""
    import numpy as np
    import pinocchio as pin

    model = pin.Model()
    model.gravity = pin.Motion(np.array(m["gravity"]), np.zeros(3))
    on = []  # (Pinocchio joint, B_i) of each body
    of_joint = {}  # Pinocchio joint -> lockstep coordinate
    for i, (b, j) in enumerate(zip(m["bodies"], m["joints"])):
        parent_joint, parent_placement = (0, pin.SE3.Identity()) if j["parent"] < 0 else on[j["parent"]]
        P, C = se3(j["in_parent"]), se3(j["in_child"])
        if j["type"] == "fixed":
            assert j["coordinate"] < 0
            on.append((parent_joint, parent_placement * P * C.inverse()))
        else:
            u = np.array(j["axis"])
            kind = {"revolute": pin.JointModelRevoluteUnaligned, "prismatic": pin.JointModelPrismaticUnaligned}
            joint = model.addJoint(parent_joint, kind[j["type"]](u), parent_placement * P, f"joint{i}")
            on.append((joint, C.inverse()))
            of_joint[joint] = j["coordinate"]
        inertia = pin.Inertia(b["mass"], np.array(b["com"]), np.array(b["inertia"]).reshape(3, 3))
        model.appendBodyToJoint(on[i][0], inertia, on[i][1])
    assert model.nq == model.nv == m["N"]
    index = [None] * m["N"]
    for joint, a in of_joint.items():
        assert model.joints[joint].nv == 1
        index[a] = model.joints[joint].idx_v
    assert sorted(index) == list(range(m["N"]))
    return model, on, np.array(index)


def relative(ours, theirs):
    import numpy as np

    ours, theirs = np.asarray(ours, dtype=float), np.asarray(theirs, dtype=float)
    return float(np.max(np.abs(ours - theirs)) / max(float(np.max(np.abs(theirs))), 1e-300))


def compare(m):
    import numpy as np
    import pinocchio as pin

    model, on, index = build(m)
    data = model.createData()
    N = m["N"]
    worst = {"pose": 0.0, "velocity": 0.0, "M": 0.0, "Q": 0.0, "Q_load": 0.0, "transmitted": 0.0}
    failed = False

    def check(name, s, ours, theirs):
        nonlocal failed
        e = relative(ours, theirs)
        worst[name] = max(worst[name], e)
        if not e <= TOLERANCE:
            failed = True
            print(f"{m['name']}, state {s}: {name} differs by {e:.2e} relative:\n  lockstep  {np.asarray(ours)!r}\n"
                  f"  Pinocchio {np.asarray(theirs)!r}")

    for s, st in enumerate(m["states"]):
        q, v = np.zeros(N), np.zeros(N)
        q[index], v[index] = st["q"], st["v"]
        pin.forwardKinematics(model, data, q, v)
        for i, (joint, placement) in enumerate(on):
            X = data.oMi[joint] * placement
            check("pose", s, st["poses"][i], np.concatenate([X.rotation.reshape(9), X.translation]))
            # Lockstep's spatial velocity is in world coordinates about the world origin (Featherstone 2008,
            # section 2.15): Pinocchio's body velocity data.v, in the joint frame, moved to the world frame.
            V = data.oMi[joint].act(data.v[joint])
            check("velocity", s, st["velocities"][i], np.concatenate([V.angular, V.linear]))
        M = pin.crba(model, data, q).copy()
        M = np.triu(M) + np.triu(M, 1).T  # crba fills the upper triangle only
        check("M", s, np.array(st["M"]).reshape(N, N), M[np.ix_(index, index)])
        tau = pin.rnea(model, data, q, v, np.zeros(N))
        check("Q", s, st["Q"], -tau[index])
        # Pinocchio's external forces are per joint and in the joint's local frame: the point force as a
        # spatial force about the world origin (spatial.hpp's force_at), moved into the frame of the
        # Pinocchio joint that carries the body. On a body welded to the ground it moves nothing.
        load = st["load"]
        joint, placement = on[load["body"]]
        x = (data.oMi[joint] * placement).act(np.array(load["point"]))
        check("pose", s, load["world"], x)
        f = np.array(load["force"])
        fext = pin.StdVec_Force()
        for k in range(model.njoints):
            fext.append(pin.Force.Zero())
        fext[joint] = data.oMi[joint].actInv(pin.Force(f, np.cross(x, f)))
        tau = pin.rnea(model, data, q, v, np.zeros(N), fext)
        check("Q_load", s, st["Q_load"], -tau[index])
        # The transmitted forces: Pinocchio's data.f[j] after rnea is the force its joint j transmits, in
        # j's frame about its origin; moved to the world frame about the world origin. A body welded by
        # a fixed joint has no Pinocchio joint of its own (its force is part of its carrier's).
        a = np.zeros(N)
        a[index] = st["a"]
        pin.rnea(model, data, q, v, a, fext)
        ours, theirs = [], []
        for i, (joint, _) in enumerate(on):
            if m["joints"][i]["type"] == "fixed":
                continue
            f = data.oMi[joint].act(data.f[joint])
            ours.append(st["transmitted"][i])
            theirs.append(np.concatenate([f.angular, f.linear]))
        check("transmitted", s, ours, theirs)
    print(f"{m['name']}: {len(m['bodies'])} bodies, {N} coordinates, {len(m['states'])} states; largest relative "
          "differences: " + ", ".join(f"{k} {e:.1e}" for k, e in worst.items()))
    return failed, worst


def main():
    dump, venv = sys.argv[1], sys.argv[2]
    if not pinocchio_venv.inside():
        return pinocchio_venv.run_inside(venv, __file__, [dump, venv])
    import pinocchio as pin

    print(f"Pinocchio {pin.__version__}")
    text = subprocess.run([dump], check=True, capture_output=True, text=True).stdout
    failed = False
    for m in parse(text):
        failed |= compare(m)[0]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
