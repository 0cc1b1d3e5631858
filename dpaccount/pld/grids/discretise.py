"""Put one dominating pair on a privacy-loss grid, in a chosen direction.

Pessimistic: Connect-the-Dots (Doroshenko, Ghazi, Kamath, Kumar &
Manurangsi, PETS 2022; ../shared/papers/google-2022-connect-the-dots-blog.txt).
The grid PLD whose hockey-stick curve, as a function of x = e^ε, is the
chord through the exact curve at the grid points. Because that curve is
convex, the chord lies above it, so the grid pair dominates (P, Q); and it
is a valid pair (its curve is convex, decreasing, 1 at x = 0), so it keeps
dominating under composition. Cell by cell this means: the P- and Q-mass
(A, B) of L in (ε_{j−1}, ε_j] is split between the two ends so that both
are kept, which puts

    a_up = (A − e^{ε_{j−1}} B) / (1 − e^{−h})     at ε_j,   A − a_up at ε_{j−1}.

Mass below the first point goes to the first point (moved up: pessimistic),
mass above the last point to +∞.

Optimistic: privacy buckets rounded down (Koskela & Honkela 2021, Lemma 5,
"left" rounding): each cell's P-mass goes to its lower end, mass below the
first point is dropped. Moving loss down can only lower every δ(ε), also
after composition, so this gives rigorous lower bounds.

Rounding errors: each cell's (A, B) come with bounds on their errors
(``masses_of(…, errors=True)``: a few ulps of the cell, or far more for a
narrow Gaussian cell, ``pld/pairs/log_cells.py``). The pessimistic split takes A
at its upper bound and B at its lower one, so the share (1 − r)/(1 − e^{−h}),
r = e^{ε_{j−1}}B/A, and the total are at least the exact ones; the share's
own rounding (its logs err by ulps of |log A| + |log B|, amplified by
1/(1 − e^{−h})) moves that much more mass up (moving mass up keeps the
bound). The optimistic grids take the masses at their lower bounds.
"""
import functools
import math

import numpy as np

from ... import progress
from ...errors import AccuracyNotReached
from ...numerics import ULP_OF_ONE as _U
from .cache import GridCache
from .cells import grid_cells, twin
from .chernoff import groups
from .discretise_optimistic import pair_to_lower_grid
from .grid import PLDGrid, frozen
from ..pairs.base import stacked_masses


def pair_to_grid(pair, step, lo, hi, pessimistic=True):
    """The pair's P-masses on the grid points lo·step, …, hi·step (+ p_∞)."""
    return pairs_to_grids([pair], step, [(lo, hi)], pessimistic)[0]


@progress.stage("discretising pairs")
def pairs_to_grids(pairs, step, ranges, pessimistic=True, shifts=None):
    """``pair_to_grid`` of several pairs at one step, pair i on the points of
    ``ranges[i]`` = (lo, hi): the pessimistic grids of continuous pairs in one
    pass (their cells from one ``stacked_masses`` call), the others one by one.
    ``shifts`` (optimistic grids only): pair i's point j is the loss
    j·step + shifts[i] (``accountant.optimistic_frame``)."""
    ranges = [(int(lo), int(hi) if hi > lo else int(lo) + 1) for lo, hi in ranges]
    pairs = [p.bound(pessimistic) for p in pairs]
    shifts = [0.0] * len(pairs) if shifts is None else list(shifts)
    out = [None] * len(pairs)
    progress.expect(len(pairs), f"discretising {len(pairs)} pairs at step {step:.3g}")
    dots = [i for i, p in enumerate(pairs) if pessimistic and not hasattr(p, "atoms")]
    twins = {i: twin(pairs[i], step, ranges[i]) for i in dots}
    for group in groups(dots, [ranges[i][1] - ranges[i][0] + 1 for i in dots], _GROUP_POINTS):
        for i, grid in zip(group, _connect_the_dots([pairs[i] for i in group], step, [ranges[i] for i in group],
                                                     [twins.pop(i) for i in group])):
            out[i] = grid
        progress.advance(len(group))  # one pass over these continuous pairs
    for i, pair in enumerate(pairs):
        if out[i] is None:
            out[i] = _one_grid(pair, step, *ranges[i], pessimistic, shifts[i])
            progress.advance()
    return out


_GROUP_POINTS = 1 << 18  # points discretised in one pass: its ~20 work arrays stay in cache


