#include "common.h"
int main(int argc, char** argv) {
  FILE* f1 = std::fopen(argv[1], "rb"); FILE* f2 = std::fopen(argv[2], "rb");
  std::vector<double> r(kN), s(kN);
  for (int f = 0; f < NFN; ++f) {
    if (std::fread(r.data(), 8, kN, f1) != kN || std::fread(s.data(), 8, kN, f2) != kN) return 1;
    Cmp c = compare(r.data(), s.data(), kN);
    printf("LIBM-ISA %s mism=%zu maxulp=%.0f\n", kFnName[f], c.mism, c.maxulp);
  }
}
