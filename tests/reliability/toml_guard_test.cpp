// The study loader refuses, before toml++ 3.3 parses them, texts on which that toml++ has undefined
// behaviour (host/io/toml_guard.hpp): every input fuzz_study_file found is kept in
// fuzz/corpus/study_file/regression-* and must give one study_error with a position; non-ASCII text in
// comments stays fine, and so does every example study.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "host/io/study_file.hpp"
#include "host/io/toml_guard.hpp"

namespace {

namespace fs = std::filesystem;
using lockstep::io::parse_study;
using lockstep::io::refuse_unsafe_toml;
using lockstep::io::study_error;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string refusal(const std::string& text) {
  try {
    refuse_unsafe_toml(text, "s.toml");
  } catch (const study_error& e) {
    return e.what();
  }
  return "";
}

TEST(TomlGuard, EveryFuzzerFindingIsRefusedWithAPositionBeforeTomlParsesIt) {
  int findings = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(LOCKSTEP_SOURCE_DIR) / "fuzz/corpus/study_file")) {
    if (!entry.path().filename().string().starts_with("regression-")) continue;
    ++findings;
    try {
      parse_study(read_file(entry.path()), "finding.toml");
      ADD_FAILURE() << entry.path() << " was accepted";
    } catch (const study_error& e) {
      EXPECT_NE(std::string(e.what()).find("a non-ASCII character outside a comment"), std::string::npos)
          << entry.path() << ": " << e.what();
    }
  }
  EXPECT_GE(findings, 4);
}

TEST(TomlGuard, NonAsciiIsRefusedOutsideCommentsAtItsLineAndColumn) {
  EXPECT_NE(refusal("a = 1\nb = \xc2\xa7\n").find("s.toml:2:5: error:"), std::string::npos) << refusal("b = \xc2\xa7");
  EXPECT_NE(refusal("name = \"caf\xc3\xa9\"").find("s.toml:1:12:"), std::string::npos);
  EXPECT_NE(refusal("s = \"\"\"\\\n\xc2\xa7\"\"\"\n").find("s.toml:2:1:"), std::string::npos);
  EXPECT_NE(refusal("s = '''\n\xc2\xa7'''\n").find("s.toml:2:1:"), std::string::npos);
  EXPECT_NE(refusal("a = 1m-8\"AD\xef\xbb\xbb#\n").find("s.toml:1:12:"), std::string::npos);
}

TEST(TomlGuard, CommentsStringsWithHashesAndALeadingByteOrderMarkPass) {
  EXPECT_EQ(refusal("\xEF\xBB\xBF# \xe2\x80\x94 a comment \xc2\xb7 m\xc2\xb2\na = 1 # \xc2\xa7\n"), "");
  EXPECT_EQ(refusal("a = \"#\" # \xc2\xa7\nb = '#' # \xc2\xa7\nc = \"\"\"x\n\"\"\" # \xc2\xa7\nd = '''\"''' # \xc2\xa7\n"), "");
  EXPECT_EQ(refusal("a = \"\\\"#\" # \xc2\xa7\nb = \"\"\"a\"\"\"\" # \xc2\xa7\n"), "");
  EXPECT_NE(refusal("a = \"#\xc2\xa7\"\n"), "") << "a hash inside a string starts no comment";
}

TEST(TomlGuard, EveryExampleStudyPasses) {
  int examples = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(LOCKSTEP_SOURCE_DIR) / "examples")) {
    if (entry.path().extension() != ".toml") continue;
    ++examples;
    EXPECT_EQ(refusal(read_file(entry.path())), "") << entry.path();
  }
  EXPECT_GT(examples, 0);
}

}  // namespace
