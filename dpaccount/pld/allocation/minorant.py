"""The lower (minorant) laws of an allocation epoch's Y on its linear lattice
(``epoch.py``: the call side for the remove direction, the put side for the
add direction).

``_call_minorant`` lowers the points (a_j, c(a_j)) of a call function
c(a) = E[(Y − a)_+] on the lattice a_j = j·h so that every chord of neighbouring points
lies below c: the lower convex hull H of the points is below c. A measure on the
lattice whose call function is

    c''(a) = max(H(a), F) − F,        F = max(min H, 0),

is below c (H − F ≤ H ≤ c where H ≥ F, and 0 ≤ c elsewhere). Its masses are H's slope
jumps up to the first point where H reaches F, and the slope before it there. Cutting
at F matters where H has a minimum inside the lattice (its last segments rising):
taken as slope jumps, a rise after the minimum is mass that no call function below c
carries (randomized response at ratio 4, an atom on a lattice point that the float edge
log a_j puts in the cell above: a lower law of mean 1.75). Where H falls below 0 (a
point lowered beyond its room, ``grids.lowering.least_over``) its crossing with 0
lies off the lattice: its mass goes down to the lattice point below (c'' only falls).
"""
import math

import numpy as np

from ..grids.lowering import least_over
from ...numerics import ULP_OF_ONE as _U

_SLIVER = 1e-12  # relative mass dropped from the lower law against the hull's rounding


def minorant_law(pair, h, n, cells, side="call"):
    """(Q-masses of Y'' at a_0 … a_n, P(L = ∞) rounded down): the call-side minorant
    (``side="call"``: c'' ≤ c) or the put-side one (``"put"``: p'' ≤ p, the call-side
    minorant of Z = a_n − Y, reflected) of the module docstring, each mass rounded down
    (``cells``: ``spread.ratio_cells(pair, h, n)``)."""
    (p_inf_low, _), (q_ninf_low, _) = pair.end_bounds()
    if side == "call":
        return _call_minorant(cells, h, n, q_ninf_low), p_inf_low
    big_a, big_b, err_a, err_b = cells
    top = n * h
    # Z's cells [a_{n−j−1}, a_{n−j}) from Y's (a_j, a_{j+1}]: Q-mass B, E_Q[Z; cell] = a_n·B − A; Y's
    # atom at 0 (L = −∞) is Z's at a_n; Y's top cell (Y > a_n) is dropped, so that Z's total
    # is at most Q(Y ≤ a_n) (p'' ≤ p beyond a_n asks that much)
    z_a = np.append(np.maximum(top * big_b[:n] - big_a[:n], 0.0)[::-1], top * q_ninf_low)
    z_b = np.append(big_b[:n][::-1], q_ninf_low)
    z_err_a = np.append((err_a[:n] + top * err_b[:n] + 4 * _U * (big_a[:n] + top * big_b[:n]))[::-1],
                        4 * _U * top * q_ninf_low)
    z_err_b = np.append(err_b[:n][::-1], 0.0)
    most = 1.0 - (big_b[n] + err_b[n]) * (1 + 4 * _U)
    # Y's edges err by κ·a_j ≤ κ(a_n)·a_n (a_n ≥ 1), Z's with them
    reach = 8 * _U * (1.0 + abs(math.log(top))) * max(top, 1.0)
    mass = _call_minorant((z_a, z_b, z_err_a, z_err_b), h, n, math.inf, most, reach)
    return mass[::-1].copy(), p_inf_low


def _call_minorant(cells, h, n, at_zero, most=1.0, reach=None):
    """The masses of a measure on a_j = j·h with call function below Y's (module docstring),
    total at most ``most``, at most ``at_zero`` of it at 0; ``reach``: how far below its lower
    edge a cell's values may lie (the float edges; by default κ_j·a_j)."""
    big_a, big_b, err_a, err_b = cells
    a = np.arange(n + 1) * h
    # c_j = Σ_{k≥j} (A_k − a_j B_k) = c_{j+1} + ℓ_j + h·Q(Y > a_{j+1}), non-negative terms; its
    # error ≤ Σ_{k≥j} (err_A + a_{k+1} err_B), (n + 8)u of the sums, and the float edges'
    # (a cell's values up to κ_k·a_k below a_k, counted a whole h above a_{k−1}: ≤ κ_k a_k B_k)
    q_gt = np.cumsum(big_b[::-1])[::-1]                       # Q(Y > a_j), j = 0..n
    ell = np.maximum(big_a[:n] - a[:n] * big_b[:n], 0.0)
    terms = np.append(ell + h * q_gt[1:], max(big_a[n] - a[n] * big_b[n], 0.0))
    c = np.cumsum(terms[::-1])[::-1]
    weight = np.append(a[1:], a[n])
    if reach is None:
        reach = 8 * _U * (1.0 + np.abs(np.log(np.maximum(a, h)))) * a
    err_c = np.cumsum((err_a + weight * err_b + reach * big_b)[::-1])[::-1] + (n + 8) * _U * c
    c_low = np.maximum(c - err_c, 0.0)
    g0 = float(c_low[0])
    # rooms above the lines g0 − a and 0 (a policy: the hull's slopes kept in [−1, 0] where
    # that is free; ``hull_masses`` makes any hull a valid call function)
    room = np.maximum(np.minimum(c_low - (g0 - a) - 4 * _U * (g0 + a + c_low), c_low), 0.0)
    # each segment's requests (c_L, c_R) with c_L/ℓ + c_R/r ≥ 1 for ℓ, r rounded up
    ell_up = ell + err_a[:n] + a[:n] * err_b[:n] + 4 * _U * (big_a[:n] + a[:n] * big_b[:n])
    r_up = np.maximum(a[1:] * big_b[:n] - big_a[:n], 0.0) + err_a[:n] + a[1:] * err_b[:n] \
        + 4 * _U * (big_a[:n] + a[1:] * big_b[:n])
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = np.where(ell_up + r_up > 0, ell_up * r_up / (ell_up + r_up), 0.0) * (1 + 8 * _U)
    # of the ways to meet c_L/ℓ + c_R/r ≥ 1, the one lowering the ends least beyond their rooms
    # (an atom on a lattice point whose log edge puts it in the cell above: ℓ ≈ 0, and
    # lowering the left end by ℓ costs nothing, where pinning it at its room 0 lowered the
    # right end by the whole r = h·B, far below 0)
    c_left, c_right = least_over(ell_up, r_up, tau, 0.0, room[:n], room[1:])
    d = np.zeros(n + 1)
    d[:n] = c_left
    d[1:] = np.maximum(d[1:], c_right)
    g = c_low - d - 4 * _U * c_low                             # the subtraction's rounding, down
    g[n] = min(g[n], 0.0)                                      # c'' = 0 from a_n on
    mass = hull_masses(a, g)
    # what is left of ``most`` to 0 (at most ``at_zero``); an excess (rooms broken by rounding)
    # off the lowest points (lowers c'')
    total = mass.sum() * (1 + (n + 4) * _U)
    mass[0] = min(max(most - total, 0.0), at_zero)
    excess = total - most
    if excess > 0:
        cut = np.minimum(np.cumsum(mass), excess * (1 + 4 * _U) + (n + 4) * _U)
        mass -= np.diff(np.concatenate(([0.0], cut)))
        mass = np.maximum(mass, 0.0)
    return mass * (1 - _SLIVER)


