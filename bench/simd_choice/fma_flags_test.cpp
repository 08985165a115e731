// Does -mno-fma / -ffp-contract stop FMA? Compile with -c and objdump:
// (commands and results: fma_flags_test_out.txt)
//   -mavx512f -mno-fma          -> f, h and even scalar k are fused (EVEX FMA)
//   -mavx512f -ffp-contract=off -> only f (explicit intrinsic) is fused
//   -std=c++20 -mfma            -> k fused (C++ default is -ffp-contract=fast)
#include <immintrin.h>
#ifdef __AVX512F__
__m512d f(__m512d a, __m512d b, __m512d c) { return _mm512_fmadd_pd(a, b, c); }
__m512d h(__m512d a, __m512d b, __m512d c) { return _mm512_add_pd(_mm512_mul_pd(a, b), c); }
#endif
double k(double a, double b, double c) { return a * b + c; }
