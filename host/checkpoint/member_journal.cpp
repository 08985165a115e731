// host/checkpoint/member_journal.cpp — appending, syncing and reading back journals (member_journal.hpp).
#include "host/checkpoint/member_journal.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <type_traits>

#include "host/io/output_file.hpp"
#include "lockstep/study/statistics.hpp"

namespace lockstep::checkpoint {

namespace {

constexpr std::string_view journal_magic = "LSTPJRNL";
constexpr std::uint32_t journal_version = 4;  // 2: Lyapunov values; 3: their t_end; 4: events
constexpr std::uint32_t record_magic = 0x524a534cu;  // "LSJR" little-endian
constexpr std::size_t record_header_bytes = 4 + 8 + 4;
// member_counters is written word by word, so that counters added to it later are journaled without
// touching this file; a journal whose records carry another number of words is refused.
static_assert(std::is_trivially_copyable_v<member_counters> && sizeof(member_counters) % 8 == 0 &&
                  sizeof(long) == 8 && sizeof(double) == 8,
              "member_counters must consist of 8-byte integers and doubles");
constexpr int counter_words = static_cast<int>(sizeof(member_counters) / 8);
constexpr std::size_t counters_bytes = 4 + sizeof(member_counters);  // with the status
// Shapes beyond these are damage, not studies (save times are capped at 10^6 by the study loader).
constexpr int max_save_count = 1 << 24;
constexpr int max_ny = 1 << 16;
// Exponents are at most the manifold dimension (< 2 Y); estimates at most 10^6 + 2 (the loader caps the
// re-orthonormalizations at 10^6: io::lyapunov_history_length).
constexpr int max_exponents = 1 << 17;
constexpr long max_history = 1L << 24;
// Event functions: a model's handful; records: the study loader caps them at 10^6 per member.
constexpr int max_events = 1 << 16;
constexpr int max_event_capacity = 1000000;

std::string quoted(const std::string& s) { return "'" + s + "'"; }

std::uint64_t member_bytes(const journal_shape& shape) {
  const std::uint64_t per_state = 8u * static_cast<std::uint64_t>(shape.ny);
  std::uint64_t bytes =
      counters_bytes + 8 + per_state + (shape.trajectories ? per_state * static_cast<std::uint64_t>(shape.save_count) : 0);
  if (shape.lyapunov_exponents > 0) {
    const auto p = static_cast<std::uint64_t>(shape.lyapunov_exponents), h = static_cast<std::uint64_t>(shape.lyapunov_history);
    // status, exponents, t_start, t_end, renormalizations, steps, history_t, history
    bytes += 4 + 8 * p + 8 + 8 + 8 + 8 + 8 * h + 8 * h * p;
  }
  if (shape.events > 0) {
    const auto e = static_cast<std::uint64_t>(shape.events), c = static_cast<std::uint64_t>(shape.event_capacity);
    // occurrences, first times, records made, stopping event, records
    bytes += 8 * e + 8 * e + 8 + 4 + c * (16 + per_state);
  }
  return bytes;
}

void sync_directory(const std::filesystem::path& file) {
  const std::filesystem::path dir = file.has_parent_path() ? file.parent_path() : std::filesystem::path(".");
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace

std::string journal_header(std::uint64_t run_id, long first_member) {
  study::byte_writer out;
  for (const char c : journal_magic) out.u8(static_cast<std::uint8_t>(c));
  out.u32(journal_version);
  out.u64(run_id);
  out.i64(first_member);
  const std::uint32_t crc = crc32_of(out.bytes());
  out.u32(crc);
  return out.take();
}

io::member_block journal_chunk::block(const double* inputs) const {
  io::member_block b;
  if (lyapunov_exponents > 0) {
    lyapunov_view_.status = lyapunov_status.data();
    lyapunov_view_.exponents = exponents.data();
    lyapunov_view_.t_start = t_start.data();
    lyapunov_view_.t_end = t_end.data();
    lyapunov_view_.renormalizations = renormalizations.data();
    lyapunov_view_.steps = lyapunov_steps.data();
    lyapunov_view_.history_t = lyapunov_history > 0 ? history_t.data() : nullptr;
    lyapunov_view_.history = lyapunov_history > 0 ? history.data() : nullptr;
    b.lyapunov = &lyapunov_view_;
  }
  b.first = first;
  b.count = count;
  b.status = status.data();
  b.counters = counters.data();
  b.final_t = final_t.data();
  b.inputs = inputs;
  b.y = trajectories ? y.data() : nullptr;
  b.y_final = y_final.data();
  if (events > 0) {
    b.event_counts = event_counts.data();
    b.event_first_times = event_first_times.data();
    b.event_records_made = event_records_made.data();
    b.stop_event = stop_event.data();
    b.event_records = event_records.data();
  }
  return b;
}

void decode_journal_payload(std::string_view payload, journal_chunk& out, const std::string& source) {
  try {
    study::byte_reader in(payload, "journal " + quoted(source) + " record");
    out.first = in.i64();
    out.count = in.i64();
    out.save_count = in.i32();
    out.ny = in.i32();
    const std::uint8_t trajectories = in.u8();
    if (out.first < 0 || out.count < 1 || out.save_count < 0 || out.save_count > max_save_count || out.ny < 0 ||
        out.ny > max_ny || trajectories > 1)
      in.fail("impossible members or shape");
    if (const std::int32_t words = in.i32(); words != counter_words)
      in.fail("member counters of " + std::to_string(words) + " words (this lockstep has " + std::to_string(counter_words) +
              "): written by another version");
    out.trajectories = trajectories == 1;
    out.lyapunov_exponents = in.i32();
    out.lyapunov_history = in.i64();
    if (out.lyapunov_exponents < 0 || out.lyapunov_exponents > max_exponents || out.lyapunov_history < 0 ||
        out.lyapunov_history > max_history || (out.lyapunov_exponents == 0 && out.lyapunov_history != 0))
      in.fail("impossible Lyapunov shape");
    out.events = in.i32();
    out.event_capacity = in.i32();
    if (out.events < 0 || out.events > max_events || out.event_capacity < 0 || out.event_capacity > max_event_capacity ||
        (out.events == 0 && out.event_capacity != 0))
      in.fail("impossible events shape");
    out.lyapunov_message = out.lyapunov_exponents > 0 ? in.text() : std::string();
    const std::uint64_t per_member = member_bytes(out.shape());
    if (static_cast<std::uint64_t>(out.count) > in.remaining() / per_member ||
        static_cast<std::uint64_t>(out.count) * per_member != in.remaining())
      in.fail("its length does not match " + std::to_string(out.count) + " members");
    const auto n = static_cast<std::size_t>(out.count);
    const auto ny = static_cast<std::size_t>(out.ny);
    const std::size_t outputs = static_cast<std::size_t>(out.save_count) * ny;
    out.status.resize(n);
    out.counters.resize(n);
    out.final_t.resize(n);
    out.y_final.resize(n * ny);
    out.y.resize(out.trajectories ? n * outputs : 0);
    const auto p = static_cast<std::size_t>(out.lyapunov_exponents), h = static_cast<std::size_t>(out.lyapunov_history);
    const std::size_t lyapunov_members = p > 0 ? n : 0;
    out.lyapunov_status.resize(lyapunov_members);
    out.exponents.resize(lyapunov_members * p);
    out.t_start.resize(lyapunov_members);
    out.t_end.resize(lyapunov_members);
    out.renormalizations.resize(lyapunov_members);
    out.lyapunov_steps.resize(lyapunov_members);
    out.history_t.resize(lyapunov_members * h);
    out.history.resize(lyapunov_members * h * p);
    const auto e = static_cast<std::size_t>(out.events);
    const std::size_t record_values = static_cast<std::size_t>(out.event_capacity) * (2 + ny);
    const std::size_t event_members = e > 0 ? n : 0;
    out.event_counts.resize(event_members * e);
    out.event_first_times.resize(event_members * e);
    out.event_records_made.resize(event_members);
    out.stop_event.resize(event_members);
    out.event_records.resize(event_members * record_values);
    for (std::size_t i = 0; i < n; ++i) {
      const std::int32_t status = in.i32();
      if (status < 0 || status >= member_status_count) in.fail("unknown member status " + std::to_string(status));
      out.status[i] = static_cast<member_status>(status);
      std::uint64_t words[counter_words];
      for (std::uint64_t& w : words) w = in.u64();
      std::memcpy(&out.counters[i], words, sizeof words);
      out.final_t[i] = in.f64();
      for (std::size_t j = 0; j < ny; ++j) out.y_final[i * ny + j] = in.f64();
      if (out.trajectories)
        for (std::size_t j = 0; j < outputs; ++j) out.y[i * outputs + j] = in.f64();
      if (p > 0) {
        const std::int32_t lyapunov_status = in.i32();
        if (lyapunov_status < 0 || lyapunov_status >= member_status_count)
          in.fail("unknown Lyapunov status " + std::to_string(lyapunov_status));
        out.lyapunov_status[i] = static_cast<member_status>(lyapunov_status);
        for (std::size_t j = 0; j < p; ++j) out.exponents[i * p + j] = in.f64();
        out.t_start[i] = in.f64();
        out.t_end[i] = in.f64();
        out.renormalizations[i] = in.i64();
        out.lyapunov_steps[i] = in.i64();
        for (std::size_t r = 0; r < h; ++r) out.history_t[i * h + r] = in.f64();
        for (std::size_t j = 0; j < h * p; ++j) out.history[i * h * p + j] = in.f64();
      }
      if (e > 0) {
        for (std::size_t k = 0; k < e; ++k) out.event_counts[i * e + k] = in.i64();
        for (std::size_t k = 0; k < e; ++k) out.event_first_times[i * e + k] = in.f64();
        out.event_records_made[i] = in.i64();
        const std::int32_t stop = in.i32();
        if (stop < -1 || stop >= out.events) in.fail("unknown stopping event " + std::to_string(stop));
        out.stop_event[i] = stop;
        for (std::size_t j = 0; j < record_values; ++j) out.event_records[i * record_values + j] = in.f64();
      }
    }
  } catch (const study::state_error& e) {
    throw checkpoint_error(std::string(e.what()) + ": the journal is damaged; it cannot be resumed");
  }
}

// ---- writer ----------------------------------------------------------------------------------------

journal_writer::journal_writer(std::filesystem::path path, mode how, std::uint64_t run_id, long first_member,
                               std::uint64_t valid_bytes, std::uint64_t records)
    : path_(std::move(path)), records_(records), next_member_(first_member) {
  if (how == mode::create) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd_ < 0) fail("create", errno);
    buffer_ = journal_header(run_id, first_member);
    records_ = 0;
    sync();
    sync_directory(path_);
    return;
  }
  // Reopen: the caller has read the records up to valid_bytes (journal_reader) and passes the member
  // they reach as first_member; here the header's run id is checked again and the tail is cut off.
  fd_ = ::open(path_.c_str(), O_RDWR | O_CLOEXEC);
  if (fd_ < 0) fail("open", errno);
  struct stat st {};
  if (::fstat(fd_, &st) != 0) fail("open", errno);
  if (static_cast<std::uint64_t>(st.st_size) < valid_bytes || valid_bytes < journal_header_bytes)
    throw checkpoint_error("journal " + quoted(path_.string()) + " is shorter (" + std::to_string(st.st_size) +
                           " bytes) than its checkpoint records (" + std::to_string(valid_bytes) + "); it cannot be resumed");
  std::string header(journal_header_bytes, '\0');
  if (::pread(fd_, header.data(), header.size(), 0) != static_cast<ssize_t>(header.size())) fail("read", errno);
  study::byte_reader h(std::string_view(header).substr(journal_magic.size() + 4, 8), "journal header");
  if (header.compare(0, journal_magic.size(), journal_magic) != 0 || h.u64() != run_id)
    throw checkpoint_error("journal " + quoted(path_.string()) + " belongs to another run than its checkpoint; it cannot be resumed");
  if (::ftruncate(fd_, static_cast<off_t>(valid_bytes)) != 0) fail("truncate", errno);
  if (::lseek(fd_, static_cast<off_t>(valid_bytes), SEEK_SET) < 0) fail("seek in", errno);
  bytes_ = valid_bytes;
  sync();
}

journal_writer::~journal_writer() {
  if (fd_ >= 0) ::close(fd_);
}

void journal_writer::fail(const std::string& doing, int system_error) {
  throw io::io_error(path_, system_error,
                     "cannot " + doing + " checkpoint journal " + quoted(path_.string()) + ": " + std::strerror(system_error));
}

void journal_writer::append(const io::member_block& block, const journal_shape& shape, std::string_view lyapunov_message) {
  if (block.first != next_member_)
    throw std::logic_error("journal_writer::append: members from " + std::to_string(block.first) + ", expected " +
                           std::to_string(next_member_));
  const io::lyapunov_values* l = block.lyapunov;
  const auto p = static_cast<std::size_t>(shape.lyapunov_exponents), h = static_cast<std::size_t>(shape.lyapunov_history);
  if (p > 0 && (l == nullptr || l->status == nullptr || l->exponents == nullptr || l->t_start == nullptr || l->t_end == nullptr ||
                l->renormalizations == nullptr || l->steps == nullptr || (h > 0 && (l->history_t == nullptr || l->history == nullptr))))
    throw std::invalid_argument("journal_writer::append: the Lyapunov values of members from " + std::to_string(block.first) +
                                " are missing");
  const auto e = static_cast<std::size_t>(shape.events);
  if (e > 0 && (block.event_counts == nullptr || block.event_first_times == nullptr || block.event_records_made == nullptr ||
                block.stop_event == nullptr || (shape.event_capacity > 0 && block.event_records == nullptr)))
    throw std::invalid_argument("journal_writer::append: the events of members from " + std::to_string(block.first) +
                                " are missing");
  const bool trajectories = shape.trajectories;
  study::byte_writer payload;
  payload.i64(block.first);
  payload.i64(block.count);
  payload.i32(shape.save_count);
  payload.i32(shape.ny);
  payload.u8(trajectories ? 1 : 0);
  payload.i32(counter_words);
  payload.i32(shape.lyapunov_exponents);
  payload.i64(p > 0 ? shape.lyapunov_history : 0);
  payload.i32(shape.events);
  payload.i32(e > 0 ? shape.event_capacity : 0);
  if (p > 0) payload.text(lyapunov_message);
  const auto per_state = static_cast<std::size_t>(shape.ny);
  const std::size_t outputs = static_cast<std::size_t>(shape.save_count) * per_state;
  const std::size_t record_values = e > 0 ? static_cast<std::size_t>(shape.event_capacity) * (2 + per_state) : 0;
  for (long i = 0; i < block.count; ++i) {
    payload.i32(static_cast<std::int32_t>(block.status[i]));
    std::uint64_t words[counter_words];
    std::memcpy(words, &block.counters[i], sizeof words);
    for (const std::uint64_t w : words) payload.u64(w);
    payload.f64(block.final_t[i]);
    for (std::size_t j = 0; j < per_state; ++j) payload.f64(block.y_final[static_cast<std::size_t>(i) * per_state + j]);
    if (trajectories)
      for (std::size_t j = 0; j < outputs; ++j) payload.f64(block.y[static_cast<std::size_t>(i) * outputs + j]);
    const auto s = static_cast<std::size_t>(i);
    if (p > 0) {
      payload.i32(static_cast<std::int32_t>(l->status[s]));
      for (std::size_t j = 0; j < p; ++j) payload.f64(l->exponents[s * p + j]);
      payload.f64(l->t_start[s]);
      payload.f64(l->t_end[s]);
      payload.i64(l->renormalizations[s]);
      payload.i64(l->steps[s]);
      for (std::size_t r = 0; r < h; ++r) payload.f64(l->history_t[s * h + r]);
      for (std::size_t j = 0; j < h * p; ++j) payload.f64(l->history[s * h * p + j]);
    }
    if (e > 0) {
      for (std::size_t k = 0; k < e; ++k) payload.i64(block.event_counts[s * e + k]);
      for (std::size_t k = 0; k < e; ++k) payload.f64(block.event_first_times[s * e + k]);
      payload.i64(block.event_records_made[s]);
      payload.i32(block.stop_event[s]);
      for (std::size_t j = 0; j < record_values; ++j) payload.f64(block.event_records[s * record_values + j]);
    }
  }
  study::byte_writer header;
  header.u32(record_magic);
  header.u64(payload.bytes().size());
  header.u32(crc32_of(payload.bytes()));
  io::charge_write(path_, header.bytes().size() + payload.bytes().size());
  buffer_ += header.bytes();
  buffer_ += payload.bytes();
  ++records_;
  next_member_ = block.first + block.count;
  if (buffer_.size() >= (std::size_t{1} << 22)) flush();
}

void journal_writer::flush() {
  std::size_t written = 0;
  while (written < buffer_.size()) {
    const ssize_t w = ::write(fd_, buffer_.data() + written, buffer_.size() - written);
    if (w < 0) {
      if (errno == EINTR) continue;
      fail("write", errno);
    }
    written += static_cast<std::size_t>(w);
  }
  bytes_ += buffer_.size();
  buffer_.clear();
}

void journal_writer::sync() {
  if (fd_ < 0) return;
  flush();
  if (::fsync(fd_) != 0) fail("sync", errno);
}

void journal_writer::close() {
  if (fd_ < 0) return;
  sync();
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail("close", errno);
}

// ---- reader ----------------------------------------------------------------------------------------

journal_reader::journal_reader(std::istream& in, std::string source, std::uint64_t run_id, long first_member,
                               std::uint64_t valid_bytes)
    : in_(in), source_(std::move(source)), valid_bytes_(valid_bytes), next_member_(first_member) {
  std::string header(journal_header_bytes, '\0');
  if (valid_bytes_ < journal_header_bytes || !in_.read(header.data(), static_cast<std::streamsize>(header.size())))
    damaged("its header is missing");
  if (header.compare(0, journal_magic.size(), journal_magic) == 0) {
    study::byte_reader h(std::string_view(header).substr(journal_magic.size(), 4), "journal header");
    if (const std::uint32_t version = h.u32(); version != journal_version)
      throw checkpoint_error("journal '" + source_ + "' has format version " + std::to_string(version) +
                             " (this lockstep reads version " + std::to_string(journal_version) + "); it cannot be resumed");
  }
  if (header != journal_header(run_id, first_member)) damaged("its header does not belong to this checkpoint");
  position_ = journal_header_bytes;
}

void journal_reader::damaged(const std::string& why) const {
  throw checkpoint_error("journal " + quoted(source_) + " is damaged at byte " + std::to_string(position_) + ": " + why +
                         "; it cannot be resumed");
}

bool journal_reader::next(journal_chunk& out) {
  if (position_ == valid_bytes_) return false;
  if (valid_bytes_ - position_ < record_header_bytes) damaged("a record header is cut off");
  char header[record_header_bytes];
  if (!in_.read(header, sizeof header)) damaged("the file ends inside a record header");
  study::byte_reader h(std::string_view(header, sizeof header), "journal record header");
  const std::uint32_t magic = h.u32();
  const std::uint64_t length = h.u64();
  const std::uint32_t crc = h.u32();
  if (magic != record_magic) damaged("no record starts here");
  if (length > valid_bytes_ - position_ - record_header_bytes) damaged("a record runs past the checkpointed length");
  payload_.resize(static_cast<std::size_t>(length));
  if (!in_.read(payload_.data(), static_cast<std::streamsize>(length))) damaged("the file ends inside a record");
  if (crc32_of(payload_) != crc) damaged("a record's CRC-32 does not match");
  decode_journal_payload(payload_, out, source_);
  if (out.first != next_member_)
    damaged("a record starts at member " + std::to_string(out.first) + " where member " + std::to_string(next_member_) + " was expected");
  position_ += record_header_bytes + length;
  next_member_ = out.first + out.count;
  ++records_;
  return true;
}

}  // namespace lockstep::checkpoint
