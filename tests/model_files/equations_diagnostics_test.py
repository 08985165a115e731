#!/usr/bin/env python3
"""tests/model_files/equations_diagnostics_test.py — the equations-file generator's error messages.

Runs host/model_files/equations_to_header.py on malformed equations files and checks the exit status,
the exact `FILE:LINE:COLUMN: error:` prefix of each message, the symbol or suggestion it names, and
that no header is written. Also checks the position finder on the TOML forms it must handle, and that
the well-formed files still convert (a control: the checks must not refuse everything).

Usage: equations_diagnostics_test.py   (Python's standard library and SymPy; exits 1 on a failure)
"""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(ROOT, "host", "model_files", "equations_to_header.py")
FILES = os.path.join(HERE, "equations")
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(SCRIPT))

from equations.locate import Locator  # noqa: E402  (after the path is set)


def generate(path, text=None):
    """(exit status, stderr lines, whether the output exists) for one run of the generator.

    With `text`, that text is written to a file named `path` in a fresh folder first; the command line
    names the file as given, so the messages' prefix is predictable.
    """
    with tempfile.TemporaryDirectory() as folder:
        if text is not None:
            with open(os.path.join(folder, path), "w", encoding="utf-8") as out:
                out.write(text)
            cwd = folder
        else:
            cwd = None
        output = os.path.join(folder, "out.hpp")
        done = subprocess.run([sys.executable, SCRIPT, path, "-o", output], cwd=cwd, capture_output=True,
                              text=True, timeout=120)
        return done.returncode, done.stderr.splitlines(), os.path.exists(output)


MINIMAL = """[model]
name = "pendulum"
[coordinates]
theta = { unit = "rad" }
[parameters]
L = { default = 1.0 }
g = { default = 9.81 }
[mass]
diagonal = ["L**2"]
[force]
theta = "-g*L*sin(theta)"
"""


class MalformedFiles(unittest.TestCase):
    """The four malformed files of tests/model_files/equations/."""

    def expect_one(self, name, prefix, *mentions):
        path = os.path.join(FILES, name)
        status, lines, written = generate(path)
        self.assertEqual(status, 1, lines)
        self.assertFalse(written, "a header was written although the file has errors")
        self.assertTrue(lines, "no message")
        self.assertTrue(lines[0].startswith(f"{path}:{prefix}: error: "), lines)
        for mention in mentions:
            self.assertIn(mention, lines[0])
        return lines

    def test_syntax_error_points_at_the_character(self):
        # theta = "-g*L sin(theta)": the string starts in column 10, `sin` 5 characters later.
        self.expect_one("typo.toml", "16:15", "syntax error")

    def test_unknown_symbol_is_named_with_a_suggestion(self):
        self.expect_one("unknown_symbol.toml", "17:22", "'thta1'", "did you mean 'theta1'?", "[constraints]")

    def test_unknown_key_is_named_with_a_suggestion(self):
        lines = self.expect_one("bad_key.toml", "9:1", "'L' needs a default value")
        self.assertIn(f"{os.path.join(FILES, 'bad_key.toml')}:9:7: error: unknown key 'defualt' in "
                      f"[parameters.L]; did you mean 'default'?", lines[1])

    def test_nonholonomic_row_quadratic_in_velocities_is_refused(self):
        self.expect_one("not_affine.toml", "17:12", "'no_slip'", "not affine", "x_dot", "y_dot")


class StudyFile(unittest.TestCase):
    """A study file where an equations file belongs gets one message saying what it is."""

    def test_a_study_file_is_named_as_one(self):
        status, lines, written = generate("s.toml", '[model]\nsource = "cart.toml"\n[time]\nt1 = 1.0\n')
        self.assertEqual(status, 1)
        self.assertFalse(written)
        self.assertEqual(len(lines), 1, lines)
        self.assertTrue(lines[0].startswith("s.toml:3:2: error: this is a study file (it has [time], [model] source), "
                                            "not an equations file: `lockstep run` runs a study"), lines)

    def test_an_equations_file_with_a_stray_study_table_is_read_as_equations(self):
        # [coordinates] makes it an equations file: the stray table is an unknown key, as any other.
        status, lines, _ = generate("m.toml", MINIMAL + "[time]\nt1 = 1.0\n")
        self.assertEqual(status, 1)
        self.assertNotIn("study file", " ".join(lines))
        self.assertIn("unknown key 'time'", " ".join(lines))


