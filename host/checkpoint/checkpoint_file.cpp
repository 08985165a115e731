// host/checkpoint/checkpoint_file.cpp — encoding, decoding and atomic writing of checkpoints
// (checkpoint_file.hpp).
#include "host/checkpoint/checkpoint_file.hpp"

#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "host/io/output_file.hpp"
#include "lockstep/study/statistics.hpp"

namespace lockstep::checkpoint {

namespace {

constexpr std::string_view magic = "LSTPCKPT";
constexpr std::uint32_t format_version = 2;  // 2: the [lyapunov] settings
constexpr std::size_t header_bytes = 8 + 4 + 8;
constexpr std::size_t trailer_bytes = 4;

std::string quoted(const std::string& s) { return "'" + s + "'"; }

std::string hex(std::uint32_t x) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08x", x);
  return text;
}

std::string rank_suffix(int rank, int ranks) {
  return ranks > 1 ? ".rank-" + std::to_string(rank) + "-of-" + std::to_string(ranks) : "";
}

}  // namespace

std::uint32_t crc32_of(std::string_view bytes, std::uint32_t crc) {
  uLong c = crc;
  // zlib takes uInt lengths: feed large inputs in pieces.
  constexpr std::size_t piece = 1u << 30;
  for (std::size_t at = 0; at < bytes.size(); at += piece) {
    const std::size_t n = std::min(piece, bytes.size() - at);
    c = ::crc32(c, reinterpret_cast<const Bytef*>(bytes.data() + at), static_cast<uInt>(n));
  }
  return static_cast<std::uint32_t>(c);
}

std::string encode_checkpoint(const checkpoint_state& s) {
  study::byte_writer payload;
  payload.u64(s.run_id);
  payload.text(s.study_text);
  payload.text(s.study_source);
  payload.text(s.model);
  payload.i64(s.members_total);
  payload.i32(s.rank);
  payload.i32(s.ranks);
  payload.i64(s.range_first);
  payload.i64(s.range_end);
  payload.i64(s.members_done);
  payload.u64(s.journal_bytes);
  payload.u64(s.journal_records);
  payload.f64(s.checkpoint_every);
  payload.f64(s.elapsed_seconds);
  payload.text(s.statistics);
  payload.text(s.lyapunov);

  study::byte_writer file;
  for (const char c : magic) file.u8(static_cast<std::uint8_t>(c));
  file.u32(format_version);
  file.u64(payload.bytes().size());
  std::string bytes = file.take();
  bytes += payload.bytes();
  study::byte_writer crc;
  crc.u32(crc32_of(bytes));
  bytes += crc.bytes();
  return bytes;
}

checkpoint_state decode_checkpoint(std::string_view bytes, const std::string& source) {
  const std::string name = quoted(source);
  auto refuse = [&](const std::string& why) -> checkpoint_error {
    return checkpoint_error("checkpoint " + name + " " + why + "; it cannot be resumed");
  };
  if (bytes.size() < magic.size() || bytes.substr(0, magic.size()) != magic)
    throw refuse("is not a lockstep checkpoint (it does not start with \"LSTPCKPT\")");
  if (bytes.size() < header_bytes + trailer_bytes)
    throw refuse("is truncated (" + std::to_string(bytes.size()) + " bytes)");
  study::byte_reader header(bytes.substr(magic.size(), header_bytes - magic.size()), "checkpoint header");
  const std::uint32_t version = header.u32();
  const std::uint64_t payload_bytes = header.u64();
  if (version != format_version)
    throw refuse("has format version " + std::to_string(version) + " (this lockstep reads version " +
                 std::to_string(format_version) + ")");
  const std::uint64_t expected = bytes.size() - header_bytes - trailer_bytes;
  if (payload_bytes != expected)
    throw refuse("is damaged: its header records " + std::to_string(payload_bytes) + " payload bytes but the file holds " +
                 std::to_string(expected) + " (truncated or extended)");
  const std::string_view covered = bytes.substr(0, bytes.size() - trailer_bytes);
  study::byte_reader trailer(bytes.substr(bytes.size() - trailer_bytes), "checkpoint checksum");
  const std::uint32_t stored = trailer.u32();
  const std::uint32_t computed = crc32_of(covered);
  if (stored != computed)
    throw refuse("is damaged: CRC-32 mismatch (stored " + hex(stored) + ", computed " + hex(computed) + ")");

  checkpoint_state s;
  try {
    study::byte_reader in(bytes.substr(header_bytes, static_cast<std::size_t>(payload_bytes)), "checkpoint payload");
    s.run_id = in.u64();
    s.study_text = in.text();
    s.study_source = in.text();
    s.model = in.text();
    s.members_total = in.i64();
    s.rank = in.i32();
    s.ranks = in.i32();
    s.range_first = in.i64();
    s.range_end = in.i64();
    s.members_done = in.i64();
    s.journal_bytes = in.u64();
    s.journal_records = in.u64();
    s.checkpoint_every = in.f64();
    s.elapsed_seconds = in.f64();
    s.statistics = in.text();
    s.lyapunov = in.text();
    if (!in.at_end()) in.fail(std::to_string(in.remaining()) + " bytes after the payload");
  } catch (const study::state_error& e) {
    throw refuse(std::string("is damaged: ") + e.what());
  }
  if (s.ranks < 1 || s.rank < 0 || s.rank >= s.ranks || s.members_total < 1 || s.range_first < 0 ||
      s.range_end < s.range_first || s.range_end > s.members_total || s.members_done < s.range_first ||
      s.members_done > s.range_end || !(s.checkpoint_every >= 0.0) || !(s.elapsed_seconds >= 0.0))
    throw refuse("is damaged: inconsistent ranks, member ranges or times");
  return s;
}

void write_checkpoint(const std::filesystem::path& path, const checkpoint_state& state) {
  io::output_file file(path, "checkpoint");
  file.write(encode_checkpoint(state));
  file.commit();
}

checkpoint_state read_checkpoint(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    throw checkpoint_error("cannot read checkpoint " + quoted(path.string()) + ": " + std::strerror(err));
  }
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) throw checkpoint_error("cannot read checkpoint " + quoted(path.string()));
  return decode_checkpoint(bytes.str(), path.string());
}

std::filesystem::path checkpoint_path(const std::filesystem::path& out_dir, int rank, int ranks) {
  return out_dir / ("checkpoint" + rank_suffix(rank, ranks));
}

std::filesystem::path journal_path(const std::filesystem::path& out_dir, int rank, int ranks) {
  return out_dir / ("checkpoint" + rank_suffix(rank, ranks) + ".journal");
}

std::filesystem::path shard_path(const std::filesystem::path& out_dir, int rank, int ranks) {
  return out_dir / ("members" + rank_suffix(rank, ranks) + ".journal");
}

}  // namespace lockstep::checkpoint
