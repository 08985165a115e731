// Edge behaviour of exp/log at W=8: overflow boundary, subnormal results/inputs.
#include <xsimd/xsimd.hpp>
#include "hwy/highway.h"
#include "hwy/contrib/math/math-inl.h"
#include "common.h"
namespace hn = hwy::HWY_NAMESPACE;
int main() {
  const size_t n = 1 << 16;
  struct R { const char* name; int f; double lo, hi; } rs[] = {
      {"exp x in [-745.1,-708.4] (subnormal results)", EXP, -745.1, -708.4},
      {"exp x in [700,706]", EXP, 700, 706},
      {"exp x in [706,709.78]", EXP, 706, 709.78},
      {"exp x in [709.79,1000] (overflow)", EXP, 709.79, 1000},
      {"log x subnormal [2^-1074,2^-1022)", LOG, 0, 0},
      {"log x in [1e-300,1e300]", LOG, 1, 1}};
  std::vector<double> a(n), ref(n), r1(n), r2(n);
  printf("%-48s %18s %18s   (max ulp / count >4ulp or NaN-mismatch, of %zu)\n", "range", "xsimd-avx512f", "hwy-static", n);
  for (auto& r : rs) {
    Rng g(3);
    for (size_t i = 0; i < n; ++i) {
      if (r.f == EXP) a[i] = g.uni(r.lo, r.hi);
      else if (r.lo == 0) a[i] = g.logu(-1074, -1022);
      else a[i] = std::exp(g.uni(std::log(1e-300), std::log(1e300)));
      ref[i] = r.f == EXP ? std::exp(a[i]) : std::log(a[i]);
    }
    using B = xsimd::batch<double, xsimd::avx512f>;
    const hn::ScalableTag<double> d;
    for (size_t i = 0; i < n; i += 8) {
      B x = B::load_unaligned(&a[i]);
      (r.f == EXP ? xsimd::exp(x) : xsimd::log(x)).store_unaligned(&r1[i]);
    }
    for (size_t i = 0; i < n; i += hn::Lanes(d)) {
      auto x = hn::LoadU(d, &a[i]);
      hn::StoreU(r.f == EXP ? hn::Exp(d, x) : hn::Log(d, x), d, &r2[i]);
    }
    Cmp c1 = compare(r1.data(), ref.data(), n), c2 = compare(r2.data(), ref.data(), n);
    char s1[64], s2[64];
    snprintf(s1, 64, "%.3g/%zu", c1.maxulp, c1.big4 + c1.nanmism);
    snprintf(s2, 64, "%.3g/%zu", c2.maxulp, c2.big4 + c2.nanmism);
    printf("%-48s %18s %18s   e.g. x=%a xsimd=%a hwy=%a libm=%a\n", r.name, s1, s2, a[c1.worst_i], r1[c1.worst_i], r2[c1.worst_i], ref[c1.worst_i]);
  }
}
