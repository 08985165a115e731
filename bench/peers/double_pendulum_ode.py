"""bench/peers/double_pendulum_ode.py — the double pendulum of lockstep's built-in model (m1 = m2 = L1 = L2
= 1, g = 9.81) as the ODE in its two angles, written once for the peers that integrate it
(diffrax_double_pendulum.py on JAX arrays, scipy_double_pendulum.py on Python floats): each passes its
own sine and cosine.

Lagrange's equations of tests/support/reference.hpp (double_pendulum_accel): with d = theta1 - theta2,

    (m1 + m2) L1 theta1'' + m2 L2 cos(d) theta2'' = -m2 L2 theta2'^2 sin(d) - (m1 + m2) g sin(theta1)
    L1 cos(d) theta1'' + L2 theta2''              =  L1 theta1'^2 sin(d) - g sin(theta2)

solved for the accelerations by Cramer's rule.
"""

G, L1, L2, M1, M2 = 9.81, 1.0, 1.0, 1.0, 1.0


def accelerations(th1, th2, w1, w2, sin, cos):
    """(theta1'', theta2'') at the angles (th1, th2) and their rates (w1, w2)."""
    d = th1 - th2
    cd, sd = cos(d), sin(d)
    a11, a12 = (M1 + M2) * L1, M2 * L2 * cd
    a21, a22 = L1 * cd, L2
    b1 = -M2 * L2 * w2 * w2 * sd - (M1 + M2) * G * sin(th1)
    b2 = L1 * w1 * w1 * sd - G * sin(th2)
    det = a11 * a22 - a12 * a21
    return (b1 * a22 - a12 * b2) / det, (a11 * b2 - a21 * b1) / det


def bobs(th1, th2, sin, cos):
    """The bobs' positions (x1, y1, x2, y2) at the angles (th1, th2), the pivot at the origin."""
    x1, y1 = L1 * sin(th1), -L1 * cos(th1)
    return x1, y1, x1 + L2 * sin(th2), y1 - L2 * cos(th2)
