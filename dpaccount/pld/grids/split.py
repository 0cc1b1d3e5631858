"""One grid taken K times whose large losses are rare: the bulk and the heavy
losses composed apart (a binomial expansion), for tilted grids whose plain
transform is noise-bound.

Where a single-step loss law ω is a light bulk with rare large losses (a
Poisson-subsampled mechanism at a tiny sampling rate), a small δ of ω^{*K}
is set by one or two large losses on top of a near-Gaussian bulk. No single
tilt centres that: the tilted law is a bulk near 0 plus a wide spread of
large losses, and the transform noise of K-fold powers (``transform.fft``:
K·η of the tilted peak) is then far above δ at every tilt. With a cut c,
ω = b + h (b the grid points below c, h those at or above it, with P(L = ∞))
and the binomial theorem for convolutions,

    ω^{*K} = Σ_{k<m} C(K, k) b^{*(K−k)} * h^{*k} + R_m,
    R_m = Σ_{k≥m} C(K, k) b^{*(K−k)} * h^{*k} ≤ C(K, m) h^{*m} * ω^{*(K−m)}

(as measures: each sequence of K steps with j ≥ m heavy ones is counted
C(j, m) ≥ 1 times on the right). Upper bounds take m = ``UPPER`` = 2 and the
dominating R_2; lower bounds m = ``LOWER`` = 3 and drop R_3. Each term is
composed on its own (``compose.py``): b^{*(K−k)} first (a narrow law: its
untilted noise is small), then that grid with k heavy steps, a product of
1 + k factors whose transform noise is no longer multiplied by K, tilted at
its own saddle point for k ≤ 1. Terms with two heavy steps or more weigh
about (Kp)²/2, p = h's mass, so their own noise hardly counts (they are
composed untilted, on narrower windows). The cut is the lowest grid point
with K·p ≤ ``RARE``. h is scaled by 2^e (exact) to a mass in
[½, 1], so that every term's window tails are of its own size, and each
term weighs C(K, k)·2^{−ek}."""
import math
from typing import List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from ...numerics import ULP_OF_ONE as _U
from .cache import GridCache
from .grid import PLDGrid

RARE = 1e-4     # K·P(L ≥ c) at the cut: the expected number of heavy steps
UPPER = 2       # upper bounds: terms k < UPPER exactly, the rest dominated by R_UPPER
LOWER = 3       # lower bounds: terms k < LOWER exactly, the rest dropped
_CARRIED = 0.5  # the heavy losses' share of the tilted mean's rise above which the split is tried
_FEW = 0.25     # and the most heavy steps the tilted law may expect


class Split(NamedTuple):
    """ω = bulk + 2^{−exponent}·heavy, and the weights C(K, k)·2^{−k·exponent} of the
    terms k < ``LOWER`` (R_UPPER's that of k = UPPER), rounded up (pessimistic) or down."""

    bulk: PLDGrid
    heavy: PLDGrid
    exponent: int
    weights: Tuple[float, ...]


def heavy_split(grid: PLDGrid, count: int, tilt: float, level: float, tail: float) -> Optional[Split]:
    """The split of ``grid`` taken ``count`` times (module docstring), where the
    heavy losses carry at least half of the rise of the mean of the law tilted
    at ``tilt`` (centred at ``level``) over the untilted mean and that law expects at most ``_FEW`` of them (one or
    two heavy steps on the bulk reach the level): else (a bulk that reaches the
    level itself, many heavy steps, or no cut with K·p ≤ ``RARE``) None. The
    choice only decides tightness: every split is an exact identity."""
    if count <= LOWER or not level > 0.0:
        return None
    _, mean, split = _PREPARED.get((grid, count, tail), lambda: (grid, *_prepared(grid, count, tail)))
    if split is None:
        return None
    logs, losses = grid._live_log
    # the heavy steps' share of the tilted mean's rise over the untilted mean K·x̄ (both rise
    # alike under a shift of every loss, as in an optimistic grid's frame)
    w = logs + tilt * losses
    w = np.exp(w - w.max())
    heavy_at = losses >= split.heavy.offset * grid.step
    total = float(w.sum())
    rise = level - count * mean
    if not rise > 0 or count * float(np.sum(w[heavy_at] * (losses[heavy_at] - mean))) < _CARRIED * rise * total:
        return None  # the bulk carries the level: the plain tilt centres it
    if count * float(w[heavy_at].sum()) > _FEW * total:
        return None  # three heavy steps or more carry it: R, a plain composition, would answer
    return split


