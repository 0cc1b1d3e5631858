"""The Rényi-DP representation: ε(α) = D_α(P||Q), composed by addition.

Closed forms (Mironov 2017, Table II; α > 1, ε₀ = Δ/b for Laplace):

    Gaussian (μ = Δ/σ):   ε(α) = α μ² / 2
    Laplace:              ε(α) = 1/(α−1) · log( α/(2α−1) e^{(α−1)ε₀} + (α−1)/(2α−1) e^{−αε₀} )
    randomized response:  ε(α) = 1/(α−1) · log( p^α (1−p)^{1−α} + (1−p)^α p^{1−α} )
    any finite pair:      ε(α) = 1/(α−1) · log Σ_i p_i^α q_i^{1−α}

An ``RDPCurve`` is an immutable sum Σ_i k_i ε_i(α) of such terms; composing
curves concatenates their terms (Mironov 2017, Prop. 1).
"""
import math

import numpy as np

from ..lazy import lazy
from ..numerics import ULP_OF_ONE as _U

special = lazy("scipy.special")


class RDPCurve:
    """ε(α) = Σ k_i f_i(α) for RDP functions f_i (vectorised in α, α > 1)."""

    __slots__ = ("_terms",)

    def __init__(self, terms):
        merged = {}
        for fn, k in terms:
            merged[fn] = merged.get(fn, 0) + k
        object.__setattr__(self, "_terms", tuple(merged.items()))

    def __setattr__(self, name, value):
        raise AttributeError("RDPCurve is immutable")

    @property
    def terms(self):
        return self._terms

    def __call__(self, alpha):
        alpha = np.asarray(alpha, dtype=float)
        out = np.zeros(alpha.shape)
        for fn, k in self._terms:
            out = out + k * np.asarray(fn(alpha), dtype=float)
        return float(out) if out.ndim == 0 else out

    def compose(self, other, times=1):
        """This curve followed by ``other`` composed ``times`` times."""
        return RDPCurve(self._terms + tuple((fn, k * times) for fn, k in other.terms))

    def scale(self, times):
        return RDPCurve(tuple((fn, k * times) for fn, k in self._terms))


class RDPFunction:
    """A named, hashable RDP function α ↦ ε(α) (so equal terms merge)."""

    __slots__ = ("_key", "_fn")

    def __init__(self, key, fn):
        object.__setattr__(self, "_key", key)
        object.__setattr__(self, "_fn", fn)

    def __setattr__(self, name, value):
        raise AttributeError("RDPFunction is immutable")

    def __call__(self, alpha):
        with np.errstate(over="ignore"):  # a closed form beyond the float range is +∞: still an upper bound
            return self._fn(alpha)

    def __eq__(self, other):
        return isinstance(other, RDPFunction) and self._key == other._key

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        return f"RDPFunction{self._key}"


def gaussian_rdp(mu):
    """μ-GDP / Gaussian with μ = Δ/σ: ε(α) = α μ²/2."""
    mu = float(mu)
    return RDPFunction(("gaussian", mu), lambda a: np.asarray(a, dtype=float) * mu * mu / 2.0)


def laplace_rdp(eps0):
    """Laplace mechanism with ε₀ = Δ/b (Mironov 2017, Prop. 6), in log space."""
    e0 = float(eps0)

    def fn(alpha):
        a = np.asarray(alpha, dtype=float)
        t1 = np.log(a) - np.log(2 * a - 1) + (a - 1) * e0
        t2 = np.log(a - 1) - np.log(2 * a - 1) - a * e0
        return np.logaddexp(t1, t2) / (a - 1)
    return RDPFunction(("laplace", e0), fn)


