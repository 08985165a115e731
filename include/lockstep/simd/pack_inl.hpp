// lockstep/simd/pack_inl.hpp — pack<D>: W members' values of one scalar in the W lanes of a Highway
// vector, a scalar type the models run on unchanged. A model is a set of templates over its scalar
// (lockstep/model/concept.hpp); instantiated with pack<D> for both the state and the parameters, each
// line of it computes that line for W members at once, lane l for member l, with exactly the operations
// a double would see — so that every lane gets the bits the member would get alone in a pack of one
// (tests/simd/pack_model_test.cpp checks every built-in model). Dual numbers over packs
// (dual<pack<D>, N>, lockstep/core/dual.hpp) give the derivatives the same way.
//
// What a double does, a pack does per lane:
//  - + - * / are the correctly rounded IEEE operations (no FMA: common_inl.hpp's rules);
//  - the elementary functions are lockstep/core/vector_math's, the same bits at every W and on every
//    instruction set (not the C library's: docs/SIMD.md);
//  - abs, min and max are defined by comparisons as lockstep/core/math.hpp defines them for doubles
//    (abs(-0.0) is -0.0, min and max return their first argument on ties), so that swapping the scalar
//    type changes no bit of the models' arithmetic.
// A comparison of packs is a per-lane mask, not a bool; code that branches on values (none of the
// built-in models does) cannot take a pack.
//
// Per-target header: include after hwy/highway.h, inside no namespace. The models' templates are
// compiled for the instruction set of the translation unit that instantiates them, so code that runs
// models on packs is built once per instruction set with that set's compiler flags (docs/SIMD.md, "What
// remains for the lanes backend").
#if defined(LOCKSTEP_SIMD_PACK_INL_HPP_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOCKSTEP_SIMD_PACK_INL_HPP_
#undef LOCKSTEP_SIMD_PACK_INL_HPP_
#else
#define LOCKSTEP_SIMD_PACK_INL_HPP_
#endif

#include "hwy/highway.h"
#include "lockstep/core/dual.hpp"
#include "lockstep/core/lane_primitives.hpp"
#include "lockstep/core/math.hpp"
#include "lockstep/core/status.hpp"
#include "lockstep/core/vector_math/math_inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd::HWY_NAMESPACE {

template <class D>
struct pack {
  using tag = D;
  vec<D> v;

  pack() = default;  // value-initialized (T{}, T v{}): all lanes +0.0
  HWY_INLINE pack(double x) : v(hn::Set(D(), x)) {}  // NOLINT: constants convert implicitly, as to double
  HWY_INLINE explicit pack(vec<D> x) : v(x) {}

  HWY_INLINE friend pack operator+(pack a, pack b) { return pack(hn::Add(a.v, b.v)); }
  HWY_INLINE friend pack operator-(pack a, pack b) { return pack(hn::Sub(a.v, b.v)); }
  HWY_INLINE friend pack operator*(pack a, pack b) { return pack(hn::Mul(a.v, b.v)); }
  HWY_INLINE friend pack operator/(pack a, pack b) { return pack(hn::Div(a.v, b.v)); }
  HWY_INLINE friend pack operator+(pack a, double b) { return a + pack(b); }
  HWY_INLINE friend pack operator-(pack a, double b) { return a - pack(b); }
  HWY_INLINE friend pack operator*(pack a, double b) { return a * pack(b); }
  HWY_INLINE friend pack operator/(pack a, double b) { return a / pack(b); }
  HWY_INLINE friend pack operator+(double a, pack b) { return pack(a) + b; }
  HWY_INLINE friend pack operator-(double a, pack b) { return pack(a) - b; }
  HWY_INLINE friend pack operator*(double a, pack b) { return pack(a) * b; }
  HWY_INLINE friend pack operator/(double a, pack b) { return pack(a) / b; }
  HWY_INLINE friend pack operator-(pack a) { return pack(hn::Neg(a.v)); }
  HWY_INLINE friend pack operator+(pack a) { return a; }
  HWY_INLINE pack& operator+=(pack b) { return *this = *this + b; }
  HWY_INLINE pack& operator-=(pack b) { return *this = *this - b; }
  HWY_INLINE pack& operator*=(pack b) { return *this = *this * b; }
  HWY_INLINE pack& operator/=(pack b) { return *this = *this / b; }

