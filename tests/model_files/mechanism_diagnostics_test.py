#!/usr/bin/env python3
"""tests/model_files/mechanism_diagnostics_test.py — the mechanism-file generator's error messages.

Runs host/model_files/equations_to_header.py on malformed mechanism files (docs/reference/
mechanism-file.md) and checks the exit status, the exact `FILE:LINE:COLUMN: error:` prefix of each
message and what it names, and that no header is written; and, as a control, that the repository's
mechanism files convert.

Usage: mechanism_diagnostics_test.py   (Python's standard library and SymPy; exits 1 on a failure)
"""
import glob
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(ROOT, "host", "model_files", "equations_to_header.py")
sys.dont_write_bytecode = True


def generate(text):
    """(exit status, stderr lines, whether the output exists) for a file m.toml holding `text`."""
    with tempfile.TemporaryDirectory() as folder:
        with open(os.path.join(folder, "m.toml"), "w", encoding="utf-8") as out:
            out.write(text)
        output = os.path.join(folder, "out.hpp")
        done = subprocess.run([sys.executable, SCRIPT, "m.toml", "-o", output], cwd=folder, capture_output=True,
                              text=True, timeout=120)
        return done.returncode, done.stderr.splitlines(), os.path.exists(output)


# A pendulum on a slider: a planar mechanism with one body per joint, which each case breaks once.
GOOD = """[mechanism]
name = "slider_pendulum"
planar = true
gravity = [0, "-g", 0]

[parameters]
m = { default = 1.0 }
L = { default = 0.5 }
g = 9.81
c = 0.1

[bodies.cart]
mass = "m"
inertia = 0.01

[bodies.arm]
mass = "m"
centre_of_mass = [0, "-L"]
inertia = "m*L**2/12"

[joints.rail]
type = "prismatic"
parent = "ground"
child = "cart"
axis = [1, 0]

[joints.hinge]
type = "revolute"
parent = "cart"
child = "arm"
initial = { position = 0.3 }

[forces.damper]
type = "joint_force"
joint = "hinge"
value = "-c*hinge_dot"
"""


