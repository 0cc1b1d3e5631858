"""The optimistic grid: a valid grid pair that the true pair dominates.

Its hockey-stick curve g(x), x = e^ε, is built *below* the exact curve δ(x)
with a second-order gap, the optimistic counterpart of Connect-the-Dots:

1. On a segment [x_j, x_{j+1}] the chord of the convex δ exceeds δ by at
   most the height of the triangle it forms with the tangents at the two
   ends, Δx(s_c − s_L)(s_R − s_c)/(s_R − s_L) (s_L, s_c, s_R: slopes of the
   left tangent, chord, right tangent; increasing in s_R, so the right
   derivative −Q(L > ε_{j+1}) may stand in for the left one). With the
   masses (A, B) of the open cell (ε_j, ε_{j+1}) this is
   (x_{j+1}B − A)(A − x_j B)/(Δx·B) ≤ Δx·B/4 (an atom at ε_{j+1} itself, which
   the pair reports through ``atom_masses``, is taken out of the closed cell). Lowering each point by the
   larger gap of its two segments puts the broken line through the lowered
   points below δ.
   After the last point the line drops, over one more grid step, to the
   mass at +∞ lowered by the last gap; from its lowest point on, the hull
   is replaced by the flat line at that height (still below it). Where the
   lowered points fall below P(L = ∞) itself (a coarse grid, a large atom
   in the top cell), the hull is cut where it meets that floor instead:
   δ ≥ P(L = ∞) everywhere, so the flat line stays below δ and the mass at
   +∞ is kept. The lower convex hull B of these
   points is below δ, and so is its linear extension to the left (a secant
   of a convex function lies below it outside its interval).
2. g = max(T, B, F) with T(x) = 1 − (1 − Q(L = −∞))·x, the tangent of δ at
   x = 0, and the floor F = P(L = ∞)(1 − margin): convex, below δ, g(0) = 1
   and every slope ≥ −1, so it is the curve of a valid pair. Its kinks are
   B's (grid points) and the two crossings with T and with F, which lie off
   the grid: their mass is moved
   down to the grid point below (moving loss down lowers every δ(ε)).
3. A valid pair below δ everywhere is dominated by the true pair
   (Blackwell; Zhu, Dong & Wang 2022), and domination survives
   composition: composed optimistic grids give rigorous lower bounds.

Numerics: near the bottom δ(x) = 1 − x + E(x) with E tiny, so points with
ε ≤ 0 are held as the excess E(x_j) = E_Q[(x_j − e^L)_+] (summed from the
bottom, non-negative terms), points with ε > 0 as δ(ε_j) (summed from the
top); each segment's slope is taken from the form that is accurate on it
(adding the linear 1 − x changes no kink). Points carry a relative margin
of 1e-10; slope jumps that rounding makes negative are dropped, and a
sliver (1e-12 + 4·n·u) of every mass is dropped against the rounding of the
telescoping sums (dropping mass only lowers δ, also after composition).
"""
import math

import numpy as np

from .grid import PLDGrid

_MARGIN = 1e-10
_U = np.finfo(float).eps


class _Curve:
    """Points of the curve in both forms: excess e = g − (1 − x) and g."""

    def __init__(self, x, e, g):
        self.x, self.e, self.g = x, e, g

    def slopes(self, keep):
        """Slopes of g between consecutive kept points, each from the form
        that is accurate on its segment (e − 1 where x ≤ 1, g beyond, where
        the slopes can be far smaller than u)."""
        x, i, k = self.x, keep[:-1], keep[1:]
        dx = x[k] - x[i]
        low = (self.e[k] - self.e[i]) / dx - 1.0
        high = (self.g[k] - self.g[i]) / dx
        return np.where(x[k] <= 1.0, low, high)


def _lower_hull(curve):
    """Indices of the lower convex hull: points above the segment joining
    their neighbours are removed, pass after pass (a point never on the
    hull stays off it)."""
    keep = np.arange(len(curve.x))
    while True:
        s = curve.slopes(keep)
        bad = np.nonzero(s[:-1] > s[1:])[0] + 1
        if len(bad) == 0:
            return keep
        bad = bad[np.append(True, np.diff(bad) > 1)]  # never two neighbours at once
        keep = np.delete(keep, bad)


