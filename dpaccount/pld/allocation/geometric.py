"""One epoch of random allocation on geometric lattices of the likelihood ratio.

The law of S = Y_1 + … + Y_t (``epoch.py``: Y = dP/dQ of one step under Q,
the epoch's pair is that of S/t) for a heavy-tailed Y or few steps, where a linear
lattice of Y fails: a Gaussian with σ = 0.5 has Y up to e^{17} (the 1 − 10⁻¹⁴ P-quantile)
and most of its Q-mass below e^{−2}, so a linear step fine enough for the bulk cannot
reach the tail, and a step that reaches it puts nearly all of Y at 0 (the add
direction's atom at +∞ is Q(Y' = 0)^t). A geometric lattice (PLD_accounting's route,
arXiv 2602.17284 App. C, there rounding each sum up or down; here in the convex order, so
that one law serves both directions) resolves the loss log Y to η everywhere at
~ range/η points.

**Upper law (a mean-preserving spread).** Each cell (e_j, e_{j+1}] of Y sends its
Q-mass B to e_j and e_{j+1} keeping its mean A/B (``spread.spread_law`` on
these edges; (0, e_1] to 0 and e_1, the cell above the top to 0 and +∞). A sum of two
laws is spread the same way: each pair sum s = x + y of atoms falls in a cell
[E_k, E_{k+1}) of the next lattice and goes to its ends keeping its mean, weights
Σ w·(E_{k+1} − s)/span and Σ w·(s − E_k)/span (differences exact: Sterbenz). Spreads
are closed under independent sums, so S' ≥ S in the convex order (both directions'
δ only rise). Masses are rounded up, and the rounding of s = fl(x + y) (½ ulp, which
may cross an edge) is paid as in ``spread_law``: m·u·E_{k+1}/span on the four points
around each cell.

**Lower law (a contraction).** Each cell's Q-mass to its conditional mean A/B, and
each cell of pair sums to their mean Σ w·s/Σ w (Jensen: S'' ≤ S in the convex order,
both δ's only fall). The means are off-lattice floats: their relative error (κ, from
the cells' error bounds, then u per sum and the sums' (m + 4)u per mean) is carried
to the loss (``DiscretePair``'s ``log_err``). Masses are rounded down.

**The lattice of each sum.** S_k (k terms) is resolved to η_k = c·sd(log S_k), the
spread estimated as √log(1 + Var Y/k) (a log-normal's with S_k's relative variance);
atoms whose P- and Q-masses are both below ``_NEGLIGIBLE`` merge with their neighbours
(spread to the group's ends, or to its mean), so the far tails cost few points.
Binary powering: ⌊log₂ t⌋ squarings (the pairs i ≤ j) and at most as many products,
each O(n_a·n_b) with n ~ 2,000–5,000 (times and errors measured: benchmarks/README.md,
"Measurements behind constants in the code"). The error is second order in η (both
laws move by ~η²/4 of the loss's variance per sum).
"""
import math

import numpy as np

from ..grids.discretise import loss_range
from ..pairs.base import stacked_masses
from .spread import ratio_pair, spread_law
from .sum_law import TAIL
from ...numerics import ULP_OF_ONE as _U

_CHUNK = 1 << 20          # pair sums per numpy pass
_NEGLIGIBLE = 1e-22       # mass (P- and Q-) of a group of atoms merged into one cell
_RESOLUTION = 0.01        # η_k / sd(log S_k)
_MAX_ETA = 0.05           # the coarsest cells (log Y), whatever the spread
_POINTS = 4096            # cells across the range of log Y, at most (a tiny σ: coarser)
_CELLS = 1 << 15          # cells of a lattice of sums, at most (memory and time: ≲ _CELLS² pairs)


def _edges(lo, hi, eta):
    """0, lo, lo·e^η, … up to the first edge ≥ hi·(1 + 4u) (floats: the lattice is what they are)."""
    n = int(math.ceil(math.log(hi / lo) / eta)) + 2
    e = lo * np.exp(np.arange(n) * eta)
    e[0] = lo
    while e[-1] < hi * (1 + 4 * _U):
        e = np.append(e, e[-1] * math.exp(eta))
    return np.concatenate(([0.0], e))