def discrete_pair_rdp(log_p, log_q, key, log_err=None):
    """D_α(P||Q) = log Σ p^α q^{1−α} / (α−1) of finite distributions (+inf if
    P has mass where Q has none), rounded up.

    Near α = 1, or for near-identical laws, the log-sum is close to 0 and the
    division by α − 1 magnifies its absolute rounding: the log-sum is padded by
    a bound on its error before dividing — the logs' own errors (``log_err``,
    4 ulp of each by default, as ``DiscretePair``) weighted by |α| and |1 − α|,
    the exponents' rounding (a product and a sum, 4u of their terms), and
    logsumexp's (exp, an n-term sum and log: (n + 8)u of 1 + the magnitudes) —
    towards the larger D_α on either side of α = 1. That pad is ~u·|log p|
    absolute; the difference form (``difference_form`` below: Σ q(e^{αL} − 1 −
    α(e^L − 1)), each term O((α − 1)L²)q, then log1p) errs by ~u·|L| instead, far
    less for near-identical laws. Both are certified upper bounds: the smaller
    is returned."""
    log_p = np.asarray(log_p, dtype=float)
    log_q = np.asarray(log_q, dtype=float)
    live = np.isfinite(log_p)
    if np.any(live & ~np.isfinite(log_q)):
        return RDPFunction(("infinite", key), lambda a: np.full(np.shape(a), np.inf))
    lp, lq = log_p[live], log_q[live]
    if log_err is None:
        ep, eq = 4 * _U * np.abs(lp), 4 * _U * np.abs(lq)
        eq0 = 4 * _U * np.abs(np.where(np.isfinite(log_q[~live]), log_q[~live], 0.0))
    else:
        errs = [np.broadcast_to(np.asarray(e, dtype=float), log_p.shape) for e in log_err]
        ep, eq, eq0 = errs[0][live], errs[1][live], errs[1][~live]
    with np.errstate(under="ignore"):
        q0 = np.exp(log_q[~live])  # Q's mass where P has none
        p_hat, q_hat = np.exp(lp), np.exp(lq)
    # the laws e^{log p}, e^{log q}: their defect of normalisation (the difference form assumes
    # Σp = Σq = 1), up: exp's rounding (4u of each mass: numpy's, docs/portability.md) and fsum's (u)
    n = len(log_p)
    defect_p = abs(math.fsum(p_hat) - 1.0) + 5 * _U
    defect_q = abs(math.fsum(q_hat) + math.fsum(q0) - 1.0) + 5 * _U
    loss = lp - lq

    def log_sum_form(a):
        terms = a * lp + (1 - a) * lq
        total = special.logsumexp(terms, axis=-1)
        err = np.max(np.abs(a) * ep + np.abs(1 - a) * eq + 4 * _U * (np.abs(a * lp) + np.abs((1 - a) * lq)),
                     axis=-1, initial=0.0) \
            + (len(lp) + 8) * _U * (1.0 + np.abs(total) + np.max(np.abs(terms), axis=-1, initial=0.0))
        return total, err

    def difference_form(a):
        """Σ p^α q^{1−α} − 1 = Σ q (e^{αL} − 1 − α(e^L − 1)) + (α − 1) Q(P = 0) for laws of sum 1:
        each term is O((α − 1)L²) q, no cancellation between terms. Its error, up: the rounding
        (expm1, products, the n-term sums: (n + 8)u of the terms' sizes); the logs' (∂/∂log p =
        αp(e^{(α−1)L} − 1), ∂/∂log q = (α − 1)q(1 − e^{αL}), doubled for the perturbed point,
        valid while (|α| + |α − 1| + 1)·(e_p + e_q) ≤ 1/2, else +∞); the laws' normalisation."""
        gap = a - 1
        with np.errstate(over="ignore", invalid="ignore"):
            big, small = np.expm1(a * loss), np.expm1(loss)
            terms = q_hat * (big - a * small)
            s = terms.sum(-1) + gap[..., 0] * q0.sum()
            tau = ep + eq + 2 * _U * np.abs(loss)
            slope = np.abs(a) * ep * p_hat * np.abs(np.expm1(gap * loss)) + np.abs(gap) * eq * q_hat * np.abs(big)
            err = (n + 8) * _U * (q_hat * (np.abs(big) + np.abs(a) * np.abs(small))).sum(-1) + 2 * slope.sum(-1) \
                + np.abs(gap[..., 0]) * (q0 * (2 * eq0 + (n + 4) * _U)).sum() \
                + np.abs(a[..., 0]) * defect_p + np.abs(gap[..., 0]) * defect_q
            ok = np.max((np.abs(a) + np.abs(gap) + 1) * tau, axis=-1, initial=0.0) <= 0.5
        return s, np.where(ok & np.isfinite(err), err, np.inf)

    def fn(alpha):
        a = np.asarray(alpha, dtype=float)[..., None]
        gap = a[..., 0] - 1
        total, err = log_sum_form(a)
        s, s_err = difference_form(a)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            out = (total + np.sign(gap) * err) / gap
            # log1p errs by ≤ u of itself, the division by ≤ u: 4u of the result, up
            alt = np.log1p(np.maximum(s + np.sign(gap) * s_err, -1.0)) / gap
        out = np.fmin(out + 2 * _U * np.abs(out), alt + 4 * _U * np.abs(alt))
        return out
    return RDPFunction(("discrete", key), fn)


def randomized_response_rdp(p):
    """Binary randomized response, true answer with probability p."""
    logs = (math.log(p), math.log1p(-p))
    return discrete_pair_rdp(logs, logs[::-1], ("rr", float(p)))
