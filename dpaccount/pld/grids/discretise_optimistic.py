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
   the pair reports through ``atom_masses``, is taken out of the closed cell).
   The line through the ends lowered by (c_L, c_R) passes below the apex,
   hence below δ on the segment, iff c_L/ℓ + c_R/r ≥ 1 with ℓ = A − x_j B,
   r = x_{j+1}B − A (ℓ + r = Δx·B; the height is ℓr/(Δx·B)). Each segment
   asks for the height at both ends, except where an end has less room than
   that above max(T, 0) (T below): that end is lowered by its room only and
   the other end by the rest, r(1 − c_L/ℓ) or ℓ(1 − c_R/r) (≤ Δx·B). Each
   point is lowered by the larger request of its two segments, so the broken
   line through the lowered points is below δ. Why the room matters: near
   the bottom of a loss with an edge (log(1−q) of a Poisson remove pair) δ
   is T itself, and a point lowered below T drags the convex curve below T
   all the way to x = 0 (g(0) = 1): a mean-loss bias of the whole lowering,
   first order in the step, where the same lowering inside the curve costs
   only its hat's weight Δx/x ≈ h. The same holds at the top, where δ
   reaches 0: a point lowered below 0 moves the end of the support down.
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
   x = 0, and the floor F = P(L = ∞)(1 − margin), both masses at ±∞ rounded
   down (``end_bounds()``: a finite pair computes them from logs that err, and
   a Q(L = −∞) too large raises T above δ): convex, below δ, g(0) = 1
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
of 1e-10 and are lowered by their cells' error bounds summed (``masses_of(…,
errors=True)``: ulps of |log Φ| at a Gaussian cell's ends, ``pld/pairs/log_cells.py``);
slope jumps that rounding makes negative are dropped, and a
sliver (1e-12 + 4·n·u) of every mass is dropped against the rounding of the
telescoping sums (dropping mass only lowers δ, also after composition).
"""
import math

import numpy as np

from ...lazy import lazy
from ...numerics import ULP_OF_ONE as _U
from .grid import PLDGrid
from .lowering import end_requests, point_room
from ..pairs.base import stacked_masses

optimize = lazy("scipy.optimize")

_MARGIN = 1e-10
_PASSES = 64  # vectorised passes of ``_convex`` before its monotone chain


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
    """Indices of the lower convex hull, in O(n): the hull's slopes are the
    isotonic (non-decreasing) regression of the segment slopes weighted by
    their widths (the greatest convex minorant; pool-adjacent-violators,
    ``scipy.optimize.isotonic_regression``), its vertices the ends of the
    pools. That is a first guess only, up to the rounding of the pooled
    means: points the guess dropped but that lie below its broken line are
    put back, and points above the segment joining their neighbours are
    removed, pass after pass, until neither happens (usually at once)."""
    n = len(curve.x)
    keep = np.arange(n)
    if n > 2:
        pools = optimize.isotonic_regression(curve.slopes(keep), weights=np.diff(curve.x)).blocks
        keep = np.unique(np.append(pools, n - 1))
    for _ in range(4):
        keep = _convex(curve, keep)
        below = _below(curve, keep)
        if not below.any():
            return keep
        keep = np.union1d(keep, np.nonzero(below)[0])
    return _convex(curve, np.arange(n))  # the guess does not settle: every pass from scratch


def _convex(curve, keep):
    """``keep`` less the points above the segment joining their neighbours,
    pass after pass (a point never on the hull stays off it); after ``_PASSES``
    passes Andrew's monotone chain on what is left, with the same slopes (a long
    run of near-collinear points loses one point in two per pass: O(n) passes
    of O(n), minutes for a million-point grid of a 1000-step allocation)."""
    for _ in range(_PASSES):
        s = curve.slopes(keep)
        bad = np.nonzero(s[:-1] > s[1:])[0] + 1
        if len(bad) == 0:
            return keep
        bad = bad[np.append(True, np.diff(bad) > 1)]  # never two neighbours at once
        keep = np.delete(keep, bad)
    x, e, g = (v[keep].tolist() for v in (curve.x, curve.e, curve.g))

    def slope(i, k):  # as ``_Curve.slopes`` (the same float operations)
        return (e[k] - e[i]) / (x[k] - x[i]) - 1.0 if x[k] <= 1.0 else (g[k] - g[i]) / (x[k] - x[i])
    hull = []
    for k in range(len(x)):
        while len(hull) >= 2 and slope(hull[-2], hull[-1]) > slope(hull[-1], k):
            hull.pop()  # the last kept point lies above the chord to this one
        hull.append(k)
    return keep[np.array(hull)]


def _below(curve, keep):
    """Which points not in ``keep`` lie below the broken line through it, each
    compared in the form the slopes use on its segment (e where x ≤ 1, else g),
    by more than the line's own rounding (and, where x ≤ 1, the ulp of the
    slope e-slope − 1 that ``_convex`` compares) plus 1e-13 of the line: the
    points are lowered by 1e-10 of themselves (``_MARGIN``), so a line that
    much above one is still below the exact curve."""
    x = curve.x
    seg = np.clip(np.searchsorted(x[keep], x, side="right") - 1, 0, len(keep) - 2)
    left, right = keep[seg], keep[seg + 1]
    low = x[right] <= 1.0
    value = np.where(low, curve.e, curve.g)
    dx, width = x - x[left], x[right] - x[left]
    slope = (value[right] - value[left]) / width
    line = value[left] + slope * dx
    slack = 4 * _U * (np.abs(value[left]) + np.abs(slope) * dx + np.where(low, dx, 0.0)) + 1e-13 * np.abs(line)
    below = value < line - slack
    below[keep] = False
    return below



def _atom_edges(eps, step, atom_p):
    """The cells' top edges: ε_j, or ε_j + η (η = 1e-6 of a step, at least 4e-12
    of max(1, |ε_j|), at most a quarter step) where the pair reports an atom at
    ε_j (``atom_masses``, within its tolerance), and which points those are.

    An atom computed a hair *above* its point (the rounding of a mapped edge:
    Poisson-subsampled randomized response, q = 1e-3) would otherwise sit in the
    next cell as a near-atom at its left end, whose triangle lowers the line
    there by the pads, below T or 0, a whole step's kink mass lost (an error
    first order in the step). With the edge a hair up, the cell
    (ε_{j−1}, ε_j + η] holds it, and its right-end atom is the one taken out.
    Sound whatever the cell holds above ε_j: the points' δ_j (summed from the
    top) leave that mass S out, its δ contribution A_S − x_j B_S ≥ 0 dropped
    (lower), and count it exactly at every point below; the excess E_i (from the
    bottom) takes the held cell's term x_j B − A unclipped: exact at every
    point above, lower by A_S − x_j B_S at x_j (clipped at 0, the term would
    overstate every E_i above by that). On [x_j, x_{j+1}] S's part of δ is
    convex and ≥ 0 while the points carry 0 of it; on [x_{j−1}, x_j] it is
    linear (S lies beyond x_j) and the chord's end at x_j only lower."""
    held = atom_p > 0
    edges = eps.copy()
    if held.any():
        eta = np.minimum(np.maximum(1e-6 * step, 4e-12 * np.maximum(1.0, np.abs(eps[held]))), step / 4)
        edges[held] += eta
    return edges, held


