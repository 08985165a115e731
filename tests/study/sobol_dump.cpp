// sobol_dump N D — print the first N unrandomized Sobol points in D dimensions, one point a line,
// coordinates as %.17g (exact: they are dyadic rationals). sobol_vs_scipy.py compares them with
// scipy.stats.qmc.Sobol(D, scramble=False).
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "lockstep/study/samplers.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: sobol_dump N D\n");
    return 2;
  }
  const long n = std::atol(argv[1]);
  const int dims = std::atoi(argv[2]);
  if (n < 0 || dims < 1 || dims > lockstep::study::sobol_max_dimension) {
    std::fprintf(stderr, "sobol_dump: need N >= 0 and 1 <= D <= %d\n", lockstep::study::sobol_max_dimension);
    return 2;
  }
  std::vector<double> point(static_cast<std::size_t>(dims));
  for (long k = 0; k < n; ++k) {
    lockstep::study::sobol_point(static_cast<std::uint64_t>(k), dims, point.data());
    for (int s = 0; s < dims; ++s) std::printf(s ? " %.17g" : "%.17g", point[static_cast<std::size_t>(s)]);
    std::printf("\n");
  }
  return 0;
}
