"""The privacy-loss-distribution grid: a representation, and its queries.

A ``PLDGrid`` holds P-masses p_j of the privacy loss at ε_j = (offset + j)·h,
plus the mass p_∞ at L = +∞, and says which way it was rounded:
``pessimistic`` grids over-state every hockey-stick value (rigorous upper
bounds), optimistic ones under-state them (rigorous lower bounds).

Queries (Koskela & Honkela 2021, eq. 2.3; Sommer et al. 2019):

    δ(ε) = Σ_{ε_j > ε} p_j (1 − e^{ε − ε_j}) + p_∞.

Evaluated with sums that have no cancellation: with m the first index whose
ε_m > ε, SP[m] = Σ_{j≥m} p_j and D[m] = Σ_{j>m} p_j (1 − e^{−(ε_j − ε_m)}),

    δ(ε) = (1 − e^{ε−ε_m}) SP[m] + e^{ε−ε_m} D[m] + p_∞,   δ(ε_m) = D[m] + p_∞,

and D obeys D[m] = D[m+1] + (1 − e^{−h}) S̃[m+1] with S̃[m] = p_m + e^{−h} S̃[m+1],
all terms non-negative. Their relative rounding errors (``_sums``: below
n·u for SP, ~2.5n·u for D, over n points) are added (pessimistic) or
subtracted.
"""
import math
import threading
from dataclasses import dataclass, field
from functools import cached_property
from typing import Optional

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ...numerics import ULP_OF_ONE as _U
from .discounted import DiscountedScan


