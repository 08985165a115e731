// host/io/study_file.cpp — reading and checking study files (the format and its defaults are in
// study_file.hpp). toml++ does the TOML; everything here is the study's own rules.
//
// The reader walks the sections in a fixed order ([top level keys], model, solver, time, ensemble,
// output, lyapunov) and throws at the first problem, so a file with one mistake gets exactly one diagnostic
// and its position. toml++ keeps a table's keys sorted by name, so wherever "first" or "as written"
// matters (the first unknown key, the order of [ensemble.vary]) the keys are put back into file order
// by their source positions.
#include "host/io/study_file.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

#include "host/core/quoted.hpp"
#include "host/io/study_file_keys.hpp"
#include "host/io/toml_guard.hpp"
#include "lockstep/lyapunov/tangent.hpp"
#include "lockstep/method/methods.hpp"
#include "lockstep/model/registry.hpp"
#include "lockstep/study/samplers.hpp"

namespace lockstep::io {

namespace {

std::string compose_diagnostic(const std::string& source, int line, int column, const std::string& message) {
  if (line <= 0) return source + ": error: " + message;
  return source + ":" + std::to_string(line) + ":" + std::to_string(column) + ": error: " + message;
}

}  // namespace

study_error::study_error(std::string source, int line, int column, std::string message)
    : std::runtime_error(compose_diagnostic(source, line, column, message)),
      source_(std::move(source)),
      line_(line),
      column_(column),
      message_(std::move(message)) {}

namespace {

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

// Optimal string alignment distance (Damerau's four edits, no substring edited twice), case-blind:
// "Radau5" is one name away from nothing but "radau5".
std::size_t edit_distance(std::string_view a, std::string_view b) {
  const std::size_t rows = a.size() + 1, cols = b.size() + 1;
  std::vector<std::size_t> d(rows * cols);
  auto at = [&](std::size_t i, std::size_t j) -> std::size_t& { return d[i * cols + j]; };
  for (std::size_t i = 0; i < rows; ++i) at(i, 0) = i;
  for (std::size_t j = 0; j < cols; ++j) at(0, j) = j;
  for (std::size_t i = 1; i < rows; ++i) {
    for (std::size_t j = 1; j < cols; ++j) {
      const std::size_t substitution = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      std::size_t best = std::min({at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + substitution});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) && lower(a[i - 2]) == lower(b[j - 1]))
        best = std::min(best, at(i - 2, j - 2) + 1);
      at(i, j) = best;
    }
  }
  return at(rows - 1, cols - 1);
}

}  // namespace

std::string closest_name(std::string_view word, std::span<const std::string_view> candidates) {
  const std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
  std::string_view best;
  std::size_t best_distance = limit + 1;
  for (std::string_view candidate : candidates) {
    const std::size_t distance = edit_distance(word, candidate);
    // A distance equal to the longer length means every character was replaced: "x" is not a
    // misspelling of "g".
    if (distance < best_distance && distance < std::max(word.size(), candidate.size())) {
      best = candidate;
      best_distance = distance;
    }
  }
  return std::string(best);
}

// A name or string value as it would be written in the file, shortened if very long (a diagnostic
// should fit a terminal line even when the file holds a long string by mistake).
std::string in_quotes(std::string_view text) { return host_text::quoted(text, 60); }

namespace {

// ---- small text helpers ----------------------------------------------------------------------------

std::string format_number(double x) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, x);  // shortest round-trip form
  return std::string(buffer, result.ptr);
}

std::string join(std::span<const std::string_view> names) {
  std::string out;
  for (std::string_view name : names) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

// A key as it appears in a dotted table name: bare when TOML allows it, quoted otherwise.
std::string key_in_path(std::string_view key) {
  const bool bare = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
  return bare ? std::string(key) : in_quotes(key);
}

// What a node holds, for "(got ...)".
std::string describe(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string: return "a string " + in_quotes(**node.as_string());
    case toml::node_type::integer: return "an integer (" + std::to_string(**node.as_integer()) + ")";
    case toml::node_type::floating_point: return "a number (" + format_number(**node.as_floating_point()) + ")";
    case toml::node_type::boolean: return std::string("a boolean (") + (**node.as_boolean() ? "true" : "false") + ")";
    case toml::node_type::array: return "an array";
    case toml::node_type::table: return "a table";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    default: return "nothing";
  }
}

std::string with_hint(std::string message, std::string_view word, std::span<const std::string_view> names,
                      std::string_view list_intro) {
  const std::string suggestion = closest_name(word, names);
  if (!suggestion.empty()) return message + "; did you mean " + in_quotes(suggestion) + "?";
  if (names.empty()) return message;
  return message + "; " + std::string(list_intro) + ": " + join(names);
}

std::vector<std::string_view> names_of(std::span<const named_value> table) {
  std::vector<std::string_view> names;
  for (const named_value& v : table) names.emplace_back(v.name);
  return names;
}

int index_of(std::span<const named_value> table, std::string_view name) {
  for (std::size_t i = 0; i < table.size(); ++i)
    if (name == table[i].name) return static_cast<int>(i);
  return -1;
}

// ---- positions -------------------------------------------------------------------------------------

struct position {
  int line = 1;
  int column = 1;
};

// toml++ reports line 0 for nodes it made up (none of ours, but a diagnostic must point somewhere).
position position_of(const toml::source_region& region) {
  if (region.begin.line == 0) return {};
  return {static_cast<int>(region.begin.line), static_cast<int>(region.begin.column)};
}

bool comes_before(position a, position b) { return a.line != b.line ? a.line < b.line : a.column < b.column; }

struct entry {
  const toml::key* key;
  const toml::node* node;
};

std::vector<entry> in_file_order(const toml::table& table) {
  std::vector<entry> entries;
  for (auto&& [key, node] : table) entries.push_back({&key, &node});
  std::stable_sort(entries.begin(), entries.end(), [](const entry& a, const entry& b) {
    return comes_before(position_of(a.key->source()), position_of(b.key->source()));
  });
  return entries;
}

// A table of the study and how diagnostics name it. `table` is nullptr when the file leaves it out;
// `where` is then the enclosing table's position (where a missing required key is reported).
struct section {
  const toml::table* table = nullptr;
  std::string name;  // "solver", "time.save", "ensemble.vary.\"params.L2\""; empty for the top level
  position where;
  std::string pattern;  // its table in study_file_keys: "solver", "time.save", "ensemble.vary.*"
  study_key_lookups* lookups = nullptr;  // where the keys looked up are recorded, if anywhere

  // Records that the reader looked up `key` of this table (tests/io/study_file_keys_test.cpp).
  void note(std::string_view key) const {
    if (lookups) lookups->insert({pattern, std::string(key)});
  }

  std::string label() const { return name.empty() ? "the top level" : "[" + name + "]"; }
  std::string in_label() const { return name.empty() ? "at the top level" : "in " + label(); }
  // How a key of this table is named in a diagnostic: "[solver] rtol", or "model" at the top level.
  std::string what(std::string_view key) const {
    return name.empty() ? in_quotes(key) : label() + " " + key_in_path(key);
  }
  const toml::node* get(std::string_view key) const {
    note(key);
    return table ? table->get(key) : nullptr;
  }
  position key_position(std::string_view key) const {
    note(key);
    if (table) {
      const auto it = table->find(key);
      if (it != table->end()) return position_of(it->first.source());
    }
    return where;
  }
};

// ---- the choices a string value can name -------------------------------------------------------------

struct choice {
  std::string_view name;
  int value;
  bool available;  // false: part of the study-file format, not implemented yet (refused, not "unknown")
};

