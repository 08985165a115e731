// Shared test-data generation, comparison and timing helpers for the SIMD
// library evaluation. Pure standard C++; no library code copied.
#pragma once
#include <cfenv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

enum Fn { SIN, COS, TAN, EXP, LOG, SQRT, ATAN2, POW, ASIN, ACOS, ATAN, NFN };
static const char* kFnName[NFN] = {"sin",  "cos",   "tan", "exp",
                                   "log",  "sqrt",  "atan2", "pow",
                                   "asin", "acos",  "atan"};
static inline bool binary_fn(int f) { return f == ATAN2 || f == POW; }

static const size_t kN = size_t(1) << 20;  // 1,048,576 arguments / function

static inline double bits2d(uint64_t u) { double d; std::memcpy(&d, &u, 8); return d; }
static inline uint64_t d2bits(double d) { uint64_t u; std::memcpy(&u, &d, 8); return u; }

struct Rng {
  std::mt19937_64 g;
  explicit Rng(uint64_t s) : g(s) {}
  uint64_t u64() { return g(); }
  double uni(double lo, double hi) {  // uniform, deterministic
    double t = double(g() >> 11) * 0x1.0p-53;
    return lo + (hi - lo) * t;
  }
  // log-uniform magnitude in [2^e0, 2^e1), random mantissa
  double logu(int e0, int e1) {
    int e = e0 + int(g() % uint64_t(e1 - e0));
    double m = 1.0 + double(g() >> 12) * 0x1.0p-52;
    return std::ldexp(m, e);
  }
  double sgn() { return (g() & 1) ? -1.0 : 1.0; }
  // any finite positive double incl. subnormals (uniform over bit patterns)
  double anypos() {
    uint64_t u = g() % 0x7FF0000000000000ull;
    return bits2d(u);
  }
};

static const double kSpecials[] = {0.0, -0.0, INFINITY, -INFINITY, NAN,
                                   1.0, -1.0, 0x1p-1074, -0x1p-1074,
                                   0x1p-1022, 1.7976931348623157e308, 0.5, 2.0};

