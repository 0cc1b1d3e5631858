"""Online composition on a fixed grid: steps one at a time, δ(ε) after each in O(n).

The engine of ``PrivacyOdometer`` (``dpaccount/odometer.py``):
``OnlineDirection`` keeps the spectrum of one direction's composed
privacy-loss grid (Koskela & Honkela 2021, Sec. 6). A step multiplies it by
the (cached) spectrum of the step's grid: O(n). A query never inverts the
transform: by Plancherel (Lemma 14)

    Σ_j p_j w_j = (1/n) Σ_k P_k · conj(W_k),   w_j = (1 − e^{ε − ε_j})_+,

so δ(ε) is one O(n) dot product with the transform W of the hockey-stick
weights, cached per ε. ε(δ) bisects on such evaluations.

Soundness is that of the batch accountant (``pld/grids/compose.py``): every step
is a pessimistic Connect-the-Dots grid; circular aliasing only adds mass,
except the mass above the window, which a Chernoff bound (from the grids'
exact moment-generating functions, tracked per step) sends to +∞; the
transform noise is bounded from the spectra and added to every bin. The
grid (step and window) is planned from a ``horizon``: the longest
composition you expect. ``OnlineDirection.outside_after`` bounds the mass a
step would leave outside the window, ``step_wanted`` the grid step the
composition would be planned with; where the grid no longer suits the
steps, the odometer re-plans (``plan_directions``: a wider window or a finer
step) and replays them.
"""
import math

import numpy as np

from ... import fourier
from ...errors import GridTooLarge
from ...numerics import ULP_OF_ONE as _U, sum_roundings
from .accountant import plan_step, step_target
from ..pairs.composition import DIRECTIONS, merge_gaussians
from .compose import MAX_GRID, chernoff_lambdas, chernoff_window
from .discretise import loss_moments, loss_range, pair_to_grid
from .grid import PLDGrid

_LAMBDAS = np.geomspace(1e-2, 1e3, 16)  # Chernoff tilts, each at ±λ (with the planner's: ``lambdas``)
_DEAD = 1e-250  # a frequency whose coefficient bound falls below this is dropped


