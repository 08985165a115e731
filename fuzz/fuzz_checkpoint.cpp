// fuzz/fuzz_checkpoint.cpp — libFuzzer target for the checkpoint reader (host/checkpoint): the file
// decoder, the statistics state inside it, and the journal record decoder. Any input must either be
// refused (checkpoint_error, state_error) or restore into accumulators that can be completed and
// summarized. Any other exception, crash, leak or sanitizer report is a finding.
//
// Nearly every mutated input fails the CRC-32, which is the point of it but stops the fuzzer at the
// door. So each input is also tried with its header's length and its CRC made to match, which lets
// the mutations reach the decoders behind the checksum.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "host/checkpoint/checkpoint_file.hpp"
#include "host/checkpoint/member_journal.hpp"
#include "lockstep/study/statistics.hpp"

namespace {

using lockstep::study::ensemble_statistics;

// Restores a statistics state into accumulators built from its own configuration (small ones only:
// the fuzzer's memory is bounded), adds every member it lacks and summarizes.
void restore_statistics(const std::string& state) {
  ensemble_statistics::configuration c;
  try {
    c = ensemble_statistics::configuration_of(state);
  } catch (const lockstep::study::state_error&) {
    return;
  }
  if (c.members_total < 1 || c.members_total > 5000 || c.width < 1 || c.width > 16 || c.probabilities.size() > 8 ||
      c.sketch_items > 4096)
    return;
  try {
    ensemble_statistics stats(c.members_total, c.width, c.probabilities, c.members_per_replicate,
                              c.exact ? std::numeric_limits<std::size_t>::max() : 0, c.sketch_items,
                              c.keeps_member_values_only(), c.thresholds);
    stats.merge_serialized(state);
    std::vector<double> values(c.width);
    for (long i = 0; i < c.members_total; ++i) {
      for (std::size_t k = 0; k < c.width; ++k) values[k] = static_cast<double>((i * 7 + static_cast<long>(k)) % 13) - 6.0;
      try {
        stats.add(i, values.data());
      } catch (const std::logic_error&) {  // already in the state, or before its next member
      }
    }
    (void)stats.finish();
  } catch (const std::invalid_argument&) {  // a configuration the constructor refuses
  } catch (const lockstep::study::state_error&) {
  }
}

void decode(const std::string& bytes) {
  try {
    const lockstep::checkpoint::checkpoint_state s = lockstep::checkpoint::decode_checkpoint(bytes, "fuzz");
    restore_statistics(s.statistics);
  } catch (const lockstep::checkpoint::checkpoint_error&) {
  }
}

// The same bytes with the header's payload length and the trailing CRC-32 made to match.
std::string with_matching_checksum(std::string bytes) {
  constexpr std::size_t header = 20, trailer = 4;
  if (bytes.size() < header + trailer) return bytes;
  const std::uint64_t payload = bytes.size() - header - trailer;
  for (int i = 0; i < 8; ++i) bytes[12 + i] = static_cast<char>((payload >> (8 * i)) & 0xff);
  const std::uint32_t crc = lockstep::checkpoint::crc32_of(std::string_view(bytes).substr(0, bytes.size() - trailer));
  for (int i = 0; i < 4; ++i) bytes[bytes.size() - trailer + i] = static_cast<char>((crc >> (8 * i)) & 0xff);
  return bytes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  decode(bytes);
  decode(with_matching_checksum(bytes));
  // The same input as a journal record's payload.
  lockstep::checkpoint::journal_chunk chunk;
  try {
    lockstep::checkpoint::decode_journal_payload(bytes, chunk, "fuzz");
  } catch (const lockstep::checkpoint::checkpoint_error&) {
  }
  return 0;
}
