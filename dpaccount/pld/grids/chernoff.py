"""Chernoff bounds on a composition of grids: its log-MGF and the λ searches.

For items [(grid_i, k_i)] (independent losses, grid i taken k_i times) the
composed loss S has the log moment-generating function

    K(λ) = Σ_i k_i Λ_i(λ),   Λ_i(λ) = log Σ_j p_ij e^{λ ε_ij}   (finite part),

and for every λ > 0 (Chernoff)

    P(S ≥ b) ≤ exp(K(λ) − λb),   P(S ≤ a) ≤ exp(K(−λ) + λa).

Any λ gives a valid bound: the searches below only tighten it (a λ off the
optimum widens a window, it never makes it wrong). ``LogMGF`` holds every
grid's points in one array, so K(λ) costs a few array passes however many
distinct grids there are (a heterogeneous composition has hundreds, each a
few hundred points on a coarse grid, where per-grid calls cost more than the
arithmetic). Each Λ_i is computed as t_i + log Σ_j e^{log p_ij + λε_ij − t_i}
with t_i the largest exponent (no overflow), and a term below e^{−700}
raised to that (exp stays out of the slow subnormal range; each Λ_i only
rises, by under n_i·e^{−700}). Its rounding is bounded by ``LogMGF.error``
and every bound below adds it: a sum of n_i terms errs by up to (n_i − 1)u
of itself, so K errs by up to ~u·Σ k_i n_i, not by a few ulps of K (1e-7 on
DP-SGD's 14,063 steps of 60,000 points: a tail bound's own size, 1e-7 of it).

The searches (``descend``) are safeguarded Newton iterations on the slope
of a Chernoff exponent or level, one pass over the points per step giving
K, K' and K'' (the tilted mean and variance); started near the answer (a
coarser grid's λ, a normal law's), they take one to a few passes.
``log_mgf(items)`` shares one ``LogMGF`` per composition (while it is held, however
large) among the searches that follow one another on it (a window, its tilt, the tilt lattice of
``step_profile.py``, thousands of saddle points on one composition): each
keeps the K(λ) and moments it has computed.
"""
import math
import threading
import weakref
from typing import NamedTuple, Optional

import numpy as np

from ...lazy import lazy
from ...numerics import ULP_OF_ONE as _U
from .cache import GridCache

optimize = lazy("scipy.optimize")

_BLOCK = 1 << 18  # points × λ values per pass (2 MB per work array; one λ at least)
_GROUP = 1 << 18  # points of the grids a pass takes together (a larger grid alone)
_SCAN = np.geomspace(1e-3, 1e3, 10)  # the first look of every λ search
# the last compositions' log-MGFs, keyed by their grids' identities (the grids held with them;
# the budget counts their points, which the grids share: one of 7M points fits beside its proxy's);
# and every one still held elsewhere (a band lattice's), by the same keys
_RECENT = GridCache(limit=160 * 2 ** 20, size_of=lambda held: held[1].nbytes)
_HELD: "weakref.WeakValueDictionary[tuple, LogMGF]" = weakref.WeakValueDictionary()
_HELD_LOCK = threading.Lock()


def groups(items, points, limit):
    """``items`` in consecutive groups of at most ``limit`` points in all (``points`` each;
    a larger item alone): passes over arrays that stay in cache."""
    out, total = [], 0
    for item, n in zip(items, points):
        if not out or total + n > limit:
            out.append([])
            total = 0
        out[-1].append(item)
        total += n
    return out


def _unview(grids, logp):
    """Drop the grids' (log p, ε) that are views of a dead log-MGF's ``logp`` (they would keep
    all its points alive; a grid computes its own again when asked)."""
    for g in grids:
        held = g.__dict__.get("_live_log")
        if held is not None and held[0].base is logp:
            del g.__dict__["_live_log"]


def log_mgf(items):
    """The ``LogMGF`` of [(grid, count), ...], shared with the last ones asked for and with
    any still held (a ``LogMGF`` holds its grids, so their identities stay theirs while it lives)."""
    items = tuple(items)
    key = tuple((id(g), k) for g, k in items)

    def build():
        with _HELD_LOCK:
            mgf = _HELD.get(key)
            if mgf is None:
                mgf = _HELD[key] = LogMGF(items)
        return items, mgf
    return _RECENT.get(key, build)[1]