class OnlineDirection:
    """The running composition of one direction on a fixed circular grid.

    Spectra are kept for absolute grid indices modulo n (each step's spectrum
    is shifted by its offset once, when cached), so queries need no phase.
    Beside the spectrum it keeps, per frequency, ``bound`` ≥ |coefficient|
    (the product of each step's |z| + η, rounded up: it bounds the exact and
    the computed coefficient alike) and ``inv_peak``, 1 / the largest factor seen.
    Frequencies whose bound falls below 1e-250 are dead: their coefficient
    is set to 0 (``_dead_allowance`` pays for that) and, once every frequency above some index
    is dead, steps and queries touch only the live prefix ``[:m]``, a view.
    Every update is one pass of multiplications: no logarithms, no gathers."""

    def __init__(self, step, ja, size, tail, tilts=()):
        self.step, self.ja, self.size, self.tail = step, ja, size, tail
        # the tilts λ of the Chernoff bounds above (row 0) and below (row 1) the window: a fixed
        # set, and the planner's own (``tilts``: (upper, lower)), with which the planned
        # composition's bound is within its tail
        self.lambdas = np.stack([np.sort(np.append(_LAMBDAS, t)) for t in (tilts or (1.0, 1.0))])
        nfreq = size // 2 + 1
        self.spec = np.ones(nfreq, dtype=complex)
        self.bound = np.ones(nfreq)
        self.inv_peak = np.full(nfreq, np.inf)  # 1 / (the largest factor seen)
        self._in_peak = set()
        self.m = nfreq  # frequencies [m:] are dead
        self._ones = np.ones(nfreq)
        self.total_k, self.log_finite = 0, 0.0
        self.log_mgf = np.zeros(self.lambdas.shape)  # Σ k Λ(±λ): the upper- and lower-tail bounds
        self.variance, self.rounded_k = 0.0, 0  # the composed loss's variance; steps rounded to the grid
        self.taken, self.room = {}, {}  # pair → count: composed, planned for
        self.known = {}  # pair → its grid here, from the planning (``plan_directions``)
        self.eta = 5.0 * _U * math.ceil(math.log2(size) + 1)
        self._grids, self._weights = {}, {}

    def prepared(self, pair):
        """The step's grid, spectrum, |spectrum| bound, log-MGF at ±λ, loss variance and
        whether the grid rounds it (cached); None where it spans more points than the window."""
        if pair not in self._grids:
            self._grids[pair] = self._prepare(pair)
        return self._grids[pair]

    def _prepare(self, pair):
        lo, hi = loss_range(pair, self.tail)
        jlo, jhi = math.floor(lo / self.step), math.ceil(hi / self.step)
        if jhi - jlo + 1 > self.size:
            return None
        grid = self.known.pop(pair, None) or pair_to_grid(pair, self.step, jlo, jhi)
        k = np.arange(self.size // 2 + 1)
        z = fourier.rfft(grid.probs, self.size) * np.exp(-2j * np.pi * k * (grid.offset % self.size) / self.size)
        # |z̃| ≤ |z| + η; the factor 1 + 4u covers the rounding of this line and of
        # each product in ``add`` (a complex product errs by ≤ √5·u): bounds err upwards
        mag = np.minimum(np.abs(z) + self.eta, 1.0 + self.eta) * (1 + 4 * _U)
        live = grid.probs > 0
        mgf = np.stack([_log_mgf(np.log(grid.probs[live]), sign * grid.losses[live], lam)
                        for sign, lam in zip((1.0, -1.0), self.lambdas)])
        ratio = pair.lattice / self.step if pair.lattice is not None else 0.5
        return grid, z, mag, mgf, loss_moments(pair, lo, hi)[1], abs(ratio - round(ratio)) > 1e-9

    def outside_after(self, parts):
        """How much composed mass may lie outside the window once the (pair, count)
        ``parts`` are added: inf where a pair's grid does not fit the window; 0 where
        the composition stays within the one planned for (``room``: each pair at most
        as often — its window was planned with exact Chernoff tilts, within ``tail``);
        else the Chernoff bounds on the tilts tracked, above and below the window
        (the mass below would wrap around to the top), the larger."""
        prepared = [self.prepared(pair) for pair, _ in parts]
        if any(p is None for p in prepared):
            return math.inf
        added = {}
        for pair, k in parts:
            added[pair] = added.get(pair, 0) + k
        if all(self.taken.get(pair, 0) + k <= self.room.get(pair, 0) for pair, k in added.items()):
            return 0.0
        return max(self._outside(self.log_mgf + sum(k * p[3] for p, (_, k) in zip(prepared, parts))))

    def _outside(self, log_mgf):
        """Chernoff bounds on the composed mass above the window and below it."""
        top, bottom = (self.ja + self.size - 1) * self.step, self.ja * self.step
        return (math.exp(min(float(np.min(log_mgf[0] - self.lambdas[0] * top)), 0.0)),
                math.exp(min(float(np.min(log_mgf[1] + self.lambdas[1] * bottom)), 0.0)))

    def step_wanted(self, parts, rho):
        """The grid step ``plan_step`` asks of this direction's composition so far with
        ``parts`` added (from the variance and the rounded steps tracked; inf where no
        step is rounded or the loss does not vary)."""
        variance, rounded = self.variance, self.rounded_k
        for pair, k in parts:
            prepared = self.prepared(pair)
            variance += k * prepared[4]
            rounded += k * prepared[5]
        return step_target(variance, rounded, rho) if rounded and variance > 0 else math.inf

    def add(self, pair, count):
        grid, z, mag, mgf, variance, rounded = self.prepared(pair)
        m = self.m
        spec, bound = self.spec[:m], self.bound[:m]
        with np.errstate(under="ignore"):
            if count == 1:
                spec *= z[:m]
                bound *= mag[:m]
            else:
                spec *= z[:m] ** count
                bound *= mag[:m] ** count * (1 + 2 * count * _U)  # the power's rounding, upwards
        if pair not in self._in_peak:  # a new kind of step may raise the peak (O(n) once)
            self._in_peak.add(pair)
            np.minimum(self.inv_peak, 1.0 / mag, out=self.inv_peak)
        dying = bound < _DEAD  # zeroed before they turn subnormal (slow arithmetic)
        if dying.any():
            np.copyto(spec, 0.0, where=dying)
            np.copyto(bound, 0.0, where=dying)
        if bound[-1] == 0.0:  # the top has died: shrink the live prefix
            live = np.flatnonzero(bound)
            self.m = int(live[-1]) + 1 if live.size else 1
        self.total_k += count
        self.log_mgf += count * mgf
        self.variance += count * variance
        self.rounded_k += count * rounded
        self.taken[pair] = self.taken.get(pair, 0) + count
        self.log_finite += count * math.log1p(-min(grid.p_inf, 1.0)) if grid.p_inf < 1 else -math.inf

    def _dead_allowance(self):
        """What the zeroed coefficients can add to a bin: each was below 1e-250
        when zeroed, and later factors are ≤ 1 + η, so (1/n) Σ_k c_k |P_k| over
        them is at most 2·1e-250·(1 + η)^K."""
        return 2.0 * _DEAD * math.exp(self.total_k * self.eta)

    def _fold_dot(self, x, y):
        """Σ_k c_k x_k y_k over the live prefix with the rfft multiplicities c_k
        (1 at k = 0 and at n/2 for even n, else 2): the full-spectrum sum (numpy's pairwise
        sum, not a BLAS dot: the same floats whatever the thread count)."""
        total = 2.0 * float(np.sum(x * y)) - float(x[0] * y[0])
        if self.size % 2 == 0 and len(x) == self.size // 2 + 1:
            total -= float(x[-1] * y[-1])
        return total

    def _weights_fft(self, eps):
        """rfft of w = (1 − e^{ε−ε_j})_+ placed at absolute indices mod n, cached
        per ε, with the multiplicities folded in: (c·W as float pairs, c·|W|, Σ w)."""
        if eps not in self._weights:
            losses = (self.ja + np.arange(self.size)) * self.step
            w = np.where(losses > eps, -np.expm1(np.minimum(eps - losses, 0.0)), 0.0)
            w_hat = fourier.rfft(np.roll(w, self.ja % self.size))
            fold = np.full(len(w_hat), 2.0)
            fold[0] = 1.0
            if self.size % 2 == 0:
                fold[-1] = 1.0
            if len(self._weights) > 64:
                self._weights.clear()
            self._weights[eps] = ((fold * w_hat).view(float), fold * np.abs(w_hat), float(w.sum()))
        return self._weights[eps]

    def _bin_error(self):
        """Per-bin bound of the spectrum's noise (as in ``pld/transform.fft``):
        K(η + 4u)·bound/peak for the products' errors, η·bound for the last
        transform, then what the dead frequencies may add."""
        m = self.m
        return ((self.total_k * (self.eta + 4 * _U) * self._fold_dot(self.bound[:m], self.inv_peak[:m])
                 + self.eta * self._fold_dot(self.bound[:m], self._ones[:m])) / self.size
                + self._dead_allowance())

    def _p_inf(self):
        """1 − Π (1 − p_inf)^k of the steps so far, rounded up."""
        if self.log_finite == -math.inf:
            return 1.0
        return min(1.0, -math.expm1(self.log_finite) * (1 + 16 * _U))

    def grid(self):
        """The composed ``PLDGrid`` so far (one inverse transform, O(n log n)):
        every bin raised by the noise bound, the mass above the window and
        P(L = ∞) at +∞, as the batch accountant certifies its grids."""
        n, m = self.size, self.m
        full = np.zeros(n // 2 + 1, dtype=complex)
        full[:m] = self.spec[:m]
        values = np.roll(fourier.irfft(full, n), -(self.ja % n))
        err = self._bin_error()
        p_inf = min(1.0, self._p_inf() + self.above_window())
        return PLDGrid(step=self.step, offset=self.ja, probs=np.maximum(values + err, 0.0), p_inf=p_inf,
                       noise=err)

    def delta(self, eps):
        """An upper bound on δ(ε) of the composition so far."""
        n, m = self.size, self.m
        if self.total_k == 0:
            return 0.0 if eps >= 0 else -math.expm1(eps)
        w_pairs, w_abs, weight_sum = self._weights_fft(eps)
        spec, bound = self.spec[:m], self.bound[:m]
        # Plancherel: Σ_j p_j w_j = (1/n) Σ_k c_k Re(P_k conj(W_k)), one real dot product as a
        # pairwise sum (numpy's, in a fixed order: a BLAS dot's order depends on its threads)
        value = float(np.sum(spec.view(float) * w_pairs[:2 * m])) / n
        # the spectrum's per-bin noise, then the rounding of the dot product itself: numpy's
        # sum of N = 2m products rounds each at most d = ``sum_roundings(N)`` times, + 1 for
        # the product: γ_{d+1} ≤ (d + 2)u, u = _U/2 (η covers it up to n ≈ 2^20, not beyond)
        dot_err = max(self.eta, 0.5 * (sum_roundings(2 * m) + 2) * _U) * float(np.sum(bound * w_abs[:m])) / n
        return min(1.0, max(value, 0.0) + self._bin_error() * weight_sum + dot_err + self.above_window()
                   + self._p_inf())

    def above_window(self):
        """Chernoff bound on the composed mass above the window (sent to +∞)."""
        return self._outside(self.log_mgf)[0]


def _log_mgf(log_p, losses, lambdas):
    """log Σ p e^{λ·loss} at each λ of ``lambdas`` (max-shifted: no overflow)."""
    expo = log_p[None, :] + lambdas[:, None] * losses[None, :]
    top = expo.max(axis=1)
    return top + np.log(np.exp(expo - top[:, None]).sum(axis=1))


def online_step(pairs, accuracy, tail):
    """The grid step ``plan_directions`` takes for the ``PairComposition`` ``pairs``:
    the coarser of the directions' ``plan_step`` at ρ = accuracy/10, every step
    counted as rounded (steps arrive one by one: no merging of Gaussians)."""
    return max(plan_step(pairs.direction(d), 0.1 * accuracy, tail) for d in DIRECTIONS)


def plan_directions(pairs, accuracy, tail, step=None):
    """(one ``OnlineDirection`` per direction, coarsened): the grid that the
    ``PairComposition`` ``pairs`` of the longest planned composition needs at
    ``accuracy`` (or the given ``step``), with at most ``tail`` of its mass
    outside the window; ``coarsened`` says the step had to grow to keep the
    window within ``MAX_GRID`` points (answers stay sound, only looser)."""
    step = online_step(pairs, accuracy, tail) if step is None else step
    coarsened = False
    for _ in range(8):
        windows = {}
        for d in DIRECTIONS:
            merged = merge_gaussians(pairs.direction(d)) if len(pairs.direction(d)) > 1 else pairs.direction(d)
            total_k = sum(k for _, k in merged)
            items = []
            for p, k in merged:
                lo, hi = loss_range(p, tail / total_k)
                items.append((pair_to_grid(p, step, math.floor(lo / step), math.ceil(hi / step)), k))
            tilts = chernoff_lambdas(items, tail)
            ja, jb, _, _ = chernoff_window(items, tail, tilts)
            steps_ = {p for p, _ in pairs.direction(d)}  # (a merged Gaussian is no step's pair)
            known = {p: g for (p, _), (g, _) in zip(merged, items) if p in steps_}
            windows[d] = (ja, fourier.next_fast_len(jb - ja + 1), total_k, known, tilts)
        widest = max(w[1] for w in windows.values())
        if widest <= MAX_GRID:
            break
        coarsened = True
        step *= 1.25 * widest / MAX_GRID  # the window in fewer points
    else:
        raise GridTooLarge(f"the odometer's composition needs a window of more than {MAX_GRID} grid points "
                           f"even at step {step:.3g}: ask for a coarser accuracy=, or account the run offline "
                           f"(Composition()(mechanisms, counts).get_approxDP(delta))")
    dirs = {}
    for d, (ja, size, total_k, known, tilts) in windows.items():
        dirs[d] = OnlineDirection(step, ja, size, tail / total_k, tilts)
        dirs[d].room, dirs[d].known = dict(pairs.direction(d)), known
    return dirs, coarsened
