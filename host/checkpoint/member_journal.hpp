// host/checkpoint/member_journal.hpp — the journal: finished members, appended chunk by chunk.
//
// A checkpointed run appends every finished chunk here (statuses, counters, final times and states,
// and the trajectories when the study stores them), and its checkpoint records how many bytes of the
// journal are valid (checkpoint_file.hpp). At the end, or when resumed, results.h5 and members.csv
// are written from the journal. MPI ranks use the same format to hand their members to rank 0.
// Memory stays at one chunk: nothing is held beyond the record being written or read.
//
// Format (little-endian, byte_writer in study/statistics.hpp):
//   header   "LSTPJRNL", u32 version (4), u64 run id, i64 first member, u32 CRC-32 of the 28 bytes before it
//   records  u32 "LSJR", u64 payload length L, u32 CRC-32 of the payload, then L payload bytes:
//            i64 first member, i64 count, i32 save count S, i32 Y, u8 trajectories (0/1), i32 W (the
//            8-byte words of member_counters), i32 P (Lyapunov exponents per member, 0 without
//            [lyapunov]), i64 H (running estimates per member), i32 E (event functions of the model,
//            0 without), i32 C (event records kept per member), and when P > 0 the text (u64 length,
//            bytes) of the first reason a member's Lyapunov run gave (for the run's summary); then per
//            member: i32 status, W words of member_counters in declaration order (integers and doubles'
//            bit patterns), f64 final t, f64 x Y final state, f64 x S x Y outputs when trajectories = 1,
//            when P > 0 the member's Lyapunov values as io::lyapunov_values holds them: i32 status,
//            f64 x P exponents, f64 t_start, f64 t_end, i64 renormalizations, i64 steps, f64 x H
//            history_t, f64 x H x P history; and when E > 0 its events as chunk_results holds them
//            (lockstep/ensemble.hpp): i64 x E occurrences, f64 x E first times, i64 records made, i32
//            stopping event (-1: none), f64 x C x (2 + Y) records (t, event, y).
// Records follow each other without gaps: each starts at the member after the previous one's last.
// Version 2 added P, H and the Lyapunov values: a checkpointed [lyapunov] run resumes with
// the exponents of the members it had finished, bit for bit, instead of solving them again; version 3
// added t_end (where a member's Lyapunov run stopped); version 4 the events, so that a checkpointed,
// resumed or MPI run of a model with event functions writes the events a direct run writes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include "host/checkpoint/checkpoint_file.hpp"
#include "host/io/results_h5.hpp"

namespace lockstep::checkpoint {

// What every member of a record holds: S save times of Y values (the outputs only with trajectories),
// P Lyapunov exponents with H running estimates (P = 0: the study has no [lyapunov]), and E events
// with C records (E = 0: the model has no event functions).
struct journal_shape {
  int save_count = 0;
  int ny = 0;
  bool trajectories = false;
  int lyapunov_exponents = 0;
  long lyapunov_history = 0;
  int events = 0;
  int event_capacity = 0;
  friend bool operator==(const journal_shape&, const journal_shape&) = default;
};

// One record: members [first, first + count), member-major.
struct journal_chunk {
  long first = 0;
  long count = 0;
  int save_count = 0;
  int ny = 0;
  bool trajectories = false;
  std::vector<member_status> status;
  std::vector<member_counters> counters;
  std::vector<double> final_t;
  std::vector<double> y_final;  // [count][Y]
  std::vector<double> y;        // [count][S][Y] when trajectories

  // The Lyapunov values (lyapunov_exponents = P > 0 only), as io::lyapunov_values holds them.
  int lyapunov_exponents = 0;
  long lyapunov_history = 0;  // H
  std::vector<member_status> lyapunov_status;
  std::vector<double> exponents;                  // [count][P]
  std::vector<double> t_start;                    // [count]
  std::vector<double> t_end;                      // [count]
  std::vector<std::int64_t> renormalizations;     // [count]
  std::vector<std::int64_t> lyapunov_steps;       // [count]
  std::vector<double> history_t;                  // [count][H]
  std::vector<double> history;                    // [count][H][P]
  std::string lyapunov_message;                   // the first reason a member's Lyapunov run gave, if any

