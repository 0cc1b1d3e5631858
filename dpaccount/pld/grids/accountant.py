"""A direction's certified grid: from its dominating pairs, at a given step, to a ``PLDGrid``.

``composed_grid`` turns one direction (``pld/pairs/composition.py``) into a ``PLDGrid``:

1. Pairs that are exactly Gaussian merge first, exactly: μ = sqrt(Σ k μ_i²).
2. The grid step h is given: a ``PrivacyProfile`` sizes it by the question
   asked (``pld/profiles/plan.py``) and uses it for both directions. The answer
   is an upper bound whatever h is: h only trades tightness for time.
3. Every pair is discretised on [lo, hi], its tails beyond being below
   ``tail/K`` (``pld/grids/discretise.py``), then all are composed (``pld/grids/compose.py``).
   Optimistic grids (certified lower bounds) are composed in a frame that holds
   each pair's edge on a grid point (``optimistic_frame``) and moved back after.

Two rules for choosing a step live here. ``snap_to_lattice``: a pair with
losses on a lattice g (randomized response) keeps its atoms on the grid when
h = g/m (Koskela & Honkela 2021, Lemma 5); if every pair is on that lattice,
h = g and the whole computation is exact up to floating point. A pair's
``anchor`` (the atoms ±ε₀ of the Laplace loss) is used the same way. A
lattice more than 4× finer than the target step (a frozen grid from
``Discretise``) is ignored: pinning h to it would only cost points.
``plan_step``: where no question sizes the step (the online odometer, the a
priori grid's pilot), Connect-the-Dots widens each loss by at most h²/4 in
variance, so with K rounded terms and composed variance V the relative
widening is K h²/(4V); asking for a share ρ of it gives h = 2·sqrt(ρ V / K).
"""
import math
from dataclasses import replace

import numpy as np

from ... import progress
from ...errors import GridTooLarge
from ...lazy import lazy
from .compose import MAX_GRID, compose, saddle_tilt
from .cache import GRIDS
from .discretise import loss_moments, loss_ranges, pairs_to_grids
from ..pairs.composition import merge_gaussians

fractions = lazy("fractions")  # the frame's exact sums (``frame_total``): first use, not import

def plan_step(pairs, rho, tail):
    """Grid step for a list of (pair, count), see the module docstring."""
    total_k = sum(k for _, k in pairs)
    variance, rounded_k = 0.0, 0
    for (p, k), (lo, hi) in zip(pairs, loss_ranges([p for p, _ in pairs], tail / total_k)):
        _, var = loss_moments(p, lo, hi)
        variance += k * var
        if p.lattice is None:
            rounded_k += k
    if variance <= 0.0 and not _lattices(pairs):
        return 1.0  # every loss is a single point (0): any step represents it
    target = step_target(variance, rounded_k or total_k, rho)
    if not target > 0.0:  # an accuracy so fine that ρ underflows
        raise GridTooLarge(f"rho={rho!r} asks for a grid step of 0: no grid can reach that accuracy")
    return snap_to_lattice(pairs, target)


def step_target(variance, rounded_k, rho):
    """h = 2·sqrt(ρ V / K): Connect-the-Dots widens the variance by at most K h²/4 (module docstring)."""
    return 2.0 * math.sqrt(rho * max(variance, 1e-300) / max(rounded_k, 1))


def _lattices(pairs):
    return {p.lattice or p.anchor for p, _ in pairs if (p.lattice or p.anchor) is not None}


def snap_to_lattice(pairs, target):
    """``target`` as a step that keeps the pairs' lattice g (or anchor) on the
    grid: g/m, or g itself where every pair is on it (then the grid is exact);
    a lattice far finer than the target (a frozen grid) is ignored."""
    lattices = _lattices(pairs)
    if len(lattices) == 1:
        g = lattices.pop()
        if g >= 0.25 * target:  # a lattice far finer than needed would only cost points
            return g if all(p.lattice is not None for p, _ in pairs) else g / math.ceil(g / target)
    return target