class MalformedMechanisms(unittest.TestCase):
    def refused(self, old, new, line, column, *said):
        text = GOOD.replace(old, new, 1)
        self.assertNotEqual(text, GOOD, f"the case does not change the file: {old!r}")
        status, errors, written = generate(text)
        self.assertEqual(status, 1, errors)
        self.assertFalse(written)
        prefix = f"m.toml:{line}:{column}: error: "
        matching = [e for e in errors if e.startswith(prefix)]
        self.assertTrue(matching, f"no message at {line}:{column}: {errors}")
        for words in said:
            self.assertTrue(any(words in e for e in matching), f"{words!r} not in {matching}")

    def test_the_control_converts(self):
        status, errors, written = generate(GOOD)
        self.assertEqual((status, errors, written), (0, [], True))

    def test_an_unknown_joint_type_is_named_with_the_closest_one(self):
        self.refused('type = "revolute"', 'type = "revolut"', 28, 9, "unknown joint type 'revolut'",
                     "did you mean 'revolute'")

    def test_an_unknown_body_is_named_with_the_closest_one(self):
        self.refused('child = "arm"', 'child = "amr"', 30, 10, "unknown body 'amr'", "did you mean 'arm'")

    def test_a_body_without_a_chain_of_joints_to_the_ground(self):
        self.refused('[joints.rail]', '[bodies.lost]\nmass = 1\ninertia = 1\n\n[joints.rail]', 21, 9,
                     "body 'lost' is not joined to the ground")

    def test_an_unknown_name_in_a_force_is_named_with_the_closest_one(self):
        self.refused('value = "-c*hinge_dot"', 'value = "-c*hinge_dto"', 36, 13, "unknown name 'hinge_dto'",
                     "did you mean 'hinge_dot'")

    def test_a_coordinate_in_a_body_s_geometry(self):
        self.refused('inertia = "m*L**2/12"', 'inertia = "m*hinge**2/12"', 19, 14,
                     "coordinate 'hinge' cannot be used", "parameters only")

    def test_gravity_is_required(self):
        self.refused('gravity = [0, "-g", 0]\n', '', 1, 2, "needs gravity")

    def test_a_spatial_joint_in_a_planar_mechanism(self):
        self.refused('type = "revolute"', 'type = "spherical"', 28, 9, "cannot be part of a planar mechanism")

    def test_a_revolute_joint_of_a_planar_mechanism_turns_about_z(self):
        self.refused('child = "arm"\n', 'child = "arm"\naxis = [1, 0, 0]\n', 31, 8, "turns about z")

    def test_an_unknown_key_is_named_with_the_closest_one(self):
        self.refused('centre_of_mass = [0, "-L"]', 'center_of_mass = [0, "-L"]', 18, 1, "unknown key 'center_of_mass'",
                     "did you mean 'centre_of_mass'")

    def test_a_joint_that_closes_a_loop_has_no_initial_values(self):
        self.refused('[forces.damper]', '[joints.stop]\ntype = "distance"\nparent = "ground"\nchild = "arm"\n'
                     'length = 1.0\ninitial = { position = 1 }\n\n[forces.damper]', 38, 1, "closes a loop",
                     "no 'initial'")

    def test_a_distance_joint_needs_its_length(self):
        self.refused('[forces.damper]', '[joints.stop]\ntype = "distance"\nparent = "ground"\nchild = "arm"\n\n'
                     '[forces.damper]', 33, 9, "needs a length")

    def test_more_constraints_than_coordinates(self):
        self.refused('[forces.damper]', '[joints.weld]\ntype = "fixed"\nparent = "ground"\nchild = "arm"\n\n'
                     '[forces.damper]', 21, 2, "exceed the 2 joint coordinates", "cannot move")

    def test_a_force_on_a_joint_that_closes_a_loop(self):
        self.refused('[forces.damper]', '[joints.stop]\ntype = "distance"\nparent = "ground"\nchild = "arm"\n'
                     'length = 1.0\n\n[forces.push]\ntype = "joint_force"\njoint = "stop"\nvalue = 1\n\n'
                     '[forces.damper]', 41, 10, "joint 'stop' closes a loop")


    def test_a_parameter_named_like_a_rate(self):
        self.refused('c = 0.1', 'hinge_dot = 0.1', 10, 1, "parameter 'hinge_dot' ends in _dot")

    def test_a_mechanism_named_like_a_member_of_the_generated_struct(self):
        self.refused('name = "slider_pendulum"', 'name = "mass"', 2, 9, "is the name of a member")

    def test_a_mechanism_named_like_the_library(self):
        self.refused('name = "slider_pendulum"', 'name = "multibody"', 2, 9, "would hide a name of the library")

    def test_a_distance_joint_cannot_be_kept_in_the_tree(self):
        self.refused('[forces.damper]', '[joints.stop]\ntype = "distance"\nparent = "ground"\nchild = "arm"\n'
                     'length = 1.0\ncut = false\n\n[forces.damper]', 38, 7, "always cut")

    def test_a_planar_torque_is_one_number(self):
        self.refused('[forces.damper]', '[forces.twist]\ntype = "torque"\nbody = "arm"\nvalue = [1, 2]\n\n'
                     '[forces.damper]', 36, 9, "torque is about z")


class RepositoryMechanisms(unittest.TestCase):
    def test_every_mechanism_file_of_the_repository_converts(self):
        files = sorted(glob.glob(os.path.join(ROOT, "tests", "model_files", "mechanisms", "*.toml")) +
                       glob.glob(os.path.join(ROOT, "examples", "mechanisms", "*.toml")))
        self.assertTrue(files)
        for path in files:
            with open(path, encoding="utf-8") as source:
                text = source.read()
            if "[mechanism]" not in text:
                continue  # a study file beside the mechanisms
            status, errors, written = generate(text)
            self.assertEqual((status, errors, written), (0, [], True), path)


if __name__ == "__main__":
    unittest.main()
