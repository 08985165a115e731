// lockstep/core/elementary.hpp — the elementary functions the CPU computes with: lockstep's own vector
// math (lockstep/core/vector_math) at one lane, so that the one-member path gives every lane's bits of every
// pack width on every instruction set (docs/SIMD.md, "The vector math, as built"). The C library's
// functions differ from one library, version and instruction set to another, and from any vector
// kernel; these do not. core/math.hpp routes the models' sin, cos, ... on doubles here on the host (on
// a CUDA device they stay CUDA's: the GPU is not bitwise the CPU in any case, docs/DESIGN-NOTES.md,
// "Determinism").
//
// lockstep's library defines them (host/core/elementary.cpp), and each engine library defines its own
// copy by including lockstep/core/elementary_definitions.hpp in one of its translation units
// (docs/ENGINE-ABI.md, rule 5). sqrt, ldexp and floor are exact operations and need no such care.
#pragma once

namespace lockstep::elementary {

double sin(double x);
double cos(double x);
// sin x and cos x from one argument reduction: bitwise sin(x) and cos(x).
void sin_cos(double x, double* sine, double* cosine);
double tan(double x);
double asin(double x);
double acos(double x);
double atan(double x);
double atan2(double y, double x);
double exp(double x);
double log(double x);
double pow(double x, double y);

}  // namespace lockstep::elementary
