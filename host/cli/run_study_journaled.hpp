// host/cli/run_study_journaled.hpp — `lockstep run` with checkpoints, resumed from one, or split across
// MPI ranks: detail::run_journaled, declared in run_study_impl.hpp.
//
// Every finished chunk goes to the statistics accumulators and to a journal (host/checkpoint/
// member_journal.hpp) instead of straight to the writers; results.h5 and members.csv are written from
// the journals at the end, by rank 0, reading the ranks' journals in rank order. So:
//
// * MPI. Rank r solves the members of its whole statistics blocks (host/mpi/decomposition.hpp) with its
//   own backend, journals them to OUT_DIR (a file system every rank sees), and sends its serialized
//   statistics to rank 0, which merges them at their places in the fixed tree. A member's result does
//   not depend on who computed it, and the statistics tree and the order of everything written are
//   those of one process: results.h5's datasets and members.csv are bitwise the same for any number of
//   ranks. Every rank passes its exit code through max_over_ranks after each phase, so a failing rank
//   cannot leave the others waiting.
//
// * Checkpoints (--checkpoint-every SECONDS). The members are solved in pieces of consecutive members
//   sized from the measured throughput so that a piece takes about SECONDS / 2; at the end of a chunk,
//   when SECONDS / 2 have passed since the last checkpoint, the journal is synced and the checkpoint
//   (statistics state, members done, journal length) replaces the previous one atomically
//   (checkpoint_file.hpp). Checkpoints therefore come about every SECONDS / 2 .. SECONDS, at chunk
//   boundaries: members in flight are not saved (their SoA state could be, but a chunk boundary loses
//   at most one piece, about SECONDS / 2 of work, and keeps the format independent of the method).
//   The first checkpoint is written before any member is solved, the last one after the last member,
//   before the results; the checkpoint and journal are removed once the results are committed.
//
// * Resume (--resume OUT_DIR). The checkpoint's statistics state is merged into fresh accumulators,
//   the journal is verified (every record's CRC) up to the recorded length and cut there, and the run
//   goes on from the first member not done. Members are solved exactly as before (a member's result
//   depends on its own inputs only), the statistics continue from the same state, and results are
//   written from the journal: a run killed at any moment after its first checkpoint and resumed gives
//   results bitwise identical to an uninterrupted one.
//
// * SIGINT/SIGTERM (when checkpointing). The run stops at the next launch boundary, writes a
//   checkpoint of the chunks finished so far and — in a single process — the members finished so far
//   in OUT_DIR/interrupted-results.h5 and interrupted-members.csv (the other members with status
//   "running" and NaN values; no statistics), and exits with 128 + the signal's number. A second
//   signal, a second or more after the first, ends the process at once; one sooner is the same
//   request delivered twice (coreutils' timeout signals the child and then its process group, and
//   batch systems signal every process of a job) and is ignored. Under mpirun every rank gets SIGTERM and writes its
//   own checkpoint; OpenMPI sends SIGKILL one second later (odls_base_sigkill_timeout), which the
//   periodic checkpoints make harmless, so ranks write no interrupted results.
//
// * [lyapunov]. Each finished chunk's members go through the Lyapunov driver exactly as in
//   the direct path (solve_lyapunov_chunk, run_study_impl.hpp) before the chunk is journaled, and the
//   journal record carries their Lyapunov values beside the plain ones. A member's exponents depend on
//   its inputs only, so whichever session or rank solved it, results.h5's /lyapunov and members.csv
//   come out bitwise as in the direct path; the members a killed run had journaled keep the values
//   they were journaled with (they are not solved again). The checkpoint records the settings as the
//   study resolved them (lyapunov_settings_text) and the journal records P and H: a resume whose
//   study resolves to other settings, or finds a journal without (or with other) Lyapunov values, is
//   refused naming the file, instead of mixing exponents of two settings in one file.
#pragma once

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <system_error>
#include <vector>

#include "host/checkpoint/checkpoint_file.hpp"
#include "host/checkpoint/member_journal.hpp"
#include "host/cli/run_study_impl.hpp"
#include "host/mpi/communicator.hpp"
#include "host/mpi/decomposition.hpp"

