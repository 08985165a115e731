"""A mechanism file read into one checked description: bodies, the joint tree, cut joints and forces.

Errors are collected with their place (the key, or the character inside an expression), as for
equations files, and raised together as a Diagnostic. The format is docs/reference/mechanism-file.md.
"""
import math

import sympy

from equations import Diagnostic
from equations.expressions import number, suggestion
from equations.model import (CPP_KEYWORDS, IDENTIFIER, LANGUAGE_NAMES, LIBRARY_NAMES, MEMBER_NAMES, Expr, Reader,
                             scope_of, symbols_of, velocity)

from .keys import ALLOWED, FORCE_TYPES, JOINT_TYPES, allowed_keys

GROUND = "ground"

# Joint types: their coordinates' default name suffixes and, as tree joints, the chain of primitive
# joints (revolute "R" or prismatic "P" about or along a joint-frame axis; None: the joint's `axis`)
# they are made of. Cardan angles x-y-z for the spherical joint: singular where the second angle is
# +-pi/2 (documented).
X, Y, Z = (1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)
CHAINS = {
    "revolute": [("R", None)], "prismatic": [("P", None)], "fixed": [],
    "universal": [("R", X), ("R", Y)],
    "cylindrical": [("P", None), ("R", None)],
    "planar": [("P", X), ("P", Y), ("R", Z)],
    "spherical": [("R", X), ("R", Y), ("R", Z)],
    "free": [("P", X), ("P", Y), ("P", Z), ("R", X), ("R", Y), ("R", Z)],
}
SUFFIXES = {
    "universal": ["1", "2"], "cylindrical": ["s", "phi"], "planar": ["x", "y", "phi"],
    "spherical": ["1", "2", "3"], "free": ["x", "y", "z", "1", "2", "3"],
}
# Constraint rows of each joint type where it closes a loop, in a spatial and in a planar mechanism.
CUT_ROWS = {
    "revolute": (5, 2), "prismatic": (5, 2), "cylindrical": (4, None), "spherical": (3, None),
    "universal": (4, None), "planar": (3, None), "fixed": (6, 3), "distance": (1, 1),
}
PLANAR_TYPES = ("revolute", "prismatic", "planar", "fixed", "distance")
# Names the generated header of a mechanism uses besides an equations file's (emit.py).
GENERATED_LIBRARY_NAMES = {"multibody", "vec3", "mechanisms"}
GENERATED_MEMBER_NAMES = {"n_bodies", "tree_of", "applied_forces", "n_quantities", "quantities", "quantity_values"}


class Rotation:
    """A constant unit axis (floats) and an angle (Expr)."""

    def __init__(self, axis, angle):
        self.axis, self.angle = axis, angle


class Placement:
    """A joint frame in a body: its origin (three Expr) and rotation (a Rotation or None)."""

    def __init__(self, origin, rotation=None):
        self.origin, self.rotation = origin, rotation


class Body:
    def __init__(self, name):
        self.name = name
        self.mass = None
        self.centre_of_mass = None  # three Expr
        self.inertia = None         # 3 x 3 Expr
        self.points = {}            # name -> three Expr
        self.description = ""


class Joint:
    def __init__(self, name, kind):
        self.name, self.type = name, kind
        self.parent = self.child = None
        self.parent_frame = self.child_frame = None  # Placement
        self.axis = Z
        self.coordinates = []     # names, tree joints only
        self.initial = []         # per coordinate: dict of "position", "velocity", "guess" -> Expr
        self.drive = None         # Expr of t, for one-coordinate tree joints
        self.length = None        # Expr, distance joints
        self.cut_requested = False
        self.cut = False
        self.reversed = False     # a tree joint stated from the ground's side inwards
        self.description = ""

    @property
    def degrees_of_freedom(self):
        return len(CHAINS[self.type]) if self.type in CHAINS else 0


class Force:
    def __init__(self, name, kind):
        self.name, self.type = name, kind
        self.fields = {}          # key -> Expr, list of Expr, or a (body, point) reference
        self.description = ""


class Mechanism:
    def __init__(self):
        self.name = ""
        self.description = ""
        self.planar = False
        self.gravity = None
        self.parameters, self.inputs = [], []
        self.ground_points = {}
        self.bodies = {}          # name -> Body, in file order
        self.joints = {}          # name -> Joint, in file order
        self.tree = []            # tree joints in topological order
        self.cuts = []            # cut joints in file order
        self.forces = []
        self.symbols = {}         # name -> sympy.Symbol

    @property
    def coordinates(self):
        return [c for j in self.tree for c in j.coordinates]

    def rows(self):
        """The number of constraint rows: cut joints', then drives'."""
        count = sum(CUT_ROWS[j.type][1 if self.planar else 0] for j in self.cuts)
        return count + sum(1 for j in self.tree if j.drive is not None)


