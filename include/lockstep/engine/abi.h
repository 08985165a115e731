/* lockstep/engine/abi.h — the C ABI of an engine: the compiled kernels of one model behind a table of
 * plain C functions.
 *
 * An engine is everything lockstep compiles per model: the per-member step kernels run over a chunk of
 * members in structure-of-arrays storage, the outputs at save times, the tangent solves behind
 * Lyapunov exponents and sensitivities, and the evaluations a model doctor needs. Everything above the
 * engine (scheduler, study layer, I/O, the command line, MPI, checkpoints, the Lyapunov driver, Python)
 * is compiled once and sees a model only through this table. Built-in models are engines linked into
 * the program; a user's model is an engine in a shared library loaded at run time
 * (lockstep/engine/loader.hpp). docs/ARCHITECTURE.md draws the boundary; the rules an engine library
 * must follow are in docs/ENGINE-ABI.md.
 *
 * Conventions (ABI version 14, with events on the device: lockstep_device_run's event_capacity and
 * its chunks as lockstep_device_chunk; version 13 had no events there, version 12 no method tsit5,
 * version 11 no derived quantities, version 10 no events, version 9 no method auto, version 8 no
 * dopri5; version 7 did not say what runs the members, instruction_set and lanes; version 6 had one
 * function for both Lyapunov methods' tangents; version 5 passed the solver options as a pointer to
 * the C++ struct and its size, version 4 had one set of chunk and tangent functions for every method
 * instead of lockstep_method_functions per method, version 3 no lanes_corrector_work, version 2 no
 * lanes_work, version 1 no coordinate names):
 *   - Every struct that crosses the boundary starts with lockstep_abi_header: the ABI version, its own
 *     size, and the build id of the lockstep headers it was compiled from. A host refuses a table whose
 *     version or size differs from its own, and an engine refuses a request struct likewise.
 *   - Every function returns a lockstep_result code and, on failure, writes a message into the
 *     caller's lockstep_error; no C++ exception ever crosses the boundary.
 *   - Engines run on the calling thread and start no threads: the host owns the threads, and may call
 *     the chunk functions from several threads at once on disjoint member lists of one chunk.
 *   - Integers that count members or steps are `long` (64 bits: Linux LP64, the only platform).
 *   - The solver options cross as a lockstep_solver_options: a C struct with a header, of C types
 *     only (int for each enum, int for a flag), so that an engine compiled by another compiler reads
 *     them as the host wrote them; an engine refuses values outside an enum's range.
 *   - `counters` point to lockstep::member_counters (lockstep/method/options.hpp): a plain struct of
 *     `long` and `double` fields, part of this ABI (changing it changes LOCKSTEP_ENGINE_ABI_VERSION).
 */
#ifndef LOCKSTEP_ENGINE_ABI_H
#define LOCKSTEP_ENGINE_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LOCKSTEP_ENGINE_ABI_VERSION 14u
/* The function an engine library exports, `const lockstep_engine* LOCKSTEP_ENGINE_ENTRY(void)`, and
 * its symbol's name: each names the ABI version it implements (abi_support.hpp checks that they
 * agree), so a host finds no entry point in a library built for another version rather than one that
 * could be misread. */
#define LOCKSTEP_ENGINE_ENTRY lockstep_engine_v14
#define LOCKSTEP_ENGINE_ENTRY_POINT "lockstep_engine_v14"

typedef struct lockstep_abi_header {
  uint32_t abi_version; /* LOCKSTEP_ENGINE_ABI_VERSION */
  uint32_t struct_size; /* sizeof the struct this header starts */
  const char* build_id; /* lockstep version and engine ABI, e.g. "lockstep 0.1.0 abi 1" */
} lockstep_abi_header;

typedef enum lockstep_result {
  LOCKSTEP_OK = 0,
  LOCKSTEP_INVALID_ARGUMENT = 1, /* a request the engine refuses (sizes, options, indices) */
  LOCKSTEP_UNSUPPORTED = 2,      /* a request this engine was not built for (a method, a backend) */
  LOCKSTEP_OUT_OF_MEMORY = 3,
  LOCKSTEP_INTERNAL_ERROR = 4 /* anything else an engine caught */
} lockstep_result;

