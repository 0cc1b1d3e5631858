"""Grid steps sized by the question: the plan of a ``PrivacyProfile``.

Connect-the-Dots rounding widens each rounded single-step loss by at most
h²/4 in variance (``accountant.py``), so K rounded steps add to the composed
loss an independent-like noise of variance s² ≤ K h²/4. That noise is not
centred: the rounding keeps both masses, E_P[1] and E_P[e^{−L}], so its
log-MGF vanishes at λ = 0 and at λ = −1 and is ≈ λ(λ + 1)s²/2 (its mean
s²/2). Near a level ε whose tail the exponential tilt λ governs (the saddle
point, K'(λ) = ε with K the composed log-MGF of the P-law of the loss), it
multiplies the tilted law's MGF by e^{λ(λ+1)s²/2}: δ by a factor
≈ 1 + λ(λ + 1)Kh²/8 and, as d log δ/dε ≈ −λ there, the tail's quantiles
move by ≈ (λ + 1)s²/2 ≤ (λ + 1)Kh²/8. Asking for a share ``c`` of the
accuracy a:

    ε(δ) queries:  (λ + 1) K h²/8 ≤ c·a·ε   →   h² = 8 c a ε / ((λ + 1) K),
    δ(ε) queries:  λ(λ + 1) K h²/8 ≤ c·a    →   h² = 8 c a / (λ(λ + 1) K)

(``delta_ratio``, λ taken ≥ 1 there). The mean matters where λ ≲ 2: a
law whose steps put their mass on atoms (Poisson-sampled Laplace: two atoms
carry most of it) is rounded by the full h²/4 wherever an atom sits mid-cell
(a continuous law averages ~h²/6), and ε(1e-6) of q = 0.005, b = 0.15, 1000
steps (λ ≈ 1) came out 1.6 times the accuracy's share above exact when ε(δ)
was planned from λ alone. Measured (benchmarks/rho_calibration.py, with λ)
the model predicted the excess of ε within a factor 0.5–1.3 on subsampled
Gaussians and Laplace; c = 1/2 for ε(δ), 0.3 for δ(ε) (``SHARE_DELTA``).

Why not plan from the composed variance V alone (h² = 4ρV/K): that is the
λ = ε/V special case of the Gaussian, and wrong by orders of magnitude where the
answer sits far out in the tail of the composition (tiny q with small σ: ε set by
the rare large losses, not by the bulk).

Steps form a lattice: ``coarse`` (the composed window at the first tail
tier in ``_POINTS`` points), halved ``level`` times; a pair on a lattice g
keeps its atoms on the grid (h = g/m, ``accountant.snap_to_lattice``).
ε(δ) queries are planned for every ε from the Chernoff tail 1e-30 down to
where the saddle-point δ (``Tilts.log_delta``) is 1e-1 (a 10× margin over
the largest δ planned, 1e-2: at few steps ε(δ) sits in the bulk, where the
Chernoff tail is far above δ), at the rate max(λ, 0.8/σ_λ). One level per
mechanism serves the tails up to 1e-4 (``eps_level``: the finest they need,
so ε(δ) stays one non-increasing curve); the tails beyond, where they need
finer, set a cut δ* (the saddle-point δ where the first of them starts, over
10) above which ε(δ) is also answered ``extra`` levels finer (``Plan.cut``,
``profile.py``: the smaller answer), where every rounded direction's tilt
table reaches the tails up to 1e-4 (else one level serves them all: the
saddle point has nothing to read). So the bulk of a rare-event mixture
(the Connect-the-Dots blog, σ = 0.5, q = 2e-5) does not size the step of
its far-tail ε(1e-8);
δ(ε) queries take the finest ε(δ) level (``eps_level + extra``) where it
suffices and the finer level their ε needs elsewhere (non-decreasing in ε),
at most ``DELTA_LEVELS`` finer (the proxy grows without bound where ε nears the top of a bounded
support). Beyond the planned tails the tilt tables see the edges of the
single-step windows rather than the loss (λ(ε) shoots up): the proxy takes λ
where the Chernoff tail is 1e-30 there, as measured errors level off.
The saddle point misses where ε(δ) sits in the bulk of a mixture (few
steps of a rare large loss, or tiny q); there the ε(δ) level's own grids are
read once (``bulk.py``) and ε(δ) above a cut is answered finer too
(``profile.py``).
The plan only trades tightness for time: every level's answers are
certified upper bounds.
"""
import math
from typing import NamedTuple, Optional

import numpy as np

