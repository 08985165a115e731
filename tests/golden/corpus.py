"""The corpus of golden_hashes.py: small studies over every built-in model, method, formulation and
projection, the samplers, statistics, Lyapunov exponents and failing members, each with the variants
that must give bitwise its results (threads, chunking, backends, checkpoints, interrupted and resumed
runs, MPI ranks). Small enough for the whole corpus to run in well under a minute on two cores.
"""

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Variant:
    name: str
    flags: tuple = ()
    ranks: int = 1                # > 1: under mpirun (skipped without MPI)
    interrupt_after: float = None  # SIGINT once the first checkpoint exists (at most this many
                                   # seconds after the start), then `lockstep run --resume`


@dataclass(frozen=True)
class Case:
    name: str
    study: str
    variants: tuple
    exit_code: int = 0  # 1: some member fails by design


THREADS = Variant("omp-2-threads", ("--threads", "2"))
SERIAL_CHUNKS = Variant("serial-chunk-3", ("--backend", "serial", "--chunk-size", "3"))
OMP_CHUNKS = Variant("omp-1-thread-chunk-2", ("--threads", "1", "--chunk-size", "2"))
CHECKPOINTED = Variant("checkpointed", ("--threads", "2", "--checkpoint-every", "0.001"))
RESUMED = Variant("interrupted-resumed", ("--threads", "1", "--checkpoint-every", "0.05"), interrupt_after=5.0)
MPI2 = Variant("mpi-2-ranks", ("--threads", "1"), ranks=2)
MPI3 = Variant("mpi-3-ranks", ("--threads", "1", "--chunk-size", "2"), ranks=3)

BASIC = (THREADS, SERIAL_CHUNKS)
FULL = (THREADS, SERIAL_CHUNKS, OMP_CHUNKS, CHECKPOINTED, RESUMED, MPI2, MPI3)

# Per model: the varied entry and a horizon short enough for a small corpus.
MODELS = {
    "pendulum": ('"initial.theta0" = { uniform = [0.5, 1.5] }', 2.0),
    "double_pendulum": ('"initial.theta1" = { uniform = [0.2, 0.4] }', 1.0),
    "chain2": ('"initial.theta0" = { uniform = [0.3, 0.6] }', 1.0),
    "chain4": ('"initial.theta0" = { uniform = [0.3, 0.6] }', 1.0),
    "chain8": ('"initial.theta0" = { uniform = [0.3, 0.6] }', 0.5),
    "chain16": ('"initial.theta0" = { uniform = [0.3, 0.6] }', 0.1),
    "slider_crank": ('"initial.omega0" = { uniform = [140.0, 160.0] }', 0.05),
    "andrews": ('"params.c0" = { uniform = [4400.0, 4600.0] }', 0.003),
    "car_axis": ('"params.r" = { uniform = [0.09, 0.11] }', 0.5),
    "knife_edge": ('"initial.omega0" = { normal = { mean = 2.0, std = 0.1 } }', 2.0),
    "linear_oscillator": ('"initial.x0" = { uniform = [0.5, 1.5] }', 2.0),
}


def study(model, method, formulation, projection="none", members=6, sampler="random", solver="", extra="",
          trajectories=True, vary=None, t1=None, tol=1e-6):
    vary_line, horizon = MODELS[model]
    # A pure grid has one member per grid point and draws nothing: members and seed would have no
    # effect, and a study file refuses them.
    drawn = f"members = {members}\nseed = 7\n" if sampler != "grid" else ""
    return f"""[model]
name = "{model}"

[solver]
method = "{method}"
formulation = "{formulation}"
projection = "{projection}"
rtol = {tol}
atol = {tol}
{solver}
[time]
t1 = {t1 if t1 is not None else horizon}
save = {{ every = {(t1 if t1 is not None else horizon) / 10} }}

[ensemble]
{drawn}sampler = "{sampler}"
[ensemble.vary]
{vary if vary is not None else vary_line}

[output]
trajectories = {"true" if trajectories else "false"}
statistics = ["mean", "std", "min", "max", "q05", "q50", "q95"]
{extra}"""


def case(name, *args, variants=BASIC, exit_code=0, **kwargs):
    return Case(name, study(*args, **kwargs), (Variant("omp-default"),) + tuple(variants), exit_code)