namespace lockstep::cli::detail {

// ---- stopping on SIGINT / SIGTERM --------------------------------------------------------------------

// The signal that asked a checkpointed run to stop; 0 while none has. Written only by the handler.
inline volatile std::sig_atomic_t stop_signal = 0;
// When it arrived (CLOCK_MONOTONIC, in nanoseconds); lock-free, so the handler may write it.
inline std::atomic<long long> stop_signal_time_ns{0};
static_assert(std::atomic<long long>::is_always_lock_free);
// A signal this soon after the first is the same request delivered twice, not a second request.
inline constexpr long long repeated_signal_window_ns = 1'000'000'000;

// Async-signal-safe: clock_gettime, signal and raise are on POSIX's list.
inline void record_stop_signal(int signal) {
  timespec now {};
  clock_gettime(CLOCK_MONOTONIC, &now);
  const long long ns = static_cast<long long>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
  if (stop_signal == 0) {
    stop_signal_time_ns.store(ns);
    stop_signal = signal;
    return;
  }
  if (ns - stop_signal_time_ns.load() < repeated_signal_window_ns) return;
  // A second request: end the process the default way, for a user who does not want to wait.
  ::signal(signal, SIG_DFL);
  ::raise(signal);
}

// Installs record_stop_signal for SIGINT and SIGTERM for its lifetime.
class stop_signal_handlers {
 public:
  stop_signal_handlers() {
    stop_signal = 0;
    struct sigaction action {};
    action.sa_handler = record_stop_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0;
    sigaction(SIGINT, &action, &previous_int_);
    sigaction(SIGTERM, &action, &previous_term_);
  }
  ~stop_signal_handlers() {
    sigaction(SIGINT, &previous_int_, nullptr);
    sigaction(SIGTERM, &previous_term_, nullptr);
  }
  stop_signal_handlers(const stop_signal_handlers&) = delete;
  stop_signal_handlers& operator=(const stop_signal_handlers&) = delete;

 private:
  struct sigaction previous_int_ {};
  struct sigaction previous_term_ {};
};

// Thrown from the scheduler's progress callback to leave the solve at a launch boundary.
struct run_interrupted {};

// ---- files in OUT_DIR ----------------------------------------------------------------------------------

inline const char* const interrupted_results_name = "interrupted-results.h5";
inline const char* const interrupted_members_name = "interrupted-members.csv";

// The [lyapunov] settings the study resolves to (defaults included; numbers to 17 digits, so that
// equal text means equal settings), "" without the section: what a checkpoint records and a resume
// must find again.
inline std::string lyapunov_settings_text(const io::study_spec& spec) {
  const io::lyapunov_spec& l = spec.lyapunov;
  if (!l.enabled) return std::string();
  char text[512];
  std::snprintf(text, sizeof text,
                "method = %s, exponents = %d of %d, renormalize = %.17g, transient = %.17g, metric = %s, "
                "history = %ld estimates",
                io::lyapunov_method_name(l.method), l.exponents, l.dimension, l.renormalize, l.transient,
                io::lyapunov_metric_name(l.metric), io::lyapunov_history_length(l, spec.t0, spec.t1));
  std::string out = text;
  if (l.method == io::lyapunov_method::clone) {
    std::snprintf(text, sizeof text, ", separation = %.17g", l.separation);
    out += text;
  }
  return out;
}

// What every journal record of the study holds per member.
inline checkpoint::journal_shape journal_shape_of(const io::results_layout& layout) {
  const int events = static_cast<int>(layout.events.functions.size());
  return {layout.save_count(), layout.state_size(), layout.trajectories, layout.lyapunov.exponents,
          layout.lyapunov.history, events, events > 0 ? layout.events.capacity : 0};
}

// checkpoint_error naming `journal` when a record it holds is not shaped as the study's members are.
inline void check_journal_shape(const checkpoint::journal_chunk& chunk, const checkpoint::journal_shape& expected,
                                const std::filesystem::path& journal) {
  const checkpoint::journal_shape got = chunk.shape();
  if (got == expected) return;
  auto lyapunov = [](const checkpoint::journal_shape& s) {
    return s.lyapunov_exponents == 0 ? std::string("no Lyapunov values")
                                     : std::to_string(s.lyapunov_exponents) + " Lyapunov exponents and " +
                                           std::to_string(s.lyapunov_history) + " running estimates";
  };
  if (got.lyapunov_exponents != expected.lyapunov_exponents || got.lyapunov_history != expected.lyapunov_history)
    throw checkpoint::checkpoint_error("journal '" + journal.string() + "' holds members with " + lyapunov(got) +
                                       " where the study's [lyapunov] settings give " + lyapunov(expected) +
                                       ": it was written by another study; it cannot be resumed");
  if (got.events != expected.events || got.event_capacity != expected.event_capacity)
    throw checkpoint::checkpoint_error("journal '" + journal.string() + "' holds members with " + std::to_string(got.events) +
                                       " events and " + std::to_string(got.event_capacity) + " records each where the model and "
                                       "[events] give " + std::to_string(expected.events) + " and " +
                                       std::to_string(expected.event_capacity) + ": it was written by another study; it "
                                       "cannot be resumed");
  throw checkpoint::checkpoint_error("journal '" + journal.string() + "' holds members of another study");
}

// A journal opened for reading; checkpoint_error naming it when it cannot be.
inline std::ifstream open_journal(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw checkpoint::checkpoint_error("cannot read journal '" + path.string() + "': " + std::strerror(errno));
  return in;
}

// What one rank tells rank 0 at the end: where its journal is valid, and its statistics state.
struct rank_report {
  std::uint64_t run_id = 0;
  long first = 0, end = 0, done = 0;
  std::uint64_t journal_bytes = 0;
  std::string statistics;

