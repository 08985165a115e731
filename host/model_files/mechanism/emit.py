"""The C++ header of a checked Mechanism: one model struct (model/concept.hpp) whose functions evaluate the
joint tree with include/lockstep/multibody/.

- `tree_of(p)` fills the tree's bodies and joints from the parameters: multi-coordinate joints become
  chains of revolute and prismatic joints with massless bodies between (model.CHAINS);
- `mass` is the composite-rigid-body algorithm on it, `force` the recursive Newton-Euler algorithm with
  the force elements as external forces and joint forces added to Q;
- `constraint` holds the cut joints' conditions (multibody/cut_joints.hpp) and the drives q_i - f(t);
- `initial_state` sets the given joint values and solves for the others (multibody/assembly.hpp);
- `quantities` and `quantity_values` are what the mechanism reports at the save times (stepper/quantities.hpp):
  each body's pose, each named point's position and each joint's reaction (multibody/outputs.hpp).

The user's expressions are printed by the equations generator's printer, with its common subexpressions
and #line directives into the mechanism file. User names are spelled with a prefix in C++ (par_, in_,
q_, v_), so that no name of the file can clash with the generated code's own.
"""
import sympy

from equations.emit import Function, Names, cpp_string, literal, named_value_tables
from equations.model import Expr, velocity

from .model import CHAINS, CUT_ROWS, GROUND, Z

PREFIX = {"parameter": "par_", "input": "in_", "coordinate": "q_", "rate": "v_"}
TEMPLATE = "  template <class T, class P>\n  LOCKSTEP_HD static "


def perpendiculars(u):
    """Two unit vectors completing u to a right-handed orthonormal basis (w1, w2, u)."""
    ux, uy, uz = u
    helper = (1.0, 0.0, 0.0) if abs(ux) < 0.9 else (0.0, 1.0, 0.0)
    w1 = (helper[1] * uz - helper[2] * uy, helper[2] * ux - helper[0] * uz, helper[0] * uy - helper[1] * ux)
    length = sum(x * x for x in w1) ** 0.5
    w1 = tuple(x / length for x in w1)
    w2 = (uy * w1[2] - uz * w1[1], uz * w1[0] - ux * w1[2], ux * w1[1] - uy * w1[0])
    return w1, w2


def constant(vector):
    return "vec3<double>{{" + ", ".join(literal(x) for x in vector) + "}}"


