// host/scheduler/default_threads.cpp — the CPUs this process may use, and how many threads the omp
// backend uses when none are asked for.
#include <sched.h>

#include <cerrno>
#include <cstdlib>
#include <thread>

#include "lockstep/ensemble.hpp"

namespace lockstep {
namespace {

// OMP_NUM_THREADS's first entry (the outermost level of OpenMP's list "4,2"), when it is a positive
// integer; 0 otherwise.
int threads_from_environment() {
  const char* text = std::getenv("OMP_NUM_THREADS");
  if (text == nullptr) return 0;
  char* end = nullptr;
  errno = 0;
  const long n = std::strtol(text, &end, 10);
  while (end != text && (*end == ' ' || *end == '\t')) ++end;
  if (end == text || errno != 0 || n < 1 || n > 1 << 16 || (*end != '\0' && *end != ',')) return 0;
  return static_cast<int>(n);
}

// The CPUs the affinity mask holds (taskset, cgroup cpusets, mpirun's binding); the CPUs online where
// it cannot be read. The mask may be wider than a cpu_set_t on machines of more than 1024 CPUs.
int affinity_cpus() {
  for (int cpus = 1024; cpus <= 1 << 20; cpus *= 2) {
    cpu_set_t* set = CPU_ALLOC(cpus);
    if (set == nullptr) break;
    const std::size_t size = CPU_ALLOC_SIZE(cpus);
    const int rc = sched_getaffinity(0, size, set);
    const int count = rc == 0 ? CPU_COUNT_S(size, set) : 0;
    const int error = errno;
    CPU_FREE(set);
    if (rc == 0) return count;
    if (error != EINVAL) break;  // EINVAL: the kernel's mask is wider than `cpus`
  }
  return static_cast<int>(std::thread::hardware_concurrency());
}

}  // namespace

int available_cpus() {
  const int cpus = affinity_cpus();
  return cpus > 0 ? cpus : 1;
}

int omp::default_threads() {
  if (const int n = threads_from_environment(); n > 0) return n;
  return available_cpus();
}

}  // namespace lockstep