def pair_to_lower_grid(pair, step, lo, hi):
    """The optimistic grid of ``pair`` on lo·step, …, (hi+1)·step (+ p_∞)."""
    eps = np.arange(lo, hi + 1) * step
    m = len(eps)
    if eps[-1] + step > 700 or eps[0] < -700:
        raise OverflowError("optimistic grids need losses within ±700")
    a, b = pair.masses(eps)                  # cells (−∞, ε₀], …, (ε_{m−1}, ∞)
    x = np.exp(eps)
    eps_end = eps[-1] + step
    x_end = math.exp(eps_end)
    q_ninf = pair.q_ninf
    q_le = np.cumsum(b)[:-1]                 # Q(−∞ < L ≤ ε_j)
    q_gt = np.cumsum(b[::-1])[::-1][1:]      # Q(L > ε_j)
    # excess E_j = Σ_{L ≤ ε_j} (x_j q − p) + x_j Q(L = −∞), from the bottom
    e_terms = np.maximum(x * b[:-1] - a[:-1], 0.0)
    e_terms[1:] += np.diff(x) * (q_le[:-1] + q_ninf)
    excess = np.cumsum(e_terms) + x[0] * q_ninf
    # δ_j from the top: δ_j = δ_{j+1} + (A − x_j B)_{cell j+1} + (x_{j+1} − x_j) Q(L > ε_{j+1})
    d_terms = np.maximum(a[1:] - x * b[1:], 0.0)
    d_terms[:-1] += np.diff(x) * q_gt[1:]
    delta = np.cumsum(d_terms[::-1])[::-1] + pair.p_inf
    # gaps of the segments [x_j, x_{j+1}] (the last one ends at x_end)
    # segment gaps: the height of the triangle between the chord and the end
    # tangents, (x_{j+1}B − A)(A − x_j B)/(Δx·B) for the cell's (A, B), with a
    # pad for rounding; the last segment, whose cell is unbounded, Δx·B/4
    # (an atom at a cell's right end is not inside the open cell: take it out)
    atom_p, atom_q = pair.atom_masses(eps)
    ca = np.maximum(a[1:-1] - atom_p[1:], 0.0)
    cb = np.maximum(b[1:-1] - atom_q[1:], 0.0)
    dx = np.diff(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        low_part = np.maximum(ca - x[:-1] * cb, 0.0)          # A − x_j B  ∈ [0, Δx B]
        high_part = np.maximum(x[1:] * cb - ca, 0.0)          # x_{j+1} B − A ∈ [0, Δx B]
        # (a ratio in [0, 1] first: the product of two tail masses underflows)
        tri = np.where(cb > 0, low_part * np.minimum(high_part / (dx * cb), 1.0), 0.0)
    pad = 64 * _U * (ca + x[1:] * cb)
    tri = np.minimum(tri * (1.0 + 64 * _U / step), dx * cb / 4.0) + pad
    # where δ reaches 0 at a segment's right end, lower only its left end, by
    # Δx(s_R − s_c) = A − x_j B (≥ the triangle; then δ ≥ its right tangent
    # covers the segment), so that the support's end stays on the grid
    zero_right = (delta[1:] == 0.0) & (delta[:-1] > 0.0)
    left_demand = np.where(zero_right, low_part * (1.0 + 64 * _U / step) + pad, tri)
    right_demand = np.where(zero_right, 0.0, tri)
    top_gap = (x_end - x[-1]) * b[-1] / 4.0
    lower_by = np.maximum(np.append(0.0, right_demand), np.append(left_demand, top_gap))
    gap = np.append(tri, top_gap)
    low = eps <= 0
    e_low = excess * (1 - _MARGIN) - lower_by
    g_high = delta * (1 - _MARGIN) - lower_by
    e = np.where(low, e_low, np.expm1(eps) + g_high)
    g = np.where(low, -np.expm1(eps) + e_low, g_high)
    g_end = pair.p_inf * (1 - _MARGIN) - gap[-1]
    curve = _Curve(np.append(x, x_end), np.append(e, math.expm1(eps_end) + g_end), np.append(g, g_end))
    slot = np.arange(m + 1)                                   # grid slots lo … hi+1
    keep = _lower_hull(curve)
    hx, he, hg, hslot = curve.x[keep], curve.e[keep], curve.g[keep], slot[keep]
    s = curve.slopes(keep)                                    # g-slopes between kept points
    probs = np.zeros(m + 1)

    def put_below(x_kink, mass):  # an off-grid kink: to the grid point at or below it
        if x_kink <= 0 or mass <= 0:
            return  # a kink at x = 0 carries no P-mass
        j = int(math.floor(math.log(x_kink) / step + 1e-9)) - lo
        probs[min(max(j, 0), m)] += mass

    # left: T has g-slope q_ninf − 1; B starts below T and crosses it once
    t_gap = he - q_ninf * hx                                  # B − T at the kept points (e-form)
    if t_gap[-1] < 0 or len(s) == 0:
        raise OverflowError("the grid does not reach above the tangent at 0")
    below_t = np.nonzero(t_gap < 0)[0]                        # B − T is convex: one last crossing
    k = int(below_t[-1]) + 1 if len(below_t) else 0
    s_left = s[k - 1] if k > 0 else s[0]
    x_anchor, gap_anchor = (hx[k - 1], t_gap[k - 1]) if k > 0 else (hx[0], t_gap[0])
    turn = s_left + 1.0 - q_ninf                              # slope jump T → B, ≥ 0
    if turn > 0:
        x_cross = x_anchor - gap_anchor / turn
        put_below(x_cross, x_cross * turn)
    hx, hg, hslot, s = hx[k:], hg[k:], hslot[k:], s[k:]
    # right: g must not rise: it stays flat from the first kept point after
    # which it would (g-slope ≥ 0); and it must not fall below the floor
    # P(L = ∞)(1 − margin) ≤ δ (0 without mass at +∞): cut there, flat beyond
    rising = np.nonzero(s >= 0.0)[0]
    last = int(rising[0]) if len(rising) else len(hx) - 1
    hx, hg, hslot, s = hx[:last + 1], hg[:last + 1], hslot[:last + 1], s[:last]
    floor = max(pair.p_inf * (1 - _MARGIN), 0.0)
    under = np.nonzero(hg <= floor)[0]
    if len(under):
        k = int(under[0])
        if k == 0:
            raise OverflowError("the curve reaches its floor before the grid: too coarse a grid")
        x_cut = hx[k - 1] - (hg[k - 1] - floor) / s[k - 1]    # g falls with slope s < 0
        put_below(x_cut, x_cut * -s[k - 1])
        hx, hslot, s = hx[:k], hslot[:k], s[:k]
        p_inf = floor
    else:
        s = np.append(s, 0.0)                                 # flat g after the last point
        p_inf = float(hg[-1])
    jumps = np.maximum(np.diff(np.append(s_left, s)), 0.0)  # at hx[i]: slope before → after
    np.add.at(probs, hslot, hx * jumps)
    # the sums above telescope to 1 only up to rounding: drop a sliver of mass
    keep_share = 1.0 - 1e-12 - 4 * m * _U
    return PLDGrid(step=step, offset=int(lo), probs=probs * keep_share, p_inf=p_inf * keep_share,
                   pessimistic=False)
