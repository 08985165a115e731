// host/checkpoint/checkpoint_file.hpp — the checkpoint of `lockstep run --checkpoint-every SECONDS`:
// what a run has finished, so that `lockstep run --resume OUT_DIR` continues it and ends
// with results bitwise identical to an uninterrupted run.
//
// What a checkpoint holds. The scheduler finishes members chunk by chunk in member order. At a chunk
// boundary the state of a run is (1) the members finished so far — their statuses, counters, final
// states and trajectories, appended chunk by chunk to the checkpoint's journal (member_journal.hpp)
// — (2) the statistics accumulators (ensemble_statistics::serialize()) and (3) how far (1) and (2)
// reach. This file holds (2) and (3), the study text (so a resumed run cannot pick up an edited study)
// and the journal's valid length. With a [lyapunov] section the journal holds each member's
// Lyapunov values too, and this file the settings they were computed with as the study resolved them
// (defaults included): a resumed run whose study resolves to other settings — an edited study text,
// or a lockstep whose defaults changed — is refused rather than mixing two kinds of exponents.
// Version 2 added those settings; a version 1 checkpoint is refused for its version. Members in flight inside a chunk are not saved: a resumed run starts
// them again (chunks are sized so that a checkpoint is written at least every SECONDS, run_study_impl).
//
// Format (all numbers little-endian, byte_writer in study/statistics.hpp):
//   8 bytes   "LSTPCKPT"
//   u32       format version (2)
//   u64       payload length P
//   P bytes   payload: u64 run id, the study text and source path, the model, members total, rank,
//             ranks, this rank's member range, members done, journal bytes and records, checkpoint
//             interval, elapsed seconds, the statistics state, the [lyapunov] settings (see
//             encode_checkpoint)
//   u32       CRC-32 (zlib's crc32: ISO-HDLC polynomial) of everything before it
// A checkpoint is refused, with a message naming the file and what is wrong, when it is too short,
// has another magic or version, a length that disagrees with the file's size, a CRC that does not
// match (any damage of up to 32 consecutive bits, and all but 2^-32 of other damage, is detected), or
// a payload that does not decode exactly. CRC-32 guards against torn and damaged files, not against
// deliberate forgery; a checkpoint is trusted input once its CRC matches, but the decoders still check
// every count and index (the fuzzers in fuzz/ feed them arbitrary bytes).
//
// Atomicity. write_checkpoint writes a new temporary beside the checkpoint, fsyncs it, renames it over
// the old one and fsyncs the directory (io::output_file). The journal is fsynced before (member_journal
// sync), so a checkpoint never refers to journal bytes that are not on disk. A crash at any moment
// leaves the previous checkpoint or the new one, each consistent with its journal prefix; journal bytes
// past the recorded length are cut off on resume.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

namespace lockstep::checkpoint {

// A checkpoint or journal that cannot be used: missing, damaged, of another format version or run.
// what() names the file and the reason.
struct checkpoint_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct checkpoint_state {
  std::uint64_t run_id = 0;           // random per run and rank; the journal carries the same id
  std::string study_text;             // the study file, verbatim
  std::string study_source;           // its path when the run started (names it in diagnostics)
  std::string model;
  std::int64_t members_total = 0;
  std::int32_t rank = 0;              // MPI rank that wrote it, of `ranks`
  std::int32_t ranks = 1;
  std::int64_t range_first = 0;       // this rank's members: [range_first, range_end)
  std::int64_t range_end = 0;
  std::int64_t members_done = 0;      // [range_first, members_done) are finished, journaled and in the statistics
  std::uint64_t journal_bytes = 0;    // the journal's valid prefix
  std::uint64_t journal_records = 0;  // chunk records in that prefix
  double checkpoint_every = 0.0;      // seconds, as given to --checkpoint-every
  double elapsed_seconds = 0.0;       // wall time of the run up to this checkpoint, over all sessions
  std::string statistics;             // ensemble_statistics::serialize()
  std::string lyapunov;               // the resolved [lyapunov] settings, "" without the section
                                      // (cli::detail::lyapunov_settings_text)
};

// The file's bytes, and back. decode_checkpoint throws checkpoint_error naming `source`.
std::string encode_checkpoint(const checkpoint_state& state);
checkpoint_state decode_checkpoint(std::string_view bytes, const std::string& source);

// Atomic replacement (see the banner); io::io_error (exit 3) when it cannot be written.
void write_checkpoint(const std::filesystem::path& path, const checkpoint_state& state);
// checkpoint_error when missing, unreadable or damaged.
checkpoint_state read_checkpoint(const std::filesystem::path& path);

// OUT_DIR/checkpoint for one process; OUT_DIR/checkpoint.rank-<r>-of-<R> for rank r of R > 1.
std::filesystem::path checkpoint_path(const std::filesystem::path& out_dir, int rank, int ranks);
// The journal beside it: the checkpoint's name + ".journal".
std::filesystem::path journal_path(const std::filesystem::path& out_dir, int rank, int ranks);
// Without checkpoints, MPI ranks still pass their members to rank 0 through journals (the shards):
// OUT_DIR/members.rank-<r>-of-<R>.journal, removed when the results are written.
std::filesystem::path shard_path(const std::filesystem::path& out_dir, int rank, int ranks);

// CRC-32 of `bytes` (zlib), continuing from `crc` (0 to start).
std::uint32_t crc32_of(std::string_view bytes, std::uint32_t crc = 0);

}  // namespace lockstep::checkpoint
