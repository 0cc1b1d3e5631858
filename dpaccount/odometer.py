"""An online accountant: steps one at a time, δ(ε) after each in O(n).

``PrivacyOdometer`` keeps, per direction, the spectrum of the composed
privacy-loss grid (Koskela & Honkela 2021, Sec. 6). A step multiplies it by
the (cached) spectrum of the step's grid: O(n). A query never inverts the
transform: by Plancherel (Lemma 14)

    Σ_j p_j w_j = (1/n) Σ_k P_k · conj(W_k),   w_j = (1 − e^{ε − ε_j})_+,

so δ(ε) is one O(n) dot product with the transform W of the hockey-stick
weights, cached per ε. ε(δ) bisects on such evaluations.

Soundness is that of the batch accountant (``pld_compose.py``): every step
is a pessimistic Connect-the-Dots grid; circular aliasing only adds mass,
except the mass above the window, which a Chernoff bound (from the grids'
exact moment-generating functions, tracked per step) sends to +∞; the
transform noise is bounded from the spectra and added to every bin. The
grid (step and window) is planned once, from a ``horizon``: the longest
composition you expect. Going beyond it stays sound, only looser (the
Chernoff term grows), and a warning says so.
"""
import math
import warnings

import numpy as np
from scipy import fft as sfft

from . import validation as v
from .discretise import loss_range, pair_to_grid
from .mechanism import Mechanism
from .pld_accountant import DIRECTIONS, _merge_gaussians, plan_step
from .pld_compose import MAX_GRID, chernoff_window
from .hockey_stick import hockey_stick_to_epsilon

_U = np.finfo(float).eps
_LAMBDAS = np.geomspace(1e-2, 1e3, 31)


