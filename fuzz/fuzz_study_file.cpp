// fuzz/fuzz_study_file.cpp — libFuzzer target for the study-file loader (host/io/study_file.cpp,
// parse_study) and the sampling plan it produces: any input must either be refused with one
// io::study_error or give a plan whose members can be counted and sampled. Any other exception, crash,
// leak or sanitizer report is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "host/io/study_file.hpp"
#include "lockstep/study/samplers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  lockstep::io::study_spec spec;
  try {
    spec = lockstep::io::parse_study(text, "fuzz.toml");
  } catch (const lockstep::io::study_error&) {
    return 0;
  }
  // What `lockstep run` does next with an accepted study (run_study_impl.hpp): check the plan, count the
  // members and sample them (the first and the last are enough to reach every sampler's arithmetic).
  const lockstep::study::sampling_plan& plan = spec.plan;
  if (!lockstep::study::check_plan(plan).empty()) return 0;
  const long members = lockstep::study::member_count(plan);
  std::vector<double> x(plan.vary.size() + 1);
  for (const long i : {0L, members - 1})
    if (i >= 0 && !plan.vary.empty()) lockstep::study::sample_member(plan, i, x.data());
  return 0;
}