def _connect_the_dots(pairs, step, ranges, twins=None):
    """Pessimistic grids of continuous pairs (the module docstring), all runs of
    points concatenated: run i holds points lo_i … hi_i and its cells
    (−∞, e₀], (e₀, e₁], …, (e_last, ∞); the cells inside a run are split (``twins``:
    ``grid_cells``).

    Every cell is worked on where it lies (its lower point's loss beside it), in place in
    ``grid_cells``' arrays where they are writeable (else in new ones: cells kept for a twin):
    cell k of run i lies between points k − 1 and k, and point k
    gets the share of cell k sent up and the rest of cell k + 1. The end cells send all
    up: the one below the first point to it (moved up: pessimistic), the one above the
    last point to +∞ (``p_inf``)."""
    if not pairs:
        return []
    a, b, err_a, err_b, edges, sizes = grid_cells(pairs, step, ranges, twins)
    run_first = sizes.cumsum() - sizes
    cell_first = run_first + np.arange(len(sizes))
    top = cell_first + sizes
    # each cell's masses at the safe end of their error bounds: A up, B down, so the
    # share below (decreasing in B/A) and the mass split are both at least the exact ones
    a = np.add(a, err_a, out=_writeable(a))
    b = np.subtract(b, err_b, out=_writeable(b))
    np.maximum(b, 0.0, out=b)
    a_top = a[top]
    # each cell's lower point (the end cells': a stand-in)
    low = np.concatenate((edges[:1], edges)) if len(sizes) == 1 else np.insert(edges, run_first, edges[run_first])
    with np.errstate(divide="ignore", invalid="ignore"):
        # ratio r = e^{ε_{j−1}} B / A ∈ [e^{−h}, 1] in exact arithmetic; share = (1 − r)/(1 − e^{−h})
        log_a, log_b = np.log(a, out=_writeable(err_a)), np.log(b, out=_writeable(err_b))
        share = np.add(log_b, low)
        np.subtract(share, log_a, out=share)
        np.expm1(share, out=share)
        np.divide(share, math.expm1(-step), out=share)
        # the split's own rounding: log r errs by ≤ 8u(|log A| + |log B| + |ε| + 1) absolute (two
        # logs of ≤ 4 ulp, two sums), which 1 − r passes on (r ≤ 1), divided by 1 − e^{−h};
        # expm1 twice, the quotient and the product A·share: ≤ 16u of the share
        slack = np.add(np.abs(log_a, out=log_a), np.abs(log_b, out=log_b), out=log_a)
        slack += np.abs(low, out=low)
        slack += 1.0
        slack *= 8 * _U
        slack /= -math.expm1(-step)
        share *= 1.0 + 16 * _U
        share += slack
    # NaN (0/0, an empty cell) to 0, ±∞ and the rest into [0, 1]
    np.fmin(np.fmax(share, 0.0, out=share), 1.0, out=share)
    share[b < 1e-290] = 1.0  # Q-mass unresolved: all up
    share[cell_first] = share[top] = 1.0
    up = np.multiply(a, share, out=share)
    down = np.subtract(a, up, out=a)
    grids = []
    for pair, (lo, _), first, n, top_mass in zip(pairs, ranges, cell_first, sizes, a_top):
        probs = np.add(up[first:first + n], down[first + 1:first + n + 1])
        probs *= 1.0 + 8 * _U
        grids.append(PLDGrid(step=step, offset=lo, probs=frozen(probs), p_inf=float(pair.p_inf + top_mass) * (1 + _U),
                             pessimistic=True))
    return grids


def _writeable(x):
    """``x`` where it may be written into, else None (``out=None``: a new array)."""
    return x if x.flags.writeable else None


def _one_grid(pair, step, lo, hi, pessimistic, shift=0.0):
    """A pair with atoms, or an optimistic grid: one pair at a time (``shift``:
    ``pairs_to_grids``; pairs with ``atoms`` are never shifted)."""
    on_grid = hasattr(pair, "atoms") and pair.lattice is not None and is_multiple(pair.lattice, step)
    if not pessimistic and not on_grid:
        grids = []
        # valid lowerings (``pair_to_lower_grid``): a pair whose edges the frame holds on grid
        # points (``accountant.optimistic_frame``) first the one made for them, alone where it
        # applies; a pair with an edge off the grid tries all three
        aligned = pair.edges and all(abs((e - shift) / step - round((e - shift) / step)) < 1e-6
                                     for e in pair.edges)
        for split in ("least", True, False) if pair.edges else (True, False):
            if grids and aligned:
                break
            try:
                grids.append(pair_to_lower_grid(pair, step, lo, hi, split, shift))
            except OverflowError:
                pass  # losses beyond ±700, or the curve reaches 0 before the grid
        if grids:  # the one whose mean loss is the larger: the less biased
            return max(grids, key=lambda g: g.loss_moment + g.p_inf * (hi + 2) * step)
    if hasattr(pair, "atoms"):
        return _atoms_to_grid(pair, step, lo, hi, pessimistic)
    # optimistic, where neither lowering applies: each cell's P-mass (its lower bound) to its lower end
    a, _, err_a, _ = stacked_masses([pair], np.arange(lo, hi + 1) * step + shift, [hi - lo + 1], errors=True)
    a = np.maximum(a - err_a, 0.0)
    probs = np.zeros(hi - lo + 1)
    probs[:-1] += a[1:-1]
    probs[-1] += a[-1]
    probs *= 1.0 - 8 * _U
    # P(L = +∞) rounded down (``end_bounds``: p_inf is rounded up, an upper bound's)
    return PLDGrid(step=step, offset=int(lo), probs=probs, p_inf=float(pair.end_bounds()[0][0]), pessimistic=False)