def _bins(s, edges, lo, eta):
    """(k, E_k, E_{k+1}) of each s ≥ 0: the cell edges[k] ≤ s < edges[k+1] (k = 0: s = 0)."""
    k = np.floor((np.log(np.maximum(s, 0.5 * lo)) - math.log(lo)) / eta) + 1
    k = np.clip(k, 0, len(edges) - 2).astype(np.int64)
    lo_e, hi_e = edges[k], edges[k + 1]
    bad = np.flatnonzero((s < lo_e) | (s >= hi_e))
    for _ in range(4):  # the log's rounding: a step at most, settled against the edges themselves
        if not len(bad):
            return k, lo_e, hi_e
        sb, kb = s[bad], k[bad]
        kb = kb - ((sb < lo_e[bad]) & (kb > 0)) + (sb >= hi_e[bad])
        k[bad], lo_e[bad], hi_e[bad] = kb, edges[kb], edges[kb + 1]
        bad = bad[(sb < lo_e[bad]) | (sb >= hi_e[bad])]
    raise AssertionError("cells not found")  # pragma: no cover


def _pair_sums(xa, wa, xb, wb, edges, lo, eta, spread):
    """Per cell of ``edges``: (mass, Σ w·(s − E_k), Σ w·(E_{k+1} − s)) if ``spread``, else
    (mass, Σ w·s), over all pair sums s = xa_i + xb_j with weights wa_i·wb_j."""
    nb = len(edges) - 1
    out = [np.zeros(nb) for _ in range(3 if spread else 2)]
    same = xa is xb and wa is wb  # a square: the pairs i ≤ j, those off the diagonal twice (exact)
    rows = max(1, _CHUNK // max(len(xb), 1))
    for start in range(0, len(xa), rows):
        first = start if same else 0
        s = (xa[start:start + rows, None] + xb[None, first:]).ravel()
        w = wa[start:start + rows, None] * wb[None, first:]
        if same:
            w *= 2.0
            r, c = np.tril_indices(w.shape[0], 0, w.shape[1])
            w[r, c] = np.where(r == c, w[r, c] / 2.0, 0.0)
        w = w.ravel()
        k, lo_e, hi_e = _bins(s, edges, lo, eta)
        out[0] += np.bincount(k, weights=w, minlength=nb)
        if spread:
            out[1] += np.bincount(k, weights=w * (s - lo_e), minlength=nb)
            out[2] += np.bincount(k, weights=w * (hi_e - s), minlength=nb)  # its cell 0 unused
        else:
            out[1] += np.bincount(k, weights=w * s, minlength=nb)
    return out


def _lattice(xa, xb, eta):
    """(edges, lo, η) of the cells of the sums of atoms xa and xb (both sorted, ≥ 0)."""
    pos = np.concatenate((xa[xa > 0], xb[xb > 0]))
    lo = float(pos.min()) if len(pos) else 1.0  # only zeros (Y = 0 Q-almost surely): one cell
    hi = max(float(xa[-1] + xb[-1]) * (1 + 2 * _U), lo * (1 + 4 * _U))
    eta = max(eta, math.log(hi / lo) / _CELLS)
    return _edges(lo, hi, eta), lo, eta


def convolve_upper(a, b, eta):
    """The spread of the sum of two upper laws (positions, masses) onto a geometric lattice."""
    (xa, wa), (xb, wb) = a, b
    edges, lo, eta = _lattice(xa, xb, eta)
    m, d_lo, d_hi = _pair_sums(xa, wa, xb, wb, edges, lo, eta, True)
    gamma = (len(xa) * len(xb) + 8) * _U      # each cell's sums of non-negative terms
    span = np.diff(edges)
    w = np.zeros(len(edges))
    w[0] += m[0]                                   # 0 + 0 = 0 exactly
    w[1:-1] += d_hi[1:] / span[1:] * (1 + gamma)   # to E_k
    w[2:] += d_lo[1:] / span[1:] * (1 + gamma)     # to E_{k+1}
    # s = fl(x + y) is within u·s of the true sum, which may lie in the next cell or the one
    # before: its exact spread differs by ≤ m·u·E_{k+1}/span' on the four points around
    span3 = np.minimum(span[1:], np.minimum(np.append(span[2:], np.inf), np.append(np.inf, span[1:-1])))
    fuzz = m[1:] * 2 * _U * edges[2:] / span3
    for shift in (-1, 0, 1, 2):
        idx = np.arange(1, len(edges) - 1) + shift
        ok = (idx >= 1) & (idx < len(edges))
        np.add.at(w, idx[ok], fuzz[ok])
    return _compact_upper(edges, w * (1 + 4 * _U))


def convolve_lower(a, b, eta, kappa):
    """The contraction of the sum of two lower laws (each cell of sums to its mean):
    ((positions, masses), the positions' relative error bound)."""
    (xa, wa), (xb, wb) = a, b
    edges, lo, eta = _lattice(xa, xb, eta)
    m, moment = _pair_sums(xa, wa, xb, wb, edges, lo, eta, False)
    gamma = (len(xa) * len(xb) + 8) * _U
    live = m > 0
    m, moment = m[live], moment[live]
    x = moment / m
    x[~live[live]] = 0.0
    if live[0]:
        x[0] = 0.0  # the cell of s = 0
    # x + y errs by κ + u relative, the two sums by γ each, the division by u; then the merge's
    return _compact_lower((x, m * (1 - 3 * gamma))), kappa + 2 * gamma + 4 * _U + _merge_error(len(x))


def _groups(x, w, total_mean):
    """Group starts: atoms whose Q-mass and P-mass (w·x/mean) are both below ``_NEGLIGIBLE``
    merge while their sum stays below it; every other atom is its own group (0 too)."""
    nu = w * np.maximum(1.0, x / total_mean)
    heavy = (nu > _NEGLIGIBLE) | (x == 0)
    key = np.floor(np.cumsum(np.where(heavy, 0.0, nu)) / _NEGLIGIBLE)
    start = np.ones(len(x), bool)
    start[1:] = heavy[1:] | heavy[:-1] | (key[1:] != key[:-1])
    return np.flatnonzero(start)


def _compact_upper(x, w):
    """Drop empty points and spread each negligible group to its two ends (mean kept)."""
    live = w > 0
    x, w = x[live], w[live]
    mean = float(np.sum(x * w)) / max(float(w.sum()), 1e-300)
    starts = _groups(x, w, max(mean, 1e-300))
    ends = np.append(starts[1:], len(x)) - 1
    if len(starts) == len(x):
        return x, w
    lo, hi = x[starts], x[ends]
    size = (ends - starts + 1).astype(float)
    grp = np.repeat(np.arange(len(starts)), ends - starts + 1)
    span = np.where(hi > lo, hi - lo, 1.0)
    # differences to the ends err by u of x: padded by Σ w·u·x/span on each end
    pad = np.add.reduceat(w * x, starts) * 2 * _U / span
    up = np.add.reduceat(w * (x - lo[grp]), starts) / span * (1 + (size + 4) * _U) + pad
    down = np.add.reduceat(w * (hi[grp] - x), starts) / span * (1 + (size + 4) * _U) + pad
    single = hi == lo
    down = np.where(single, np.add.reduceat(w, starts), down)
    pos = np.concatenate((lo, hi[~single]))
    mass = np.concatenate((down, up[~single]))
    order = np.argsort(pos, kind="stable")
    pos, mass = pos[order], mass[order]
    keys = np.flatnonzero(np.diff(pos, prepend=-1.0))
    return pos[keys], np.add.reduceat(mass, keys) * (1 + 4 * _U)


def _merge_error(n):
    """The relative error of a mean of at most n positive terms (``_compact_lower``)."""
    return 2 * (n + 4) * _U


def _compact_lower(law):
    """Merge each negligible group into one atom at its mean (masses rounded down)."""
    x, w = law
    order = np.argsort(x, kind="stable")
    x, w = x[order], w[order]
    mean = float(np.sum(x * w)) / max(float(w.sum()), 1e-300)
    starts = _groups(x, w, max(mean, 1e-300))
    if len(starts) == len(x):
        return x, w
    size = np.diff(np.append(starts, len(x))).astype(float)
    m = np.add.reduceat(w, starts)
    pos = np.add.reduceat(w * x, starts) / np.where(m > 0, m, 1.0)
    return pos, m * (1 - (size + 4) * _U)


def _base_laws(pair, eta, low, top):
    """(upper law, lower law, κ of the lower positions, P(L = ∞) up, down) of Y on the edges
    e^low · e^{jη} up to e^top."""
    e = np.exp(low + np.arange(int(math.ceil((top - low) / eta)) + 1) * eta)
    cells = stacked_masses([pair], np.log(e), [len(e)], errors=True)
    w, p_up = spread_law(pair, np.concatenate(([0.0], e)), cells)
    big_a, big_b, err_a, err_b = (c[:-1] for c in cells)   # the top cell: dropped from the lower law
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = (err_a / big_a + err_b / big_b) * (1 + 1e-6) + 4 * _U
        ok = (big_a > err_a) & (big_b > err_b) & (rel <= 1e-9)
        mean = big_a / big_b
    (p_low, _), (q_low, _) = pair.end_bounds()
    x = np.concatenate(([0.0], mean[ok]))
    m = np.concatenate(([q_low], (big_b[ok] - err_b[ok]) * (1 - 4 * _U)))
    kappa = (float(rel[ok].max()) if ok.any() else 0.0) + _merge_error(len(x))
    live = m > 0
    return _compact_upper(np.concatenate(([0.0], e)), w), _compact_lower((x[live], m[live])), kappa, p_up, p_low


def _moments(pair):
    """(E_Q[Y], Var_Q(Y)) from coarse cells (Jensen: Σ A²/B ≤ E_P[Y], a resolution's guide)."""
    low, top = loss_range(pair, TAIL)
    e = np.exp(np.linspace(low, top, 2048))
    a, b = stacked_masses([pair], np.log(e), [len(e)])
    with np.errstate(divide="ignore", invalid="ignore"):
        second = float(np.sum(np.where(b > 0, a * a / b, 0.0)))
    mean = float(a.sum())
    return max(mean, 1e-12), max(second - mean * mean, 1e-12)


def _power(base, t, step):
    """base^{*t} by binary powering, ``step(a, b, k)`` the law of a sum of k terms."""
    result, rk, power, pk = None, 0, base, 1
    while True:
        if t & 1:
            result, rk = (power, pk) if result is None else (step(result, power, rk + pk), rk + pk)
        t >>= 1
        if not t:
            return result
        power, pk = step(power, power, 2 * pk), 2 * pk


def geometric_epoch_pairs(pair, t, resolution=_RESOLUTION):
    """(upper, lower) ``DiscretePair`` of one epoch of ``t`` steps of the remove-direction
    ``pair`` (module docstring)."""
    mean, var = _moments(pair)

    top = loss_range(pair, TAIL)[1]
    low = loss_range(pair, 1e-30)[0]

    def eta(k):
        return min(_MAX_ETA, resolution * math.sqrt(math.log1p(var / (k * mean * mean))))

    upper, lower, kappa, p_up, p_low = _base_laws(pair, max(eta(1), (top - low) / _POINTS), low, top)
    up = _power(upper, t, lambda a, b, k: convolve_upper(a, b, eta(k)))
    down = _power((lower, kappa), t, lambda a, b, k: convolve_lower(a[0], b[0], eta(k), max(a[1], b[1])))
    return _epoch(up, t, p_up, 0.0, "up"), _epoch(down[0], t, p_low, down[1], "low")


def _epoch(law, t, p_inf, rel, side):
    """The finite pair of S/t: atoms s with Q-mass q and P-mass q·s/t (``epoch.py``)."""
    x, q = law
    with np.errstate(divide="ignore"):
        log_q = np.log(q)
        log_ratio = np.log(x / t)   # x/t: ½ ulp, and the position's own error ``rel``
    return ratio_pair(log_q, log_ratio, rel, p_inf, f"allocation(t={t},geometric,{side})")