def hull_masses(a, g):
    """The masses on the lattice ``a`` (a_0 = 0 < a_1 = h < …; the mass at 0 left 0 for the
    caller) of the measure whose call function is max(H, F) − F (module docstring), H the
    lower hull of the points (a_j, g_j), F = max(min g, 0), each mass rounded down."""
    h = float(a[1])
    keep = lower_hull(a, g)
    x, y = a[keep], g[keep]
    s = np.diff(y) / np.diff(x)
    floor = max(float(y.min()), 0.0)
    under = np.flatnonzero(y < floor)
    k = int(under[0]) if len(under) else int(np.flatnonzero(y <= floor)[0])
    mass = np.zeros(len(a))
    if k == 0:  # H at its minimum at 0: no mass above 0
        return mass
    ys, sl = y[:k + 1], s[:k]
    # a jump's rounding: the slopes are differences of three points over ≥ h (≤ 8u of them / h)
    slack = 8 * _U * (np.abs(ys[:-2]) + 2 * np.abs(ys[1:-1]) + np.abs(ys[2:])) / h
    mass[keep[1:k]] = np.maximum(np.diff(sl) - slack, 0.0)
    top_mass = max(-float(sl[-1]) - 8 * _U * (abs(float(ys[-2])) + abs(float(ys[-1]))) / h, 0.0)
    if not len(under):  # the minimum at a lattice point: the top atom there
        mass[keep[k]] += top_mass
        return mass
    # the crossing x_{k−1} + f·(x_k − x_{k−1}), f = y_{k−1}/(y_{k−1} − y_k) ≥ f_down: its mass to
    # the lattice point at or below x_{k−1} + f_down·(x_k − x_{k−1})
    hi, lo = float(y[k - 1]), float(y[k])
    f_down = max((hi - 4 * _U * abs(hi)) / ((hi - lo) * (1 + 4 * _U)), 0.0)
    span = int(keep[k] - keep[k - 1])
    j = int(keep[k - 1]) + min(int(math.floor(f_down * span * (1 - 4 * _U))), span - 1)
    mass[j] += top_mass if j > 0 else 0.0  # at 0 it carries no call: dropped
    return mass


def lower_hull(x, y):
    """Indices of the lower convex hull of the points (x_j, y_j) (x increasing, both ends
    kept): a few vectorised passes drop reflex points, never two neighbours in one pass (each
    dropped point lies above the chord of its kept neighbours, so the polyline only moves
    down), then Andrew's monotone chain finishes on what is left (long runs of near-collinear
    points in a far tail need one pass per point otherwise)."""
    keep = np.arange(len(x))
    for _ in range(16):
        if len(keep) <= 2:
            return keep
        xs, ys = x[keep], y[keep]
        s = np.diff(ys) / np.diff(xs)
        reflex = np.flatnonzero(s[:-1] > s[1:]) + 1
        if not len(reflex):
            return keep
        first = np.ones(len(reflex), bool)
        first[1:] = np.diff(reflex) > 1           # of a run of reflex points, every other one
        run_start = np.maximum.accumulate(np.where(first, np.arange(len(reflex)), 0))
        keep = np.delete(keep, reflex[(np.arange(len(reflex)) - run_start) % 2 == 0])
    xs, ys, hull = x[keep].tolist(), y[keep].tolist(), []
    for i in range(len(xs)):
        while len(hull) >= 2 and ((ys[hull[-1]] - ys[hull[-2]]) * (xs[i] - xs[hull[-2]])
                                  >= (ys[i] - ys[hull[-2]]) * (xs[hull[-1]] - xs[hull[-2]])):
            hull.pop()  # the last kept point lies on or above the chord to this one
        hull.append(i)
    return keep[np.array(hull)]