def is_multiple(lattice, step):
    ratio = lattice / step
    return abs(ratio - round(ratio)) <= 1e-9 * max(ratio, 1.0)


def _atoms_to_grid(pair, step, lo, hi, pessimistic):
    """Finitely many atoms, split between the neighbouring grid points in
    closed form: a fraction (1 − e^{ε_{j−1} − ℓ})/(1 − e^{−h}) goes up
    (pessimistic; plus 64u|ℓ|/h for the rounding of ℓ and ℓ/h, so an
    atom on a grid point sends a sliver up), or all of it goes down
    (optimistic; an atom within that rounding below a grid point is placed
    on it, so lattice atoms stay exact: the lower bound is certified up to
    the ulp-level rounding of the loss values themselves).

    The atoms' masses e^{log p} err by their logs' errors (``log_err``: ulps of
    n log n for a binomial pair's ``binom.logpmf``) and exp's: the pessimistic grid
    takes each at the upper end of its bound (``atom_errors``; every δ(ε) of a grid,
    composed or not, is non-decreasing in each P-mass), the optimistic one at the
    lower end; P(L = +∞) likewise (``p_inf`` is rounded up, ``end_bounds`` gives the
    rounded-down one). Their losses err by both logs' errors: the pessimistic grid
    moves each atom up by them, the optimistic one down by the part beyond the logs'
    default 4 ulp (the rest is the loss values' ulp-level rounding above)."""
    loss, p, _ = pair.atoms
    err = pair.atom_errors[0]
    p = p + err if pessimistic else np.maximum(p - err, 0.0)  # (rounded by ½ ulp: within the 8u of err)
    # a computed loss log p − log q errs by its logs' errors too (``loss_errors`` less the 8u|ℓ|
    # of its own rounding, which the slack below covers): the pessimistic grid moves each atom
    # up by them (moving loss up raises every δ(ε)); the optimistic one down by the part beyond
    # the logs' default 4 ulp (``loss_excess_errors``: a binomial's, a user's stated log_err),
    # the rest being the ulp-level rounding its snapping is certified up to (docstring)
    if pessimistic:
        loss = loss + (pair.loss_errors - 8 * _U * np.abs(loss))
    else:
        loss = loss - pair.loss_excess_errors
    pos = loss / step
    slack = 64 * _U * np.abs(pos)  # rounding of ℓ (relative, as for a lattice parameter) and of ℓ/h
    if pessimistic:
        below = np.floor(pos).astype(np.int64)
        with np.errstate(over="ignore"):
            share = np.expm1(below * step - loss) / math.expm1(-step)
        share = np.clip(share * (1.0 + 16 * _U) + slack, 0.0, 1.0)
    else:
        below = np.floor(pos + slack).astype(np.int64)
        share = np.zeros(len(p))
    up = p * share
    down = p - up
    if pessimistic and np.any((below == hi) & (up > 0)):
        # an atom on (or just below) the top point sends its rounding sliver one point up: a
        # point more, not +∞ (at +∞ it would sit under every δ(ε), ~1e-14 for pure ε-DP at
        # any ε, and a certified μ-GDP up to a smaller tail would be ∞)
        hi += 1
    probs = np.zeros(hi - lo + 1)
    p_inf = pair.p_inf if pessimistic else pair.end_bounds()[0][0]
    for idx, mass in ((below, down), (below + 1, up)):
        rel = idx - lo
        inside = (rel >= 0) & (rel <= hi - lo)
        np.add.at(probs, rel[inside], mass[inside])
        low = rel < 0
        if pessimistic:
            probs[0] += mass[low].sum()
            p_inf += mass[rel > hi - lo].sum()
        else:
            probs[-1] += mass[rel > hi - lo].sum()
    probs *= (1.0 + 8 * _U) if pessimistic else (1.0 - 8 * _U)
    return PLDGrid(step=step, offset=int(lo), probs=probs, p_inf=float(p_inf), pessimistic=pessimistic)


_RANGES = GridCache(limit=8192, size_of=lambda _: 1)  # (pair, tail) → (lo, hi): small, counted not sized
_SCAN = np.geomspace(1e-4, 1e5, 91)    # brackets of 26 % of |x|
_ROUNDS, _POINTS = 3, 32                # refined to 26 %/31³ ≈ 9e-6 of |x|