  // Per-lane comparisons.
  HWY_INLINE friend mask<D> operator<(pack a, pack b) { return hn::Lt(a.v, b.v); }
  HWY_INLINE friend mask<D> operator>(pack a, pack b) { return hn::Gt(a.v, b.v); }
  HWY_INLINE friend mask<D> operator<=(pack a, pack b) { return hn::Le(a.v, b.v); }
  HWY_INLINE friend mask<D> operator>=(pack a, pack b) { return hn::Ge(a.v, b.v); }
  HWY_INLINE friend mask<D> operator==(pack a, pack b) { return hn::Eq(a.v, b.v); }
};

// The elementary functions, found by argument-dependent lookup from the models' unqualified calls.
template <class D>
HWY_INLINE pack<D> sqrt(pack<D> x) { return pack<D>(simd::HWY_NAMESPACE::sqrt(D(), x.v)); }
template <class D>
HWY_INLINE pack<D> exp(pack<D> x) { return pack<D>(simd::HWY_NAMESPACE::exp(D(), x.v)); }
template <class D>
HWY_INLINE pack<D> log(pack<D> x) { return pack<D>(simd::HWY_NAMESPACE::log(D(), x.v)); }
template <class D>
HWY_INLINE pack<D> sin(pack<D> x) { return pack<D>(simd::HWY_NAMESPACE::sin(D(), x.v)); }
template <class D>
HWY_INLINE pack<D> cos(pack<D> x) { return pack<D>(simd::HWY_NAMESPACE::cos(D(), x.v)); }
template <class D>
HWY_INLINE pack<D> tan(pack<D> x) { return pack<D>(simd::HWY_NAMESPACE::tan(D(), x.v)); }
template <class D>
HWY_INLINE pack<D> asin(pack<D> x) { return pack<D>(simd::HWY_NAMESPACE::asin(D(), x.v)); }
template <class D>
HWY_INLINE pack<D> acos(pack<D> x) { return pack<D>(simd::HWY_NAMESPACE::acos(D(), x.v)); }
template <class D>
HWY_INLINE pack<D> atan(pack<D> x) { return pack<D>(simd::HWY_NAMESPACE::atan(D(), x.v)); }
template <class D>
HWY_INLINE pack<D> atan2(pack<D> y, pack<D> x) { return pack<D>(simd::HWY_NAMESPACE::atan2(D(), y.v, x.v)); }
template <class D>
HWY_INLINE pack<D> pow(pack<D> x, pack<D> y) { return pack<D>(simd::HWY_NAMESPACE::pow(D(), x.v, y.v)); }
template <class D>
HWY_INLINE pack<D> pow(pack<D> x, double y) { return pow(x, pack<D>(y)); }
// sin x and cos x from one reduction (the dual-number sin_cos of core/math.hpp builds on this).
template <class D>
HWY_INLINE sine_cosine<pack<D>> sin_cos(pack<D> x) {
  const auto both = simd::HWY_NAMESPACE::sin_cos(D(), x.v);
  return {pack<D>(both.sin), pack<D>(both.cos)};
}

// As lockstep/core/math.hpp defines them for doubles, lane by lane.
template <class D>
HWY_INLINE pack<D> abs(pack<D> x) { return pack<D>(hn::IfThenElse(hn::Lt(x.v, hn::Zero(D())), hn::Neg(x.v), x.v)); }
template <class D>
HWY_INLINE pack<D> min(pack<D> a, pack<D> b) { return pack<D>(hn::IfThenElse(hn::Lt(b.v, a.v), b.v, a.v)); }
template <class D>
HWY_INLINE pack<D> max(pack<D> a, pack<D> b) { return pack<D>(hn::IfThenElse(hn::Lt(a.v, b.v), b.v, a.v)); }
template <class D>
HWY_INLINE pack<D> value_of(pack<D> x) { return x; }
template <class D>
HWY_INLINE pack<D> floor(pack<D> x) { return pack<D>(hn::Floor(x.v)); }
// Per lane: whether x is finite (neither infinite nor NaN), as lockstep/core/math.hpp's is_finite.
template <class D>
HWY_INLINE mask<D> is_finite(pack<D> x) { return hn::IsFinite(x.v); }
// Per lane: whether x is +0.0, as lockstep/core/math.hpp's is_positive_zero.
template <class D>
HWY_INLINE mask<D> is_positive_zero(pack<D> x) {
  const hn::RebindToUnsigned<D> du;
  return hn::RebindMask(D(), hn::Eq(hn::BitCast(du, x.v), hn::Zero(du)));
}

