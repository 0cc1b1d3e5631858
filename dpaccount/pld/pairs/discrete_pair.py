"""Finite dominating pairs: finitely many outcomes with probabilities p_i under
P and q_i under Q (``DiscretePair``), and the pairs of the finite mechanisms
built from them (the identical pair, randomized response, the binomial
mechanism). The protocol they follow is ``pld/pairs/base.py``'s ``DominatingPair``;
their cells come from their atoms, with the errors of the given logs
(``log_err``).
"""
import math

import numpy as np

from ...lazy import lazy
from .base import DominatingPair, atoms_at, check_atoms, underflow_slack
from ...numerics import ULP_OF_ONE as _U


special = lazy("scipy.special")
stats = lazy("scipy.stats")
hashlib = lazy("hashlib")  # key() only: OpenSSL's module stays out of import dpaccount

_DIRECT_MAX = 1 << 20  # atoms × points summed directly (8 MB a row); beyond, the sorted suffix sums


class DiscretePair(DominatingPair):
    """Finitely many outcomes with probabilities p_i (under P) and q_i (Q).

    Given in log space (``log_p``, ``log_q``, −inf for zero). Outcomes with
    q_i = 0 carry P-mass to L = +∞ (``p_inf``, and ``q_ninf`` for Q at −∞,
    give them exactly where the logs would round them); outcomes with p_i = 0
    never matter for P. ``log_err``: bounds on the absolute errors of the
    given logs, (for log_p, for log_q), where they exceed the 4 ulp of one
    libm call (``binomial_pair``'s sums of lgamma). ``tight``, ``witnesses``:
    whether the pair is attained, else which attained compositions it stands
    for (``pairs.DominatingPair``); the reverse pair keeps them, reversed.
    """

    def __init__(self, log_p, log_q, lattice=None, name="discrete", p_inf=None, q_ninf=None, log_err=None,
                 tight=False, witnesses=()):
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
        self.tight, self.witnesses = bool(tight), tuple(witnesses)
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
    def log_masses(self):
        """(log_p, log_q, err_p, err_q) of every outcome as given (−inf for a zero
        mass; err: bounds on the logs' absolute errors, ``log_err``)."""
        return self._log_p, self._log_q, self._log_err[0], self._log_err[1]

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
        return atoms_at(points, self._sorted_loss, self._sorted_p, self._sorted_q)

    def pure_epsilon(self):
        """The largest finite loss plus its error bound τ, rounded up; +∞ where P(L = +∞) > 0."""
        if self._p_inf > 0 or not len(self._sorted_loss):
            return math.inf if self._p_inf > 0 else 0.0
        if np.array_equal(self._log_p, self._log_q):  # the same law: every loss is exactly 0
            return 0.0
        return float(np.nextafter(np.max(self._sorted_loss + self._tau), np.inf))

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
        eps = np.asarray(eps, dtype=float)
        if eps.size * len(self._sorted_loss) > _DIRECT_MAX:  # the direct sums would take n·m memory
            return self._delta_sorted(eps, upper)
        return self._delta_direct(eps, upper)

    def _delta_direct(self, eps, upper):
        """δ(ε) summed over every atom for every ε: O(n·m) time and memory."""
        eps = eps[..., None]
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
        # (p_∞ among them: adding it rounds too, unless no atom is live: then the sum is p_∞ + 0,
        # exact, and δ = P(L = ∞) is answered as it is — ε(δ) at δ = P(L = ∞) is finite);
        # 0·∞ off the live atoms is dropped by the where
        with np.errstate(over="ignore", invalid="ignore"):
            pad = (len(p) + 4) * _U * (np.where(live, p + scaled_q, 0.0).sum(-1) + np.where(live.any(-1), p_inf, 0.0)) \
                + 2 * _U * np.where(live, np.abs(log_scaled) * scaled_q, 0.0).sum(-1) \
                + 2 * np.where(live, self._err_p * p + self._err_q * scaled_q, 0.0).sum(-1)  # the logs' errors
        if upper:
            out = out + pad + np.where(live & (loss <= eps + self._tau), 2 * self._tau * p, 0.0).sum(-1)
        else:
            out = np.maximum(out - pad, 0.0)
        out = np.minimum(out.reshape(eps.shape[:-1]), 1.0)
        return float(out) if out.ndim == 0 else out

    def _delta_sorted(self, eps, upper):
        """δ(ε) = p_∞ + S_P(i) − e^ε S_Q(i) from the suffix sums S of the atoms sorted
        by loss, i the first atom with loss > ε: O((n + m) log n) time, O(n + m) memory.

        Rounded as ``_delta_direct``: the lower bound sums the set {computed loss > ε}
        (any set S gives P(S) − e^ε Q(S) ≤ δ(ε)), P-masses down and Q-masses up by
        their errors (``atom_errors``); the upper bound the atoms surely above ε (computed
        loss > ε + T, T the largest loss error τ) with P up and Q down, plus 2T of the
        P-mass of those within T of ε (each adds p(1 − e^{ε−ℓ})_+ ≤ 2T·p). e^ε S_Q is
        exp(ε + log S_Q) (no overflow); the pad covers the n-term suffix sums ((n + 8)u of
        the terms, p_∞ and the difference among them) and exp's and log's rounding."""
        loss, n = self._sorted_loss, len(self._sorted_loss)
        flat = eps.ravel()
        err_p, err_q = self._atom_err_p, self._atom_err_q
        p = self._sorted_p + err_p if upper else np.maximum(self._sorted_p - err_p, 0.0)
        q = np.maximum(self._sorted_q - err_q, 0.0) if upper else self._sorted_q + err_q
        s_p, s_q = (np.append(np.cumsum(x[::-1])[::-1], 0.0) for x in (p, q))  # S[i] = Σ_{j ≥ i}, S[n] = 0
        wide = float(np.max(self._tau, initial=0.0)) if upper else 0.0
        first = np.searchsorted(loss, flat + wide, side="right")  # the first atom (surely) above ε
        p_inf = self._p_inf if upper else self._p_inf_low
        live = s_q[first] > 0
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            log_scaled = np.where(live, flat + np.log(s_q[first]), 0.0)
            scaled = np.where(live, np.exp(log_scaled), 0.0)  # e^ε S_Q
            exp_err = np.where(scaled > 0, 4 * _U * (np.abs(log_scaled) + 2.0) * scaled, 0.0)
        near = np.searchsorted(loss, flat - wide, side="right") if upper else first
        # as _delta_direct: p_∞ in the pad only where an atom is live or straddles ε (else p_∞ + 0, exact)
        pad = (n + 8) * _U * (s_p[first] + scaled + np.where(near < n, p_inf, 0.0)) + exp_err
        if upper:
            straddle = 2 * wide * (s_p[near] - s_p[first]) * (1 + 8 * _U)  # (its rounding, up)
            out = np.maximum(s_p[first] - scaled, 0.0) + p_inf + straddle + pad
        else:
            out = np.maximum(s_p[first] - scaled - pad, 0.0) + p_inf
        out = np.minimum(out.reshape(eps.shape), 1.0)
        return float(out) if out.ndim == 0 else out

    def reverse(self):
        return DiscretePair(self._log_q, self._log_p, self.lattice, self._name + "-reversed",
                            p_inf=self._exact_ends[1], q_ninf=self._exact_ends[0], log_err=self._log_err[::-1],
                            tight=self.tight, witnesses=reverse_witnesses(self.witnesses))

    def with_witnesses(self, witnesses, suffix):
        """This pair, not tight, with other ``witnesses``; named apart by ``suffix`` so
        that it never merges with this one in a composition (equal keys)."""
        return DiscretePair(self._log_p, self._log_q, self.lattice, self._name + suffix, p_inf=self._exact_ends[0],
                            q_ninf=self._exact_ends[1], log_err=self._log_err, witnesses=witnesses)

    def key(self):
        if self._key is None:  # a digest: hashing a million-atom pair once, not per lookup
            digest = hashlib.sha256(self._log_p.tobytes() + b"|" + self._log_q.tobytes()).hexdigest()
            object.__setattr__(self, "_key", (self._name, len(self._log_p), digest))
        return self._key

    def __repr__(self):
        return f"DiscretePair({self._name}, {len(self._log_p)} outcomes)"