// Wide-range arguments, deterministic per function.
static void gen_wide(int f, std::vector<double>& a, std::vector<double>& b) {
  a.assign(kN, 0.0); b.assign(kN, 1.0);
  Rng r(1234567 + 977 * f);
  for (size_t i = 0; i < kN; ++i) {
    int c = int(r.u64() % 100);
    double x = 0, y = 1;
    switch (f) {
      case SIN: case COS: case TAN:
        if (c < 40) x = r.uni(-1e6, 1e6);
        else if (c < 60) x = r.sgn() * r.logu(-1000, 20);
        else if (c < 80) {  // near k*pi/2
          double k = double(int64_t(r.u64() % 1273240)) - 636620;  // |k*pi/2| <~ 1e6
          x = k * 1.5707963267948966;
          int64_t d = int64_t(r.u64() % 9) - 4;
          x = bits2d(d2bits(x) + d);
        } else if (c < 90) x = r.uni(-3.2, 3.2);
        else x = r.sgn() * r.logu(20, 1024);  // up to 1.8e308
        break;
      case EXP:
        if (c < 70) x = r.uni(-745.2, 709.8);
        else if (c < 90) x = r.uni(-1, 1);
        else if (c < 97) x = r.sgn() * r.logu(-1074, 0);
        else x = r.sgn() * r.logu(9, 1024);  // overflow / underflow
        break;
      case LOG: case SQRT:
        if (c < 70) x = r.anypos();
        else if (c < 85) x = r.uni(0.5, 2.0);
        else if (c < 95) x = r.logu(-1074, -1022);  // subnormal range
        else x = -r.anypos();
        break;
      case ATAN2:
        x = (r.u64() & 1 ? r.sgn() * r.logu(-1074, 1024) : r.uni(-10, 10));
        y = (r.u64() & 1 ? r.sgn() * r.logu(-1074, 1024) : r.uni(-10, 10));
        if (c < 3) x = r.sgn() * 0.0;
        else if (c < 6) y = r.sgn() * 0.0;
        else if (c < 8) x = r.sgn() * INFINITY;
        else if (c < 10) y = r.sgn() * INFINITY;
        break;  // a = y, b = x  (atan2(a, b))
      case POW:
        if (c < 40) { x = r.logu(-20, 20); y = r.uni(-50, 50); }
        else if (c < 55) { x = r.sgn() * r.logu(-20, 20); y = double(int(r.u64() % 201) - 100); }
        else if (c < 70) { x = r.logu(-1074, 1024); y = r.uni(-2, 2); }
        else if (c < 80) { x = 1.0 + r.uni(-1e-3, 1e-3); y = r.sgn() * r.logu(0, 40); }
        else if (c < 90) { x = r.uni(0, 4); y = r.uni(-1100, 1100); }
        else if (c < 95) { x = r.sgn() * r.uni(0, 10); y = r.uni(-10, 10); }  // neg x, non-int y -> NaN
        else { x = r.sgn() * (r.u64() & 1 ? 0.0 : INFINITY); y = r.uni(-3, 3); if (r.u64() & 1) y = std::round(y); }
        break;  // a = x, b = y
      case ASIN: case ACOS:
        if (c < 80) x = r.uni(-1, 1);
        else if (c < 90) x = r.sgn() * r.logu(-1074, 0);
        else if (c < 95) x = r.sgn() * (1.0 - r.logu(-53, -10));
        else x = r.sgn() * r.logu(0, 20);  // out of domain
        break;
      case ATAN:
        x = r.sgn() * r.logu(-1074, 1024);
        if (c < 40) x = r.uni(-10, 10);
        break;
    }
    if (f == ATAN2) { a[i] = y; b[i] = x; } else { a[i] = x; b[i] = y; }
  }
  // specials at the start (and their pairwise combos for binary fns)
  size_t ns = sizeof(kSpecials) / sizeof(double), k = 0;
  for (size_t i = 0; i < ns; ++i)
    for (size_t j = 0; j < ns; ++j, ++k) { a[k] = kSpecials[i]; b[k] = kSpecials[j]; }
}

// "Typical model" arguments for timing (moderate ranges).
static void gen_typical(int f, std::vector<double>& a, std::vector<double>& b, size_t n) {
  a.assign(n, 0.0); b.assign(n, 1.0);
  Rng r(99 + f);
  for (size_t i = 0; i < n; ++i) {
    switch (f) {
      case SIN: case COS: case TAN: a[i] = r.uni(-100, 100); break;
      case EXP: a[i] = r.uni(-50, 50); break;
      case LOG: case SQRT: a[i] = r.logu(-30, 30); break;
      case ATAN2: a[i] = r.uni(-10, 10); b[i] = r.uni(-10, 10); break;
      case POW: a[i] = r.uni(0.1, 10); b[i] = r.uni(-5, 5); break;
      case ASIN: case ACOS: a[i] = r.uni(-1, 1); break;
      case ATAN: a[i] = r.uni(-100, 100); break;
    }
  }
}

static double libm1(int f, double x, double y) {
  switch (f) {
    case SIN: return std::sin(x);
    case COS: return std::cos(x);
    case TAN: return std::tan(x);
    case EXP: return std::exp(x);
    case LOG: return std::log(x);
    case SQRT: return std::sqrt(x);
    case ATAN2: return std::atan2(x, y);
    case POW: return std::pow(x, y);
    case ASIN: return std::asin(x);
    case ACOS: return std::acos(x);
    case ATAN: return std::atan(x);
  }
  return 0;
}