// The choice per lane and the logic of masks, under the names code written once for doubles and packs
// uses (their double forms: lockstep/core/lane_primitives.hpp).
// Lane l of a where m holds in lane l, else lane l of b.
template <class D>
HWY_INLINE pack<D> select(mask<D> m, pack<D> a, pack<D> b) {
  return pack<D>(hn::IfThenElse(m, a.v, b.v));
}
template <class M>
HWY_INLINE M mask_and(M a, M b) {
  return hn::And(a, b);
}
template <class M>
HWY_INLINE M mask_or(M a, M b) {
  return hn::Or(a, b);
}
template <class M>
HWY_INLINE M mask_and_not(M a, M b) {  // a and not b
  return hn::AndNot(b, a);
}
template <class M>
HWY_INLINE M mask_not(M a) {
  return hn::Not(a);
}
template <class S>
HWY_INLINE bool any_lane(mask<typename S::tag> m) {
  return !hn::AllFalse(typename S::tag(), m);
}
// A pack's loops over its lanes' counts run to the largest count a lane can have.
template <class S>
HWY_INLINE int count_bound(S /*count*/, int max_count) {
  return max_count;
}
template <class S>
HWY_INLINE mask<typename S::tag> within_count(int i, S count) {
  return S(double(i)) < count;
}
template <class S>
HWY_INLINE int least_count(S /*count*/) {
  return 0;
}
// Lane l of the result: lane l of array[i], i lane l of index (exact, in 0 .. size - 1).
template <class S, class D>
HWY_INLINE pack<D> pick(const pack<D>* array, pack<D> index, int size) {
  vec<D> r = array[0].v;
  for (int j = 1; j < size; ++j) r = hn::IfThenElse(hn::Eq(index.v, hn::Set(D(), double(j))), array[j].v, r);
  return pack<D>(r);
}
template <class S>
HWY_INLINE bool all_lanes(mask<typename S::tag> m) {
  return hn::AllTrue(typename S::tag(), m);
}
template <class S>
HWY_INLINE mask<typename S::tag> no_lane() {
  return hn::FirstN(typename S::tag(), 0);
}
// A member_status value in a pack of statuses (one per lane, held exactly in doubles).
template <class St>
HWY_INLINE St status_value(member_status s) {
  return St(static_cast<double>(s));
}

// Rows k and p of `rows` rows of `stride` entries trade their first `length` entries in each lane, p
// that lane's row (p >= k), by blends: row i's lanes are those whose p is i. A row no lane takes is
// skipped (swapping nothing changes no lane); a row every lane takes trades places with row k whole, and
// then no lane takes another. T: pack<D> or complex<pack<D>>.
template <class T, class D>
HWY_INLINE void interchange_rows(T* a, int stride, int length, int k, pack<D> p, int rows) {
  for (int i = k + 1; i < rows; ++i) {
    const mask<D> swap = p == pack<D>(double(i));
    if (hn::AllFalse(D(), swap)) continue;
    T* const row_k = a + k * stride;
    T* const row_i = a + i * stride;
    if (hn::AllTrue(D(), swap)) {
      for (int j = 0; j < length; ++j) {
        const T t = row_k[j];
        row_k[j] = row_i[j];
        row_i[j] = t;
      }
      return;
    }
    for (int j = 0; j < length; ++j) {
      const T t = row_k[j];
      row_k[j] = select(swap, row_i[j], t);
      row_i[j] = select(swap, t, row_i[j]);
    }
  }
}

// |x|: an LU's pivot magnitude (lockstep/core/complex.hpp's abs1 of a double), by clearing the sign bit
// (one instruction; abs above takes three, to keep abs(-0.0) = -0.0). The two differ in the sign of a
// zero only, which no comparison of magnitudes sees, and the LU only compares them (its threshold is
// a magnitude too).
template <class D>
HWY_INLINE pack<D> abs1(pack<D> x) { return pack<D>(hn::Abs(x.v)); }
// The larger of two magnitudes, in one instruction (max above takes two, to return its first argument
// on ties and NaN as a double's max does): the LU's scale, which no lane whose magnitudes hold a NaN
// uses (lockstep/core/lu_generic.inc fails it). Not for a pack of one lane, which fills half of the
// smallest (128-bit) register: the other half holds whatever the last instruction left there, a NaN
// among it (the abs of an all-ones mask), and x86's maxpd raises FE_INVALID on a NaN operand even in a
// lane nobody reads, where the quiet comparison and blend below raise none.
template <class D>
HWY_INLINE pack<D> magnitude_max(pack<D> a, pack<D> b) {
  if constexpr (hn::MaxLanes(D()) * sizeof(double) >= 16)
    return pack<D>(hn::Max(a.v, b.v));
  else
    return pack<D>(hn::IfThenElse(hn::Lt(a.v, b.v), b.v, a.v));
}

