// The checkpoint file and the member journal (host/checkpoint), and the split of members across MPI
// ranks (host/mpi/decomposition.hpp): round trips bit for bit, atomic replacement under a failing
// write, and refusal — with a message naming the file and what is wrong — of every truncation, every
// single damaged byte, other formats, versions and runs; journal records with the Lyapunov values of
// a [lyapunov] study and with the events of a model with event functions read back bit for bit, and
// refused when damaged or cut short.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "host/checkpoint/checkpoint_file.hpp"
#include "host/checkpoint/member_journal.hpp"
#include "host/io/output_file.hpp"
#include "host/mpi/decomposition.hpp"

namespace {

namespace fs = std::filesystem;
using namespace lockstep;
using checkpoint::checkpoint_error;
using checkpoint::checkpoint_state;

// A directory of its own, removed afterwards.
struct temporary_directory {
  fs::path path;
  temporary_directory() {
    path = fs::temp_directory_path() /
           ("lockstep-reliability-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~temporary_directory() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
};

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << bytes;
}

checkpoint_state sample_state() {
  checkpoint_state s;
  s.run_id = 0x0123456789abcdefULL;
  s.study_text = "[model]\nname = \"pendulum\"\n[time]\nt1 = 1.0\n";
  s.study_source = "runs/pendulum.toml";
  s.model = "pendulum";
  s.members_total = 10000;
  s.rank = 1;
  s.ranks = 3;
  s.range_first = 4096;
  s.range_end = 8192;
  s.members_done = 5000;
  s.journal_bytes = 123456;
  s.journal_records = 7;
  s.checkpoint_every = 2.5;
  s.elapsed_seconds = 31.25;
  s.statistics = std::string("\x00\x01\xff statistics bytes", 20);
  s.lyapunov = "method = qr, exponents = 2 of 2, renormalize = 0.5, transient = 0, metric = mass, history = 4 estimates";
  return s;
}

void expect_same(const checkpoint_state& a, const checkpoint_state& b) {
  EXPECT_EQ(a.run_id, b.run_id);
  EXPECT_EQ(a.study_text, b.study_text);
  EXPECT_EQ(a.study_source, b.study_source);
  EXPECT_EQ(a.model, b.model);
  EXPECT_EQ(a.members_total, b.members_total);
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.ranks, b.ranks);
  EXPECT_EQ(a.range_first, b.range_first);
  EXPECT_EQ(a.range_end, b.range_end);
  EXPECT_EQ(a.members_done, b.members_done);
  EXPECT_EQ(a.journal_bytes, b.journal_bytes);
  EXPECT_EQ(a.journal_records, b.journal_records);
  EXPECT_EQ(a.checkpoint_every, b.checkpoint_every);
  EXPECT_EQ(a.elapsed_seconds, b.elapsed_seconds);
  EXPECT_EQ(a.statistics, b.statistics);
  EXPECT_EQ(a.lyapunov, b.lyapunov);
}

std::string refusal(const std::string& bytes) {
  try {
    checkpoint::decode_checkpoint(bytes, "OUT/checkpoint");
  } catch (const checkpoint_error& e) {
    return e.what();
  }
  return "";
}

TEST(CheckpointFile, WrittenAndReadBackHoldsEveryFieldExactly) {
  temporary_directory dir;
  const checkpoint_state s = sample_state();
  checkpoint::write_checkpoint(dir.path / "checkpoint", s);
  expect_same(checkpoint::read_checkpoint(dir.path / "checkpoint"), s);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator{}), 1) << "a temporary was left";
}

TEST(CheckpointFile, AFailingWriteLeavesThePreviousCheckpointIntactAndNoTemporary) {
  temporary_directory dir;
  checkpoint_state old = sample_state();
  checkpoint::write_checkpoint(dir.path / "checkpoint", old);
  checkpoint_state next = old;
  next.members_done = 6000;
  next.statistics.assign(100000, 'x');
  {
    io::fault_injection::scoped_write_failure disk_full(1000);
    EXPECT_THROW(checkpoint::write_checkpoint(dir.path / "checkpoint", next), io::io_error);
  }
  expect_same(checkpoint::read_checkpoint(dir.path / "checkpoint"), old);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator{}), 1) << "a temporary was left";
}