@progress.stage("composing a grid")
def composed_grid(pairs, step, tail=1e-30, pessimistic=True, tilt_at=None, base=None,
                  hints=(None, None), proxy_step=None):
    """The certified grid of one direction (a tuple of (pair, count)) at grid step ``step``.

    With ``tilt_at`` (a loss) the composition is also run exponentially
    tilted towards that loss and combined with ``base`` (the untilted grid)
    bin by bin (``compose.compose``): small δ near that loss become
    accurate to ~1e-15 of themselves (plus the tilting's rounding pad, ~1e-8)
    instead of ~1e-15 of the peak. ``hints``:
    the window's Chernoff λ on coarser grids (``compose.chernoff_lambdas``);
    ``proxy_step``: a coarser step whose grids the searches for the tilt's λ
    and the window's run on first (``chernoff.log_mgf``)."""
    pairs = merge_gaussians(pairs)
    args = (pairs, tail, tilt_at, base, hints, proxy_step)
    if pessimistic:
        return _composed(*args, step, True, False)
    try:  # optimistic: on the finer frame where it fits (``optimistic_frame``), else at ``step``
        return _composed(*args, step, False, True)
    except GridTooLarge:
        return _composed(*args, step, False, False)


def _composed(pairs, tail, tilt_at, base, hints, proxy_step, step, pessimistic, finer):
    """``composed_grid`` at a given step (and, optimistic, frame)."""
    items = step_grids(pairs, step, tail, pessimistic, finer)
    proxy = step_grids(pairs, proxy_step, tail, pessimistic, finer) if proxy_step and proxy_step != step else None
    # optimistic grids compose in their frame (``optimistic_frame``): losses less Σ k·shift
    total = fractions.Fraction(0) if pessimistic else frame_total(pairs, optimistic_frame(pairs, step, finer)[1])
    tilt = saddle_tilt(items, tilt_at - float(total), proxy) if tilt_at is not None else 0.0
    whole = math.floor(total / fractions.Fraction(items[0][0].step))  # exact (rationals), rounded down, never up
    if base is not None and base.step != items[0][0].step:
        base = None  # the untilted grid on the other frame (it did not fit): the tilted one alone
    if base is not None and whole:
        base = replace(base, offset=base.offset - whole)
    out = compose(items, tail=tail, pessimistic=pessimistic, tilt=tilt, base=base, hints=hints, proxy=proxy,
                  level=None if tilt_at is None else tilt_at - float(total))
    # back from the frame: every loss moved down by the fraction of a step dropped from
    # Σ k·shift (moving loss down lowers every δ: still a lower bound)
    return replace(out, offset=out.offset + whole) if whole else out


_FINER = 128  # how much finer than the planned step an optimistic grid may go to hold its edges apart


def optimistic_frame(pairs, step, finer=True):
    """(step, shifts) of a direction's optimistic grids: pair i's grid point j
    sits at the loss j·step + shifts[i], one of its edges (``_held_edge``), so
    that the edge is a grid point; where the direction is one pair with two edges (a
    Poisson-subsampled finite pair), the step is also made the largest
    d/m ≤ step, d the edges' distance, so that both are (not below step/2).
    ``finer``: a step of at most half the smallest |edge| (its next point
    must stay inside (1 − q, 1) on the remove side, where the tangent at 0
    is still above 0: else the whole curve above ε = 0 goes with the
    near-atom), where that is at most ``_FINER`` times finer.
    An optimistic grid with an atom or a near-atom of mass ~1 at an edge
    between its points is first order in its step (``discretise_optimistic.py``),
    on them second order. The composed grid moves its losses back by Σ k·shifts,
    rounded down (``composed_grid``); the frame chooses tightness, never soundness."""
    edges = [p.edges for p, _ in pairs]
    small = min((abs(e[0]) for e in edges if e), default=math.inf) / 2
    if finer and step > small >= step / _FINER:
        step = small
    if len(pairs) == 1 and len(edges[0]) == 2:
        d = abs(edges[0][1] - edges[0][0])
        if d >= step:
            step = d / math.ceil(d / step)
        return step, [edges[0][0]]
    return step, [_held_edge(p, e, step) for (p, _), e in zip(pairs, edges)]


