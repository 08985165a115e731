// Highway 1.0.3 evaluation (Debian libhwy-dev 1.0.3-3+deb12u1).
// All attainable x86 targets are compiled into one binary (foreach_target.h);
// each is forced in turn with hwy::SetSupportedTargetsForTest.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "hwy_eval.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/contrib/math/math-inl.h"
#include "driver.h"

HWY_BEFORE_NAMESPACE();
namespace project {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class D>
HWY_INLINE bool RunD(D d, int f, const double* a, const double* b, double* o, size_t n) {
  const size_t W = hn::Lanes(d);
#define HLOOP(EXPR)                                   \
  for (size_t i = 0; i < n; i += W) {                 \
    auto x = hn::LoadU(d, a + i);                     \
    hn::StoreU(EXPR, d, o + i);                       \
  }                                                   \
  return true;
  (void)b;
  switch (f) {
    case SIN: HLOOP(hn::Sin(d, x))
    case COS: HLOOP(hn::Cos(d, x))
    case EXP: HLOOP(hn::Exp(d, x))
    case LOG: HLOOP(hn::Log(d, x))
    case SQRT: HLOOP(hn::Sqrt(x))
    case ASIN: HLOOP(hn::Asin(d, x))
    case ACOS: HLOOP(hn::Acos(d, x))
    case ATAN: HLOOP(hn::Atan(d, x))
    default: return false;  // tan, atan2, pow: not provided by hwy/contrib/math
  }
}

bool RunFull(int f, const double* a, const double* b, double* o, size_t n) {
  return RunD(hn::ScalableTag<double>(), f, a, b, o, n);
}
bool RunOne(int f, const double* a, const double* b, double* o, size_t n) {
  return RunD(hn::CappedTag<double, 1>(), f, a, b, o, n);
}
size_t FullLanes() { return hn::Lanes(hn::ScalableTag<double>()); }

// Masked-off division and NaN handling.
void MaskTest() {
  const hn::ScalableTag<double> d;
  const size_t W = hn::Lanes(d);
  alignas(64) double xs[64], ns[64];
  for (size_t i = 0; i < W; ++i) { xs[i] = i == 0 ? 0.0 : 2.0; ns[i] = i == 0 ? NAN : 0.5; }
  asm volatile("" ::"r"(xs), "r"(ns) : "memory");
  auto x = hn::Load(d, xs);
  auto m = hn::Ne(x, hn::Zero(d));
  std::feclearexcept(FE_ALL_EXCEPT);
  auto r = hn::IfThenElseZero(m, hn::Div(hn::Set(d, 1.0), x));
  asm volatile("" ::"r"(&r) : "memory");
  int e1 = std::fetestexcept(FE_ALL_EXCEPT);
  std::feclearexcept(FE_ALL_EXCEPT);
  auto x1 = hn::IfThenElse(m, x, hn::Set(d, 1.0));
  auto r2 = hn::IfThenElseZero(m, hn::Div(hn::Set(d, 1.0), x1));
  asm volatile("" ::"r"(&r2) : "memory");
  int e2 = std::fetestexcept(FE_ALL_EXCEPT);
  auto nv = hn::Load(d, ns);
  std::feclearexcept(FE_ALL_EXCEPT);
  auto lt = hn::Lt(nv, hn::Set(d, 1.0));
  asm volatile("" ::"r"(&lt) : "memory");
  int e3 = std::fetestexcept(FE_ALL_EXCEPT);
  std::feclearexcept(FE_ALL_EXCEPT);
  auto s = hn::Add(hn::Add(hn::Sin(d, nv), hn::Exp(d, nv)), hn::Log(d, nv));
  asm volatile("" ::"r"(&s) : "memory");
  int e4 = std::fetestexcept(FE_ALL_EXCEPT) & ~FE_INEXACT;
  printf("MASKDIV hwy %s W=%zu: IfThenElseZero(m,Div(1,x)) x=0 idle: %s | idle lane set to 1 first: %s | NaN<1 compare: %s | Sin/Exp/Log on NaN idle lane: %s\n",
         hwy::TargetName(HWY_TARGET), W, fexc_str(e1).c_str(), fexc_str(e2).c_str(),
         fexc_str(e3).c_str(), fexc_str(e4).c_str());
}

}  // namespace HWY_NAMESPACE
}  // namespace project
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace project {
HWY_EXPORT(RunFull);
HWY_EXPORT(RunOne);
HWY_EXPORT(FullLanes);
HWY_EXPORT(MaskTest);

static int64_t g_target;
static bool run_full(int f, const double* a, const double* b, double* o, size_t n) {
  return HWY_DYNAMIC_DISPATCH(RunFull)(f, a, b, o, n);
}
static bool run_one(int f, const double* a, const double* b, double* o, size_t n) {
  return HWY_DYNAMIC_DISPATCH(RunOne)(f, a, b, o, n);
}

// Wrap each variant so that the right target is forced before every call.
template <int64_t T, bool ONE>
static bool run_t(int f, const double* a, const double* b, double* o, size_t n) {
  if (g_target != T) { hwy::SetSupportedTargetsForTest(T); g_target = T; }
  return ONE ? run_one(f, a, b, o, n) : run_full(f, a, b, o, n);
}
}  // namespace project

int main(int argc, char** argv) {
  using namespace project;
  bool acc = argc < 2 || std::strchr(argv[1], 'a');
  bool tim = argc < 2 || std::strchr(argv[1], 't');
#ifdef HWY_DISABLE_BMI2_FMA
  const char* lib = "hwy-noFMAflag";
#else
  const char* lib = "hwy";
#endif
  printf("%s compiled targets:", lib);
  for (int64_t t : hwy::SupportedAndGeneratedTargets()) printf(" %s", hwy::TargetName(t));
  printf("\n");
  std::vector<Variant> vs;
#define ADD(T)                                                                        \
  if (HWY_TARGETS & (T)) {                                                            \
    hwy::SetSupportedTargetsForTest(T);                                               \
    size_t w = HWY_DYNAMIC_DISPATCH(FullLanes)();                                     \
    HWY_DYNAMIC_DISPATCH(MaskTest)();                                                 \
    vs.push_back({std::string(hwy::TargetName(T)) + "-cap1", 1, run_t<(T), true>});   \
    vs.push_back({std::string(hwy::TargetName(T)), int(w), run_t<(T), false>});       \
  }
  ADD(HWY_SCALAR)
  ADD(HWY_EMU128)
  ADD(HWY_SSE4)
  ADD(HWY_AVX2)
  ADD(HWY_AVX3)
  g_target = -1;
  drive(lib, vs, acc, tim);
}
#endif