  std::string encode() const {
    study::byte_writer out;
    out.u64(run_id);
    out.i64(first);
    out.i64(end);
    out.i64(done);
    out.u64(journal_bytes);
    out.text(statistics);
    return out.take();
  }
  static rank_report decode(std::string_view bytes) {
    study::byte_reader in(bytes, "rank report");
    rank_report r;
    r.run_id = in.u64();
    r.first = in.i64();
    r.end = in.i64();
    r.done = in.i64();
    r.journal_bytes = in.u64();
    r.statistics = in.text();
    return r;
  }
};

// Writes the members of every rank's journal, in rank order, to `h5` and `csv`, and adds their events'
// first times to `first_times`. `interrupted`: members a rank had not finished are written as status
// running with NaN values (no event occurred). The tally's initial corrections take each member's given
// start from `model` (build_ensemble: the journals keep no q0, v0). The journals keep the saved states;
// a model's quantities are evaluated from them here, on `threads` threads, for the trajectories.
inline member_tally write_members_from_journals(const engine& model, const io::study_spec& spec, const io::results_layout& layout,
                                         const std::vector<rank_report>& ranks, const std::vector<std::filesystem::path>& journals,
                                         io::results_writer& h5, io::members_csv_writer& csv, bool interrupted,
                                         member_exponents& exponents, event_first_times& first_times, int threads) {
  const int ny = layout.state_size();
  const int save_count = layout.save_count();
  const checkpoint::journal_shape shape = journal_shape_of(layout);
  member_tally tally(model);
  std::vector<double> inputs;
  checkpoint::journal_chunk chunk;
  lyapunov_buffers unfinished_lyapunov;
  io::lyapunov_values unfinished_values;
  std::vector<double> values;
  // The values of a block's trajectories (the states, then the quantities) for members [first, ...).
  const auto with_quantities = [&](io::member_block& block, const ensemble_problem& given) {
    if (model.n_quantities() == 0 || block.y == nullptr) return;
    member_values(model, spec.save_times, block.count, block.y, given.params.data(), threads, values);
    block.y = values.data();
  };
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const rank_report& rank = ranks[r];
    std::ifstream in = open_journal(journals[r]);
    checkpoint::journal_reader reader(in, journals[r].string(), rank.run_id, rank.first, rank.journal_bytes);
    while (reader.next(chunk)) {
      check_journal_shape(chunk, shape, journals[r]);
      io::member_block block = chunk.block(sample_inputs(spec.plan, chunk.first, chunk.count, inputs));
      const ensemble_problem given = build_ensemble(model, spec, chunk.first, chunk.first + chunk.count);
      with_quantities(block, given);
      h5.write_members(block);
      csv.write_members(block);
      exponents.add(block);
      if (chunk.events > 0) first_times.add(block);
      tally.add(block, given.q0.data(), given.v0.data(), model.n(), spec.solver);
      if (chunk.lyapunov_exponents > 0) tally.add_lyapunov(chunk.lyapunov_status.data(), chunk.count, chunk.lyapunov_message);
    }
    if (reader.next_member() != rank.done)
      throw checkpoint::checkpoint_error("journal '" + journals[r].string() + "' ends at member " +
                                         std::to_string(reader.next_member()) + ", its checkpoint at " + std::to_string(rank.done));
    if (!interrupted) continue;
    // The members not finished: status running, nothing computed.
    constexpr long piece = 4096;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (long first = rank.done; first < rank.end; first += piece) {
      checkpoint::journal_chunk unfinished;
      unfinished.first = first;
      unfinished.count = std::min(piece, rank.end - first);
      unfinished.trajectories = layout.trajectories;
      const auto count = static_cast<std::size_t>(unfinished.count);
      unfinished.status.assign(count, member_status::running);
      unfinished.counters.assign(count, member_counters{});
      unfinished.final_t.assign(count, nan);
      unfinished.y_final.assign(count * ny, nan);
      unfinished.y.assign(layout.trajectories ? count * save_count * ny : 0, nan);
      if (shape.events > 0) {
        const auto e = static_cast<std::size_t>(shape.events);
        unfinished.events = shape.events;
        unfinished.event_capacity = shape.event_capacity;
        unfinished.event_counts.assign(count * e, 0);
        unfinished.event_first_times.assign(count * e, nan);
        unfinished.event_records_made.assign(count, 0);
        unfinished.stop_event.assign(count, -1);
        unfinished.event_records.assign(count * static_cast<std::size_t>(shape.event_capacity) * (2 + static_cast<std::size_t>(ny)), nan);
      }
      io::member_block block = unfinished.block(sample_inputs(spec.plan, first, unfinished.count, inputs));
      if (model.n_quantities() > 0 && layout.trajectories) {  // NaN states, NaN quantities
        values.assign(count * static_cast<std::size_t>(save_count) * static_cast<std::size_t>(layout.value_size()), nan);
        block.y = values.data();
      }
      if (shape.lyapunov_exponents > 0) {
        unfinished_lyapunov.start(count, static_cast<std::size_t>(shape.lyapunov_exponents),
                                  static_cast<std::size_t>(shape.lyapunov_history));
        unfinished_values = unfinished_lyapunov.values();
        block.lyapunov = &unfinished_values;
      }
      h5.write_members(block);
      csv.write_members(block);
    }
  }
  return tally;
}