def _prepared(grid: PLDGrid, count: int, tail: float) -> Tuple[float, Optional[Split]]:
    """(the mean of ``grid``'s finite losses, its split for ``count`` steps or None where it
    has none): what ``heavy_split`` needs that does not depend on the tilt, kept for the
    grids re-centred at an answer (``_PREPARED``)."""
    probs = grid.probs
    above = np.cumsum(probs[::-1])[::-1] + grid.p_inf  # P(L ≥ ε_j), as a guide only
    rare = np.flatnonzero(count * above <= RARE)
    if not len(rare) or rare[0] == 0 or (not grid.pessimistic and count * grid.p_inf > tail):
        return 0.0, None  # (lower bounds drop R, and with it K·P(L = ∞) at most: kept below the tail)
    cut = int(rare[0])
    logs, losses = grid._live_log
    mean = float(np.sum(np.exp(logs - logs.max()) * losses)) / float(np.exp(logs - logs.max()).sum())
    mass = float(probs[cut:].sum()) * (1 + (len(probs) - cut + 2) * _U) + grid.p_inf * (1 + 2 * _U)
    exponent = -math.frexp(mass)[1]  # mass·2^e ≤ 1 (e ≥ 1)
    bulk, heavy = parts(grid, cut, exponent)
    # C(K, k) as a float within u/2 of itself, padded outwards by 2u; 2^{−ek} is exact
    pad = 1 + 2 * _U if grid.pessimistic else 1 - 2 * _U
    weights = tuple(math.ldexp(float(math.comb(count, k)) * pad, -k * exponent) for k in range(LOWER))
    if not min(weights) >= 2.0 ** -1022:
        return mean, None  # a weight in the subnormal range would not be within 2u of itself
    return mean, Split(bulk, heavy, exponent, weights)


def _prepared_bytes(held: Tuple[PLDGrid, float, Optional[Split]]) -> int:
    """Bytes an entry of ``_PREPARED`` keeps: the grid (its masses and log masses,
    ``PLDGrid._live_log``) and its split's masses."""
    grid, _, split = held
    return 8 * (3 * len(grid.probs) + (0 if split is None else len(split.bulk.probs) + len(split.heavy.probs)))


# (grid, count, tail) → (grid, ``_prepared``): each grid held as long as its entry, and counted
_PREPARED = GridCache(limit=64 * 2 ** 20, size_of=_prepared_bytes)


def parts(grid: PLDGrid, cut: int, exponent: int) -> Tuple[PLDGrid, PLDGrid]:
    """(bulk, heavy) of ``grid``: its points below index ``cut`` and, scaled by 2^e
    (exact), those from it on with P(L = ∞)."""
    cut = min(max(cut, 0), len(grid.probs))
    bulk = PLDGrid(step=grid.step, offset=grid.offset, probs=grid.probs[:cut].copy(), p_inf=0.0,
                   pessimistic=grid.pessimistic)
    heavy = PLDGrid(step=grid.step, offset=grid.offset + cut, probs=np.ldexp(grid.probs[cut:], exponent),
                    p_inf=math.ldexp(grid.p_inf, exponent), pessimistic=grid.pessimistic)
    return bulk, heavy


Items = List[Tuple[PLDGrid, int]]


