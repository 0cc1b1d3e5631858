"""Dominating pairs: the object every tight accountant starts from.

A pair (P, Q) dominates a mechanism M in one neighbouring direction when
H_α(M(D) || M(D')) ≤ H_α(P || Q) for every α = e^ε > 0 and every neighbours
D, D' in that direction (Zhu, Dong & Wang 2022, Def. 7). Everything here is
described through the privacy loss L = log(dP/dQ):

* ``masses(edges)`` — the P- and Q-probabilities of L in the cells
  (−∞, e₀], (e₀, e₁], …, (e_{n−1}, ∞) (finite L only). This is all the
  discretisers (``pld/discretise.py``) need, and each cell is computed directly,
  never as a difference of two numbers close to 1. ``masses_of(…, errors=True)``
  also bounds each cell's error: a few ulps of itself by default, more where a
  cell is a difference of two computed values (the Gaussian's and a
  monotone-loss pair's, from log F: ``pld/log_cells.py``) or sums atoms whose
  logs err (``DiscretePair``); each pair states its own. ``stacked_masses(pairs,
  edges, sizes)`` does it for many pairs at once (each on its own run of the edges): a
  heterogeneous composition asks hundreds of distinct pairs for a few hundred
  cells each, where per-call overhead outweighs the arithmetic; pairs of one
  class are vectorised together, same values.
* ``p_inf`` — P(L = +∞), the mass where Q vanishes; ``q_ninf`` — Q(L = −∞),
  the mass where P vanishes (it matters once the pair is subsampled);
  ``end_errors()`` bounds their errors (for the cell a subsampled pair lands
  them in).
* ``atom_masses(points)`` — the P- and Q-mass of L exactly at the given
  loss values (the atoms; zero for a continuous loss).
* ``delta(eps)`` — the hockey-stick curve H_{e^ε}(P||Q) for every real ε.
* ``reverse()`` — the pair (Q, P), whose loss is −L; where the loss has no
  atom at a finite value (``atomless``) its cells are the pair's own, mirrored.
* ``lattice`` — g > 0 if every finite loss value is an integer multiple of g
  (so a grid of step g/m represents the pair exactly), else None;
  ``anchor`` — a spacing whose divisors make good grid steps (the atoms of a
  pair that also has a continuous part), else None.
* ``gaussian_mu`` — μ if the pair *is* (N(μ,1), N(0,1)); compositions of such
  pairs are again Gaussian (``converters/gdp.py``).

Hockey-stick identities used throughout (all exact):
  H_α(P||Q) = P(L > log α) − α Q(L > log α),
  H_α(P||Q) = 1 − α + α H_{1/α}(Q||P)      (swap, for any α > 0).
"""
import hashlib
import math
from abc import ABC, abstractmethod

import numpy as np
from scipy import special, stats

from ..converters.gdp import delta_gdp
from ..errors import GridTooLarge
from .log_cells import normal_cells

_U = np.finfo(float).eps
_SUBNORMAL = math.ulp(0.0)  # the subnormal spacing: a result that underflows errs by spacings, not ulps
_NORMAL = np.finfo(float).tiny  # the least normal float


def underflow_slack(values, live):
    """16 subnormal spacings where a computed mass is below the normal range and not an
    exact 0 (``live``): a result that underflows errs by spacings, not by ulps of itself."""
    return np.where(live & (values < _NORMAL), 16 * _SUBNORMAL, 0.0)
CELL_ULPS = 8  # a cell computed directly is accurate to that many ulps of itself (``DominatingPair._masses``)
MAX_ATOMS = 1 << 23  # outcomes of a finite pair: as many as the grid cap (``pld/compose.MAX_GRID``)


def check_atoms(what, count):
    """Refuse up front a finite pair of more than ``MAX_ATOMS`` outcomes (its
    arrays alone would take ~16·count bytes, and every grid built from it more)."""
    if count > MAX_ATOMS:
        raise GridTooLarge(f"{what} has {count} outcomes; the cap is {MAX_ATOMS}")
    return count