@dataclass(frozen=True, eq=False)
class PLDGrid:
    """P-masses ``probs`` at losses (offset + j)·step, plus ``p_inf`` at +∞."""

    step: float
    offset: int
    probs: np.ndarray = field(repr=False)
    p_inf: float
    pessimistic: bool = True
    noise: float = 0.0  # per-bin bound of the transform noise included in probs
    # per-bin noise bounds where they differ by bin (tilted grids), else None
    noise_bins: Optional[np.ndarray] = field(default=None, repr=False)

    def noise_effect(self, eps):
        """An upper bound on how much the included noise bound raises δ(ε):
        the noise of the grid points above ε (weights 1 − e^{ε−ε_j} ≤ 1)."""
        return self._noise_from(self._first_above(eps))

    def noise_over(self, eps: ArrayLike, limit: ArrayLike) -> NDArray[np.bool_]:
        """``noise_effect(eps) > limit``, elementwise (a NaN counts as over: not resolved), without
        the running sums of the noise where plain sums decide it. Summed in any order, k non-negative terms are within
        γ_{k−1} ≈ (k − 1)u of their exact sum (Higham 2002, §4.2; a sum of subnormals is
        exact): so are ``noise_effect``'s running sums from the top and the sums here (the
        bins between consecutive ε by numpy's reduction, then those q pieces' sums from the
        top: at most k + q roundings a term), within 3(k + q + 4)u of each other, the
        products that compare them included (and 2^{−1070} absolute, for products in the
        subnormal range). Where the plain sum is farther from ``limit`` than that, its
        comparison is the running sum's; only the others are read from the running sums."""
        first, limit = np.broadcast_arrays(self._first_above(eps), np.asarray(limit, dtype=float))
        n, held = len(self.probs), self.__dict__.get("_held_noise")
        if self.noise_bins is None or not first.size or (held is not None and held[0] <= first.min()):
            return ~(self._noise_from(first) <= limit)  # no sums, or the running sums are there
        starts, back = np.unique(first, return_inverse=True)
        inner = starts[starts < n]  # (the last may be n: nothing above it)
        plain = np.zeros(len(starts))
        if len(inner):
            plain[:len(inner)] = np.cumsum(np.add.reduceat(self.noise_bins, inner)[::-1])[::-1]
        plain = plain[back.reshape(first.shape)]
        margin, tiny = 3 * (n - int(starts[0]) + len(starts) + 4) * _U, 2.0 ** -1070
        over = np.array(plain * (1.0 - margin) - tiny > limit)
        near = ~over & ~(plain * (1.0 + margin) + tiny <= limit)
        if near.any():
            over[near] = ~(self._noise_from(first[near]) <= limit[near])
        return over

    def _first_above(self, eps):
        """The index of the first grid point above each ε, clipped to [0, n]."""
        # clipped as floats first: ε = ∞ (or huge) must not go through an integer cast
        return np.clip(np.floor(np.asarray(eps, dtype=float) / self.step) + 1 - self.offset,
                       0, len(self.probs)).astype(np.int64)

    def _noise_from(self, first):
        """``noise_effect`` at the first grid point above each ε (``_first_above``)."""
        if self.noise_bins is None:
            return self.noise * (len(self.probs) - first)
        start, above = self._suffix("_held_noise", int(first.min(initial=len(self.probs))), self._noise_above)
        return above[first - start]

    def _noise_above(self, start):
        """Σ_{i ≥ j} noise_i for each j ≥ start (indexed j − start), and 0 past the end."""
        out = np.empty(len(self.noise_bins) - start + 1)
        out[-1] = 0.0
        np.cumsum(self.noise_bins[:start - 1 if start else None:-1], out=out[-2::-1])
        return out

    def _suffix(self, key, m0, build):
        """(start, ``build(start)``): sums over the points j ≥ m for each m ≥ start, start ≤ m0,
        kept under ``key``. They run from the top down, the same whatever the start, so a
        grid read only above some point (a tilted grid's band) never sums below it; a read
        further down sums again from the top."""
        held = self.__dict__.get(key)
        if held is None or held[0] > m0:
            held = self.__dict__[key] = (m0, build(m0))
        return held

    def __post_init__(self):
        object.__setattr__(self, "probs", _read_only(self.probs))
        if self.noise_bins is not None:
            object.__setattr__(self, "noise_bins", _read_only(self.noise_bins))

    @cached_property
    def _live_log(self):
        """(log p_j, ε_j) of the points with p_j > 0 (``log_mgf.LogMGF``, which then holds them: the
        grid's become read-only views of its arrays, the same floats)."""
        live = self.probs > 0
        if live.all():
            return np.log(self.probs), self.losses
        return np.log(self.probs[live]), self.losses[live]

    @property
    def losses(self):
        """The loss value of each grid point: (offset + j)·step, the index sum exact in floats
        (|offset + j| < 2^53), formed in one array."""
        out = np.arange(self.offset, self.offset + len(self.probs), dtype=float)
        out *= self.step
        return out

    @property
    def loss_moment(self) -> float:
        """Σ_j p_j ε_j over the finite points, to a few ulps per point (numpy's pairwise sum of
        the products; not BLAS's dot, whose threads wait for one another on a few shared cores):
        for choices (a band centre, the less biased of two lowerings), never a bound."""
        terms = self.losses
        terms *= self.probs
        return float(terms.sum())

    @property
    def mass(self):
        """Total P-mass, finite part plus p_∞ (1 up to rounding and padding)."""
        return float(self.probs.sum() + self.p_inf)

    def _sums(self, m0):
        """(start, SP, D): SP[m] and D[m] for every m ≥ start, start ≤ m0, held as arrays from
        start up (``_TopDown``): summed from the top down as far as asked, and on down later."""
        held = self.__dict__.get("_held_sums")
        if held is None:
            held = self.__dict__.setdefault("_held_sums", _TopDown(self))
        return held.reach(m0)

    def delta(self, eps):
        """δ(ε) of this grid, vectorised; in the grid's rounding direction."""
        if isinstance(eps, (float, np.floating)) and math.isfinite(eps):
            return self._delta_at(float(eps))
        eps = np.asarray(eps, dtype=float)
        losses_end = (self.offset + len(self.probs)) * self.step
        # m: the first ε_m > ε. ε/h may round across an integer; a pessimistic grid then
        # takes the point below too (and δ(ε_m) ≥ δ(ε) there), an optimistic one the point above
        x = np.minimum(eps, losses_end) / self.step  # beyond the last point δ = p_∞ (below): no int overflow
        slack = 4 * _U * np.abs(x)
        m = np.floor(x - slack if self.pessimistic else x + slack).astype(np.int64) + 1 - self.offset
        m = np.clip(m, 0, len(self.probs))
        inside = m < len(self.probs)
        start, sp, d = self._sums(int(m.min(initial=len(self.probs) - 1)))
        mi = np.where(inside, m, start)
        gap = np.where(inside, np.minimum(eps - (self.offset + mi) * self.step, 0.0), 0.0)
        out = np.where(inside, -np.expm1(gap) * sp[mi - start] + np.exp(gap) * d[mi - start], 0.0) + self.p_inf
        out = np.where(eps >= losses_end, self.p_inf, out)
        # three non-negative terms, exp/expm1 (a few ulps), two products and two sums: the
        # total errs by under 8u of itself (the p_∞ term included); err outwards
        out = out * (1.0 + 8 * _U if self.pessimistic else 1.0 - 8 * _U)
        out = np.clip(out, 0.0, 1.0)
        return float(out) if out.ndim == 0 else out

    def _delta_at(self, eps):
        """``delta`` of one finite ε: the same floats, operation by operation, without the
        arrays (exp and expm1 still numpy's; min, max and clip as numpy's, −0 included)."""
        n, step = len(self.probs), self.step
        losses_end = (self.offset + n) * step
        x = (eps if eps < losses_end else losses_end) / step
        slack = 4 * _U * abs(x)
        m = min(max(math.floor(x - slack if self.pessimistic else x + slack) + 1 - self.offset, 0), n)
        out = 0.0
        if m < n:
            start, sp, d = self._sums(m)
            gap = eps - (self.offset + m) * step
            gap = np.float64(gap if gap < 0.0 else 0.0)
            out = -np.expm1(gap) * sp[m - start] + np.exp(gap) * d[m - start]
        out = self.p_inf if eps >= losses_end else out + self.p_inf
        out = out * (1.0 + 8 * _U if self.pessimistic else 1.0 - 8 * _U)
        out = out if out > 0.0 else 0.0
        return float(out if out < 1.0 else 1.0)

    def epsilon(self, delta):
        """Smallest ε ≥ 0 with δ(ε) ≤ delta for this grid (inf if p_∞ > delta)."""
        delta = np.asarray(delta, dtype=float)
        # the sums from the top down until δ(ε_start) is above every delta (the first m with
        # δ(ε_m) ≤ delta is then above start), or down to the point at loss 0 (or the bottom):
        # an answer at or below it is 0, as it is from sums to the bottom (``_solve_in_cell``
        # takes ε ≥ 0 and reads δ(0) above it). A sixteenth, then as far again as
        # δ(ε_m) = D[m] + p_∞ grows (``_further``)
        n, most = len(self.probs), float(np.max(delta, initial=0.0))
        zero = min(max(-self.offset, 0), n)
        reach = max(n // 16, 1)
        while True:
            start, sp, d = self._sums(n - reach)
            if start <= zero or d[0] + self.p_inf > most:
                break
            reach = min(n - zero, _further(n - start, d, self.p_inf, most))
        out = np.empty(delta.shape)
        flat_t, flat_o = delta.ravel(), out.ravel()
        for i, target in enumerate(flat_t):
            mm = start + _first_at_most(d, self.p_inf, float(target))
            flat_o[i] = self._solve_in_cell(mm, float(target), sp[mm - start:], d[mm - start:])
        out = flat_o.reshape(delta.shape)
        return float(out) if out.ndim == 0 else out

    def _solve_in_cell(self, m, target, sp, d):
        if self.p_inf > target:
            return np.inf
        if m >= len(self.probs):  # only p_∞ above the last point
            eps = (self.offset + len(self.probs) - 1) * self.step
            return max(eps, 0.0)
        # on (ε_{m−1}, ε_m]: δ(ε) = SP[m] + p_∞ − e^{ε−ε_m} S̃[m], S̃[m] = SP[m] − D[m]
        # (``sp``, ``d``: from m up)
        eps_m = (self.offset + m) * self.step
        s_tilde = sp[0] - d[0]
        excess = sp[0] + self.p_inf - target
        if s_tilde <= 0 or excess <= 0:
            eps = eps_m
        else:
            eps = min(eps_m, eps_m + np.log(excess / s_tilde))
        eps = max(eps, 0.0)
        # err outwards: a pessimistic grid steps up until its own δ is ≤ target, an optimistic
        # one down until its δ, less the rounding of that last sum (8u), is still ≥ target
        for _ in range(64):
            if (self.delta(eps) <= target if self.pessimistic
                    else eps <= 0.0 or self.delta(eps) * (1.0 - 8 * _U) >= target):
                break
            eps = eps + (1.0 if self.pessimistic else -1.0) * (max(abs(eps), 1.0) * 8 * _U + 1e-300)
        return float(max(eps, 0.0))


def _first_at_most(d, p_inf, target):
    """The first i with δ(ε_i) = d[i] + p_∞ ≤ target (len(d) if none), d non-increasing: by
    bisection on the values as ``delta`` sums them, without an array of them."""
    lo, hi = 0, len(d)
    while lo < hi:
        mid = (lo + hi) // 2
        if d[mid] + p_inf <= target:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _further(reach, d, p_inf, most):
    """The next reach of ``epsilon``'s sums, summed ``reach`` points down (``d``: D from there
    up) and short of ``most``: log(D + p_∞) extrapolated along its slope over the lowest
    quarter summed to where it reaches ``most`` (×1.25, +16 points: tails steepen upwards,
    so the slope read above is the steeper one), at least 1/16 and at most 2× further; 1.5×
    where that slope is not known (D + p_∞ = 0 there)."""
    width = max(len(d) // 4, 1)
    low, high = d[0] + p_inf, d[min(width, len(d) - 1)] + p_inf
    if not high > 0.0 or not low > high:
        return reach + max(reach // 2, 1)
    ahead = math.log(most / low) / (math.log(low / high) / width)
    return int(min(2 * reach, max(reach + reach // 16 + 1, reach + 1.25 * ahead + 16)))


class _TopDown:
    """SP[m] and D[m] of a grid (module docstring) for m ≥ start, summed from the top point
    down and extended downwards when asked (``reach``): every value is the float a sum from
    the top over all points gives (each running sum goes on from where it stopped, the
    discounted one by ``DiscountedScan``), padded outwards by its rounding errors: SP is one
    running sum of n non-negative terms, within (n−1)·u/2 of itself, padded by (n + 8)·u
    (u = 2^{−52}, roundings of u/2, libm within 4 ulp). S̃ is within η·S̃ + a of itself. D =
    c·Σ_{j>m} S̃[j] adds a running sum of n−2 terms, c = −expm1(−h) (4u) and two products: D
    is within e·D + n·a, e₁ = η + (n/2 + 6)·u, e = e₁ + e₁² (the products of the
    (1 ± ·)-factors), and padded by that. The pads count all n points of the grid."""

    def __init__(self, grid):
        n = len(grid.probs)
        # the grid's masses and rounding, not the grid: a grid holds its sums, and a reference
        # back would make the pair a cycle that only the cyclic collector frees (evicted grids,
        # hundreds of MB, kept until it runs)
        self._probs, self._step, self._pessimistic = grid.probs, grid.step, grid.pessimistic
        self._scan, self._lock = DiscountedScan(grid.step, n), threading.Lock()
        # filled from the top down, D in the real parts and SP in the imaginary parts of one
        # complex array, so that one complex running sum (``_extend``) makes both: D at
        # [start + 1, n + 1) (``real[start]``: below the lowest point, where the scan is summed
        # on), SP of points [start, n) at [start, n) (``imag[n]``: the seed of its sum)
        self._sums = np.empty(n + 1, dtype=complex)
        self.start = n
        self._sp_run = self._d_next = None  # SP at the lowest point summed; Σ S̃ down to it

    @property
    def sp(self):
        return self._sums.imag[self.start:-1]

    @property
    def d(self):
        return self._sums.real[self.start + 1:]

    def __getstate__(self):  # a grid pickled with its sums: all but the lock
        return {k: v for k, v in self.__dict__.items() if k != "_lock"}

    def __setstate__(self, state):
        self.__dict__.update(state, _lock=threading.Lock())

    def reach(self, m0):
        """(start, SP, D), start ≤ max(m0, 0): the arrays from start up."""
        with self._lock:
            if max(int(m0), 0) < self.start:
                self._extend(max(int(m0), 0))
            return self.start, self.sp, self.d

    def _extend(self, m0):
        probs, start = self._probs, self.start
        n, part = len(probs), probs[m0:start][::-1]  # the points to add, top down
        first = self._sp_run is None
        # top down, from the slot of the lowest point summed (at first: the slot above the top
        # point). D: Σ S̃ down to the highest new point (at the top point: an empty sum), then
        # the S̃ of the new points, summed in place; the slot below the lowest new point is
        # left holding Σ S̃ down to it, where the next piece goes on. SP: its running sum down
        # to there (at first −0, which adds exactly), then the new points' masses. A complex
        # running sum adds the real parts and the imaginary parts apart, each in the order
        # of a running sum of its own: both sums in one pass, the same floats
        run = self._sums[m0:start + 1][::-1]
        held = run[0].imag
        run[0] = complex(0.0, -0.0) if first else complex(self._d_next, self._sp_run)
        self._scan.extend(part, out=run.real[1:])
        run.imag[1:] = part
        np.cumsum(run, out=run)
        run.imag[0] = held  # SP at the lowest point summed before (its value, padded)
        self._d_next, self._sp_run = float(run[-1].real), float(run[-1].imag)
        sp, d = self._sums.imag[m0:start], self._sums.real[m0 + 1:start + 1]  # the new points, bottom up
        sign = 1.0 if self._pessimistic else -1.0
        sp *= 1.0 + sign * (n + 8) * _U
        eta, absolute = self._scan.bound
        e = eta + (n / 2 + 6) * _U
        d *= -math.expm1(-self._step) * (1.0 + sign * (e + e * e))
        d[:-1 if first else None] += sign * n * absolute  # D at the top point is exact
        if not self._pessimistic:  # the pads taken off may pass 0 (added, every term is ≥ 0)
            np.maximum(d, 0.0, out=d)
        self.start = m0


def frozen(array):
    """``array`` made read-only: a ``PLDGrid`` takes a frozen float array that owns its
    data as it is (``compose`` hands over the large arrays it built), not a copy."""
    array.setflags(write=False)
    return array


def _read_only(array):
    """A read-only float array of these values: ``array`` itself where it is frozen and
    owns its data (no one can write it any more), else a copy."""
    if isinstance(array, np.ndarray) and array.dtype == np.float64 and array.base is None \
            and not array.flags.writeable:
        return array
    out = np.array(array, dtype=float)
    out.setflags(write=False)
    return out
