"""The certified privacy profile of a composition at one grid step.

``StepProfile(pairs, accuracy, step)`` answers δ(ε) and ε(δ) of a
``PairComposition`` (worst case over the remove and add directions) for
arrays of queries, from a handful of composed grids at one step that every
query shares (kept in the byte-bounded cache of ``cache.py``). Which step a
query gets is ``PrivacyProfile``'s choice (``profile.py``, ``plan.py``).

* **The base grid** of each direction, window tail 1e-30 (what leaves the
  window goes to +∞, so it must stay ≤ 1e-6·δ): one FFT composition, then
  O(n) prefix sums and O(1) per δ(ε) query (``grid.py``).
* **Tail tiers.** Smaller δ need smaller window tails; tails come in tiers
  (1e-30, 1e-100, 1e-200, 1e-306) and a query takes the first tier ≤ 1e-6·δ,
  so one grid serves every δ of a tier.
* **Tilted grids by band.** Where the transform-noise bound could move a
  δ by more than its share of the accuracy, the answer is read from a grid
  composed exponentially tilted (``compose.py``): accurate to ~1e-15 of
  itself (plus the tilting's rounding pad, ~1e-8) over several standard deviations of the tilted law around its
  centre. Tilt centres sit on a fixed lattice of ε that depends on the
  mechanism alone (``bands.py``: bands 4 standard deviations of the *tilted*
  law wide, which widen as the tilt grows; each tilted a quarter of the way
  up), so a query's grids depend on the query alone: an array of queries
  gets exactly the answers its elements get one by one. A query the band's
  grid cannot resolve (its per-bin noise bound, ``PLDGrid.noise_effect``,
  still too large) gets a grid tilted at its own answer, re-centred until it
  settles; so does at once a query whose band's grid is predicted to stay too
  noisy there (``bands.band_noise``). Queries at the deep tiers (δ < 1e-24) first look on pairs of merged
  bands: there the tilted laws of rare large losses are wide, and one grid
  tilted a quarter of the way up two bands resolves both; a query it does not
  resolve goes on to its own band's grid. The direction that does not set the
  answer (by the plan's saddle points, ``Plan.remove_leads``; else its base
  grid answers lower) is refined only until it is below the other's answer:
  not at all where a scout's (a coarser level's) base grid, or a Chernoff bound from its single-step grids
  already is (``chernoff.delta_bound``), else first on merged bands (three at a time).

* **ε(δ) without the base grid** (``_lean``). Where a coarser level's base
  grid (the scout's) predicts that this step's base grid would leave an ε(δ)
  query loose anyway, that grid is not composed: the query starts from the
  scout's answer (certified) and is read from tilted grids composed alone,
  not combined bin by bin with the base grid (``compose._prefer`` only takes
  the smaller of two upper bounds per bin, so each tilted grid is certified
  without it, only looser far below its tilt, where such a query is not
  read). Reads that go far below (δ(ε) at small ε, the certificate, lower
  bounds) still compose the base grid, lazily; which grids a query uses
  depends on the mechanism and the query alone, never on the cache.

Every grid is pessimistic (or, for lower bounds, optimistic) on its own, so
the smallest upper bound (largest lower bound) over the grids consulted is
certified whatever the tilts: the tilts choose tightness, never soundness.
"""
import copy
import math
from typing import NamedTuple, Optional, Tuple

import numpy as np

from ..grids.accountant import composed_grid, step_grids
from ..pairs.composition import DIRECTIONS
from ..grids.cache import GRIDS, GridCache
from ..grids.chernoff import delta_bound
from ..grids.grid import PLDGrid
from .bands import Bands, Frame
from .eps_of_delta import EpsilonOfDelta, at_floor
from .tiers import TIERS, tier_of

_DEEP_MERGE = 2      # deep tiers: a first look on pairs of bands merged (``_delta_at``)


def leads(rough):
    """Where the remove direction's rough answer is the larger (it goes first)."""
    return rough["remove"] >= rough["add"]


def p_inf_of(pairs):
    """P(L = +∞) of a composition of (pair, count): 1 − Π (1 − p_inf)^k."""
    if any(p.p_inf >= 1 for p, _ in pairs):
        return 1.0
    return -math.expm1(sum(k * math.log1p(-p.p_inf) for p, k in pairs))


class GridCertificate(NamedTuple):
    """What a direction's base grid certifies: its step and window (offset,
    size), the mass it counts at +∞ (the true P(L=∞) plus the window's tail),
    the per-bin bound of transform noise added to every bin, and its rounding."""

    direction: str
    step: float
    offset: int
    size: int
    p_inf: float
    noise: float
    tail: float
    pessimistic: bool


