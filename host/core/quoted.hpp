// host/core/quoted.hpp — a text between double quotes with `"` and `\` escaped and control characters
// as \u00XX: a JSON string, and a TOML basic string, as a study file's diagnostics quote its values
// (host/io/study_file.cpp, in_quotes) and the model compiler describes a model to the equations
// generator (host/model_files/model_compiler.cpp).
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace lockstep::host_text {

// `text` quoted; at most `longest` of its characters, then "..." where it is longer.
inline std::string quoted(std::string_view text, std::size_t longest = std::string_view::npos) {
  std::string out = "\"";
  for (std::size_t i = 0; i < text.size() && i < longest; ++i) {
    const char c = text[i];
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += escaped;
    } else {
      out += c;
    }
  }
  if (text.size() > longest) out += "...";
  return out + "\"";
}

}  // namespace lockstep::host_text
