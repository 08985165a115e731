"""Variance-based sensitivity indices (Sobol indices) from the A, B, A_B^(i) design, in NumPy.

For a model output f(x) of d independent inputs, the first-order index S_i = V[E(f | x_i)] / V(f) is
the share of the output variance that x_i explains alone, and the total-effect index
S_Ti = E[V(f | x_~i)] / V(f) the share that would remain if every input but x_i were known (x_i
alone and through all of its interactions). S_Ti - S_i > 0 means x_i interacts with others.

Both are estimated from two independent N x d sample matrices A and B and the d matrices A_B^(i),
which are A with column i taken from B: N (d + 2) model runs in all.

- First order, Saltelli et al., "Variance based sensitivity analysis of model output. Design and
  estimator for the total sensitivity index", Computer Physics Communications 181 (2010), table 2 (b):
      V_i  = 1/N sum_j f(B)_j (f(A_B^(i))_j - f(A)_j)
- Total effect, Jansen, "Analysis of variance designs for model output", Computer Physics
  Communications 117 (1999), as recommended in Saltelli et al. (2010), table 2 (f):
      VT_i = 1/(2N) sum_j (f(A)_j - f(A_B^(i))_j)^2

Both are divided by the variance of all 2N values of f(A) and f(B). The outputs are centred on the
mean of those 2N values first: the first-order estimator is unbiased for any shift of f (its difference
f(A_B^(i)) - f(A) has mean zero), but its variance grows with the square of the mean of f(B), so an
output with a large mean against its spread (a crank angle of 40 +- 13 rad) would need many times
more runs for the same interval. Centering changes no index in expectation (up to O(1/N)) and leaves
the total-effect estimator as it is.
"""

import numpy as np
from scipy.stats import qmc


def sample_matrices(n, d, seed=None):
    """A and B (each n x d, on the unit cube) from one scrambled Sobol sequence of dimension 2 d.

    Taking A and B as the two halves of one 2d-dimensional low-discrepancy sequence, rather than two
    sequences, keeps them independent of each other (different coordinates of the same points),
    which the estimators assume. n should be a power of 2 for the Sobol points to be balanced.
    """
    base = qmc.Sobol(d=2 * d, scramble=True, seed=seed).random(n)
    return base[:, :d], base[:, d:]


def ab_matrices(a, b):
    """The d matrices A_B^(i), stacked as an array [d, n, d]: A with column i replaced by B's."""
    n, d = a.shape
    ab = np.repeat(a[np.newaxis, :, :], d, axis=0)
    for i in range(d):
        ab[i, :, i] = b[:, i]
    return ab


def design(a, b):
    """Every point the estimators need, as one [(d + 2) n, d] array: A, then B, then A_B^(1..d).

    One array means one ensemble solve for the whole study; split_outputs undoes the stacking.
    """
    return np.concatenate([a, b, ab_matrices(a, b).reshape(-1, a.shape[1])])


def split_outputs(y, d):
    """f(A) [n], f(B) [n] and f(A_B^(i)) [d, n] from the outputs of the points of `design`."""
    y = np.asarray(y, dtype=float)
    n = y.shape[0] // (d + 2)
    if y.shape != (n * (d + 2),):
        raise ValueError(f"expected {d + 2} blocks of equal length, got {y.shape[0]} outputs")
    return y[:n], y[n:2 * n], y[2 * n:].reshape(d, n)


def indices(fa, fb, fab):
    """First-order (Saltelli 2010) and total-effect (Jansen 1999) indices, each an array [d]."""
    fa, fb, fab = np.asarray(fa), np.asarray(fb), np.asarray(fab)
    both = np.concatenate([fa, fb])
    mean, var = both.mean(), both.var()
    fa, fb, fab = fa - mean, fb - mean, fab - mean
    first = np.mean(fb * (fab - fa), axis=-1) / var
    total = 0.5 * np.mean((fa - fab) ** 2, axis=-1) / var
    return first, total


def bootstrap(fa, fb, fab, resamples=1000, confidence=0.95, seed=None):
    """Percentile bootstrap intervals of the indices: (low_S, high_S, low_ST, high_ST), each [d].

    The rows j of the design (one row of A, of B and of every A_B^(i) together) are resampled with
    replacement, so each resample is a design of the same structure. For a randomized QMC design
    this is a plain Monte Carlo view of the points, so it tends to overstate the error a little: an
    honest upper bound rather than an exact interval.
    """
    fa, fb, fab = np.asarray(fa), np.asarray(fb), np.asarray(fab)
    rng = np.random.default_rng(seed)
    n = fa.shape[0]
    s = np.empty((resamples, fab.shape[0]))
    st = np.empty_like(s)
    for r in range(resamples):
        j = rng.integers(0, n, n)
        s[r], st[r] = indices(fa[j], fb[j], fab[:, j])
    tail = 50.0 * (1.0 - confidence)
    lo_s, hi_s = np.percentile(s, [tail, 100.0 - tail], axis=0)
    lo_st, hi_st = np.percentile(st, [tail, 100.0 - tail], axis=0)
    return lo_s, hi_s, lo_st, hi_st