constexpr choice method_choices[] = {
    {"bdf", static_cast<int>(method_kind::bdf), true},
    {"radau5", static_cast<int>(method_kind::radau5), true},
    {"radau3", static_cast<int>(method_kind::radau3), true},
    {"euler", static_cast<int>(method_kind::euler), true},
    {"rhoinf", static_cast<int>(method_kind::rhoinf), true},
    {"dopri5", static_cast<int>(method_kind::dopri5), true},
    {"tsit5", static_cast<int>(method_kind::tsit5), true},
    {"auto", static_cast<int>(method_kind::automatic), true},
};
constexpr choice formulation_choices[] = {
    {"index3", static_cast<int>(formulation::index3), true},
    {"ggl", static_cast<int>(formulation::ggl), true},
    {"index1", static_cast<int>(formulation::index1), true},
    {"projected-invariants", static_cast<int>(formulation::projected_invariants), true},
};
constexpr choice projection_choices[] = {
    {"none", static_cast<int>(projection_kind::none), true},
    {"coordinate", static_cast<int>(projection_kind::coordinate), true},
    {"post-stabilization", static_cast<int>(projection_kind::post_stabilization), true},
};
constexpr choice metric_choices[] = {
    {"mass", static_cast<int>(projection_metric::mass), true},
    {"euclidean", static_cast<int>(projection_metric::euclidean), true},
};
constexpr choice multiplier_choices[] = {
    {"independent", static_cast<int>(multiplier_convention::independent), true},
    {"minimum-norm", static_cast<int>(multiplier_convention::minimum_norm), true},
};
constexpr choice init_choices[] = {
    {"auto", static_cast<int>(init_mode::automatic), true},
    {"project", static_cast<int>(init_mode::project), true},
    {"strict", static_cast<int>(init_mode::strict), true},
};
constexpr choice sampler_choices[] = {
    {"random", static_cast<int>(study::sampler_kind::random), true},
    {"sobol", static_cast<int>(study::sampler_kind::sobol), true},
    {"lhs", static_cast<int>(study::sampler_kind::lhs), true},
    {"grid", static_cast<int>(study::sampler_kind::grid), true},
};

constexpr choice lyapunov_method_choices[] = {
    {"qr", static_cast<int>(lyapunov_method::qr), true},
    {"clone", static_cast<int>(lyapunov_method::clone), true},
};
constexpr choice lyapunov_metric_choices[] = {
    {"mass", static_cast<int>(lyapunov_metric::mass), true},
    {"euclidean", static_cast<int>(lyapunov_metric::euclidean), true},
};

// The formulation and projection a method brings where the [solver] table `s` names none (read_solver;
// the model file's read-ahead).
void apply_method_defaults(const section& s, solver_options& opt) {
  // The explicit pairs integrate the index-1 equations and keep the constraints by projecting after
  // every step (method/dopri5.hpp): those are their defaults, where the study names none.
  if (is_explicit_pair(opt.method)) {
    if (!s.get("formulation")) opt.form = formulation::index1;
    if (!s.get("projection")) opt.projection = projection_kind::coordinate;
  }
  // Auto (method/auto_switch.hpp) projects after every step for its explicit phases; its implicit
  // phases, stiff ones, run Radau IIA 5 on index3, whose tolerance calibration holds there
  // (method/auto_switch.hpp, "Options"), unless the study names ggl.
  if (opt.method == method_kind::automatic && !s.get("projection")) opt.projection = projection_kind::coordinate;
}

// The names of study::distribution_kind's values, in its order (the keys of "ensemble.vary.*").
constexpr std::string_view distribution_names[] = {"uniform", "normal", "lognormal", "grid"};
constexpr std::string_view plain_statistics[] = {"mean", "std", "min", "max"};

// More save times than this is a mistake in `every`, not a study (and would exhaust memory).
constexpr long max_save_times = 1000000;
// Member indices stay exact in a double, and counters in a long, below 2^53 members.
constexpr double max_members = 0x1p53;

// ---- the reader ----------------------------------------------------------------------------------------

class study_reader {
 public:
  study_reader(std::string source, const model_file_resolver* resolve, study_key_lookups* lookups = nullptr)
      : source_(std::move(source)), resolve_(resolve), lookups_(lookups) {}

  study_spec read(std::string_view text) {
    text_ = text;
    study_spec spec;
    toml::table root_table;
    try {
      root_table = toml::parse(text, std::string_view(source_));
    } catch (const toml::parse_error& error) {
      std::string description(error.description());
      if (!description.empty()) description[0] = lower(description[0]);
      fail(position_of(error.source()), "invalid TOML: " + description);
    }
    const section root{&root_table, "", position{}, "", lookups_};
    check_keys(root);

    const model_info model = read_model(root, spec);
    read_solver(root, spec.solver);
    read_time(root, spec);
    check_fixed_steps(root, spec);
    read_ensemble(root, model, spec);
    read_output(root, spec.output);
    read_lyapunov(root, model, spec);
    read_sensitivity(root, spec);
    read_derivative_measures(root, spec);
    read_events(root, model, spec);
    return spec;
  }

 private:
  [[noreturn]] void fail(position where, std::string message) const {
    throw study_error(source_, where.line, where.column, std::move(message));
  }
  [[noreturn]] void fail_at(const toml::node& node, std::string message) const {
    fail(position_of(node.source()), std::move(message));
  }
  [[noreturn]] void fail_at(const toml::key& key, std::string message) const {
    fail(position_of(key.source()), std::move(message));
  }

  // Refuses a key of s that study_file_keys does not list for its table. The "did you mean" prefers
  // the keys the table does not hold yet, the required ones first: `tl = 5` means t1.
  void check_keys(const section& s) const {
    if (!s.table) return;
    const std::vector<std::string_view> allowed = study_file_keys_of(s.pattern);
    std::vector<std::string_view> absent;
    for (const bool required : {true, false})
      for (const study_file_key& k : study_file_keys)
        if (k.table == s.pattern && (k.default_value == "required") == required && !s.table->contains(k.key))
          absent.push_back(k.key);
    for (const entry& e : in_file_order(*s.table)) {
      const std::string_view key = e.key->str();
      if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
      const std::string message = "unknown key " + in_quotes(key) + " " + s.in_label();
      if (!closest_name(key, absent).empty()) fail_at(*e.key, with_hint(message, key, absent, "valid keys"));
      fail_at(*e.key, with_hint(message, key, allowed, "valid keys"));
    }
  }

  // The table under `key`, or an absent section; anything else there is an error.
  section child(const section& parent, std::string_view key) const {
    parent.note(key);
    section s{nullptr, parent.name.empty() ? std::string(key) : parent.name + "." + key_in_path(key), parent.where,
              parent.pattern.empty() ? std::string(key) : parent.pattern + "." + std::string(key), lookups_};
    const toml::node* node = parent.get(key);
    if (!node) return s;
    s.table = node->as_table();
    if (!s.table) {
      if (parent.name.empty())
        fail_at(*node, in_quotes(key) + " must be a table, written [" + std::string(key) + "] with its keys below (got " +
                           describe(*node) + ")");
      fail_at(*node, parent.what(key) + " must be a table (got " + describe(*node) + ")");
    }
    s.where = position_of(node->source());
    return s;
  }

  // ---- typed values ----

  double number(const toml::node& node, const std::string& what) const {
    if (const auto* integer = node.as_integer()) return static_cast<double>(integer->get());
    if (const auto* real = node.as_floating_point()) {
      const double x = real->get();
      if (!std::isfinite(x)) fail_at(node, what + " must be a finite number (got " + format_number(x) + ")");
      return x;
    }
    fail_at(node, what + " must be a number (got " + describe(node) + ")");
  }

  long long integer(const toml::node& node, const std::string& what) const {
    if (const auto* integer = node.as_integer()) return integer->get();
    if (const auto* real = node.as_floating_point()) {
      const double x = real->get();
      if (std::isfinite(x) && x == std::floor(x) && std::fabs(x) <= 0x1p53) return static_cast<long long>(x);
      if (std::isfinite(x) && x == std::floor(x))  // beyond 2^53 a double no longer holds every integer
        fail_at(node, what + " must be an integer of magnitude at most 2^53 when written as a real number (got " +
                          format_number(x) + ")");
      fail_at(node, what + " must be an integer (got " + format_number(x) + ")");
    }
    fail_at(node, what + " must be an integer (got " + describe(node) + ")");
  }

  bool boolean(const toml::node& node, const std::string& what) const {
    if (const auto* flag = node.as_boolean()) return flag->get();
    fail_at(node, what + " must be true or false (got " + describe(node) + ")");
  }

  std::string string(const toml::node& node, const std::string& what) const {
    if (const auto* text = node.as_string()) return text->get();
    fail_at(node, what + " must be a string (got " + describe(node) + ")");
  }

  // A number at s[key] checked against a bound: "[solver] rtol must be > 0 (got -1)".
  std::optional<double> bounded_number(const section& s, std::string_view key, double bound, bool inclusive) const {
    const toml::node* node = s.get(key);
    if (!node) return std::nullopt;
    const double x = number(*node, s.what(key));
    if (inclusive ? !(x >= bound) : !(x > bound))
      fail_at(*node, s.what(key) + " must be " + (inclusive ? ">= " : "> ") + format_number(bound) + " (got " +
                         format_number(x) + ")");
    return x;
  }