def reverse_witnesses(witnesses):
    """Each attained composition of ``witnesses`` with every pair reversed (the same
    neighbours, swapped)."""
    return tuple(tuple((p.reverse(), c) for p, c in alt) for alt in witnesses)


def identical_pair():
    """P = Q: the loss is 0 with probability 1 (a mechanism that ignores the record;
    tight: any neighbours attain it)."""
    return DiscretePair(np.zeros(1), np.zeros(1), name="identical", tight=True)


def randomized_response_pair(p, buckets=2):
    """k-ary randomized response (true bucket with prob. p > 1/k, each other with
    r = (1−p)/(k−1)): P = (p, r, (k−2)r), Q = (r, p, (k−2)r), the k − 2 buckets of
    loss 0 merged; k = 2: P = (p, 1−p), Q = (1−p, p). Losses ±log(p/r) and 0 form
    a lattice. Tight: the outputs on neighbours whose inputs differ."""
    log_r = math.log1p(-p) - math.log(buckets - 1)
    a = math.log(p) - log_r
    logs = [math.log(p), log_r]
    if buckets == 2:
        return DiscretePair(np.array(logs), np.array(logs[::-1]), lattice=a, name=f"rr(p={p!r})", tight=True)
    rest = math.log(buckets - 2) + log_r
    return DiscretePair(np.array(logs + [rest]), np.array(logs[::-1] + [rest]), lattice=a,
                        name=f"rr(p={p!r},k={buckets})", tight=True)


def binomial_pair(n, p, shift=1):
    """Binomial mechanism (Agarwal et al. 2018): P = shift + Bin(n, p), Q = Bin(n, p).
    Tight: the outputs on neighbours where the query moves by exactly ``shift`` (a count)."""
    k = np.arange(check_atoms(f"the binomial pair (n={n}, shift={shift})", n + 1 + shift))
    log_q = stats.binom.logpmf(k, n, p)
    log_p = stats.binom.logpmf(k - shift, n, p)

    def err(j):  # logpmf sums lgamma terms and k log p + (n − k) log(1 − p): a few ulp of each
        j = np.clip(j, 0, n)
        return 8 * _U * (special.gammaln(n + 1.0) + special.gammaln(j + 1.0) + special.gammaln(n - j + 1.0)
                         + j * abs(math.log(p)) + (n - j) * abs(math.log1p(-p)) + 1.0)
    return DiscretePair(log_p, log_q, name=f"binomial(n={n},p={p!r},shift={shift})", log_err=(err(k - shift), err(k)),
                        tight=True)
