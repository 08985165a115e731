// Dumps glibc libm results over the wide argument sets, so that runs under
// different GLIBC_TUNABLES (e.g. FMA/AVX2 ifunc variants disabled) can be compared.
#include "common.h"
int main(int argc, char** argv) {
  if (argc < 2) return 1;
  FILE* fo = std::fopen(argv[1], "wb");
  std::vector<double> a, b, o(kN);
  for (int f = 0; f < NFN; ++f) {
    gen_wide(f, a, b);
    libm_run(f, a.data(), b.data(), o.data(), kN);
    std::fwrite(o.data(), 8, kN, fo);
  }
  std::fclose(fo);
}