typedef struct lockstep_error {
  char message[512]; /* NUL-terminated, truncated when longer */
} lockstep_error;

/* A parameter or named initial input: its name, default and description with units. */
typedef struct lockstep_value_info {
  const char* name;
  double default_value;
  const char* description;
} lockstep_value_info;

/* An event function of the model (lockstep/stepper/events.hpp): its name, direction (lockstep::
 * event_direction: 0 both, 1 rising, -1 falling), action (lockstep::event_action: 0 record, 1 stop,
 * 2 count) and description. */
typedef struct lockstep_event_info {
  const char* name;
  int direction;
  int action;
  const char* description;
} lockstep_event_info;

/* A derived quantity of the model (lockstep/stepper/quantities.hpp): its name and description with units. */
typedef struct lockstep_quantity_info {
  const char* name;
  const char* description;
} lockstep_quantity_info;

/* The solver options of a member's integration: lockstep::solver_options (lockstep/method/options.hpp,
 * which says what each field means and its default), field for field, in C types. */
typedef struct lockstep_solver_options {
  lockstep_abi_header header;
  int method;                 /* lockstep::method_kind */
  int formulation;            /* lockstep::formulation */
  double rtol, atol_q, atol_v, atol_lambda;
  double h_initial, h_min, h_max;
  long max_steps;
  int max_order;
  double fixed_h;
  int fixed_order;
  double rho_inf;
  double newton_tol;
  int newton_max_iterations;
  int consistent_multipliers; /* 0 or 1 */
  int multipliers;            /* lockstep::multiplier_convention */
  int init;                   /* lockstep::init_mode */
  int metric;                 /* lockstep::projection_metric */
  double init_tolerance;
  int projection;             /* lockstep::projection_kind */
  double baumgarte_alpha, baumgarte_beta;
  double event_time_tolerance;
  int event_interior_checks;
} lockstep_solver_options;

/* Bytes a chunk needs per member for one method (words are 64-bit): the member state, and what the
 * split path adds (its resumable projection). */
typedef struct lockstep_chunk_layout {
  lockstep_abi_header header;
  long state_words;      /* words of one member's state */
  long projection_words; /* words of one member's resumable projection (split path) */
  int can_split;         /* the method has a split path (factorizations between launches) */
} lockstep_chunk_layout;

/* One chunk of members in structure-of-arrays storage: variable j of member i at [j * stride + i].
 * The host allocates it; the engine's functions read and write only the members they are given. */
typedef struct lockstep_chunk {
  lockstep_abi_header header;
  long stride;               /* members in the chunk */
  uint64_t* states;          /* state_words x stride */
  const double* params;      /* n_params x stride */
  const double* q0;          /* n x stride */
  const double* v0;          /* n x stride */
  double* outputs;           /* save_count * (2n + 2m + k) x stride, NaN until written */
  unsigned char* finished;   /* [stride]: set to 1 when a member has finished */
  uint64_t* projections;     /* projection_words x stride, or NULL (split path with split projections) */
  unsigned char* pending;    /* [stride], split path: a member waits for its factorization */
  const double* save_times;  /* [save_count], increasing, within [t0, t1] */
  int save_count;
  int method;                /* lockstep::method_kind: the method of `options` (the engine checks it) */
  double t0, t1;
  const lockstep_solver_options* options;
  /* The event records of a model with events: record r of member i, (t, event, y[2n + 2m + k]), at
   * [(r * (2 + 2n + 2m + k) + j) * stride + i] for r < event_capacity; NULL (capacity 0): none kept. */
  double* event_records;
  int event_capacity;
} lockstep_chunk;

/* What a member ended with. `counters` points to a lockstep::member_counters per member. */
typedef struct lockstep_member_results {
  lockstep_abi_header header;
  int* status;          /* [count] lockstep::member_status codes */
  void* counters;       /* [count] lockstep::member_counters */
  double* t_final;      /* [count] */
  double* y_final;      /* [count][2n + 2m + k]: (q, v, lambda, mu, nu) at t_final */
  /* A model with events (NULL otherwise): each event's occurrences and first time (NaN: none),
   * [count][n_events]; the records each member made (those beyond the chunk's event_capacity were not
   * kept) and the event that stopped it (-1: none), [count]. */
  long* event_counts;
  double* event_first_times;
  long* event_records_made;
  int* stop_event;
} lockstep_member_results;