  std::optional<long long> bounded_integer(const section& s, std::string_view key, long long lowest,
                                           long long highest) const {
    const toml::node* node = s.get(key);
    if (!node) return std::nullopt;
    const long long x = integer(*node, s.what(key));
    if (x < lowest || x > highest) {
      const std::string range = highest == LLONG_MAX ? ">= " + std::to_string(lowest)
                                                     : "between " + std::to_string(lowest) + " and " + std::to_string(highest);
      fail_at(*node, s.what(key) + " must be " + range + " (got " + std::to_string(x) + ")");
    }
    return x;
  }

  // A string naming one of `choices`: its value; planned names are refused as such, unknown names get
  // a "did you mean".
  int choose(const section& s, std::string_view key, std::string_view noun, std::span<const choice> choices,
             int fallback) const {
    const toml::node* node = s.get(key);
    if (!node) return fallback;
    const std::string name = string(*node, s.what(key));
    std::vector<std::string_view> all, available;
    for (const choice& c : choices) {
      all.push_back(c.name);
      if (c.available) available.push_back(c.name);
    }
    for (const choice& c : choices) {
      if (c.name != name) continue;
      if (c.available) return c.value;
      fail_at(*node, s.label() + " " + std::string(key) + " = " + in_quotes(name) +
                         " is not available in this version of lockstep (planned); available: " + join(available));
    }
    const std::string suggestion = closest_name(name, all);
    if (!suggestion.empty())
      fail_at(*node, s.label() + " unknown " + std::string(noun) + " " + in_quotes(name) + "; did you mean " +
                         in_quotes(suggestion) + "?");
    fail_at(*node, s.label() + " unknown " + std::string(noun) + " " + in_quotes(name) + "; available: " + join(available));
  }

  // ---- [model] ----

  model_info read_model(const section& root, study_spec& spec) const {
    const section model = child(root, "model");
    if (!model.table)
      fail(position{}, "missing [model]: a study needs at least [model] name = \"...\" (or source = \"...\") and [time] t1");
    check_keys(model);
    const toml::node* name_node = model.get("name");
    const toml::node* source_node = model.get("source");
    if (!name_node && !source_node)
      fail(model.where, "[model] needs name = a built-in model (e.g. name = \"double_pendulum\") or source = a model file "
                        "(e.g. source = \"crane.hpp\")");
    const std::string name = name_node ? string(*name_node, model.what("name")) : std::string();
    // The model a resolver compiles: what the rest of the file asks of it (the method, whether it projects
    // after steps, the tangents), read ahead without checks, and the event functions the study adds.
    const auto reference_for = [&] {
      model_reference reference;
      // A key's choice where it names one, else `otherwise`.
      const auto chosen = [](const section& table, std::string_view key, const auto& choices, auto otherwise) {
        if (const toml::node* node = table.get(key); node != nullptr && node->is_string())
          for (const choice& c : choices)
            if (c.available && c.name == node->as_string()->get()) return static_cast<decltype(otherwise)>(c.value);
        return otherwise;
      };
      const section solver = child(root, "solver");
      solver_options ahead = spec.solver;  // the defaults: [solver] is read later
      ahead.method = chosen(solver, "method", method_choices, ahead.method);
      ahead.form = chosen(solver, "formulation", formulation_choices, ahead.form);
      ahead.projection = chosen(solver, "projection", projection_choices, ahead.projection);
      apply_method_defaults(solver, ahead);
      reference.method = ahead.method;
      reference.projects = projects_after_steps(ahead.projection, ahead.form);
      if (root.get("lyapunov") != nullptr)
        reference.lyapunov = chosen(child(root, "lyapunov"), "method", lyapunov_method_choices, lyapunov_method::qr);
      reference.sensitivities = root.get("derivative_measures") != nullptr;
      if (const toml::node* events = root.get("events"); events != nullptr && events->is_table() &&
                                                           events->as_table()->get("functions") != nullptr) {
        reference.study_events = true;
        reference.study_text = std::string(text_);
        reference.study_name = source_;
      }
      return reference;
    };
    const auto resolve = [&](const model_reference& reference, const toml::node& at, const std::string& what) {
      if (resolve_ == nullptr || !*resolve_)
        fail_at(at, what + (reference.builtin.empty() ? ": model files are compiled by the lockstep command; this reader "
                                                        "knows the built-in models only"
                                                      : ": the event functions a study adds are compiled by the lockstep "
                                                        "command; this reader knows the built-in models' own only"));
      try {
        resolved_model resolved = (*resolve_)(reference);
        spec.model_identity = resolved.identity;
        return resolved.info;
      } catch (const std::exception& e) {
        fail_at(at, what + ": " + e.what());
      }
    };
    model_info info;
    if (source_node) {
      // A model file, relative to the study file; `name` picks one model of a header holding several.
      model_reference reference = reference_for();
      reference.name = name;
      reference.written = string(*source_node, model.what("source"));
      if (reference.written.empty()) fail_at(*source_node, "[model] source is empty: give the path of a model file");
      std::filesystem::path path(reference.written);
      if (path.is_relative()) path = std::filesystem::path(source_).parent_path() / path;
      reference.path = path.lexically_normal();
      info = resolve(reference, *source_node, "[model] source = " + in_quotes(reference.written));
      spec.model_source = std::filesystem::absolute(reference.path).lexically_normal().string();
    } else {
      const model_info* builtin = find_model(name);
      if (!builtin) {
        std::vector<std::string_view> names;
        for (const model_info& m : builtin_model_table) names.push_back(m.name);
        fail_at(*name_node, with_hint("unknown model " + in_quotes(name), name, names, "built-in models") +
                                " (a model of your own: [model] source = \"FILE.hpp\" or \"FILE.toml\")");
      }
      info = *builtin;
      // With the study's event functions the model is compiled as a model file is.
      if (model_reference reference = reference_for(); reference.study_events) {
        reference.builtin = name;
        info = resolve(reference, *name_node, "[model] name = " + in_quotes(name) + " with [events.functions]");
      }
    }
    spec.model = std::string(info.name);
    spec.params = read_overrides(model, "params", info, true);
    spec.initial = read_overrides(model, "initial", info, false);
    return info;
  }

  // The message for a name that is not among a model's parameters or initial inputs.
  static std::string unknown_variable(const model_info& model, bool is_param, std::string_view name,
                                      std::string_view written_as) {
    if (!is_param && model.inputs.empty())
      return "model " + in_quotes(model.name) + " has no initial inputs (its initial state is fixed); remove " +
             in_quotes(written_as);
    const auto names = names_of(is_param ? model.params : model.inputs);
    return with_hint(std::string("unknown ") + (is_param ? "parameter " : "initial input ") + in_quotes(name) +
                         " of model " + in_quotes(model.name),
                     name, names, is_param ? "its parameters" : "its initial inputs");
  }

  std::vector<indexed_value> read_overrides(const section& model, std::string_view key, const model_info& info,
                                            bool is_param) const {
    const section s = child(model, key);
    std::vector<indexed_value> values;
    if (!s.table) return values;
    s.note("*");
    for (const entry& e : in_file_order(*s.table)) {
      const std::string_view name = e.key->str();
      const int index = index_of(is_param ? info.params : info.inputs, name);
      if (index < 0) fail_at(*e.key, unknown_variable(info, is_param, name, name));
      values.push_back({index, number(*e.node, s.what(name))});
    }
    std::sort(values.begin(), values.end(), [](const indexed_value& a, const indexed_value& b) { return a.index < b.index; });
    return values;
  }

  // ---- [solver] ----

