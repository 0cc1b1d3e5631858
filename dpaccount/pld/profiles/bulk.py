"""The ε(δ) level's check of its own rounding, from its grids: where the plan's
saddle point misses (``plan.py``), which δ need a finer step, and how many levels.

The saddle point of the whole law misses where ε(δ) sits in the bulk of a
mixture: few steps of a rare large loss, or tiny q, where ε(δ) down to δ
~1e-10 and beyond sits in the near-Gaussian bulk of many small losses while
the tilts see the rare large ones only (Poisson-subsampled Gaussian, q =
5e-5, σ = 1.1, T = 10⁴: their Chernoff tail at ε(1e-10) is ~0.25). There the
bulk's density, not the whole law's, sets how rounding moves ε; the ε(δ)
level's grids read it (``rounding_excess``) at a fixed lattice of δ
(``bulk_split``: the cut depends on the mechanism alone, so ε(δ) stays one
non-increasing curve). The check only trades tightness for time: every
level's answers are certified upper bounds.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Tuple

import numpy as np

from ..pairs.composition import DIRECTIONS, merge_gaussians

if TYPE_CHECKING:
    from ..grids.grid import PLDGrid
    from ..pairs.composition import PairComposition
    from .plan import Plan
    from .step_profile import StepProfile

_CHECKED = np.geomspace(1e-2, 1e-10, 9)  # δ (descending) at which the ε(δ) level's grids check their excess
_SLACK = 0.75  # of the accuracy: the excess the bound (κ = 1 below) may predict at the ε(δ) level
_RESOLVED = 0.5  # of δ: the most a grid's noise bound may raise δ where its excess is read
_AGREE = math.log(100.0)  # the saddle point's δ within 100× of the grid's: the tilts describe the law
_TRUST = 1e-2  # the most relative excess a scout's grid may predict at its own step where ``at`` takes its reading


def rounding_excess(grid: PLDGrid, rounded: int, deltas: np.ndarray,
                    zero_atom: bool = False) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ε(δ), the relative excess of ε(δ) its rounding predicts, whether the grid resolves δ)
    of a composed grid: resolved where its transform-noise bound raises δ at that ε by at most
    ``_RESOLVED`` of δ (else ε is read off the noise floor: far too large, its excess nil).
    With ``zero_atom`` (the composed law may have an atom at L = 0, ``atomless_off_zero``)
    the grid point at 0 is left out of the density.

    K rounded steps add to the loss an independent-like noise of variance
    s² ≤ K h²/4 (``accountant.py``) and mean s²/2 (Connect-the-Dots keeps E_P[e^{−L}],
    ``plan.py``). Its spread moves δ(ε) = E_P[(1 − e^{ε−L})₊] by
    ≈ (s²/2)·E_P[f″(L)] = (s²/2)(p(ε) − e^ε Q(L > ε)) (the kink at L = ε has
    slope jump 1, and f″ = −e^{ε−L} above it), its mean by (s²/2)e^ε Q(L > ε):
    (s²/2)p(ε) in all, and ε by that over −dδ/dε = e^ε Q(L > ε):
    Δε ≈ (K h²/8)·p(ε)/(e^ε Q(L > ε)). In an exponential tail of rate λ the
    ratio is λ + 1 (the plan's (λ + 1)Kh²/8, ``plan.py``); where
    ε(δ) sits in the bulk of a mixture (few steps of a rare large loss) it
    is the bulk's density, far above what the saddle point of the whole law
    says (σ = 0.8, q = 1e-3, T = 10: 200 against 7.5 at ε(1e-3) ≈ 0.004).
    p(ε) is read from the grid's masses within 2 steps of ε, e^ε Q(L > ε) from
    its δ a quarter step either side (O(1) each, on the sums ε(δ) has built).
    Measured on few-step subsampled Gaussians, the true excess was 0.55–0.86
    of the form without the mean, (K h²/8)(p/(e^ε Q) − 1), so below this one
    (a smooth cell widens by h²/6, not h²/4)."""
    eps = np.atleast_1d(np.asarray(grid.epsilon(deltas), dtype=float))
    h, out = grid.step, np.zeros(eps.shape)
    live = np.flatnonzero((eps > 0.0) & np.isfinite(eps))
    if not len(live):
        return eps, out, np.ones(eps.shape, bool)
    e = eps[live]
    j = np.floor(e / h).astype(np.int64) - grid.offset  # the points j − 1 … j + 2 lie within 2 steps of ε
    near = j[:, None] + np.arange(-1, 3)
    inside = (near >= 0) & (near < len(grid.probs))
    atom = zero_atom & (near == -grid.offset)  # the point at loss 0 (index −offset), left out
    density = (np.where(inside & ~atom, grid.probs[np.clip(near, 0, len(grid.probs) - 1)], 0.0).sum(axis=1)
               / ((4 - atom.sum(axis=1)) * h))
    a, b = np.maximum(e - h / 4, 0.0), e + h / 4
    ends = np.asarray(grid.delta(np.concatenate((a, b))), dtype=float)
    slope = (ends[:len(e)] - ends[len(e):]) / (b - a)  # e^ε Q(L > ε): −dδ/dε
    with np.errstate(divide="ignore", invalid="ignore"):
        got = rounded * h * h * density / slope / (8.0 * e)
    out[live] = np.where(slope > 0.0, got, 0.0)
    resolved = np.ones(eps.shape, bool)
    resolved[live] = ~grid.noise_over(e, _RESOLVED * np.asarray(deltas)[live])
    return eps, out, resolved