// libm over an array; the switch is hoisted so the loop is a plain call loop.
template <double (*F)(double)>
static void loop1(const double* a, double* o, size_t n) { for (size_t i = 0; i < n; ++i) o[i] = F(a[i]); }
template <double (*F)(double, double)>
static void loop2(const double* a, const double* b, double* o, size_t n) { for (size_t i = 0; i < n; ++i) o[i] = F(a[i], b[i]); }
static double s_sin(double x) { return std::sin(x); }
static double s_cos(double x) { return std::cos(x); }
static double s_tan(double x) { return std::tan(x); }
static double s_exp(double x) { return std::exp(x); }
static double s_log(double x) { return std::log(x); }
static double s_sqrt(double x) { return std::sqrt(x); }
static double s_asin(double x) { return std::asin(x); }
static double s_acos(double x) { return std::acos(x); }
static double s_atan(double x) { return std::atan(x); }
static double s_atan2(double x, double y) { return std::atan2(x, y); }
static double s_pow(double x, double y) { return std::pow(x, y); }
static void libm_run(int f, const double* a, const double* b, double* o, size_t n) {
  switch (f) {
    case SIN: loop1<s_sin>(a, o, n); break;
    case COS: loop1<s_cos>(a, o, n); break;
    case TAN: loop1<s_tan>(a, o, n); break;
    case EXP: loop1<s_exp>(a, o, n); break;
    case LOG: loop1<s_log>(a, o, n); break;
    case SQRT: loop1<s_sqrt>(a, o, n); break;
    case ATAN2: loop2<s_atan2>(a, b, o, n); break;
    case POW: loop2<s_pow>(a, b, o, n); break;
    case ASIN: loop1<s_asin>(a, o, n); break;
    case ACOS: loop1<s_acos>(a, o, n); break;
    case ATAN: loop1<s_atan>(a, o, n); break;
  }
}

// ordered integer for ulp distance
static inline int64_t ordered(double d) {
  int64_t i = int64_t(d2bits(d));
  return i < 0 ? int64_t(0x8000000000000000ull) - i : i;
}

struct Cmp {
  size_t mism = 0;      // bitwise mismatches (NaN==NaN regardless of payload)
  size_t nanmism = 0;   // one NaN, other not
  double maxulp = 0;    // max |ulp| among non-NaN pairs
  size_t big = 0;       // pairs differing by > 1 ulp (non-NaN)
  size_t big4 = 0;      // pairs differing by > 4 ulp (non-NaN)
  size_t first_i = size_t(-1);
  size_t worst_i = 0;
};
static Cmp compare(const double* r, const double* s, size_t n) {
  Cmp c;
  for (size_t i = 0; i < n; ++i) {
    bool na = std::isnan(r[i]), nb = std::isnan(s[i]);
    if (na && nb) continue;
    if (na != nb) { ++c.mism; ++c.nanmism; if (c.first_i == size_t(-1)) c.first_i = i; continue; }
    if (d2bits(r[i]) == d2bits(s[i])) continue;
    ++c.mism;
    if (c.first_i == size_t(-1)) c.first_i = i;
    double u = std::fabs(double(ordered(r[i]) - ordered(s[i])));
    if (u > 1) ++c.big;
    if (u > 4) ++c.big4;
    if (u > c.maxulp) { c.maxulp = u; c.worst_i = i; }
  }
  return c;
}

static inline double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Times fn(a, b, out, n) and returns ns per element (min over repeats).
template <class F>
static double time_ns(F&& fn, const double* a, const double* b, double* o, size_t n, int reps = 7) {
  double best = 1e30;
  size_t inner = std::max<size_t>(1, (size_t(1) << 19) / n);
  for (int r = 0; r < reps; ++r) {
    double t0 = now_s();
    for (size_t k = 0; k < inner; ++k) {
      fn(a, b, o, n);
      asm volatile("" ::"r"(o) : "memory");
    }
    double t = (now_s() - t0) / double(inner * n) * 1e9;
    if (t < best) best = t;
  }
  return best;
}

static std::string fexc_str(int e) {
  std::string s;
  if (e & FE_INVALID) s += "INV ";
  if (e & FE_DIVBYZERO) s += "DIVZ ";
  if (e & FE_OVERFLOW) s += "OVF ";
  if (e & FE_UNDERFLOW) s += "UNF ";
  if (e & FE_INEXACT) s += "INX";
  if (s.empty()) s = "-";
  return s;
}

static unsigned read_mxcsr() { unsigned m; asm volatile("stmxcsr %0" : "=m"(m)); return m; }