class _Scratch(threading.local):
    """A thread's two work arrays of ``_BLOCK`` values, which the passes of every ``LogMGF`` it
    evaluates (one at a time) write in: made once, not mapped and faulted in anew for each
    log-MGF."""

    def __init__(self):
        super().__init__()
        self.arrays = (np.empty(_BLOCK), np.empty(_BLOCK))


_SCRATCH = _Scratch()


class _Group(NamedTuple):
    """Grids g0 … g1 − 1, points lo … hi − 1 of a ``LogMGF``, evaluated in one pass: each grid's
    first point and size within it (None: the log-MGF's only grid)."""

    g0: int
    g1: int
    lo: int
    hi: int
    starts: Optional[np.ndarray]
    sizes: Optional[np.ndarray]


class LogMGF:
    """λ ↦ K(λ) = Σ_i k_i Λ_i(λ) of [(grid, count), ...] (a number or an array of λ);
    ``moments`` adds K' and K'' (the mean and variance of the tilted composition).
    A grid without finite mass makes K = −∞."""

    def __init__(self, items):
        self._items = items = tuple(items)  # held: ``log_mgf`` keys log-MGFs by their grids' identities
        grids = [g for g, _ in items]
        # every grid's (log p, ε) of its points with p > 0 (``PLDGrid._live_log``), concatenated; a
        # grid that has not computed them and has no empty point is written here at once (the
        # same floats, one copy); from now on each grid's are views of these arrays
        fresh = ["_live_log" not in g.__dict__ and bool(np.all(g.probs > 0)) for g in grids]
        counts = [len(g.probs) if new else len(g._live_log[1]) for g, new in zip(grids, fresh)]
        live = [i for i, n in enumerate(counts) if n]
        self._void = len(live) < len(grids)
        sizes = np.array([counts[i] for i in live], dtype=np.int64)
        self._k = np.array([items[i][1] for i in live], dtype=float)
        self._starts, self._sizes = np.cumsum(sizes) - sizes, sizes
        self._logp, self._x = np.empty(int(sizes.sum())), np.empty(int(sizes.sum()))
        for i, start, n in zip(live, self._starts.tolist(), sizes.tolist()):
            g, logp, x = grids[i], self._logp[start:start + n], self._x[start:start + n]
            if fresh[i]:  # as ``PLDGrid.losses``: (j + offset)·step
                np.log(g.probs, out=logp)
                x[:] = np.arange(n, dtype=float)
                x += g.offset
                x *= g.step
            else:
                logp[:], x[:] = g._live_log
        self._logp.flags.writeable = self._x.flags.writeable = False
        for i, start, n in zip(live, self._starts.tolist(), sizes.tolist()):
            grids[i].__dict__["_live_log"] = (self._logp[start:start + n], self._x[start:start + n])
        weakref.finalize(self, _unview, [grids[i] for i in live], self._logp)
        live = [(grids[i]._live_log, items[i][1]) for i in live]
        # the grids in groups of ≤ _GROUP points, each a pass of its own (a grid's sums are the
        # same floats whichever group holds it): the work arrays stay in cache
        self._groups = [self._group(g[0], g[-1] + 1) for g in groups(range(len(sizes)), sizes.tolist(), _GROUP)]
        self._err = self._error_coefficients(live)
        self._width = max(1, _BLOCK // max(len(self._x), 1))  # λ values per pass
        self._widest = max((g.hi - g.lo for g in self._groups), default=0)  # points of the widest pass
        self._own = None  # work arrays of passes wider than ``_BLOCK`` (``_arrays``)
        self._memo, self._moments = {}, {}  # λ → K(λ), λ → (K, K', K'')
        self._lock = threading.Lock()    # shared (``log_mgf``): one evaluation at a time

    @staticmethod
    def _error_coefficients(live):
        """(e₀, e₁) of ``error``: e₀ + e₁·|λ|."""
        e0 = e1 = 0.0
        m = len(live)
        for (logp, x), k in live:
            n = len(x)
            a0, a1 = float(np.max(np.abs(logp))), float(np.max(np.abs(x)))
            e0 += k * ((16 + m) * a0 + 2 * n + 16 + m * (math.log(n) + 1))
            e1 += k * (16 + m) * a1
        return e0 * _U, e1 * _U

    def error(self, lam):
        """A bound on the rounding error of the computed K(λ) (a number or an array).

        Each Λ_i = t_i + log Σ_j e^{w_j}, w_j = log p_ij + λε_ij − t_i, with
        A_i = max|log p_ij| + |λ|·max|ε_ij| ≥ |t_i|, |w_j| ≤ 2A_i: log p and exp
        ≤ 4 ulp of their size, λε, the sums and the subtraction ½ ulp each (≤ 11uA_i),
        the n_i-term sum of terms in (0, 1] (n_i − 1)u of itself, its log 4u
        (≤ u(11A_i + n_i + 4 log n_i + 8) in all, padded to u(16A_i + 2n_i + 16));
        the dot product with the counts over m grids, m·u·Σ k_i|Λ_i| ≤
        m·u·Σ k_i(A_i + log n_i + 1). (Terms raised to e^{−700} only raise K.)"""
        e0, e1 = self._err
        return e0 + e1 * np.abs(lam)

    @property
    def nbytes(self):
        """Bytes it holds or uses at most: the points, their logs and the two work arrays its passes
        write in (a pass's λ values times its widest group: a grid of more than ``_GROUP`` points is
        one alone; its own only where wider than ``_BLOCK``, else the thread's, ``_SCRATCH``)."""
        return 16 * len(self._x) + 16 * max(min(_BLOCK, len(self._x) * self._width), self._widest * self._width)

    def _group(self, g0, g1):
        """The ``_Group`` of grids g0 … g1 − 1."""
        lo, hi = int(self._starts[g0]), int(self._starts[g1 - 1] + self._sizes[g1 - 1])
        if len(self._starts) == 1:
            return _Group(g0, g1, lo, hi, None, None)
        return _Group(g0, g1, lo, hi, self._starts[g0:g1] - self._starts[g0], self._sizes[g0:g1])

    def _blocks(self, lam):
        """Per block of λ values and group of grids: (λ, group, t, w) with t_i the largest
        exponent of grid i and w_j = p_j e^{λε_j − t_i} ∈ (0, 1] (one row per λ)."""
        lam = np.ravel(np.asarray(lam, dtype=float))
        for start in range(0, len(lam), self._width):
            part = lam[start:start + self._width]
            work = self._arrays(len(part) * self._widest)[0]
            for group in self._groups:
                x = self._x[group.lo:group.hi]
                w = np.multiply(part[:, None], x, out=work[:len(part) * len(x)].reshape(len(part), -1))
                w += self._logp[group.lo:group.hi]
                top = self._per_grid(np.maximum, w, group)
                w -= top if group.sizes is None else np.repeat(top, group.sizes, axis=1)
                # a term below e^{−700} of its grid's largest is raised to that: exp stays out of the
                # (slow) subnormal range, and K only rises, as a Chernoff bound allows (where none
                # is, the raise would change nothing and its pass is skipped)
                if w.min() < -700.0:
                    np.maximum(w, -700.0, out=w)
                yield part, group, top, np.exp(w, out=w)

    def _arrays(self, size):
        """Two work arrays of at least ``size`` values: the thread's (``_SCRATCH``), or for a pass
        wider than ``_BLOCK`` (a grid of more points alone) this log-MGF's own, kept for its next."""
        if size <= _BLOCK:
            return _SCRATCH.arrays
        if self._own is None or len(self._own[0]) < size:
            self._own = (np.empty(size), np.empty(size))
        return self._own

    @staticmethod
    def _per_grid(ufunc, w, group):
        """``ufunc`` reduced over each grid of ``group`` (``w`` holds their points; one column per grid)."""
        if group.starts is None:
            return ufunc.reduce(w, axis=1, keepdims=True)
        return ufunc.reduceat(w, group.starts, axis=1)

    def __call__(self, lam):
        with self._lock:
            if np.ndim(lam) == 0:
                x = float(lam)
                if x not in self._memo:
                    if len(self._memo) > 4096:
                        self._memo.clear()
                    self._memo[x] = float(self._evaluate(np.array([x]), moments=False)[0][0])
                return self._memo[x]
            flat = np.ravel(np.asarray(lam, dtype=float))
            new = np.array([x for x in dict.fromkeys(flat.tolist()) if x not in self._memo])
            if len(new):
                if len(self._memo) > 4096:
                    self._memo.clear()
                self._memo.update(zip(new.tolist(), self._evaluate(new, moments=False)[0].tolist()))
            return np.array([self._memo[x] for x in flat.tolist()]).reshape(np.shape(lam))

    def moments(self, lam):
        """(K, K', K'') at λ, or arrays of them for an array of λ."""
        with self._lock:
            if np.ndim(lam) == 0:
                x = float(lam)
                if x not in self._moments:
                    if len(self._moments) > 4096:
                        self._moments.clear()
                    self._moments[x] = tuple(float(v[0]) for v in self._evaluate(np.array([x]), moments=True))
                    self._memo.setdefault(x, self._moments[x][0])  # the same K, computed the same way
                return self._moments[x]
            return tuple(v.reshape(np.shape(lam)) for v in self._evaluate(lam, moments=True))

    def _evaluate(self, lam, moments):
        size = np.size(lam)
        if self._void or not len(self._k):
            return (np.full(size, -np.inf if self._void else 0.0),) + (np.zeros(size),) * 2 * moments
        blocks, rows = [], []
        for part, group, top, w in self._blocks(lam):
            # per grid: its largest exponent, Σ w (and Σ wε, Σ wε²)
            row = [top, self._per_grid(np.add, w, group)]
            if moments:
                x = self._x[group.lo:group.hi]
                wx = np.multiply(w, x, out=self._arrays(w.size)[1][:w.size].reshape(w.shape))
                row.append(self._per_grid(np.add, wx, group))
                row.append(self._per_grid(np.add, np.multiply(wx, x, out=wx), group))
            rows.append(row)
            if group.g1 == len(self._sizes):  # the block of λ is done: its grids side by side
                blocks.append(self._combine(*(rows[0] if len(rows) == 1 else map(np.hstack, zip(*rows)))))
                rows = []
        return blocks[0] if len(blocks) == 1 else tuple(map(np.concatenate, zip(*blocks)))

    def _combine(self, top, total, *raw):
        """(K, K', K'') (or (K,)) of per-grid rows: the largest exponents, Σ w (and Σ wε, Σ wε²)."""
        cgf = (top + np.log(total)) @ self._k
        if not raw:
            return (cgf,)
        first, second = raw[0] / total, raw[1] / total
        return cgf, first @ self._k, np.maximum(second - first ** 2, 0.0) @ self._k


def minimise_over_lambda(f, argmin=False):
    """min over λ ∈ [1e-3, 1e3] of f (or the λ attaining it): a log-spaced scan
    (f takes the array of λ), then Brent on the bracket around the best point."""
    grid = _SCAN
    vals = np.asarray(f(grid), dtype=float)
    i = int(np.argmin(vals))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    res = optimize.minimize_scalar(f, bounds=(lo, hi), method="bounded", options={"xatol": 2e-2 * lo})
    if argmin:
        return float(res.x) if res.fun < vals[i] else float(grid[i])
    return min(float(vals[i]), float(res.fun))


def descend(evaluate, lam, tol=0.0):
    """(value, λ): the least value met by a safeguarded Newton search over
    λ ∈ [1e-3, 1e3] from ``lam``, of a function that falls and then rises.

    ``evaluate(λ)`` gives (value, ψ, ψ', gain, s): ψ has the sign of the slope
    and does not decrease (the minimum is its root, or an end of the range),
    gain predicts how far below the value the minimum is, and s is ψ's scale
    (a standard deviation: x = ψ/s). Below the root the step is Newton's,
    −ψ/ψ'; above it, Newton's on asinh(ψ/s), −asinh(x)·√(1 + x²)·s/ψ' (as
    Newton's where |x| ≲ 1; where the tilted mean runs away exponentially, as
    past a compound of rare large losses, a jump to near the root instead of
    ~1/rate per step). A step stays inside the bracket the signs of ψ have
    shown (else the bracket's geometric middle, or the end not yet tried) and
    moves at most a factor 4 towards an end where ψ's sign is unknown. It
    stops where gain ≤ ``tol`` (or 1e-13 of the value: rounding) or the root
    lies beyond an end. Each evaluation is one pass over the points."""
    lo, hi = _SCAN[0], _SCAN[-1]
    lam = min(max(float(lam), lo), hi)
    best, seen = (math.inf, lam), [False, False]  # whether ψ < 0 at lo, ψ > 0 at hi has been seen
    for _ in range(60):
        value, psi, dpsi, gain, scale = evaluate(lam)
        if not (math.isfinite(value) and math.isfinite(psi)):
            return min(best, (value, lam)) if best[0] < math.inf else (value, lam)
        best = min(best, (value, lam))
        if psi == 0 or gain <= max(tol, 1e-13 * abs(value)) or (psi < 0 and lam >= _SCAN[-1]) or (
                psi > 0 and lam <= _SCAN[0]):
            break
        if psi < 0:
            lo, seen[0] = lam, True
            new = lam - psi / dpsi if dpsi > 0 else math.inf
        else:
            hi, seen[1] = lam, True
            x = psi / scale if scale > 0 else math.inf
            stretch = math.asinh(x) * math.sqrt(1.0 + x * x) / x if 0 < x < 1e150 else 1.0  # ≥ 1
            new = lam - stretch * psi / dpsi if dpsi > 0 else 0.0
        if hi - lo <= 1e-12 * hi:
            break
        if not lo < new < hi:  # towards an end not yet seen, that end; else the geometric middle
            new = lo if not seen[0] and new <= lo else hi if not seen[1] and new >= hi else math.sqrt(lo * hi)
        # towards an end where ψ's sign is unknown, at most a factor 4 at a time
        lam = min(max(new, lo if seen[0] else 0.25 * lam), hi if seen[1] else 4.0 * lam)
    return best


def exponent(mgf, level, sign=1.0):
    """``descend``'s λ ↦ K(sλ) − sλ·level: the Chernoff exponent of P(sS ≥ s·level),
    convex (ψ = s(K'(sλ) − level), ψ' = K''(sλ), gain ψ²/2ψ', scale √K'')."""
    def evaluate(lam):  # the value rounded up: K's error (``LogMGF.error``) and the subtraction's
        k0, k1, k2 = mgf.moments(sign * lam)
        psi = sign * (k1 - level)
        value = k0 - sign * lam * level
        value += mgf.error(lam) + 2 * _U * (abs(k0) + abs(lam * level))
        return value, psi, k2, psi * psi / (2.0 * k2) if k2 > 0 else math.inf, math.sqrt(k2)
    return evaluate


def tail_level(mgf, log_tail, sign=1.0, at=0.0):
    """``descend``'s θ ↦ f(θ) = (K(at + sθ) − K(at) − log_tail)/θ: by Chernoff, the law
    tilted at ``at`` (log-MGF θ ↦ K(at + θ) − K(at); at = 0: the composed law itself,
    K(0) not taken off) has P(sS ≥ f(θ)) ≤ e^{log_tail}. ψ = θ²f' = θ(sK' − f) does
    not decrease (ψ' = θK''); gain ψ²/(2θ²ψ'), scale θ√K''."""
    base = mgf(at) if at else 0.0
    slack = mgf.error(at) if at else 0.0  # K(at)'s rounding (K(0) = 0 is not computed)

    def evaluate(theta):  # the level rounded up: both K's errors (``LogMGF.error``), the sums'
        k0, k1, k2 = mgf.moments(at + sign * theta)
        value = (k0 - base - log_tail) / theta
        value += (mgf.error(at + sign * theta) + slack + 4 * _U * (abs(k0) + abs(base) + abs(log_tail))) / theta
        psi, dpsi = theta * (sign * k1 - value), theta * k2
        gain = psi * psi / (2.0 * theta * theta * dpsi) if dpsi > 0 else math.inf
        return value, psi, dpsi, gain, theta * math.sqrt(k2)
    return evaluate


def quantile(mgf, log_tail, sign, hint=None, tol=0.0):
    """(level, λ): P(sign·S ≥ level) ≤ e^{log_tail} at level = f(λ) = (K(sign·λ) − log_tail)/λ,
    minimised over λ by ``descend`` (``tail_level``) from ``hint`` (the λ of the
    same search on coarser grids of the same pairs, which moves little), else
    from that of a normal law of the same variance, √(−2·log_tail/K''(0)); it
    stops where the predicted gain is at most ``tol``."""
    if hint is None:
        hint = math.sqrt(-2.0 * log_tail / max(mgf.moments(0.0)[2], 1e-300))
    return descend(tail_level(mgf, log_tail, sign), hint, tol)


def composed_p_inf(items):
    """P(S = ∞) = 1 − Π(1 − p_∞,i)^{k_i} of [(grid, count), ...], rounded up
    (log1p, the sum and expm1: a few ulps each, padded by 16u)."""
    if any(g.p_inf >= 1.0 for g, _ in items):
        return 1.0
    return min(1.0, -math.expm1(sum(k * math.log1p(-g.p_inf) for g, k in items)) * (1 + 16 * _U))


_DELTA_LAMBDAS = np.geomspace(1e-2, 1e3, 97)  # any λ > 0 is valid: the lattice only tightens
_TINY = np.nextafter(0.0, 1.0)


def delta_bound(items, eps):
    """A rigorous upper bound on δ(ε) (an array of ε ≥ 0) of the composition of
    [(pessimistic grid, count), ...], without composing it:

        δ(ε) = E[(1 − e^{ε−S})₊] ≤ P(S = ∞) + c(λ)·e^{K(λ) − λε}   for every λ > 0,

    c(λ) = max_{x>0} (1 − e^{−x})e^{−λx} = (λ/(λ+1))^λ/(λ+1) (the maximum is at
    e^{−x} = λ/(λ+1)), K the log-MGF of the finite parts; minimised over a λ
    lattice. The grids dominate their pairs, so their composition dominates the
    composed mechanism and this bounds its δ too (Zhu, Dong & Wang 2022, Thm 10).

    Rounding, erring up: K by ``LogMGF.error``; the rest (λε, log c, exp) by
    8u of the terms and 16u of the result; P(S = ∞) by ``composed_p_inf``."""
    eps = np.asarray(eps, dtype=float)
    if not np.all(eps < np.inf):  # δ(∞) = P(S = ∞): the bound at the largest finite ε is above it
        return delta_bound(items, np.minimum(eps, 1e300))
    p_inf = composed_p_inf(items)
    if p_inf >= 1.0:
        return np.ones(eps.shape)
    lam = _DELTA_LAMBDAS
    with np.errstate(over="ignore"):
        cgf = np.asarray(log_mgf(items)(lam), dtype=float)
    pad = log_mgf(items).error(lam)
    log_c = -np.log1p(lam) - lam * np.log1p(1.0 / lam)
    terms = cgf[:, None] - lam[:, None] * eps.ravel()[None, :] + log_c[:, None]
    slack = pad[:, None] + 8 * _U * (np.abs(lam[:, None] * eps.ravel()[None, :]) + np.abs(log_c)[:, None] + 1)
    with np.errstate(invalid="ignore"):
        best = np.min(np.where(np.isfinite(cgf)[:, None], terms + slack, np.inf), axis=0)
    with np.errstate(over="ignore", under="ignore"):
        tail = np.exp(np.minimum(best, 0.0)) * (1 + 16 * _U)
    tail = np.where(best > -np.inf, np.maximum(tail, _TINY), 0.0)  # an underflow rounds up
    return np.minimum(tail + p_inf, 1.0).reshape(eps.shape)