class DominatingPair(ABC):
    """(P, Q) seen through its privacy loss L = log(dP/dQ); immutable."""

    lattice = None
    anchor = None
    gaussian_mu = None
    atomless = False  # True: no atom at a finite loss, so reverse()'s cells are these, mirrored

    @property
    @abstractmethod
    def p_inf(self):
        """P(L = +∞)."""

    q_ninf = 0.0

    @abstractmethod
    def masses(self, edges):
        """(A, B): P- and Q-masses of finite L in the len(edges)+1 cells
        (edges non-decreasing)."""

    def _masses(self, edges, errors):
        """``masses``, and with ``errors`` bounds on each cell's absolute error:
        ``CELL_ULPS`` ulps of the cell unless a subclass knows more (a cell that is
        a difference of two computed values, ``pld/log_cells.py``)."""
        a, b = self.masses(edges)
        return (a, b, CELL_ULPS * _U * a, CELL_ULPS * _U * b) if errors else (a, b)

    @classmethod
    def masses_of(cls, pairs, edges, sizes, errors=False):
        """``masses`` of several pairs of this class: pair i on the i-th run of
        ``sizes[i]`` edges, its sizes[i] + 1 cells concatenated in order; with
        ``errors``, (A, B, err_A, err_B), bounds on each cell's absolute error too.
        Subclasses vectorise it (elementwise the same operations)."""
        runs = np.split(np.asarray(edges, dtype=float), np.cumsum(sizes)[:-1])
        cells = [p._masses(e, errors) for p, e in zip(pairs, runs)]
        return tuple(np.concatenate(parts) for parts in zip(*cells))

    def end_errors(self):
        """Bounds on the absolute errors of (``p_inf``, ``q_ninf``) as computed: 16u(1 +
        |log m|) of each mass m by default (a logsumexp and an exp, or a product), more
        where a pair's logs err more (``DiscretePair``)."""
        return tuple(16 * _U * (1 + abs(math.log(m))) * m if m > 0 else 0.0 for m in (self.p_inf, self.q_ninf))

    def end_bounds(self):
        """((low, high) of P(L = +∞), (low, high) of Q(L = −∞)): ``p_inf`` is rounded up
        already (its high end); ``q_ninf`` is the value as computed; each moved by its
        ``end_errors()`` (the difference rounded by ≤ ½ ulp: moved by 2u more). Each use
        takes the end that errs its safe way (docs/portability.md)."""
        e_p, e_q = self.end_errors()
        p, q = self.p_inf, self.q_ninf
        return ((max((p - e_p) * (1 - 2 * _U), 0.0), p),
                (max((q - e_q) * (1 - 2 * _U), 0.0), min((q + e_q) * (1 + 2 * _U), 1.0) if q > 0 else 0.0))

    def atom_masses(self, points):
        """(P(L = ℓ), Q(L = ℓ)) for each ℓ in ``points`` (default: no atoms)."""
        zeros = np.zeros(len(points))
        return zeros, zeros.copy()

    @abstractmethod
    def delta(self, eps, upper=True):
        """H_{e^ε}(P || Q) for real ε (vectorised), rounded up: an upper bound
        within ~1e-12 of the exact value (upper=False: rounded down)."""

    @abstractmethod
    def reverse(self):
        """The pair (Q, P)."""

    @abstractmethod
    def key(self):
        """A hashable description (equal keys ⇔ equal pairs)."""

    def __eq__(self, other):
        return isinstance(other, DominatingPair) and self.key() == other.key()

    def __hash__(self):  # kept: a pair is immutable, and a nested key is rebuilt per call
        if "_hash" not in self.__dict__:
            self.__dict__["_hash"] = hash(self.key())
        return self.__dict__["_hash"]

    def __getstate__(self):  # string hashes differ between processes: a pickle carries no hash
        return {k: v for k, v in self.__dict__.items() if k != "_hash"}

    def __repr__(self):
        return f"{type(self).__name__}{self.key()[1:]}"


def _at(points, where, p_mass, q_mass):
    """Atom masses at ``where`` (arrays) picked out at ``points`` (within 1e-12)."""
    points = np.asarray(points, dtype=float)
    p_out, q_out = np.zeros(len(points)), np.zeros(len(points))
    for loc, pm, qm in zip(where, p_mass, q_mass):
        hit = np.abs(points - loc) <= 1e-12 * max(1.0, abs(loc))
        p_out[hit] += pm
        q_out[hit] += qm
    return p_out, q_out