class StepProfile(EpsilonOfDelta, Bands):
    """δ(ε) and ε(δ) of a ``PairComposition`` on grids of one step, certified.

    ``delta``/``epsilon`` are rigorous upper bounds (pessimistic grids);
    ``delta_lower``/``epsilon_lower`` rigorous lower bounds (optimistic
    grids) on the same step. ``bands``: a ``StepProfile`` whose band lattice
    to share (that of a coarser step: fewer bands). ``accuracy`` sets how far the transform noise
    may move an answer (a tenth of it) before a tilted grid is consulted.
    All take arrays."""

    def __init__(self, pairs, accuracy, step, bands=None, hints=None, scout=None):
        self._pairs = pairs
        self._scout = scout  # (a coarser StepProfile, the Plan): ``_worst``
        self._hints = hints or {}  # direction → window λ at the first tail (``Plan.hints``)
        self.accuracy = accuracy
        self.step = step
        self._lattice = bands  # a coarser step's, whose band lattice to share (``_bands``), or None
        self._true_inf = {d: p_inf_of(pairs.direction(d)) for d in DIRECTIONS}
        self._width, self._mgf = {}, {}
        self._held = None  # a GridCache of one query's grids (``holding``), or None

    def holding(self, held: GridCache) -> "StepProfile":
        """This profile, its grids kept in ``held`` too (a cache for one query, dropped when it
        returns: ``cache.query_cache``) besides the shared cache: a query that asks for a few
        large grids again and again (a tilted grid of millions of points, an ε(δ) query and
        then its bulk check) builds each once, though the shared cache cannot keep them all;
        so do its scout (``scout``) and the profile whose band lattice it shares. Everything
        else (band lattice, λ searches) is this profile's own, shared: a grid is the same
        whichever cache it comes from, so no answer depends on which holds it."""
        view = copy.copy(self)
        view._held = held
        view._lattice = self._lattice and self._lattice.holding(held)
        if self._scout is not None:
            view._scout = (self._scout[0].holding(held), self._scout[1])
        return view

    @property
    def _bands(self):
        """Whose band lattice (``_levels``) tilt centres come from: this profile, or a coarser
        step's (held apart from ``self``: a profile that held itself would be a reference cycle,
        its grids freed only by the cyclic garbage collector)."""
        return self._lattice or self

    @property
    def scout(self) -> Optional["StepProfile"]:
        """The coarser level's ``StepProfile`` the direction that does not set an answer is
        first read from (``_worst``), or None."""
        return self._scout and self._scout[0]

    @property
    def _proxy_step(self):
        """The coarser step whose single-step grids the λ searches of this step's grids start on
        (``accountant.composed_grid``): the band lattice's where that is a coarser level's (whose
        grids the queries have built), else the scout's."""
        return (self._lattice or self.scout or self).step

    # -- grids -------------------------------------------------------------
    def grid(self, direction, tail=TIERS[0], pessimistic=True, tilt=None, alone=False):
        """The composed grid of one direction; ``tilt`` (a grid index) centres an
        exponentially tilted run there, combined with the base grid at tail 1e-30
        unless ``alone`` (``_settled``: certified on its own, only looser far below the tilt)."""
        key = (self._pairs, direction, self.step, tail, pessimistic, tilt, alone)

        def build():
            base = (self.grid(direction, tail, pessimistic)
                    if tilt is not None and tail == TIERS[0] and not alone else None)
            return composed_grid(self._pairs.direction(direction), tail=tail,
                                 pessimistic=pessimistic, step=self.step,
                                 tilt_at=None if tilt is None else tilt * self.step, base=base,
                                 hints=self._hints.get(direction, (None, None)) if tail == TIERS[0] else (None, None),
                                 proxy_step=self._proxy_step)
        if self._held is not None:
            return self._held.get(key, lambda: GRIDS.get(key, build))
        return GRIDS.get(key, build)

    def certificate(self):
        """A ``GridCertificate`` of each direction's base grid."""
        out = []
        for d in DIRECTIONS:
            g = self.grid(d)
            out.append(GridCertificate(d, g.step, g.offset, len(g.probs), g.p_inf, g.noise, TIERS[0],
                                       g.pessimistic))
        return tuple(out)

    # -- δ(ε) --------------------------------------------------------------
    def delta(self, eps):
        """Certified upper bound on δ(ε), vectorised over ε ≥ 0."""
        return self._worst(eps, lambda d, x, c: self._delta_one(d, x, True, c), PLDGrid.delta)

    def delta_lower(self, eps):
        """Certified lower bound on δ(ε) at this accuracy."""
        return self._worst(eps, lambda d, x, c: self._delta_one(d, x, False, c), PLDGrid.delta)

    def _worst(self, values, one, rough):
        """max over the directions of ``one(direction, values, ceiling)``. The
        direction whose answer is the higher goes first (by the base grids, or,
        with a scout, by the plan's saddle points: ``Plan.remove_leads``); the
        other one is refined only until its upper bound is at most the first's
        answer (``ceiling``): below that it cannot change the max. With a scout
        (a coarser level's ``StepProfile``) the other one is first read from
        the scout's base grid, whose answer, certified too, often already is at
        most the first's: then its grids at this step are never composed. Where
        both directions hold the same pairs, their laws and answers are equal:
        one is computed."""
        values = np.asarray(values, dtype=float)
        flat = values.ravel()
        if self._pairs.remove == self._pairs.add:
            out = np.asarray(one("remove", flat, None), dtype=float).reshape(values.shape)
            return float(out) if out.ndim == 0 else out
        if self._scout is None:
            first = leads({d: rough(self.grid(d), flat) for d in DIRECTIONS})
        else:
            first = self._scout[1].remove_leads(flat, rough is PLDGrid.epsilon)
        out = np.zeros(flat.shape)
        for d, mine in (("remove", first), ("add", ~first)):
            if mine.any():
                out[mine] = one(d, flat[mine], None)
        for d, mine in (("remove", ~first), ("add", first)):
            if self._scout is not None and mine.any():
                idx = np.flatnonzero(mine)
                mine[idx[rough(self._scout[0].grid(d), flat[idx]) <= out[idx]]] = False
            if mine.any():
                out[mine] = np.maximum(out[mine], one(d, flat[mine], out[mine]))
        out = out.reshape(values.shape)
        return float(out) if out.ndim == 0 else out

    def _excess(self, direction, grid):
        """Mass the grid counts at +∞ beyond the true P(L = ∞): its window's tails."""
        return max(grid.p_inf - self._true_inf[direction], 0.0)

    def delta_of(self, direction, eps, ceiling=None):
        """Certified upper bound on δ(ε) of one direction (an array of ε); with
        ``ceiling`` (an array) refined only until it is at most the ceiling."""
        return self._delta_one(direction, np.asarray(eps, dtype=float), True, ceiling)

    def resolving(self, direction: str, delta: float, share: float) -> Tuple[float, Optional[PLDGrid]]:
        """(ε(δ) of one direction at one δ of the first tier, the band's tilted grid that
        reads it with its noise bound raising δ by at most ``share`` of δ), the bands tried
        as ε(δ) does (``_epsilon_at``: from the base grid's answer, or, where ``_lean`` skips
        the base grid, from the scout's and on the tilted grids alone, then each reading's;
        at most 3 grids; the grids ε(δ) composes); (NaN, None) where none does. A reading at a
        grid's floor (``at_floor``) does not count."""
        lean, start = self._lean(direction, np.array([delta]))
        alone = bool(lean[0])
        eps = float(start[0]) if alone else float(self.grid(direction).epsilon(delta))
        for _ in range(3):
            if not np.isfinite(eps):
                break
            grid = self.grid(direction, TIERS[0], True, int(self._band_tilt(direction, [eps])[0]), alone)
            eps = float(grid.epsilon(delta))
            # a reading at the grid's floor (its window starting above the answer: a start off a
            # coarser grid's noise floor) is no reading of the law's density there
            if np.isfinite(eps) and not grid.noise_over(eps, share * delta) and not at_floor(grid, np.array([eps]))[0]:
                return eps, grid
        return math.nan, None

    def _delta_one(self, direction, eps, pessimistic, ceiling=None):
        upper, tiers = self._delta_at(direction, eps, True, ceiling)
        if pessimistic:
            return upper
        lower = np.zeros(eps.shape)
        live = upper > (-np.inf if ceiling is None else ceiling)  # else it cannot raise the max
        lower[live] = self._delta_at(direction, eps[live] + self._snapped(direction), False, None, tiers[live])[0]
        return lower

    def _snapped(self, direction):
        """How far up the optimistic grids' kink snap may have moved the composed
        losses: each single-step grid moves mass up by at most 1e-9 of its step
        (≤ this step; ``discretise_optimistic.put_below``), so the composition by
        at most Σk·1e-9·step. Lower ends read δ at ε + that and take it off ε
        (rounded up: a factor 2 over the sum's few ulps)."""
        return 2e-9 * self.step * sum(k for _, k in self._pairs.direction(direction))

    def _dismiss(self, direction, eps, ceiling, out, open_, flags):
        """Where a query is still ``open_`` after the base grid (it would need tilted
        grids) and ``chernoff_delta`` is at most the other direction's answer
        (``ceiling``): that bound is this direction's answer (``out``, in place),
        and the ``flags`` (arrays) are cleared there."""
        idx = np.flatnonzero(open_)
        if len(idx):
            bound = self.chernoff_delta(direction, eps[idx], ceiling[idx])
            below = bound <= ceiling[idx]
            out[idx[below]] = np.minimum(out[idx[below]], bound[below])
            for flag in flags:
                flag[idx[below]] = False

    def chernoff_delta(self, direction, eps, ceiling):
        """Certified upper bound on δ(ε) of one direction from the log-MGF of its
        single-step grids alone (``chernoff.delta_bound``), their window tails at
        the tier of ``ceiling`` (what they count at +∞ stays below it): where it
        is at most the other direction's answer, this direction needs no tilted
        grid (asked only where the base grid leaves a query open: on a
        composition of many distinct grids the bound costs a pass over all
        their points per λ)."""
        out = np.ones(eps.shape)
        tiers = tier_of(ceiling)
        for tier in np.unique(tiers):
            at = tiers == tier
            items = step_grids(self._pairs.direction(direction), self.step, TIERS[tier])
            out[at] = delta_bound(items, eps[at])
        return out

    def _delta_at(self, direction, eps, pessimistic, ceiling, tiers=None):
        """δ(ε) of one direction, and the tail tier each query ended at. A
        grid's answer is final where its noise bound moves δ by at most a tenth
        of the accuracy and its window's tails (at +∞) by at most 1e-6 of δ, or
        (``ceiling``) where an upper bound is already at most the other
        direction's answer. Otherwise: the band's tilted grid, then a grid
        tilted at ε itself; where the window's tail is what is too large, all
        of that again at the next tail of ``TIERS``. Lower bounds (optimistic
        grids, which drop what leaves the window) use the upper bound's tiers."""
        acc, better = self.accuracy, (np.minimum if pessimistic else np.maximum)
        out = np.full(eps.shape, np.inf if pessimistic else 0.0)
        noisy, cut = np.ones(eps.shape, bool), np.zeros(eps.shape, bool)
        given, tiers = tiers is not None, np.zeros(eps.shape, np.int64) if tiers is None else tiers

        def read(g, at):
            out[at] = better(out[at], g.delta(eps[at]))
            open_ = np.ones(len(at), bool) if ceiling is None or not pessimistic else out[at] > ceiling[at]
            cut[at] = open_ & (self._excess(direction, g) > 1e-6 * out[at])
            noisy[at] = open_ & g.noise_over(eps[at], 0.1 * acc * out[at])

        for tier, tail in enumerate(TIERS):
            if given:
                at = np.flatnonzero(tiers == tier)
            else:
                at = np.arange(len(eps)) if tier == 0 else np.flatnonzero(cut)
                tiers[at] = tier
            if not len(at):
                if given:
                    continue
                break
            if tier == 0:
                read(self.grid(direction, tail, pessimistic), at)
                if ceiling is not None and pessimistic:
                    self._dismiss(direction, eps, ceiling, out, noisy | cut, (noisy, cut))
            else:
                noisy[at] = True
            merge = 3 if ceiling is not None and pessimistic else (_DEEP_MERGE if tier else 1)
            if merge > 1 and noisy[at].any():  # a first look on merged bands
                idx = at[noisy[at]]
                tilts = self._band_tilt(direction, eps[idx], coarse=merge)
                for j in np.unique(tilts):
                    read(self.grid(direction, tail, pessimistic, int(j)), idx[tilts == j])
            idx = at[noisy[at]]
            if not len(idx):
                continue
            tilts = self._band_tilt(direction, eps[idx])
            if tier == 0:  # a band's grid predicted to stay noisy: the query's own tilt at once
                band = ~self._band_noisy(direction, tilts, eps[idx], 0.1 * acc * out[idx],
                                         Frame.of(self.grid(direction)))
                idx, tilts = idx[band], tilts[band]
            for j in np.unique(tilts):
                read(self.grid(direction, tail, pessimistic, int(j)), idx[tilts == j])
            idx = at[noisy[at]]
            for i in idx[~cut[idx]]:  # the band's grid is not enough: tilt at ε itself
                read(self.grid(direction, tail, pessimistic, int(math.floor(eps[i] / self.step))), [i])
        return out, tiers