/* A Lyapunov run of one member (lockstep/lyapunov/spectrum.hpp). */
typedef struct lockstep_lyapunov_request {
  lockstep_abi_header header;
  int method;                 /* 0: discrete QR on `exponents` tangents; 1: the clone estimate */
  int exponents;              /* p; 0: all d = 2 (n - m) - k */
  double renormalize;
  double transient;
  int metric;                 /* 0: mass, 1: euclidean */
  int tangent_error_control;  /* QR: the tangents' local error takes part in the step choice */
  double separation;          /* clone: the clone's initial distance */
  long history_capacity;      /* rows of history_t / history the caller provides */
} lockstep_lyapunov_request;

typedef struct lockstep_lyapunov_output {
  lockstep_abi_header header;
  int status;                /* lockstep::member_status */
  char message[256];         /* why the options were refused, or "" */
  double t_start;            /* QR: where the averages started */
  double t_final;
  long renormalizations;     /* QR: re-orthonormalizations; clone: intervals */
  long history_count;        /* running estimates the run produced (those beyond capacity are dropped) */
  long exponent_count;       /* exponents written: p (QR: also for a run stopped by max_steps, the
                                estimate it reached), 1 (clone), or 0 (no estimate) */
  double* exponents;         /* [p] */
  double* history_t;         /* [history_capacity] */
  double* history;           /* [history_capacity][p] */
  void* counters;            /* lockstep::member_counters (QR), may be NULL */
} lockstep_lyapunov_output;

/* Forward sensitivities of one member (lockstep/lyapunov/sensitivity.hpp). */
typedef struct lockstep_sensitivity_request {
  lockstep_abi_header header;
  int state_directions;      /* directions (dq0, dv0), each 2n values, in `directions` */
  const double* directions;
  int parameter_count;       /* d/dp_j for these parameter indices */
  const int* parameters;
} lockstep_sensitivity_request;

typedef struct lockstep_sensitivity_output {
  lockstep_abi_header header;
  int status;
  char message[256];
  double t_final;
  double* y_final;           /* [2n + 2m + k] */
  double* sensitivities;     /* [state_directions + parameter_count][2n + 2m + k] */
  void* counters;            /* lockstep::member_counters, may be NULL */
} lockstep_sensitivity_output;

/* The model's equations at one state, for a model doctor: M (n x n, row-major), Q (n), Phi (m),
 * G = dPhi/dq (m x n), Phi_t (m), and for k > 0 the residual A v + a (k) and A (k x n). Derivatives are
 * the automatic-differentiation values the solver uses. Any pointer may be NULL (not wanted). */
typedef struct lockstep_model_values {
  lockstep_abi_header header;
  double* mass;
  double* force;
  double* constraint;
  double* constraint_jacobian;
  double* constraint_rate;
  double* velocity_constraint;
  double* velocity_jacobian;
} lockstep_model_values;

/* Consistent initial values (lockstep/method/initialize.hpp) for a model doctor. */
typedef struct lockstep_initial_values {
  lockstep_abi_header header;
  int status;
  double* q;      /* [n] */
  double* v;      /* [n] */
  double* a;      /* [n] q''(t0) */
  double* lambda; /* [m] */
  double* nu;     /* [k] */
  void* counters; /* lockstep::member_counters: the corrections made, may be NULL */
} lockstep_initial_values;

/* One finished chunk of a device solve, member-major, in member order (lockstep::chunk_results). */
typedef struct lockstep_device_chunk {
  lockstep_abi_header header;
  long first, count;
  const double* outputs;     /* [count][save][ny] */
  const int* status;         /* [count] */
  const void* counters;      /* [count] lockstep::member_counters */
  const double* t_final;     /* [count] */
  const double* y_final;     /* [count][ny] */
  /* A model with events (else 0 and NULL): each event's occurrences and first time (NaN: none)
   * [count][n_events], the records each member made and the event that stopped it (-1: none)
   * [count], and the records kept [count][event_capacity][2 + ny] of (t, event, y), NaN past a
   * member's records. */
  int n_events, event_capacity;
  const long* event_counts;
  const double* event_first_times;
  const long* event_records_made;
  const int* stop_event;
  const double* event_records;
} lockstep_device_chunk;