def stacked_masses(pairs, edges, sizes, errors=False):
    """(A, B) of every pair on its own run of the edges (``masses_of``),
    concatenated in order: the pairs of each class together; with ``errors``,
    (A, B, err_A, err_B)."""
    sizes = np.asarray(sizes, dtype=np.int64)
    edges = np.asarray(edges, dtype=float)
    kinds = [type(p) for p in pairs]
    if len(set(kinds)) <= 1:
        return (kinds[0].masses_of(pairs, edges, sizes, errors) if pairs else (np.zeros(0),) * (4 if errors else 2))
    run = np.repeat(np.arange(len(pairs)), sizes)          # the pair of each edge
    cell_run = np.repeat(np.arange(len(pairs)), sizes + 1)  # the pair of each cell
    out = np.empty((4 if errors else 2, len(cell_run)))
    for cls in dict.fromkeys(kinds):
        mine = np.array([k is cls for k in kinds])
        out[:, mine[cell_run]] = cls.masses_of([p for p, m in zip(pairs, mine) if m], edges[mine[run]],
                                               sizes[mine], errors)
    return tuple(out)


class GaussianPair(DominatingPair):
    """(N(μ, 1), N(0, 1)): L ~ N(μ²/2, μ²) under P and N(−μ²/2, μ²) under Q."""

    def __init__(self, mu):
        self._mu = float(mu)

    gaussian_mu = property(lambda self: self._mu)
    p_inf = 0.0
    atomless = True

    def masses(self, edges):
        return self.masses_of([self], edges, [len(edges)])

    @classmethod
    def masses_of(cls, pairs, edges, sizes, errors=False):
        mu = np.repeat([p._mu for p in pairs], sizes)
        e = np.asarray(edges, dtype=float)
        # z = (e ∓ μ²/2)/μ: μ², the sum and the quotient each round by ≤ ½ ulp, so z errs by ≤ u(|z| + μ)
        a, b = (normal_cells(z, sizes, _U * (np.abs(z) + mu) if errors else None)
                for z in ((e - mu * mu / 2) / mu, (e + mu * mu / 2) / mu))
        return (a[0], b[0], a[1], b[1]) if errors else (a, b)

    def delta(self, eps, upper=True):
        return delta_gdp(eps, self._mu, upper)

    def reverse(self):
        return self  # symmetric up to the reflection x ↦ μ − x

    def key(self):
        return ("gaussian", self._mu)


