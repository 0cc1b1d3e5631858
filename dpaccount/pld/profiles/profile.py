"""The certified privacy profile of a composition: grids sized by the question.

``PrivacyProfile(pairs, accuracy)`` answers δ(ε) and ε(δ) of a
``PairComposition`` for arrays of queries. It plans grid steps from the
question (``plan.py``): a lattice of steps, the coarsest holding the
composed window in a few thousand points, each next one half as wide; each
step's grids and answers are a ``StepProfile`` (``step_profile.py``),
built once and shared by every query that asks for that step.

* ε(δ) queries use one step per mechanism (``Plan.eps_level``), so that
  ε(δ) is one non-increasing curve; above a cut δ* (``Plan.cut``: the tails
  beyond 1e-4 that need finer; ``bulk.bulk_split``: where that level's own
  grids predict an excess beyond the accuracy, ε(δ) in the bulk of a
  mixture: few steps, or tiny q) the smaller of it and the answer E levels finer.
* A δ(ε) query takes the finest ε(δ) level L (``Plan.extra`` above theirs)
  where its tilt λ(ε) says that suffices (small ε), else the level ℓ(ε) > L
  it needs (``Plan.delta_levels``, non-decreasing in ε, at most 2³× finer); its answer is the smaller of
  δ_ℓ(ε) and the anchors of the levels from L to ℓ − 1 (``_anchor``: each
  level's answer at the last ε it serves, which bounds δ at every larger
  ε). Each level's δ being non-increasing in ε, so is the answer, at the
  price of at most one level's grids beyond the query's own (the chain of
  every level δ_L … δ_ℓ(ε) at ε itself cost up to twice the finest one).
  The direction refined under the other's answer (below) asks level L
  first, where it usually settles.

* Certified intervals (``epsilon_bounds``, ``delta_bounds``): the upper
  bound of the plain query and the lower bound of the optimistic grids at
  the same level, then one level finer per round (the step halves) only
  where the interval is still wider than the accuracy.

An element of an array gets exactly the answer it gets alone (its levels
depend on it alone), and every answer is certified whatever the plan: the
plan chooses tightness, never soundness.
"""
from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Dict, Optional, Tuple, Union

import numpy as np

from ... import progress
from ...errors import AccuracyWarning, GridTooLarge
from ..grids.cache import GridCache, query_cache
from .bulk import bulk_split
from .plan import affordable, plan
from .step_profile import StepProfile
from .tiers import TIERS

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray
    from ..pairs.composition import PairComposition
    from ..grids.grid import PLDGrid
    from .step_profile import GridCertificate

_PLANS = GridCache(limit=4096, size_of=lambda _: 1)  # plans: small, counted not sized
# an interval this many times wider than asked refines two levels at once: one level shrinks
# the optimistic error by 2 (first order: an atom off the grid) to 4 (second order), so one
# alone cannot reach the accuracy (a δ plan of Poisson-RR parts starts where its upper end
# is exact, its lower end 12 times too wide; five rounds of one level fell short)
_JUMP = 4.0
# the levels between a StepProfile and its scout (``StepProfile._worst``): the direction that does
# not set the answer is first read 2^_SCOUT times coarser (its excess 4^_SCOUT times the level's)
_SCOUT = 3


