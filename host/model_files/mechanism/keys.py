"""The keys of a mechanism file, table by table (docs/reference/mechanism-file.md lists the same)."""


class Keys:
    def __init__(self, names, required=()):
        self.names, self.required = list(names), list(required)


JOINT_TYPES = ("revolute", "prismatic", "cylindrical", "universal", "spherical", "planar", "fixed", "free",
               "distance")
FORCE_TYPES = ("spring_damper", "joint_spring_damper", "joint_force", "force", "torque")

ALLOWED = {
    (): Keys(["mechanism", "parameters", "inputs", "ground", "bodies", "joints", "forces"],
             ["mechanism", "parameters", "bodies", "joints"]),
    ("mechanism",): Keys(["name", "description", "planar", "gravity"], ["name", "gravity"]),
    ("parameters", "*"): Keys(["default", "unit", "description"], ["default"]),
    ("inputs", "*"): Keys(["default", "unit", "description"], ["default"]),
    ("ground",): Keys(["points"]),
    ("bodies", "*"): Keys(["mass", "centre_of_mass", "inertia", "points", "description"], ["mass", "inertia"]),
    ("bodies", "*", "inertia"): Keys(["xx", "yy", "zz", "xy", "xz", "yz"]),
    ("joints", "*"): Keys(["type", "parent", "child", "parent_point", "child_point", "parent_rotation",
                           "child_rotation", "axis", "coordinates", "initial", "drive", "length", "cut",
                           "description"], ["type", "parent", "child"]),
    ("joints", "*", "initial"): Keys(["position", "velocity", "guess"]),
    ("joints", "*", "parent_rotation"): Keys(["axis", "angle"], ["axis", "angle"]),
    ("joints", "*", "child_rotation"): Keys(["axis", "angle"], ["axis", "angle"]),
    ("forces", "spring_damper"): Keys(["type", "between", "stiffness", "damping", "free_length", "description"],
                                      ["between", "stiffness", "free_length"]),
    ("forces", "joint_spring_damper"): Keys(["type", "joint", "stiffness", "damping", "rest", "description"],
                                            ["joint", "stiffness"]),
    ("forces", "joint_force"): Keys(["type", "joint", "value", "description"], ["joint", "value"]),
    ("forces", "force"): Keys(["type", "body", "point", "value", "frame", "description"], ["body", "value"]),
    ("forces", "torque"): Keys(["type", "body", "value", "frame", "description"], ["body", "value"]),
}


def allowed_keys(path):
    """The keys allowed in the table at `path` (a tuple of keys); a force's depend on its type, and its
    reader looks them up in ALLOWED[("forces", type)]."""
    pattern = tuple("*" if i == 1 and len(path) > 1 else part for i, part in enumerate(path))
    return ALLOWED.get(pattern, Keys([])).names