class DiscretePair(DominatingPair):
    """Finitely many outcomes with probabilities p_i (under P) and q_i (Q).

    Given in log space (``log_p``, ``log_q``, −inf for zero). Outcomes with
    q_i = 0 carry P-mass to L = +∞ (``p_inf``, and ``q_ninf`` for Q at −∞,
    give them exactly where the logs would round them); outcomes with p_i = 0
    never matter for P. ``log_err``: bounds on the absolute errors of the
    given logs, (for log_p, for log_q), where they exceed the 4 ulp of one
    libm call (``binomial_pair``'s sums of lgamma).
    """

    def __init__(self, log_p, log_q, lattice=None, name="discrete", p_inf=None, q_ninf=None, log_err=None):
        log_p = np.asarray(log_p, dtype=float)
        log_q = np.asarray(log_q, dtype=float)
        keep = np.isfinite(log_p) | np.isfinite(log_q)
        self._log_p, self._log_q = log_p[keep], log_q[keep]
        err_p, err_q = (4 * _U * np.abs(np.where(np.isfinite(x), x, 0.0)) for x in (log_p, log_q)) if log_err is None \
            else (np.broadcast_to(np.asarray(e, dtype=float), log_p.shape) for e in log_err)
        self._log_err = (np.asarray(err_p)[keep], np.asarray(err_q)[keep])
        self._name = name
        self._key = None
        self.lattice = lattice
        with np.errstate(invalid="ignore"):
            self._loss = self._log_p - self._log_q  # +inf where q = 0, -inf where p = 0
        finite = np.isfinite(self._loss)
        order = np.argsort(self._loss[finite])
        self._sorted_loss = self._loss[finite][order]
        self._sorted_p = np.exp(self._log_p[finite][order])
        self._sorted_log_q = self._log_q[finite][order]
        self._sorted_q = np.exp(self._sorted_log_q)
        # the logs are the callers' libm results (np.log of a user's probabilities, log1p,
        # binom.logpmf): each errs by ``log_err`` (4 ulp of itself by default, docs/portability.md),
        # a mass then by as much relative and a loss by the two logs' errors; plus the loss's
        # own rounding (relative, as that of a lattice parameter like 1/t is)
        self._err_p, self._err_q = (e[finite][order] for e in self._log_err)
        self._tau = 8 * _U * np.abs(self._sorted_loss) + self._err_p + self._err_q
        # bounds on each atom's mass as computed, e^{log p}: its log's error η moves it by
        # e^η − 1 ≤ η(1 + η) relative for η ≤ 1 (e^{−η} ≥ 1 − η the other way; expm1 beyond), exp's
        # 4 ulp and the simulated machine's more: η(1 + η) + 8u of it; + 16 subnormal spacings where
        # it underflows (a mass that underflowed to 0 has no other error)
        with np.errstate(over="ignore", invalid="ignore"):
            self._atom_err_p, self._atom_err_q = (
                np.where(m > 0, m * (np.where(e <= 1, e * (1 + e), np.expm1(np.minimum(e, 709.0))) + 8 * _U), 0.0)
                + underflow_slack(m, True)
                for m, e in ((self._sorted_p, self._err_p), (self._sorted_q, self._err_q)))
        # the part of the logs' errors beyond the default 4 ulp of each (a binomial's lgamma
        # sums, a user's stated log_err): the optimistic lattice grid moves atoms down by it
        # (``pld/discretise._atoms_to_grid``; the default part is the loss values' own
        # ulp-level rounding, which its snapping onto grid points is certified up to)
        default = [4 * _U * np.abs(x[finite][order]) for x in (self._log_p, self._log_q)]
        self._excess_tau = np.maximum(self._err_p - default[0], 0.0) + np.maximum(self._err_q - default[1], 0.0)
        # the masses at ±∞ from the logs (where the caller does not give them): logsumexp errs by a
        # few ulp of |log m| (absolute) and k·u over its k terms, which exp turns into as much
        # relative, and exp adds its own (≤ 4 ulp assumed): 8u(1 + |log m|) + (k + 4)u of m (the
        # products below round by ≤ 2u); the logs' own errors (``log_err``, the largest w of the
        # summed ones) move m by a factor within e^{±w}
        ends = []
        for given, logs, errs in ((p_inf, self._log_p[self._loss == np.inf], self._log_err[0][self._loss == np.inf]),
                                  (q_ninf, self._log_q[self._loss == -np.inf], self._log_err[1][self._loss == -np.inf])):
            if given is not None:
                ends.append((float(given),) * 3)
                continue
            log_m = float(special.logsumexp(logs)) if len(logs) else -np.inf
            if log_m == -np.inf:
                ends.append((0.0, 0.0, 0.0))
                continue
            m, w = float(np.exp(log_m)), float(np.max(errs))
            slack = 8 * _U * (1.0 + abs(log_m)) + (len(logs) + 4) * _U
            # (m, m rounded up: e^w ≤ 1 + expm1(w)(1 + 8u), m rounded down: e^{−w} ≥ 1 − w)
            ends.append((m, min(m * (1 + slack) * (1 + math.expm1(w) * (1 + 8 * _U)), 1.0),
                         max(m * (1 - slack - w - 4 * _U), 0.0)))
        # P(L = +∞) rounded up (``p_inf``: the grids, δ(ε) and ε(δ) upper bounds) and down for
        # lower bounds (``_p_inf_low``); exactly ``p_inf`` where the caller gives it
        (_, self._p_inf, self._p_inf_low), (q_mid, q_up, q_low) = ends
        # Q(L = −∞) as computed: its uses move it their safe way by ``end_errors()``
        # (``end_bounds``: the optimistic grid's tangent at 0 down, subset sampling's atom at
        # 0 up, a Poisson pair's atom at log(1 − q) either way)
        self.q_ninf = q_mid
        self._end_bounds = ((self._p_inf_low, self._p_inf), (q_low, q_up))
        self._exact_ends = (p_inf, q_ninf)
        # bounds on their errors (``end_errors``): the computed p_inf lies in [low, up] with the
        # exact one, so within up − low of it (the difference rounded up); q_ninf likewise
        self._end_errors = tuple((up - low) * (1 + 2 * _U) for _, up, low in ends)

    @property
    def p_inf(self):
        return self._p_inf

    def end_errors(self):
        return self._end_errors

    def end_bounds(self):
        return self._end_bounds

    @property
    def atoms(self):
        """(loss values, P-masses, Q-masses) of the finite atoms, sorted."""
        return self._sorted_loss, self._sorted_p, self._sorted_q

    @property
    def loss_errors(self):
        """Bounds τ on the errors of the atoms' computed losses log p − log q: both logs'
        ``log_err`` and 8u|ℓ| of the difference's rounding."""
        return self._tau

    @property
    def loss_excess_errors(self):
        """The part of ``loss_errors`` from logs that err beyond the default 4 ulp of themselves."""
        return self._excess_tau

    @property
    def atom_errors(self):
        """Bounds on the absolute errors of the atoms' (P-masses, Q-masses) as computed, e^{log p}
        (``log_err`` and exp: η(1 + η) + 8u of each, + 16 subnormal spacings where it underflows)."""
        return self._atom_err_p, self._atom_err_q

    def atom_masses(self, points):
        return _at(points, self._sorted_loss, self._sorted_p, self._sorted_q)

    def masses(self, edges):
        return self._masses(edges, False)

    def _masses(self, edges, errors):
        """Each cell's atoms summed; with ``errors``, bounds on each cell's error: an atom
        e^{log p} errs by its log's error (``log_err``, relative: e^η − 1 ≤ η(1 + η)) and by
        exp's 4 ulp, taken as η(1 + η) + 8u of it (+ ``underflow_slack``); the
        sum of k atoms by ≤ k·u of itself (``bincount`` adds them in turn, non-negative).
        (The default 8u of the cell fell short by 270 times for a binomial pair's logs,
        ``binom.logpmf``, whose lgamma sums err by ulps of n log n.)"""
        cell = np.searchsorted(np.asarray(edges, dtype=float), self._sorted_loss, side="left")
        n = len(edges) + 1
        a, b = np.bincount(cell, self._sorted_p, minlength=n), np.bincount(cell, self._sorted_q, minlength=n)
        if not errors:
            return a, b
        count = np.bincount(cell, minlength=n)
        err_a, err_b = (np.bincount(cell, e, minlength=n) + count * _U * c
                        for e, c in ((self._atom_err_p, a), (self._atom_err_q, b)))
        return a, b, err_a, err_b

    def delta(self, eps, upper=True):
        eps = np.asarray(eps, dtype=float)[..., None]
        # Σ_i (p_i − e^ε q_i)_+ over finite atoms with loss > ε, plus p_inf. A computed loss
        # errs by at most τ_i (its logs' rounding): the upper bound takes every atom with
        # loss > ε − τ_i and pays 2τ_i p_i for those near ε whose true loss may
        # exceed ε though the computed one does not (their true loss is ≤ ε + 2τ_i, so each
        # adds at most p_i(1 − e^{−2τ_i}) ≤ 2τ_i p_i); the lower bound takes only loss > ε + τ_i.
        loss, p, p_inf = self._sorted_loss, self._sorted_p, (self._p_inf if upper else self._p_inf_low)
        live = loss > (eps - self._tau if upper else eps + self._tau)
        # e^ε q_i as exp(ε + log q_i): it overflows only off the live atoms (where
        # log q_i ≥ log p_i − ε + τ_i), whatever ε; the rounded sum in the exponent
        # (≤ u·|ε + log q_i|) is paid for in the pad below
        with np.errstate(over="ignore"):
            log_scaled = eps + self._sorted_log_q
            scaled_q = np.exp(log_scaled)
        out = np.where(live, np.maximum(p - scaled_q, 0.0), 0.0).sum(-1) + p_inf
        # the differences cancel near an atom: pad by their rounding, (n + 4)·u of the terms
        # (p_∞ among them: adding it rounds too); 0·∞ off the live atoms is dropped by the where
        with np.errstate(over="ignore", invalid="ignore"):
            pad = (len(p) + 4) * _U * (np.where(live, p + scaled_q, 0.0).sum(-1) + p_inf) \
                + 2 * _U * np.where(live, np.abs(log_scaled) * scaled_q, 0.0).sum(-1) \
                + 2 * np.where(live, self._err_p * p + self._err_q * scaled_q, 0.0).sum(-1)  # the logs' errors
        if upper:
            out = out + pad + np.where(live & (loss <= eps + self._tau), 2 * self._tau * p, 0.0).sum(-1)
        else:
            out = np.maximum(out - pad, 0.0)
        out = np.minimum(out.reshape(eps.shape[:-1]), 1.0)
        return float(out) if out.ndim == 0 else out

    def reverse(self):
        return DiscretePair(self._log_q, self._log_p, self.lattice, self._name + "-reversed",
                            p_inf=self._exact_ends[1], q_ninf=self._exact_ends[0], log_err=self._log_err[::-1])

    def key(self):
        if self._key is None:  # a digest: hashing a million-atom pair once, not per lookup
            digest = hashlib.sha256(self._log_p.tobytes() + b"|" + self._log_q.tobytes()).hexdigest()
            object.__setattr__(self, "_key", (self._name, len(self._log_p), digest))
        return self._key

    def __repr__(self):
        return f"DiscretePair({self._name}, {len(self._log_p)} outcomes)"