def bulk_split(plan: Plan, composition: PairComposition, at: StepProfile, accuracy: float) -> Tuple[float, int]:
    """(δ*, E): ε(δ) queries with δ > δ* need E levels more than ``plan.eps_level``,
    by that level's own grids (``at``, its ``StepProfile``): each direction whose
    rounded pairs have no atom but at loss 0 (an atom makes p(ε) a spike: the one
    at 0 is left out of the density, ``rounding_excess``) and whose ε(δ) is
    within 20 % of the larger, at the δ of ``_CHECKED``, until the predicted
    excess (``rounding_excess``, ∝ h²) is at most ``_SLACK`` of the accuracy;
    δ* is the lattice point below the smallest δ that needs any (δ* = 0 where
    the smallest does; E = 0, δ* = ∞ where none does). The tilts' plan misses
    ε(δ) in the bulk of a mixture (few steps, or tiny q: a near-Gaussian bulk
    of many small losses beside rare large ones, whose tilts see the rare ones
    only), where the bulk's density, not the saddle point's, sets how rounding
    moves ε. Where a direction's base grid does not resolve a δ (its noise
    floor, ``rounding_excess``), the grid tilted at its band does
    (``StepProfile.resolving``); where that does not either, the δ takes the
    excess of the last δ resolved (in a Gaussian bulk of variance V the
    relative excess (ε/V)·Kh²/(8ε) = Kh²/(8V) does not depend on δ) and is not
    compared with the other direction's ε. Only tightness: every level is
    certified."""
    checked, zero = {}, {}
    for d, t in zip(DIRECTIONS, plan.tilts):
        if d == "add" and composition.add == composition.remove:
            continue  # the same law both ways: the remove direction's reading is its
        pairs = merge_gaussians(composition.direction(d))
        if t.rounded and all(p.atomless_off_zero for p, _ in pairs if p.lattice is None):
            checked[d] = t
            zero[d] = not all(p.atomless for p, _ in pairs)
    if not checked:
        return math.inf, 0
    looks = [_carried(*look) for look in _resolved_excess(at, checked, zero, _scouted(plan, at))]
    top = np.max([np.where(np.isnan(eps), 0.0, eps) for eps, _ in looks], axis=0)
    worst = np.max([np.where(~(eps < 0.8 * top), excess, 0.0) for eps, excess in looks], axis=0)
    over = np.flatnonzero(worst > _SLACK * accuracy)
    if not len(over):
        return math.inf, 0
    extra = int(math.ceil(math.log(float(np.max(worst)) / (_SLACK * accuracy)) / math.log(4.0)))  # ∝ h²
    last = int(over[-1]) + 1  # the lattice point below the smallest δ that needs more
    return (float(_CHECKED[last]) if last < len(_CHECKED) else 0.0), extra


def _scouted(plan, at):
    """{direction: (the ``StepProfile`` it is read from at each δ of ``_CHECKED``, as an array
    of them)}: ``at``'s scout (``StepProfile.scout``) where the plan's saddle points put the
    direction below the other (``Plan.remove_leads``: it is first read there for the answer
    too, and its grids at ``at``'s step are then seldom composed), else ``at``."""
    if at.scout is None:
        return {d: np.full(len(_CHECKED), at) for d in DIRECTIONS}
    remove = plan.remove_leads(_CHECKED, True)
    return {d: np.where(remove if d == "remove" else ~remove, at, at.scout) for d in DIRECTIONS}