class PrivacyProfile:
    """δ(ε) and ε(δ) of a ``PairComposition`` at one accuracy, certified.

    ``delta``/``epsilon`` are rigorous upper bounds (pessimistic grids),
    planned to land within ``accuracy`` (relative) of the exact value;
    ``delta_lower``/``epsilon_lower`` rigorous lower bounds (optimistic
    grids) on the same steps, not refined. All take arrays. ``step``,
    ``grid`` and ``certificate`` describe the grids of ε(δ) queries."""

    _at: Dict[int, StepProfile]
    _anchors: Dict[Tuple[str, int], float]

    def __init__(self, pairs: PairComposition, accuracy: float) -> None:
        self._pairs = pairs
        self.accuracy = accuracy
        self.plan = _PLANS.get((pairs, accuracy), lambda: plan(pairs, accuracy, TIERS[0]))
        self._at, self._delta_plan, self._anchors, self._bulk = {}, None, {}, None

    @property
    def _eps_level(self):
        """The ε(δ) queries' level (``GridTooLarge`` up front where it exceeds the cap)."""
        return int(affordable(self.plan, self.plan.eps_level, refuse=True, accuracy=self.accuracy))

    @property
    def _delta_first(self) -> int:
        """The δ(ε) queries' first level: the finest the ε(δ) queries plan (``Plan.extra``
        above theirs: the small ε of few steps and of rare-event mixtures sit in the tails
        beyond 1e-4, where δ(ε)'s own plan, at their saddle point, says less than they need)."""
        return int(affordable(self.plan, self.plan.eps_level + self.plan.extra, refuse=True, accuracy=self.accuracy))

    def at_level(self, level: int) -> StepProfile:
        """The ``StepProfile`` of one level of the plan's step lattice."""
        if level not in self._at:
            first = self._eps_level
            bands = self.at_level(first) if level > first else None  # δ levels share the ε level's bands
            scout = (self.at_level(max(level - _SCOUT, 0)), self.plan) if level else None
            self._at[level] = StepProfile(self._pairs, self.accuracy, self.plan.step(self._pairs, level), bands,
                                          self.plan.hints, scout)
        return self._at[level]

    @property
    def _eps(self):
        return self.at_level(self._eps_level)

    def _coarser(self, short):
        warnings.warn(f"the grid step this accuracy ({self.accuracy!r}) needs would exceed the grid cap; "
                      f"answered from a grid {2 ** short}× coarser: still a certified bound, "
                      f"but possibly looser than the accuracy asked for", AccuracyWarning, stacklevel=4)

    @property
    def step(self) -> float:
        return self._eps.step

    def grid(self, direction: str, tail: float = TIERS[0], pessimistic: bool = True,
             tilt: Optional[int] = None) -> PLDGrid:
        """A composed grid of one direction at the ε(δ) queries' step (``StepProfile.grid``)."""
        return self._eps.grid(direction, tail, pessimistic, tilt)

    def certificate(self) -> Tuple[GridCertificate, ...]:
        """A ``GridCertificate`` of each direction's base grid at the ε(δ) queries' step."""
        return self._eps.certificate()

    # -- ε(δ) --------------------------------------------------------------
    @progress.stage("upper bound")
    def epsilon(self, delta: ArrayLike) -> Union[float, NDArray[np.float64]]:
        """Certified upper bound on ε(δ), vectorised over δ ∈ (0, 1): at the ε(δ)
        level, and for δ above the bulk's cut (``_bulk_split``) the smaller of that
        and the answer ``E`` levels finer (the smaller of two non-increasing curves,
        the coarse one alone below the cut: still one non-increasing curve)."""
        held = query_cache()  # the grids this query asks for again (the bulk check's too)
        out = self._fitting(lambda p, x: p.holding(held).epsilon(x), delta)
        cut, extra = self._bulk_split(held)
        fine = np.asarray(delta, dtype=float) > cut
        if not extra or not fine.any():
            return out
        out = np.array(out, dtype=float)
        asked = np.asarray(delta, dtype=float)[fine]
        finer, _ = self._finest_each(lambda p, i: p.holding(held).epsilon(asked[i]), len(asked),
                                     self._eps_level + extra, self._eps_level)
        out[fine] = np.minimum(out[fine], finer)
        return float(out) if out.ndim == 0 else out

    def _bulk_split(self, held=None):
        """(δ*, E): the lower cut and the larger E of the plan's tails beyond the ε(δ) level's
        (``Plan.cut``, ``Plan.extra``) and of ``bulk.bulk_split`` from that level's grids, E
        clipped to the cap (``(∞, 0)`` where that level's windows do not fit: answered coarser,
        ``_finest``); ``held``: the query's cache (``StepProfile.holding``), or None."""
        if self._bulk is None:
            first = self._eps_level
            try:
                at = self.at_level(first)
                cut, extra = bulk_split(self.plan, self._pairs, at if held is None else at.holding(held),
                                        self.accuracy)
            except GridTooLarge:
                cut, extra = np.inf, 0
            if self.plan.extra:
                cut, extra = min(cut, self.plan.cut), max(extra, self.plan.extra)
            self._bulk = (cut, int(affordable(self.plan, first + extra)) - first)
        return self._bulk

    def epsilon_lower(self, delta: ArrayLike) -> Union[float, NDArray[np.float64]]:
        """Certified lower bound on ε(δ) at this accuracy."""
        return self._fitting(lambda p, x: p.epsilon_lower(x), delta)

    def _fitting(self, ask, values):
        """``ask(profile, values)`` at the ε(δ) level, or, for each value that does not fit there,
        the finest coarser one whose grids fit the cap (``_finest_each``)."""
        values = np.asarray(values, dtype=float)
        flat = values.ravel()
        out, levels = self._finest_each(lambda p, i: ask(p, flat[i]), len(flat), self._eps_level, 0)
        if len(levels) and levels.min() < self.plan.eps_level:
            self._coarser(int(self.plan.eps_level - levels.min()))
        out = out.reshape(values.shape)
        return float(out) if out.ndim == 0 else out

    def _finest_each(self, ask, n, level, floor):
        """(``ask(profile, idx)`` of the n values (idx: their indices) at ``level``, the levels):
        where they do not fit at ``level`` together, each one's from the finest level down to
        ``floor`` that fits for it alone (``_finest``), so that no element's answer depends on
        the others asked with it."""
        every = np.arange(n)
        try:
            return np.asarray(ask(self.at_level(level), every), dtype=float), np.full(n, level)
        except GridTooLarge:
            if level <= floor:
                raise
        each = [self._finest(lambda p: ask(p, every[i:i + 1]), level - (n == 1), floor) for i in range(n)]
        return np.array([float(np.ravel(got)[0]) for got, _ in each]), np.array([at for _, at in each])

    def _finest(self, ask, level, floor):
        """(``ask`` of the ``StepProfile`` at ``level``, the level), or at the finest
        coarser level, down to ``floor``, whose grids fit the cap."""
        while True:
            try:
                return ask(self.at_level(level)), level
            except GridTooLarge:
                if level <= floor:
                    raise
                level -= 1

    # -- δ(ε) --------------------------------------------------------------
    @progress.stage("upper bound")
    def delta(self, eps: ArrayLike) -> Union[float, NDArray[np.float64]]:
        """Certified upper bound on δ(ε), vectorised over ε ≥ 0: per direction the
        smaller of its answer at the query's level ℓ(ε) and the anchors below
        ℓ(ε) (``_anchor``), then the larger direction. The direction whose rough
        answer is lower (by the plan's saddle points, ``Plan.remove_leads``) is
        refined only until it is below the other's: from the base grid of the
        first level's scout (``StepProfile.scout``), then from the ε(δ) level up
        (that level often suffices; where its Chernoff bound already is below,
        from no grid at all: ``StepProfile.chernoff_delta``). Where both
        directions hold the same pairs, one is computed."""
        eps = np.asarray(eps, dtype=float)
        flat = eps.ravel()
        wanted = self._delta_levels(np.where(np.isfinite(flat), flat, 0.0))
        levels = affordable(self.plan, wanted)
        first = self._delta_first
        mirror = self._pairs.remove == self._pairs.add  # one law both ways: one direction
        leading = np.ones(flat.shape, bool) if mirror else self.plan.remove_leads(flat, False)
        scout = self.at_level(first).scout
        out = np.zeros(flat.shape)
        for d, mine, ceiling in (("remove", leading, None), ("add", ~leading, None),
                                 ("remove", ~leading, out), ("add", leading, out)):
            if mirror and d == "add":
                continue
            cap = np.full(flat.shape, -np.inf) if ceiling is None else ceiling
            best = np.full(flat.shape, np.inf)
            if ceiling is not None and scout is not None and mine.any():  # the scout's base grid first
                best[mine] = scout.grid(d).delta(flat[mine])
            # the ε(δ) level: for every query of the refined direction (it often suffices there),
            # for the leading one only where it is the query's own level
            ask = mine & (best > cap) if ceiling is not None else mine & (levels <= first)
            best[ask] = np.minimum(best[ask], self.at_level(first).delta_of(d, flat[ask],
                                                                            None if ceiling is None else cap[ask]))
            for level in np.unique(levels[mine & (levels > first) & (best > cap)]):
                sel = mine & (levels == level) & (best > cap)
                got, at = self._delta_fitting(d, flat[sel], int(level), None if ceiling is None else cap[sel])
                levels[sel] = at
                best[sel] = np.minimum(best[sel], np.minimum(got, [self._anchor(d, int(m)) for m in at]))
            out[mine] = np.maximum(out[mine], best[mine])
        if np.any(levels < wanted):
            self._coarser(int(np.max(wanted - levels)))
        out = out.reshape(eps.shape)
        return float(out) if out.ndim == 0 else out

    def _delta_fitting(self, direction, eps, level, ceiling):
        """(δ(ε) of one direction, the level each came from): ``_finest_each`` down to the ε(δ) level."""
        return self._finest_each(lambda at, i: at.delta_of(direction, eps[i], None if ceiling is None else ceiling[i]),
                                 len(eps), level, self._delta_first)

    def _anchor(self, direction, level):
        """min over the levels m below ``level`` of δ_m(b_m), b_m the largest ε of
        the level lattice (``_delta_levels``) planned at most m: a certified upper
        bound on δ(ε) for every ε > b_m (δ(ε) ≤ δ(b_m)), the ε queried at levels
        above m. With each level's δ_m non-increasing in ε, δ(ε) = min(δ_ℓ(ε),
        anchor of ℓ) with ℓ(ε) non-decreasing is non-increasing: a level's
        smallest answer (at its last ε) bounds every answer above it. (The
        chain of every level below ℓ(ε) at ε itself did the same at up to
        twice the cost: the finest levels' widest tilted grids.)"""
        best = np.inf
        for m in range(self._delta_first, level):
            if (direction, m) not in self._anchors:
                lattice, planned = self._delta_plan
                below = np.flatnonzero(affordable(self.plan, planned) <= m)
                self._anchors[direction, m] = (
                    float(self._delta_fitting(direction, lattice[below[-1:]], m, None)[0][0]) if len(below) else np.inf)
            best = min(best, self._anchors[direction, m])
        return best

    def delta_lower(self, eps: ArrayLike) -> Union[float, NDArray[np.float64]]:
        """Certified lower bound on δ(ε) at this accuracy (at each query's own level)."""
        return self._by_level(eps, lambda p, x: p.delta_lower(x))

    # -- certified intervals -------------------------------------------------
    @progress.stage("certified interval")
    def epsilon_bounds(self, delta: ArrayLike, rounds: int) -> Tuple[NDArray[np.float64], NDArray[np.float64], float,
                                                                      Union[np.bool_, NDArray[np.bool_]]]:
        """(lower, upper, step) of ε(δ), refined until upper − lower ≤ accuracy·upper."""
        progress.expect(2)  # the upper bound, then the refinement
        upper = self.epsilon(delta)  # (its stage reads the bulk's cut: ``_bulk_split``)
        cut, extra = self._bulk_split()
        start = np.where(np.asarray(delta, dtype=float) > cut, self._eps_level + extra, self._eps_level)
        return self._refined(np.asarray(delta, dtype=float), start, upper, "epsilon", rounds)

    @progress.stage("certified interval")
    def delta_bounds(self, eps: ArrayLike, rounds: int) -> Tuple[NDArray[np.float64], NDArray[np.float64], float,
                                                                  Union[np.bool_, NDArray[np.bool_]]]:
        """(lower, upper, step) of δ(ε), refined until upper − lower ≤ accuracy·upper."""
        eps = np.asarray(eps, dtype=float)
        start = affordable(self.plan, self._delta_levels(np.where(np.isfinite(eps), eps, 0.0)))
        progress.expect(2)  # the upper bound, then the refinement
        return self._refined(eps, start, self.delta(eps), "delta", rounds)

    @progress.stage("refining the lower bound")
    def _refined(self, values, level, upper, kind, rounds):
        """Each query's lower bound at its level, then, where the interval is
        wider than the accuracy, one level finer per round (the step halves:
        the optimistic side's error shrinks at least that fast), two where it is
        still ≥ 4 times wider (``_JUMP``), the upper bound refined too once the
        lower one barely moves. Every value kept is certified, so the largest
        lower and smallest upper bound are."""
        flat, level = values.ravel(), np.array(level, dtype=np.int64).ravel()
        upper = np.array(upper, dtype=float).ravel()
        lower = np.zeros(flat.shape)
        is_open = np.ones(flat.shape, bool)
        top = int(affordable(self.plan, np.int64(1 << 20)))
        progress.expect(rounds)  # at most: the rounds stop where the interval is narrow enough
        r, last = 0, level
        while r < rounds:
            try:
                self._refine_round(flat, level, is_open, lower, upper, kind, r)
            except GridTooLarge:
                if r == 0 and np.any(level > 0):  # the planned level's optimistic windows do not fit:
                    level = np.maximum(level - 1, 0)  # a coarser level's lower bounds are certified too
                    continue
                if r == 0:
                    raise
                if np.any(level > last + 1):  # two levels at once do not fit: one
                    level = np.minimum(level, last + 1)
                    continue
                break  # the finer grid does not fit: the interval stays as it is
            r += 1
            if np.any(lower > upper):  # both certified: a lower bound above an upper one is a bug
                i = int(np.argmax(lower - upper))
                raise RuntimeError(f"internal error: certified lower bound {lower[i]!r} above the upper bound "
                                   f"{upper[i]!r} ({kind} at {flat[i]!r}); please report this mechanism")
            with np.errstate(invalid="ignore", divide="ignore"):
                width = np.where(upper == lower, 0.0, np.where(upper > 0, (upper - lower) / upper, 0.0))
            is_open = width > self.accuracy
            if not is_open.any() or np.all(level[is_open] >= top):
                break
            last = level
            level = np.where(is_open, np.minimum(level + np.where(width >= _JUMP * self.accuracy, 2, 1), top), level)
        step = self.at_level(int(level.max(initial=self._eps_level))).step
        return lower.reshape(values.shape), upper.reshape(values.shape), step, ~is_open.reshape(values.shape)

    @progress.stage("refinement round")
    def _refine_round(self, flat, level, is_open, lower, upper, kind, r):
        """One round of ``_refined`` (``lower``, ``upper`` updated in place)."""
        moved = np.zeros(flat.shape)
        for j in np.unique(level[is_open]):
            sel = is_open & (level == j)
            at = self.at_level(int(j))
            low = np.asarray(getattr(at, kind + "_lower")(flat[sel]), dtype=float)
            moved[sel] = np.maximum(low - lower[sel], 0.0)
            lower[sel] = np.maximum(lower[sel], low)
            if r:  # the lower bound has had a finer level: refine the upper where it barely moved
                still = sel & (moved <= 0.25 * (upper - lower))
                if still.any():
                    upper[still] = np.minimum(upper[still], getattr(at, kind)(flat[still]))

    def _delta_levels(self, eps):
        """Each δ(ε) query's level: that of the first point ≥ ε of a lattice fixed
        per mechanism (the ε of its tilt tables), where the plan is non-decreasing."""
        if self._delta_plan is None:
            lattice = np.unique(np.concatenate([t.mean for t in self.plan.tilts] + [[0.0]]))
            lattice = lattice[lattice >= 0.0]
            self._delta_plan = (lattice, self.plan.delta_levels(lattice, self.accuracy))
        lattice, levels = self._delta_plan
        return levels[np.minimum(np.searchsorted(lattice, eps, side="left"), len(lattice) - 1)]

    def _by_level(self, eps, ask):
        """``ask`` at each query's planned level."""
        eps = np.asarray(eps, dtype=float)
        flat = eps.ravel()
        levels = affordable(self.plan, self._delta_levels(np.where(np.isfinite(flat), flat, 0.0)))
        out = np.zeros(flat.shape)
        for level in np.unique(levels):
            sel = levels == level
            out[sel] = np.asarray(ask(self.at_level(int(level)), flat[sel]), dtype=float)
        out = out.reshape(eps.shape)
        return float(out) if out.ndim == 0 else out

