// lockstep/multibody/outputs.hpp — what a mechanism reports at a saved state (a mechanism file's derived
// quantities, lockstep/stepper/quantities.hpp): a body's orientation as a unit quaternion or a planar
// angle, and a spatial force as the force and moment at a joint frame's origin in that frame's axes.
// On doubles: the quantities are evaluated after the solve, never differentiated. sqrt and atan2 are
// lockstep's (core/math.hpp), as everywhere in an engine (docs/ENGINE-ABI.md, rule 5).
#pragma once

#include "lockstep/core/hd.hpp"
#include "lockstep/core/math.hpp"
#include "lockstep/multibody/spatial.hpp"

namespace lockstep::multibody {

// The unit quaternion (w, x, y, z), w >= 0, of the rotation matrix R, by the largest of its four
// candidates' squares (Shepperd, "Quaternion from rotation matrix", J. Guidance and Control 1978):
// well conditioned for every rotation.
inline void quaternion_of(const mat3<double>& R, double* wxyz) {
  const double trace = R(0, 0) + R(1, 1) + R(2, 2);
  const double squares[4] = {1.0 + trace, 1.0 + 2.0 * R(0, 0) - trace, 1.0 + 2.0 * R(1, 1) - trace,
                             1.0 + 2.0 * R(2, 2) - trace};  // 4 w^2, 4 x^2, 4 y^2, 4 z^2
  int largest = 0;
  for (int i = 1; i < 4; ++i)
    if (squares[i] > squares[largest]) largest = i;
  const double s = 0.5 * sqrt(squares[largest]);  // the largest component
  const double f = 0.25 / s;
  double q[4];
  switch (largest) {
    case 0:
      q[0] = s, q[1] = f * (R(2, 1) - R(1, 2)), q[2] = f * (R(0, 2) - R(2, 0)), q[3] = f * (R(1, 0) - R(0, 1));
      break;
    case 1:
      q[0] = f * (R(2, 1) - R(1, 2)), q[1] = s, q[2] = f * (R(0, 1) + R(1, 0)), q[3] = f * (R(0, 2) + R(2, 0));
      break;
    case 2:
      q[0] = f * (R(0, 2) - R(2, 0)), q[1] = f * (R(0, 1) + R(1, 0)), q[2] = s, q[3] = f * (R(1, 2) + R(2, 1));
      break;
    default:
      q[0] = f * (R(1, 0) - R(0, 1)), q[1] = f * (R(0, 2) + R(2, 0)), q[2] = f * (R(1, 2) + R(2, 1)), q[3] = s;
  }
  const double sign = q[0] < 0.0 ? -1.0 : 1.0;  // q and -q are the same rotation: w >= 0
  for (int i = 0; i < 4; ++i) wxyz[i] = sign * q[i];
}

// The angle of a planar body's rotation about z, in (-pi, pi].
inline double planar_angle(const mat3<double>& R) { return atan2(R(1, 0), R(0, 0)); }

// The spatial force F (world coordinates, moment about the world origin) as the force and the moment
// about the origin of frame J, both in J's axes: force_xyz = R^T f, moment_xyz = R^T (n_O - o x f).
inline void force_in_frame(const force<double>& F, const frame<double>& J, double* force_xyz, double* moment_xyz) {
  const vec3<double> moment = F.moment - cross(J.p, F.linear);
  for (int i = 0; i < 3; ++i) {
    force_xyz[i] = J.R(0, i) * F.linear[0] + J.R(1, i) * F.linear[1] + J.R(2, i) * F.linear[2];
    moment_xyz[i] = J.R(0, i) * moment[0] + J.R(1, i) * moment[1] + J.R(2, i) * moment[2];
  }
}

}  // namespace lockstep::multibody