  void read_solver(const section& root, solver_options& opt) const {
    const section s = child(root, "solver");
    check_keys(s);

    opt.method = static_cast<method_kind>(choose(s, "method", "method", method_choices, static_cast<int>(opt.method)));
    opt.form = static_cast<formulation>(choose(s, "formulation", "formulation", formulation_choices, static_cast<int>(opt.form)));
    opt.projection = static_cast<projection_kind>(
        choose(s, "projection", "projection", projection_choices, static_cast<int>(opt.projection)));
    apply_method_defaults(s, opt);
    opt.metric = static_cast<projection_metric>(choose(s, "metric", "metric", metric_choices, static_cast<int>(opt.metric)));
    opt.init = static_cast<init_mode>(choose(s, "init", "init mode", init_choices, static_cast<int>(opt.init)));
    opt.multipliers = static_cast<multiplier_convention>(
        choose(s, "multipliers", "multiplier convention", multiplier_choices, static_cast<int>(opt.multipliers)));

    // Baumgarte's gains stabilize formulation index1 (method/options.hpp); with any other formulation
    // they would be silently meaningless, so non-zero gains are refused there. alpha = beta = 0 is no
    // stabilization at all and is accepted with any formulation (sample studies write it).
    // Negative gains would make the constraint drift grow instead of decay (Baumgarte 1972).
    if (s.get("baumgarte")) {
      const section b = child(s, "baumgarte");
      check_keys(b);
      const double alpha = bounded_number(b, "alpha", 0.0, true).value_or(0.0);
      const double beta = bounded_number(b, "beta", 0.0, true).value_or(0.0);
      if ((alpha != 0.0 || beta != 0.0) && opt.form != formulation::index1)
        fail(s.key_position("baumgarte"), "[solver] baumgarte applies to formulation \"index1\" only (formulation is " +
                                              in_quotes(formulation_name(opt.form)) + ")");
      opt.baumgarte_alpha = alpha;
      opt.baumgarte_beta = beta;
    }
    // rho_inf tunes method rhoinf (method/rhoinf.hpp); with any other method it would be silently
    // meaningless. In [0, 1]; 1 leaves the constraint modes undamped and is refused on index3.
    if (const toml::node* node = s.get("rho_inf")) {
      const double rho = number(*node, s.what("rho_inf"));
      if (opt.method != method_kind::rhoinf)
        fail(s.key_position("rho_inf"), "[solver] rho_inf applies to method \"rhoinf\" only (method is " +
                                            in_quotes(method_name(opt.method)) + ")");
      if (!(rho >= 0.0 && rho <= 1.0))
        fail_at(*node, "[solver] rho_inf must be between 0 and 1 (got " + format_number(rho) + ")");
      opt.rho_inf = rho;
      if (opt.form == formulation::index3 && rho >= 1.0)
        fail_at(*node, "[solver] rho_inf = " + format_number(rho) + " with formulation \"index3\" is refused: " +
                           rhoinf_check_options(opt));
    }

    if (auto rtol = bounded_number(s, "rtol", 0.0, false)) opt.rtol = *rtol;
    read_atol(s, opt);
    if (auto steps = bounded_integer(s, "max_steps", 1, LLONG_MAX)) opt.max_steps = static_cast<long>(*steps);
    if (auto h = bounded_number(s, "h_initial", 0.0, true)) opt.h_initial = *h;
    if (auto h = bounded_number(s, "h_min", 0.0, true)) opt.h_min = *h;
    if (auto h = bounded_number(s, "h_max", 0.0, false)) opt.h_max = *h;
    if (auto order = bounded_integer(s, "max_order", 1, bdf_max_order)) {
      if (opt.method != method_kind::bdf)
        fail(s.key_position("max_order"), "[solver] max_order applies to method \"bdf\" only (method is " +
                                              in_quotes(method_name(opt.method)) + ")");
      opt.max_order = static_cast<int>(*order);
    }
    if (auto tol = bounded_number(s, "newton_tol", 0.0, false)) opt.newton_tol = *tol;
    if (auto iterations = bounded_integer(s, "newton_max_iterations", 1, INT_MAX))
      opt.newton_max_iterations = static_cast<int>(*iterations);
    // The Radau IIA family runs RADAU5's Newton iteration with its own tolerance and iteration limit
    // (method/radau.hpp): these two keys set the corrector of bdf and rhoinf only.
    if (opt.method != method_kind::bdf && opt.method != method_kind::rhoinf)
      for (const char* key : {"newton_tol", "newton_max_iterations"})
        if (s.get(key))
          fail(s.key_position(key), std::string("[solver] ") + key + " applies to methods \"bdf\" and \"rhoinf\" only " +
                                        "(method is \"" + method_name(opt.method) + "\", " +
                                        (is_explicit_pair(opt.method)
                                             ? "an explicit method without a Newton iteration"
                                         : opt.method == method_kind::automatic
                                             ? "whose implicit phases take RADAU5's Newton tolerance and limit"
                                             : "whose Newton iteration takes RADAU5's tolerance and limit") +
                                        "); remove it");
    if (const toml::node* node = s.get("consistent_multipliers"))
      opt.consistent_multipliers = boolean(*node, s.what("consistent_multipliers"));
    if (auto tol = bounded_number(s, "init_tolerance", 0.0, false)) opt.init_tolerance = *tol;
    // A key without effect is refused, never ignored: init_tolerance bounds strict initialization only.
    if (s.get("init_tolerance") && opt.init != init_mode::strict)
      fail(s.key_position("init_tolerance"),
           "[solver] init_tolerance applies to init = \"strict\" only (init is " + in_quotes(init_mode_name(opt.init)) +
               (opt.init == init_mode::project ? ", which corrects any violation"
                                               : ", which refuses a gross violation and measures the others against "
                                                 "rtol and atol") +
               "); remove it or set init = \"strict\"");
    if (auto h = bounded_number(s, "fixed_h", 0.0, false)) opt.fixed_h = *h;
    // With fixed steps there is no step-size control for these to bound.
    if (opt.fixed_h > 0.0)
      for (const char* key : {"h_initial", "h_min", "h_max"})
        if (s.get(key))
          fail(s.key_position(key), std::string("[solver] ") + key + " has no effect with fixed_h (every step is " +
                                        "fixed_h long); remove one of the two");
    if (auto order = bounded_integer(s, "fixed_order", 1, bdf_max_order)) {
      if (opt.method != method_kind::bdf)
        fail(s.key_position("fixed_order"), "[solver] fixed_order applies to method \"bdf\" only (method is " +
                                                in_quotes(method_name(opt.method)) + ")");
      if (!s.get("fixed_h")) fail(s.key_position("fixed_order"), "[solver] fixed_order needs fixed_h (the fixed step size)");
      opt.fixed_order = static_cast<int>(*order);
    }

    if (s.get("h_min") && opt.h_min > opt.h_max)
      fail_at(*s.get("h_min"), "[solver] h_min must be <= h_max (got h_min = " + format_number(opt.h_min) +
                                   ", h_max = " + format_number(opt.h_max) + ")");
    if (s.get("h_initial") && opt.h_initial > opt.h_max)
      fail_at(*s.get("h_initial"), "[solver] h_initial must be <= h_max (got h_initial = " +
                                       format_number(opt.h_initial) + ", h_max = " + format_number(opt.h_max) + ")");

    // What the method itself refuses (method/methods.hpp), reported where the method is chosen.
    const std::string refusal = check_method_options(opt);
    if (!refusal.empty()) {
      const position where = s.get("method") ? position_of(s.get("method")->source())
                             : s.get("formulation") ? position_of(s.get("formulation")->source())
                                                    : s.where;
      fail(where, "[solver] method " + in_quotes(method_name(opt.method)) + " with formulation " +
                      in_quotes(formulation_name(opt.form)) + " is refused: " + refusal);
    }
  }

  // Fixed steps end at t_k = t0 + k h and must reach t1 in whole steps: a shortened last step is a change
  // of step size, which on index 3 costs the multipliers an O(1) error (method/step_control.hpp,
  // fixed_step_count). Refused with the nearest fixed_h that divides the interval.
  void check_fixed_steps(const section& root, const study_spec& spec) const {
    const double h = spec.solver.fixed_h;
    if (!(h > 0.0) || fixed_step_count(spec.t0, spec.t1, h) >= 0) return;
    const double nearest = nearest_fixed_step(spec.t0, spec.t1, h);
    const section s = child(root, "solver");
    fail_at(*s.get("fixed_h"), "[solver] fixed_h = " + format_number(h) + " does not divide [t0, t1] = [" +
                                   format_number(spec.t0) + ", " + format_number(spec.t1) +
                                   "] into whole steps ((t1 - t0) / fixed_h = " + format_number((spec.t1 - spec.t0) / h) +
                                   "); the nearest fixed_h that does is " + format_number(nearest) + " (" +
                                   format_number(std::round((spec.t1 - spec.t0) / nearest)) + " steps)");
  }

  void read_atol(const section& s, solver_options& opt) const {
    const toml::node* node = s.get("atol");
    if (!node) return;
    if (!node->is_table()) {
      if (!node->is_number())
        fail_at(*node, "[solver] atol must be a number or a table { q = ..., v = ..., lambda = ... } (got " +
                           describe(*node) + ")");
      const double atol = *bounded_number(s, "atol", 0.0, false);
      opt.atol_q = opt.atol_v = opt.atol_lambda = atol;
      return;
    }
    const section groups = child(s, "atol");
    check_keys(groups);
    if (auto x = bounded_number(groups, "q", 0.0, false)) opt.atol_q = *x;
    if (auto x = bounded_number(groups, "v", 0.0, false)) opt.atol_v = *x;
    if (auto x = bounded_number(groups, "lambda", 0.0, false)) opt.atol_lambda = *x;
  }

  // ---- [time] ----

