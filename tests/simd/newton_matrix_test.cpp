// Tests of lockstep/simd/newton_matrix_inl.hpp: the Newton matrix assembled, factored and solved in
// lanes must give every lane exactly what lockstep/formulation/euler_lagrange.hpp gives its member alone
// (detail::fill_newton_matrix, lu_factor, solve_newton), bit for bit, at W = 1, 2, 4, 8 on every
// instruction set compiled in: the assembled entries, the factorization's status and failing column,
// and for a factored matrix its pivots, factors and the Newton increment of the member's residual.
// Three state layouts (andrews: 7 coordinates, 6 holonomic rows; the knife edge: 3 coordinates, one
// velocity constraint; one with holonomic and velocity rows both), every formulation, Jacobian blocks and
// residuals over many scales, shifts c from 0.1 to 1e6, dropped constraint rows differing from lane to
// lane, and members whose matrix is singular (a constraint row of zeros, not dropped) or not finite.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/simd/newton_matrix_test.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "lockstep/model/andrews.hpp"
#include "lockstep/model/knife_edge.hpp"
#include "lockstep/simd/newton_matrix_inl.hpp"
#include "tests/simd/lane_widths_inl.hpp"

#ifndef LOCKSTEP_NEWTON_MATRIX_TEST_COMMON_
#define LOCKSTEP_NEWTON_MATRIX_TEST_COMMON_
namespace lockstep::simd_test {
// A layout with holonomic and non-holonomic rows both (no built-in model has them together): what the
// Newton matrix reads of a model is its sizes.
struct holonomic_and_velocity_rows {
  static constexpr int n = 4, m = 2, k = 1;
};

// The residual's parts, for the loops that copy them part by part (the blocks: euler_lagrange.hpp).
#define LOCKSTEP_EACH_RESIDUAL_PART(X) X(Fq) X(Fv) X(Fphi) X(Fpsi) X(Fa)

template <class Model>
struct newton_case {
  jacobian_blocks<Model> J;
  residual_parts<Model> r;
  double c;
};
template <class Model>
struct newton_result {
  static constexpr int size = state_layout<Model>::newton_size, ny = state_layout<Model>::size;
  double entries[size * size];  // assembled, before the factorization
  double factors[size * size], pivot[size], info, column;
  double increment[ny];  // dq, dv, dlambda, dmu, dnu
};
}  // namespace lockstep::simd_test
#endif

HWY_BEFORE_NAMESPACE();
namespace lockstep::simd_test::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
namespace sl = lockstep::simd::HWY_NAMESPACE;