def identical_pair():
    """P = Q: the loss is 0 with probability 1 (a mechanism that ignores the record)."""
    return DiscretePair(np.zeros(1), np.zeros(1), name="identical")


def randomized_response_pair(p):
    """Binary randomized response (true answer with prob. p > 1/2):
    P = (p, 1−p), Q = (1−p, p); losses ±log(p/(1−p)) form a lattice."""
    a = math.log(p) - math.log1p(-p)
    logs = np.array([math.log(p), math.log1p(-p)])
    return DiscretePair(logs, logs[::-1], lattice=a, name=f"rr(p={p!r})")


def binomial_pair(n, p, shift=1):
    """Binomial mechanism (Agarwal et al. 2018): P = shift + Bin(n, p), Q = Bin(n, p)."""
    k = np.arange(check_atoms(f"the binomial pair (n={n}, shift={shift})", n + 1 + shift))
    log_q = stats.binom.logpmf(k, n, p)
    log_p = stats.binom.logpmf(k - shift, n, p)

    def err(j):  # logpmf sums lgamma terms and k log p + (n − k) log(1 − p): a few ulp of each
        j = np.clip(j, 0, n)
        return 8 * _U * (special.gammaln(n + 1.0) + special.gammaln(j + 1.0) + special.gammaln(n - j + 1.0)
                         + j * abs(math.log(p)) + (n - j) * abs(math.log1p(-p)) + 1.0)
    return DiscretePair(log_p, log_q, name=f"binomial(n={n},p={p!r},shift={shift})", log_err=(err(k - shift), err(k)))


