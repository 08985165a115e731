// host/io/members_csv.cpp — members.csv (members_csv.hpp).
#include "host/io/members_csv.hpp"

#include <algorithm>
#include <charconv>
#include <cctype>
#include <cmath>
#include <stdexcept>
#include <string>
#include <string_view>

namespace lockstep::io {

namespace {

void append_field(std::string& out, std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) {
    out += text;
    return;
  }
  out += '"';
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

void append_number(std::string& out, double x) {
  // to_chars' "nan" carries no sign and may print "-nan"; one spelling keeps the file greppable.
  if (std::isnan(x)) {
    out += "nan";
    return;
  }
  char buffer[32];
  const auto r = std::to_chars(buffer, buffer + sizeof buffer, x);
  out.append(buffer, r.ptr);
}

void append_integer(std::string& out, long x) {
  char buffer[24];
  const auto r = std::to_chars(buffer, buffer + sizeof buffer, x);
  out.append(buffer, r.ptr);
}

// "<prefix><digits>", e.g. q12 or lambda_3 (prefix "lambda_").
bool is_indexed(std::string_view name, std::string_view prefix) {
  if (!name.starts_with(prefix) || name.size() == prefix.size()) return false;
  return std::all_of(name.begin() + static_cast<std::ptrdiff_t>(prefix.size()), name.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
}

// A name another column of members.csv or a dataset of /members has (coordinate_columns).
bool names_another_column(std::string_view name, const results_layout& layout) {
  for (std::string_view other : {"member", "status", "final_q", "final_v", "inputs", "lyapunov_status",
                                 "lyapunov_t_start", "lyapunov_t_end"})
    if (name == other) return true;
  for (std::string_view other : member_integer_datasets)
    if (name == other) return true;
  for (std::string_view other : member_real_datasets)
    if (name == other) return true;
  for (std::string_view other : member_explicit_datasets)  // reserved whatever the method: one rule per model
    if (name == other) return true;
  for (const auto& event : layout.events.functions)  // the model's own events' columns
    if (name == "first_" + event.name) return true;
  return is_indexed(name, "lambda_") ||
         std::find(layout.varied_names.begin(), layout.varied_names.end(), name) != layout.varied_names.end();
}

}  // namespace

std::vector<std::string> coordinate_columns(const results_layout& layout) {
  const auto& names = layout.coordinate_names;
  std::vector<std::string> columns;
  for (int j = 0; j < layout.n; ++j) {
    std::string index = "q";
    index += std::to_string(j);  // not "q" + to_string(j): GCC 12 warns of an overlap there (-Wrestrict)
    const std::string name = static_cast<std::size_t>(j) < names.size() ? names[static_cast<std::size_t>(j)] : "";
    const bool alias = name != index && (is_indexed(name, "q") || is_indexed(name, "v") || is_indexed(name, "lambda") ||
                                         is_indexed(name, "mu") || is_indexed(name, "nu"));
    const bool usable = !name.empty() && name.find_first_of(",.\"' \t\r\n") == std::string::npos && !alias &&
                        std::count(names.begin(), names.end(), name) == 1 && !names_another_column(name, layout);
    columns.push_back(usable ? name : std::move(index));
  }
  return columns;
}

members_csv_writer::members_csv_writer(std::filesystem::path final_path, const results_layout& layout)
    : layout_(layout), file_(std::move(final_path), "members file") {
  std::string header = "member";
  for (const auto& name : layout_.varied_names) {
    header += ',';
    append_field(header, name);
  }
  header += ",status,steps,final_t";
  for (const std::string& column : coordinate_columns(layout_)) {
    header += ',';
    append_field(header, column);
  }
  if (layout_.lyapunov.exponents > 0) {
    header += ",lyapunov_status";
    for (int j = 1; j <= layout_.lyapunov.exponents; ++j) header += ",lambda_" + std::to_string(j);
    header += ",lyapunov_t_start,lyapunov_t_end";  // the estimate averages over [t_start, t_end]
  }
  for (const auto& event : layout_.events.functions) {  // each event's first time (empty: never)
    header += ',';
    append_field(header, "first_" + event.name);
  }
  header += '\n';
  file_.write(header);
}

members_csv_writer::~members_csv_writer() = default;

void members_csv_writer::write_members(const member_block& b) {
  if (file_.committed()) throw std::logic_error("members_csv_writer: " + final_path().string() + " is already committed");
  if (b.count < 0 || b.first != next_ || b.first > layout_.members - b.count)
    throw std::logic_error("members_csv_writer: members must arrive in order: expected member " + std::to_string(next_) + ", got [" +
                           std::to_string(b.first) + ", " + std::to_string(b.first + b.count) + ") of " + std::to_string(layout_.members));
  if (b.count == 0) return;
  if (b.status == nullptr || b.counters == nullptr || b.final_t == nullptr || b.y_final == nullptr ||
      (b.inputs == nullptr && !layout_.varied_names.empty()))
    throw std::invalid_argument("members_csv_writer::write_members: status, counters, final_t, y_final and inputs are required");
  const int p = layout_.lyapunov.exponents;
  if (p > 0 && (b.lyapunov == nullptr || b.lyapunov->status == nullptr || b.lyapunov->exponents == nullptr))
    throw std::invalid_argument("members_csv_writer::write_members: the Lyapunov results are required");
  if (!layout_.events.functions.empty() && b.event_first_times == nullptr)
    throw std::invalid_argument("members_csv_writer::write_members: the events' first times are required");

  const std::size_t V = layout_.varied_names.size(), Y = static_cast<std::size_t>(layout_.state_size());
  std::string rows;
  for (long r = 0; r < b.count; ++r) {
    const auto i = static_cast<std::size_t>(r);
    append_integer(rows, b.first + r);
    for (std::size_t c = 0; c < V; ++c) {
      rows += ',';
      append_number(rows, b.inputs[i * V + c]);
    }
    rows += ',';
    rows += status_name(b.status[i]);
    rows += ',';
    append_integer(rows, b.counters[i].steps);
    rows += ',';
    append_number(rows, b.final_t[i]);
    for (int j = 0; j < layout_.n; ++j) {
      rows += ',';
      append_number(rows, b.y_final[i * Y + static_cast<std::size_t>(j)]);
    }
    if (p > 0) {
      rows += ',';
      rows += status_name(b.lyapunov->status[i]);
      for (int j = 0; j < p; ++j) {
        rows += ',';
        append_number(rows, b.lyapunov->exponents[i * static_cast<std::size_t>(p) + static_cast<std::size_t>(j)]);
      }
      rows += ',';
      append_number(rows, b.lyapunov->t_start[i]);
      rows += ',';
      append_number(rows, b.lyapunov->t_end[i]);
    }
    const std::size_t E = layout_.events.functions.size();
    for (std::size_t k = 0; k < E; ++k) {
      rows += ',';
      append_number(rows, b.event_first_times[i * E + k]);
    }
    rows += '\n';
    // Hand text down in pieces of about 1 MB so a large block never doubles its size in memory.
    if (rows.size() >= (1u << 20)) {
      file_.write(rows);
      rows.clear();
    }
  }
  file_.write(rows);
  next_ = b.first + b.count;
}

void members_csv_writer::commit() {
  if (file_.committed()) return;
  // After a failed write, output_file refuses to commit (io_error); the missing rows are its consequence.
  if (!file_.failed() && next_ != layout_.members)
    throw std::logic_error("members_csv_writer::commit: members [" + std::to_string(next_) + ", " + std::to_string(layout_.members) + ") of " +
                           final_path().string() + " were never written");
  file_.commit();
}

}  // namespace lockstep::io