  void read_time(const section& root, study_spec& spec) const {
    const section s = child(root, "time");
    if (!s.table) fail(position{}, "missing [time]: a study needs at least [time] t1 = ... (the end time)");
    check_keys(s);
    if (const toml::node* node = s.get("t0")) spec.t0 = number(*node, s.what("t0"));
    const toml::node* t1_node = s.get("t1");
    if (!t1_node) fail(s.where, "[time] needs t1, the end time");
    spec.t1 = number(*t1_node, s.what("t1"));
    if (!(spec.t1 > spec.t0))
      fail_at(*t1_node, "[time] t1 must be > t0 (got t1 = " + format_number(spec.t1) + ", t0 = " +
                            format_number(spec.t0) + ")");
    const double span = spec.t1 - spec.t0;
    if (!std::isfinite(span)) fail_at(*t1_node, "[time] t1 - t0 is too large to represent");

    const section save = child(s, "save");
    if (!save.table) {
      spec.save_times = every_save_times(spec.t0, spec.t1, span / 100.0);
      return;
    }
    check_keys(save);
    const toml::node* every = save.get("every");
    const toml::node* times = save.get("times");
    if (every && times) {
      const bool every_first = comes_before(save.key_position("every"), save.key_position("times"));
      fail(save.key_position(every_first ? "times" : "every"),
           "[time.save] gives both every and times; give one of them");
    }
    if (!every && !times) fail(save.where, "[time.save] needs every = ... or times = [...]");
    if (every) {
      const double step = *bounded_number(save, "every", 0.0, false);
      if (span / step > static_cast<double>(max_save_times))
        fail_at(*every, "[time.save] every = " + format_number(step) + " gives more than " +
                            std::to_string(max_save_times) + " save times over [t0, t1]");
      spec.save_times = every_save_times(spec.t0, spec.t1, step);
      return;
    }
    const toml::array* list = times->as_array();
    if (!list) fail_at(*times, "[time.save] times must be an array of numbers (got " + describe(*times) + ")");
    if (list->size() > static_cast<std::size_t>(max_save_times))
      fail_at(*times, "[time.save] times lists more than " + std::to_string(max_save_times) + " save times");
    std::vector<double> values;
    for (std::size_t i = 0; i < list->size(); ++i) {
      const toml::node& element = *list->get(i);
      const std::string what = "[time.save] times[" + std::to_string(i) + "]";
      const double t = number(element, what);
      if (t < spec.t0 || t > spec.t1)
        fail_at(element, what + " = " + format_number(t) + " is outside [t0, t1] = [" + format_number(spec.t0) +
                             ", " + format_number(spec.t1) + "]");
      values.push_back(t);
    }
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    spec.save_times = ending_with_t1(std::move(values), spec.t0, spec.t1);
  }

  // t0 + i * every rather than a running sum, so that the 1000th point carries no accumulated rounding.
  static std::vector<double> every_save_times(double t0, double t1, double every) {
    std::vector<double> times;
    for (long i = 0;; ++i) {
      const double t = t0 + static_cast<double>(i) * every;
      if (t >= t1) break;
      times.push_back(t);
    }
    // Far from 0 (t0 = 1e20) a small step can round to the same time twice.
    times.erase(std::unique(times.begin(), times.end()), times.end());
    return ending_with_t1(std::move(times), t0, t1);
  }

  // t1 is always saved, exactly; a point a rounding error short of it would be a duplicate row.
  static std::vector<double> ending_with_t1(std::vector<double> times, double t0, double t1) {
    const double near = 1e-12 * (t1 - t0);
    while (!times.empty() && times.back() >= t1 - near) times.pop_back();
    times.push_back(t1);
    return times;
  }

  // ---- [ensemble] ----

  void read_ensemble(const section& root, const model_info& model, study_spec& spec) const {
    study::sampling_plan& plan = spec.plan;
    const section s = child(root, "ensemble");
    check_keys(s);
    if (auto members = bounded_integer(s, "members", 1, LLONG_MAX)) plan.members = static_cast<long>(*members);
    plan.sampler = static_cast<study::sampler_kind>(
        choose(s, "sampler", "sampler", sampler_choices, static_cast<int>(plan.sampler)));
    if (auto seed = bounded_integer(s, "seed", 0, LLONG_MAX)) plan.seed = static_cast<std::uint64_t>(*seed);
    if (auto replicates = bounded_integer(s, "replicates", 1, INT_MAX)) plan.replicates = static_cast<int>(*replicates);

    const std::vector<position> distribution_positions = read_vary(s, model, plan);

    if (plan.sampler == study::sampler_kind::grid) {
      for (std::size_t i = 0; i < plan.vary.size(); ++i)
        if (plan.vary[i].dist.kind != study::distribution_kind::grid)
          fail(distribution_positions[i], "[ensemble] sampler = \"grid\" needs every [ensemble.vary] entry to be a grid; " +
                                              in_quotes(plan.vary[i].name) + " is " +
                                              std::string(distribution_names[static_cast<int>(plan.vary[i].dist.kind)]));
    }

    // Keys without effect are refused, never ignored. A pure grid has exactly its grid's members, drawn
    // by no generator; a study that varies nothing has members identical copies of one member (useful
    // to measure throughput) and draws nothing either.
    const bool pure_grid = study::is_pure_grid(plan);
    for (const char* key : {"members", "replicates", "seed"})
      if (pure_grid && s.get(key))
        fail(s.key_position(key), std::string("[ensemble] ") + key + " has no effect: every [ensemble.vary] entry " +
                                      "is a grid, so the study has one member per grid point; remove it, or " +
                                      "draw some entry at random");
    for (const char* key : {"seed", "sampler"})
      if (plan.vary.empty() && s.get(key))
        fail(s.key_position(key), std::string("[ensemble] ") + key + " has no effect: [ensemble.vary] varies " +
                                      "nothing, so every member is the same; remove it, or add an [ensemble.vary] entry");

    // G x members x replicates, or G for a pure grid (study/sampling_plan.hpp); members x replicates
    // when nothing is varied (identical members). The count is placed at its largest factor as
    // written: members, replicates or a grid (the run refuses it there too when the members' results
    // would not fit in memory: host/cli/run_study_impl.hpp).
    double total = 1.0, largest = 0.0;
    position count_at = s.where;
    auto factor = [&](double x, position where) {
      total *= x;
      if (x > largest) {
        largest = x;
        count_at = where;
      }
    };
    for (std::size_t i = 0; i < plan.vary.size(); ++i)
      if (plan.vary[i].dist.kind == study::distribution_kind::grid)
        factor(static_cast<double>(plan.vary[i].dist.grid.size()), distribution_positions[i]);
    if (!pure_grid) {
      if (const toml::node* members = s.get("members")) factor(static_cast<double>(plan.members), position_of(members->source()));
      if (const toml::node* replicates = s.get("replicates"))
        factor(static_cast<double>(plan.replicates), position_of(replicates->source()));
    }
    spec.member_count_line = count_at.line;
    spec.member_count_column = count_at.column;
    if (total > max_members)
      fail(count_at, "[ensemble] the study has " + format_number(total) + " members; at most 2^53 are supported");
  }

  struct vary_entry {
    std::string name;  // "params.L2"
    const toml::key* key;
    const toml::node* node;
  };

