// host/model_files/header_models.hpp — which structs of a C++ header are models.
//
// A model header is ordinary C++ (include/lockstep/model/concept.hpp); lockstep does not parse C++,
// it reads just enough of the header's tokens to list its candidates: each struct or class defined
// at namespace scope (not a template, not nested in another class) whose body mentions mass, force,
// constraint and initial_state, with the string its `name` member is initialized with. The compiler
// then checks the chosen one against the model concept (lockstep_check_model), with messages that
// name what is missing.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace lockstep::model_files {

struct header_model {
  std::string type;   // the fully qualified C++ name, e.g. "machines::crane"
  std::string name;   // the literal its `name` member is set to ("" when not a plain string literal)
  int line = 0;       // where the struct is defined (1-based): its `struct` or `class` keyword
  int column = 0;
};

struct header_position {
  int line = 0, column = 0;  // 1-based
};

// The candidate models of the header text, in order of definition.
std::vector<header_model> find_header_models(std::string_view text);

// Where the model's struct (found in `text` by find_header_models) declares `member`: the first
// mention of the name in its body at the body's own level (not inside a function's body); the
// struct's own position when there is none. For diagnostics at the user's line.
header_position member_position(std::string_view text, const header_model& model, std::string_view member);

// The candidate `wanted` names (its `name` literal, its unqualified or its qualified type name); with
// `wanted` empty, the only candidate. Throws std::invalid_argument with a sentence for the user (none
// found; several and none asked for; the one asked for missing, listing those there are).
header_model choose_header_model(const std::vector<header_model>& candidates, std::string_view wanted,
                                 const std::string& file);

}  // namespace lockstep::model_files