from ...errors import GridTooLarge
from ..grids.accountant import snap_to_lattice, step_grids
from ..pairs.composition import DIRECTIONS, merge_gaussians
from ..grids.log_mgf import log_mgf
from ..grids.compose import BYTES_PER_POINT, chernoff_lambdas, chernoff_window
from ..grids.discretise import is_multiple, loss_ranges

SHARE = 0.5                       # c: the share of the accuracy the step may spend
# δ(ε) queries' c: their saddle-point excess model (``delta_ratio``) reads low in the bulk of a
# heterogeneous composition (11 Poisson-Gaussians ×500, δ(1): 0.47 of the accuracy measured at a
# step planned for 0.33), and the δ levels are clipped at ``DELTA_LEVELS`` anyway
SHARE_DELTA = 0.3
_POINTS = 4096                    # points of the coarsest composed window
_LAMBDAS = np.geomspace(1e-2, 1e3, 41)
_REFINE = 16                      # rounds of λ refinement
_MARGIN = math.log(10.0)            # the saddle-point δ may be ~10× too small in the bulk (mixtures)
_TAILS = (math.log(1e-30), math.log(1e-2))  # where ε(δ) queries are planned for
# the tails the ε(δ) level serves; those beyond, finer where they need it, above a δ cut
_BASE_TAIL = math.log(1e-4)
# ε below this at a tail level is rounding, not loss (a composition of identical pairs, P = Q:
# its loss is 0 exactly, its tilts' ε ~1e-17, which asked for a step of 4e-16): no relative
# accuracy is planned for it (the coarse level's absolute error stands, still an upper bound),
# where the composed loss itself stays within it (``_floor``)
_EPS_FLOOR = 1e-12
MAX_LEVEL = 40
DELTA_LEVELS = 3                  # δ(ε) queries: at most 2³× finer than ε(δ) queries
# a base window's points: a certified interval (both roundings, tilted grids, cache) peaks at
# ~BYTES_PER_POINT bytes a point (compose.py), so ~1 GB
MAX_BASE = 3 << 20


class Tilts(NamedTuple):
    """A direction's composed log-MGF on a λ lattice: K(λ), K'(λ) (the tilted
    mean), K''(λ) (its variance) and the count of rounded steps K_r; from its single-step grids."""

    lam: np.ndarray
    cgf: np.ndarray
    mean: np.ndarray
    var: np.ndarray
    rounded: int

    @property
    def tail(self):
        """log of the Chernoff bound P(L ≥ K'(λ)) ≤ e^{K(λ) − λK'(λ)}, decreasing in λ."""
        return self.cgf - self.lam * self.mean

    def at_eps(self, eps):
        """(λ(ε) ≥ 1, log tail at ε) by interpolation (K' increases)."""
        return np.maximum(np.interp(eps, self.mean, self.lam), 1.0), np.interp(eps, self.mean, self.tail)

    def log_delta(self):
        """log δ(K'(λ)) by the saddle point (non-increasing in λ): δ(ε) = E_P[(1 − e^{ε−L})₊]
        ≈ e^{K(λ) − λε} ∫₀^∞ (1 − e^{−u}) e^{−λu} du / (σ_λ√(2π)) = tail / (λ(λ + 1) σ_λ √(2π)),
        σ_λ² = K''(λ) (the tilted law near ε taken normal; cf. Lugannani–Rice). Far smaller
        than the Chernoff tail where ε is small: there δ is a difference of nearly equal tails."""
        lam = np.maximum(self.lam, 1e-300)
        spread = 0.5 * np.log(2 * np.pi * np.maximum(self.var, 1e-300))
        return np.minimum.accumulate(self.tail - np.log(lam * (lam + 1.0)) - spread)

    def tail_at_delta(self, log_delta):
        """The log Chernoff tail at the ε where the saddle-point δ is ``log_delta``."""
        order = slice(None, None, -1)  # both decrease in λ: reverse for interp
        return np.interp(log_delta, self.log_delta()[order], self.tail[order])

    def at_tail(self, log_tail):
        """(ε, λ) where the Chernoff tail is ``log_tail``."""
        order = slice(None, None, -1)  # the tail decreases in λ: reverse for interp
        return (np.interp(log_tail, self.tail[order], self.mean[order]),
                np.interp(log_tail, self.tail[order], self.lam[order]))