  // The [ensemble.vary] entries in the order written; returns where each distribution is named.
  std::vector<position> read_vary(const section& ensemble, const model_info& model, study::sampling_plan& plan) const {
    const section vary = child(ensemble, "vary");
    std::vector<position> distribution_positions;
    if (!vary.table) return distribution_positions;

    std::vector<std::string> valid_names;  // every "params.X" and "initial.X", for hints
    for (const named_value& p : model.params) valid_names.push_back(std::string("params.") + p.name);
    for (const named_value& p : model.inputs) valid_names.push_back(std::string("initial.") + p.name);
    const std::vector<std::string_view> valid_views(valid_names.begin(), valid_names.end());

    // Quoted keys ("params.L2" = ...) arrive whole; dotted keys (params.L2 = ...) arrive as the table
    // `params` holding L2. Both mean the same.
    std::vector<vary_entry> entries;
    vary.note("*");
    for (const entry& e : in_file_order(*vary.table)) {
      const std::string_view key = e.key->str();
      const toml::table* group = e.node->as_table();
      if ((key == "params" || key == "initial") && group) {
        for (auto&& [inner_key, inner_node] : *group) {
          if (std::find(std::begin(distribution_names), std::end(distribution_names), inner_key.str()) !=
              std::end(distribution_names))
            fail_at(*e.key, "[ensemble.vary] " + in_quotes(key) + " needs the name of a " +
                                (key == "params" ? "parameter" : "initial input") + ": \"" + std::string(key) +
                                ".NAME\" = { ... }");
          entries.push_back({std::string(key) + "." + std::string(inner_key.str()), &inner_key, &inner_node});
        }
        continue;
      }
      entries.push_back({std::string(key), e.key, e.node});
    }
    std::stable_sort(entries.begin(), entries.end(), [](const vary_entry& a, const vary_entry& b) {
      return comes_before(position_of(a.key->source()), position_of(b.key->source()));
    });

    for (const vary_entry& e : entries) {
      const std::size_t dot = e.name.find('.');
      const std::string prefix = dot == std::string::npos ? "" : e.name.substr(0, dot);
      const std::string variable = dot == std::string::npos ? e.name : e.name.substr(dot + 1);
      if (prefix != "params" && prefix != "initial") {
        // "theta1" alone: suggest the full name it most likely means.
        const std::string suggestion =
            closest_name(dot == std::string::npos ? "initial." + e.name : e.name, valid_views);
        const std::string alone = closest_name(dot == std::string::npos ? "params." + e.name : e.name, valid_views);
        const std::string best = !suggestion.empty() ? suggestion : alone;
        fail_at(*e.key, "[ensemble.vary] " + in_quotes(e.name) + " must be \"params.NAME\" or \"initial.NAME\"" +
                            (best.empty() ? "" : "; did you mean " + in_quotes(best) + "?"));
      }
      study::varied_input input;
      input.name = e.name;
      input.is_param = prefix == "params";
      input.index = index_of(input.is_param ? model.params : model.inputs, variable);
      if (input.index < 0)
        fail_at(*e.key, "[ensemble.vary] " + unknown_variable(model, input.is_param, variable, e.name));
      for (const study::varied_input& earlier : plan.vary)
        if (earlier.is_param == input.is_param && earlier.index == input.index)
          fail_at(*e.key, "[ensemble.vary] " + in_quotes(e.name) + " is varied twice");
      input.dist = read_distribution(e.name, *e.node, distribution_positions);
      plan.vary.push_back(std::move(input));
    }
    return distribution_positions;
  }

  // One [ensemble.vary] entry's distribution; `positions` gets where its kind is named.
  study::distribution read_distribution(const std::string& variable, const toml::node& node,
                                        std::vector<position>& positions) const {
    const std::string label = "[ensemble.vary] " + in_quotes(variable);
    if (!node.as_table())
      fail_at(node, label + " must be a table such as { uniform = [lower, upper] } (got " + describe(node) + ")");
    const section s{node.as_table(), "ensemble.vary." + key_in_path(variable), position_of(node.source()),
                    "ensemble.vary.*", lookups_};
    check_keys(s);
    const std::vector<entry> given = in_file_order(*s.table);
    if (given.empty()) fail_at(node, label + " needs one of uniform, normal, lognormal or grid");
    if (given.size() > 1)
      fail_at(*given[1].key, label + " gives both " + std::string(given[0].key->str()) + " and " +
                                 std::string(given[1].key->str()) + "; give exactly one distribution");
    const std::string_view kind = given[0].key->str();
    const toml::node& value = *given[0].node;
    positions.push_back(position_of(given[0].key->source()));

    study::distribution dist;
    if (kind == "uniform") {
      s.note("uniform");
      dist.kind = study::distribution_kind::uniform;
      const toml::array* bounds = value.as_array();
      if (!bounds || bounds->size() != 2)
        fail_at(value, label + " uniform must be [lower, upper] (got " +
                           (bounds ? std::to_string(bounds->size()) + " values" : describe(value)) + ")");
      dist.a = number(*bounds->get(0), label + " uniform lower bound");
      dist.b = number(*bounds->get(1), label + " uniform upper bound");
      if (dist.a > dist.b)
        fail_at(value, label + " uniform lower bound " + format_number(dist.a) + " is above the upper bound " +
                           format_number(dist.b));
    } else if (kind == "normal" || kind == "lognormal") {
      const bool normal = kind == "normal";
      s.note(normal ? "normal" : "lognormal");
      dist.kind = normal ? study::distribution_kind::normal : study::distribution_kind::lognormal;
      const std::string_view centre = normal ? "mean" : "mu";
      const std::string_view spread = normal ? "std" : "sigma";
      const section parameters = child(s, kind);
      check_keys(parameters);
      for (std::string_view required : {centre, spread})
        if (!parameters.get(required))
          fail_at(value, label + " " + std::string(kind) + " needs " + std::string(centre) + " and " +
                             std::string(spread) + " (" + std::string(required) + " is missing)");
      dist.a = number(*parameters.get(centre), parameters.what(centre));
      dist.b = *bounded_number(parameters, spread, 0.0, true);
    } else {
      s.note("grid");
      dist.kind = study::distribution_kind::grid;
      const toml::array* points = value.as_array();
      if (!points) fail_at(value, label + " grid must be an array of numbers (got " + describe(value) + ")");
      if (points->empty()) fail_at(value, label + " grid is empty; list at least one value");
      for (std::size_t i = 0; i < points->size(); ++i)
        dist.grid.push_back(number(*points->get(i), label + " grid[" + std::to_string(i) + "]"));
    }
    return dist;
  }

  // ---- [output] ----

  // [output] exceedance = { OUTPUT = threshold, ... }, in the order written; the outputs are named
  // as the model names its coordinates, which the run resolves (run_study_impl.hpp).
  void read_exceedance(const section& output_section, output_spec& output) const {
    const section s = child(output_section, "exceedance");
    if (!s.table) return;
    s.note("*");
    for (const entry& e : in_file_order(*s.table)) {
      const std::string name(e.key->str());
      const double threshold = number(*e.node, "[output.exceedance] " + in_quotes(name));
      const position at = position_of(e.key->source());
      output.exceedance.push_back({name, threshold, at.line, at.column});
    }
  }

  void read_output(const section& root, output_spec& output) const {
    const section s = child(root, "output");
    check_keys(s);
    if (const toml::node* node = s.get("trajectories")) output.trajectories = boolean(*node, s.what("trajectories"));
    if (auto mb = bounded_integer(s, "quantile_memory_mb", 1, LONG_MAX)) output.quantile_memory_mb = static_cast<long>(*mb);
    read_exceedance(s, output);
    const toml::node* node = s.get("statistics");
    if (!node) return;  // the default statistics include quantiles
    const toml::array* list = node->as_array();
    if (!list) fail_at(*node, "[output] statistics must be an array of names (got " + describe(*node) + ")");
    output.statistics.clear();
    output.quantiles.clear();
    std::vector<double> percents;  // of the quantiles so far, to catch "q5" next to "q05"
    for (std::size_t i = 0; i < list->size(); ++i) {
      const toml::node& element = *list->get(i);
      const std::string name = string(element, "[output] statistics[" + std::to_string(i) + "]");
      for (const std::string& earlier : output.statistics)
        if (earlier == name) fail_at(element, "[output] statistic " + in_quotes(name) + " is listed twice");
      if (const std::optional<double> percent = quantile_percent(name)) {
        if (*percent > 100.0)
          fail_at(element, "[output] quantile " + in_quotes(name) + " is out of range: qNN asks for the NN percent "
                                                                 "quantile, NN between 0 and 100");
        if (std::find(percents.begin(), percents.end(), *percent) != percents.end())
          fail_at(element, "[output] quantile " + in_quotes(name) + " is listed twice (as another spelling)");
        percents.push_back(*percent);
        output.quantiles.push_back(*percent / 100.0);
      } else if (std::find(std::begin(plain_statistics), std::end(plain_statistics), name) == std::end(plain_statistics)) {
        const std::string message = "[output] unknown statistic " + in_quotes(name);
        if (name == "median") fail_at(element, message + "; write \"q50\" for the median");
        const std::string suggestion = closest_name(name, plain_statistics);
        fail_at(element, message + (suggestion.empty() ? "; available: mean, std, min, max, qNN (the NN percent "
                                                         "quantile: q05, q50, q97.5, ...)"
                                                       : "; did you mean " + in_quotes(suggestion) + "?"));
      }
      output.statistics.push_back(name);
    }
    // A key without effect is refused, never ignored: the budget is the quantile estimators'.
    if (s.get("quantile_memory_mb") && output.quantiles.empty())
      fail(s.key_position("quantile_memory_mb"),
           "[output] quantile_memory_mb has no effect: the study asks for no quantile (qNN) statistic");
  }

  // ---- [lyapunov] ----