def unit(vector):
    length = math.sqrt(sum(x * x for x in vector))
    return tuple(x / length for x in vector)


class MechanismReader(Reader):
    """Reads a mechanism file; the table shapes, key checks and expressions are an equations file's."""

    def __init__(self, text):
        super().__init__(text)
        self.mechanism = Mechanism()

    def known_keys(self, path, table):
        allowed = allowed_keys(path)
        for key in table:
            if key not in allowed:
                where = f"[{'.'.join(str(x) for x in path)}]" if path else "the top level"
                self.error_at_key(path + (key,), f"unknown key '{key}' in {where}{suggestion(key, allowed)} "
                                                 f"(allowed: {', '.join(allowed)})")

    # ---- the whole file --------------------------------------------------------------------------

    def read(self):
        data = self.data
        self.known_keys((), data)
        self.read_mechanism_table()
        self.read_named_items("parameters", self.mechanism.parameters, required=True)
        self.read_named_items("inputs", self.mechanism.inputs, required=False)
        self.read_body_names()
        self.read_joint_shapes()
        self.stop_if_errors()
        self.build_tree()
        self.stop_if_errors()
        self.make_symbols()
        self.stop_if_errors()
        self.read_geometry()
        self.read_joint_values()
        self.read_forces()
        m = self.mechanism
        if m.rows() > len(m.coordinates):
            self.error_at_key(("joints",), f"{m.rows()} constraint equations exceed the {len(m.coordinates)} "
                                           f"joint coordinates of the tree (a model needs m <= n): either the "
                                           f"mechanism cannot move, or rows are redundant, as a planar loop's "
                                           f"out-of-plane rows in a spatial file (set planar = true, or close "
                                           f"the loop with a joint of fewer rows: spherical, cylindrical, "
                                           f"distance)")
        if not m.coordinates:
            self.error_at_key(("joints",), "the mechanism has no joint coordinates (every joint is fixed or "
                                           "closes a loop)")
        self.stop_if_errors()
        return m

    # ---- [mechanism], [parameters], [inputs] -------------------------------------------------------

    def read_mechanism_table(self):
        table = self.table(("mechanism",), required=True)
        if table is None:
            return
        self.known_keys(("mechanism",), table)
        m = self.mechanism
        if "name" not in table:
            self.error_at_key(("mechanism",), "[mechanism] needs a name")
        else:
            name = self.string(("mechanism", "name"), table["name"], "the mechanism name")
            if name and self.identifier(("mechanism", "name"), name, "mechanism name"):
                if name in LIBRARY_NAMES | GENERATED_LIBRARY_NAMES:
                    self.error_at_value(("mechanism", "name"), f"mechanism name '{name}' would hide a name of the "
                                                               f"library in the generated code")
                elif name in MEMBER_NAMES | GENERATED_MEMBER_NAMES:
                    self.error_at_value(("mechanism", "name"), f"mechanism name '{name}' is the name of a member of "
                                                               f"the generated struct; choose another")
                else:
                    m.name = name
        if "description" in table:
            m.description = self.string(("mechanism", "description"), table["description"], "the description")
        if "planar" in table:
            if not isinstance(table["planar"], bool):
                self.error_at_value(("mechanism", "planar"), "planar must be true or false")
            else:
                m.planar = table["planar"]
        if "gravity" not in table:
            self.error_at_key(("mechanism",), "[mechanism] needs gravity, the gravitational acceleration as "
                                              "a vector in world axes, e.g. gravity = [0, -9.81, 0] "
                                              "([0, 0, 0] for none)")

    def read_named_items(self, section, items, required):
        """Parameters and inputs as in an equations file (Reader.read_items), where a plain number also
        stands for { default = number }."""
        table = self.table((section,))
        if table is None:
            return
        for name, spec in table.items():
            if isinstance(spec, (int, float)) and not isinstance(spec, bool):
                table[name] = {"default": spec}
        super().read_items(section, items, required)
        what = "parameter" if section == "parameters" else "input"
        for item in list(items):
            path = (section, item.name)
            if not self.identifier(path, item.name, what):
                items.remove(item)
            elif item.name.endswith("_dot"):
                self.error_at_key(path, f"{what} '{item.name}' ends in _dot, which names the rates of joint "
                                        f"coordinates")
                items.remove(item)
            elif item.name in LANGUAGE_NAMES:
                self.error_at_key(path, f"'{item.name}' clashes with {LANGUAGE_NAMES[item.name]} of the expression "
                                        f"language")
                items.remove(item)

    # ---- bodies and joints: names and shapes -------------------------------------------------------

    def read_body_names(self):
        ground = self.table(("ground",))
        if ground:
            self.known_keys(("ground",), ground)
        bodies = self.table(("bodies",), required=True)
        if bodies is None:
            return
        if not bodies:
            self.error_at_key(("bodies",), "[bodies] must name at least one body")
        for name, spec in bodies.items():
            path = ("bodies", name)
            if not self.identifier(path, name, "body name"):
                continue
            if name == GROUND:
                self.error_at_key(path, "'ground' is the fixed frame, not a body; its points go in [ground]")
                continue
            if not isinstance(spec, dict):
                self.error_at_value(path, f"body '{name}' must be a table with mass, centre_of_mass and inertia")
                continue
            self.known_keys(path, spec)
            for key in ("mass", "inertia"):
                if key not in spec:
                    self.error_at_key(path, f"body '{name}' needs {key}")
            body = Body(name)
            if "description" in spec:
                body.description = self.string(path + ("description",), spec["description"], "the description")
            self.mechanism.bodies[name] = body

    def body_reference(self, path, value, what):
        if not isinstance(value, str):
            self.error_at_value(path, f"{what} must be a body's name (or \"ground\")")
            return None
        if value != GROUND and value not in self.mechanism.bodies:
            names = [GROUND] + list(self.mechanism.bodies)
            self.error_at_value(path, f"unknown body '{value}'{suggestion(value, names)} "
                                      f"(bodies: {', '.join(names)})")
            return None
        return value

    def read_joint_shapes(self):
        joints = self.table(("joints",), required=True)
        if joints is None:
            return
        if not joints:
            self.error_at_key(("joints",), "[joints] must name at least one joint")
        m = self.mechanism
        for name, spec in joints.items():
            path = ("joints", name)
            if not self.identifier(path, name, "joint name"):
                continue
            if not isinstance(spec, dict):
                self.error_at_value(path, f"joint '{name}' must be a table with type, parent and child")
                continue
            self.known_keys(path, spec)
            kind = spec.get("type")
            if kind not in JOINT_TYPES:
                if "type" not in spec:
                    self.error_at_key(path, f"joint '{name}' needs a type ({', '.join(JOINT_TYPES)})")
                else:
                    shown = kind if isinstance(kind, str) else repr(kind)
                    self.error_at_value(path + ("type",), f"unknown joint type '{shown}'"
                                                          f"{suggestion(str(kind), JOINT_TYPES)} "
                                                          f"(types: {', '.join(JOINT_TYPES)})")
                continue
            if m.planar and kind not in PLANAR_TYPES:
                self.error_at_value(path + ("type",), f"a {kind} joint cannot be part of a planar mechanism "
                                                      f"(planar: {', '.join(PLANAR_TYPES)})")
                continue
            joint = Joint(name, kind)
            for side in ("parent", "child"):
                if side not in spec:
                    self.error_at_key(path, f"joint '{name}' needs a {side}")
                else:
                    setattr(joint, side, self.body_reference(path + (side,), spec[side], f"the {side}"))
            if joint.parent is not None and joint.parent == joint.child:
                self.error_at_value(path + ("child",), f"joint '{name}' joins body '{joint.child}' to itself")
            if "cut" in spec:
                if not isinstance(spec["cut"], bool):
                    self.error_at_value(path + ("cut",), "cut must be true or false")
                else:
                    joint.cut_requested = spec["cut"]
            if kind == "distance":
                if spec.get("cut") is False:
                    self.error_at_value(path + ("cut",), "a distance joint is always cut: it has no coordinate "
                                                         "of its own")
                joint.cut_requested = True
                if "length" not in spec:
                    self.error_at_key(path, f"distance joint '{name}' needs a length")
            elif "length" in spec:
                self.error_at_key(path + ("length",), "only a distance joint has a length")
            if "axis" in spec:
                if kind not in ("revolute", "prismatic", "cylindrical"):
                    self.error_at_key(path + ("axis",), f"a {kind} joint has no axis key: its axes are its "
                                                        f"joint frame's (docs/reference/mechanism-file.md)")
                else:
                    axis = self.constant_vector(path + ("axis",), spec["axis"], "the axis")
                    if axis is not None:
                        joint.axis = unit(axis)
                        if m.planar and kind == "revolute" and abs(abs(joint.axis[2]) - 1.0) > 1e-15:
                            self.error_at_value(path + ("axis",), "in a planar mechanism a revolute joint turns "
                                                                  "about z: axis = [0, 0, 1]")
                        if m.planar and kind == "prismatic" and joint.axis[2] != 0.0:
                            self.error_at_value(path + ("axis",), "in a planar mechanism a prismatic joint "
                                                                  "slides in the x-y plane (axis z = 0)")
            elif m.planar and kind == "prismatic":
                self.error_at_key(path, f"prismatic joint '{name}' of a planar mechanism needs its axis in the "
                                        f"x-y plane, e.g. axis = [1, 0] (the default, z, is normal to the plane)")
            if "description" in spec:
                joint.description = self.string(path + ("description",), spec["description"], "the description")
            m.joints[name] = joint

    def constant_vector(self, path, value, what):
        """A constant 3-vector (a planar file may give 2 components), not all zero."""
        size = 3 if not self.mechanism.planar else (2, 3)
        if not isinstance(value, list) or len(value) not in ((size,) if isinstance(size, int) else size):
            self.error_at_value(path, f"{what} must be an array of {3 if not self.mechanism.planar else '2 or 3'} "
                                      f"numbers")
            return None
        out = []
        for i, x in enumerate(value):
            if number(x) is None:
                self.error_at_value(path + (i,), f"{what} must be constant numbers (a direction, not an expression)")
                return None
            out.append(float(x))
        out += [0.0] * (3 - len(out))
        if not any(out):
            self.error_at_value(path, f"{what} must not be zero")
            return None
        return tuple(out)

    # ---- the spanning tree -----------------------------------------------------------------------

    def build_tree(self):
        """Joints in file order reach bodies from the ground outwards; a joint both of whose bodies are
        already reached closes a loop and is cut (as is any joint marked cut, and every distance joint)."""
        m = self.mechanism
        reached = {GROUND}
        pending = [j for j in m.joints.values() if not j.cut_requested]
        progress = True
        while progress:
            progress = False
            for joint in list(pending):
                if joint.parent in reached and joint.child not in reached:
                    reached.add(joint.child)
                elif joint.child in reached and joint.parent not in reached:
                    if joint.degrees_of_freedom > 1:
                        self.error_at_key(("joints", joint.name),
                                          f"joint '{joint.name}' is stated from the ground's side inwards: its "
                                          f"parent '{joint.parent}' is reached through its child "
                                          f"'{joint.child}'; swap parent and child (a joint of several "
                                          f"coordinates is not reversed automatically)")
                    joint.reversed = True
                    reached.add(joint.parent)
                elif joint.parent in reached and joint.child in reached:
                    joint.cut = True
                else:
                    continue
                pending.remove(joint)
                if not joint.cut:
                    m.tree.append(joint)
                progress = True
        for name, body in m.bodies.items():
            if name not in reached:
                cut = [j.name for j in m.joints.values() if j.cut_requested and name in (j.parent, j.child)]
                why = (f"; joint '{cut[0]}', which joins it, is cut (cut = true, or a distance joint), and a cut "
                       f"joint carries no body" if cut else " (a free body needs a free joint to the ground)")
                self.error_at_key(("bodies", name), f"body '{name}' is not joined to the ground by any chain of "
                                                    f"joints of the tree{why}")
        for joint in m.joints.values():
            if joint.cut_requested:
                joint.cut = True
        m.cuts = [j for j in m.joints.values() if j.cut]
        for joint in m.cuts:
            rows = CUT_ROWS.get(joint.type, (None, None))[1 if m.planar else 0]
            if rows is None:
                self.error_at_key(("joints", joint.name), f"a {joint.type} joint cannot close a loop; make "
                                                          f"another joint of the loop the cut one (cut = true)")

    def make_symbols(self):
        """Coordinate names: the joint's own for one coordinate, joint_suffix for several, or its
        `coordinates` array. They share one namespace with parameters and inputs."""
        m = self.mechanism
        seen = {}
        for item, what in [(p, "parameter") for p in m.parameters] + [(i, "input") for i in m.inputs]:
            if item.name in seen:
                self.error_at_key((what + "s" if what == "parameter" else "inputs", item.name),
                                  f"{what} '{item.name}' is already defined as {seen[item.name]}")
            seen[item.name] = f"a {what}"
        for joint in m.tree:
            path = ("joints", joint.name)
            spec = self.data["joints"][joint.name]
            count = joint.degrees_of_freedom
            if "coordinates" in spec:
                names = spec["coordinates"]
                if not isinstance(names, list) or len(names) != count or not all(isinstance(x, str) for x in names):
                    self.error_at_value(path + ("coordinates",), f"coordinates must be an array of {count} names "
                                                                 f"for a {joint.type} joint")
                    continue
                places = [path + ("coordinates", i) for i in range(count)]
            else:
                names = [joint.name] if count == 1 else [f"{joint.name}_{s}" for s in SUFFIXES.get(joint.type, [])]
                places = [path] * count
            for name, place in zip(names, places):
                if not IDENTIFIER.match(name) or name in CPP_KEYWORDS or name.startswith("_") or "__" in name:
                    self.error_at_key(place, f"coordinate '{name}' is not an identifier")
                elif name in seen:
                    self.error_at_key(place, f"coordinate '{name}' is already defined as {seen[name]}")
                elif velocity(name) in seen:
                    self.error_at_key(place, f"coordinate '{name}': its rate's name '{velocity(name)}' is already "
                                             f"defined as {seen[velocity(name)]}")
                elif name in LANGUAGE_NAMES:
                    self.error_at_key(place, f"coordinate '{name}' clashes with {LANGUAGE_NAMES[name]} of the "
                                             f"expression language")
                elif name.endswith("_dot"):
                    self.error_at_key(place, f"coordinate '{name}' ends in _dot, which names rates")
                seen[name] = f"a coordinate (of joint '{joint.name}')"
                seen[velocity(name)] = f"the rate of coordinate '{name}'"
            joint.coordinates = list(names)
        for joint in m.cuts:
            spec = self.data["joints"][joint.name]
            for key in ("coordinates", "initial", "drive"):
                if key in spec:
                    self.error_at_key(("joints", joint.name, key),
                                      f"joint '{joint.name}' closes a loop, so it has no coordinates of its own "
                                      f"and no '{key}' (mark another joint of the loop cut = true to keep this "
                                      f"one in the tree)")
        m.symbols = symbols_of(m.coordinates, [p.name for p in m.parameters], [i.name for i in m.inputs])

    # ---- scopes ----------------------------------------------------------------------------------

    def scope_of(self, section, coordinates=False, rates=False, time=False, inputs=False, why=""):
        m = self.mechanism
        return scope_of(section, m.symbols, m.coordinates, [p.name for p in m.parameters], [i.name for i in m.inputs],
                        coordinates, rates, time, inputs, why, rate="rate", inputs_belong="a joint's initial values")

    def geometry_scope(self, section):
        return self.scope_of(section, why="geometry and inertia depend on the parameters only")

    def vector(self, path, value, scope, what):
        """Three Expr from an array of numbers or expressions (2 in a planar file: z = 0)."""
        sizes = (2, 3) if self.mechanism.planar else (3,)
        if not isinstance(value, list) or len(value) not in sizes:
            self.error_at_value(path, f"{what} must be an array of {' or '.join(str(s) for s in sizes)} "
                                      f"numbers or expressions")
            return None
        out = [self.expression(path + (i,), x, scope) for i, x in enumerate(value)]
        if any(x is None for x in out):
            return None
        return out + [Expr(sympy.Integer(0), None)] * (3 - len(out))

    # ---- bodies' and joints' numbers -------------------------------------------------------------

    def read_geometry(self):
        m = self.mechanism
        scope = self.geometry_scope("[mechanism]")
        if "gravity" in (self.data.get("mechanism") or {}):
            m.gravity = self.vector(("mechanism", "gravity"), self.data["mechanism"]["gravity"], scope, "gravity")
        ground = self.data.get("ground") or {}
        if isinstance(ground, dict) and "points" in ground:
            m.ground_points = self.points(("ground", "points"), ground["points"], self.geometry_scope("[ground]"))
        for name, body in m.bodies.items():
            path = ("bodies", name)
            spec = self.data["bodies"][name]
            scope = self.geometry_scope(f"[bodies.{name}]")
            if "mass" in spec:
                body.mass = self.expression(path + ("mass",), spec["mass"], scope)
            zero = Expr(sympy.Integer(0), None)
            body.centre_of_mass = [zero] * 3
            if "centre_of_mass" in spec:
                body.centre_of_mass = self.vector(path + ("centre_of_mass",), spec["centre_of_mass"], scope,
                                                  "the centre of mass")
            if "inertia" in spec:
                body.inertia = self.inertia(path + ("inertia",), spec["inertia"], scope)
            if "points" in spec:
                body.points = self.points(path + ("points",), spec["points"], scope)

    def inertia(self, path, value, scope):
        """The inertia tensor about the centre of mass: a scalar J_zz (planar files only), a table of its
        entries xx, yy, zz, xy, xz, yz (missing: 0), or a symmetric 3 x 3 array."""
        zero = Expr(sympy.Integer(0), None)
        J = [[zero] * 3 for _ in range(3)]
        if isinstance(value, (int, float, str)) and not isinstance(value, bool):
            if not self.mechanism.planar:
                self.error_at_value(path, "a spatial body's inertia is a table { xx = ..., yy = ..., zz = ..., "
                                          "xy = ..., xz = ..., yz = ... } or a 3 x 3 array; a single number is "
                                          "J_zz of a planar mechanism's body")
                return None
            J[2][2] = self.expression(path, value, scope)
            return J if J[2][2] is not None else None
        if isinstance(value, dict):
            self.known_keys(path, value)
            index = {"xx": (0, 0), "yy": (1, 1), "zz": (2, 2), "xy": (0, 1), "xz": (0, 2), "yz": (1, 2)}
            for key, x in value.items():
                if key in index:
                    i, j = index[key]
                    J[i][j] = J[j][i] = self.expression(path + (key,), x, scope)
            return J if all(e is not None for row in J for e in row) else None
        if isinstance(value, list) and len(value) == 3 and all(isinstance(r, list) and len(r) == 3 for r in value):
            for i in range(3):
                for j in range(3):
                    J[i][j] = self.expression(path + (i, j), value[i][j], scope)
            if any(e is None for row in J for e in row):
                return None
            for i in range(3):
                for j in range(i):
                    if sympy.simplify(J[i][j].value - J[j][i].value) != 0:
                        self.error_at_value(path + (i, j), f"the inertia tensor must be symmetric: entry "
                                                           f"({i + 1}, {j + 1}) differs from ({j + 1}, {i + 1})")
            return J
        self.error_at_value(path, "inertia must be a table { xx = ..., yy = ..., zz = ... } or a 3 x 3 array")
        return None

    def points(self, path, value, scope):
        if not isinstance(value, dict):
            self.error_at_value(path, "points must be a table of name = [x, y, z]")
            return {}
        out = {}
        for name, xyz in value.items():
            if self.identifier(path + (name,), name, "point name"):
                found = self.vector(path + (name,), xyz, scope, f"point '{name}'")
                if found is not None:
                    out[name] = found
        return out

    def point_of(self, path, value, body):
        """A point of `body`: a name from its points, or coordinates in its frame."""
        if isinstance(value, str):
            points = self.mechanism.ground_points if body == GROUND else self.mechanism.bodies[body].points
            if value not in points:
                listing = ", ".join(points) if points else "none defined"
                self.error_at_value(path, f"'{value}' is not a point of {body}{suggestion(value, points)} "
                                          f"(its points: {listing})")
                return None
            return points[value]
        return self.vector(path, value, self.geometry_scope(f"[{'.'.join(str(x) for x in path[:2])}]"), "a point")

    def rotation(self, path, value, scope):
        if not isinstance(value, dict):
            self.error_at_value(path, "a rotation is a table { axis = [x, y, z], angle = ... } (radians)")
            return None
        self.known_keys(path, value)
        if "axis" not in value or "angle" not in value:
            self.error_at_key(path, "a rotation needs an axis and an angle")
            return None
        axis = self.constant_vector(path + ("axis",), value["axis"], "the rotation axis")
        angle = self.expression(path + ("angle",), value["angle"], scope)
        if axis is None or angle is None:
            return None
        axis = unit(axis)
        if self.mechanism.planar and abs(abs(axis[2]) - 1.0) > 1e-15:
            self.error_at_value(path + ("axis",), "in a planar mechanism frames turn about z only")
            return None
        return Rotation(axis, angle)

    def read_joint_values(self):
        m = self.mechanism
        for name, joint in m.joints.items():
            path = ("joints", name)
            spec = self.data["joints"][name]
            scope = self.geometry_scope(f"[joints.{name}]")
            for side in ("parent", "child"):
                body = getattr(joint, side)
                origin = [Expr(sympy.Integer(0), None)] * 3
                if f"{side}_point" in spec:
                    origin = self.point_of(path + (f"{side}_point",), spec[f"{side}_point"], body)
                rotation = None
                if f"{side}_rotation" in spec:
                    rotation = self.rotation(path + (f"{side}_rotation",), spec[f"{side}_rotation"], scope)
                setattr(joint, f"{side}_frame", Placement(origin, rotation))
            if joint.type == "distance" and "length" in spec:
                joint.length = self.expression(path + ("length",), spec["length"], scope)
            if joint.cut:
                continue
            self.read_initial(joint, path, spec)
            if "drive" in spec:
                if joint.degrees_of_freedom != 1:
                    self.error_at_key(path + ("drive",), f"only a joint of one coordinate can be driven; a "
                                                         f"{joint.type} joint has {joint.degrees_of_freedom}")
                else:
                    joint.drive = self.expression(path + ("drive",), spec["drive"],
                                                  self.scope_of(f"[joints.{name}] drive", time=True,
                                                                why="a drive prescribes the coordinate as a "
                                                                    "function of t and the parameters"))
                    for key in ("position", "velocity"):
                        if key in (joint.initial[0] if joint.initial else {}):
                            self.error_at_key(path + ("initial", key),
                                              f"joint '{name}' is driven: its start is its drive's value and rate "
                                              f"at t = 0, so it takes no initial {key} (a guess is allowed)")

    def read_initial(self, joint, path, spec):
        count = joint.degrees_of_freedom
        joint.initial = [{} for _ in range(count)]
        if "initial" not in spec:
            return
        table = spec["initial"]
        if not isinstance(table, dict):
            self.error_at_value(path + ("initial",), "initial must be a table { position = ..., velocity = ... }")
            return
        self.known_keys(path + ("initial",), table)
        scope = self.scope_of(f"[joints.{joint.name}] initial", inputs=True,
                              why="initial values depend on the parameters and inputs")
        if "position" in table and "guess" in table:
            self.error_at_key(path + ("initial", "guess"), "a coordinate is either given (position) or solved "
                                                           "from a guess, not both")
        for key in ("position", "velocity", "guess"):
            if key not in table:
                continue
            value = table[key]
            where = path + ("initial", key)
            if count == 1 and not isinstance(value, list):
                values, places = [value], [where]
            elif isinstance(value, list) and len(value) == count:
                values, places = value, [where + (i,) for i in range(count)]
            else:
                self.error_at_value(where, f"a {joint.type} joint has {count} coordinates: {key} must be "
                                           f"{'a number or expression' if count == 1 else f'an array of {count}'}")
                continue
            for i, (x, place) in enumerate(zip(values, places)):
                found = self.expression(place, x, scope)
                if found is not None:
                    joint.initial[i][key] = found

    # ---- forces ----------------------------------------------------------------------------------

    def read_forces(self):
        forces = self.table(("forces",))
        if forces is None:
            return
        m = self.mechanism
        for name, spec in forces.items():
            path = ("forces", name)
            if not self.identifier(path, name, "force name"):
                continue
            if not isinstance(spec, dict):
                self.error_at_value(path, f"force '{name}' must be a table with a type")
                continue
            kind = spec.get("type")
            if kind not in FORCE_TYPES:
                if "type" not in spec:
                    self.error_at_key(path, f"force '{name}' needs a type ({', '.join(FORCE_TYPES)})")
                else:
                    self.error_at_value(path + ("type",), f"unknown force type '{kind}'"
                                                          f"{suggestion(str(kind), FORCE_TYPES)} "
                                                          f"(types: {', '.join(FORCE_TYPES)})")
                continue
            for key in spec:
                allowed = ALLOWED[("forces", kind)].names
                if key not in allowed:
                    self.error_at_key(path + (key,), f"unknown key '{key}' in a {kind} force"
                                                     f"{suggestion(key, allowed)} (allowed: {', '.join(allowed)})")
            force = Force(name, kind)
            if "description" in spec:
                force.description = self.string(path + ("description",), spec["description"], "the description")
            scope = self.scope_of(f"[forces.{name}]", coordinates=True, rates=True, time=True)
            constant = self.geometry_scope(f"[forces.{name}]")
            for key in ALLOWED[("forces", kind)].required:
                if key not in spec:
                    self.error_at_key(path, f"a {kind} force needs {key}")
            if kind == "spring_damper":
                ends = spec.get("between")
                if not isinstance(ends, list) or len(ends) != 2 or not all(isinstance(e, str) for e in ends):
                    if "between" in spec:
                        self.error_at_value(path + ("between",), "between must name two points, as "
                                                                 "[\"body.point\", \"body.point\"] (\"body\" alone: "
                                                                 "its origin)")
                else:
                    force.fields["between"] = [self.named_point(path + ("between", i), e) for i, e in enumerate(ends)]
                for key in ("stiffness", "damping", "free_length"):
                    if key in spec:
                        force.fields[key] = self.expression(path + (key,), spec[key], constant)
            elif kind in ("joint_spring_damper", "joint_force"):
                joint = self.tree_joint(path + ("joint",), spec.get("joint"))
                force.fields["joint"] = joint
                if kind == "joint_spring_damper":
                    if joint is not None and joint.degrees_of_freedom != 1:
                        self.error_at_value(path + ("joint",), f"a joint spring-damper acts on a joint of one "
                                                               f"coordinate; '{joint.name}' has "
                                                               f"{joint.degrees_of_freedom}")
                    for key in ("stiffness", "damping", "rest"):
                        if key in spec:
                            force.fields[key] = self.expression(path + (key,), spec[key], constant)
                elif joint is not None and "value" in spec:
                    count = joint.degrees_of_freedom
                    value = spec["value"]
                    if count == 1 and not isinstance(value, list):
                        force.fields["value"] = [self.expression(path + ("value",), value, scope)]
                    elif isinstance(value, list) and len(value) == count:
                        force.fields["value"] = [self.expression(path + ("value", i), x, scope)
                                                 for i, x in enumerate(value)]
                    else:
                        self.error_at_value(path + ("value",), f"joint '{joint.name}' has {count} coordinates: "
                                                               f"value must be {count} expressions")
            else:  # force, torque
                body = self.body_reference(path + ("body",), spec.get("body"), "the body") if "body" in spec else None
                if body == GROUND:
                    self.error_at_value(path + ("body",), "a force on the ground does nothing; name a body")
                    body = None
                force.fields["body"] = body
                if kind == "force":
                    force.fields["point"] = [Expr(sympy.Integer(0), None)] * 3
                    if "point" in spec and body is not None:
                        force.fields["point"] = self.point_of(path + ("point",), spec["point"], body)
                if "value" in spec:
                    value = spec["value"]
                    if kind == "torque" and m.planar and not isinstance(value, list):
                        # A planar mechanism's torque is about z: one number or expression.
                        found = self.expression(path + ("value",), value, scope)
                        zero = Expr(sympy.Integer(0), None)
                        force.fields["value"] = [zero, zero, found] if found is not None else None
                    elif kind == "torque" and m.planar and isinstance(value, list) and len(value) == 2:
                        self.error_at_value(path + ("value",), "a planar mechanism's torque is about z: give one "
                                                               "number or expression (or all three components)")
                    else:
                        force.fields["value"] = self.vector(path + ("value",), value, scope, "the value")
                frame = spec.get("frame", "world")
                if frame not in ("world", "body"):
                    self.error_at_value(path + ("frame",), "frame must be \"world\" or \"body\"")
                force.fields["frame"] = frame
            m.forces.append(force)

    def named_point(self, path, text):
        body, _, point = text.partition(".")
        if self.body_reference(path, body, "the body before the dot") is None:
            return None
        if not point:
            return body, [Expr(sympy.Integer(0), None)] * 3
        found = self.point_of(path, point, body)
        return (body, found) if found is not None else None

    def tree_joint(self, path, name):
        m = self.mechanism
        if not isinstance(name, str) or name not in m.joints:
            if name is not None:
                self.error_at_value(path, f"unknown joint '{name}'{suggestion(str(name), m.joints)} "
                                          f"(joints: {', '.join(m.joints)})")
            return None
        joint = m.joints[name]
        if joint.cut:
            self.error_at_value(path, f"joint '{name}' closes a loop, so it has no coordinate to act on; mark "
                                      f"another joint of the loop cut = true")
            return None
        if joint.degrees_of_freedom == 0:
            self.error_at_value(path, f"joint '{name}' is fixed: it has no coordinate to act on")
            return None
        return joint


def read_mechanism(text):
    return MechanismReader(text).read()


def is_mechanism_file(text):
    """Whether a TOML text is a mechanism file (it has a [mechanism] table), without judging it."""
    import tomllib
    try:
        return isinstance(tomllib.loads(text).get("mechanism"), dict)
    except tomllib.TOMLDecodeError:
        return False


__all__ = ["read_mechanism", "is_mechanism_file", "Diagnostic", "GROUND", "CHAINS"]