class Plan(NamedTuple):
    coarse: float          # the step of level 0
    points: int            # the largest composed window at level 0 (points)
    eps_level: int         # the level of every ε(δ) query
    tilts: tuple           # Tilts per direction
    hints: Optional[dict] = None  # direction → the window's Chernoff λ (up, down) at the first tail
    cut: float = math.inf  # ε(δ) queries with δ above it are answered ``extra`` levels finer too
    extra: int = 0

    def step(self, composition, level):
        return snap(composition, self.coarse / 2.0 ** level)

    def remove_leads(self, values: np.ndarray, of_delta: bool) -> np.ndarray:
        """Where the remove direction's saddle-point answer (``Tilts``) is the larger, at an
        array of δ (``of_delta``: ε(δ) queries) or of ε: which direction goes first. Beyond
        a direction's largest tilted mean its δ(ε) is taken as 0 (log −∞), not the last
        saddle point's: a bounded loss (the add direction of a subsampled mechanism, whose
        losses stay below −log(1 − q) a step) has δ(ε) = 0 past its largest loss."""
        if of_delta:
            with np.errstate(divide="ignore"):
                logs = np.log(values)
            rem, add = (t.at_tail(t.tail_at_delta(logs))[0] for t in self.tilts)
        else:
            rem, add = (np.interp(values, t.mean, t.log_delta(), right=-np.inf) for t in self.tilts)
        return rem >= add

    def delta_levels(self, eps, accuracy):
        """The level δ(ε) queries need at each ε of a sorted lattice (non-decreasing):
        only directions whose Chernoff tail at ε is within 10× of the larger count.
        A query is answered at every level from ``eps_level + extra`` up to its own."""
        looks = [(t.at_eps(eps)[1], delta_ratio(t, eps), t.rounded) for t in self.tilts]
        top = np.max([tail for tail, _, _ in looks], axis=0)
        need = np.full(np.shape(eps), np.inf)
        for tail, ratio, rounded in looks:
            if rounded:
                step = np.sqrt(8 * SHARE_DELTA * accuracy / (ratio * rounded))
                need = np.where(tail >= top - math.log(10.0), np.minimum(need, step), need)
        first = self.eps_level + self.extra  # (``profile.py``: δ(ε) queries start there)
        return np.clip(levels_for(self.coarse, np.minimum.accumulate(need)), first, first + DELTA_LEVELS)


def delta_ratio(tilts, eps):
    """p(ε)/δ(ε), the density of the composed loss over δ, at a lattice of ε,
    by the saddle point: p ≈ P(L > ε)·max(λ, 0.8/σ_λ) (an exponential tail
    of rate λ; near the mean, a normal density over P(L > ε) ≈ 1/2, σ_λ² =
    K''(λ)) and δ ≈ P(L > ε)/(λ + 1) (Q(L > ε) ≈ e^{−ε}P(L > ε)·λ/(λ + 1))."""
    # beyond the planned tails the tables see the single-step windows' edges, not the
    # loss: λ and σ_λ are taken at most where the Chernoff tail reaches 1e-30
    edge = tilts.at_tail(_TAILS[0])[0]
    eps = np.minimum(eps, edge)
    lam, _ = tilts.at_eps(eps)
    return (lam + 1.0) * np.maximum(lam, 0.8 / _spread(tilts, eps))


def _spread(tilts, eps):
    """σ_λ = √K''(λ) at the λ whose tilted mean is ``eps``."""
    return np.sqrt(np.maximum(np.interp(eps, tilts.mean, tilts.var), 1e-300))


def snap(composition, target):
    """``target`` moved onto the pairs' common lattice (the finer direction's)."""
    return min(snap_to_lattice(merge_gaussians(composition.direction(d)), target) for d in DIRECTIONS)


def levels_for(coarse, need):
    """ceil(log2(coarse/need)) ≥ 0 (at most ``MAX_LEVEL``)."""
    with np.errstate(divide="ignore"):
        level = np.ceil(np.log2(coarse / np.asarray(need, dtype=float)))
    return np.clip(np.nan_to_num(level, nan=0.0, posinf=MAX_LEVEL), 0, MAX_LEVEL).astype(np.int64)


