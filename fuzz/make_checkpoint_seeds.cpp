// fuzz/make_checkpoint_seeds.cpp — writes the seed corpus of fuzz_checkpoint (fuzz/corpus/checkpoint):
// checkpoints of small studies whose statistics are in every mode (moments only, exact quantiles, the
// sketch, replicate errors, exceedance counts per replicate) and stopped at different places (inside a block, at a block boundary,
// complete), one with [lyapunov] settings, and journal record payloads with and without trajectories
// and with Lyapunov values.
//
//   build-fuzz/make_checkpoint_seeds fuzz/corpus/checkpoint
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "host/checkpoint/checkpoint_file.hpp"
#include "host/checkpoint/member_journal.hpp"
#include "lockstep/study/statistics.hpp"

namespace {

namespace fs = std::filesystem;
using namespace lockstep;

void save(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  std::printf("%s: %zu bytes\n", path.string().c_str(), bytes.size());
}

struct seed_study {
  const char* name;
  long members, width, per_replicate, added;
  std::vector<double> probabilities;
  std::size_t quantile_budget, sketch_items;
  std::vector<double> thresholds = {};  // exceedance thresholds, [width] or none
};

std::string statistics_state(const seed_study& s) {
  study::ensemble_statistics stats(s.members, static_cast<std::size_t>(s.width), s.probabilities, s.per_replicate,
                                   s.quantile_budget, s.sketch_items, false, s.thresholds);
  std::vector<double> values(static_cast<std::size_t>(s.width));
  for (long i = 0; i < s.added; ++i) {
    for (long c = 0; c < s.width; ++c)
      values[static_cast<std::size_t>(c)] =
          i % 17 == 3 && c > 0 ? std::numeric_limits<double>::quiet_NaN() : std::sin(0.37 * static_cast<double>(i * s.width + c));
    stats.add(i, values.data());
  }
  return stats.serialize();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  const fs::path dir = argv[1];
  fs::create_directories(dir);
  const std::size_t unlimited = std::numeric_limits<std::size_t>::max();
  const seed_study studies[] = {
      {"moments-complete", 40, 3, 0, 40, {}, unlimited, 2048},
      {"exact-inside-a-block", 50, 6, 0, 20, {0.05, 0.5, 0.95}, unlimited, 2048},
      {"sketch-past-a-block", 4200, 2, 0, 4100, {0.1, 0.9}, 0, 16},
      {"replicates-exact", 300, 3, 100, 150, {0.5}, unlimited, 2048},
      {"replicates-sketch-complete", 4200, 1, 1400, 4200, {0.25}, 0, 8},
      {"replicates-exceedance", 300, 3, 100, 250, {}, unlimited, 2048, {0.5, std::nan(""), -0.25}},
  };
  for (const seed_study& s : studies) {
    checkpoint::checkpoint_state state;
    state.run_id = 0x5eed;
    state.study_text = "[model]\nname = \"pendulum\"\n[time]\nt1 = 1.0\n";
    state.study_source = "seed.toml";
    state.model = "pendulum";
    state.members_total = s.members;
    state.range_end = s.members;
    state.members_done = s.added;
    state.journal_bytes = 32;
    state.checkpoint_every = 1.0;
    state.elapsed_seconds = 0.5;
    state.statistics = statistics_state(s);
    if (std::string(s.name) == "moments-complete")
      state.lyapunov = "method = qr, exponents = 2 of 2, renormalize = 0.5, transient = 0, metric = mass, history = 4 estimates";
    save(dir / (std::string("checkpoint-") + s.name), checkpoint::encode_checkpoint(state));
  }

  // Journal record payloads: a journal's first record, less the journal header and the record header.
  for (const int kind : {0, 1, 2}) {  // plain, with trajectories, with Lyapunov values
    const bool trajectories = kind == 1, lyapunov = kind == 2;
    const fs::path journal = dir / "journal.tmp";
    {
      checkpoint::journal_writer w(journal, checkpoint::journal_writer::mode::create, 1, 0);
      checkpoint::journal_chunk chunk;
      chunk.count = 3;
      chunk.save_count = 2;
      chunk.ny = 3;
      chunk.trajectories = trajectories;
      chunk.status = {member_status::success, member_status::max_steps, member_status::success};
      chunk.counters.resize(3);
      chunk.counters[0].steps = 12;
      chunk.counters[1].last_h = 1e-9;
      chunk.final_t = {1.0, 0.25, 1.0};
      chunk.y_final.assign(9, 0.5);
      chunk.y.assign(18, -1.5);
      if (lyapunov) {
        chunk.lyapunov_exponents = 2;
        chunk.lyapunov_history = 2;
        chunk.lyapunov_status = {member_status::success, member_status::max_steps, member_status::success};
        chunk.exponents = {0.5, -0.5, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::quiet_NaN(), 0.25, -0.25};
        chunk.t_start = {0.0, 0.0, 0.5};
        chunk.t_end = {3.0, 1.75, 3.0};
        chunk.renormalizations = {2, 1, 2};
        chunk.lyapunov_steps = {40, 17, -1};
        chunk.history_t = {0.5, 1.0, 0.5, std::numeric_limits<double>::quiet_NaN(), 0.5, 1.0};
        chunk.history.assign(12, 0.125);
        chunk.lyapunov_message = "max_steps";
      }
      w.append(chunk.block(nullptr), chunk.shape(), chunk.lyapunov_message);
      w.close();
    }
    std::ifstream in(journal, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    constexpr std::size_t skip = checkpoint::journal_header_bytes + 16;
    save(dir / (lyapunov ? "journal-record-with-lyapunov" : trajectories ? "journal-record-with-trajectories" : "journal-record"),
         bytes.substr(skip));
    fs::remove(journal);
  }
  return 0;
}
