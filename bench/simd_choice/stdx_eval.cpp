// GCC 12 libstdc++ std::experimental::simd (Parallelism TS v2) evaluation
#include <experimental/simd>
#include "driver.h"
namespace stdx = std::experimental;

template <class Abi>
static bool run_s(int f, const double* a, const double* b, double* o, size_t n) {
  using V = stdx::simd<double, Abi>;
  constexpr size_t W = V::size();
#define SLOOP1(EXPR)                                          \
  for (size_t i = 0; i < n; i += W) {                         \
    V x(a + i, stdx::element_aligned);                        \
    (EXPR).copy_to(o + i, stdx::element_aligned);             \
  }                                                           \
  return true;
#define SLOOP2(EXPR)                                          \
  for (size_t i = 0; i < n; i += W) {                         \
    V x(a + i, stdx::element_aligned), y(b + i, stdx::element_aligned); \
    (EXPR).copy_to(o + i, stdx::element_aligned);             \
  }                                                           \
  return true;
  switch (f) {
    case SIN: SLOOP1(sin(x))
    case COS: SLOOP1(cos(x))
    case TAN: SLOOP1(tan(x))
    case EXP: SLOOP1(exp(x))
    case LOG: SLOOP1(log(x))
    case SQRT: SLOOP1(sqrt(x))
    case ATAN2: SLOOP2(atan2(x, y))
    case POW: SLOOP2(pow(x, y))
    case ASIN: SLOOP1(asin(x))
    case ACOS: SLOOP1(acos(x))
    case ATAN: SLOOP1(atan(x))
  }
  return false;
}

template <class Abi>
static void masked_div_test(const char* name) {
  using V = stdx::simd<double, Abi>;
  constexpr size_t W = V::size();
  alignas(64) double xs[64], ns[64];
  for (size_t i = 0; i < W; ++i) { xs[i] = i == 0 ? 0.0 : 2.0; ns[i] = i == 0 ? NAN : 0.5; }
  asm volatile("" ::"r"(xs), "r"(ns) : "memory");
  V x(xs, stdx::element_aligned);
  auto m = x != 0.0;
  std::feclearexcept(FE_ALL_EXCEPT);
  V r = 0.0;
  where(m, r) = 1.0 / x;  // full-width division, then masked assignment
  asm volatile("" ::"r"(&r) : "memory");
  int e1 = std::fetestexcept(FE_ALL_EXCEPT);
  std::feclearexcept(FE_ALL_EXCEPT);
  alignas(64) double threes[64];
  for (size_t i = 0; i < W; ++i) threes[i] = 3.0;
  asm volatile("" ::"r"(threes) : "memory");
  V r2(threes, stdx::element_aligned);  // opaque, so no CSE with 1.0/x above
  where(m, r2) /= x;  // masked compound assignment
  asm volatile("" ::"r"(&r2) : "memory");
  int e2 = std::fetestexcept(FE_ALL_EXCEPT);
  V nv(ns, stdx::element_aligned);
  std::feclearexcept(FE_ALL_EXCEPT);
  auto lt = nv < 1.0;
  asm volatile("" ::"r"(&lt) : "memory");
  int e3 = std::fetestexcept(FE_ALL_EXCEPT);
  std::feclearexcept(FE_ALL_EXCEPT);
  V s = sin(nv) + exp(nv) + log(nv);
  asm volatile("" ::"r"(&s) : "memory");
  int e4 = std::fetestexcept(FE_ALL_EXCEPT) & ~FE_INEXACT;
  printf("MASKDIV stdx %s W=%zu: where(m,r)=1/x, x=0 idle: %s | where(m,r)/=x: %s | NaN<1 compare: %s | sin/exp/log on NaN idle lane: %s\n",
         name, W, fexc_str(e1).c_str(), fexc_str(e2).c_str(), fexc_str(e3).c_str(), fexc_str(e4).c_str());
}

using A1 = stdx::simd_abi::scalar;
using A2 = stdx::simd_abi::deduce_t<double, 2>;
using A4 = stdx::simd_abi::deduce_t<double, 4>;
using A8 = stdx::simd_abi::native<double>;
using F8 = stdx::simd_abi::fixed_size<8>;

int main(int argc, char** argv) {
  bool acc = argc < 2 || std::strchr(argv[1], 'a');
  bool tim = argc < 2 || std::strchr(argv[1], 't');
  printf("stdx native<double>::size = %zu\n", stdx::native_simd<double>::size());
  std::vector<Variant> vs = {
      {"scalar-abi", 1, run_s<A1>},
      {"deduce<2>", 2, run_s<A2>},
      {"deduce<4>", 4, run_s<A4>},
      {"native(8)", 8, run_s<A8>},
      {"fixed_size<8>", 8, run_s<F8>},
  };
  masked_div_test<A1>("scalar");
  masked_div_test<A2>("deduce<2>");
  masked_div_test<A4>("deduce<4>");
  masked_div_test<A8>("native");
  drive("stdx", vs, acc, tim);
}