def _held_edge(pair, edges, step):
    """The edge a pair's frame holds (its shift): the heaviest, or, where the pair
    has two (a finite base) and shares the step with other pairs, the one whose
    other edge then costs less: an atom of P-mass w off the grid, a fraction θ of
    a step above the point below, loses about w·θ·step of mean loss (first order,
    ``discretise_optimistic.py``). In the 3-part Poisson-RR composition of
    tests/pld/test_small_sigma_intervals.py this takes the grids' δ(0.1) lower
    end from 1.04e-3 to 6.9e-4 below exact at step 1.0e-4. Tightness only:
    ``_composed`` undoes the same shifts (``optimistic_frame``)."""
    if len(edges) != 2:
        return edges[0] if edges else 0.0
    w = pair.atom_masses(np.array(edges))[0]
    cost = [w[1 - i] * (((edges[1 - i] - edges[i]) / step) % 1.0) for i in (0, 1)]
    return edges[1] if cost[1] < cost[0] else edges[0]


def frame_total(pairs, shifts):
    """Σ k·shift over a direction's (pair, count) exactly: floats are dyadic
    rationals, so the sum of ``Fraction``s has no rounding."""
    return sum((k * fractions.Fraction(s) for (_, k), s in zip(pairs, shifts)), fractions.Fraction(0))


def whole_frame_step(pairs, step, shifts):
    """The frame's step made one that divides the frame's total shift T = Σ k·shift
    (``frame_total``), so that undoing it (``_composed``: whole steps, rounded down)
    drops nothing: the composed losses sit at J·h + T exactly, and a T off the lattice
    lost its remainder, up to a whole step, in every lower end (σ = 2, q = 0.1,
    T = 10: 1.25e-5 of ε at every step down to 4e-5, the interval's floor). The
    largest h ≤ ``step`` with |T|/h = n whole (n = ⌈|T|/step⌉; h rounded so that
    n·h ≤ T where T > 0 and n·h ≥ |T| where T < 0: the residual T − ⌊T/h⌋·h is
    then ≥ 0 and at most n ulps of h); a step that would move an edge the frame
    holds on a grid point off it (the two-edge d/m steps) is kept as it is.
    Changes tightness, never soundness: every step and frame gives certified grids."""
    total = frame_total(pairs, shifts)
    if total == 0:
        return step
    n = math.ceil(abs(total) / fractions.Fraction(step))
    h = float(abs(total) / n)
    if total < 0 and fractions.Fraction(h) * n < -total:
        h = math.nextafter(h, math.inf)
    elif total > 0 and fractions.Fraction(h) * n > total:
        h = math.nextafter(h, 0.0)
    held = all(_on_grid(e - s, step) <= _on_grid(e - s, h) for (p, _), s in zip(pairs, shifts) for e in p.edges)
    # a lattice (or anchor) of a pair's atoms on the grid stays on it (``snap_to_lattice``): atoms
    # between points lose first order in the step (3 Poisson-Gaussians + 50 RR(0.75): the lower
    # end of δ(55.5) stuck 2 % below at every step when the shrunk step moved log 3 off the grid)
    held = held and all(_on_grid(g, step) <= _on_grid(g, h) for g in _lattices(pairs))
    return h if held else step


def _on_grid(x, step):
    """Whether the loss x is a grid point of the step (within 1e-6 of a step)."""
    return abs(x / step - round(x / step)) < 1e-6


def step_grids(pairs, step, tail, pessimistic=True, finer=True):
    """[(single-step grid, count), ...] of a direction (Gaussians merged first), each
    pair discretised on its loss range with tails below tail/K (cached)."""
    pairs = merge_gaussians(pairs)
    total_k = sum(k for _, k in pairs)
    shifts = [0.0] * len(pairs)
    if not pessimistic:
        step, shifts = optimistic_frame(pairs, step, finer)
        step = whole_frame_step(pairs, step, shifts)
    keys = []
    for p, s, (lo, hi) in zip((p for p, _ in pairs), shifts, loss_ranges([p for p, _ in pairs], tail / total_k)):
        jlo, jhi = int(math.floor((lo - s) / step)), int(math.ceil((hi - s) / step))
        if jhi - jlo + 1 > MAX_GRID:
            raise GridTooLarge(f"discretising {p!r} at step {step:.3g} needs {jhi - jlo + 1} points; "
                               f"the cap is {MAX_GRID}")
        keys.append(("pair", p, step, jlo, jhi, pessimistic, s))
    grids = GRIDS.get_many(keys, lambda missing: pairs_to_grids([key[1] for key in missing], step,
                                                                 [key[3:5] for key in missing], pessimistic,
                                                                 [key[6] for key in missing]))
    return list(zip(grids, (k for _, k in pairs)))