class Expressions(unittest.TestCase):
    """One force expression at a time, in an otherwise valid file."""

    def force(self, expression):
        text = MINIMAL.replace('"-g*L*sin(theta)"', expression)
        status, lines, written = generate("m.toml", text)
        self.assertFalse(written)
        self.assertEqual(status, 1)
        return lines

    def test_caret_asks_for_double_star(self):
        self.assertEqual(self.force('"g*theta^2"'), ["m.toml:11:17: error: use ** for powers"])

    def test_refused_constructs_are_named(self):
        self.assertEqual(self.force('"theta.real"'),
                         ["m.toml:11:10: error: attribute access (a.b) not allowed in an expression"])
        self.assertIn("comparisons", self.force('"theta < 1"')[0])
        self.assertIn("lambda", self.force('"1 + (lambda: 1)"')[0])
        self.assertIn("strings are not allowed", self.force('"theta + \'x\'"')[0])

    def test_functions_are_checked(self):
        self.assertEqual(self.force('"sine(theta)"')[0].split(" (functions")[0],
                         "m.toml:11:10: error: unknown function 'sine'; did you mean 'sin'?")
        self.assertEqual(self.force('"atan2(theta)"'), ["m.toml:11:10: error: 'atan2' takes 2 arguments, got 1"])

    def test_inputs_are_only_for_initial_values(self):
        text = MINIMAL.replace("[mass]", "[inputs]\ntheta0 = { default = 0.1 }\n[mass]")
        text = text.replace('"-g*L*sin(theta)"', '"theta0"')
        status, lines, _ = generate("m.toml", text)
        self.assertEqual((status, lines), (1, ["m.toml:13:10: error: input 'theta0' can only be used in [initial]"]))

    def test_escapes_shift_the_column(self):
        # \u0020 is one space written as six characters: the `*` is decoded character 3 but column 19.
        lines = self.force('"g\\u0020+ * theta"')
        self.assertEqual(lines, ["m.toml:11:19: error: syntax error: invalid syntax"])

    def test_nothing_is_written_and_the_old_output_survives(self):
        with tempfile.TemporaryDirectory() as folder:
            model, output = os.path.join(folder, "m.toml"), os.path.join(folder, "out.hpp")
            with open(model, "w") as out:
                out.write(MINIMAL.replace('"-g*L*sin(theta)"', '"g +"'))
            with open(output, "w") as out:
                out.write("previous")
            done = subprocess.run([sys.executable, SCRIPT, model, "-o", output], capture_output=True)
            self.assertEqual(done.returncode, 1)
            with open(output) as header:
                self.assertEqual(header.read(), "previous")
            self.assertEqual(sorted(os.listdir(folder)), ["m.toml", "out.hpp"])  # no temporary left behind


