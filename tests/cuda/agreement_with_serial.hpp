// tests/cuda/agreement_with_serial.hpp — how close the CUDA backend's positions must come to the serial
// backend's. They cannot be bitwise equal (another math library, contracted multiply-adds): the
// contract is agreement within 10 (atol + rtol |q|) on non-chaotic runs (docs/DESIGN-NOTES.md,
// "Determinism"), and within 1 (atol + rtol |q|) in a build with -DLOCKSTEP_CUDA_NO_FMAD=ON, whose
// kernels (and model files' device engines) round their products as the host does.
#pragma once

#include <cmath>

namespace lockstep::cuda_tests {

#if defined(LOCKSTEP_CUDA_NO_FMAD)
inline constexpr double device_tolerance_factor = 1.0;
#else
inline constexpr double device_tolerance_factor = 10.0;
#endif

// The largest |q_device - q_serial| allowed for a position whose serial value is q_serial, solved with
// rtol = atol = tol.
inline double device_position_bound(double tol, double q_serial) {
  return device_tolerance_factor * tol * (1.0 + std::abs(q_serial));
}

}  // namespace lockstep::cuda_tests