CASES = [
    # Every method on every formulation it accepts, on the pendulum.
    case("pendulum-bdf-ggl", "pendulum", "bdf", "ggl", variants=FULL),
    case("pendulum-bdf-index3-fixed", "pendulum", "bdf", "index3", solver="fixed_h = 0.01\n"),
    case("pendulum-bdf-index3-fixed-order2", "pendulum", "bdf", "index3", solver="fixed_h = 0.01\nfixed_order = 2\n"),
    case("pendulum-radau5-index3", "pendulum", "radau5", "index3", variants=FULL),
    case("pendulum-radau5-ggl", "pendulum", "radau5", "ggl"),
    case("pendulum-radau3-index3", "pendulum", "radau3", "index3"),
    case("pendulum-radau3-ggl", "pendulum", "radau3", "ggl"),
    # backward Euler where it is practical: rtol is the accuracy asked for (docs/METHODS.md)
    case("pendulum-euler-index3", "pendulum", "euler", "index3", tol=1e-1),
    case("pendulum-euler-ggl", "pendulum", "euler", "ggl", tol=1e-2),
    case("pendulum-rhoinf-index3", "pendulum", "rhoinf", "index3"),
    case("pendulum-rhoinf-ggl", "pendulum", "rhoinf", "ggl", solver="rho_inf = 0.8\n"),
    case("pendulum-rhoinf-ggl-fixed", "pendulum", "rhoinf", "ggl", solver="rho_inf = 1.0\nfixed_h = 0.01\n"),
    case("pendulum-dopri5-index1-coordinate", "pendulum", "dopri5", "index1", "coordinate", variants=FULL),
    case("pendulum-dopri5-index1", "pendulum", "dopri5", "index1"),
    case("knife_edge-dopri5-index1-post-stabilization", "knife_edge", "dopri5", "index1", "post-stabilization"),
    case("double_pendulum-dopri5-index1-coordinate", "double_pendulum", "dopri5", "index1", "coordinate"),
    case("double_pendulum-tsit5-index1-coordinate", "double_pendulum", "tsit5", "index1", "coordinate", variants=FULL),
    # Auto: members that turn stiff (damping 113-10604: 5 of 8) and switch to Radau IIA 5, beside members
    # that stay explicit (0.19-17); and members that are never stiff, with the implicit phases on ggl.
    case("linear_oscillator-auto-index3-coordinate", "linear_oscillator", "auto", "index3", "coordinate",
         variants=FULL, members=8, vary='"params.d" = { lognormal = { mu = 3.0, sigma = 3.0 } }'),
    case("pendulum-auto-ggl-post-stabilization", "pendulum", "auto", "ggl", "post-stabilization"),
    case("pendulum-radau5-index1", "pendulum", "radau5", "index1"),
    case("pendulum-radau5-index1-baumgarte", "pendulum", "radau5", "index1", solver="baumgarte = { alpha = 5.0, beta = 5.0 }\n"),
    case("pendulum-bdf-index1-coordinate", "pendulum", "bdf", "index1", "coordinate"),
    case("pendulum-radau5-projected-invariants", "pendulum", "radau5", "projected-invariants"),
    case("pendulum-bdf-projected-invariants", "pendulum", "bdf", "projected-invariants"),
    # Projections after the steps, both metrics.
    case("pendulum-radau5-index3-coordinate", "pendulum", "radau5", "index3", "coordinate"),
    case("pendulum-bdf-ggl-post-stabilization", "pendulum", "bdf", "ggl", "post-stabilization"),
    case("pendulum-radau3-index1-post-stabilization-euclidean", "pendulum", "radau3", "index1", "post-stabilization",
         solver='metric = "euclidean"\n'),
    # Every built-in model, BDF on ggl and Radau IIA on index 3.
    *[case(f"{m}-bdf-ggl", m, "bdf", "ggl") for m in MODELS if m != "pendulum"],
    *[case(f"{m}-radau5-index3", m, "radau5", "index3") for m in MODELS if m != "pendulum"],
    case("andrews-radau5-index3-mpi", "andrews", "radau5", "index3", variants=FULL, members=8),
    case("car_axis-radau3-ggl", "car_axis", "radau3", "ggl"),
    case("knife_edge-radau5-index1-coordinate", "knife_edge", "radau5", "index1", "coordinate"),
    case("slider_crank-rhoinf-index3", "slider_crank", "rhoinf", "index3"),
    # Long enough (about a second) for the interrupted variant to stop mid-run and resume.
    case("double_pendulum-interrupted", "double_pendulum", "radau5", "index3", members=200, t1=3.0, trajectories=False,
         variants=(THREADS, RESUMED, MPI2)),
    # Samplers and statistics without trajectories.
    case("double_pendulum-sobol-replicates", "double_pendulum", "radau5", "index3", members=8, sampler="sobol",
         trajectories=False, variants=(THREADS, SERIAL_CHUNKS, MPI2),
         vary='"initial.theta1" = { uniform = [0.2, 0.4] }\n"params.L2" = { normal = { mean = 1.0, std = 0.01 } }',
         extra=""),
    case("pendulum-grid", "pendulum", "bdf", "ggl", sampler="grid", variants=(THREADS, SERIAL_CHUNKS, MPI3),
         vary='"initial.theta0" = { grid = [0.2, 0.6, 1.0] }\n"params.L" = { grid = [0.5, 1.0] }'),
    case("linear_oscillator-lhs", "linear_oscillator", "radau5", "ggl", members=9, sampler="lhs",
         vary='"initial.x0" = { uniform = [0.5, 1.5] }\n"params.k1" = { lognormal = { mu = 0.0, sigma = 0.1 } }'),
    # Members that fail (max_steps) beside members that succeed: exit 1, the others unchanged.
    case("pendulum-some-fail", "pendulum", "radau5", "index3", solver="max_steps = 25\n", exit_code=1,
         vary='"initial.theta0" = { uniform = [0.1, 3.0] }', variants=(THREADS, SERIAL_CHUNKS, MPI2)),
    # Lyapunov exponents: discrete QR with both methods, and the clone estimate.
    case("linear_oscillator-lyapunov-qr-bdf", "linear_oscillator", "bdf", "ggl", members=4, t1=6.0,
         variants=(THREADS, SERIAL_CHUNKS, CHECKPOINTED, MPI2),
         extra='\n[lyapunov]\nexponents = "all"\nrenormalize = 1.0\ntransient = 1.0\n'),
    case("double_pendulum-lyapunov-qr-radau5", "double_pendulum", "radau5", "index3", members=4, t1=4.0,
         variants=(THREADS, SERIAL_CHUNKS, MPI3),
         extra='\n[lyapunov]\nexponents = 2\nrenormalize = 0.5\nmetric = "euclidean"\n'),
    case("pendulum-lyapunov-clone", "pendulum", "radau3", "ggl", members=4, t1=4.0,
         extra='\n[lyapunov]\nmethod = "clone"\nrenormalize = 1.0\nhistory = false\n'),
]