  void read_lyapunov(const section& root, const model_info& model, study_spec& spec) const {
    const section s = child(root, "lyapunov");
    if (!s.table) return;
    check_keys(s);
    lyapunov_spec& l = spec.lyapunov;
    l.enabled = true;
    l.line = s.where.line;
    l.column = s.where.column;
    l.dimension = 2 * (model.n - model.m) - model.k;
    const std::string d = std::to_string(l.dimension);
    l.method = static_cast<lyapunov_method>(
        choose(s, "method", "Lyapunov method", lyapunov_method_choices, static_cast<int>(l.method)));
    l.metric = static_cast<lyapunov_metric>(choose(s, "metric", "metric", lyapunov_metric_choices, static_cast<int>(l.metric)));
    const bool clone = l.method == lyapunov_method::clone;

    // exponents: an integer p in [1, d], or "all".
    l.exponents = clone ? 1 : l.dimension;
    if (const toml::node* node = s.get("exponents")) {
      const std::string range = "an integer between 1 and " + d + " (the dimension 2 (n - m) - k of model " +
                                in_quotes(model.name) + "'s state manifold) or \"all\"";
      if (const auto* text = node->as_string()) {
        if (text->get() != "all") fail_at(*node, "[lyapunov] exponents must be " + range + " (got " + describe(*node) + ")");
        l.exponents = l.dimension;
      } else if (node->is_number()) {
        const long long p = integer(*node, s.what("exponents"));
        if (p < 1 || p > l.dimension)
          fail_at(*node, "[lyapunov] exponents must be " + range + " (got " + std::to_string(p) + ")");
        l.exponents = static_cast<int>(p);
      } else {
        fail_at(*node, "[lyapunov] exponents must be " + range + " (got " + describe(*node) + ")");
      }
      if (clone && l.exponents != 1)
        fail_at(*node, "[lyapunov] method = \"clone\" estimates the largest exponent only: exponents must be 1 (got " +
                           std::to_string(l.exponents) + "); use method = \"qr\" for more");
    }

    if (auto r = bounded_number(s, "renormalize", 0.0, false)) l.renormalize = *r;
    const double span = spec.t1 - spec.t0;
    // Like save times: more re-orthonormalizations than this is a mistake (the history is stored for
    // every member, padded to the longest possible; and a renormalize below the rounding of t would
    // never advance the drivers' next re-orthonormalization time).
    if (span / l.renormalize > static_cast<double>(max_save_times))
      fail(s.key_position("renormalize"), "[lyapunov] renormalize = " + format_number(l.renormalize) + " gives more than " +
                                              std::to_string(max_save_times) + " re-orthonormalizations over [t0, t1]");
    if (auto transient = bounded_number(s, "transient", 0.0, true)) {
      l.transient = *transient;
      if (!(l.transient < span))
        fail_at(*s.get("transient"), "[lyapunov] transient must be < t1 - t0 = " + format_number(span) + " (got " +
                                         format_number(l.transient) + ")");
      // The averages start at the first re-orthonormalization at or after t0 + transient, whose own
      // logarithms are discarded (lyapunov/spectrum.hpp): one must come after it for an estimate.
      const double first = std::max(1.0, std::ceil(l.transient / l.renormalize)) * l.renormalize;
      if (l.transient > 0.0 && !(first < span))
        fail_at(*s.get("transient"), "[lyapunov] transient = " + format_number(l.transient) + " leaves no re-orthonormalization " +
                                         "to average over: the first at or after it (t0 + " + format_number(first) +
                                         ") is not before t1; shorten transient or renormalize");
    }
    if (s.get("separation")) {
      if (!clone)
        fail(s.key_position("separation"), "[lyapunov] separation applies to method \"clone\" only (method is \"qr\")");
      l.separation = *bounded_number(s, "separation", 0.0, false);
    }
    if (const toml::node* node = s.get("history")) l.history = boolean(*node, s.what("history"));

    // What the tangents refuse (lyapunov/tangent.hpp), reported at [lyapunov] method, or at the
    // section when the method is the default.
    if (!clone) {
      const char* why = tangent_check_options(spec.solver);
      if (why[0] != '\0')
        fail(s.get("method") ? position_of(s.get("method")->source()) : s.where,
             "[lyapunov] method = \"qr\" propagates tangents, which [solver] method " +
                 in_quotes(method_name(spec.solver.method)) + " with formulation " +
                 in_quotes(formulation_name(spec.solver.form)) + " and projection " +
                 in_quotes(projection_name(spec.solver.projection)) + " cannot: " + why +
                 "; method = \"clone\" works with any solver");
    }
  }

  // ---- [sensitivity] ----
  // Saltelli's design replaces [ensemble]'s members and sampler: the plan's members are base x slots
  // (study/samplers.hpp, sampler saltelli), its replicates and seed as [ensemble] gives them.

  void read_sensitivity(const section& root, study_spec& spec) const {
    const section s = child(root, "sensitivity");
    if (!s.table) return;
    check_keys(s);
    sensitivity_spec& x = spec.sensitivity;
    study::sampling_plan& plan = spec.plan;
    x.enabled = true;
    x.line = s.where.line;
    x.column = s.where.column;
    const section ensemble = child(root, "ensemble");
    for (const char* key : {"members", "sampler"})
      if (ensemble.table && ensemble.get(key))
        fail(ensemble.key_position(key), std::string("[ensemble] ") + key + " has no effect with [sensitivity]: " +
                                             "Saltelli's design has base x (k + 2) members per replicate (base x (2k + 2) " +
                                             "with second_order), for the k varied inputs; remove it");
    const int drawn = study::drawn_dimension_count(plan);
    if (drawn == 0)
      fail(s.where, "[sensitivity] needs varied inputs: [ensemble.vary] varies nothing, so no input can cause any spread");
    for (const study::varied_input& v : plan.vary)
      if (v.dist.kind == study::distribution_kind::grid)
        fail(s.where, "[sensitivity] apportions the variance among drawn inputs; " + in_quotes(v.name) +
                          " is a grid, which no index can be of: draw it (uniform over its range) or fix it");
    const toml::node* base = s.get("base");
    if (!base) fail(s.where, "[sensitivity] needs base, the rows N of Saltelli's design (a power of two, such as 1024)");
    const long long n = integer(*base, s.what("base"));
    if (n < 2 || (n & (n - 1)) != 0 || n > (1LL << study::sobol_bits))
      fail_at(*base, "[sensitivity] base must be a power of two between 2 and 2^52: Saltelli's design takes the first N "
                     "points of a Sobol' sequence, whose equidistribution holds at powers of two (got " +
                         std::to_string(n) + ")");
    x.base = static_cast<long>(n);
    if (const toml::node* node = s.get("second_order")) x.second_order = boolean(*node, s.what("second_order"));
    if (const toml::node* node = s.get("confidence")) {
      x.confidence = number(*node, s.what("confidence"));
      if (!(x.confidence > 0.0 && x.confidence < 1.0))
        fail_at(*node, "[sensitivity] confidence must be in (0, 1) (got " + format_number(x.confidence) + ")");
    }
    if (auto r = bounded_integer(s, "resamples", 2, INT_MAX)) {
      if (plan.replicates >= sensitivity_replicates_for_intervals)
        fail(s.key_position("resamples"), "[sensitivity] resamples has no effect: with " + std::to_string(plan.replicates) +
                                              " replicates (10 or more) the intervals come from their spread, not "
                                              "from the bootstrap; remove it");
      x.resamples = static_cast<int>(*r);
    }
    if (const toml::node* node = s.get("max_failed")) {
      x.max_failed = number(*node, s.what("max_failed"));
      if (!(x.max_failed >= 0.0 && x.max_failed < 1.0))
        fail_at(*node, "[sensitivity] max_failed must be in [0, 1) (got " + format_number(x.max_failed) + ")");
    }
    if (auto mb = bounded_integer(s, "memory_mb", 1, LLONG_MAX >> 20)) x.memory_mb = static_cast<long>(*mb);

    plan.sampler = study::sampler_kind::saltelli;
    plan.second_order = x.second_order;
    const int slots = study::saltelli_design{drawn, x.second_order}.slots();
    const double total = static_cast<double>(n) * slots * plan.replicates;
    if (total > max_members)
      fail_at(*base, "[sensitivity] base = " + std::to_string(n) + " gives " + format_number(total) +
                         " members (base x " + std::to_string(slots) + " x replicates); at most 2^53 are supported");
    plan.members = static_cast<long>(n) * slots;
    spec.member_count_line = position_of(base->source()).line;
    spec.member_count_column = position_of(base->source()).column;
  }

  // ---- [derivative_measures] ----
  // One forward-sensitivity solve per member of the plan as [ensemble] gives it: the measures average
  // over independent points of the inputs' distribution, which Saltelli's design's rows are not.