// The Newton matrices and increments of `count` members (a multiple of W) in packs of W lanes.
template <class Model, size_t W>
HWY_NOINLINE bool newton_at_width(formulation f, const newton_case<Model>* in, newton_result<Model>* out,
                                  size_t count) {
  using D = hn::CappedTag<double, W>;
  using P = sl::pack<D>;
  using R = newton_result<Model>;
  constexpr int size = R::size;
  const D d;
  const hn::RebindToSigned<D> di;
  if (hn::Lanes(d) != W) return false;
  for (size_t first = 0; first < count; first += W) {
    const auto gather = [&](auto get) { return P(gather_lanes(d, in + first, get)); };
    jacobian_values<Model, P> J;
#define LOCKSTEP_GATHER_BLOCK(B) \
  for (size_t e = 0; e < std::size(J.B.a); ++e) J.B.a[e] = gather([e](const newton_case<Model>& c) { return c.J.B.a[e]; });
    LOCKSTEP_EACH_JACOBIAN_BLOCK(LOCKSTEP_GATHER_BLOCK)
#undef LOCKSTEP_GATHER_BLOCK
    residual_parts<Model, P> r;
#define LOCKSTEP_GATHER_PART(F) \
  for (size_t e = 0; e < std::size(r.F.a); ++e) r.F.a[e] = gather([e](const newton_case<Model>& c) { return c.r.F.a[e]; });
    LOCKSTEP_EACH_RESIDUAL_PART(LOCKSTEP_GATHER_PART)
#undef LOCKSTEP_GATHER_PART
    HWY_ALIGN int64_t bits[W];
    for (size_t l = 0; l < W; ++l) bits[l] = static_cast<int64_t>(in[first + l].J.dropped);
    const sl::dropped_lanes<D> dropped{hn::Load(di, bits)};
    const P c = gather([](const newton_case<Model>& x) { return x.c; });

    mat<P, size, size> entries;
    lockstep::detail::newton_matrix_entries<Model, P>(f, J, dropped, c, entries);
    sl::newton_matrix_lanes<Model, D> N;
    const basic_factor_result<P> factored = sl::factor_newton_matrix<Model>(f, J, dropped, c, N);
    lockstep::vec<P, Model::n> dq, dv;
    lockstep::vec<P, Model::m> dl, dm;
    lockstep::vec<P, Model::k> dn;
    // The solve gets a failed lane's blocks as zeros, as the corrector's lanes do (only finite values
    // enter their arithmetic: lockstep/method/corrector_generic.inc), where its member alone stops.
    const auto failed = hn::Ne(factored.info.v, hn::Set(d, double(lu_ok)));
    jacobian_values<Model, P> J_solved = J;
#define LOCKSTEP_CLEAR_FAILED(B) \
  for (auto& x : J_solved.B.a) x = P(hn::IfThenZeroElse(failed, x.v));
    LOCKSTEP_EACH_JACOBIAN_BLOCK(LOCKSTEP_CLEAR_FAILED)
#undef LOCKSTEP_CLEAR_FAILED
    sl::solve_newton<Model>(f, J_solved, dropped, N, r, dq, dv, dl, dm, dn);

    HWY_ALIGN double lanes[W];
    const auto scatter = [&](P x, auto put) {
      hn::Store(x.v, d, lanes);
      for (size_t l = 0; l < W; ++l) put(out[first + l], lanes[l]);
    };
    for (int e = 0; e < size * size; ++e) {
      scatter(entries.a[e], [e](R& o, double x) { o.entries[e] = x; });
      scatter(N.lu.a[e], [e](R& o, double x) { o.factors[e] = x; });
    }
    for (int i = 0; i < size; ++i) scatter(N.pivot[i], [i](R& o, double x) { o.pivot[i] = x; });
    scatter(factored.info, [](R& o, double x) { o.info = x; });
    scatter(factored.column, [](R& o, double x) { o.column = x; });
    int j = 0;
    for (const auto* part : {&dq, &dv})
      for (int i = 0; i < Model::n; ++i, ++j) scatter((*part)[i], [j](R& o, double x) { o.increment[j] = x; });
    for (const auto* part : {&dl, &dm})
      for (int i = 0; i < Model::m; ++i, ++j) scatter((*part)[i], [j](R& o, double x) { o.increment[j] = x; });
    for (int i = 0; i < Model::k; ++i, ++j) scatter(dn[i], [j](R& o, double x) { o.increment[j] = x; });
  }
  return true;
}

#define LOCKSTEP_NEWTON_MATRIX_TEST_ENTRY(NAME, MODEL)                                                          \
  bool NAME(formulation f, const newton_case<MODEL>* in, newton_result<MODEL>* out, size_t count, size_t lanes) { \
    return at_lane_width(lanes, [&](auto w) { return newton_at_width<MODEL, decltype(w)::value>(f, in, out, count); }); \
  }
LOCKSTEP_NEWTON_MATRIX_TEST_ENTRY(NewtonAndrews, lockstep::models::andrews)
LOCKSTEP_NEWTON_MATRIX_TEST_ENTRY(NewtonKnifeEdge, lockstep::models::knife_edge)
LOCKSTEP_NEWTON_MATRIX_TEST_ENTRY(NewtonMixedRows, lockstep::simd_test::holonomic_and_velocity_rows)
}  // namespace lockstep::simd_test::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <gtest/gtest.h>

#include <cfenv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "hwy/targets.h"
#include "tests/simd/every_variant.hpp"