class LaplacePair(DominatingPair):
    """(Lap(1, b), Lap(0, b)): the Laplace mechanism with sensitivity/scale 1/b.

    With ε₀ = 1/b the loss is −ε₀ on x ≤ 0, (2x − 1)/b on (0, 1), +ε₀ on x ≥ 1:
    atoms P(L=ε₀) = ½, P(L=−ε₀) = ½e^{−ε₀} and a continuous part between.
    δ(ε) = 1 − e^{(ε−ε₀)/2} on |ε| < ε₀ (Balle & Wang 2018 / the talk's table).
    """

    def __init__(self, eps0):
        self._e0 = float(eps0)
        self.anchor = self._e0  # atoms at ±ε₀ sit on grids of step ε₀/m

    p_inf = 0.0

    def atom_masses(self, points):
        e0, half = self._e0, 0.5
        return _at(points, (-e0, e0), (half * math.exp(-e0), half), (half, half * math.exp(-e0)))

    def masses(self, edges):
        return self._masses(edges, False)

    def _masses(self, edges, errors):
        """Each cell (lo, hi] as its continuous part on (lo, hi] ∩ (−ε₀, ε₀) plus the
        atoms at ±ε₀ it holds, the continuous part computed directly, never as a
        difference of distribution functions (P(L ≤ ε) = ½e^{(ε−ε₀)/2},
        Q(L ≤ ε) = 1 − ½e^{−(ε+ε₀)/2} on [−ε₀, ε₀)):

            P: ½e^{(hi−ε₀)/2}·(1 − e^{−(hi−lo)/2}),   Q: ½e^{−(lo+ε₀)/2}·(1 − e^{−(hi−lo)/2}).

        With ``errors``, bounds on each cell's absolute error, (16 + ε₀)u of the cell:
        exp and expm1 ≤ 4 ulp each (docs/portability.md); the exponent (hi − ε₀)/2 (or
        −(lo + ε₀)/2, of size ≤ ε₀ after clipping) rounds by ≤ ½u·ε₀, which moves exp by
        as much relative; lo − hi rounds by ½ ulp, which moves 1 − e^{(lo−hi)/2} by ≤ ½ ulp
        of it (|y|e^y ≤ 1 − e^y for y ≤ 0); the product ½ ulp; an atom ½e^{−ε₀} (exp, 4
        ulp) and its sum with the continuous part ½ ulp: ≤ 9.5u + ½u·ε₀ of the cell, taken
        as (16 + ε₀)u (second-order terms, and a simulated machine erring 5 ulp per call);
        + 16 subnormal spacings for results that underflow (``underflow_slack``). The
        distribution functions' difference (``np.diff``, before) erred by ulps of the
        functions, not of the cell: 7.5e3 ulp of a Q-cell at ε₀ = 1.3 and step 1e-3, all of
        it at ε₀ = 30, where Q(L ≤ ε) is within e^{−30} of 1."""
        e0 = self._e0
        e = np.asarray(edges, dtype=float)
        lo = np.clip(np.concatenate(([-np.inf], e)), -e0, e0)
        hi = np.clip(np.concatenate((e, [np.inf])), -e0, e0)
        width = -np.expm1((lo - hi) / 2)  # 1 − e^{−(hi−lo)/2}
        a = 0.5 * np.exp((hi - e0) / 2) * width
        b = 0.5 * np.exp(-(lo + e0) / 2) * width
        # the atoms: −ε₀ in the cell (e_{j−1}, e_j] with e_{j−1} < −ε₀ ≤ e_j, ε₀ likewise
        low, top = np.searchsorted(e, -e0, side="left"), np.searchsorted(e, e0, side="left")
        small = 0.5 * math.exp(-e0)
        a[low] += small
        b[low] += 0.5
        a[top] += 0.5
        b[top] += small
        if not errors:
            return a, b
        slack = (16 + e0) * _U
        live = hi > lo  # else a cell without continuous part: its atoms' (½, and ½e^{−ε₀} ≥ 0)
        live[[low, top]] = True
        return a, b, slack * a + underflow_slack(a, live), slack * b + underflow_slack(b, live)

    def delta(self, eps, upper=True):
        eps = np.asarray(eps, dtype=float)
        e0 = self._e0
        with np.errstate(over="ignore"):  # each expm1 overflows only outside its branch
            out = np.where(eps >= e0, 0.0,
                           np.where(eps <= -e0, -np.expm1(eps), -np.expm1((eps - e0) / 2)))
        # expm1 (≤ 4 ulp, the documented worst case assumed), the rounded argument
        # (ε − ε₀)/2 (≤ 1 ulp of the result) and the product: 8 ulp
        out = out * (1 + 8 * _U if upper else 1 - 8 * _U)
        if upper:  # δ > 0 below ε₀ even where it underflows (ε₀ subnormal): the smallest float
            out = np.where((out == 0) & (eps < e0), math.ulp(0.0), out)
        return float(out) if out.ndim == 0 else out

    def reverse(self):
        return self

    def key(self):
        return ("laplace", self._e0)