def proxy_terms(split: Split, proxy: Optional[Sequence[Tuple[PLDGrid, int]]], count: int,
                pessimistic: bool) -> Optional[List[Items]]:
    """The items of each term (``terms``) on ``proxy`` (the same grid at a coarser
    step, as [(grid, count)]) cut at the same loss: their log-MGFs start the terms'
    searches (``compose._near``); None where there is no such proxy."""
    if not proxy or len(proxy) != 1 or proxy[0][1] != count:
        return None
    coarse = proxy[0][0]
    cut = int(math.floor(split.heavy.offset * split.heavy.step / coarse.step)) - coarse.offset
    bulk, heavy = parts(coarse, cut, split.exponent)
    if not len(bulk.probs) or not len(heavy.probs):
        return None
    return [[(bulk, count)] if k == 0 else [(coarse if dominated else bulk, count - k), (heavy, k)]
            for k, dominated in terms(pessimistic)]


def terms(pessimistic: bool) -> List[Tuple[int, bool]]:
    """(k, whether the term is R_k, the dominating remainder) of each term composed."""
    if pessimistic:
        return [(k, False) for k in range(UPPER)] + [(UPPER, True)]
    return [(k, False) for k in range(LOWER)]


class Term(NamedTuple):
    """A composed term: its window's first index, its bins (without the mass moved to
    the window's bottom), their noise bounds, that moved mass and the mass at +∞."""

    offset: int
    probs: np.ndarray
    noise: np.ndarray
    below: float
    p_inf: float


def mix(parts: Sequence[Term], weights: Sequence[float], pessimistic: bool
        ) -> Tuple[int, np.ndarray, np.ndarray, List[Tuple[int, float]], float]:
    """Σ_k w_k·term_k on the union of the terms' windows: (offset, bins, noise bounds,
    [(index, moved mass)], mass at +∞). Each product and the sum of m terms round by
    at most (m + 1)·u/2 of the sum (all terms ≥ 0): a factor 1 ± 8u outwards covers it
    for m ≤ 8."""
    first = min(t.offset for t in parts)
    last = max(t.offset + len(t.probs) - 1 for t in parts)
    probs, noise = np.zeros(last - first + 1), np.zeros(last - first + 1)
    moved, p_inf = [], 0.0
    for t, w in zip(parts, weights):
        at = slice(t.offset - first, t.offset - first + len(t.probs))
        probs[at] += w * t.probs
        noise[at] += w * t.noise
        moved.append((t.offset, w * t.below))
        p_inf += w * t.p_inf
    pad = 1 + 8 * _U if pessimistic else 1 - 8 * _U
    probs *= pad
    noise *= 1 + 8 * _U
    return first, probs, noise, [(j, m * pad) for j, m in moved], p_inf * pad


def carried_noise(bulk: PLDGrid, heavy: PLDGrid, k: int, offset: int, n: int) -> np.ndarray:
    """A bound on the noise that ``bulk``'s uniform per-bin bound ν puts in bins
    offset … offset + n − 1 of bulk * heavy^{*k}: ν times the mass of heavy^{*k}
    within a bulk window's reach of each bin. For k = 1 a sliding sum of heavy's
    masses (its prefix sums, each within m·u·M of itself over m points of mass M:
    padded by twice that); for k > 1 the whole mass M^k."""
    mass = float(heavy.probs.sum()) * (1 + (len(heavy.probs) + 2) * _U) + heavy.p_inf
    if k > 1:
        return np.full(n, bulk.noise * mass ** k * (1 + 8 * _U))
    prefix = np.concatenate(([0.0], np.cumsum(heavy.probs)))
    s = np.arange(offset, offset + n) - heavy.offset  # bin s takes heavy's points s − i, i in bulk's window
    top = np.clip(s - bulk.offset + 1, 0, len(heavy.probs))
    bottom = np.clip(s - (bulk.offset + len(bulk.probs) - 1), 0, len(heavy.probs))
    within = np.maximum(prefix[top] - prefix[bottom], 0.0) + 2 * len(heavy.probs) * _U * mass
    return bulk.noise * (within + heavy.p_inf) * (1 + 8 * _U)
