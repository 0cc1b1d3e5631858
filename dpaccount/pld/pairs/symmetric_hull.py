"""The symmetric pair of two finite pairs: one pair dominating both, for replace-one.

Under replace-one (``relations.py``) each of a mechanism's pairs must dominate
every ordered neighbouring pair, both orders; ``symmetric_hull_pair`` builds
the tightest symmetric finite pair whose hockey-stick curve lies above two
given ones for ε ≥ 0 (Dong, Roth & Su 2022, §2.2: the trade-off
min(T(first), T(second))**). Used by the replace-one mechanisms and by subset
sampling.
"""
import math

import numpy as np

from .discrete_pair import DiscretePair
from ...numerics import ULP_OF_ONE as _U



def _lower_hull(x, y):
    """Indices of the lower convex hull of points sorted by x (monotone chain)."""
    keep = []
    for i in range(len(x)):
        while len(keep) >= 2:
            j, k = keep[-2], keep[-1]
            if (y[k] - y[j]) * (x[i] - x[j]) >= (y[i] - y[j]) * (x[k] - x[j]):
                keep.pop()  # k lies on or above the chord j–i
            else:
                break
        keep.append(i)
    return keep


def _prune(x, v, hull, rel=1e-12):
    """The hull's vertices less those whose removal raises the curve by at most
    ``rel`` of its value there (rounding noise: two curves that meet or run
    parallel leave kinks with slope jumps of a few ulps, and atoms of ~1e-15
    mass that make a grid planned from the loss variance absurdly fine).
    Removing a vertex replaces two segments by their chord (an interior one)
    or the last segment by the flat line at its left end (the last one): the
    curve only rises, so it stays above the target. Removed interior
    vertices are never adjacent, so each rise is measured against the
    original curve."""
    keep, k, last = [hull[0]], 1, len(hull) - 1
    while k <= last:
        i, j = keep[-1], hull[k]
        l = hull[min(k + 1, last)]
        rise = v[i] + (v[l] - v[i]) * (x[j] - x[i]) / (x[l] - x[i]) - v[j] if k < last else np.inf
        if rise <= rel * v[l]:  # v[l] ≤ the curve on [x_i, x_l] (non-increasing)
            keep.append(l)
            k += 2
        else:
            keep.append(j)
            k += 1
    # the flat line at v[i] from the last-but-one vertex on: the curve is ≥ v[last] everywhere
    if len(keep) > 1 and v[keep[-2]] - v[keep[-1]] <= rel * v[keep[-1]]:
        keep.pop()
    return keep


