// host/io/members_csv.hpp — members.csv, the one-row-per-member summary `lockstep run` writes beside
// results.h5.
//
//   member,<varied input names...>,status,steps,final_t,<coordinates...>[,lyapunov_status,lambda_1,...,lambda_p,
//          lyapunov_t_start,lyapunov_t_end]
//   0,1.5,0.25,success,812,3,0.123,...
//
// The coordinates' columns hold the final positions, named by coordinate_columns (below): the model's
// names of its coordinates where it gives them, else q0, q1, ...
// The Lyapunov columns appear when the study has a [lyapunov] section (layout.lyapunov.exponents = p > 0):
// the Lyapunov run's status and the p leading exponents (NaN when it failed).
// status is the name of the member_status (core/status.hpp); numbers are written in the shortest form
// that reads back to the same double (std::to_chars), so the CSV and results.h5 agree bitwise; nan and
// inf are written as "nan", "inf", "-inf". Fields containing a comma, quote or line break are quoted
// (RFC 4180). Rows are written as blocks arrive, so blocks must come in member order (the scheduler's
// chunks do); like results.h5 the file appears under its final name only on commit().
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "host/io/output_file.hpp"
#include "host/io/results_h5.hpp"

namespace lockstep::io {

// The name of each coordinate's column: the model's name of it (layout.coordinate_names), or q<j> (its
// index) where the model names none or the name would be ambiguous, that is where it
//   - is empty, or is also the name of another coordinate;
//   - is the name of another column members.csv may have (member, status, steps, final_t, a varied
//     input such as params.L2, lyapunov_status, lambda_<i>, lyapunov_t_start, lyapunov_t_end; the
//     Lyapunov names whether or not the study has them, so that a model's columns do not depend on
//     the study) or of a dataset of /members in results.h5 (status, final_q, final_v, inputs and
//     member_integer_datasets, member_real_datasets, member_explicit_datasets, the last whatever the
//     method: `lockstep plot --quantity` takes those names);
//   - has the form of another entry's index name (q<k> for k != j, v<k>, lambda<k>, mu<k>, nu<k>),
//     which `lockstep plot` takes as aliases;
//   - contains a comma, a period, a quote or white space (`lockstep plot --outputs` separates names
//     with commas and writes a velocity as v.<name>).
// results.h5 keeps these names (the root attribute coordinate_columns), which `lockstep plot` uses
// (host/cli/lockstep_plot.py; for files written before the attribute, it applies the same rule).
std::vector<std::string> coordinate_columns(const results_layout& layout);

class members_csv_writer {
 public:
  // Creates the temporary beside final_path and writes the header. Throws io_error naming final_path.
  members_csv_writer(std::filesystem::path final_path, const results_layout& layout);
  ~members_csv_writer();  // not committed: removes the temporary; never throws
  members_csv_writer(const members_csv_writer&) = delete;
  members_csv_writer& operator=(const members_csv_writer&) = delete;

  const std::filesystem::path& final_path() const { return file_.final_path(); }
  const std::filesystem::path& temporary_path() const { return file_.temporary_path(); }

  // The next members: block.first must equal the number of members written so far (std::logic_error
  // otherwise). Uses status, counters (steps), final_t, inputs and y_final.
  void write_members(const member_block& block);

  // Checks that all members were written (std::logic_error), then flushes, fsyncs and renames.
  void commit();

 private:
  results_layout layout_;
  output_file file_;
  long next_ = 0;
};

}  // namespace lockstep::io
