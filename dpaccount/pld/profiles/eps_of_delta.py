"""ε(δ) of a ``StepProfile``: from its base grid or, where that one would leave the answer
loose, from tilted grids (``step_profile.py``, whose module docstring tells the whole scheme).

A query is read from the base grid of its direction, then, where the grid's noise floor could
move δ by more than the accuracy, from the tilted grid of its band (``bands.py``), then from
grids tilted at its own answer. Where a coarser level's base grid (the scout's) predicts that
this step's base grid would leave the query loose anyway, that grid is not composed at all
(``_lean``): the query starts from the scout's answer, a certified upper bound of the same
composition, and is read from tilted grids composed alone (``_settled``). Every ε kept is a
certified bound, so the least upper (greatest lower) bound over the grids read is certified.
"""
import math

import numpy as np

from ...errors import AccuracyNotReached
from ..grids.grid import PLDGrid
from .bands import Frame
from .tiers import TIERS, tier_of


def at_floor(grid, eps):
    """Where ε is read in a tilted grid's first cell above 0: its window starts there and
    holds every loss below in that cell, so ε(δ) may lie lower (a tilt too high)."""
    return (np.asarray(eps) <= (grid.offset + 1) * grid.step) & (grid.offset > 0)


class EpsilonOfDelta:
    """The ε(δ) queries of a ``StepProfile`` (which provides ``grid``, ``step``, ``accuracy``,
    ``_scout``, ``_true_inf``, ``_worst``, ``_snapped``, ``chernoff_delta`` and, from
    ``Bands``, ``_band_tilt`` and ``_band_noisy``)."""

    def epsilon(self, delta):
        """Certified upper bound on ε(δ), vectorised over δ ∈ (0, 1)."""
        return self._worst(delta, lambda d, x, c: self._epsilon_one(d, x, True, c), PLDGrid.epsilon)

    def epsilon_lower(self, delta):
        """Certified lower bound on ε(δ) at this accuracy."""
        return self._worst(delta, lambda d, x, c: self._epsilon_one(d, x, False, c), PLDGrid.epsilon)

    def _epsilon_one(self, direction, delta, pessimistic, ceiling=None):
        """ε(δ) of one direction (``_delta_one`` for ``ceiling``)."""
        upper = self._epsilon_at(direction, delta, True, ceiling)
        if pessimistic:
            return upper
        lower = np.zeros(delta.shape)
        live = upper > (-np.inf if ceiling is None else ceiling)
        lower[live] = np.maximum(self._epsilon_at(direction, delta[live], False, None) - self._snapped(direction), 0.0)
        return lower

    def _epsilon_at(self, direction, delta, pessimistic, ceiling):
        """Where the noise bound could move δ by more than ``accuracy`` of itself
        at the answer (ε then moves by ~accuracy/10: δ falls ~10× faster than ε
        rises), the answer is re-read from the band's tilted grid, then from
        one tilted at the answer itself; not once it is at most ``ceiling``.
        The queries ``_lean`` picks skip the untilted grid (``_settled``)."""
        tiers = tier_of(delta)
        out = np.empty(delta.shape)
        for tier in np.unique(tiers):
            sel = np.flatnonzero(tiers == tier)
            target = delta[sel]
            cap = np.full(len(sel), -np.inf) if ceiling is None else ceiling[sel]
            lean, start = (self._lean(direction, target) if tier == 0 and pessimistic and ceiling is None
                           else (np.zeros(len(sel), bool), None))
            eps = np.empty(len(sel))
            for part, begin in ((np.flatnonzero(lean), start), (np.flatnonzero(~lean), None)):
                if len(part):
                    eps[part] = self._settled(direction, int(tier), pessimistic, target[part], cap[part],
                                              ceiling is not None, None if begin is None else begin[part])
            out[sel] = eps
            if pessimistic:
                self._check_resolved(direction, target, eps)
        return out

    def _lean(self, direction, delta):
        """(where ε(δ) at the first tail skips the untilted grid at this step, the scout's ε(δ)):
        where the scout's untilted grid (``scout``, a coarser level's) gives a finite ε(δ) and
        predicts that this step's untilted grid would leave the answer loose (its noise floor,
        the per-bin bound times the bins, ``Frame.predicted``: about the same at every step,
        as the per-bin bound scales with the step), and the other direction's scout grid (read
        by ``_worst`` anyway: a query it predicts tight does not compose this one's) predicts
        the same. Those queries would be read from a tilted grid anyway: the untilted one only
        gave the first ε, the band lattice's first level (``_levels``: K'(0) instead), the
        tilted grid's per-bin cap (``compose._prefer``, which only tightens bins far below the
        tilt) and ``band_noise``'s frame. A choice of grids only, made from the mechanism and
        the query alone (never from what a cache holds)."""
        none = np.zeros(len(delta), bool)
        if self._scout is None:
            return none, None
        other = direction if self._pairs.remove == self._pairs.add else {"remove": "add", "add": "remove"}[direction]
        other_loose = self._loose(self._scout[0].grid(other), delta)
        if not other_loose.any():
            return none, None
        coarse = self._scout[0].grid(direction)
        start = np.asarray(coarse.epsilon(delta), dtype=float)
        return np.isfinite(start) & self._loose(coarse, delta) & other_loose, start

    def _loose(self, coarse, delta):
        """Where the untilted grid at this step, as ``Frame.predicted`` from ``coarse``, would
        leave ε(δ) loose: its noise floor (the per-bin bound times the bins) above accuracy·δ."""
        frame = Frame.predicted(coarse, self.step)
        return frame.noise * frame.size > self.accuracy * np.asarray(delta)

    def _settled(self, direction, tier, pessimistic, target, cap, refined, start=None):
        """ε(δ) of one direction at one tier (``_epsilon_at``); ``refined``: ``cap`` is the other
        direction's answer. With ``start`` (``_lean``: the scout's ε(δ), a certified upper bound
        of the same composition on its coarser pessimistic grid) the untilted grid at this step
        is not composed: the answer is the least of ``start`` and the tilted grids' readings,
        the tilted grids composed alone (``grid``: not combined bin by bin with the untilted
        one, ``compose._prefer``, which only takes the smaller of two upper bounds on each bin:
        each tilted grid's bins are upper bounds on their own, its noise bound included), and
        the noise of the band's grid predicted without the untilted grid's cap
        (``band_noise``), on the frame the scout predicts. Every ε kept is a certified upper
        bound (lower bounds: lower), so the least (greatest) is, whichever grids were read."""
        acc, better, tail = self.accuracy, (np.minimum if pessimistic else np.maximum), TIERS[tier]
        alone = start is not None
        if alone:
            eps, loose = start.copy(), np.ones(len(target), bool)
            frame = Frame.predicted(self._scout[0].grid(direction), self.step)
        else:
            base = self.grid(direction, tail, pessimistic)
            eps, frame = base.epsilon(target), None  # the pessimistic base grid's, once needed
            # the noise could reach acc·δ somewhere (its floor: the per-bin bound times the bins)
            loose = np.isfinite(eps) & (base.noise * len(base.probs) > acc * target) & (eps > cap)
        if refined and pessimistic:  # δ(cap) ≤ δ by Chernoff: ε(δ) ≤ cap, no tilted grid
            idx = np.flatnonzero((loose | ~np.isfinite(eps)) & (eps > cap))
            if len(idx):
                done = idx[self.chernoff_delta(direction, cap[idx], target[idx]) <= target[idx]]
                eps[done], loose[done] = cap[done], False
        pending = loose.copy()
        for _ in range(3):  # the band of the current answer; again while the answer moves band
            idx = np.flatnonzero(pending)
            if not len(idx):
                break
            tilts = self._band_tilt(direction, eps[idx])
            if tier == 0:  # a band's grid predicted to stay noisy: ``_recentred`` at once
                frame = frame or Frame.of(self.grid(direction))
                band = ~self._band_noisy(direction, tilts, eps[idx], acc * target[idx], frame, not alone)
                pending[idx[~band]] = False
                idx, tilts = idx[band], tilts[band]
            for j in np.unique(tilts):
                at = idx[tilts == j]
                g = self.grid(direction, tail, pessimistic, int(j), alone)
                eps[at] = better(eps[at], g.epsilon(target[at]))
                loose[at] = (g.noise_over(eps[at], acc * target[at]) | at_floor(g, eps[at])) & (eps[at] > cap[at])
            pending[idx] = loose[idx] & (self._band_tilt(direction, eps[idx]) != tilts)
        for i in np.flatnonzero(loose):
            eps[i] = self._recentred(direction, tail, pessimistic, float(target[i]), eps[i], alone)
        return eps

    def _recentred(self, direction, tail, pessimistic, delta, eps, alone=False):
        """ε from grids tilted at the answer, re-centred until it settles: the answer within 4
        steps of the tilt, or, ``alone`` (the tilted grids not combined with the untilted one,
        ``_settled``, whose first tilt is at the scout's coarser answer, a few steps high),
        resolved where it is read (its noise bound moving δ by at most the accuracy, where a
        band's grid's answer is final too)."""
        at, best = eps, eps
        for _ in range(6):
            g = self.grid(direction, tail, pessimistic, int(math.floor(at / self.step)), alone)
            new = g.epsilon(delta)
            best = min(best, new) if pessimistic else max(best, new)
            near = abs(new - at) < 4 * self.step or (alone and not g.noise_over(new, self.accuracy * delta))
            if (near and not at_floor(g, new)) or not np.isfinite(new):
                break
            at = new
        return best

    def _check_resolved(self, direction, delta, eps):
        bad = ~np.isfinite(eps) & (self._true_inf[direction] < delta)
        if bad.any():
            # the grids count at +∞ P(L = ∞) rounded up and the tails beyond their window: a δ
            # between that and P(L = ∞) as computed (near a jump of δ(ε) at the largest loss, or
            # in a tail the window left out) gets ε = ∞ from them, whatever the exact ε is
            raise AccuracyNotReached(
                f"delta={float(delta[bad][0])!r} is above P(L = inf) = {self._true_inf[direction]:.17g} "
                f"(as computed) but not above the mass the privacy-loss grids count at +inf "
                f"({self.grid(direction).p_inf:.17g}: P(L = inf) rounded up, and the tails beyond their "
                f"window); the grids give no finite ε there, and the exact ε may be finite. Use a "
                f"larger delta or method='analytic'/'rdp' where available.")