def loss_range(pair, tail):
    """(lo, hi) with P(L < lo) ≤ tail and P(hi < L < ∞) ≤ tail.

    The grid also stops where Q(hi < L < ∞) falls below 1e-280, so that no
    cell's Q-mass is subnormal (what lies above goes to +∞, or to the top
    point in an optimistic grid). Where that cuts off more than 1e-3 of the
    P-mass the pair's losses are beyond what a float grid can represent and
    ``AccuracyNotReached`` says so. Each end: a log-spaced scan of
    ±[1e-4, 1e5] brackets it, 32 points inside the bracket refine it,
    three times, keeping the safe side. (Only tightness rests on it: a grid moves
    the mass outside its range to its ends or to +∞.)"""
    return loss_ranges([pair], tail)[0]


def loss_ranges(pairs, tail):
    """``loss_range`` of each pair (cached), the missing ones scanned together."""
    return _RANGES.get_many([(p, tail) for p in pairs], lambda missing: _scan([p for p, _ in missing], tail))


def _scan(pairs, tail):
    """``loss_range`` of several pairs in lockstep: its three crossings of every
    pair are the rows of one array, refined together."""
    xs = np.concatenate((-_SCAN[::-1], [0.0], _SCAN))

    def tails(of, x):
        """P(L ≤ x), P(L > x) and Q(L > x) (finite L), stacked, of pairs[of[k]] at the points x[k]."""
        m = x.shape[1]
        a, b = stacked_masses([pairs[r] for r in of], x.ravel(), np.full(len(of), m))
        a, b = a.reshape(len(of), m + 1), b.reshape(len(of), m + 1)
        return np.stack((np.cumsum(a, axis=1)[:, :-1], np.cumsum(a[:, ::-1], axis=1)[:, ::-1][:, 1:],
                         np.cumsum(b[:, ::-1], axis=1)[:, ::-1][:, 1:]))

    def passing(test, values):
        """The tests, each turning true as x grows: P(L < x) > tail (the low end), P(L > x) ≤ tail
        (the high end), Q(L > x) < 1e-280 (where Q-masses would turn subnormal)."""
        return np.where(test == 0, values > tail, np.where(test == 1, values <= tail, values < 1e-280))

    # row r: pair r // 3, test r % 3; (last x failing, first x passing) of each
    pair, test = np.repeat(np.arange(len(pairs)), 3), np.tile(np.arange(3), len(pairs))
    out = np.empty((len(pair), 2))
    rows, points = np.arange(len(pair)), np.broadcast_to(xs, (len(pair), len(xs)))
    values = tails(np.arange(len(pairs)), np.broadcast_to(xs, (len(pairs), len(xs))))[test, pair]
    for last in (False,) * _ROUNDS + (True,):
        ok = passing(test[rows, None], values)
        i = np.where(ok.any(axis=1), np.argmax(ok, axis=1), points.shape[1] - 1)
        at = np.arange(len(rows))
        if last:
            out[rows] = np.column_stack((points[at, np.maximum(i - 1, 0)], points[at, i]))
            break
        start = i == 0                  # passing from the first point on
        out[rows[start]] = points[start, :1]
        rows, points, i, at = rows[~start], points[~start], i[~start], at[:np.count_nonzero(~start)]
        if not len(rows):
            break
        points = np.linspace(points[at, i - 1], points[at, i], _POINTS, axis=1)
        values = tails(pair[rows], points)[test[rows], at]
    lo, hi, cap = out[0::3, 0], out[1::3, 1], out[2::3, 1]
    short = np.flatnonzero(cap < hi)
    if len(short):
        lost = tails(short, cap[short, None])[1][:, 0]
        if np.any(lost > 1e-3):
            k = int(np.argmax(lost > 1e-3))
            raise AccuracyNotReached(
                f"{lost[k]:.3g} of the privacy-loss mass of {pairs[short[k]]!r} lies beyond {cap[short[k]]:.4g}, "
                f"where e^(-loss) leaves the float range: a grid cannot represent it; use "
                f"method='analytic' or 'rdp'")
        hi[short] = cap[short]
    return [(float(min(a, b)), float(b)) for a, b in zip(lo, hi)]


@functools.lru_cache(maxsize=8192)
def loss_moments(pair, lo, hi, points=1025):
    """Mean and variance of the finite loss under P, from a grid on [lo, hi]."""
    edges = np.linspace(lo, hi, points)
    a, _ = pair.masses(edges)
    mid = np.concatenate(([lo], 0.5 * (edges[1:] + edges[:-1]), [hi]))
    total = a.sum()
    if total <= 0:
        return 0.0, 0.0
    mean = float((a * mid).sum() / total)
    var = float((a * (mid - mean) ** 2).sum() / total)
    return mean, var
