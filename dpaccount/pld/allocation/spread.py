"""One step's likelihood ratio Y = e^L of a base pair on the linear lattice a_j = j·h:
its cells (masses with error bounds), the spread law of Y' (each cell's mass split
to its two ends keeping the mean, rounded up) and the finite pair of an epoch's
sum from its Q-masses and ratios (Feldman & Shenfeld 2025; ``epoch.py``).
"""
import math

import numpy as np

from ..pairs.base import stacked_masses
from ..pairs.discrete_pair import DiscretePair
from ...numerics import ULP_OF_ONE as _U



def ratio_cells(pair, h, n, top=-math.inf):
    """(A, B, err_A, err_B) of Y = e^L in (0, a_1], (a_1, a_2], …, (a_n, ∞), a_j = j·h
    (the edges log a_j as floats: their rounding is paid in ``spread_law``); the last edge
    at least ``top`` (a_n = fl(e^top): np.log's rounding differs between numpy builds, and
    an atom at L = top belongs below a_n, not in the top cell)."""
    edges = np.log(np.arange(1, n + 1) * h)
    edges[-1] = max(edges[-1], top)
    return stacked_masses([pair], edges, [n], errors=True)


def spread_law(pair, a, cells):
    """(Q-masses of Y' at the points a_0 = 0 < a_1 < … < a_n, P(L = ∞) of the allocation): the
    spread, rounded up (``cells``: the pair's cells on the edges log a_1, …, log a_n)."""
    a_cell, b_cell, err_a, err_b = cells
    n = len(a) - 1
    span = np.diff(a)
    big_a, big_b, e_a, e_b = a_cell[:n], b_cell[:n], err_a[:n], err_b[:n]
    lo, hi = a[:n], a[1:]
    up = (big_a + e_a) - lo * np.maximum(big_b - e_b, 0.0) + 4 * _U * (big_a + lo * big_b)
    down = hi * (big_b + e_b) - np.maximum(big_a - e_a, 0.0) + 4 * _U * (big_a + hi * big_b)
    w = np.zeros(n + 1)
    w[:n] += np.maximum(down, 0.0) / span
    w[1:] += np.maximum(up, 0.0) / span
    # the edges fl(log a_j) err by ≤ 8u(1 + |log a_j|) (libm ≤ 4 ulp): a cell's values may lie
    # that far (relative) beyond [a_j, a_{j+1}], whose exact spread reaches a_{j−1} and a_{j+2}
    # with at most B·κ·a/span' more than the formula (span' the least of the three cells'):
    # padded on the four points around each cell
    kappa = 8 * _U * (1.0 + np.abs(np.log(np.maximum(a, a[1]))))
    span3 = np.minimum(span, np.minimum(np.append(span[1:], np.inf), np.append(np.inf, span[:-1])))
    fuzz = big_b * (kappa[:n] * lo + kappa[1:] * hi) / span3
    for shift in (-1, 0, 1, 2):
        idx = np.arange(n) + shift
        ok = (idx >= 0) & (idx <= n)
        np.add.at(w, idx[ok], fuzz[ok])
    (_, p_inf), (_, q_ninf) = pair.end_bounds()
    w[0] += q_ninf + b_cell[n] + err_b[n]   # Y = 0, and the top cell's Q-mass (extreme spread)
    w *= 1 + 8 * _U
    return w, (p_inf + a_cell[n] + err_a[n]) * (1 + 4 * _U)


def ratio_pair(log_q, log_ratio, rel, p_inf, name):
    """The ``DiscretePair`` of atoms with Q-masses e^{log q} and ratios e^{log ratio} = s/t (P-mass
    q·s/t), plus P(L = ∞): log p = log q + log(s/t), both logs ≤ 4 ulp, s/t ½ ulp (and a
    position's own relative error ``rel``), the sum ½ ulp."""
    finite = np.isfinite(log_ratio)
    err_q = 4 * _U * np.abs(log_q)
    err_p = err_q + 4 * _U * np.abs(np.where(finite, log_ratio, 0.0)) + 2 * _U + rel \
        + _U * np.abs(np.where(finite, log_q + log_ratio, 0.0))
    return DiscretePair(log_q + log_ratio, log_q, name=name, p_inf=p_inf if p_inf > 0 else None,
                        log_err=(err_p, err_q))