def affordable(plan, level, refuse=False, accuracy=None):
    """``level`` clipped to the finest level whose base window (the coarsest
    window, doubled per level) holds at most ``MAX_BASE`` points (tilted and
    deeper-tail windows are wider, up to ``MAX_GRID``). Decided before
    anything is discretised; with ``refuse``, a level beyond it raises
    ``GridTooLarge`` instead, naming the memory it would need and what would answer."""
    top = max(int(math.floor(math.log2(MAX_BASE / max(plan.points, 1)))), 0)
    if refuse and np.max(level) > top:
        wanted = int(np.max(level))
        need = plan.points * 2 ** wanted
        # the step planned is ∝ sqrt(accuracy): each level finer costs 4× the accuracy
        fits = accuracy * 4.0 ** (wanted - top)
        fits = fits if fits < 0.5 and wanted < MAX_LEVEL else None  # at MAX_LEVEL the level was clipped
        raise GridTooLarge(
            f"accuracy={accuracy!r} needs a grid step of {plan.coarse / 2 ** wanted:.3g}: a window of ~{need:,} "
            f"grid points, ~{need * BYTES_PER_POINT / 2 ** 30:.2g} GB, beyond the cap of {MAX_BASE:,} points "
            f"(~{MAX_BASE * BYTES_PER_POINT / 2 ** 30:.2g} GB). "
            f"{f'accuracy={fits:.2g} fits; ' if fits else ''}method='rdp' answers at once (a looser upper "
            f"bound); or stage the composition with Discretise", fits)
    return np.minimum(level, top)


def tilts_of(items, rounded):
    """``Tilts`` from [(single-step grid, count), ...] on a λ lattice refined
    where the tilted mean or the Chernoff tail moves fast (a composition of
    rare large losses swings from its bulk to its tail within a few % of λ)."""
    lam, moments = _LAMBDAS, log_mgf(items).moments
    cgf, mean, var = moments(lam)
    for _ in range(_REFINE):
        tail = cgf - lam * mean
        # an interval reaching into the planned tails where ε grows by > 25 %
        planned = (tail[:-1] >= _TAILS[0]) & (tail[1:] <= _TAILS[1])
        steep = planned & (mean[1:] > 1.25 * mean[:-1]) & (lam[1:] > 1.001 * lam[:-1])
        if not steep.any():
            break
        new = np.sqrt(lam[:-1] * lam[1:])[steep]
        c, m, v = moments(new)
        order = np.argsort(np.concatenate((lam, new)))
        lam, cgf, mean, var = (np.concatenate(pair)[order] for pair in ((lam, new), (cgf, c), (mean, m), (var, v)))
    return Tilts(lam, cgf, np.maximum.accumulate(mean), var, rounded)


def plan(composition, accuracy, tail):
    """The ``Plan`` of a ``PairComposition`` at ``accuracy`` (window tail ``tail``)."""
    coarse, points, hints = _coarse(composition, tail)
    tilts, merged = [], []
    for d in DIRECTIONS:
        pairs = merge_gaussians(composition.direction(d))
        # a lattice the coarse step is not on is rounded too (until a finer level snaps to it)
        rounded = sum(k for p, k in pairs if p.lattice is None or not is_multiple(p.lattice, coarse))
        tilts.append(tilts_of(step_grids(pairs, coarse, tail), rounded))
        merged.append(pairs)
    # ε(δ): at each tail level, from the directions whose ε is within 20 % of the larger; up to
    # the tail where the saddle-point δ reaches the largest planned δ (1e-2), which is far
    # above 1e-2 where ε is small (few steps): there ε(δ) sits in the bulk of the loss, and
    # planning from the 1e-2 tail alone sized h for an ε ~2× too large (excess 0.08-0.13 %)
    top_tail = max([_TAILS[1]] + [float(t.tail_at_delta(_TAILS[1] + _MARGIN)) for t in tilts])
    levels = np.linspace(_TAILS[0], top_tail, 64)
    looks = [t.at_tail(levels) + (t.rounded,) for t in tilts]
    top = np.max([eps for eps, _, _ in looks], axis=0)
    need = np.full(len(levels), np.inf)
    for t, (eps, lam, rounded), pairs in zip(tilts, looks, merged):
        use = (eps >= 0.8 * top) & (eps > 0)
        if rounded and np.any(use & (eps <= _EPS_FLOOR)):  # (the pairs' δ(0) only where it matters)
            use &= eps > _floor(pairs)
        if rounded and use.any():
            # the quantiles move by (λ + 1)s²/2 (the module docstring); near the mean the density
            # leads (``delta_ratio``); a tail the table never reaches (its law's top atom heavier
            # than e^level) is beyond the support, where at_tail clamps to the last λ, whose tilted
            # variance may be 0 (the rate 0.8/σ infinite: RR(0.51)x5 + RR(0.999999)x6 + 2
            # Poisson-Gaussians asked for a step of 4e-14): there λ + 1 alone
            rate = np.where(levels >= t.tail[-1], np.maximum(lam + 1.0, 0.8 / _spread(t, eps)), lam + 1.0)
            with np.errstate(divide="ignore", invalid="ignore"):
                here = np.sqrt(8 * SHARE * accuracy * eps / (rate * rounded))
            need = np.where(use, np.minimum(need, here), need)
    level = levels_for(coarse, need)
    # the base tails within every rounded direction's table (else its λ there is clamped and
    # the saddle point reads nothing: one level serves every tail, as when none needs more)
    reached = all(t.tail[-1] <= _BASE_TAIL for t in tilts if t.rounded)
    base = levels <= _BASE_TAIL if reached else np.ones(len(levels), dtype=bool)
    eps_level = int(level[base].max(initial=0))
    cut, extra = _tail_split(tilts, top, level, base, eps_level)
    if not cut < 1.0:  # no δ query would be refined: the split would only coarsen
        eps_level, cut, extra = eps_level + extra, math.inf, 0
    return Plan(coarse, points, eps_level, tuple(tilts), hints, cut, extra)