  // [events]: the records kept per member, the location's time tolerance and interior checks; refused
  // for a model without event functions, where it could change nothing.
  void read_events(const section& root, const model_info& model, study_spec& spec) const {
    const section s = child(root, "events");
    if (!s.table) return;
    check_keys(s);
    if (model.n_events == 0)
      fail(s.where, "[events] has no effect: model " + in_quotes(model.name) +
                        " declares no event functions (docs/how-to/events.md says how a model declares them); remove it");
    spec.events.written = true;
    read_added_events(s);
    if (auto r = bounded_integer(s, "records", 0, 1000000)) spec.events.records = static_cast<int>(*r);
    if (auto t = bounded_number(s, "time_tolerance", 0.0, true)) spec.solver.event_time_tolerance = *t;
    if (auto c = bounded_integer(s, "interior_checks", 0, 1000)) spec.solver.event_interior_checks = static_cast<int>(*c);
    if (const toml::node* node = s.get("quantiles")) {
      const toml::array* list = node->as_array();
      if (!list || list->empty())
        fail_at(*node, "[events] quantiles must be a non-empty array of probabilities in (0, 1) (got " + describe(*node) + ")");
      spec.events.quantiles.clear();
      for (std::size_t i = 0; i < list->size(); ++i) {
        const toml::node& element = *list->get(i);
        const double p = number(element, "[events] quantiles[" + std::to_string(i) + "]");
        if (!(p > 0.0 && p < 1.0))
          fail_at(element, "[events] quantiles[" + std::to_string(i) + "] must be in (0, 1) (got " + format_number(p) + ")");
        if (!spec.events.quantiles.empty() && !(p > spec.events.quantiles.back()))
          fail_at(element, "[events] quantiles must increase (" + format_number(p) + " after " +
                               format_number(spec.events.quantiles.back()) + ")");
        spec.events.quantiles.push_back(p);
      }
    }
  }

  // [events.functions]: the event functions the study adds to its model, which the model the study runs
  // has after its own. The equations generator checked them when the model was compiled with them
  // (read_model's resolver: equations/study_events.py, which reads this table and each entry's
  // expression); here each entry is read as the key table has it.
  void read_added_events(const section& events) const {
    const section s = child(events, "functions");
    if (!s.table) return;
    s.note("*");
    for (const entry& e : in_file_order(*s.table)) {
      const std::string name(e.key->str());
      if (!e.node->as_table())
        fail_at(*e.node, "[events.functions] " + name + " must be an inline table such as { g = \"...\", direction = "
                         "\"rising\", action = \"stop\" } (got " + describe(*e.node) + ")");
      const section one{e.node->as_table(), "events.functions." + key_in_path(name), position_of(e.node->source()),
                        "events.functions.*", lookups_};
      check_keys(one);
      for (const std::string_view key : {"g", "direction", "action", "description"})
        if (const toml::node* value = one.get(key); value != nullptr) (void)string(*value, one.what(key));
    }
  }

  void read_derivative_measures(const section& root, study_spec& spec) const {
    const section s = child(root, "derivative_measures");
    if (!s.table) return;
    check_keys(s);
    derivative_measures_spec& x = spec.derivative_measures;
    x.enabled = true;
    x.line = s.where.line;
    x.column = s.where.column;
    if (spec.sensitivity.enabled)
      fail(s.where, "[derivative_measures] averages over independent points of the inputs, which the rows of "
                    "[sensitivity]'s design are not: run them as two studies");
    for (const study::varied_input& v : spec.plan.vary)
      if (v.dist.kind == study::distribution_kind::grid)
        fail(s.where, "[derivative_measures] averages derivatives over the inputs' distribution; " + in_quotes(v.name) +
                          " is a grid, which has none: draw it (uniform over its range) or fix it");
    if (study::drawn_dimension_count(spec.plan) == 0)
      fail(s.where, "[derivative_measures] needs varied inputs: [ensemble.vary] varies nothing, so there is nothing to "
                    "differentiate by");
    if (const toml::node* node = s.get("max_failed")) {
      x.max_failed = number(*node, s.what("max_failed"));
      if (!(x.max_failed >= 0.0 && x.max_failed < 1.0))
        fail_at(*node, "[derivative_measures] max_failed must be in [0, 1) (got " + format_number(x.max_failed) + ")");
    }
    if (auto mb = bounded_integer(s, "memory_mb", 1, LLONG_MAX >> 20)) x.memory_mb = static_cast<long>(*mb);
    // What the tangents refuse (lyapunov/tangent.hpp), reported at the section.
    if (const char* why = tangent_check_options(spec.solver); why[0] != '\0')
      fail(s.where, "[derivative_measures] takes the forward sensitivities of [solver] method " +
                        in_quotes(method_name(spec.solver.method)) + " with formulation " +
                        in_quotes(formulation_name(spec.solver.form)) + " and projection " +
                        in_quotes(projection_name(spec.solver.projection)) + ", which cannot give them: " + why);
  }

  // "q05" -> 5, "q97.5" -> 97.5; nullopt unless the name is 'q', digits, and optionally '.' and digits.
  static std::optional<double> quantile_percent(std::string_view name) {
    if (name.size() < 2 || name[0] != 'q') return std::nullopt;
    const std::string_view number = name.substr(1);
    const std::size_t dot = number.find('.');
    auto all_digits = [](std::string_view digits) {
      return !digits.empty() && std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    if (!all_digits(number.substr(0, dot))) return std::nullopt;
    if (dot != std::string_view::npos && !all_digits(number.substr(dot + 1))) return std::nullopt;
    double percent = 0.0;
    const auto result = std::from_chars(number.data(), number.data() + number.size(), percent);
    if (result.ec != std::errc() || result.ptr != number.data() + number.size()) return std::nullopt;
    return percent;
  }

  std::string source_;
  std::string_view text_;  // the file's text while read() runs: a resolver of study events reads it
  const model_file_resolver* resolve_;
  study_key_lookups* lookups_;
};

}  // namespace

long lyapunov_history_length(const lyapunov_spec& l, double t0, double t1) {
  if (!l.enabled || !l.history) return 0;
  return static_cast<long>(std::floor((t1 - t0) / l.renormalize)) + 2;
}

study_spec parse_study(std::string_view text, std::string_view source_name, const model_file_resolver& resolve,
                       study_key_lookups* lookups) {
  refuse_unsafe_toml(text, source_name);  // toml++ 3.3 has undefined behaviour on some text (toml_guard.hpp)
  study_spec spec = study_reader(std::string(source_name), &resolve, lookups).read(text);
  spec.path = std::filesystem::path(source_name);
  spec.name = spec.path.stem().string();
  spec.text = std::string(text);
  return spec;
}

study_spec load_study_file(const std::filesystem::path& path, const model_file_resolver& resolve) {
  const std::string source = path.string();
  std::error_code ignored;
  // fopen succeeds on a directory under Linux; reading it fails later with a less direct message.
  if (std::filesystem::is_directory(path, ignored))
    throw study_error(source, 0, 0, std::string("cannot open: ") + std::strerror(EISDIR));
  errno = 0;
  const std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(source.c_str(), "rb"), &std::fclose);
  if (!file) throw study_error(source, 0, 0, std::string("cannot open: ") + std::strerror(errno));
  std::string text;
  char buffer[1 << 16];
  std::size_t got = 0;
  while ((got = std::fread(buffer, 1, sizeof buffer, file.get())) > 0) text.append(buffer, got);
  if (std::ferror(file.get())) throw study_error(source, 0, 0, std::string("cannot read: ") + std::strerror(errno));
  study_spec spec = parse_study(text, source, resolve);
  spec.path = path;
  return spec;
}

model_info model_info_of(const engine& model) {
  // The engine's tables live as long as the program (engines are never unloaded); their copies as
  // named_value arrays are kept as long, one per engine table.
  static std::mutex mutex;
  static std::map<const lockstep_engine*, std::pair<std::vector<named_value>, std::vector<named_value>>> tables;
  const std::lock_guard<std::mutex> lock(mutex);
  auto [it, inserted] = tables.try_emplace(&model.table());
  if (inserted) {
    for (const lockstep_value_info& v : model.params()) it->second.first.push_back({v.name, v.default_value, v.description});
    for (const lockstep_value_info& v : model.inputs()) it->second.second.push_back({v.name, v.default_value, v.description});
  }
  return {model.name(), model.description(), model.n(), model.m(), model.k(), it->second.first, it->second.second,
          model.n_events()};
}

}  // namespace lockstep::io