def symmetric_hull_pair(first, second):
    """A symmetric finite pair S whose curve dominates both finite pairs for ε ≥ 0.

    Under replace-one, a pair dominating every ordered neighbouring pair for
    ε ≥ 0 dominates for ε < 0 too once symmetrised (swap identity applied to
    (D', D)); with ``second`` = reverse(``first``) (binomial) this S is the
    tight replace-one pair, min(T(first), T(second))** (Dong, Roth & Su
    2022, §2.2), up to the rounding pad below, and S × S × … stays sound under
    composition, where per-direction products would miss mixed orders.

    In x = e^ε ≥ 1 the target M(x) = max(H_first, H_second) is convex and piecewise
    linear, its kinks at the atoms and at the crossings of the two curves.
    At those points M is evaluated rounded up, made non-increasing (suffix
    maximum) and replaced by its lower convex hull: a convex combination of
    points above the convex M stays above it, so the hull does. Its kinks
    X_k become atoms ℓ_k = log X_k with Q-mass q_k = the slope jump and
    P-mass X_k q_k; the hull's last value is the mass at +∞ (the float
    error of rebuilding the curve is covered as the code says); the mirror image gives
    ℓ < 0 and −∞, and the rest goes to L = 0 (ValueError if the masses
    exceed 1: no symmetric pair lies above both curves).

    The hull is not ``tight``: at each ε its curve is one of the two pairs',
    but a composition of hulls lies above every composition of the pairs
    themselves. Its ``witnesses`` are ``first`` and ``second`` (the adversary
    picks one per use: a query that moves up or down), whence the lower end of
    a certified interval (``pld/profiles/attained.py``)."""
    kinks = np.unique(np.concatenate(([0.0], first.atoms[0], second.atoms[0])))
    kinks = kinks[kinks >= 0]
    if kinks[-1] > 700:
        raise ValueError(f"losses up to {kinks[-1]:.4g} leave the float range of e^loss")
    d = first.delta(kinks) - second.delta(kinks)
    cross = np.flatnonzero(d[:-1] * d[1:] < 0)
    x = np.exp(kinks)
    xc = x[cross] + d[cross] / (d[cross] - d[cross + 1]) * (x[cross + 1] - x[cross])
    x = np.sort(np.concatenate((x, xc)))
    # points closer than 1e-9 relative only add rounding noise to the slopes;
    # dropping any point leaves the hull a chord of M over a longer span (still above)
    x = x[np.concatenate(([True], x[1:] > x[:-1] * (1 + 1e-9)))]
    ell = np.log(x)
    v = np.maximum(first.delta(ell), second.delta(ell))          # rounded up
    v = np.maximum.accumulate(v[::-1])[::-1]                      # non-increasing
    hull = _prune(x, v, _lower_hull(x, v))
    X, V = x[hull], v[hull]
    s = np.append(np.diff(V) / np.diff(X), 0.0)                   # slopes, then flat
    q = np.maximum(np.diff(s), 0.0)                               # slope jumps at X_1..X_K
    Xk = X[1:]
    p = Xk * q
    # Rebuilding the curve from the float q_k errs by ≤ ``slack``, and so does
    # storing each mass m as log m (exp∘log errs by u(1 + |log m|)m ≤ u(m + 1/e));
    # with a total mass above 1 (float) the masses are scaled down, erring by the
    # excess. For ε ≥ 0 all of it is covered by mixing in η of the fully revealing
    # pair (+∞ under P, −∞ under Q), which lifts the curve by η(1 − H) ≥ η(1 − V_0)
    # = 2·slack. For ε < 0 (x = e^ε < 1) that lift is ≥ ηx(1 − V_0), and 2·slack
    # extra at L = 0 under both laws (no effect for ε ≥ 0) adds 2·slack·(1 − x):
    # together ≥ 2·slack again. Total masses may then exceed 1 by ~slack, which
    # only raises every δ (the product formula holds for non-negative measures).
    top = float(V[-1])
    total = p.sum() + q.sum() + top
    if total > 1 + 1e-9 or V[0] > 1 - 1e-6:
        raise ValueError(f"no symmetric pair dominates {first!r} and {second!r} for eps >= 0 "
                         f"(masses sum to {total!r}, total variation {V[0]!r})")
    slack = (16 * _U * (np.sum((np.abs(s[:-1]) + np.abs(s[1:])) * Xk) + p.sum() + 1.0)
             + (2 * len(p) + 3) * _U + max(total - 1, 0.0))
    eta = 2 * slack / (1 - V[0])
    keep = (1 - eta) / max(total, 1.0)
    p, q, top = p * keep, q * keep, top * keep + eta
    zero = max(1.0 - top - p.sum() - q.sum(), 0.0) + 2 * slack
    with np.errstate(divide="ignore"):
        lq, lp = np.log(q), np.log(p)  # not log q + log X_k: that errs by u·log X_k relative
        # ±∞: outcomes Q (resp. P) never takes; their exact mass is passed on as p_inf, q_ninf
        log_p = np.concatenate((lp, lq, [math.log(top), -np.inf, math.log(zero)]))
        log_q = np.concatenate((lq, lp, [-np.inf, math.log(top), math.log(zero)]))
    # no kink: every finite loss is 0, a multiple of any step (a grid planned from the
    # loss variance, which rounding makes ~1e-55 instead of 0, would be absurdly fine)
    return DiscretePair(log_p, log_q, lattice=None if len(p) else 1.0,
                        name=f"replace-one-hull({first.key()!r}, {second.key()!r})", p_inf=top, q_ninf=top,
                        witnesses=(((first, 1),), ((second, 1),)))
