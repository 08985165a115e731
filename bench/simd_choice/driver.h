// Generic measurement driver: a library program supplies a list of variants.
#pragma once
#include <algorithm>
#include <functional>
#include "common.h"

// run(f, a, b, out, n) -> false if function f is not provided by the variant.
using RunFn = bool (*)(int, const double*, const double*, double*, size_t);
struct Variant {
  std::string name;
  int width;
  RunFn run;
};

// Optional: exclude trig arguments with |x| > g_trig_limit from the ACC
// comparisons (both results set to NaN). Used for the own-math prototype only.
static double g_trig_limit = INFINITY;
static void trig_filter(int f, const double* a, double* o, size_t n) {
  if (!(f == SIN || f == COS || f == TAN) || std::isinf(g_trig_limit)) return;
  for (size_t i = 0; i < n; ++i) if (!(std::fabs(a[i]) <= g_trig_limit)) o[i] = NAN;
}

static void drive(const char* lib, std::vector<Variant>& vs, bool do_acc = true,
                  bool do_time = true) {
  std::vector<double> a, b, ref, pa, pb, po, back;
  std::vector<std::vector<double>> res(vs.size());
  std::vector<char> ok(vs.size());
  // deterministic permutation for the neighbour-dependence test
  std::vector<size_t> perm(kN);
  for (size_t i = 0; i < kN; ++i) perm[i] = i;
  std::mt19937_64 g(42);
  std::shuffle(perm.begin(), perm.end(), g);

  if (do_acc) {
    printf("# ACC[-typ] lib fn variant W | vsBase(first variant): mism maxulp | vsLibm: mism nanmism >1ulp >4ulp maxulp | neighbourDep mism\n");
    for (int pass = 0; pass < 2; ++pass)
    for (int f = 0; f < NFN; ++f) {
      const char* tag = pass ? "ACC-typ" : "ACC";
      if (pass == 0) gen_wide(f, a, b); else gen_typical(f, a, b, kN);
      ref.resize(kN);
      libm_run(f, a.data(), b.data(), ref.data(), kN);
      trig_filter(f, a.data(), ref.data(), kN);
      pa.resize(kN); pb.resize(kN); po.resize(kN); back.resize(kN);
      for (size_t i = 0; i < kN; ++i) { pa[i] = a[perm[i]]; pb[i] = b[perm[i]]; }
      int base = -1;
      for (size_t v = 0; v < vs.size(); ++v) {
        res[v].assign(kN, 0.0);
        ok[v] = vs[v].run(f, a.data(), b.data(), res[v].data(), kN);
        trig_filter(f, a.data(), res[v].data(), kN);
        if (!ok[v]) { printf("%s %s %s %s %d | n/a\n", tag, lib, kFnName[f], vs[v].name.c_str(), vs[v].width); continue; }
        if (base < 0) base = int(v);
        Cmp cb = compare(res[v].data(), res[base].data(), kN);
        Cmp cl = compare(res[v].data(), ref.data(), kN);
        size_t prevm = (v > 0 && ok[v - 1]) ? compare(res[v].data(), res[v - 1].data(), kN).mism : 0;
        // neighbour dependence
        size_t nd = 0;
        if (vs[v].width > 1) {
          vs[v].run(f, pa.data(), pb.data(), po.data(), kN);
          for (size_t i = 0; i < kN; ++i) back[perm[i]] = po[i];
          trig_filter(f, a.data(), back.data(), kN);
          nd = compare(back.data(), res[v].data(), kN).mism;
        }
        printf("%s %s %s %s %d | %zu %.0f | %zu %zu %zu %zu %.0f | %zu", tag, lib, kFnName[f],
               vs[v].name.c_str(), vs[v].width, cb.mism, cb.maxulp, cl.mism, cl.nanmism,
               cl.big, cl.big4, cl.maxulp, nd);
        printf(" | vsPrev %zu", prevm);
        if (cb.mism) {
          size_t i = cb.first_i;
          printf("   first-vs-base: x=%a y=%a got=%a base=%a", a[i], b[i], res[v][i], res[base][i]);
        }
        if (cl.maxulp > 1) {
          size_t i = cl.worst_i;
          printf("   worst-vs-libm: x=%a y=%a got=%a libm=%a", a[i], b[i], res[v][i], ref[i]);
        }
        printf("\n");
        fflush(stdout);
      }
    }
  }
  if (do_time) {
    const size_t n = 4096;
    std::vector<double> ta, tb, to(n);
    printf("# TIME lib fn variant W ns/elem (typical args, n=%zu, in-cache, min of 7)\n", n);
    for (int f = 0; f < NFN; ++f) {
      gen_typical(f, ta, tb, n);
      double tl = time_ns([&](const double* x, const double* y, double* o, size_t m) { libm_run(f, x, y, o, m); },
                          ta.data(), tb.data(), to.data(), n);
      printf("TIME %s %s glibc-scalar 1 %.3f\n", lib, kFnName[f], tl);
      for (auto& v : vs) {
        if (!v.run(f, ta.data(), tb.data(), to.data(), n)) continue;
        double t = time_ns([&](const double* x, const double* y, double* o, size_t m) { v.run(f, x, y, o, m); },
                           ta.data(), tb.data(), to.data(), n);
        printf("TIME %s %s %s %d %.3f\n", lib, kFnName[f], v.name.c_str(), v.width, t);
      }
      fflush(stdout);
    }
    // exception flags raised on typical (all-normal, in-domain) arguments
    printf("# FEXC lib fn variant flags-raised-on-typical-args (INEXACT ignored)\n");
    for (int f = 0; f < NFN; ++f) {
      gen_typical(f, ta, tb, n);
      std::feclearexcept(FE_ALL_EXCEPT);
      libm_run(f, ta.data(), tb.data(), to.data(), n);
      int e = std::fetestexcept(FE_ALL_EXCEPT) & ~FE_INEXACT;
      printf("FEXC %s %s glibc-scalar %s\n", lib, kFnName[f], fexc_str(e).c_str());
      for (auto& v : vs) {
        std::feclearexcept(FE_ALL_EXCEPT);
        if (!v.run(f, ta.data(), tb.data(), to.data(), n)) continue;
        e = std::fetestexcept(FE_ALL_EXCEPT) & ~FE_INEXACT;
        printf("FEXC %s %s %s %s\n", lib, kFnName[f], v.name.c_str(), fexc_str(e).c_str());
      }
    }
    printf("MXCSR after all runs: 0x%x (FTZ bit15=%d, DAZ bit6=%d)\n", read_mxcsr(),
           (read_mxcsr() >> 15) & 1, (read_mxcsr() >> 6) & 1);
  }
}
