// lockstep/core/hd.hpp — the host/device marker every per-member function carries.
//
// Per-member mathematics is written once and compiled for the host (g++, serial and OpenMP backends)
// and for the device (nvcc, CUDA backend), so the code the CPU tests exercise is the code the GPU runs
// (DESIGN.md section 2). Outside nvcc the marker degrades to `inline`, as CUTLASS's CUTLASS_HOST_DEVICE
// does.
#pragma once

#if defined(__CUDACC__)
#define LOCKSTEP_HD __host__ __device__ inline
#define LOCKSTEP_DEVICE_COMPILE 1
#else
#define LOCKSTEP_HD inline
#define LOCKSTEP_DEVICE_COMPILE 0
#endif
