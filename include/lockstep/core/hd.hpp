// lockstep/core/hd.hpp — the host/device marker every per-member function carries.
//
// Per-member mathematics is written once and compiled for the host (g++, serial and omp backends)
// and for the device (nvcc, CUDA backend), so the code the CPU tests exercise is the code the GPU runs
// (docs/ARCHITECTURE.md section 2). Outside nvcc the marker degrades to `inline`, as CUTLASS's CUTLASS_HOST_DEVICE
// does.
#pragma once

// LOCKSTEP_HD_SHARED marks the few large one-member function templates (Jacobian blocks, projection,
// consistent initialization) that the parts of a model file's engine share as one explicit instance
// (lockstep/engine/one_member_instances.hpp) instead of each compiling its own. They are not declared
// `inline`: an explicit instantiation declaration does not keep a compiler from instantiating an inline
// function for inlining ([temp.explicit], ISO C++20 13.9.2 p10), and g++ does, which costs each part
// the compile time the sharing saves.
#if defined(__CUDACC__)
#define LOCKSTEP_HD __host__ __device__ inline
#define LOCKSTEP_HD_SHARED __host__ __device__
#define LOCKSTEP_DEVICE_COMPILE 1
#else
#define LOCKSTEP_HD inline
#define LOCKSTEP_HD_SHARED
#define LOCKSTEP_DEVICE_COMPILE 0
#endif

namespace lockstep {

// f() as a phase of its caller. With Separate in device code, a real call that nvcc never inlines
// (__noinline__): the phase's locals then live in the callee's frame only while it runs, and a
// thread's stack is its caller's frame plus the largest phase instead of the sum of every inlined
// phase, which is what nvcc 13 gives (measured with ptxas for chain<16>'s Jacobian, docs/GPU.md
// section 5.7; device_check.hpp makes the same choice). On the host, and without Separate, f is an
// ordinary inline call: the same operations on the same values either way, so results cannot differ.
#if defined(__CUDACC__)
template <class F>
__host__ __device__ __noinline__ void separate_phase(const F& f) {
  f();
}
#endif

template <bool Separate, class F>
LOCKSTEP_HD void phase(const F& f) {
#if defined(__CUDACC__)
  if constexpr (Separate) separate_phase(f);
  else f();
#else
  f();
#endif
}

}  // namespace lockstep