class _Direction:
    """The running composition of one direction on a fixed circular grid.

    Spectra are kept for absolute grid indices modulo n (each step's spectrum
    is shifted by its offset once, when cached), so queries need no phase.
    A frequency whose noise bound has fallen below e^{−745} is dead (its
    coefficient is 0 within that bound) and later steps and queries skip it:
    after a few steps they touch only the few live low frequencies."""

    def __init__(self, step, ja, size, tail):
        self.step, self.ja, self.size, self.tail = step, ja, size, tail
        nfreq = size // 2 + 1
        self.spec = np.ones(nfreq, dtype=complex)
        self.log_bound = np.zeros(nfreq)
        self.log_max = np.full(nfreq, -np.inf)
        self.active = np.arange(nfreq)
        self.total_k, self.log_finite = 0, 0.0
        self.log_mgf = np.zeros(len(_LAMBDAS))  # Σ k Λ(λ) for the upper-tail bound
        self.eta = 5.0 * _U * math.ceil(math.log2(size) + 1)
        self.fold = np.full(nfreq, 2.0)
        self.fold[0] = 1.0
        if size % 2 == 0:
            self.fold[-1] = 1.0
        self._grids, self._weights = {}, {}

    def _prepare(self, pair):
        lo, hi = loss_range(pair, self.tail)
        jlo, jhi = math.floor(lo / self.step), math.ceil(hi / self.step)
        if jhi - jlo + 1 > self.size:
            raise ValueError(f"a step of {pair!r} spans {jhi - jlo + 1} grid points, more than the "
                             f"odometer's window ({self.size}); plan it with a wider horizon")
        grid = pair_to_grid(pair, self.step, jlo, jhi)
        k = np.arange(self.size // 2 + 1)
        z = sfft.rfft(grid.probs, self.size) * np.exp(-2j * np.pi * k * (grid.offset % self.size) / self.size)
        log_mag = np.log(np.minimum(np.abs(z) + self.eta, 1.0 + self.eta))
        live = grid.probs > 0
        expo = np.log(grid.probs[live])[None, :] + _LAMBDAS[:, None] * grid.losses[live][None, :]
        top = expo.max(axis=1)
        mgf = top + np.log(np.exp(expo - top[:, None]).sum(axis=1))
        return grid, z, log_mag, mgf

    def add(self, pair, count):
        if pair not in self._grids:
            self._grids[pair] = self._prepare(pair)
        grid, z, log_mag, mgf = self._grids[pair]
        act = self.active
        with np.errstate(under="ignore"):
            self.spec[act] *= z[act] if count == 1 else z[act] ** count
        self.log_bound[act] += count * log_mag[act]
        self.log_max[act] = np.maximum(self.log_max[act], log_mag[act])
        dead = self.log_bound[act] < -745.0
        if dead.any():
            self.spec[act[dead]] = 0.0
            self.active = act[~dead]
        self.total_k += count
        self.log_mgf += count * mgf
        self.log_finite += count * math.log1p(-min(grid.p_inf, 1.0)) if grid.p_inf < 1 else -math.inf

    def _weights_fft(self, eps):
        """rfft of w = (1 − e^{ε−ε_j})_+ placed at absolute indices mod n, cached per ε."""
        if eps not in self._weights:
            losses = (self.ja + np.arange(self.size)) * self.step
            w = np.where(losses > eps, -np.expm1(np.minimum(eps - losses, 0.0)), 0.0)
            if len(self._weights) > 64:
                self._weights.clear()
            self._weights[eps] = (sfft.rfft(np.roll(w, self.ja % self.size)), float(w.sum()))
        return self._weights[eps]

    def delta(self, eps):
        """An upper bound on δ(ε) of the composition so far."""
        n = self.size
        if self.total_k == 0:
            return 0.0 if eps >= 0 else -math.expm1(eps)
        weights_hat, weight_sum = self._weights_fft(eps)
        act, fold = self.active, self.fold[self.active]
        spec, w_hat = self.spec[act], weights_hat[act]
        value = float((fold * (spec * np.conj(w_hat)).real).sum() / n)
        # per-bin noise of the spectrum (as in pld_compose._fft; a dead frequency
        # contributes ≤ e^{−745}), then the rounding of this dot product
        coef_err = self.total_k * (self.eta + 4 * _U) * np.exp(self.log_bound[act] - self.log_max[act])
        bin_err = float((fold * (coef_err + self.eta * np.abs(spec))).sum() / n) + math.exp(-745.0)
        dot_err = self.eta * float((fold * np.abs(spec) * np.abs(w_hat)).sum() / n)
        p_inf = min(1.0, -math.expm1(self.log_finite) * (1 + 16 * _U)) if self.log_finite > -math.inf else 1.0
        return min(1.0, max(value, 0.0) + bin_err * weight_sum + dot_err + self.above_window() + p_inf)

    def above_window(self):
        """Chernoff bound on the composed mass above the window (sent to +∞)."""
        top = (self.ja + self.size - 1) * self.step
        return math.exp(min(float(np.min(self.log_mgf - _LAMBDAS * top)), 0.0))


class PrivacyOdometer:
    """Online privacy accounting: ``step(mechanism)`` then ``get_approx_delta(eps)``
    or ``get_approxDP(delta)`` at any time; every answer is an upper bound.

    ``horizon`` is the longest composition you plan (a ``Mechanism``, e.g.
    ``Composition()([sgd_step], [T])``); it fixes the grid. Steps may be any
    mechanisms with dominating pairs, in any order and mix."""

    def __init__(self, horizon, accuracy=1e-3, tail=1e-30):
        if not isinstance(horizon, Mechanism):
            raise TypeError(f"horizon must be a dpaccount Mechanism, got {horizon!r}")
        accuracy = v.in_interval("accuracy", accuracy, 0.0, 1.0)
        tail = v.in_interval("tail", tail, 0.0, 1e-6)
        pairs = horizon.pairs
        # steps arrive one by one: plan for every one of them rounded (no merging of Gaussians)
        step = max(plan_step(pairs.direction(d), 0.1 * accuracy, tail) for d in DIRECTIONS)
        self._dirs = {}
        for d in DIRECTIONS:
            merged = _merge_gaussians(pairs.direction(d)) if len(pairs.direction(d)) > 1 else pairs.direction(d)
            total_k = sum(k for _, k in merged)
            items = []
            for p, k in merged:
                lo, hi = loss_range(p, tail / total_k)
                items.append((pair_to_grid(p, step, math.floor(lo / step), math.ceil(hi / step)), k))
            ja, jb, _, _ = chernoff_window(items, tail)
            size = sfft.next_fast_len(jb - ja + 1, real=True)
            if size > MAX_GRID:
                raise ValueError(f"the horizon needs {size} grid points, more than the cap {MAX_GRID}")
            self._dirs[d] = _Direction(step, ja, size, tail / total_k)
        self._steps, self._horizon_tail = 0, tail

    @property
    def steps(self):
        """How many steps have been taken."""
        return self._steps

    def step(self, mechanism, count=1):
        """Compose ``mechanism`` (``count`` times) into the running total."""
        if not isinstance(mechanism, Mechanism):
            raise TypeError(f"mechanism must be a dpaccount Mechanism, got {mechanism!r}")
        count = v.count("count", count)
        pairs = mechanism.pairs
        for d in DIRECTIONS:
            for pair, k in pairs.direction(d):
                self._dirs[d].add(pair, k * count)
        self._steps += count
        if max(s.above_window() for s in self._dirs.values()) > 1e3 * self._horizon_tail:
            warnings.warn("the odometer has gone past its horizon: answers stay upper bounds but "
                          "loosen; plan a longer horizon", RuntimeWarning, stacklevel=2)
        return self

    def get_approx_delta(self, eps):
        """δ(ε) of everything composed so far (an upper bound)."""
        eps = v.in_interval("eps", eps, 0.0, math.inf, lo_open=False)
        return max(s.delta(eps) for s in self._dirs.values())

    def get_approxDP(self, delta):
        """ε(δ) of everything composed so far (an upper bound), by bisection."""
        delta = v.in_interval("delta", delta, 0.0, 1.0)
        return hockey_stick_to_epsilon(self.get_approx_delta, delta, iterations=60)
