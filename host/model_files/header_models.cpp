// host/model_files/header_models.cpp — find_header_models, choose_header_model (header_models.hpp).
#include "host/model_files/header_models.hpp"

#include <cctype>
#include <set>
#include <stdexcept>

namespace lockstep::model_files {

namespace {

enum class token_kind { identifier, string, punctuation, other };

struct token {
  token_kind kind;
  std::string text;  // a string literal's contents without quotes (escapes kept as written)
  int line;
  int column = 0;  // 1-based, in bytes
};

bool identifier_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// C++ tokens, roughly: comments, preprocessor lines and character literals are dropped; string
// literals (raw ones too) become one token; "::" is one punctuation token, every other punctuation
// character its own.
std::vector<token> tokenize(std::string_view s) {
  std::vector<token> out;
  int line = 1;
  std::size_t line_begin = 0;  // where the current line starts, for columns
  bool line_start = true;
  std::size_t i = 0;
  const std::size_t n = s.size();
  auto advance_to = [&](std::size_t j) {
    for (; i < j && i < n; ++i)
      if (s[i] == '\n') {
        line++;
        line_begin = i + 1;
      }
  };
  auto column = [&] { return static_cast<int>(i - line_begin) + 1; };
  while (i < n) {
    const char c = s[i];
    if (c == '\n') {
      ++line;
      ++i;
      line_begin = i;
      line_start = true;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    if (c == '#' && line_start) {  // a preprocessor line, with its continuations
      while (i < n && s[i] != '\n') {
        if (s[i] == '\\' && i + 1 < n && s[i + 1] == '\n') advance_to(i + 2);
        else ++i;
      }
      continue;
    }
    line_start = false;
    if (c == '/' && i + 1 < n && s[i + 1] == '/') {
      while (i < n && s[i] != '\n') ++i;
      continue;
    }
    if (c == '/' && i + 1 < n && s[i + 1] == '*') {
      const std::size_t end = s.find("*/", i + 2);
      advance_to(end == std::string_view::npos ? n : end + 2);
      continue;
    }
    if (c == 'R' && i + 1 < n && s[i + 1] == '"') {  // R"delim( ... )delim"
      const std::size_t open = s.find('(', i + 2);
      if (open != std::string_view::npos) {
        std::string close(1, ')');  // appended piecewise: GCC 12 warns (-Wrestrict) on ")" + std::string
        close.append(s.substr(i + 2, open - i - 2));
        close.push_back('"');
        const std::size_t end = s.find(close, open + 1);
        const int at = line, at_column = column();
        const std::size_t stop = end == std::string_view::npos ? n : end + close.size();
        out.push_back({token_kind::string, std::string(s.substr(open + 1, (end == std::string_view::npos ? n : end) - open - 1)), at,
                       at_column});
        advance_to(stop);
        continue;
      }
    }
    if (c == '"' || c == '\'') {
      const int at = line, at_column = column();
      std::size_t j = i + 1;
      while (j < n && s[j] != c && s[j] != '\n') j += (s[j] == '\\' && j + 1 < n) ? 2 : 1;
      if (c == '"') out.push_back({token_kind::string, std::string(s.substr(i + 1, j - i - 1)), at, at_column});
      advance_to(j + 1);
      continue;
    }
    if (identifier_start(c)) {
      std::size_t j = i;
      while (j < n && identifier_char(s[j])) ++j;
      out.push_back({token_kind::identifier, std::string(s.substr(i, j - i)), line, column()});
      i = j;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      std::size_t j = i;
      while (j < n && (identifier_char(s[j]) || s[j] == '.' || s[j] == '\'')) ++j;
      out.push_back({token_kind::other, std::string(s.substr(i, j - i)), line, column()});
      i = j;
      continue;
    }
    if (c == ':' && i + 1 < n && s[i + 1] == ':') {
      out.push_back({token_kind::punctuation, "::", line, column()});
      i += 2;
      continue;
    }
    out.push_back({token_kind::punctuation, std::string(1, c), line, column()});
    ++i;
  }
  return out;
}

struct scope {
  enum kind_t { name_space, model_candidate, other } kind;
  std::string name;             // namespace or struct name ("" for an anonymous namespace)
  std::size_t candidate = 0;    // index into the working list, for model_candidate
};

struct working_candidate {
  header_model model;
  std::set<std::string> mentions;
};

}  // namespace

std::vector<header_model> find_header_models(std::string_view text) {
  const std::vector<token> tokens = tokenize(text);
  std::vector<scope> scopes;
  std::vector<working_candidate> found;
  bool template_pending = false;  // a `template` whose declaration has not reached ';' or '{' yet

  auto at_namespace_scope = [&] {
    for (const scope& s : scopes)
      if (s.kind != scope::name_space) return false;
    return true;
  };
  auto qualified = [&](const std::string& name) {
    std::string q;
    for (const scope& s : scopes)
      if (!s.name.empty()) q += s.name + "::";
    return q + name;
  };
  auto is = [&](std::size_t i, std::string_view text_) { return i < tokens.size() && tokens[i].text == text_; };

  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const token& t = tokens[i];
    // Inside a candidate (at any depth): what its body mentions, and `name = "..."` at its own level.
    for (const scope& s : scopes)
      if (s.kind == scope::model_candidate && t.kind == token_kind::identifier) found[s.candidate].mentions.insert(t.text);
    if (!scopes.empty() && scopes.back().kind == scope::model_candidate && t.kind == token_kind::identifier &&
        t.text == "name" && is(i + 1, "=") && i + 2 < tokens.size() && tokens[i + 2].kind == token_kind::string &&
        found[scopes.back().candidate].model.name.empty()) {
      found[scopes.back().candidate].model.name = tokens[i + 2].text;
    }

    if (t.kind == token_kind::identifier && t.text == "template") {
      template_pending = true;
      continue;
    }
    if (t.kind == token_kind::identifier && t.text == "namespace" && at_namespace_scope()) {
      // namespace a::b::c {   or   namespace {   (inline namespaces too: `inline` came before)
      std::string name;
      std::size_t j = i + 1;
      while (j < tokens.size() && (tokens[j].kind == token_kind::identifier || tokens[j].text == "::")) name += tokens[j++].text;
      if (is(j, "{")) {
        scopes.push_back({scope::name_space, name, 0});
        i = j;
        continue;
      }
    }
    if (t.kind == token_kind::identifier && (t.text == "struct" || t.text == "class") && i + 1 < tokens.size() &&
        tokens[i + 1].kind == token_kind::identifier) {
      // struct NAME [final] [: bases] {   — a definition; anything reaching ';' first is not one.
      std::size_t j = i + 2;
      int angle = 0;
      while (j < tokens.size() && !((tokens[j].text == "{" || tokens[j].text == ";") && angle == 0)) {
        if (tokens[j].text == "<") ++angle;
        if (tokens[j].text == ">") --angle;
        if (tokens[j].text == "(" || tokens[j].text == "=") break;  // a variable or function, not a class
        ++j;
      }
      if (is(j, "{")) {
        const bool candidate = at_namespace_scope() && !template_pending;
        if (candidate) {
          found.push_back({{qualified(tokens[i + 1].text), "", t.line, t.column}, {}});
          scopes.push_back({scope::model_candidate, tokens[i + 1].text, found.size() - 1});
        } else {
          scopes.push_back({scope::other, tokens[i + 1].text, 0});
        }
        template_pending = false;
        i = j;
        continue;
      }
    }
    if (t.text == "{") {
      scopes.push_back({scope::other, "", 0});
      template_pending = false;
    } else if (t.text == "}") {
      if (!scopes.empty()) scopes.pop_back();
    } else if (t.text == ";") {
      template_pending = false;
    }
  }