def _read(at, readers, direction, rounded, zero):
    """(ε, excess, resolved, the ``StepProfile`` each δ was read from) of ``rounding_excess``
    of a direction's base grids at ``_CHECKED``, each δ from its reader's (``_scouted``), a
    scout's excess scaled to ``at``'s step (∝ h²). Where the reader is ``at`` and it has a
    scout, the scout is read first and read instead if it resolves some δ and its own excess is at most ``_TRUST`` at
    every δ it resolves (a grid that fine for its law reads its density and slope as ``at``'s
    would: the excess ∝ h² carries over): ``at``'s base grid, often not composed for the
    answer (``eps_of_delta._lean``), is then composed only where the scout's grid is coarse
    for the law (few steps, or the bulk of a mixture), a choice made from the scout's grid
    alone."""
    readers = readers.copy()
    if at.scout is not None:
        mine = np.flatnonzero(readers == at)
        if len(mine):
            _, excess, resolved = rounding_excess(at.scout.grid(direction), rounded, _CHECKED[mine], zero)
            if resolved.any() and np.all(excess[resolved] <= _TRUST):
                readers[mine] = at.scout
    eps, excess, resolved = np.empty(len(_CHECKED)), np.empty(len(_CHECKED)), np.empty(len(_CHECKED), bool)
    for reader in set(readers.tolist()):
        sel = np.array([r is reader for r in readers])
        got = rounding_excess(reader.grid(direction), rounded, _CHECKED[sel], zero)
        eps[sel], excess[sel], resolved[sel] = got[0], got[1] * (at.step / reader.step) ** 2, got[2]
    return eps, excess, resolved, readers


def _resolved_excess(at, looks, zero, readers):
    """[(ε, excess, resolved) of ``rounding_excess`` at ``_CHECKED``] of the directions
    ``looks`` ({direction: its ``Tilts``}; ``zero``: {direction: whether its law may have an
    atom at 0}; ``readers``: ``_scouted``): from the base grids, and at each δ a base grid
    does not resolve, from the band's tilted grid (``StepProfile.resolving``), unless
    - its base grid's ε (an upper bound, the noise included) is below 0.8 of another
      direction's (below the top filter of ``bulk_split``), or
    - at the last δ it resolved the saddle point of its tilts (``Tilts.log_delta``) reads
      that δ within ``_AGREE``: the tilts describe its law there, and the plan's tails
      (``plan.py``) size the step for the smaller δ (excess 0, ε the saddle point's)."""
    read = {d: _read(at, readers[d], d, t.rounded, zero[d]) for d, t in looks.items()}
    out = {d: got[:3] for d, got in read.items()}
    readers = {d: got[3] for d, got in read.items()}
    last = dict.fromkeys(out)  # direction → the last index resolved
    for i, delta in enumerate(_CHECKED):
        known = max([float(eps[i]) for eps, _, ok in out.values() if ok[i] and np.isfinite(eps[i])], default=0.0)
        for d, (eps, excess, resolved) in sorted(out.items(), key=lambda item: -item[1][0][i]):
            if not resolved[i]:
                r = last[d]
                if eps[i] < 0.8 * known:
                    resolved[i] = True
                elif r is not None and eps[r] > 0 and _agrees(looks[d], eps[r], _CHECKED[r]):
                    t = looks[d]
                    eps[i], excess[i], resolved[i] = float(t.at_tail(t.tail_at_delta(math.log(delta)))[0]), 0.0, True
                else:
                    reader = readers[d][i]
                    answer, grid = reader.resolving(d, delta, _RESOLVED)
                    if grid is not None:
                        _, got, _ = rounding_excess(grid, looks[d].rounded, _CHECKED[i:i + 1], zero[d])
                        eps[i], excess[i], resolved[i] = answer, got[0] * (at.step / reader.step) ** 2, True
                if resolved[i] and np.isfinite(eps[i]):
                    known = max(known, float(eps[i]))
            if resolved[i] and np.isfinite(eps[i]):
                last[d] = i
    return list(out.values())


def _agrees(tilts, eps, delta):
    """Whether the saddle-point δ of ``tilts`` at ``eps`` is within ``_AGREE`` of ``delta``."""
    return abs(float(np.interp(eps, tilts.mean, tilts.log_delta())) - math.log(delta)) <= _AGREE


def _carried(eps, excess, resolved):
    """(ε, excess) along the descending δ of ``_CHECKED``: where not ``resolved``, ε is NaN
    and the excess that of the last resolved δ before it (0 where there is none)."""
    seen = np.maximum.accumulate(np.where(resolved, np.arange(len(eps)), -1))
    carried = np.where(seen >= 0, excess[np.maximum(seen, 0)], 0.0)
    return np.where(resolved, eps, np.nan), np.where(resolved, excess, carried)
