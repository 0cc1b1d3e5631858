"""The band lattice of a profile's tilted grids, and whether a band's grid would resolve a query.

Tilt centres sit on a fixed lattice of ε that depends on the mechanism alone
(``Bands._levels``: bands 4 standard deviations of the *tilted* law wide,
each tilted a quarter of the way up: ``step_profile.py``), so that one
tilted grid serves every query of its band and an array of queries gets
exactly the answers its elements get one by one.

A query that the base grid leaves noisy is read from the tilted grid of its
band, and from a grid tilted at its own answer where that one is still too
noisy. At fine accuracies the band's grid often is: its transform runs at a
tilt θ below the band centre's saddle point (``compose.read_tilt``:
narrower windows), so the bins near the top of a wide band keep nearly the
untilted noise. Building it then only costs a composition. ``band_noise``
predicts its noise bound at the query, and a query predicted to stay noisy
goes to its own tilt at once (``Bands._band_noisy``).

The model (``compose.compose``, ``transform.untilt``): bin j of a grid
tilted at θ carries the noise bound B·e^{C − θhj}, C = K(θ) the composed
log-MGF at θ and B the transform's per-bin bound (the untilted grid's B
taken for it), capped at the untilted grid's B where the two overlap; so
the noise above ε (``PLDGrid.noise_effect``) is about

    N(ε) = B·(j_c − j₀)₊ + B·e^{min(K(θ) − θhj₀, 0)}/(1 − e^{−θh}),

j₀ the first bin above ε and j_c = K(θ)/(θh) where the cap ends (a grid
composed alone, ``StepProfile._settled``, has no cap: the first term goes and
the second keeps e^{K(θ) − θhj₀} > 1). The
prediction only chooses which grids are composed: every grid consulted is
certified on its own, so no answer depends on it being right.
"""
import math
from typing import List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from ..grids.accountant import step_grids
from ..grids.chernoff import LogMGF, log_mgf
from ..grids.compose import read_tilt, saddle_tilt
from ..grids.grid import PLDGrid
from .tiers import TIERS

_BAND_SDS = 4.0       # band width W in standard deviations of the band's tilted law
# a band's grid predicted this far above a query's noise limit is skipped (``band_noise`` reads
# 7-12 % high: the few bands within that of the limit get a grid of their own instead)
_NOISY = 1.0

_StepGrids = List[Tuple[PLDGrid, int]]


class Frame(NamedTuple):
    """What ``band_noise`` reads of an untilted grid at the first tail: its step, its window
    (first grid index, number of points) and the per-bin noise bound of its transform."""
    step: float
    offset: int
    size: int
    noise: float

    @classmethod
    def of(cls, grid: PLDGrid) -> "Frame":
        """The frame of a composed grid."""
        return cls(grid.step, grid.offset, len(grid.probs), grid.noise)

    @classmethod
    def predicted(cls, coarse: PLDGrid, step: float) -> "Frame":
        """The frame of the untilted grid at ``step`` predicted from ``coarse``, the same
        direction's untilted grid at a coarser step (a scout's), without composing it: the
        same window in losses; the noise bound B = K(η + 4u)·Σ|ŷ|/size (``transform.fft``)
        scales with the mass per bin, so with the step, and with η, which grows as the log of
        the transform's length. A guess: it only chooses which grids are composed."""
        ratio = coarse.step / step
        size = int(math.ceil(len(coarse.probs) * ratio))
        grow = math.log(max(size, 2)) / math.log(max(len(coarse.probs), 2))
        return cls(step, int(math.floor(coarse.offset * ratio)), size, coarse.noise / ratio * grow)


class _Search(NamedTuple):
    """Where a direction's search up the band lattice stands (``Bands._levels``): replaced,
    not changed, at each new level."""
    items: _StepGrids             # the single-step grids at the first tail (``_single_steps``)
    mgf: LogMGF                  # their exact log-MGF: the tilted laws' variances
    lam: float                   # the last level's saddle λ: where the next level's search starts
    proxy: Optional[_StepGrids]   # the coarser single-step grids the searches start on, or None