TEST(CheckpointFile, EveryTruncationIsRefusedNamingTheFile) {
  const std::string bytes = checkpoint::encode_checkpoint(sample_state());
  for (std::size_t length = 0; length < bytes.size(); ++length) {
    const std::string why = refusal(bytes.substr(0, length));
    ASSERT_NE(why, "") << "length " << length << " was accepted";
    EXPECT_NE(why.find("'OUT/checkpoint'"), std::string::npos) << why;
  }
}

TEST(CheckpointFile, EverySingleDamagedByteIsRefusedAsDamaged) {
  const std::string bytes = checkpoint::encode_checkpoint(sample_state());
  for (std::size_t at = 0; at < bytes.size(); ++at) {
    std::string damaged = bytes;
    damaged[at] = static_cast<char>(damaged[at] ^ 0x10);
    const std::string why = refusal(damaged);
    ASSERT_NE(why, "") << "damage at byte " << at << " was accepted";
    EXPECT_TRUE(why.find("damaged") != std::string::npos || why.find("not a lockstep checkpoint") != std::string::npos ||
                why.find("format version") != std::string::npos)
        << why;
  }
  EXPECT_NE(refusal(bytes.substr(0, bytes.size() - 1) + "\x7f").find("CRC-32 mismatch"), std::string::npos);
}

TEST(CheckpointFile, OtherFilesAndOtherVersionsAreRefusedWithTheReason) {
  EXPECT_NE(refusal("[model]\nname = \"pendulum\"\n").find("is not a lockstep checkpoint"), std::string::npos);
  EXPECT_NE(refusal("").find("is not a lockstep checkpoint"), std::string::npos);
  // Versions 1 (before the [lyapunov] settings) and 3 with a valid CRC: refused for their version, not
  // as damage.
  for (const char version : {1, 3}) {
    std::string other = checkpoint::encode_checkpoint(sample_state());
    other[8] = version;
    other.resize(other.size() - 4);
    const std::uint32_t crc = checkpoint::crc32_of(other);
    for (int i = 0; i < 4; ++i) other.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
    const std::string expected = "has format version " + std::to_string(version) + " (this lockstep reads version 2)";
    EXPECT_NE(refusal(other).find(expected), std::string::npos) << refusal(other);
  }
}

TEST(CheckpointFile, AMissingCheckpointIsACheckpointErrorNamingThePath) {
  try {
    checkpoint::read_checkpoint("/nonexistent/OUT/checkpoint");
    FAIL();
  } catch (const checkpoint_error& e) {
    EXPECT_NE(std::string(e.what()).find("'/nonexistent/OUT/checkpoint': No such file or directory"), std::string::npos) << e.what();
  }
}

TEST(CheckpointFile, NamesFollowTheRankAndHaveTheirJournalBeside) {
  EXPECT_EQ(checkpoint::checkpoint_path("out", 0, 1), fs::path("out/checkpoint"));
  EXPECT_EQ(checkpoint::journal_path("out", 0, 1), fs::path("out/checkpoint.journal"));
  EXPECT_EQ(checkpoint::checkpoint_path("out", 2, 3), fs::path("out/checkpoint.rank-2-of-3"));
  EXPECT_EQ(checkpoint::journal_path("out", 2, 3), fs::path("out/checkpoint.rank-2-of-3.journal"));
  EXPECT_EQ(checkpoint::shard_path("out", 1, 2), fs::path("out/members.rank-1-of-2.journal"));
}

// ---- the journal ----------------------------------------------------------------------------------