class Events(unittest.TestCase):
    """[events]: one entry at a time after an otherwise valid file, the entry on line 13."""

    def event(self, entry, text=MINIMAL):
        status, lines, written = generate("m.toml", text + "[events]\n" + entry + "\n")
        self.assertFalse(written)
        self.assertEqual(status, 1, lines)
        return lines

    def test_an_unknown_symbol_in_g_is_named_with_a_suggestion(self):
        # `low = { g = "` is 13 characters: the expression starts in column 14.
        self.assertEqual(self.event('low = { g = "thta + 1", direction = "falling", action = "stop" }'),
                         ["m.toml:13:14: error: unknown name 'thta' in [events]; did you mean 'theta'? "
                          "(allowed here: g, L, pi, t, theta, theta_ddot, theta_dot)"])

    def test_the_accelerations_and_multipliers_are_the_events_alone(self):
        # A rod of length L on a point (x, y): its multiplier lambda_rod and the accelerations x_ddot and
        # y_ddot may be used in [events] (the file then converts), and nowhere else.
        rod = MINIMAL.replace('theta = { unit = "rad" }', 'x = {}\ny = {}').replace(
            'diagonal = ["L**2"]', 'diagonal = [1, 1]').replace('theta = "-g*L*sin(theta)"', 'y = "-g"')
        rod += '[constraints]\nrod = "x**2 + y**2 - L**2"\n'
        status, lines, written = generate("m.toml", rod + '[events]\nslack = { g = "lambda_rod + y_ddot" }\n')
        self.assertEqual((status, lines, written), (0, [], True))
        self.assertEqual(self.event('low = { g = "lambda_rd" }', rod),
                         ["m.toml:16:14: error: unknown name 'lambda_rd' in [events]; did you mean 'lambda_rod'? "
                          "(allowed here: g, L, lambda_rod, pi, t, x, x_ddot, x_dot, y, y_ddot, y_dot)"])
        self.assertEqual(self.event('low = { g = "x" }', rod.replace('y = "-g"', 'y = "-g*(1 + y_ddot)"')),
                         ["m.toml:12:14: error: 'y_ddot', the acceleration of coordinate 'y', can be used only in "
                          "[events]"])
        self.assertEqual(self.event('low = { g = "x" }', rod.replace('g = { default = 9.81 }',
                                                                     'g = { default = 9.81 }\nlambda_rod = { default = 1 }')),
                         ["m.toml:9:1: error: parameter 'lambda_rod' clashes with the multiplier of constraint 'rod', "
                          "a name the event functions use ([events])"])

    def test_g_that_does_not_parse_points_at_the_character(self):
        self.assertEqual(self.event('low = { g = "theta +* 2" }'),
                         ["m.toml:13:21: error: syntax error: invalid syntax"])

    def test_g_may_not_use_an_input(self):
        text = MINIMAL.replace("[mass]", "[inputs]\ntheta0 = { default = 0.1 }\n[mass]")
        self.assertEqual(self.event('low = { g = "theta - theta0" }', text),
                         ["m.toml:15:22: error: input 'theta0' can only be used in [initial]"])

    def test_a_bad_direction_names_the_three(self):
        self.assertEqual(self.event('low = { g = "theta", direction = "rissing" }'),
                         ["m.toml:13:35: error: the direction of event 'low' must be one of 'rising', 'falling', "
                          "'both', not 'rissing'; did you mean 'rising'?"])
        self.assertEqual(self.event('low = { g = "theta", direction = 1 }'),
                         ["m.toml:13:34: error: the direction of event 'low' must be a string: one of 'rising', "
                          "'falling', 'both'"])

    def test_a_bad_action_names_the_three(self):
        self.assertEqual(self.event('low = { g = "theta", action = "halt" }'),
                         ["m.toml:13:32: error: the action of event 'low' must be one of 'record', 'stop', 'count', "
                          "not 'halt'"])
        self.assertEqual(self.event('low = { g = "theta", action = "Stop" }'),
                         ["m.toml:13:32: error: the action of event 'low' must be one of 'record', 'stop', 'count', "
                          "not 'Stop'; did you mean 'stop'?"])

    def test_g_is_required(self):
        self.assertEqual(self.event('low = { direction = "falling" }'),
                         ["m.toml:13:1: error: event 'low' needs 'g', its event function (an expression)"])

    def test_an_unknown_key_is_named_with_a_suggestion(self):
        self.assertEqual(self.event('low = { g = "theta", directoin = "falling" }'),
                         ["m.toml:13:22: error: unknown key 'directoin' in [events.low]; did you mean 'direction'? "
                          "(allowed: g, direction, action, description)"])

    def test_names_and_shapes(self):
        self.assertEqual(self.event('int = { g = "theta" }'), ["m.toml:13:1: error: event 'int' is a C++ keyword"])
        self.assertEqual(self.event('low = "theta"'),
                         ['m.toml:13:8: error: event \'low\' must be an inline table such as { g = "...", '
                          'direction = "rising", action = "stop" }'])
        self.assertEqual(self.event('low = { g = "theta" }', MINIMAL.replace('name = "pendulum"', 'name = "event"')),
                         ["m.toml:2:9: error: model name 'event' is a name the generated code uses for the events"])

    def test_an_events_table_header_is_located_too(self):
        status, lines, _ = generate("m.toml", MINIMAL + '[events.low]\ng = "theta"\ndirection = "up"\n')
        self.assertEqual((status, lines), (1, ["m.toml:14:14: error: the direction of event 'low' must be one of "
                                               "'rising', 'falling', 'both', not 'up'"]))


