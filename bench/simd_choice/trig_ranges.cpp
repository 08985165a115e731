// Max ulp error of sin vs glibc per argument-magnitude bucket, W=8 (AVX-512),
// for xsimd::sin, hwy::Sin (static AVX3 target) and std::experimental::sin.
#include <experimental/simd>
#include <xsimd/xsimd.hpp>
#include "hwy/highway.h"
#include "hwy/contrib/math/math-inl.h"
#include "common.h"
namespace hn = hwy::HWY_NAMESPACE;
namespace stdx = std::experimental;
int main() {
  const double lo[] = {0, 1e2, 4e4, 1e6, 1e9, 1e15, 1e100};
  const double hi[] = {1e2, 4e4, 1e6, 1e9, 1e15, 1e100, 1.7e308};
  const size_t n = 1 << 16;
  std::vector<double> a(n), ref(n), r1(n), r2(n), r3(n);
  printf("static Highway target: %s\n", hwy::TargetName(HWY_STATIC_TARGET));
  printf("%-22s %14s %14s %14s   (max ulp; '>4ulp' count of %zu)\n", "|x| bucket", "xsimd-avx512", "hwy-static", "stdx-native", n);
  for (int b = 0; b < 7; ++b) {
    Rng r(7 + b);
    for (size_t i = 0; i < n; ++i) {
      double m = (b == 0) ? r.uni(lo[b], hi[b]) : std::exp(r.uni(std::log(lo[b]), std::log(hi[b])));
      a[i] = r.sgn() * m; ref[i] = std::sin(a[i]);
    }
    using B = xsimd::batch<double, xsimd::avx512f>;
    for (size_t i = 0; i < n; i += 8) xsimd::sin(B::load_unaligned(&a[i])).store_unaligned(&r1[i]);
    const hn::ScalableTag<double> d;
    for (size_t i = 0; i < n; i += hn::Lanes(d)) hn::StoreU(hn::Sin(d, hn::LoadU(d, &a[i])), d, &r2[i]);
    using V = stdx::native_simd<double>;
    for (size_t i = 0; i < n; i += V::size()) sin(V(&a[i], stdx::element_aligned)).copy_to(&r3[i], stdx::element_aligned);
    Cmp c1 = compare(r1.data(), ref.data(), n), c2 = compare(r2.data(), ref.data(), n), c3 = compare(r3.data(), ref.data(), n);
    auto f = [](const Cmp& c) { static char s[4][64]; static int k; k = (k + 1) & 3;
      snprintf(s[k], 64, "%.3g/%zu", c.maxulp + 0.0 * c.nanmism, c.big4 + c.nanmism); return s[k]; };
    printf("[%8.0e, %8.0e)   %14s %14s %14s\n", lo[b], hi[b], f(c1), f(c2), f(c3));
  }
}