// Members [first, first + count) with recognizable values, every fifth one failed with NaN outputs.
checkpoint::journal_chunk sample_chunk(long first, long count) {
  checkpoint::journal_chunk c;
  c.first = first;
  c.count = count;
  c.save_count = 3;
  c.ny = 4;
  c.trajectories = true;
  for (long g = first; g < first + count; ++g) {
    c.status.push_back(g % 5 == 3 ? member_status::newton_failure : member_status::success);
    member_counters counters;
    counters.steps = 100 + g;
    counters.newton_iterations = 3 * g;
    counters.last_h = 1.0 / static_cast<double>(g + 1);
    counters.max_phi = std::ldexp(1.0, -40 - static_cast<int>(g % 7));
    c.counters.push_back(counters);
    c.final_t.push_back(g % 5 == 3 ? 0.5 : 1.0);
    for (int j = 0; j < c.ny; ++j) c.y_final.push_back(std::sin(static_cast<double>(g * c.ny + j)));
    for (int j = 0; j < c.save_count * c.ny; ++j)
      c.y.push_back(g % 5 == 3 && j >= c.ny ? std::numeric_limits<double>::quiet_NaN() : std::cos(static_cast<double>(g + j)));
  }
  return c;
}

void append(checkpoint::journal_writer& w, const checkpoint::journal_chunk& c, bool trajectories) {
  w.append(c.block(nullptr), c.save_count, c.ny, trajectories);
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

// Reads a journal back to the end of `valid_bytes`; the chunks in order.
std::vector<checkpoint::journal_chunk> read_journal(const fs::path& p, std::uint64_t run_id, long first, std::uint64_t valid_bytes) {
  std::ifstream in(p, std::ios::binary);
  checkpoint::journal_reader reader(in, p.string(), run_id, first, valid_bytes);
  std::vector<checkpoint::journal_chunk> chunks;
  checkpoint::journal_chunk c;
  while (reader.next(c)) chunks.push_back(c);
  return chunks;
}

TEST(MemberJournal, ChunksReadBackBitwiseInOrder) {
  temporary_directory dir;
  const fs::path p = dir.path / "checkpoint.journal";
  const checkpoint::journal_chunk a = sample_chunk(100, 7), b = sample_chunk(107, 5);
  std::uint64_t bytes = 0;
  {
    checkpoint::journal_writer w(p, checkpoint::journal_writer::mode::create, 42, 100);
    append(w, a, true);
    append(w, b, true);
    w.close();
    bytes = w.bytes();
    EXPECT_EQ(w.records(), 2u);
    EXPECT_EQ(w.next_member(), 112);
  }
  EXPECT_EQ(fs::file_size(p), bytes);
  const auto chunks = read_journal(p, 42, 100, bytes);
  ASSERT_EQ(chunks.size(), 2u);
  for (std::size_t k = 0; k < 2; ++k) {
    const checkpoint::journal_chunk& expected = k == 0 ? a : b;
    const checkpoint::journal_chunk& c = chunks[k];
    EXPECT_EQ(c.first, expected.first);
    EXPECT_EQ(c.count, expected.count);
    EXPECT_EQ(c.status, expected.status);
    ASSERT_EQ(c.counters.size(), expected.counters.size());
    EXPECT_EQ(std::memcmp(c.counters.data(), expected.counters.data(), c.counters.size() * sizeof(member_counters)), 0);
    EXPECT_TRUE(same_bits(c.final_t, expected.final_t));
    EXPECT_TRUE(same_bits(c.y_final, expected.y_final));
    EXPECT_TRUE(same_bits(c.y, expected.y));
  }
}

TEST(MemberJournal, ReopenedAtACheckpointCutsWhatCameAfterItAndAppendsThere) {
  temporary_directory dir;
  const fs::path p = dir.path / "checkpoint.journal";
  const checkpoint::journal_chunk a = sample_chunk(0, 4), lost = sample_chunk(4, 6), again = sample_chunk(4, 6);
  std::uint64_t at_checkpoint = 0;
  {
    checkpoint::journal_writer w(p, checkpoint::journal_writer::mode::create, 7, 0);
    append(w, a, false);
    w.sync();
    at_checkpoint = w.bytes();
    append(w, lost, false);  // written after the checkpoint: a crash loses it
    w.close();
  }
  {
    checkpoint::journal_writer w(p, checkpoint::journal_writer::mode::reopen, 7, 4, at_checkpoint, 1);
    append(w, again, false);
    w.close();
    const auto chunks = read_journal(p, 7, 0, w.bytes());
    ASSERT_EQ(chunks.size(), 2u);
    EXPECT_EQ(chunks[1].first, 4);
    EXPECT_FALSE(chunks[1].trajectories);
  }
}

TEST(MemberJournal, DamageShortnessAndForeignJournalsAreRefused) {
  temporary_directory dir;
  const fs::path p = dir.path / "checkpoint.journal";
  const checkpoint::journal_chunk a = sample_chunk(0, 9);
  std::uint64_t bytes = 0;
  {
    checkpoint::journal_writer w(p, checkpoint::journal_writer::mode::create, 9, 0);
    append(w, a, true);
    w.close();
    bytes = w.bytes();
  }
  const std::string intact = read_bytes(p);
  auto refused = [&](const std::string& bytes_on_disk, std::uint64_t run_id, std::uint64_t valid, const char* expected) {
    write_bytes(p, bytes_on_disk);
    try {
      read_journal(p, run_id, 0, valid);
    } catch (const checkpoint_error& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
      return;
    }
    ADD_FAILURE() << "accepted; expected: " << expected;
  };
  refused(intact, 10, bytes, "does not belong to this checkpoint");
  refused(intact.substr(0, intact.size() - 3), 9, bytes, "the file ends inside a record");
  std::string damaged = intact;
  damaged[damaged.size() - 100] ^= 0x01;
  refused(damaged, 9, bytes, "CRC-32 does not match");
  write_bytes(p, intact.substr(0, intact.size() - 3));
  EXPECT_THROW(checkpoint::journal_writer(p, checkpoint::journal_writer::mode::reopen, 9, 9, bytes, 1), checkpoint_error);
  write_bytes(p, intact);
  EXPECT_THROW(checkpoint::journal_writer(p, checkpoint::journal_writer::mode::reopen, 8, 9, bytes, 1), checkpoint_error);
}

// sample_chunk's members with the Lyapunov values of p = 2 exponents and h = 3 running estimates; the
// failed members' Lyapunov runs failed too (NaN exponents, a message).
checkpoint::journal_chunk sample_lyapunov_chunk(long first, long count) {
  checkpoint::journal_chunk c = sample_chunk(first, count);
  c.lyapunov_exponents = 2;
  c.lyapunov_history = 3;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (long g = first; g < first + count; ++g) {
    const bool failed = g % 5 == 3;
    c.lyapunov_status.push_back(failed ? member_status::max_steps : member_status::success);
    c.exponents.push_back(failed ? nan : 0.25 + 1.0 / static_cast<double>(g + 3));
    c.exponents.push_back(failed ? nan : -std::ldexp(1.0, -static_cast<int>(g % 9)));
    c.t_start.push_back(0.5 * static_cast<double>(g % 4));
    c.t_end.push_back(failed ? 2.25 : 3.0);
    c.renormalizations.push_back(10 + g);
    c.lyapunov_steps.push_back(g % 7 == 1 ? -1 : 1000 + 3 * g);
    for (int r = 0; r < 3; ++r) {
      c.history_t.push_back(failed && r == 2 ? nan : 0.5 * (r + 1));
      for (int j = 0; j < 2; ++j) c.history.push_back(failed && r == 2 ? nan : std::sin(static_cast<double>(g * 6 + r * 2 + j)));
    }
  }
  c.lyapunov_message = "member 3: the tangents need projection = none";
  return c;
}

void append_with_its_shape(checkpoint::journal_writer& w, const checkpoint::journal_chunk& c) {
  w.append(c.block(nullptr), c.shape(), c.lyapunov_message);
}

// A new journal holding the chunks a and b (b follows a), each with its own shape, read back.
std::vector<checkpoint::journal_chunk> written_and_read_back(const fs::path& p, const checkpoint::journal_chunk& a,
                                                             const checkpoint::journal_chunk& b) {
  checkpoint::journal_writer w(p, checkpoint::journal_writer::mode::create, 5, a.first);
  append_with_its_shape(w, a);
  append_with_its_shape(w, b);
  w.close();
  return read_journal(p, 5, a.first, w.bytes());
}

// The refusal of one record's payload as the reader decodes it ("" when it is accepted).
std::string payload_refusal(std::string_view bytes) {
  checkpoint::journal_chunk c;
  try {
    checkpoint::decode_journal_payload(bytes, c, "OUT/checkpoint.journal");
  } catch (const checkpoint_error& e) {
    return e.what();
  }
  return "";
}

TEST(MemberJournal, LyapunovValuesReadBackBitwiseWithTheirShapeAndMessage) {
  // Arrange
  temporary_directory dir;
  const fs::path p = dir.path / "checkpoint.journal";
  const checkpoint::journal_chunk a = sample_lyapunov_chunk(20, 6), b = sample_lyapunov_chunk(26, 9);

  // Act
  const auto chunks = written_and_read_back(p, a, b);

  // Assert
  ASSERT_EQ(chunks.size(), 2u);
  for (std::size_t k = 0; k < 2; ++k) {
    const checkpoint::journal_chunk& expected = k == 0 ? a : b;
    const checkpoint::journal_chunk& c = chunks[k];
    EXPECT_TRUE(c.shape() == expected.shape());
    EXPECT_EQ(c.lyapunov_status, expected.lyapunov_status);
    EXPECT_TRUE(same_bits(c.exponents, expected.exponents));
    EXPECT_TRUE(same_bits(c.t_start, expected.t_start));
    EXPECT_TRUE(same_bits(c.t_end, expected.t_end));
    EXPECT_EQ(c.renormalizations, expected.renormalizations);
    EXPECT_EQ(c.lyapunov_steps, expected.lyapunov_steps);
    EXPECT_TRUE(same_bits(c.history_t, expected.history_t));
    EXPECT_TRUE(same_bits(c.history, expected.history));
    EXPECT_EQ(c.lyapunov_message, expected.lyapunov_message);
    EXPECT_TRUE(same_bits(c.y, expected.y));  // the plain values are where they were
    // The writers' view points at the values read.
    const io::member_block block = c.block(nullptr);
    ASSERT_NE(block.lyapunov, nullptr);
    EXPECT_EQ(block.lyapunov->exponents, c.exponents.data());
    EXPECT_EQ(block.lyapunov->history, c.history.data());
  }
  // A plain chunk's view has none.
  EXPECT_EQ(sample_chunk(0, 2).block(nullptr).lyapunov, nullptr);
}

TEST(MemberJournal, ALyapunovRecordCutShortOrWithAnImpossibleShapeIsRefusedAsDamage) {
  // Arrange: one record's payload, as the reader sees it after the record header.
  temporary_directory dir;
  const fs::path p = dir.path / "checkpoint.journal";
  {
    checkpoint::journal_writer w(p, checkpoint::journal_writer::mode::create, 5, 0);
    append_with_its_shape(w, sample_lyapunov_chunk(0, 4));
    w.close();
  }
  const std::string payload = read_bytes(p).substr(checkpoint::journal_header_bytes + 16);
  ASSERT_EQ(payload_refusal(payload), "");

  // Act, Assert: every truncation, and P made impossible or wrong (the i32 P at bytes 29-32).
  for (std::size_t length = 0; length < payload.size(); ++length) {
    const std::string why = payload_refusal(std::string_view(payload).substr(0, length));
    ASSERT_NE(why, "") << "length " << length << " was accepted";
    EXPECT_NE(why.find("'OUT/checkpoint.journal'"), std::string::npos) << why;
  }
  std::string negative = payload;
  negative[32] = static_cast<char>(0x80);  // P's top byte: P < 0
  EXPECT_NE(payload_refusal(negative).find("impossible Lyapunov shape"), std::string::npos) << payload_refusal(negative);
  std::string other = payload;
  other[29] = 3;  // P = 3 where the members hold 2 exponents each
  EXPECT_NE(payload_refusal(other).find("does not match 4 members"), std::string::npos) << payload_refusal(other);
}

TEST(MemberJournal, AppendingWithoutTheLyapunovValuesTheShapeAsksForIsRefused) {
  temporary_directory dir;
  checkpoint::journal_writer w(dir.path / "checkpoint.journal", checkpoint::journal_writer::mode::create, 1, 0);
  const checkpoint::journal_chunk c = sample_lyapunov_chunk(0, 3);
  io::member_block without = c.block(nullptr);
  without.lyapunov = nullptr;
  EXPECT_THROW(w.append(without, c.shape(), ""), std::invalid_argument);
}

// The events of a model with E = 2 event functions and C = 2 records kept, added to c's members:
// members that met neither, one, or both (several times: more occurrences than records), some stopped
// by event 1; NaN first times and records where there are none, as the stepper leaves them.
void add_sample_events(checkpoint::journal_chunk& c) {
  c.events = 2;
  c.event_capacity = 2;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (long g = c.first; g < c.first + c.count; ++g) {
    const long occurred[2] = {g % 3, g % 4 == 1 ? 1 : 0};
    long made = 0;
    for (int k = 0; k < 2; ++k) {
      c.event_counts.push_back(occurred[k]);
      c.event_first_times.push_back(occurred[k] > 0 ? 0.125 * static_cast<double>(g % 7 + k) : nan);
      made += occurred[k];
    }
    made = std::min<long>(made, 2);
    c.event_records_made.push_back(made);
    c.stop_event.push_back(occurred[1] > 0 ? 1 : -1);
    for (long r = 0; r < 2; ++r)
      for (int j = 0; j < 2 + c.ny; ++j)
        c.event_records.push_back(r < made ? std::cos(static_cast<double>(g * 17 + r * 5 + j)) : nan);
  }
}

checkpoint::journal_chunk sample_event_chunk(long first, long count) {
  checkpoint::journal_chunk c = sample_chunk(first, count);
  add_sample_events(c);
  return c;
}

TEST(MemberJournal, EventsReadBackBitwiseBesideTheLyapunovValues) {
  // Arrange: a record with events alone, then one with events and Lyapunov values.
  temporary_directory dir;
  const fs::path p = dir.path / "checkpoint.journal";
  const checkpoint::journal_chunk a = sample_event_chunk(0, 7);
  checkpoint::journal_chunk b = sample_lyapunov_chunk(7, 5);
  add_sample_events(b);

  // Act
  const auto chunks = written_and_read_back(p, a, b);

  // Assert
  ASSERT_EQ(chunks.size(), 2u);
  for (std::size_t k = 0; k < 2; ++k) {
    const checkpoint::journal_chunk& expected = k == 0 ? a : b;
    const checkpoint::journal_chunk& c = chunks[k];
    EXPECT_TRUE(c.shape() == expected.shape());
    EXPECT_EQ(c.event_counts, expected.event_counts);
    EXPECT_TRUE(same_bits(c.event_first_times, expected.event_first_times));
    EXPECT_EQ(c.event_records_made, expected.event_records_made);
    EXPECT_EQ(c.stop_event, expected.stop_event);
    EXPECT_TRUE(same_bits(c.event_records, expected.event_records));
    EXPECT_TRUE(same_bits(c.exponents, expected.exponents));
    EXPECT_TRUE(same_bits(c.y, expected.y));
    const io::member_block block = c.block(nullptr);
    EXPECT_EQ(block.event_counts, c.event_counts.data());
    EXPECT_EQ(block.event_records, c.event_records.data());
    EXPECT_EQ(block.stop_event, c.stop_event.data());
  }
  EXPECT_EQ(sample_chunk(0, 2).block(nullptr).event_counts, nullptr);  // a chunk without events has none
}

TEST(MemberJournal, AnEventRecordWithAnUnknownStoppingEventOrAnImpossibleShapeIsRefusedAsDamage) {
  // Arrange: one record of E = 2 events, as the reader sees its payload.
  temporary_directory dir;
  const fs::path p = dir.path / "checkpoint.journal";
  {
    checkpoint::journal_writer w(p, checkpoint::journal_writer::mode::create, 5, 0);
    const checkpoint::journal_chunk c = sample_event_chunk(0, 1);
    w.append(c.block(nullptr), c.shape());
    w.close();
  }
  const std::string payload = read_bytes(p).substr(checkpoint::journal_header_bytes + 16);
  ASSERT_EQ(payload_refusal(payload), "");

  // Act, Assert. The payload: 41 bytes of shape (E at 41-44, C at 45-48), then the member: status and
  // counters, final t, Y = 4 final values and S Y = 12 outputs, 2 occurrences, 2 first times, the
  // records made, then the stopping event.
  std::string unknown = payload;
  const std::size_t stop_at = 49 + 4 + sizeof(member_counters) + 8 + 8 * 4 + 8 * 12 + 16 + 16 + 8;
  unknown.replace(stop_at, 4, std::string("\x02\x00\x00\x00", 4));  // event 2 of E = 2
  EXPECT_NE(payload_refusal(unknown).find("unknown stopping event 2"), std::string::npos) << payload_refusal(unknown);
  std::string impossible = payload;
  impossible[44] = static_cast<char>(0x80);  // E's top byte: E < 0
  EXPECT_NE(payload_refusal(impossible).find("impossible events shape"), std::string::npos) << payload_refusal(impossible);
  std::string other = payload;
  other[45] = 3;  // C = 3 where the member holds 2 records
  EXPECT_NE(payload_refusal(other).find("does not match 1 members"), std::string::npos) << payload_refusal(other);
}

TEST(MemberJournal, AppendingWithoutTheEventsTheShapeAsksForIsRefused) {
  temporary_directory dir;
  checkpoint::journal_writer w(dir.path / "checkpoint.journal", checkpoint::journal_writer::mode::create, 1, 0);
  const checkpoint::journal_chunk c = sample_event_chunk(0, 3);
  io::member_block without = c.block(nullptr);
  without.stop_event = nullptr;
  EXPECT_THROW(w.append(without, c.shape()), std::invalid_argument);
}

TEST(MemberJournal, AJournalOfAnotherFormatVersionIsRefusedForItsVersion) {
  // Arrange: a version 1 journal (before the Lyapunov values) of the same run.
  temporary_directory dir;
  const fs::path p = dir.path / "checkpoint.journal";
  std::string header = checkpoint::journal_header(9, 0);
  header[8] = 1;
  const std::uint32_t crc = checkpoint::crc32_of(std::string_view(header).substr(0, 28));
  for (int i = 0; i < 4; ++i) header[28 + i] = static_cast<char>((crc >> (8 * i)) & 0xff);
  write_bytes(p, header);

  // Act, Assert
  try {
    read_journal(p, 9, 0, header.size());
    FAIL() << "a version 1 journal was accepted";
  } catch (const checkpoint_error& e) {
    EXPECT_NE(std::string(e.what()).find("journal '" + p.string() + "' has format version 1 (this lockstep reads version 4)"),
              std::string::npos)
        << e.what();
  }
}

TEST(MemberJournal, AFullDiskIsAnIoErrorNamingTheJournal) {
  temporary_directory dir;
  const fs::path p = dir.path / "checkpoint.journal";
  checkpoint::journal_writer w(p, checkpoint::journal_writer::mode::create, 1, 0);
  io::fault_injection::scoped_write_failure disk_full(100);
  try {
    append(w, sample_chunk(0, 50), true);
    FAIL();
  } catch (const io::io_error& e) {
    EXPECT_EQ(e.path, p);
    EXPECT_NE(std::string(e.what()).find("No space left on device"), std::string::npos) << e.what();
  }
}

// ---- ranks own whole blocks ---------------------------------------------------------------------------

TEST(RankMembers, RanksOwnContiguousWholeBlocksCoveringEveryMemberInRankOrder) {
  for (const long members : {1L, 4095L, 4096L, 4097L, 9000L, 12288L, 1000000L})
    for (const int ranks : {1, 2, 3, 4, 7, 64}) {
      long next = 0;
      const long blocks = (members + study::statistics_block - 1) / study::statistics_block;
      for (int r = 0; r < ranks; ++r) {
        const mpi::member_range m = mpi::rank_members(members, r, ranks);
        EXPECT_EQ(m.first, next) << members << " members, rank " << r << " of " << ranks;
        EXPECT_TRUE(m.first % study::statistics_block == 0 || m.first == members);
        EXPECT_TRUE(m.end % study::statistics_block == 0 || m.end == members);
        // Balanced to one block.
        EXPECT_LE(m.size(), (blocks / ranks + 1) * study::statistics_block);
        next = m.end;
      }
      EXPECT_EQ(next, members);
    }
}

}  // namespace