// Lane access: the traffic between one member on doubles and its lane (a member loaded into a lane or
// read out of it, a Jacobian evaluated on the double code for one lane).
// The mask of lane l alone.
template <class D>
HWY_INLINE hn::Mask<D> lane_mask(size_t l) {
  const D d;
  return hn::Xor(hn::FirstN(d, l + 1), hn::FirstN(d, l));
}
// v with lane l replaced by x: x broadcast and blended into lane l, in registers. Highway's InsertLane
// with a lane known only at run time stores the vector, changes the lane in memory and reloads the
// vector, a reload that store-to-load forwarding cannot serve; loading a member into a lane, a value at
// a time, spent a tenth of the lanes' time on andrews so (docs/SIMD.md, "BDF in lanes, measured").
// On a SIMD target one lane (W = 1) is a partial vector: a 128-bit register of which Highway uses the
// low half, and a blend would keep the high half of v, which is garbage where v was never written
// whole (a pack declared without a value); arithmetic on it may then raise floating-point flags the
// member alone does not. There the value goes into the whole register.
template <class V>
HWY_INLINE V with_lane(V v, size_t l, hn::TFromV<V> x) {
  const hn::DFromV<V> d;
  if constexpr (hn::MaxLanes(d) == 1) {
    (void)v, (void)l;
    return hn::Set(d, x);
  } else {
    return hn::IfThenElse(lane_mask<hn::DFromV<V>>(l), hn::Set(d, x), v);
  }
}
template <class D>
HWY_INLINE double lane_of(pack<D> x, size_t l) { return hn::ExtractLane(x.v, l); }
template <class D>
HWY_INLINE void set_lane(pack<D>& x, size_t l, double value) { x.v = with_lane(x.v, l, value); }
template <class D>
HWY_INLINE bool mask_lane_of(mask<D> m, size_t l) { return !hn::AllFalse(D(), hn::And(m, lane_mask<D>(l))); }
template <class D>
HWY_INLINE void set_mask_lane(mask<D>& m, size_t l, bool on) {
  m = on ? hn::Or(m, lane_mask<D>(l)) : hn::AndNot(lane_mask<D>(l), m);
}
// The lanes of m as the bits of an integer (bit l: lane l), for loops over a mask's lanes: one store
// of the mask, where mask_lane_of per lane builds and tests a mask each time.
template <class D>
HWY_INLINE uint64_t mask_bits(mask<D> m) {
  static_assert(hn::MaxLanes(D()) <= 64, "a mask of more than 64 lanes");
  uint8_t bits[8] = {};
  hn::StoreMaskBits(D(), m, bits);
  uint64_t all = 0;
  for (size_t b = 0; b < (hn::MaxLanes(D()) + 7) / 8; ++b) all |= uint64_t{bits[b]} << (8 * b);
  return all;
}

}  // namespace lockstep::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

namespace lockstep {
// A pack is a plain number to dual numbers (lockstep/core/dual.hpp): nested duals over packs mix with
// pack constants (the models' parameters) as nested duals over doubles mix with doubles.
template <class D>
struct is_plain_number<simd::HWY_NAMESPACE::pack<D>> : std::true_type {};
// A pack's small integers (an LU's row indices) are a pack, one per lane, exact in its doubles.
template <class D>
struct lane_index<simd::HWY_NAMESPACE::pack<D>> {
  using type = simd::HWY_NAMESPACE::pack<D>;
};
// A pack of members' statuses is a pack (their member_status values, exactly, in double lanes).
template <class D>
struct lane_status<simd::HWY_NAMESPACE::pack<D>> {
  using type = simd::HWY_NAMESPACE::pack<D>;
};
}  // namespace lockstep

// A pack's work space is zero (lockstep/core/lane_primitives.hpp says why), set in the instruction set's
// target, as the pack's own code is.
HWY_BEFORE_NAMESPACE();
namespace lockstep {
template <class D, class T, int N>
struct scratch_array<simd::HWY_NAMESPACE::pack<D>, T, N> {
  T a[N]{};
  HWY_INLINE T& operator[](int i) { return a[i]; }
  HWY_INLINE const T& operator[](int i) const { return a[i]; }
  HWY_INLINE operator T*() { return a; }
  HWY_INLINE operator const T*() const { return a; }
};
}  // namespace lockstep
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