/* Host callbacks of a device solve (the CUDA backend runs its own chunking on the device). */
typedef struct lockstep_device_run {
  lockstep_abi_header header;
  long members;
  const double* params;      /* members x n_params, member-major */
  const double* q0;          /* members x n */
  const double* v0;
  double t0, t1;
  const double* save_times;
  int save_count;
  const lockstep_solver_options* options;
  long chunk_size;           /* 0: from the device's memory */
  size_t memory_budget;
  int attempts_per_sync;
  int split_factorization;
  int event_capacity;        /* the event records kept per member (a model with events) */
  /* Called once per finished chunk, in member order. */
  void (*on_chunk)(void* context, const lockstep_device_chunk* chunk);
  /* Called after every launch with the members finished so far and their accepted steps. */
  void (*on_progress)(void* context, long finished, long steps);
  void* context;
  long chunk_size_used;      /* out */
} lockstep_device_run;

/* The methods (lockstep::method_kind: bdf, radau5, radau3, euler, rhoinf, dopri5, auto, tsit5). */
#define LOCKSTEP_METHOD_COUNT 8

/* What an engine runs with one method: a chunk of members, and their tangents. The engine of a model
 * file is compiled for the methods its study asks for (docs/MODEL-FILES.md, "What is compiled"): a
 * method it was not compiled for has NULL entries; begin, advance and finish are present together. */
typedef struct lockstep_method_functions {
  /* Initializes the listed members of the chunk (consistent initialization, first outputs). */
  lockstep_result (*begin)(const lockstep_chunk* chunk, const long* members, long count, lockstep_error* error);
  /* At most max_attempts step attempts of each listed member; outputs as they are passed. */
  lockstep_result (*advance)(const lockstep_chunk* chunk, const long* members, long count, int max_attempts,
                             lockstep_error* error);
  /* Status, counters, final time and final state (consistent multipliers where the options ask for
   * them) of members [first, first + count) of the chunk, member-major into `out`. */
  lockstep_result (*finish)(const lockstep_chunk* chunk, long first, long count, const lockstep_member_results* out,
                            lockstep_error* error);
  /* The split path (docs/GPU.md section 5), emulated on the host: attempts that suspend at their
   * factorizations (marking `pending`), and the factor phase between launches. NULL for a method
   * without one (rhoinf) and where it was not compiled. */
  lockstep_result (*advance_split)(const lockstep_chunk* chunk, const long* members, long count, int max_attempts,
                                   int projection_split_above, lockstep_error* error);
  lockstep_result (*factor)(const lockstep_chunk* chunk, const long* members, long count, lockstep_error* error);
  /* The tangents of one member with this method, each NULL where it was not compiled (a model file
   * compiles those its study runs, each in its own part): Lyapunov exponents by the discrete QR
   * method (`lyapunov`, request->method 0) and by the clone method (`lyapunov_clone`, request->method
   * 1), and forward sensitivities. */
  lockstep_result (*lyapunov)(const double* params, const double* q0, const double* v0, double t0, double t1,
                              const lockstep_solver_options* options, const lockstep_lyapunov_request* request,
                              lockstep_lyapunov_output* out, lockstep_error* error);
  lockstep_result (*lyapunov_clone)(const double* params, const double* q0, const double* v0, double t0, double t1,
                                    const lockstep_solver_options* options, const lockstep_lyapunov_request* request,
                                    lockstep_lyapunov_output* out, lockstep_error* error);
  lockstep_result (*sensitivities)(const double* params, const double* q0, const double* v0, double t0, double t1,
                                   const lockstep_solver_options* options,
                                   const lockstep_sensitivity_request* request, lockstep_sensitivity_output* out,
                                   lockstep_error* error);
} lockstep_method_functions;

