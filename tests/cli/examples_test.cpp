// Every examples/*.toml through `lockstep run`, shrunk: `members = 8`, `replicates = 2` and a
// [sensitivity] design of `base = 16` rows (when the example sets them), everything else as written. Catches a broken example (a key the loader refuses,
// a model that fails, ...) without running it at full size. Examples with more than 2000 members
// after shrinking (large pure grids) are skipped and named in the output.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "cli_support.hpp"
#include "host/io/study_file.hpp"
#include "lockstep/study/samplers.hpp"

#ifndef LOCKSTEP_SOURCE_DIR
#error "LOCKSTEP_SOURCE_DIR must name the source tree (tests/cli/CMakeLists.txt)"
#endif

namespace {

using namespace lockstep;
using namespace lockstep::cli_test;

constexpr long max_members = 2000;

std::vector<fs::path> example_studies() {
  std::vector<fs::path> studies;
  const fs::path examples = fs::path(LOCKSTEP_SOURCE_DIR) / "examples";
  if (fs::is_directory(examples))
    for (const auto& e : fs::directory_iterator(examples))
      if (e.path().extension() == ".toml") studies.push_back(e.path());
  std::sort(studies.begin(), studies.end());
  return studies;
}

TEST(LockstepExamples, EveryExampleStudyRunsWithFewMembersAndWritesReadableResults) {
  // Arrange
  const std::vector<fs::path> studies = example_studies();
  if (studies.empty()) GTEST_SKIP() << "no examples/*.toml";
  scratch_dir dir;
  std::vector<std::string> ran, skipped;

  for (const fs::path& study : studies) {
    const std::string stem = study.stem().string();
    SCOPED_TRACE("examples/" + study.filename().string());
    const std::string text = replace_key_value(
        replace_key_value(replace_key_value(read_text(study), "members", "8"), "replicates", "2"), "base", "16");
    io::study_spec spec;
    try {
      spec = io::parse_study(text, stem + ".toml");
    } catch (const io::study_error& e) {
      ADD_FAILURE() << "the shrunk example does not load: " << e.what();
      continue;
    }
    const long members = study::member_count(spec.plan);
    if (members > max_members) {
      skipped.push_back(stem + " (" + std::to_string(members) + " members)");
      continue;
    }

    // Act
    const run_result r = run_study(dir, stem, text, {"--quiet"}, 0, "out-" + stem);

    // Assert
    if (r.exit_code != 0) continue;  // run_study reported it
    ran.push_back(stem + " (" + std::to_string(members) + " members)");
    h5_file f(dir / ("out-" + stem) / "results.h5");
    ASSERT_TRUE(f.is_open());
    EXPECT_EQ(f.string_attribute("/", "model"), spec.model);
    EXPECT_EQ(f.int64_attribute("/", "members"), members);
    EXPECT_EQ(f.string_attribute("/", "study_name"), stem);
    EXPECT_EQ(f.string_attribute("/", "study"), text);
    const std::vector<std::int32_t> status = f.int32s("/members/status");
    EXPECT_EQ(static_cast<long>(status.size()), members);
    EXPECT_EQ(f.doubles("/t"), spec.save_times);
    for (const std::string& stat : spec.output.statistics)
      EXPECT_TRUE(f.exists("/statistics/" + stat + "/q")) << stat;
  }
  for (const std::string& s : ran) std::printf("[ example  ] ran %s\n", s.c_str());
  for (const std::string& s : skipped) std::printf("[ skipped  ] %s: more than %ld members after shrinking\n", s.c_str(), max_members);
  EXPECT_FALSE(ran.empty() && !skipped.empty()) << "every example was skipped";
}

}  // namespace
