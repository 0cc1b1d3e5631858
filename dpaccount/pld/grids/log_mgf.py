"""The log moment-generating function of a composition of grids.

For items [(grid_i, k_i)] (independent losses, grid i taken k_i times) the
composed loss S has the log moment-generating function

    K(λ) = Σ_i k_i Λ_i(λ),   Λ_i(λ) = log Σ_j p_ij e^{λ ε_ij}   (finite part),

whose Chernoff bounds and searches are ``chernoff.py``'s. ``LogMGF`` holds every
grid's points in one array, so K(λ) costs a few array passes however many
distinct grids there are (a heterogeneous composition has hundreds, each a
few hundred points on a coarse grid, where per-grid calls cost more than the
arithmetic). Each Λ_i is computed as t_i + log Σ_j e^{log p_ij + λε_ij − t_i}
with t_i the largest exponent (no overflow), and a term below e^{−700}
raised to that (exp stays out of the slow subnormal range; each Λ_i only
rises, by under n_i·e^{−700}). Its rounding is bounded by ``LogMGF.error``
and every bound adds it: a sum of n_i terms errs by up to (n_i − 1)u
of itself, so K errs by up to ~u·Σ k_i n_i, not by a few ulps of K (1e-7 on
DP-SGD's 14,063 steps of 60,000 points: a tail bound's own size, 1e-7 of it).
One pass over the points gives K, K' and K'' (the tilted mean and variance).
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

from ...numerics import ULP_OF_ONE as _U
from .cache import GridCache

_BLOCK = 1 << 18  # points × λ values per pass (2 MB per work array; one λ at least)
_GROUP = 1 << 18  # points of the grids a pass takes together (a larger grid alone)
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


_KEPT = 4096  # values a log-MGF remembers per table (then it starts again)


def _kept(table, x, compute):
    """``table[x]``, computed (``compute()``) and remembered where missing."""
    if x not in table:
        if len(table) > _KEPT:
            table.clear()
        table[x] = compute()
    return table[x]


class _Scratch(threading.local):
    """A thread's two work arrays of ``_BLOCK`` values, which the passes of every ``LogMGF`` it
    evaluates write in: made once, not mapped and faulted in anew for each log-MGF. An
    evaluation takes them (``arrays`` is None meanwhile, ``LogMGF._evaluate``): one begun within
    it in the same thread (a signal handler's, a finaliser's) uses its own."""

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
        self._scratch = None  # the thread's work arrays while an evaluation holds them (``_evaluate``)
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
                if not w.min() >= -700.0:  # (a NaN too: the raise leaves it NaN, as in the others' rows)
                    np.maximum(w, -700.0, out=w)
                yield part, group, top, np.exp(w, out=w)

    def _arrays(self, size):
        """Two work arrays of at least ``size`` values: the thread's (``_SCRATCH``), or for a pass
        wider than ``_BLOCK`` (a grid of more points alone) this log-MGF's own, kept for its next."""
        if size <= _BLOCK and self._scratch is not None:
            return self._scratch
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
                return _kept(self._memo, x, lambda: float(self._evaluate(np.array([x]), moments=False)[0][0]))
            flat = np.ravel(np.asarray(lam, dtype=float))
            new = np.array([x for x in dict.fromkeys(flat.tolist()) if x not in self._memo])
            if len(new):
                if len(self._memo) > _KEPT:
                    self._memo.clear()
                self._memo.update(zip(new.tolist(), self._evaluate(new, moments=False)[0].tolist()))
            return np.array([self._memo[x] for x in flat.tolist()]).reshape(np.shape(lam))

    def moments(self, lam):
        """(K, K', K'') at λ, or arrays of them for an array of λ."""
        with self._lock:
            if np.ndim(lam) == 0:
                x = float(lam)

                def compute():
                    value = tuple(float(v[0]) for v in self._evaluate(np.array([x]), moments=True))
                    self._memo.setdefault(x, value[0])  # the same K, computed the same way
                    return value
                return _kept(self._moments, x, compute)
            return tuple(v.reshape(np.shape(lam)) for v in self._evaluate(lam, moments=True))

    def _evaluate(self, lam, moments):
        size = np.size(lam)
        if self._void or not len(self._k) or not size:
            return (np.full(size, -np.inf if self._void else 0.0),) + (np.zeros(size),) * 2 * moments
        # the thread's work arrays taken for this evaluation's passes (an evaluation begun within
        # it, in this thread, by a signal handler or a finaliser, finds none and uses its own)
        self._scratch, _SCRATCH.arrays = _SCRATCH.arrays, None
        try:
            return self._passes(lam, moments)
        finally:
            _SCRATCH.arrays, self._scratch = self._scratch, None

    def _passes(self, lam, moments):
        """``_evaluate``'s passes over the points, a block of λ values at a time."""
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