typedef struct lockstep_engine {
  lockstep_abi_header header;

  /* ---- what the model is ---- */
  const char* name;
  const char* description;
  int n, m, k;
  int n_params, n_inputs;
  const lockstep_value_info* params; /* [n_params] */
  const lockstep_value_info* inputs; /* [n_inputs] */
  const char* const* coordinate_names; /* [n]: the model's names of q's entries, else "q0", "q1", ... */
  int n_events;                      /* the model's event functions (0: none) */
  const lockstep_event_info* events; /* [n_events] */
  int n_quantities;                          /* the model's derived quantities (0: none) */
  const lockstep_quantity_info* quantities;  /* [n_quantities] */
  int device_built;                  /* solve_on_device is available (a CUDA build of this model) */

  /* ---- per member, on the host ---- */
  /* The named initial inputs mapped to (q0, v0). */
  lockstep_result (*initial_state)(const double* params, const double* inputs, double* q0, double* v0,
                                   lockstep_error* error);
  /* The derived quantities of one member at `points` saved states: y [points][2n + 2m + k] at the times
   * t [points] into out [points][n_quantities], NaN where a state is not finite or its
   * acceleration-level system is singular (lockstep/stepper/quantities.hpp). NULL without quantities. */
  lockstep_result (*quantities_at)(const double* params, long points, const double* t, const double* y, double* out,
                                   lockstep_error* error);
  /* Why the solver options cannot run (a message in `error`, LOCKSTEP_INVALID_ARGUMENT), else OK. */
  lockstep_result (*check_options)(const lockstep_solver_options* options, lockstep_error* error);

  /* ---- a chunk of members ---- */
  /* The chunk storage of any method, compiled or not. */
  lockstep_result (*chunk_layout)(int method, lockstep_chunk_layout* layout, lockstep_error* error);

  /* ---- each method's chunk and tangent functions, indexed by lockstep::method_kind ---- */
  lockstep_method_functions methods[LOCKSTEP_METHOD_COUNT];

  /* ---- a model doctor's hooks (initialize: NULL in an engine of the model's tables alone) ---- */
  lockstep_result (*evaluate)(const double* params, double t, const double* q, const double* v,
                              lockstep_model_values* out, lockstep_error* error);
  lockstep_result (*initialize)(const double* params, double t0, const double* q0, const double* v0,
                                const lockstep_solver_options* options, lockstep_initial_values* out,
                                lockstep_error* error);

  /* ---- a whole ensemble on a device (NULL unless device_built) ---- */
  lockstep_result (*solve_on_device)(lockstep_device_run* run, lockstep_error* error);

  /* ---- the SIMD lanes the methods run their members in (NULL where they run them one at a time) ---- */
  /* What the lanes executed since the engine was loaded, over every thread: lane-attempts (W for each
   * attempt of a pack of W lanes) and those among them that advanced a member. Their ratio is the
   * lanes' utilization. */
  void (*lanes_work)(uint64_t* executed, uint64_t* of_members);
  /* The corrector's phases in those lanes, likewise: the Newton iterations executed (W for each
   * iteration a pack of W lanes ran) and those among them of members, and the LU factorizations of the
   * Newton matrix executed and of members. */
  void (*lanes_corrector_work)(uint64_t* iterations_executed, uint64_t* iterations_of_members,
                               uint64_t* factorizations_executed, uint64_t* factorizations_of_members);

  /* ---- what runs the members on the host (for --version, describe and the results' attributes) ---- */
  /* The x86-64 instruction set the methods' chunk functions were compiled for: "baseline", "sse4",
   * "avx2" or "avx512" ("baseline" on another architecture). The results do not depend on it. */
  const char* instruction_set;
  /* The members per SIMD pack the methods' advance runs: the vector width of doubles of that set
   * (4 for avx2, 8 for avx512); 0 where the members run one at a time. */
  int lanes;
} lockstep_engine;

typedef const lockstep_engine* (*lockstep_engine_entry)(void);

#ifdef __cplusplus
}
#endif

#endif /* LOCKSTEP_ENGINE_ABI_H */
