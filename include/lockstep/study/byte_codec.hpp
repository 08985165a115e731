// lockstep/study/byte_codec.hpp — the byte encoding of saved states: byte_writer, byte_reader and the
// state_error a damaged state raises.
//
// ensemble_statistics::serialize() (study/statistics.hpp), the checkpoint files built around it
// (host/checkpoint) and the ranks' reports write numbers little-endian whatever the host's byte order,
// doubles as their IEEE-754 bit patterns, so a state restores bit for bit on any machine.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace lockstep::study {

// A saved state that cannot be read back: truncated, inconsistent, or made for another configuration.
struct state_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class byte_writer {
 public:
  void u8(std::uint8_t x) { bytes_.push_back(static_cast<char>(x)); }
  void u32(std::uint32_t x) { put(x, 4); }
  void u64(std::uint64_t x) { put(x, 8); }
  void i32(std::int32_t x) { put(static_cast<std::uint32_t>(x), 4); }
  void i64(std::int64_t x) { put(static_cast<std::uint64_t>(x), 8); }
  void f64(double x) { put(std::bit_cast<std::uint64_t>(x), 8); }
  void text(std::string_view s) {  // length-prefixed
    u64(s.size());
    bytes_.append(s);
  }
  const std::string& bytes() const { return bytes_; }
  std::string take() { return std::move(bytes_); }

 private:
  void put(std::uint64_t x, int width) {
    for (int i = 0; i < width; ++i) bytes_.push_back(static_cast<char>((x >> (8 * i)) & 0xffu));
  }
  std::string bytes_;
};

// Reads what byte_writer wrote; every read is bounds-checked and throws state_error naming `what`
// ("statistics state", "checkpoint") when the bytes run out.
class byte_reader {
 public:
  byte_reader(std::string_view bytes, std::string what) : bytes_(bytes), what_(std::move(what)) {}

  std::uint8_t u8() { return static_cast<std::uint8_t>(get(1)); }
  std::uint32_t u32() { return static_cast<std::uint32_t>(get(4)); }
  std::uint64_t u64() { return get(8); }
  std::int32_t i32() { return static_cast<std::int32_t>(static_cast<std::uint32_t>(get(4))); }
  std::int64_t i64() { return static_cast<std::int64_t>(get(8)); }
  double f64() { return std::bit_cast<double>(get(8)); }
  std::string text() {
    const std::size_t n = count(1);
    std::string s(bytes_.substr(position_, n));
    position_ += n;
    return s;
  }
  // A count of elements of at least `element_bytes` bytes each that must still fit in the input, so a
  // damaged count is refused before anything is allocated for it.
  std::size_t count(std::size_t element_bytes) {
    const std::uint64_t n = u64();
    if (element_bytes > 0 && n > remaining() / element_bytes) fail("a count of " + std::to_string(n) + " exceeds the data");
    return static_cast<std::size_t>(n);
  }
  std::size_t remaining() const { return bytes_.size() - position_; }
  std::size_t position() const { return position_; }
  bool at_end() const { return position_ == bytes_.size(); }
  [[noreturn]] void fail(const std::string& why) const {
    throw state_error(what_ + ": " + why + " (at byte " + std::to_string(position_) + ")");
  }

 private:
  std::uint64_t get(int width) {
    if (remaining() < static_cast<std::size_t>(width)) fail("truncated");
    std::uint64_t x = 0;
    for (int i = 0; i < width; ++i) x |= std::uint64_t(static_cast<unsigned char>(bytes_[position_ + i])) << (8 * i);
    position_ += static_cast<std::size_t>(width);
    return x;
  }
  std::string_view bytes_;
  std::string what_;
  std::size_t position_ = 0;
};

}  // namespace lockstep::study
