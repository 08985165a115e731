// lockstep/core/vector_math/math_inl.hpp — every elementary function of lockstep's vector math, for code that
// calls them on packs as models call sin, cos, exp, log, sqrt, atan2 and pow on doubles. Each function
// gives the same bits at every pack width and on every instruction set, within 1 ulp of the exact value
// (the bound measured by tests/simd for each is stated in its header), and C99 Annex F's special values.
// docs/SIMD.md says why lockstep has its own and how they were checked. Per-target header (Highway's
// foreach_target convention): include after hwy/highway.h, inside no namespace.
#include "lockstep/core/vector_math/asin_acos_inl.hpp"
#include "lockstep/core/vector_math/atan_inl.hpp"
#include "lockstep/core/vector_math/exp_inl.hpp"
#include "lockstep/core/vector_math/log_inl.hpp"
#include "lockstep/core/vector_math/pow_inl.hpp"
#include "lockstep/core/vector_math/sin_cos_inl.hpp"
#include "lockstep/core/vector_math/sqrt_inl.hpp"
#include "lockstep/core/vector_math/tan_inl.hpp"