  // The events (events = E > 0 only), as chunk_results holds them.
  int events = 0;
  int event_capacity = 0;                         // C
  std::vector<long> event_counts;                 // [count][E]
  std::vector<double> event_first_times;          // [count][E]
  std::vector<long> event_records_made;           // [count]
  std::vector<int> stop_event;                    // [count]
  std::vector<double> event_records;              // [count][C][2 + Y]

  journal_shape shape() const {
    return {save_count, ny, trajectories, lyapunov_exponents, lyapunov_history, events, event_capacity};
  }

  // A view for the writers; `inputs` ([count][V], or null) come from the sampling plan. With P > 0 the
  // block's Lyapunov values point into this chunk, which must outlive the block.
  io::member_block block(const double* inputs) const;

 private:
  mutable io::lyapunov_values lyapunov_view_;
};

// Decodes one record's payload (checkpoint_error naming `source` when it is malformed).
void decode_journal_payload(std::string_view payload, journal_chunk& out, const std::string& source);

class journal_writer {
 public:
  enum class mode { create, reopen };
  // create: a new journal (replacing any file at `path`) with its header, synced with its directory.
  // reopen: an existing journal of this run whose first `valid_bytes` (holding `records` records) a
  // checkpoint vouches for; anything after them is cut off, and appends go after them.
  // Both throw io::io_error when the file cannot be created or written, checkpoint_error when a
  // reopened journal is shorter than valid_bytes or belongs to another run.
  journal_writer(std::filesystem::path path, mode how, std::uint64_t run_id, long first_member,
                 std::uint64_t valid_bytes = 0, std::uint64_t records = 0);
  ~journal_writer();  // closes the file (never removes it)
  journal_writer(const journal_writer&) = delete;
  journal_writer& operator=(const journal_writer&) = delete;

  // Appends members [block.first, block.first + block.count) (buffered; block.first must follow the
  // previous record). Uses status, counters, final_t, y_final, y when trajectories, when
  // shape.lyapunov_exponents > 0 block.lyapunov and `lyapunov_message`, the first reason one of these
  // members' Lyapunov run gave, and when shape.events > 0 the block's events (std::invalid_argument
  // when the Lyapunov values or events are missing).
  void append(const io::member_block& block, const journal_shape& shape, std::string_view lyapunov_message = {});
  // Without Lyapunov values.
  void append(const io::member_block& block, int save_count, int ny, bool trajectories) {
    append(block, journal_shape{save_count, ny, trajectories, 0, 0});
  }
  // Everything appended so far reaches the disk (write + fsync) before this returns.
  void sync();
  void close();  // sync and close

  std::uint64_t bytes() const { return bytes_; }      // valid length once synced
  std::uint64_t records() const { return records_; }
  long next_member() const { return next_member_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  void flush();
  [[noreturn]] void fail(const std::string& doing, int system_error);

  std::filesystem::path path_;
  int fd_ = -1;
  std::string buffer_;
  std::uint64_t bytes_ = 0;
  std::uint64_t records_ = 0;
  long next_member_ = 0;
};

class journal_reader {
 public:
  // Reads `in` (named `source` in messages) up to `valid_bytes`: the header must carry run_id and
  // first_member; records must be intact (CRC), contiguous from first_member, of the expected shape.
  journal_reader(std::istream& in, std::string source, std::uint64_t run_id, long first_member,
                 std::uint64_t valid_bytes);
  // The next record, false after the last one inside valid_bytes; checkpoint_error on damage.
  bool next(journal_chunk& out);
  long next_member() const { return next_member_; }
  std::uint64_t records() const { return records_; }

 private:
  [[noreturn]] void damaged(const std::string& why) const;
  std::istream& in_;
  std::string source_;
  std::uint64_t valid_bytes_;
  std::uint64_t position_ = 0;
  std::uint64_t records_ = 0;
  long next_member_ = 0;
  std::string payload_;
};

// The header bytes of a journal (also what the reader expects).
std::string journal_header(std::uint64_t run_id, long first_member);
inline constexpr std::size_t journal_header_bytes = 32;

}  // namespace lockstep::checkpoint
