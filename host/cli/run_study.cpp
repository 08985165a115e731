// host/cli/run_study.cpp — `lockstep run` for any engine: run_study (run_study.hpp), defined in
// run_study_impl.hpp, with its checkpointed, resumed and MPI runs in run_study_journaled.hpp.
#include "host/cli/run_study_impl.hpp"
#include "host/cli/run_study_journaled.hpp"
