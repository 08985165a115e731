// host/io/toml_guard.hpp — study text that Debian 12's toml++ (3.3.0) must not be given.
//
// toml++ 3.3.0 decides whether a non-ASCII code point is whitespace with a generated function that
// reaches __builtin_unreachable() for most code points in U+00A1 .. U+FEFE (marzer/tomlplusplus issues
// #190 and #295, fixed upstream by pull request #305, after 3.3.0): undefined behaviour, found here by
// fuzz/fuzz_study_file (its inputs are kept in fuzz/corpus/study_file/regression-*). The parser asks
// that question between tokens, while it reads ahead through a malformed value, and after a backslash
// in a multi-line string — never inside a comment. A study needs non-ASCII text nowhere but in comments
// (names, methods, samplers and statistics are ASCII words), so refuse_unsafe_toml refuses every
// non-ASCII character outside comments (and an initial byte-order mark) before toml++ sees the text.
//
// Comments are found by TOML's lexical rules: '#' outside strings. Strings start at every quote met
// outside a comment, so this reading enters a string wherever toml++ could, and every non-ASCII
// character it leaves unchecked is one toml++ reads as part of a comment too.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "host/io/study_file.hpp"

namespace lockstep::io {

// Throws study_error (source, line, column) at the first non-ASCII character outside a comment.
inline void refuse_unsafe_toml(std::string_view text, std::string_view source) {
  enum class state { outside, comment, basic, literal, multi_line_basic, multi_line_literal };
  state where = state::outside;
  int line = 1, column = 1;
  std::size_t i = text.starts_with("\xEF\xBB\xBF") ? 3 : 0;
  auto three = [&](char quote) { return text.substr(i, 3) == std::string(3, quote); };
  // Moves past text[i], keeping line and column (columns count characters, not UTF-8 bytes).
  auto advance = [&] {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      ++column;
    }
    ++i;
  };
  while (i < text.size()) {
    const char c = text[i];
    if (where != state::comment && static_cast<unsigned char>(c) >= 0x80)
      throw study_error(std::string(source), line, column,
                        "a non-ASCII character outside a comment (study files are ASCII but for comments)");
    switch (where) {
      case state::outside:
        if (c == '#') where = state::comment;
        if (c == '"' || c == '\'') {
          const bool multi_line = three(c);
          where = c == '"' ? (multi_line ? state::multi_line_basic : state::basic)
                           : (multi_line ? state::multi_line_literal : state::literal);
          if (multi_line) {
            advance();
            advance();
          }
        }
        break;
      case state::comment:
        if (c == '\n') where = state::outside;
        break;
      case state::basic:
      case state::multi_line_basic:
        if (c == '\\' && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) < 0x80 &&
            (where == state::multi_line_basic || text[i + 1] != '\n'))
          advance();  // the escaped character cannot end the string
        else if (where == state::basic && (c == '"' || c == '\n'))
          where = state::outside;
        else if (where == state::multi_line_basic && three('"'))
          where = state::outside;
        break;
      case state::literal:
        if (c == '\'' || c == '\n') where = state::outside;
        break;
      case state::multi_line_literal:
        if (three('\'')) where = state::outside;
        break;
    }
    // A multi-line string ends with three quotes, of which up to two more may belong to its content.
    if (where == state::outside && (c == '"' || c == '\'') && three(c)) {
      while (i < text.size() && text[i] == c) advance();
      continue;
    }
    advance();
  }
}

}  // namespace lockstep::io
