// Prototype: lockstep-style "own" vector math written only with Highway 1.0.3
// basic ops (Mul/Add/Sub, Round, ConvertTo, shifts, IfThenElse) -- never
// MulAdd, no data-dependent branches -- to check that an FMA-free,
// branch-free kernel is bitwise identical on every target and width.
// Algorithms are textbook (Cody-Waite reduction + Taylor/Horner polynomials);
// constants are the usual split representations of ln2 and pi/2.
// Scope: exp (full range), sin/cos for |x| <= 2^20*pi/2 (no Payne-Hanek).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "own_eval.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "driver.h"

#ifndef OWN_COEFFS
#define OWN_COEFFS
// 1/k! rounded once from long double
struct InvFact {
  double c[24];
  InvFact() {
    long double f = 1.0L;
    for (int k = 0; k < 24; ++k) { if (k) f *= k; c[k] = double(1.0L / f); }
  }
};
static const InvFact kIF;
#endif

HWY_BEFORE_NAMESPACE();
namespace own {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class D, class V = hn::Vec<D>>
HWY_INLINE V MyExp(D d, V x) {
  const hn::RebindToSigned<D> di;
  const V kHiClamp = hn::Set(d, 710.0), kLoClamp = hn::Set(d, -746.0);
  V xc = hn::IfThenElse(hn::Gt(x, kHiClamp), kHiClamp, x);
  xc = hn::IfThenElse(hn::Lt(xc, kLoClamp), kLoClamp, xc);
  xc = hn::IfThenElse(hn::Eq(x, x), xc, hn::Zero(d));  // NaN -> 0 internally
  const V n = hn::Round(hn::Mul(xc, hn::Set(d, 0x1.71547652b82fep0)));  // x*log2(e)
  // r = x - n*ln2 with ln2 split (hi part has trailing zeros: n*hi exact)
  V r = hn::Sub(xc, hn::Mul(n, hn::Set(d, 0x1.62e42fee00000p-1)));
  r = hn::Sub(r, hn::Mul(n, hn::Set(d, 0x1.a39ef35793c76p-33)));
  // e^r, |r| <= 0.347: Taylor to degree 13, Horner, separate mul and add
  V p = hn::Set(d, kIF.c[13]);
  for (int k = 12; k >= 0; --k) p = hn::Add(hn::Mul(p, r), hn::Set(d, kIF.c[k]));
  // scale by 2^n in two steps (handles subnormal results and n = 1024)
  const auto ni = hn::ConvertTo(di, n);
  const auto n1 = hn::ShiftRight<1>(ni);
  const auto n2 = hn::Sub(ni, n1);
  const auto bias = hn::Set(di, 1023);
  const V s1 = hn::BitCast(d, hn::ShiftLeft<52>(hn::Add(n1, bias)));
  const V s2 = hn::BitCast(d, hn::ShiftLeft<52>(hn::Add(n2, bias)));
  V res = hn::Mul(hn::Mul(p, s1), s2);
  res = hn::IfThenElse(hn::Gt(x, hn::Set(d, 0x1.62e42fefa39efp+9)), hn::Set(d, HUGE_VAL), res);
  res = hn::IfThenElse(hn::Eq(x, x), res, x);
  return res;
}

// shared reduction for sin/cos: |x| = n*pi/2 + r
template <class D, class V = hn::Vec<D>>
HWY_INLINE V Reduce(D d, V ax, hn::Vec<hn::RebindToSigned<D>>& q) {
  const hn::RebindToSigned<D> di;
  const V n = hn::Round(hn::Mul(ax, hn::Set(d, 0x1.45f306dc9c883p-1)));  // 2/pi
  V r = hn::Sub(ax, hn::Mul(n, hn::Set(d, 0x1.921fb544p0)));
  r = hn::Sub(r, hn::Mul(n, hn::Set(d, 0x1.0b4611a6p-34)));
  r = hn::Sub(r, hn::Mul(n, hn::Set(d, 0x1.3198a2ep-69)));
  r = hn::Sub(r, hn::Mul(n, hn::Set(d, 8.47842766036889956997e-32)));
  // n is finite and < 2^31 for supported inputs; NaN/inf give r = NaN anyway
  const V nsafe = hn::IfThenElse(hn::Lt(n, hn::Set(d, 0x1p31)), n, hn::Zero(d));
  q = hn::And(hn::ConvertTo(di, nsafe), hn::Set(di, 3));
  return r;
}
template <class D, class V = hn::Vec<D>>
HWY_INLINE V SinPoly(D d, V r) {  // r - r^3/3! + ... - r^19/19!
  const V r2 = hn::Mul(r, r);
  V p = hn::Set(d, -kIF.c[19]);
  for (int k = 17; k >= 3; k -= 2) p = hn::Add(hn::Mul(p, r2), hn::Set(d, (k & 2) ? -kIF.c[k] : kIF.c[k]));
  return hn::Add(r, hn::Mul(hn::Mul(p, r2), r));
}
template <class D, class V = hn::Vec<D>>
HWY_INLINE V CosPoly(D d, V r) {  // 1 - r^2/2 + ... + r^20/20!
  const V r2 = hn::Mul(r, r);
  V p = hn::Set(d, kIF.c[20]);
  for (int k = 18; k >= 4; k -= 2) p = hn::Add(hn::Mul(p, r2), hn::Set(d, (k & 2) ? -kIF.c[k] : kIF.c[k]));
  const V half_r2 = hn::Mul(r2, hn::Set(d, 0.5));
  return hn::Add(hn::Sub(hn::Set(d, 1.0), half_r2), hn::Mul(hn::Mul(p, r2), r2));
}
template <class D, class V = hn::Vec<D>>
HWY_INLINE V MySin(D d, V x) {
  const hn::RebindToSigned<D> di;
  hn::Vec<decltype(di)> q;
  const V r = Reduce(d, hn::Abs(x), q);
  const auto odd = hn::RebindMask(d, hn::Eq(hn::And(q, hn::Set(di, 1)), hn::Set(di, 1)));
  const auto neg = hn::RebindMask(d, hn::Eq(hn::And(q, hn::Set(di, 2)), hn::Set(di, 2)));
  V res = hn::IfThenElse(odd, CosPoly(d, r), SinPoly(d, r));
  res = hn::IfThenElse(neg, hn::Neg(res), res);
  return hn::Xor(res, hn::And(x, hn::Set(d, -0.0)));  // sin is odd
}
template <class D, class V = hn::Vec<D>>
HWY_INLINE V MyCos(D d, V x) {
  const hn::RebindToSigned<D> di;
  hn::Vec<decltype(di)> q;
  const V r = Reduce(d, hn::Abs(x), q);
  const auto odd = hn::RebindMask(d, hn::Eq(hn::And(q, hn::Set(di, 1)), hn::Set(di, 1)));
  const auto q1 = hn::Add(q, hn::Set(di, 1));  // negate for q = 1, 2
  const auto neg = hn::RebindMask(d, hn::Eq(hn::And(q1, hn::Set(di, 2)), hn::Set(di, 2)));
  V res = hn::IfThenElse(odd, SinPoly(d, r), CosPoly(d, r));
  return hn::IfThenElse(neg, hn::Neg(res), res);
}

template <class D>
HWY_INLINE bool RunD(D d, int f, const double* a, const double* b, double* o, size_t n) {
  const size_t W = hn::Lanes(d);
  (void)b;
#define OLOOP(EXPR)                                  \
  for (size_t i = 0; i < n; i += W) {                \
    auto x = hn::LoadU(d, a + i);                    \
    hn::StoreU(EXPR, d, o + i);                      \
  }                                                  \
  return true;
  switch (f) {
    case SIN: OLOOP(MySin(d, x))
    case COS: OLOOP(MyCos(d, x))
    case EXP: OLOOP(MyExp(d, x))
    default: return false;
  }
}
bool RunFull(int f, const double* a, const double* b, double* o, size_t n) {
  return RunD(hn::ScalableTag<double>(), f, a, b, o, n);
}
bool RunOne(int f, const double* a, const double* b, double* o, size_t n) {
  return RunD(hn::CappedTag<double, 1>(), f, a, b, o, n);
}
size_t FullLanes() { return hn::Lanes(hn::ScalableTag<double>()); }
}  // namespace HWY_NAMESPACE
}  // namespace own
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace own {
HWY_EXPORT(RunFull);
HWY_EXPORT(RunOne);
HWY_EXPORT(FullLanes);
static int64_t g_target = -1;
template <int64_t T, bool ONE>
static bool run_t(int f, const double* a, const double* b, double* o, size_t n) {
  if (g_target != T) { hwy::SetSupportedTargetsForTest(T); g_target = T; }
  return ONE ? HWY_DYNAMIC_DISPATCH(RunOne)(f, a, b, o, n) : HWY_DYNAMIC_DISPATCH(RunFull)(f, a, b, o, n);
}
}  // namespace own

int main(int argc, char** argv) {
  using namespace own;
  bool acc = argc < 2 || std::strchr(argv[1], 'a');
  bool tim = argc < 2 || std::strchr(argv[1], 't');
  g_trig_limit = 0x1p20 * 1.5707963267948966;  // prototype's documented range
  std::vector<Variant> vs;
#define ADD(T)                                                                        \
  if (HWY_TARGETS & (T)) {                                                            \
    hwy::SetSupportedTargetsForTest(T);                                               \
    size_t w = HWY_DYNAMIC_DISPATCH(FullLanes)();                                     \
    vs.push_back({std::string(hwy::TargetName(T)) + "-cap1", 1, run_t<(T), true>});   \
    vs.push_back({std::string(hwy::TargetName(T)), int(w), run_t<(T), false>});       \
  }
  ADD(HWY_SCALAR)
  ADD(HWY_EMU128)
  ADD(HWY_SSE4)
  ADD(HWY_AVX2)
  ADD(HWY_AVX3)
  drive("own(hwy-ops)", vs, acc, tim);
}
#endif
