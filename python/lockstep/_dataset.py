"""The xarray.Dataset that lockstep.solve and lockstep.open_results both return.

Dimensions: member, time, coordinate (n, labelled with the model's coordinate names, so that
ds.q.sel(coordinate="y2") works), constraint (m), nonholonomic (k), quantity (a model's derived
quantities, labelled with their names). Variables: q, v [member, time, coordinate], lam (the
multipliers lambda; "lambda" is a Python keyword) and mu [member, time, constraint], nu [member, time,
nonholonomic], quantities [member, time, quantity], status and status_name [member], the
counters of results.h5's /members group [member], final_q and final_v [member, coordinate], and one
variable per varied input, named as in a study ("params.L2", "initial.theta1"). A model with event
functions adds the variables of event_variables (dimensions event, labelled with the events' names,
and record).
"""

import numpy as np
import xarray as xr

from . import _lockstep

STATUS_NAMES = tuple(_lockstep.status_names)

# results.h5 /members datasets (docs/RESULTS-FORMAT.md) that are one value per member, in its order.
MEMBER_COUNTERS = ("steps", "rejected", "newton_iterations", "newton_failures", "jacobian_evaluations",
                   "lu_factorizations", "model_evaluations", "projections", "final_t", "final_h", "max_phi",
                   "max_velocity_residual", "init_q_correction", "init_v_correction", "max_projection_q",
                   "max_projection_v", "dropped_rows", "rank_changes", "max_dropped_phi")
# Those of a method that takes explicit steps (dopri5, tsit5, auto), present only for such runs.
EXPLICIT_COUNTERS = ("explicit_steps", "method_switches", "stiffness_detections")

# Each trajectory group of the state layout (q, v, lambda, mu, nu), and the derived quantities: its
# variable and its last dimension.
TRAJECTORY_DIMS = {"q": "coordinate", "v": "coordinate", "lam": "constraint", "mu": "constraint",
                   "nu": "nonholonomic", "quantities": "quantity"}


def event_variables(*, names, directions, actions, descriptions, count, first_time, records, stop_event, t, event,
                    q, v, lam, nu=None):
    """The Dataset's variables of a model's events (results.h5's /events; docs/how-to/events.md):
    event_count and event_first_time [member, event] (NaN: never), event_records and stop_event
    [member] (-1: none), the kept records' event_t and event_index [member, record] (NaN, -1 past a
    member's records) and states event_q, event_v [member, record, coordinate], event_lam [member,
    record, constraint] (event_nu [member, record, nonholonomic]); and the event coordinate."""
    described = {"directions": list(directions), "actions": list(actions), "descriptions": list(descriptions)}
    data = {
        "event_count": xr.Variable(("member", "event"), count, attrs=described),
        "event_first_time": xr.Variable(("member", "event"), first_time),
        "event_records": xr.Variable(("member",), records),
        "stop_event": xr.Variable(("member",), stop_event),
        "event_t": xr.Variable(("member", "record"), t),
        "event_index": xr.Variable(("member", "record"), event),
        "event_q": xr.Variable(("member", "record", "coordinate"), q),
        "event_v": xr.Variable(("member", "record", "coordinate"), v),
        "event_lam": xr.Variable(("member", "record", "constraint"), lam),
    }
    if nu is not None:
        data["event_nu"] = xr.Variable(("member", "record", "nonholonomic"), nu)
    return data, {"event": np.array([str(name) for name in names])}


def build(*, time, members, trajectories, status, counters, final_q, final_v, inputs, attrs, statistics=None,
          coordinate_names=None, quantity_names=None):
    """trajectories: {"q": array or lazy array [member, time, n], ...} (the groups present); counters:
    {name: [member]}; inputs: {"params.X": [member]}; statistics: {"mean_q": [time, n], ...};
    coordinate_names: the labels of the coordinate dimension (None: numbered from 0); quantity_names:
    those of the quantity dimension (None: a model without quantities)."""
    data = {}
    for name, values in trajectories.items():
        data[name] = xr.Variable(("member", "time", TRAJECTORY_DIMS[name]), values)
    status = np.asarray(status, dtype=np.int32)
    data["status"] = xr.Variable(("member",), status, attrs={"names": list(STATUS_NAMES)})
    names = np.array(STATUS_NAMES + ("unknown",), dtype=object)
    data["status_name"] = xr.Variable(("member",), names[np.where((status >= 0) & (status < len(STATUS_NAMES)),
                                                                  status, len(STATUS_NAMES))])
    for name, values in counters.items():
        data[name] = xr.Variable(("member",), values)
    data["final_q"] = xr.Variable(("member", "coordinate"), final_q)
    data["final_v"] = xr.Variable(("member", "coordinate"), final_v)
    for name, values in inputs.items():
        data[name] = xr.Variable(("member",), values)
    for name, (dims, values, var_attrs) in (statistics or {}).items():
        data[name] = xr.Variable(dims, values, attrs=var_attrs)
    coords = {"member": np.arange(members), "time": np.asarray(time, dtype=float)}
    if coordinate_names is not None:
        coords["coordinate"] = np.array([str(c) for c in coordinate_names])
    if quantity_names is not None and len(quantity_names) > 0:
        coords["quantity"] = np.array([str(c) for c in quantity_names])
    return xr.Dataset(data, coords=coords, attrs=attrs)