class Structure(unittest.TestCase):
    def run_text(self, text):
        status, lines, written = generate("m.toml", text)
        self.assertFalse(written)
        self.assertEqual(status, 1)
        return lines

    def test_parameters_are_required(self):
        text = MINIMAL.replace("[parameters]\nL = { default = 1.0 }\ng = { default = 9.81 }\n", "")
        text = text.replace("L**2", "1").replace("-g*L*sin(theta)", "-sin(theta)")
        lines = self.run_text(text)
        self.assertEqual(len(lines), 1)
        self.assertIn("[parameters] must name at least one parameter", lines[0])

    def test_unknown_table_is_suggested(self):
        lines = self.run_text(MINIMAL + "[constraint]\nc = \"theta\"\n")
        self.assertTrue(lines[0].startswith("m.toml:12:2: error: unknown key 'constraint' in the top level; "
                                            "did you mean 'constraints'?"), lines)

    def test_names_clash(self):
        lines = self.run_text(MINIMAL.replace("g = { default = 9.81 }", "theta = { default = 9.81 }"))
        self.assertIn("m.toml:7:1: error: parameter 'theta' is already defined as a coordinate", lines)
        lines = self.run_text(MINIMAL.replace("L = { default", "theta_dot = { default"))
        self.assertIn("already defined as the velocity of coordinate 'theta'", lines[0])
        lines = self.run_text(MINIMAL.replace("L = { default", "int = { default"))
        self.assertIn("m.toml:6:1: error: parameter 'int' is a C++ keyword", lines)
        lines = self.run_text(MINIMAL.replace("L = { default", "pi = { default"))
        self.assertIn("clashes with the constant pi", lines[0])

    def test_mass_shape_and_symmetry(self):
        lines = self.run_text(MINIMAL.replace('diagonal = ["L**2"]', 'diagonal = ["L**2", "1"]'))
        self.assertEqual(lines, ["m.toml:9:12: error: 'diagonal' must be an array of 1 entries, one per coordinate"])
        two = MINIMAL.replace('theta = { unit = "rad" }', 'theta = { unit = "rad" }\nphi = {}')
        lines = self.run_text(two.replace('diagonal = ["L**2"]', 'matrix = [["L", "g"], ["L", "1"]]'))
        self.assertIn("m.toml:10:25: error: the mass matrix must be symmetric", lines[0])

    def test_invalid_toml_keeps_tomllib_position(self):
        lines = self.run_text(MINIMAL + "x = = 1\n")
        self.assertTrue(lines[0].startswith("m.toml:12:5: error: invalid TOML: "), lines)

    def test_usage_error_exits_2(self):
        done = subprocess.run([sys.executable, SCRIPT], capture_output=True)
        self.assertEqual(done.returncode, 2)