def pair_to_lower_grid(pair, step, lo, hi, split=True, shift=0.0):
    """The optimistic grid of ``pair`` on the losses lo·step + shift, …,
    (hi+1)·step + shift (+ p_∞), its point j at index j − lo (the grid's
    losses are those less ``shift``: ``accountant.optimistic_frame``).
    ``split``: a segment's lowering is split by the room each end has above
    max(T, 0) (``lowering.point_room``); else both ends take the triangle height, but for an
    end at 0 (the top of a bounded support), which keeps its place while the
    other end takes the rest (Laplace's atoms at ±ε₀ fare better so)."""
    eps = np.arange(lo, hi + 1) * step + shift
    m = len(eps)
    if eps[-1] + step > 700 or eps[0] < -700:
        raise OverflowError("optimistic grids need losses within ±700")
    # cells (−∞, ε₀], …, (ε_{m−1}, ∞), and bounds on their errors; a cell's top edge a hair
    # above a point that holds an atom (``_atom_edges``)
    atom_p, atom_q = pair.atom_masses(eps)
    edges, held = _atom_edges(eps, step, atom_p)
    a, b, err_a, err_b = stacked_masses([pair], edges, [m], errors=True)
    x = np.exp(eps)
    eps_end = eps[-1] + step
    x_end = math.exp(eps_end)
    # the masses at ±∞ rounded down (``end_bounds``): a lower δ at every point, and a lower
    # tangent T at 0 (its slope Q(L = −∞) − 1: a Q(L = −∞) too large raises T above the
    # exact curve's tangent, and max(T, B, F) above δ near x = 0)
    (p_inf, _), (q_ninf, _) = pair.end_bounds()
    q_le = np.cumsum(b)[:-1]                 # Q(−∞ < L ≤ ε_j)
    q_gt = np.cumsum(b[::-1])[::-1][1:]      # Q(L > ε_j)
    # excess E_j = Σ_{L ≤ ε_j} (x_j q − p) + x_j Q(L = −∞), from the bottom
    e_terms = x * b[:-1] - a[:-1]
    e_terms = np.where(held, e_terms, np.maximum(e_terms, 0.0))  # a held cell's: ``_atom_edges``
    e_terms[1:] += np.diff(x) * (q_le[:-1] + q_ninf)
    excess = np.cumsum(e_terms) + x[0] * q_ninf
    # δ_j from the top: δ_j = δ_{j+1} + (A − x_j B)_{cell j+1} + (x_{j+1} − x_j) Q(L > ε_{j+1})
    d_terms = np.maximum(a[1:] - x * b[1:], 0.0)
    d_terms[:-1] += np.diff(x) * q_gt[1:]
    delta = np.cumsum(d_terms[::-1])[::-1] + p_inf
    # the cells' errors: each term max(·, 0) above exceeds its exact value (≥ 0) by at most its
    # own error bound, each Δx·Q term by Δx times Q's, so the excess errs up by at most
    # Σ_{k≤j} err_A + x_j Σ_{k≤j} err_B (the x-weights telescope to x_j), δ_j by at most
    # Σ_{k>j} (err_A + (2x_{k−1} − x_j) err_B) ≤ Σ_{k>j} (err_A + 2x_{k−1} err_B)
    # (a sum of n bounds rounds by ≤ n·u of itself, within the bounds' own slack)
    err_low = np.cumsum(err_a[:-1]) + x * np.cumsum(err_b[:-1])
    err_high = np.cumsum(err_a[::-1])[::-1][1:] + 2 * np.cumsum((x * err_b[1:])[::-1])[::-1]
    # gaps of the segments [x_j, x_{j+1}] (the last one ends at x_end)
    # segment gaps: the height of the triangle between the chord and the end
    # tangents, (x_{j+1}B − A)(A − x_j B)/(Δx·B) for the cell's (A, B), with a
    # pad for rounding; the last segment, whose cell is unbounded, Δx·B/4
    # (an atom at a cell's right end is not inside the open cell: take it out)
    ca = np.maximum(a[1:-1] - atom_p[1:], 0.0)
    cb = np.maximum(b[1:-1] - atom_q[1:], 0.0)
    dx = np.diff(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        low_part = np.maximum(ca - x[:-1] * cb, 0.0)          # A − x_j B  ∈ [0, Δx B]
        high_part = np.maximum(x[1:] * cb - ca, 0.0)          # x_{j+1} B − A ∈ [0, Δx B]
        # (a ratio in [0, 1] first: the product of two tail masses underflows)
        tri = np.where(cb > 0, low_part * np.minimum(high_part / (dx * cb), 1.0), 0.0)
    pad = 64 * _U * (ca + x[1:] * cb) + err_a[1:-1] + x[1:] * err_b[1:-1]  # rounding, and the cells' errors
    tri = np.minimum(tri * (1.0 + 64 * _U / step), dx * cb / 4.0) + pad
    # each segment asks its ends to be lowered by (c_L, c_R) with
    # c_L/(A − x_j B) + c_R/(x_{j+1}B − A) ≥ 1 (the line then passes below the
    # triangle's apex); by the triangle height at both ends where each end has
    # that much room above max(T, 0), else the end without room keeps its room
    # and the other end takes the rest (``lowering.end_requests``)
    low = eps <= 0
    e0, g0 = excess * (1 - _MARGIN) - err_low, delta * (1 - _MARGIN) - err_high
    room = point_room(eps, x, e0, g0, q_ninf, low, p_inf * (1 - _MARGIN)) if split else np.where(delta > 0.0, np.inf, 0.0)
    left_demand, right_demand = end_requests(low_part, high_part, tri, pad, room[:-1], room[1:], split == "least")
    top_gap = (x_end - x[-1]) * (b[-1] + err_b[-1]) / 4.0
    lower_by = np.maximum(np.append(0.0, right_demand), np.append(left_demand, top_gap))
    gap = np.append(tri, top_gap)
    e_low = e0 - lower_by
    g_high = g0 - lower_by
    e = np.where(low, e_low, np.expm1(eps) + g_high)
    g = np.where(low, -np.expm1(eps) + e_low, g_high)
    g_end = p_inf * (1 - _MARGIN) - gap[-1]
    curve = _Curve(np.append(x, x_end), np.append(e, math.expm1(eps_end) + g_end), np.append(g, g_end))
    slot = np.arange(m + 1)                                   # grid slots lo … hi+1
    keep = _lower_hull(curve)
    hx, he, hg, hslot = curve.x[keep], curve.e[keep], curve.g[keep], slot[keep]
    s = curve.slopes(keep)                                    # g-slopes between kept points
    probs = np.zeros(m + 1)

    def put_below(x_kink, mass):  # an off-grid kink: to the grid point at or below it
        if x_kink <= 0 or mass <= 0:
            return  # a kink at x = 0 carries no P-mass
        # the 1e-9 snaps a kink up to the point above where it lies within 1e-9 of a step below
        # it. Two kinds fall there: the log's and the division's rounding of a kink exactly on
        # the point (x_kink == x_j; 1e-16 of a loss, 3-part Poisson RR), and a hair below it
        # made by the rounding pads of a point lowered just past T or the floor (1 − x_kink/x_j
        # up to 5e-12 at step 0.01 in tests/pld). The second moves P-mass μ up by at most
        # 1e-9·step of loss, raising the curve by ≤ μ·1e-9·step at and below the kink; the
        # points' 1e-10 margin covers that only where δ ≥ 10·μ·step there, not near T (δ = T
        # below the smallest loss) nor near a top at 0. So composed, every loss may sit up to
        # (Σ k)·1e-9·step too high (1e5 uses at step 1.5e-4: 1.5e-8 of ε): the lower ends
        # take that off (``StepProfile._snapped``: δ read at ε + it, ε less it).
        # Why the snap: compared in x with none (searchsorted on ``curve.x``) those kinks
        # lose a whole step (mass up to 0.6), a loss of tightness no tests/pld test detects
        j = int(math.floor((math.log(x_kink) - shift) / step + 1e-9)) - lo
        if j >= 0:  # below the grid: dropped (moving it up to the first point is not below δ
            probs[min(j, m)] += mass  # once composed; dropping P-mass lowers every δ)

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
    floor = max(p_inf * (1 - _MARGIN), 0.0)
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