namespace lockstep::simd_test {
HWY_EXPORT(NewtonAndrews);
HWY_EXPORT(NewtonKnifeEdge);
HWY_EXPORT(NewtonMixedRows);

namespace {

// One member: blocks over many scales (the mass matrix's diagonal kept away from zero, as a mass
// matrix's is), some constraint rows dropped; one member in eight with a constraint row of zeros that
// is not dropped (a singular matrix), one in sixteen with a NaN or infinite entry.
template <class Model>
newton_case<Model> draw(std::mt19937_64& g) {
  constexpr int n = Model::n, rows = Model::m + Model::k;
  std::uniform_real_distribution<double> s(-1, 1);
  newton_case<Model> c{};
  const auto value = [&] { return s(g) * log_uniform(g, 1e-4, 1e2); };
#define LOCKSTEP_DRAW_BLOCK(B) \
  for (double& x : c.J.B.a) x = value();
  LOCKSTEP_EACH_JACOBIAN_BLOCK(LOCKSTEP_DRAW_BLOCK)
#undef LOCKSTEP_DRAW_BLOCK
  for (int i = 0; i < n; ++i) c.J.M(i, i) = log_uniform(g, 1e-1, 1e3);
#define LOCKSTEP_DRAW_PART(F) \
  for (double& x : c.r.F.a) x = s(g) * log_uniform(g, 1e-12, 1e0);
  LOCKSTEP_EACH_RESIDUAL_PART(LOCKSTEP_DRAW_PART)
#undef LOCKSTEP_DRAW_PART
  c.c = log_uniform(g, 1e-1, 1e6);
  c.J.dropped = (g() % 3 == 0) ? g() & ((uint64_t{1} << rows) - 1) : 0;
  const unsigned kind = g() % 16;
  if (kind < 2) {  // a constraint row of zeros, kept
    const int row = int(g() % rows);
    c.J.dropped &= ~(uint64_t{1} << row);
    for (int j = 0; j < n; ++j) {
      if (row < Model::m) c.J.G(row, j) = c.J.Psi_q(row, j) = c.J.Psi_v(row, j) = 0.0;
      else c.J.A(row - Model::m, j) = c.J.A_q(row - Model::m, j) = c.J.A_v(row - Model::m, j) = 0.0;
    }
  } else if (kind == 2) {  // an entry not finite
    const double bad = (g() % 2) ? std::numeric_limits<double>::quiet_NaN() : -std::numeric_limits<double>::infinity();
    const int i = int(g() % n), j = int(g() % n);
    ((g() % 2) ? c.J.K(i, j) : c.J.M(i, j)) = bad;
  }
  return c;
}

// What euler_lagrange.hpp gives the member alone.
template <class Model>
newton_result<Model> alone(formulation f, const newton_case<Model>& c) {
  using L = state_layout<Model>;
  newton_result<Model> o{};
  newton_matrix<Model> N;
  detail::fill_newton_matrix<Model, double>(f, c.J, c.c, N);
  for (int e = 0; e < L::newton_size * L::newton_size; ++e) o.entries[e] = N.lu.a[e];
  const factor_result fr = lu_factor(N.lu, N.pivot);
  o.info = fr.info;
  o.column = fr.column;
  if (fr.info != lu_ok) return o;
  for (int e = 0; e < L::newton_size * L::newton_size; ++e) o.factors[e] = N.lu.a[e];
  for (int i = 0; i < L::newton_size; ++i) o.pivot[i] = N.pivot[i];
  vec<double, Model::n> dq, dv;
  vec<double, Model::m> dl, dm;
  vec<double, Model::k> dn;
  solve_newton<Model, double>(f, c.J, N, c.r.Fq, c.r.Fv, c.r.Fphi, c.r.Fpsi, c.r.Fa, dq, dv, dl, dm, dn);
  int j = 0;
  for (const auto* part : {&dq, &dv})
    for (int i = 0; i < Model::n; ++i) o.increment[j++] = (*part)[i];
  for (const auto* part : {&dl, &dm})
    for (int i = 0; i < Model::m; ++i) o.increment[j++] = (*part)[i];
  for (int i = 0; i < Model::k; ++i) o.increment[j++] = dn[i];
  return o;
}

// The values of a lane's result that are defined: for a failed factorization only the entries, the
// status and the failing column (lu_inl.hpp: a failed lane's factors are not the scalar code's).
template <class Model>
std::vector<std::pair<std::string, double>> defined_values(const newton_result<Model>& o, bool factored) {
  using R = newton_result<Model>;
  std::vector<std::pair<std::string, double>> v;
  for (int e = 0; e < R::size * R::size; ++e)
    v.push_back({"entry (" + std::to_string(e / R::size) + ", " + std::to_string(e % R::size) + ")", o.entries[e]});
  v.push_back({"info", o.info});
  v.push_back({"column", o.column});
  if (!factored) return v;
  for (int e = 0; e < R::size * R::size; ++e) v.push_back({"factor " + std::to_string(e), o.factors[e]});
  for (int i = 0; i < R::size; ++i) v.push_back({"pivot " + std::to_string(i), o.pivot[i]});
  for (int i = 0; i < R::ny; ++i) v.push_back({"increment " + std::to_string(i), o.increment[i]});
  return v;
}

template <class Model, class Entry>
void expect_lanes_equal_scalar(const Entry& run, const char* model_name, uint64_t seed) {
  constexpr size_t count = 512;
  std::mt19937_64 g(seed);
  std::vector<newton_case<Model>> in(count);
  for (auto& c : in) c = draw<Model>(g);
  for (const formulation f :
       {formulation::index3, formulation::ggl, formulation::index1, formulation::projected_invariants}) {
    const std::string name = std::string("Newton matrix, ") + model_name + ", " + formulation_name(f);
    std::vector<newton_result<Model>> scalar(count);
    std::feclearexcept(FE_ALL_EXCEPT);
    for (size_t i = 0; i < count; ++i) scalar[i] = alone<Model>(f, in[i]);
    const int raised_alone = std::fetestexcept(FE_DIVBYZERO | FE_OVERFLOW | FE_INVALID);
    size_t factored = 0, singular = 0, not_finite = 0, dropped = 0;
    for (size_t i = 0; i < count; ++i) {
      factored += int(scalar[i].info) == lu_ok, singular += int(scalar[i].info) == lu_singular;
      not_finite += int(scalar[i].info) == lu_not_finite, dropped += int(scalar[i].info) == lu_ok && in[i].J.dropped != 0;
    }
    EXPECT_GT(factored, count / 2) << name;
    EXPECT_GT(singular, 0u) << name;
    EXPECT_GT(not_finite, 0u) << name;
    EXPECT_GT(dropped, 0u) << name;

    std::vector<newton_result<Model>> out;
    const size_t variants = expect_every_variant_equal(
        name, FE_DIVBYZERO | FE_OVERFLOW | FE_INVALID, raised_alone,
        [&](size_t lanes) {
          out.assign(count, newton_result<Model>{});  // nothing of the previous variant stays
          return run(f, in.data(), out.data(), count, lanes);
        },
        [&](const std::string& variant) {
          size_t differ = 0;
          for (size_t m = 0; m < count; ++m) {
            const bool ok = int(scalar[m].info) == lu_ok;
            const auto a = defined_values(out[m], ok), b = defined_values(scalar[m], ok);
            for (size_t i = 0; i < a.size(); ++i)
              if (!same_bits(a[i].second, b[i].second)) {
                if (differ++ == 0)
                  ADD_FAILURE() << name << ", " << variant << ": member " << m << " (dropped rows "
                                << in[m].J.dropped << "): " << a[i].first << " is " << a[i].second << ", alone "
                                << b[i].second;
                break;
              }
          }
          return differ;
        },
        1);  // one per build; tests/simd/pack_model_test.sh runs the builds for every instruction set
    std::printf("[ newton matrix ] %s: %zu members (%zu factored, %zu singular, %zu not finite), %zu variants equal\n",
                name.c_str(), count, factored, singular, not_finite, variants);
  }
}

TEST(SimdNewtonMatrix, AssemblyFactorsAndIncrementsInLanesAreTheMemberAlone) {
  expect_lanes_equal_scalar<models::andrews>(
      [](auto... a) { return HWY_DYNAMIC_DISPATCH(NewtonAndrews)(a...); }, "andrews", 11);
  expect_lanes_equal_scalar<models::knife_edge>(
      [](auto... a) { return HWY_DYNAMIC_DISPATCH(NewtonKnifeEdge)(a...); }, "knife edge", 12);
  expect_lanes_equal_scalar<holonomic_and_velocity_rows>(
      [](auto... a) { return HWY_DYNAMIC_DISPATCH(NewtonMixedRows)(a...); }, "2 holonomic and 1 velocity rows", 13);
}

}  // namespace
}  // namespace lockstep::simd_test
#endif  // HWY_ONCE