class WellFormed(unittest.TestCase):
    def test_the_restated_models_and_the_example_convert(self):
        for path in [os.path.join(ROOT, "examples", "mbs", "a03_andrews.toml"), os.path.join(FILES, "slider_crank.toml"),
                     os.path.join(FILES, "knife_edge.toml"), os.path.join(ROOT, "examples", "models", "fourbar.toml"),
                     os.path.join(FILES, "pendulum_events.toml")]:
            status, lines, written = generate(path)
            self.assertEqual((status, lines, written), (0, [], True), path)

    def header(self, force, text=MINIMAL, folder=None):
        """The header of MINIMAL (or `text`) with `force` for theta's force, made in `folder` (the path of
        the equations file is in the header's #line directives) or a fresh one."""
        if folder is None:
            with tempfile.TemporaryDirectory() as folder:
                return self.header(force, text, folder)
        model, output = os.path.join(folder, "m.toml"), os.path.join(folder, "out.hpp")
        with open(model, "w") as out:
            out.write(text.replace('"-g*L*sin(theta)"', force))
        subprocess.run([sys.executable, SCRIPT, model, "-o", output], check=True)
        with open(output) as header:
            return header.read()

    def test_hyperbolic_functions_become_exponentials(self):
        text = self.header('"-g*tanh(theta) + sinh(theta)"')
        self.assertNotIn("tanh", text)
        self.assertNotIn("sinh", text)
        self.assertIn("exp(", text)

    def test_events_add_their_members_and_change_nothing_else(self):
        force = '"-g*L*sin(theta)"'
        events = MINIMAL + '[events]\nlow = { g = "theta*theta_dot - t", direction = "falling", action = "stop" }\n'
        with tempfile.TemporaryDirectory() as folder:
            without, text = self.header(force, folder=folder), self.header(force, events, folder)
        table = ("  static constexpr int n_events = 1;\n"
                 "  static constexpr event_declaration events[n_events] = {\n"
                 '      {"low", event_direction::falling, event_action::stop, ""},\n'
                 "  };\n")
        self.assertIn(table, text)
        function = text[text.index("  template <class T, class P>\n  LOCKSTEP_HD static vec<T, n_events> event("):]
        function = function[:function.index("  }\n") + 4] + "\n"
        self.assertIn("ev[0] = theta*theta_dot - t;", function)
        self.assertEqual(text.replace(table, "").replace(function, ""), without)
        self.assertNotIn("event", without)

    def test_names_of_the_event_members_are_spelled_apart_only_with_events(self):
        text = MINIMAL.replace("L = { default", "ev = { default").replace("L**2", "ev**2")
        self.assertIn("const T ev = T(p[0]);", self.header('"-g*ev*sin(theta)"', text))
        with_events = self.header('"-g*ev*sin(theta)"', text + '[events]\nlow = { g = "ev*theta" }\n')
        self.assertIn("const T ev_ = T(p[0]);", with_events)
        self.assertIn("ev[0] = ev_*theta;", with_events)

    def test_symbols_are_real(self):
        # For complex symbols SymPy would write abs(exp(x)) as exp(re(x)), which has no C++ form.
        self.assertIn("Q[0] = exp(theta);", self.header('"abs(exp(theta))"'))


class Positions(unittest.TestCase):
    """The locator on the TOML forms equations files use."""

    TEXT = (
        "# comment [not a table]\n"                                 # 1
        "[model]\n"                                                 # 2
        'name = "x"  # "quoted" in a comment\n'                     # 3
        "[coordinates]\n"                                           # 4
        'th1 = { unit = "rad", description = "a, b" }\n'            # 5
        'a.b = "q\\u00e9 + x"\n'                                    # 6
        "[mass]\n"                                                  # 7
        'matrix = [["J1", 0],\n'                                    # 8
        "  [0, 'J2']]\n"                                            # 9
        "[initial.q]\n"                                             # 10
        'th1 = """\n'                                               # 11
        " theta0 +\n"                                               # 12
        '  1"""\n'                                                  # 13
        '"quoted key" = 1\n'                                        # 14
    )

    def test_keys_and_values(self):
        where = Locator(self.TEXT)
        self.assertEqual(where.key(("model",)), (2, 2))
        self.assertEqual(where.key(("model", "name")), (3, 1))
        self.assertEqual(where.value(("model", "name")), (3, 9))
        self.assertEqual(where.key(("coordinates", "th1", "description")), (5, 23))
        self.assertEqual(where.value(("coordinates", "th1", "description")), (5, 38))
        self.assertEqual(where.key(("coordinates", "a", "b")), (6, 3))
        self.assertEqual(where.value(("mass", "matrix", 0, 1)), (8, 18))
        self.assertEqual(where.value(("mass", "matrix", 1, 1)), (9, 8))
        self.assertEqual(where.key(("initial", "q")), (10, 10))
        self.assertEqual(where.key(("initial", "q", "quoted key")), (14, 1))

    def test_characters_inside_strings(self):
        where = Locator(self.TEXT)
        escaped = where.string(("coordinates", "a", "b"))
        self.assertEqual([escaped.at(i) for i in range(4)], [(6, 8), (6, 9), (6, 15), (6, 16)])
        multi = where.string(("initial", "q", "th1"))
        self.assertEqual(multi.at(0), (12, 1))   # the line break after the opening quotes is dropped
        self.assertEqual(multi.at(10), (13, 1))
        self.assertEqual(multi.at(13), (13, 4))  # one past the end: the closing quotes

    def test_implicit_tables_fall_back_to_a_written_ancestor(self):
        where = Locator(self.TEXT)
        self.assertEqual(where.key(("initial",)), (10, 2))
        self.assertEqual(where.key(("nowhere", "at", "all")), (1, 1))


if __name__ == "__main__":
    unittest.main(verbosity=2)