class Bands:
    """The band lattice of a ``StepProfile`` (which provides ``grid``, ``step``, ``_pairs``,
    ``_bands``, ``_proxy_step`` and the dictionaries it fills: ``_width``, each direction's
    levels, and ``_mgf``, each direction's ``_Search``)."""

    def _single_steps(self, direction):
        """(the single-step grids of a direction at the first tail, those at the proxy's step
        or None where that is this step): what its λ searches run on."""
        pairs = self._pairs.direction(direction)
        proxy = None if self._proxy_step == self.step else step_grids(pairs, self._proxy_step, TIERS[0])
        return step_grids(pairs, self.step, TIERS[0]), proxy

    def _levels(self, direction, upto):
        """The tilt centres of one direction, L_0 < L_1 < … reaching past ``upto``:
        L_0 the composed mean (K'(0) of the exact log-MGF of the single-step grids: the
        lattice needs no composed grid), then L_{i+1} = L_i + W·sd(L_i), sd(L) the standard
        deviation of the composition tilted to have mean L (from the exact
        log-MGF of the single-step grids: K''(λ) at the saddle point λ of L).
        Tilted laws widen with λ (a few large single-step losses carry them),
        so the bands widen with them; they depend on the mechanism alone."""
        levels = self._width.setdefault(direction, [])
        if direction not in self._mgf:
            items, proxy = self._single_steps(direction)
            self._mgf[direction] = _Search(items, log_mgf(items), 1.0, proxy)
        if not levels:  # K'(0) = Σ k·(the mean of each finite part): no composed grid needed
            levels.append(math.fsum(k * g.loss_moment / mass for g, k in self._mgf[direction].items
                                    if (mass := float(g.probs.sum())) > 0))
        while upto > levels[-1] and len(levels) < 4096:
            search = self._mgf[direction]
            lam = saddle_tilt(search.items, levels[-1], search.proxy, start=search.lam)
            self._mgf[direction] = search._replace(lam=lam)
            var = search.mgf.moments(lam)[2]
            levels.append(levels[-1] + max(_BAND_SDS * math.sqrt(max(var, 0.0)), 64 * self.step))
        return levels

    def _band_tilt(self, direction, eps, coarse=1):
        """Grid index of the tilt centre of the band holding each ε: the middle
        of [L_i, L_{i+1}); ``coarse`` = c > 1 merges c consecutive bands (a
        cheaper first look, where only an upper bound below a ceiling is needed)."""
        eps = np.asarray(eps, dtype=float)
        finite = eps[np.isfinite(eps)]
        levels = self._bands._levels(direction, float(finite.max()) if finite.size else 0.0)
        # whole merged bands only, so that a band's edges never depend on how far other
        # queries have extended the lattice
        while (len(levels) < 2 or (len(levels) - 1) % coarse) and len(levels) < 4096:
            levels = self._bands._levels(direction, levels[-1] + self._bands.step)
        edges = np.asarray(levels[::coarse] if levels[::coarse][-1] == levels[-1] else levels[::coarse] + [levels[-1]])
        i = np.clip(np.searchsorted(edges, eps, side="right") - 1, 0, len(edges) - 2)
        centre = edges[i] + 0.25 * (edges[i + 1] - edges[i])  # tilted laws widen upwards
        return np.floor(centre / self.step).astype(np.int64)

    def _band_noisy(self, direction, tilts, eps, limit, frame, capped=True):
        """Where the grid of the band at tilt index ``tilts`` (at the first tail) is predicted
        (``band_noise``, with ``frame`` the untilted grid's ``Frame``; ``capped``: the tilted
        grid combined with it) to leave the noise at ε above ``_NOISY`` times ``limit``."""
        out = np.zeros(len(eps), bool)
        items, proxy = self._single_steps(direction)
        for j in np.unique(tilts):
            at = tilts == j
            out[at] = band_noise(items, proxy, frame, int(j), eps[at], capped) > _NOISY * limit[at]
        return out


def band_noise(items: Sequence[Tuple[PLDGrid, int]], proxy: Optional[Sequence[Tuple[PLDGrid, int]]], base: Frame,
               tilt: int, eps: np.ndarray, capped: bool = True) -> np.ndarray:
    """The predicted noise bound at each ε (an array) of the grid of ``items``
    (its single-step grids; ``proxy``: coarser ones the searches start on, or
    None) tilted at grid index ``tilt``, combined with the untilted grid at the
    first tail (``base``: its ``Frame``). The searches are those the tilted grid's
    composition makes (``accountant._composed``, ``compose._tilted``), whose
    λ and moments the log-MGFs keep: where the grid is then composed, they
    cost nothing twice. ``capped=False``: the tilted grid alone, its bins' noise
    bounds B·e^{K(θ) − θhj} not capped at B below j_c."""
    step = base.step
    lam = saddle_tilt(items, tilt * step, proxy)
    rough = log_mgf(proxy) if proxy else log_mgf(items)
    theta = read_tilt(rough, lam, (base.offset + base.size - 1) * step)
    if not theta > 0:
        return np.full(np.shape(eps), base.noise * base.size)
    cgf = rough(theta)
    first = np.floor(np.asarray(eps, dtype=float) / step) + 1
    below = np.maximum(cgf / (theta * step) - first, 0.0) if capped else 0.0
    with np.errstate(over="ignore"):
        decay = np.exp(np.minimum(cgf - theta * step * first, 0.0) if capped else cgf - theta * step * first)
    return base.noise * (below + decay / -math.expm1(-theta * step))
