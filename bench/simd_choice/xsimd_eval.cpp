// xsimd 8.1.0 evaluation (Debian libxsimd-dev 8.1.0-7)
#include <xsimd/xsimd.hpp>
#include "driver.h"

template <class A>
static bool run_x(int f, const double* a, const double* b, double* o, size_t n) {
  using B = xsimd::batch<double, A>;
  constexpr size_t W = B::size;
#define LOOP1(EXPR)                                                      \
  for (size_t i = 0; i < n; i += W) {                                    \
    B x = B::load_unaligned(a + i);                                      \
    (EXPR).store_unaligned(o + i);                                       \
  }                                                                      \
  return true;
#define LOOP2(EXPR)                                                      \
  for (size_t i = 0; i < n; i += W) {                                    \
    B x = B::load_unaligned(a + i), y = B::load_unaligned(b + i);        \
    (EXPR).store_unaligned(o + i);                                       \
  }                                                                      \
  return true;
  switch (f) {
    case SIN: LOOP1(xsimd::sin(x))
    case COS: LOOP1(xsimd::cos(x))
    case TAN: LOOP1(xsimd::tan(x))
    case EXP: LOOP1(xsimd::exp(x))
    case LOG: LOOP1(xsimd::log(x))
    case SQRT: LOOP1(xsimd::sqrt(x))
    case ATAN2: LOOP2(xsimd::atan2(x, y))
    case POW: LOOP2(xsimd::pow(x, y))
    case ASIN: LOOP1(xsimd::asin(x))
    case ACOS: LOOP1(xsimd::acos(x))
    case ATAN: LOOP1(xsimd::atan(x))
  }
  return false;
}

// xsimd's "scalar" API: xsimd::sin(double) etc.
static bool run_scalar(int f, const double* a, const double* b, double* o, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    double x = a[i], y = b[i], r = 0;
    switch (f) {
      case SIN: r = xsimd::sin(x); break;
      case COS: r = xsimd::cos(x); break;
      case TAN: r = xsimd::tan(x); break;
      case EXP: r = xsimd::exp(x); break;
      case LOG: r = xsimd::log(x); break;
      case SQRT: r = xsimd::sqrt(x); break;
      case ATAN2: r = xsimd::atan2(x, y); break;
      case POW: r = xsimd::pow(x, y); break;
      case ASIN: r = xsimd::asin(x); break;
      case ACOS: r = xsimd::acos(x); break;
      case ATAN: r = xsimd::atan(x); break;
    }
    o[i] = r;
  }
  return true;
}

template <class A>
static void masked_div_test(const char* name) {
  using B = xsimd::batch<double, A>;
  alignas(64) double xs[B::size];
  for (size_t i = 0; i < B::size; ++i) xs[i] = (i == 0) ? 0.0 : 2.0;
  asm volatile("" ::"r"(xs) : "memory");  // defeat constant folding
  B x = B::load_unaligned(xs);
  auto m = x != B(0.0);  // lane 0 inactive
  std::feclearexcept(FE_ALL_EXCEPT);
  B r = xsimd::select(m, B(1.0) / x, B(0.0));
  asm volatile("" ::"r"(&r) : "memory");
  int e1 = std::fetestexcept(FE_ALL_EXCEPT);
  // harmless idle value: replace x by 1 in inactive lanes before dividing
  std::feclearexcept(FE_ALL_EXCEPT);
  B xs1 = xsimd::select(m, x, B(1.0));
  B r2 = xsimd::select(m, B(1.0) / xs1, B(0.0));
  asm volatile("" ::"r"(&r2) : "memory");
  int e2 = std::fetestexcept(FE_ALL_EXCEPT);
  // NaN in an idle lane: compare / math on it
  alignas(64) double ns[B::size];
  for (size_t i = 0; i < B::size; ++i) ns[i] = (i == 0) ? NAN : 0.5;
  asm volatile("" ::"r"(ns) : "memory");
  B nv = B::load_unaligned(ns);
  std::feclearexcept(FE_ALL_EXCEPT);
  auto lt = nv < B(1.0);
  asm volatile("" ::"r"(&lt) : "memory");
  int e3 = std::fetestexcept(FE_ALL_EXCEPT);
  std::feclearexcept(FE_ALL_EXCEPT);
  B s = xsimd::sin(nv) + xsimd::exp(nv) + xsimd::log(nv) + xsimd::pow(nv, nv) + xsimd::atan2(nv, nv);
  asm volatile("" ::"r"(&s) : "memory");
  int e4 = std::fetestexcept(FE_ALL_EXCEPT) & ~FE_INEXACT;
  volatile double sink = r.get(1) + r2.get(1) + s.get(1) + double(lt.get(1));
  (void)sink;
  printf("MASKDIV xsimd %s W=%zu: select(m,1/x,..) x=0 idle: %s | idle lane set to 1 first: %s | NaN<1 compare: %s | math on NaN idle lane: %s\n",
         name, B::size, fexc_str(e1).c_str(), fexc_str(e2).c_str(), fexc_str(e3).c_str(), fexc_str(e4).c_str());
}

int main(int argc, char** argv) {
  bool acc = argc < 2 || std::strchr(argv[1], 'a');
  bool tim = argc < 2 || std::strchr(argv[1], 't');
  printf("xsimd %d.%d.%d default_arch=%s\n", XSIMD_VERSION_MAJOR, XSIMD_VERSION_MINOR,
         XSIMD_VERSION_PATCH, xsimd::default_arch::name());
  std::vector<Variant> vs = {
      {"sse2", 2, run_x<xsimd::sse2>},
      {"xsimd-scalar(double)", 1, run_scalar},
      {"avx2(noFMAarch)", 4, run_x<xsimd::avx2>},
      {"fma3<avx2>", 4, run_x<xsimd::fma3<xsimd::avx2>>},
#if XSIMD_WITH_AVX512BW  // a build with -mavx512*; without, the same program tests an AVX2+FMA build
      {"avx512f", 8, run_x<xsimd::avx512f>},
      {"avx512bw(default)", 8, run_x<xsimd::avx512bw>},
#endif
  };
  masked_div_test<xsimd::sse2>("sse2");
  masked_div_test<xsimd::avx2>("avx2");
#if XSIMD_WITH_AVX512F
  masked_div_test<xsimd::avx512f>("avx512f");
#endif
  drive("xsimd", vs, acc, tim);
}