  std::vector<header_model> models;
  for (const working_candidate& c : found)
    if (c.mentions.count("mass") && c.mentions.count("force") && c.mentions.count("constraint") &&
        c.mentions.count("initial_state"))
      models.push_back(c.model);
  return models;
}

header_position member_position(std::string_view text, const header_model& model, std::string_view member) {
  const std::vector<token> tokens = tokenize(text);
  const std::size_t colon = model.type.rfind("::");
  const std::string_view last = colon == std::string::npos ? std::string_view(model.type)
                                                            : std::string_view(model.type).substr(colon + 2);
  for (std::size_t i = 0; i + 1 < tokens.size(); ++i) {
    if (tokens[i].line != model.line || tokens[i].column != model.column || tokens[i + 1].text != last) continue;
    std::size_t j = i + 2;
    while (j < tokens.size() && tokens[j].text != "{") ++j;
    // The body at its own level: a member's declaration, not a use inside another function's body.
    int depth = 0;
    for (; j < tokens.size(); ++j) {
      if (tokens[j].text == "{") ++depth;
      else if (tokens[j].text == "}" && --depth == 0) break;
      else if (depth == 1 && tokens[j].kind == token_kind::identifier && tokens[j].text == member)
        return {tokens[j].line, tokens[j].column};
    }
    break;
  }
  return {model.line, model.column};
}

header_model choose_header_model(const std::vector<header_model>& candidates, std::string_view wanted,
                                 const std::string& file) {
  auto describe = [&] {
    std::string list;
    for (const header_model& c : candidates)
      list += (list.empty() ? "" : ", ") + (c.name.empty() ? c.type : "\"" + c.name + "\" (" + c.type + ")");
    return list;
  };
  if (candidates.empty())
    throw std::invalid_argument(
        "'" + file + "' defines no model: a model is a struct at namespace scope (not a template) with name, n, m, k, "
        "params, inputs, mass, force, constraint and initial_state (include/lockstep/model/concept.hpp)");
  if (wanted.empty()) {
    if (candidates.size() == 1) return candidates.front();
    throw std::invalid_argument("'" + file + "' defines " + std::to_string(candidates.size()) + " models (" + describe() +
                                "): choose one with [model] name (on the command line: --name)");
  }
  for (const header_model& c : candidates) {
    const std::string_view type = c.type;
    const std::size_t colon = type.rfind("::");
    const std::string_view last = colon == std::string_view::npos ? type : type.substr(colon + 2);
    if (c.name == wanted || type == wanted || last == wanted) return c;
  }
  throw std::invalid_argument("'" + file + "' defines no model \"" + std::string(wanted) + "\"; it defines " + describe());
}

}  // namespace lockstep::model_files