class Header:
    def __init__(self, mechanism, source_name, toml_path):
        self.m = mechanism
        self.source_name = source_name
        self.toml_path = toml_path
        symbols = mechanism.symbols
        self.cpp_names = {symbols["t"]: "t"}
        for p in mechanism.parameters:
            self.cpp_names[symbols[p.name]] = PREFIX["parameter"] + p.name
        for x in mechanism.inputs:
            self.cpp_names[symbols[x.name]] = PREFIX["input"] + x.name
        for c in mechanism.coordinates:
            self.cpp_names[symbols[c]] = PREFIX["coordinate"] + c
            self.cpp_names[symbols[velocity(c)]] = PREFIX["rate"] + c
        self.taken = set(self.cpp_names.values()) | {"T", "P", "t", "q", "v", "p", "in", "s", "c", "V", "f_ext",
                                                     "phi", "Q", "value", "q0", "v0", "a", "lambda", "z", "F", "cut",
                                                     "added", "gravity", "force_xyz", "moment_xyz", "g", "W", "i", "M"}
        # A planar mechanism's configuration is planar (multibody/planar.hpp) where its motion is computed.
        self.place = "place_planar" if mechanism.planar else "place"
        self.layout()

    # ---- the tree of primitive joints ----------------------------------------------------------------

    def layout(self):
        """Primitive joints (one per C++ body) in topological order; each user body is the last body of its
        joint's chain. Coordinates are numbered in the same order."""
        m = self.m
        self.primitives = []   # dicts: type, parent (index), coordinate, axis, in_parent, in_child, body
        self.index = {GROUND: -1}
        coordinate = 0
        for joint in m.tree:
            parent_name, child_name = (joint.child, joint.parent) if joint.reversed else (joint.parent, joint.child)
            in_parent, in_child = ((joint.child_frame, joint.parent_frame) if joint.reversed
                                   else (joint.parent_frame, joint.child_frame))
            chain = CHAINS[joint.type]
            parent = self.index[parent_name]
            if not chain:
                self.primitives.append(dict(type="fixed", parent=parent, coordinate=-1, axis=Z, in_parent=in_parent,
                                            in_child=in_child, body=m.bodies[child_name], joint=joint))
            for k, (kind, axis) in enumerate(chain):
                axis = joint.axis if axis is None else axis
                if joint.reversed:
                    axis = tuple(-x for x in axis)
                last = k == len(chain) - 1
                self.primitives.append(dict(type="revolute" if kind == "R" else "prismatic", parent=parent,
                                            coordinate=coordinate, axis=axis,
                                            in_parent=in_parent if k == 0 else None,
                                            in_child=in_child if last else None,
                                            body=m.bodies[child_name] if last else None, joint=joint))
                parent = len(self.primitives) - 1
                coordinate += 1
            self.index[child_name] = len(self.primitives) - 1

    # ---- code of one function --------------------------------------------------------------------------

    def function(self, scalar, coordinates=False, rates=False, inputs=False):
        m, symbols, bindings = self.m, self.m.symbols, []
        convert = (lambda code: f"T({code})") if scalar == "T" else (lambda code: code)
        if coordinates:
            bindings += [(symbols[c], f"q[{i}]") for i, c in enumerate(m.coordinates)]
        if rates:
            bindings += [(symbols[velocity(c)], f"v[{i}]") for i, c in enumerate(m.coordinates)]
        bindings += [(symbols[p.name], convert(f"p[{i}]")) for i, p in enumerate(m.parameters)]
        if inputs:
            bindings += [(symbols[x.name], f"in[{i}]") for i, x in enumerate(m.inputs)]
        return Function(scalar, bindings, Names(self.taken), self.cpp_names, self.toml_path)

    def placement_outputs(self, target, placement, outputs):
        """Outputs setting frame `target` (a C++ lvalue of type frame<T>) from a Placement; rotation lines
        that need the angle go after the straight-line part."""
        tail = []
        if placement is None:
            return tail
        self.origin_outputs(f"{target}.p", placement, outputs)
        if placement.rotation is not None:
            slot = self.slot(outputs, placement.rotation.angle)
            tail.append(f"    {target}.R = multibody::rotation_about({constant(placement.rotation.axis)}, {slot});")
        return tail

    @staticmethod
    def origin_outputs(target, placement, outputs):
        """Outputs setting the vector `target` (a C++ lvalue, zero before) to a Placement's origin."""
        for i in range(3):
            if placement.origin[i].value != 0:
                outputs.append((f"{target}[{i}]", placement.origin[i]))

    @staticmethod
    def slots(outputs):
        """How many entries of the function's scratch array `value` the outputs fill."""
        return sum(1 for target, _ in outputs if target.startswith("value["))

    @staticmethod
    def slot(outputs, expr):
        """A new entry value[k] of the function's scratch array, computed as `expr`."""
        name = f"value[{Header.slots(outputs)}]"
        outputs.append((name, expr))
        return name

    # ---- the members -----------------------------------------------------------------------------------

    def tree_of(self):
        outputs, tail = [], []
        for i, prim in enumerate(self.primitives):
            body, joint = prim["body"], f"s.joints[{i}]"
            tail.append(f"    {joint}.type = multibody::joint_type::{prim['type']};")
            tail.append(f"    {joint}.parent = {prim['parent']};")
            tail.append(f"    {joint}.coordinate = {prim['coordinate']};")
            if prim["type"] != "fixed":
                tail.append(f"    {joint}.axis = {{{{{', '.join(f'P({literal(x)})' for x in prim['axis'])}}}}};")
                along = [k for k in range(3) if prim["axis"][k] != 0.0]
                if len(along) == 1:  # along a joint-frame axis: place() turns two columns only
                    tail.append(f"    {joint}.axis_index = {along[0]};")
                    if prim["axis"][along[0]] < 0:
                        tail.append(f"    {joint}.axis_sign = -1;")
            for side, placement in (("parent", prim["in_parent"]), ("child", prim["in_child"])):
                # What place() may skip: a frame without rotation, or at the body's origin.
                if placement is None or placement.rotation is None:
                    tail.append(f"    {joint}.{side}_turned = false;")
                if placement is None or all(e.value == 0 for e in placement.origin):
                    tail.append(f"    {joint}.{side}_offset = false;")
            tail += self.placement_outputs(f"{joint}.in_parent", prim["in_parent"], outputs)
            tail += self.placement_outputs(f"{joint}.in_child", prim["in_child"], outputs)
            if body is not None:
                outputs.append((f"s.bodies[{i}].mass", body.mass))
                for k in range(3):
                    if body.centre_of_mass[k].value != 0:
                        outputs.append((f"s.bodies[{i}].centre_of_mass[{k}]", body.centre_of_mass[k]))
                for a in range(3):
                    for b in range(3):
                        if body.inertia[a][b].value != 0:
                            outputs.append((f"s.bodies[{i}].inertia({a}, {b})", body.inertia[a][b]))
        body, used = self.function("P").body(outputs)
        value_count = self.slots(outputs)
        declaration = ["    multibody::tree<P, n_bodies> s;"]
        if value_count:
            declaration.append(f"    P value[{value_count}];")
        argument = "const P* p" if used else "const P*"
        # The tree's constants are of the parameters' scalar: doubles, unless the library differentiates
        # with respect to a parameter (multibody/tree.hpp).
        return ("  template <class P>\n  LOCKSTEP_HD static " + f"multibody::tree<P, n_bodies> tree_of({argument}) {{\n" +
                "\n".join(declaration + body + tail + ["    return s;"]) + "\n  }\n")

    def world_frame_lines(self, name, body, placement, outputs, pre, post):
        """Declares `name`, the world frame of a joint frame on `body`: its local frame (or, where it is
        not turned from the body's axes, its origin alone) before the straight-line code (pre), which
        fills it, and the world frame after it (post)."""
        if placement is None or placement.rotation is None:
            pre.append(f"    vec3<T> {name}_origin{{}};")
            if placement is not None:
                self.origin_outputs(f"{name}_origin", placement, outputs)
            local = f"{name}_origin"
        else:
            pre.append(f"    multibody::frame<T> {name}_local;")
            post += self.placement_outputs(f"{name}_local", placement, outputs)
            local = f"{name}_local"
        # auto: a planar frame where c is the planar configuration (multibody/planar.hpp), else a frame.
        post.append(f"    const auto {name} = multibody::world_frame(c.pose, {self.index[body]}, {local});")

    def cut_frames(self, outputs, pre, lines):
        """The world frames a<i>, b<i> of each cut joint's sides (parent, child), and its rows."""
        cuts = []
        for number, joint in enumerate(self.m.cuts):
            a, b = f"a{number}", f"b{number}"
            self.world_frame_lines(a, joint.parent, joint.parent_frame, outputs, pre, lines)
            self.world_frame_lines(b, joint.child, joint.child_frame, outputs, pre, lines)
            rows = self.cut_rows(joint, a, b, outputs)
            assert len(rows) == CUT_ROWS[joint.type][1 if self.m.planar else 0]
            cuts.append((joint, a, b, rows))
        return cuts

    def constraint(self):
        m = self.m
        outputs, pre, lines, row = [], [], [], 0
        for joint, a, b, rows in self.cut_frames(outputs, pre, lines):
            lines.append(f"    // joint {joint.name} ({joint.type}) closes a loop")
            offset = self.offset_name(a, b)
            if any(offset in r for r, _, _ in rows):  # once for the joint's two or three rows
                lines.append(f"    const vec3<T> {offset} = multibody::offset_in({a}, {b});")
            for r, _, _ in rows:
                lines.append(f"    phi[{row}] = {r};")
                row += 1
        drives = []
        for joint in m.tree:
            if joint.drive is not None:
                index = m.coordinates.index(joint.coordinates[0])
                slot = self.slot(outputs, joint.drive)
                drives.append(f"    phi[{row}] = q[{index}] - {slot};  // joint {joint.name} is driven")
                row += 1
        if row == 0:
            return TEMPLATE + "vec<T, m> constraint(const T&, const vec<T, n>&, const P*) {\n    return vec<T, m>{};\n  }\n"
        body, used = self.function("T").body(outputs)
        head = ["    const auto s = tree_of(p);", f"    const auto c = multibody::{self.place}<n>(s, q);",
                "    vec<T, m> phi;"]
        value_count = self.slots(outputs)
        if value_count:
            head.append(f"    T value[{value_count}];")
        code = head + pre + body + lines + drives + ["    return phi;"]
        time = "const T& t" if used & {self.m.symbols["t"]} else "const T&"
        return TEMPLATE + f"vec<T, m> constraint({time}, const vec<T, n>& q, const P* p) {{\n" + "\n".join(code) + "\n  }\n"

    @staticmethod
    def offset_name(a, b):
        """The C++ name of the offset of frame b's origin from frame a's, in a's axes."""
        return f"offset_{a}_{b}"

    def cut_rows(self, joint, a, b, outputs):
        """The constraint rows of a cut joint between the world frames a and b (C++ names), in order
        (multibody/cut_joints.hpp; CUT_ROWS counts them): (C++ code of the row, a function from the C++
        code of its multiplier to that of its force on b's body, what the row holds) each."""
        m = self.m
        u = joint.axis
        w1, w2 = perpendiculars(u)
        offset = self.offset_name(a, b)  # multibody::offset_in(a, b), which constraint() declares

        def perpendicular(w, x, what):
            arguments = f"{a}, {constant(w)}, {b}, {constant(x)}"
            return (f"multibody::perpendicular({arguments})",
                    lambda multiplier: f"multibody::perpendicular_force({arguments}, {multiplier})", what)

        def along(w, what):
            return (f"multibody::offset_along({a}, {constant(w)}, {b})",
                    lambda multiplier: f"multibody::offset_along_force({a}, {constant(w)}, {b}, {multiplier})", what)

        def offset_row(i, axis):
            return (f"{offset}[{i}]", lambda multiplier: f"multibody::offset_force({a}, {i}, {b}, {multiplier})",
                    f"the offset along {axis} of the parent side's frame")
        ex, ey, ez = (1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)
        offsets = [offset_row(i, axis) for i, axis in enumerate("xyz")]
        if m.planar:
            w = (-u[1], u[0], 0.0)
            table = {
                "revolute": offsets[:2],
                "prismatic": [perpendicular(w, u, "the axes' alignment (no turn)"),
                              along(w, "the offset across the axis")],
                "fixed": offsets[:2] + [perpendicular(ex, ey, "no turn")],
            }
        else:
            aligned = [perpendicular(w1, u, "the axis' alignment (1 of 2)"),
                       perpendicular(w2, u, "the axis' alignment (2 of 2)")]
            across = [along(w1, "the offset across the axis (1 of 2)"), along(w2, "the offset across the axis (2 of 2)")]
            table = {
                "revolute": offsets + aligned,
                "prismatic": aligned + [perpendicular(w2, w1, "no twist about the axis")] + across,
                "cylindrical": aligned + across,
                "spherical": offsets,
                "universal": offsets + [perpendicular(ex, ey, "the cross's axes at right angles")],
                "planar": [perpendicular(ex, ez, "the planes parallel (1 of 2)"),
                           perpendicular(ey, ez, "the planes parallel (2 of 2)"), along(ez, "the offset normal to the plane")],
                "fixed": offsets + [perpendicular(ex, ey, "no turn about z"), perpendicular(ey, ez, "no turn about x"),
                                    perpendicular(ez, ex, "no turn about y")],
            }
        if joint.type == "distance":
            slot = self.slot(outputs, joint.length)
            return [(f"multibody::distance_residual({a}, {b}, {slot})",
                     lambda multiplier: f"multibody::distance_force({a}, {b}, {multiplier})", "the distance")]
        return table[joint.type]

    def row_names(self):
        """A name for each constraint row: the joint, its type and the condition of the row."""
        names = []
        for number, joint in enumerate(self.m.cuts):
            for _, _, condition in self.cut_rows(joint, "a", "b", []):
                names.append(f"joint {joint.name}, {joint.type}, closes a loop: {condition}")
        for joint in self.m.tree:
            if joint.drive is not None:
                names.append(f"joint {joint.name} is driven: {joint.coordinates[0]} - f(t)")
        return names

    def point_code(self, body, xyz, outputs, name, pre, post):
        """Declares `name`, the world position of the point xyz of body: its local coordinates before the
        straight-line code (pre), the world position after it (post)."""
        pre.append(f"    vec3<T> {name}_local;")
        for k in range(3):
            if xyz[k].value != 0:
                outputs.append((f"{name}_local[{k}]", xyz[k]))
        index = self.index[body]
        if index < 0:
            post.append(f"    const vec3<T> {name} = {name}_local;")
        else:
            post.append(f"    const vec3<T> {name} = multibody::point_of(c.pose[{index}], {name}_local);")

    def applied_forces(self):
        """The forces on the bodies besides their joints': gravity, the force elements and applied forces
        as f_ext, and the joint forces as `added` to Q. Sets self.added, the coordinate of each, which
        force and quantity_values read."""
        m = self.m
        outputs, declarations, lines, added = [], [], [], []
        for k in range(3):
            outputs.append((f"gravity[{k}]", m.gravity[k]))
        for number, f in enumerate(m.forces):
            lines.append(f"    // force {f.name} ({f.type})")
            if f.type == "spring_damper":
                ends = []
                for side, (body, xyz) in zip("ab", f.fields["between"]):
                    name = f"x{side}{number}"
                    self.point_code(body, xyz, outputs, name, declarations, lines)
                    ends.append((self.index[body], name))
                k = self.slot(outputs, f.fields["stiffness"])
                d = self.slot(outputs, f.fields.get("damping", Expr(sympy.Integer(0), None)))
                L = self.slot(outputs, f.fields["free_length"])
                (ia, xa), (ib, xb) = ends
                lines.append(f"    multibody::spring_damper(V, f_ext, {ia}, {xa}, {ib}, {xb}, {k}, {d}, {L});")
            elif f.type == "joint_spring_damper":
                joint = f.fields["joint"]
                i = m.coordinates.index(joint.coordinates[0])
                rest = f.fields.get("rest", Expr(sympy.Integer(0), None)).value
                damping = f.fields.get("damping", Expr(sympy.Integer(0), None)).value
                qs, vs = m.symbols[joint.coordinates[0]], m.symbols[velocity(joint.coordinates[0])]
                value = -f.fields["stiffness"].value * (qs - rest) - damping * vs
                added.append((i, Expr(value, f.fields["stiffness"].line)))
            elif f.type == "joint_force":
                joint = f.fields["joint"]
                for c, e in zip(joint.coordinates, f.fields["value"]):
                    added.append((m.coordinates.index(c), e))
            else:
                body = f.fields["body"]
                index = self.index[body]
                vector = f"u{number}"
                declarations.append(f"    vec3<T> {vector};")
                for k in range(3):
                    outputs.append((f"{vector}[{k}]", f.fields["value"][k]))
                world = vector if f.fields["frame"] == "world" else f"(c.pose[{index}].R * {vector})"
                if f.type == "force":
                    self.point_code(body, f.fields["point"], outputs, f"x{number}", declarations, lines)
                    lines.append(f"    f_ext[{index}] = f_ext[{index}] + multibody::force_at(x{number}, {world});")
                else:
                    lines.append(f"    f_ext[{index}] = f_ext[{index}] + multibody::force<T>{{{world}, vec3<T>{{}}}};")
        self.added = [i for i, _ in added]
        extra = [(f"added[{k}]", e) for k, (_, e) in enumerate(added)]
        body, used = self.function("T", coordinates=True, rates=True).body(outputs + extra)
        head = []
        value_count = self.slots(outputs)
        if value_count:
            head.append(f"    T value[{value_count}];")
        code = head + declarations + body + lines
        time = "const T& t" if used & {self.m.symbols["t"]} else "const T&"
        arguments = [time, "[[maybe_unused]] const vec<T, n>& q", "[[maybe_unused]] const vec<T, n>& v",
                     "[[maybe_unused]] const P* p",
                     "[[maybe_unused]] const multibody::configuration<T, n_bodies>& c",
                     "[[maybe_unused]] const multibody::motion<T>* V", "[[maybe_unused]] multibody::force<T>* f_ext",
                     "vec3<T>& gravity", "T* added" if added else "T*"]
        # f_ext starts at zero (force's default value), so the lines above only add to it.
        return (TEMPLATE + f"void applied_forces({', '.join(arguments)}) {{\n" + "\n".join(code) + "\n  }\n")

    def force_lines(self, with_mass=False):
        """The code of Q(t, q, v) into `Q` from the tree `s` placed once; with_mass: M(q) into `M` too, from
        the same configuration (mass_and_force)."""
        added = self.added
        if self.m.planar:
            # The motion in the plane (multibody/planar.hpp); the applied forces are written on spatial
            # quantities, which the same configuration gives (copies: what they do not read, the compiler
            # drops).
            code = ["    const auto s = tree_of(p);", "    const auto g = multibody::place_planar<n>(s, q);",
                    "    multibody::planar_motion<T> W[n_bodies];", "    multibody::velocities<n>(s, g, v, W);",
                    "    const auto c = multibody::spatial_configuration(g);", "    multibody::motion<T> V[n_bodies];",
                    "    for (int i = 0; i < n_bodies; ++i) V[i] = multibody::spatial_motion(W[i]);"]
        else:
            code = ["    const auto s = tree_of(p);", "    const auto c = multibody::place<n>(s, q);",
                    "    multibody::motion<T> V[n_bodies];", "    multibody::velocities<n>(s, c, v, V);"]
        configuration, motions = ("g", "W") if self.m.planar else ("c", "V")
        if with_mass:
            code.append(f"    M = multibody::mass_matrix<n>(s, {configuration});")
        code += ["    multibody::force<T> f_ext[n_bodies];", "    vec3<T> gravity;"]
        if added:
            code.append(f"    T added[{len(added)}];")
        code.append(f"    applied_forces<T, P>(t, q, v, p, c, V, f_ext, gravity, {'added' if added else 'nullptr'});")
        code.append(f"    Q = multibody::generalized_forces<n>(s, {configuration}, {motions}, v, gravity, f_ext);")
        code += [f"    Q[{i}] = Q[{i}] + added[{k}];" for k, i in enumerate(added)]
        return code

    def force(self):
        code = ["    vec<T, n> Q;"] + self.force_lines() + ["    return Q;"]
        return (TEMPLATE + "vec<T, n> force(const T& t, const vec<T, n>& q, const vec<T, n>& v, const P* p) {\n" +
                "\n".join(code) + "\n  }\n")

    def mass_and_force(self):
        """M and Q in one pass, the tree placed once (model/concept.hpp, mass_and_force): the bits of mass
        and force, which place it each."""
        return (TEMPLATE + "void mass_and_force(const T& t, const vec<T, n>& q, const vec<T, n>& v, const P* p, "
                "mat<T, n, n>& M, vec<T, n>& Q) {\n" + "\n".join(self.force_lines(with_mass=True)) + "\n  }\n")

    # ---- what the mechanism reports (stepper/quantities.hpp) -------------------------------------------------

    def quantity_table(self):
        """(name, description) of each quantity, in the order quantity_values writes them: each body's
        pose and named points, in file order, then each joint's reaction, in file order."""
        m = self.m
        axes = "xy" if m.planar else "xyz"
        table = []
        for name, body in m.bodies.items():
            table += [(f"{name}.{x}", f"length: the {x} of body {name}'s frame origin, in world axes") for x in axes]
            if m.planar:
                table.append((f"{name}.angle", f"rad: body {name}'s rotation about z, in (-pi, pi]"))
            else:
                table += [(f"{name}.q{c}", f"1: the {c} component of body {name}'s orientation, a unit quaternion "
                                           f"with w >= 0") for c in "wxyz"]
            for point in body.points:
                table += [(f"{name}.{point}.{x}", f"length: the {x} of point {point} of body {name}, in world axes")
                          for x in axes]
        forces, moments = (("fx", "fy"), ("tz",)) if m.planar else (("fx", "fy", "fz"), ("tx", "ty", "tz"))
        for joint in m.joints.values():
            table += [(f"{joint.name}.{f}", f"force: joint {joint.name}'s reaction force on body {joint.child}, "
                                            f"{f[1]} in the joint's frame on it") for f in forces]
            table += [(f"{joint.name}.{t}", f"force x length: joint {joint.name}'s reaction moment on body {joint.child} "
                                            f"about the origin of the joint's frame on it, {t[1]} in its axes")
                      for t in moments]
        return table

    def quantity_values(self):
        m = self.m
        outputs, pre, lines = [], [], []
        code = ["    using T = double;", "    const auto s = tree_of(p);", "    const auto c = multibody::place<n>(s, q);",
                "    multibody::motion<T> V[n_bodies];", "    multibody::velocities<n>(s, c, v, V);",
                "    multibody::force<T> f_ext[n_bodies];", "    vec3<T> gravity;"]
        if self.added:
            code.append(f"    T added[{len(self.added)}];")
        code.append(f"    applied_forces<T, double>(t, q, v, p, c, V, f_ext, gravity, "
                    f"{'added' if self.added else 'nullptr'});")
        # The cut joints' constraint forces on their two sides (multibody/cut_joints.hpp), from their
        # multipliers, which come first in lambda.
        cuts = self.cut_frames(outputs, pre, lines)
        row = 0
        if cuts:
            lines.append(f"    multibody::force<T> cut[{len(cuts)}];  // on each cut joint's child side")
        for number, (joint, a, b, rows) in enumerate(cuts):
            terms = []
            for _, force_of, _ in rows:
                terms.append(force_of(f"lambda[{row}]"))
                row += 1
            lines.append(f"    cut[{number}] = {' + '.join(terms)};")
            for body, sign in ((joint.child, "+"), (joint.parent, "-")):
                i = self.index[body]
                if i >= 0:
                    lines.append(f"    f_ext[{i}] = f_ext[{i}] {sign} cut[{number}];")
        lines.append("    multibody::force<T> F[n_bodies];")
        lines.append("    multibody::transmitted_forces<n>(s, c, V, v, &a, gravity, f_ext, F);")
        # The values, in quantity_table's order.
        at = 0
        for name, body in m.bodies.items():
            i = self.index[name]
            lines.append(f"    // body {name}")
            for x in range(2 if m.planar else 3):
                lines.append(f"    z[{at}] = c.pose[{i}].p[{x}];")
                at += 1
            if m.planar:
                lines.append(f"    z[{at}] = multibody::planar_angle(c.pose[{i}].R);")
                at += 1
            else:
                lines.append(f"    multibody::quaternion_of(c.pose[{i}].R, z + {at});")
                at += 4
            for xyz in body.points.values():
                variable = f"point_{len(pre)}"
                self.point_code(name, xyz, outputs, variable, pre, lines)
                for x in range(2 if m.planar else 3):
                    lines.append(f"    z[{at}] = {variable}[{x}];")
                    at += 1
        lines.append("    double force_xyz[3], moment_xyz[3];")
        cut_of = {joint.name: (number, b) for number, (joint, _, b, _) in enumerate(cuts)}
        for joint in m.joints.values():
            lines.append(f"    // joint {joint.name}: what its parent side exerts on its child side")
            if joint.name in cut_of:
                number, frame = cut_of[joint.name]
                transmitted = f"cut[{number}]"
            else:
                frame = f"j{len(pre)}"
                self.world_frame_lines(frame, joint.child, joint.child_frame, outputs, pre, lines)
                # The force the tree transmits into the subtree beyond the joint; a joint stated from the
                # ground's side inwards (reversed) has the child's side as the tree's parent.
                transmitted = (f"multibody::force<T>{{}} - F[{self.index[joint.parent]}]" if joint.reversed
                               else f"F[{self.index[joint.child]}]")
            lines.append(f"    multibody::force_in_frame({transmitted}, {frame}, force_xyz, moment_xyz);")
            components = ([("force_xyz", 0), ("force_xyz", 1), ("moment_xyz", 2)] if m.planar else
                          [("force_xyz", x) for x in range(3)] + [("moment_xyz", x) for x in range(3)])
            for array, x in components:
                lines.append(f"    z[{at}] = {array}[{x}];")
                at += 1
        assert at == len(self.quantity_table())
        body, used = self.function("T").body(outputs)
        value_count = self.slots(outputs)
        # A distance joint's length has a slot that only its constraint row reads.
        head = [f"    [[maybe_unused]] T value[{value_count}];"] if value_count else []
        code += head + pre + body + lines
        arguments = ["double t", "const vec<double, n>& q", "const vec<double, n>& v", "const vec<double, n>& a",
                     "[[maybe_unused]] const vec<double, m>& lambda", "const vec<double, k>&", "const double* p",
                     "double* z"]
        return (f"  static void quantity_values({', '.join(arguments)}) {{\n" + "\n".join(code) + "\n  }\n")

    def initial_state(self):
        m = self.m
        outputs, given_q, given_v = [], [], []
        index = 0
        for joint in m.tree:
            for values in joint.initial or [{} for _ in joint.coordinates]:
                if "position" in values:
                    outputs.append((f"q0[{index}]", values["position"]))
                elif "guess" in values:
                    outputs.append((f"q0[{index}]", values["guess"]))
                if "velocity" in values:
                    outputs.append((f"v0[{index}]", values["velocity"]))
                # Without loops an unstated coordinate is given as 0; a driven one is always solved from
                # its drive, f(0) and f'(0), with the loops' unknowns.
                driven = joint.drive is not None
                given_q.append(not driven and ("position" in values or not m.cuts))
                given_v.append(not driven and ("velocity" in values or not m.cuts))
                index += 1
        body, used = self.function("double", inputs=True).body(outputs)
        code = ["    q0 = vec<double, n>{};", "    v0 = vec<double, n>{};"] + body
        solve = m.rows() > 0 and not (all(given_q) and all(given_v))
        if solve:
            code += [f"    constexpr bool position_given[n] = {{{', '.join('true' if g else 'false' for g in given_q)}}};",
                     f"    constexpr bool velocity_given[n] = {{{', '.join('true' if g else 'false' for g in given_v)}}};",
                     f"    multibody::assemble<{m.name}>(p, q0, v0, position_given, velocity_given);"]
        p_used = solve or any(self.m.symbols[x.name] in used for x in m.parameters)
        in_used = any(self.m.symbols[x.name] in used for x in m.inputs)
        arguments = ["const double* p" if p_used else "const double*", "const double* in" if in_used else "const double*",
                     "vec<double, n>& q0", "vec<double, n>& v0"]
        return (f"  LOCKSTEP_HD static void initial_state({', '.join(arguments)}) {{\n" + "\n".join(code) + "\n  }\n")

    def text(self):
        m = self.m
        n = len(m.coordinates)
        out = [f"// Generated by lockstep (host/model_files/equations_to_header.py) from {self.source_name}; "
               f"do not edit.",
               "#pragma once", "",
               '#include "lockstep/core/dual.hpp"', '#include "lockstep/core/math.hpp"',
               '#include "lockstep/model/concept.hpp"', '#include "lockstep/multibody/assembly.hpp"',
               '#include "lockstep/multibody/cut_joints.hpp"', '#include "lockstep/multibody/force_elements.hpp"',
               '#include "lockstep/multibody/outputs.hpp"', '#include "lockstep/multibody/planar.hpp"',
               '#include "lockstep/multibody/tree.hpp"', "",
               "namespace lockstep::mechanisms {", "",
               "using multibody::vec3;", "",
               f"struct {m.name} {{",
               f"  static constexpr const char* name = {cpp_string(m.name)};",
               f"  static constexpr const char* description = {cpp_string(m.description)};",
               f"  static constexpr int n = {n};",
               f"  static constexpr const char* coordinate_names[n] = "
               f"{{{', '.join(cpp_string(c) for c in m.coordinates)}}};",
               f"  static constexpr int m = {m.rows()};",
               "  static constexpr int k = 0;", "",
               ] + named_value_tables(m.parameters, m.inputs)
        out += ["", f"  // The joint tree: {len(self.primitives)} bodies (massless ones between the axes of joints of "
                    f"several coordinates), one joint each.",
                f"  static constexpr int n_bodies = {len(self.primitives)};", ""]
        text = "\n".join(out) + "\n"
        text += self.tree_of() + "\n"
        text += (TEMPLATE + "mat<T, n, n> mass(const vec<T, n>& q, const P* p) {\n"
                 "    const auto s = tree_of(p);\n"
                 f"    return multibody::mass_matrix<n>(s, multibody::{self.place}<n>(s, q));\n  }}\n\n")
        text += self.applied_forces() + "\n"
        text += self.force() + "\n"
        text += self.mass_and_force() + "\n"
        text += self.constraint() + "\n"
        text += self.initial_state() + "\n"
        table = self.quantity_table()
        text += ("  // What the mechanism reports at the save times (stepper/quantities.hpp).\n"
                 f"  static constexpr int n_quantities = {len(table)};\n"
                 "  static constexpr quantity_declaration quantities[n_quantities] = {\n" +
                 "".join(f"      {{{cpp_string(name)}, {cpp_string(what)}}},\n" for name, what in table) + "  };\n")
        text += self.quantity_values()
        return text + "};\n\n}  // namespace lockstep::mechanisms\n"