// The model as a checkpoint records it: a built-in model by its name, a model file's by its name and
// the engine's cache key, so that a resume notices an edited model file.
inline std::string checkpoint_model_identity(const engine& model, const io::study_spec& spec) {
  return spec.model_identity.empty() ? std::string(model.name()) : std::string(model.name()) + " " + spec.model_identity;
}

int run_journaled(const engine& model, const io::study_spec& spec, const run_settings& settings, long members) {
  namespace fs = std::filesystem;
  using clock = std::chrono::steady_clock;
  const int ny = model.ny();
  const auto session_start = clock::now();
  const lanes_work_counts lanes_before = model.lanes_work();
  auto seconds_since = [](clock::time_point t) { return std::chrono::duration<double>(clock::now() - t).count(); };

  const mpi::communicator comm = mpi::communicator::world();
  const int rank = comm.rank(), ranks = comm.size();
  const bool root = rank == 0;
  const bool checkpointing = settings.checkpoint_every > 0;
  const bool talk = root && !settings.quiet;
  const fs::path& out_dir = settings.out_dir;
  const mpi::member_range range = mpi::rank_members(members, rank, ranks);
  {  // Before anything is allocated for the members. Ranks may run on machines of different memory: a
     // rank that refuses says so itself, and all of them stop together.
    int fits = exit_success;
    try {
      check_members_fit(model, spec, members, checkpointing ? 0 : range.size());
      if (root) check_derivative_memory(spec, members, ny);
    } catch (const io::study_error& e) {
      std::fprintf(stderr, "%s%s\n", ranks > 1 ? ("rank " + std::to_string(rank) + ": ").c_str() : "", e.what());
      fits = exit_bad_input;
    }
    if ((fits = comm.max_over_ranks(fits)) != exit_success) return fits;
  }
  if (const int idle = mpi::ranks_without_members(members, ranks); talk && idle > 0) {
    const long blocks = (members + study::statistics_block - 1) / study::statistics_block;
    std::fprintf(stderr,
                 "lockstep: %d of %d ranks have no members and wait: ranks take whole blocks of %ld members (the unit of "
                 "the statistics, so that the results do not depend on the number of ranks), and %ld members make %ld "
                 "block%s; %ld members or more keep every rank busy\n",
                 idle, ranks, study::statistics_block, members, blocks, blocks == 1 ? "" : "s",
                 static_cast<long>(ranks - 1) * study::statistics_block + 1);
  }
  const io::results_layout layout = results_layout_for(model, spec, members);
  const int save_count = layout.save_count();
  const checkpoint::journal_shape shape = journal_shape_of(layout);
  const std::string lyapunov_settings = lyapunov_settings_text(spec);
  const std::size_t width = static_cast<std::size_t>(save_count) * static_cast<std::size_t>(values_per_save(model));
  study::ensemble_statistics stats = statistics_for(model, spec, members, width);
  auto journal_of = [&](int r) {
    return checkpointing ? checkpoint::journal_path(out_dir, r, ranks) : checkpoint::shard_path(out_dir, r, ranks);
  };
  const fs::path checkpoint_file = checkpoint::checkpoint_path(out_dir, rank, ranks);
  auto guarded = [&](auto&& phase) {
    try {
      return phase();
    } catch (...) {
      return report_current_exception(comm);
    }
  };

  // ---- 1. OUT_DIR (rank 0), then every rank's journal, statistics and first checkpoint ----
  created_directory dir{out_dir};
  int code = guarded([&] {
    if (root && settings.resume == nullptr) create_output_directory(dir);
    return exit_success;
  });
  if ((code = comm.max_over_ranks(code)) != exit_success) return code;

  std::unique_ptr<checkpoint::journal_writer> journal;
  checkpoint::checkpoint_state cp;
  long done = range.first;
  double elapsed_before = 0.0;
  auto last_checkpoint = clock::now();
  auto save_checkpoint = [&] {
    journal->sync();
    cp.members_done = done;
    cp.journal_bytes = journal->bytes();
    cp.journal_records = journal->records();
    cp.elapsed_seconds = elapsed_before + seconds_since(session_start);
    cp.statistics = stats.serialize();
    checkpoint::write_checkpoint(checkpoint_file, cp);
    last_checkpoint = clock::now();
  };

  code = guarded([&] {
    if (!fs::is_directory(out_dir))
      throw io::io_error(out_dir, ENOENT, "output directory '" + out_dir.string() + "' is not visible" +
                                              (ranks > 1 ? " on this rank: MPI ranks need OUT_DIR on a file system they share" : ""));
    if (const checkpoint::checkpoint_state* s = settings.resume) {
      auto refuse = [&](const std::string& why) {
        throw checkpoint::checkpoint_error("checkpoint '" + checkpoint_file.string() + "' " + why);
      };
      if (s->model != checkpoint_model_identity(model, spec)) {
        if (!spec.model_identity.empty() && s->model.starts_with(std::string(model.name()) + " "))
          refuse("was written for another version of the model file '" + spec.model_source +
                 "' (it or a header it includes changed since): its members would not continue the same equations");
        refuse("does not match its study (the model differs)");
      }
      if (s->members_total != members) refuse("does not match its study (members differ)");
      if (s->lyapunov != lyapunov_settings) {
        auto described = [](const std::string& settings) {
          return settings.empty() ? std::string("no [lyapunov] section") : "[lyapunov] " + settings;
        };
        refuse("was written with " + described(s->lyapunov) + " but its study now gives " + described(lyapunov_settings) +
               ": the Lyapunov values in its journal would not match them");
      }
      if (s->ranks != ranks || s->rank != rank)
        refuse("was written by rank " + std::to_string(s->rank) + " of " + std::to_string(s->ranks) + "; resume with " +
               (s->ranks > 1 ? "mpirun -np " + std::to_string(s->ranks) : std::string("a single process")));
      if (s->range_first != range.first || s->range_end != range.end) refuse("covers other members than this rank owns");
      try {
        stats.merge_serialized(s->statistics);
      } catch (const study::state_error& e) {
        refuse(std::string("is damaged: ") + e.what());
      }
      if (stats.members_added() != s->members_done - s->range_first) refuse("is damaged: its statistics disagree with its member count");
      {  // Every journal record up to the checkpointed length must be intact before anything is appended.
        std::ifstream in = open_journal(journal_of(rank));
        checkpoint::journal_reader reader(in, journal_of(rank).string(), s->run_id, range.first, s->journal_bytes);
        checkpoint::journal_chunk chunk;
        while (reader.next(chunk)) check_journal_shape(chunk, shape, journal_of(rank));
        if (reader.next_member() != s->members_done || reader.records() != s->journal_records)
          refuse("and its journal disagree on the members finished");
      }
      journal = std::make_unique<checkpoint::journal_writer>(journal_of(rank), checkpoint::journal_writer::mode::reopen,
                                                             s->run_id, s->members_done, s->journal_bytes, s->journal_records);
      cp = *s;
      cp.checkpoint_every = settings.checkpoint_every;
      done = s->members_done;
      elapsed_before = s->elapsed_seconds;
      if (root) remove_stale_temporaries(out_dir);
      return exit_success;
    }
    cp.run_id = std::random_device{}() * std::uint64_t{0x100000000} + std::random_device{}();
    cp.study_text = spec.text;
    cp.study_source = spec.path.string();
    cp.model = checkpoint_model_identity(model, spec);
    cp.members_total = members;
    cp.rank = rank;
    cp.ranks = ranks;
    cp.range_first = range.first;
    cp.range_end = range.end;
    cp.checkpoint_every = settings.checkpoint_every;
    cp.lyapunov = lyapunov_settings;
    journal = std::make_unique<checkpoint::journal_writer>(journal_of(rank), checkpoint::journal_writer::mode::create,
                                                           cp.run_id, range.first);
    if (checkpointing) {
      save_checkpoint();
      if (root) write_study_copy(out_dir, spec);
    }
    return exit_success;
  });
  // From its first checkpoint on, a run can be resumed: its directory stays whatever happens.
  if (checkpointing && (code == exit_success || settings.resume != nullptr)) dir.keep = true;
  // A run without checkpoints cannot be resumed: its shard goes when it fails.
  auto remove_shard = [&] {
    std::error_code ignored;
    if (!checkpointing && journal) fs::remove(journal->path(), ignored);
  };
  if ((code = comm.max_over_ranks(code)) != exit_success) {
    remove_shard();
    return code;
  }
  if (settings.resume != nullptr) {
    const long finished = comm.sum_over_ranks(done - range.first);
    if (talk)
      std::fprintf(stderr, "lockstep: resuming %s from its checkpoint%s: %ld of %ld members finished before\n",
                   spec.name.c_str(), ranks > 1 ? "s" : "", finished, members);
  }

  // ---- 2. solve [done, range.end) in pieces, journaling and checkpointing ----
  std::unique_ptr<stop_signal_handlers> handlers;
  if (checkpointing) handlers = std::make_unique<stop_signal_handlers>();
  code = guarded([&] {
    const double piece_seconds = settings.checkpoint_every / 2;
    long piece = checkpointing ? std::max(16L, 4L * thread_count(settings)) : range.size();
    long steps_before = 0;
    auto last_draw = clock::now() - std::chrono::seconds(1);
    lyapunov_buffers lyapunov;
    io::lyapunov_values lyapunov_values;
    std::vector<double> values;  // a chunk's states and quantities (values_of)
    try {
      while (done < range.end) {
        const long first = done, count = std::min(piece, range.end - done);
        const ensemble_problem e = build_ensemble(model, spec, first, first + count);
        run_options run;
        run.where = settings.where;
        run.threads = settings.threads;
        run.chunk_size = settings.chunk_size;
        run.keep_outputs = false;
        run.on_chunk = [&](const chunk_results& c) {
          io::member_block block = member_block_of(c, first, nullptr);
          std::string lyapunov_message;
          if (spec.lyapunov.enabled) {  // as in the direct path; c.first counts from this piece's first member
            solve_lyapunov_chunk(model, e, spec.lyapunov, shape.lyapunov_history, c.first, c.count, thread_count(settings),
                                        settings.progress && talk, lyapunov);
            lyapunov_values = lyapunov.values();
            block.lyapunov = &lyapunov_values;
            lyapunov_message = first_lyapunov_message(lyapunov);
          }
          stats.add_range(block.first, block.count, values_of(model, e, c, c.first, thread_count(settings), values));
          journal->append(block, shape, lyapunov_message);
          for (long i = 0; i < c.count; ++i) steps_before += c.counters[i].steps;
          done = block.first + block.count;
          if (checkpointing && seconds_since(last_checkpoint) >= piece_seconds) save_checkpoint();
        };
        const long finished_before = done - range.first;
        run.on_progress = [&](const progress_report& r) {
          if (stop_signal != 0) throw run_interrupted{};
          if (!(settings.progress && talk)) return;
          const auto now = clock::now();
          if (now - last_draw < std::chrono::milliseconds(100)) return;
          last_draw = now;
          progress_report whole = r;
          whole.members_total = range.size();
          whole.members_finished = finished_before + r.members_finished;
          whole.steps = steps_before;
          whole.seconds = seconds_since(session_start);
          draw_progress(whole);
        };
        const auto piece_start = clock::now();
        solve_ensemble(model, e, run);
        // The next piece from this one's throughput, growing at most fourfold (members differ in cost).
        const double took = seconds_since(piece_start);
        const double fit = took > 0 ? static_cast<double>(count) * piece_seconds / took : 4.0 * static_cast<double>(count);
        piece = std::max(1L, static_cast<long>(std::min(fit, 4.0 * static_cast<double>(count))));
        if (stop_signal != 0) throw run_interrupted{};
      }
      if (checkpointing) save_checkpoint();  // the last: a kill while writing results loses no member
      return exit_success;
    } catch (const run_interrupted&) {
      save_checkpoint();
      return exit_interrupted_base + static_cast<int>(stop_signal);
    }
  });
  if (settings.progress && talk) std::fputc('\n', stderr);
  if (code == exit_success) {
    code = guarded([&] {
      journal->close();  // synced: rank 0 reads it next
      return exit_success;
    });
  }
  code = comm.max_over_ranks(code);

  // ---- 2b. [derivative_measures]: the sensitivity solves of this rank's members, once all have finished
  // (derivative_measures_run.hpp; not journaled: a run interrupted here solves them again on resume) ----
  std::string derivative_bytes;
  if (code == exit_success && spec.derivative_measures.enabled) {
    code = guarded([&] {
      const member_derivatives d =
          solve_member_derivatives(model, derivative_inputs_of(model, spec), range.first, range.size(),
                                   thread_count(settings), settings.progress && talk, [] { return stop_signal != 0; });
      if (stop_signal != 0) return exit_interrupted_base + static_cast<int>(stop_signal);
      derivative_bytes = d.encode();
      return exit_success;
    });
    code = comm.max_over_ranks(code);
  }

  // ---- 3. rank 0 writes results.h5 and members.csv from every rank's journal ----
  rank_report mine{cp.run_id, range.first, range.end, done, journal->bytes(), {}};
  const bool interrupted = code >= exit_interrupted_base;
  if (code != exit_success && !interrupted) {
    remove_shard();
    return code;
  }
  if (interrupted) journal.reset();
  if (interrupted && ranks > 1) {
    if (talk)
      std::fprintf(stderr,
                   "lockstep: interrupted: every rank wrote its checkpoint in %s; continue with: mpirun -np %d lockstep run "
                   "--resume %s\n",
                   out_dir.string().c_str(), ranks, out_dir.string().c_str());
    return code;
  }
  if (!interrupted) mine.statistics = stats.serialize();
  const std::vector<std::string> reports = comm.gather_to_root(mine.encode());
  const std::vector<std::string> derivative_parts =
      spec.derivative_measures.enabled && !interrupted ? comm.gather_to_root(derivative_bytes) : std::vector<std::string>();
  const std::string results_name = interrupted ? interrupted_results_name : "results.h5";
  const std::string members_name = interrupted ? interrupted_members_name : "members.csv";
  member_tally tally(model);
  const double wall = elapsed_before + seconds_since(session_start);
  std::optional<sensitivity_results> sensitivity;  // rank 0's, for the summary
  std::optional<derivative_results> derivatives;   // rank 0's, for the summary
  std::optional<study::ensemble_summary> summary;
  code = guarded([&] {
    if (!root) return exit_success;
    std::vector<rank_report> all;
    std::vector<fs::path> journals;
    for (int r = 0; r < ranks; ++r) {
      all.push_back(r == 0 ? mine : rank_report::decode(reports[static_cast<std::size_t>(r)]));
      journals.push_back(journal_of(r));
      if (r > 0) stats.merge_serialized(all.back().statistics);
    }
    io::results_writer h5(out_dir / results_name, layout);
    io::members_csv_writer csv(out_dir / members_name, layout);
    member_exponents exponents(spec, members);
    event_first_times first_times(model, spec.plan);
    tally = write_members_from_journals(model, spec, layout, all, journals, h5, csv, interrupted, exponents, first_times,
                                        thread_count(settings));
    if (!interrupted) {
      summary = stats.finish();
      write_statistics(h5, spec, *summary);
      write_exceedance(h5, spec, model, *summary);
      first_times.write(h5, spec, tally);
    }
    if (!interrupted && spec.sensitivity.enabled) {
      sensitivity = sensitivity_of(spec, stats, width, thread_count(settings), exponents);
      write_sensitivity(h5, spec, *sensitivity);
    }
    if (!interrupted && spec.derivative_measures.enabled) {
      member_derivatives d;
      for (const std::string& part : derivative_parts) d.append(member_derivatives::decode(part));
      derivatives = derivative_measures_of(spec, d);
      write_derivative_measures(h5, spec, *derivatives);
      tally.derivative_failed = derivatives->failed;
    }
    set_run_attributes(h5, spec, settings, wall, model);
    if (ranks > 1) h5.set_attribute("mpi_ranks", ranks);
    if (interrupted) {
      h5.set_attribute("complete", 0);
      h5.set_attribute("members_finished", done);
      h5.set_attribute("statistics", "not computed: the run was interrupted");
    }
    // results.h5 last, as in the direct path (run_study_impl.hpp, commit_outputs): a results.h5 in
    // OUT_DIR always has its members.csv beside it. study.toml stays whatever happens: --resume
    // reads it.
    if (!interrupted) write_study_copy(out_dir, spec);
    csv.commit();
    try {
      h5.commit();
    } catch (...) {
      std::error_code ignored;
      fs::remove(csv.final_path(), ignored);
      throw;
    }
    return interrupted ? code : tally.exit_code();
  });
  code = comm.max_over_ranks(code);

  if (interrupted) {
    if (talk) {
      const char* name = stop_signal == SIGINT ? "SIGINT" : (stop_signal == SIGTERM ? "SIGTERM" : "a signal");
      if (code >= exit_interrupted_base)
        std::fprintf(stderr,
                     "lockstep: interrupted by %s: checkpoint written with %ld of %ld members finished; they are in %s and %s; "
                     "continue with: lockstep run --resume %s%s\n",
                     name, done, members, (out_dir / results_name).string().c_str(), (out_dir / members_name).string().c_str(),
                     out_dir.string().c_str(),
                     spec.derivative_measures.enabled && done == members
                         ? " (which runs the derivative measures' sensitivity solves again: they are not journaled)"
                         : "");
    }
    return code;
  }
  if (code != exit_success && code != exit_members_failed) {
    remove_shard();
    return code;  // with checkpoints, the last one can write the results again (--resume)
  }

  // ---- 4. the results are in place: the checkpoint and journal have served ----
  std::error_code ignored;
  if (checkpointing) fs::remove(checkpoint_file, ignored);  // first: a checkpoint never outlives its journal
  fs::remove(journal->path(), ignored);
  if (root) {
    fs::remove(out_dir / interrupted_results_name, ignored);
    fs::remove(out_dir / interrupted_members_name, ignored);
  }
  dir.keep = true;
  if (talk) print_summary(spec, tally, wall, settings, model.lanes_work() - lanes_before, ranks);
  if (talk && summary) print_exceedance(spec, model, *summary, members);
  if (talk && sensitivity) print_sensitivity(spec, layout, *sensitivity);
  if (talk && derivatives) print_derivative_measures(spec, layout, *derivatives);
  return code;
}

}  // namespace lockstep::cli::detail
