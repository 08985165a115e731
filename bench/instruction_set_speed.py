#!/usr/bin/env python3
"""bench/instruction_set_speed.py BUILD=FILE.json ... — the table of bench/instruction_set_speed.sh (one
build per instruction set) and bench/commit_speed.sh (a base commit's build and the working tree's).

Each argument is one work_precision run (its --out file) of the build BUILD. Per problem and solver:
the least CPU time per member of each build's runs, and its ratio to the first build's. Exits 1 if a
build's work counters (steps, rejected steps, Newton iterations, Jacobians, factorizations, model
evaluations) differ from the first build's: the builds must compute the same thing."""
import json
import sys

COUNTERS = ("steps", "rejected", "newton", "jac", "lu", "model")


def main(arguments):
    runs = {}  # (set, problem, solver) -> {"cpu": [...], "counters": tuple, "members": n}
    sets = []
    for argument in arguments:
        name, _, path = argument.partition("=")
        if name not in sets:
            sets.append(name)
        for problem in json.load(open(path))["problems"]:
            for run in problem["runs"]:
                key = (name, problem["problem"], run["solver"])
                entry = runs.setdefault(key, {"cpu": [], "counters": None, "members": problem["members"]})
                entry["cpu"] += run["cpu_times"]
                counters = tuple(run[c] for c in COUNTERS)
                if entry["counters"] not in (None, counters):
                    sys.exit(f"{path}: {key} counters {counters} differ from another round's {entry['counters']}")
                entry["counters"] = counters
    reference = sets[0]
    cases = sorted({(p, s) for (_, p, s) in runs})
    print("| problem | solver | " + " | ".join(f"{s} (us per member)" for s in sets)
          + " | " + " | ".join(f"{s} / {reference}" for s in sets[1:]) + " |")
    print("|---" * (2 + len(sets) + len(sets) - 1) + "|")
    status = 0
    for problem, solver in cases:
        best = {}
        for s in sets:
            entry = runs.get((s, problem, solver))
            if entry is None:
                sys.exit(f"no run of {problem} {solver} for {s}")
            best[s] = min(entry["cpu"]) / entry["members"] * 1e6
            if entry["counters"] != runs[(reference, problem, solver)]["counters"]:
                print(f"{problem} {solver}: {s}'s counters {entry['counters']} differ from {reference}'s "
                      f"{runs[(reference, problem, solver)]['counters']}", file=sys.stderr)
                status = 1
        print(f"| {problem} | {solver} | " + " | ".join(f"{best[s]:.1f}" for s in sets)
              + " | " + " | ".join(f"{best[s] / best[reference]:.2f}" for s in sets[1:]) + " |")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