def _tail_split(tilts, top, level, base, eps_level):
    """(δ*, E): the tail levels beyond ``_BASE_TAIL`` that need E levels more than the
    ε(δ) level, from the first of them (its ε, ``top``) on: δ* is the saddle-point δ there,
    the largest of the directions', over 10 (``_MARGIN``: the saddle point may put δ ~10×
    too high or too low). ε(δ) queries with δ > δ* are answered E levels finer too
    (``profile.py``); (∞, 0) where none needs more."""
    beyond = np.flatnonzero(~base & (level > eps_level))
    if not len(beyond):
        return math.inf, 0
    at = float(top[beyond[0]])
    log_delta = max(float(np.interp(at, t.mean, t.log_delta())) for t in tilts)
    return math.exp(log_delta - _MARGIN), int(level[beyond].max()) - eps_level


def _floor(pairs):
    """The ε below which a direction's tilts are rounding: ``_EPS_FLOOR`` where its losses are
    too small for any tail ε to reach it — their scale Σ k·δ_p(0) (each pair's total variation,
    ≥ the composition's) within ``_EPS_FLOOR``/30 (a Gaussian's ε at the 1e-30 tail is ~29× its
    total variation, 11.7μ against 0.4μ): P = Q, or pairs an ulp apart — else 0. The floor is not applied to every composition:
    genuine losses ~1e-11 (a Gaussian at σ = 1e11) have tilted means at λ ≤ 1e3 below it, and
    dropping their tilts would plan them at the coarse level, outside the accuracy at ε(1e-20).
    The pairs' loss ranges resolve ~3e-9 only."""
    reach = sum(k * float(np.max(p.delta(0.0))) for p, k in pairs)
    return _EPS_FLOOR if reach <= _EPS_FLOOR / 30 else 0.0


def _coarse(composition, tail):
    """(step, points, hints): the composed window at ``tail`` of the wider
    direction in ``_POINTS`` points, from provisional single-step grids of ~1k
    points, and each direction's window λ there (``compose.chernoff_lambdas``:
    the windows of every level search near them)."""
    steps, hints = [], {}
    merged = {d: merge_gaussians(composition.direction(d)) for d in DIRECTIONS}
    tails = {d: tail / sum(k for _, k in merged[d]) for d in DIRECTIONS}
    for t in dict.fromkeys(tails.values()):  # the directions' loss ranges at one tail scanned together
        loss_ranges([p for d in DIRECTIONS if tails[d] == t for p, _ in merged[d]], t)
    for d in DIRECTIONS:
        pairs = merged[d]
        ranges = loss_ranges([p for p, _ in pairs], tails[d])
        provisional = max(hi - lo for lo, hi in ranges) / 1024 or 1.0
        items = step_grids(pairs, provisional, tail)
        hints[d] = chernoff_lambdas(items, tail)
        ja, jb, _, _ = chernoff_window(items, tail, hints[d])
        steps.append(max(jb - ja, 1) * provisional / _POINTS)
    width = max(s * _POINTS for s in steps)
    pairs = [pk for d in DIRECTIONS for pk in merged[d]]
    lattices = {p.lattice for p, _ in pairs}
    if len(lattices) == 1 and None not in lattices:  # every loss on one lattice: the exact grid
        coarse = lattices.pop()
        return coarse, int(math.ceil(width / coarse)) + 1, hints
    coarse = snap(composition, max(steps))
    return coarse, int(math.ceil(width / coarse)) + 1, hints
