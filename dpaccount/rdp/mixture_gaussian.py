"""RDP of a mixture of Gaussians: P = Σᵢ pᵢ N(cᵢ, σ²) against Q = N(0, σ²).

Remove direction, D_α(P||Q), at an integer order α (multinomial expansion of
(Σᵢ pᵢ Yᵢ)^α with Yᵢ = e^{(cᵢx − cᵢ²/2)/σ²} and E_Q[e^{sx/σ²}] = e^{s²/2σ²}):

    e^{(α−1)D_α} = Σ_{|k| = α} (α choose k) Πᵢ pᵢ^{kᵢ} · exp(((Σ kᵢcᵢ)² − Σ kᵢcᵢ²) / 2σ²),

exact (Mironov, Talwar & Zhang 2019 do the same for two components). Rényi
divergences do not decrease in α (van Erven & Harremoës 2014, Thm 3), so a
fractional α takes ⌈α⌉'s value: an upper bound. Where the expansion has more
than ``MAX_TERMS`` terms, and for the add direction D_α(Q||P) at every α,
Jensen's inequality on the convex t ↦ t^α (t ↦ t^{1−α}) of the mixture gives

    e^{(α−1)D_α} ≤ Σᵢ pᵢ E_Q[Yᵢ^α] = Σᵢ pᵢ exp(α(α−1)cᵢ²/2σ²)

in both directions (E_Q[Yᵢ^{1−α}] has the same value). Each sum is taken in
log space and rounded up by a relative pad of its term count's roundings.
"""
import math
from functools import lru_cache

import numpy as np

from ..lazy import lazy
from .curve import RDPFunction
from ..numerics import ULP_OF_ONE as _U

special = lazy("scipy.special")

MAX_TERMS = 20_000  # multinomial terms of the exact sum at one order; beyond it, the Jensen bound


def _compositions(total, parts):
    """Every k ∈ ℕ^parts with Σk = total, as rows."""
    if parts == 1:
        return np.array([[total]])
    rows = [np.column_stack((np.full(len(rest), head), rest))
            for head in range(total + 1) for rest in (_compositions(total - head, parts - 1),)]
    return np.vstack(rows)


def _pad(value, terms):
    """``value`` (a log) raised by the relative rounding of a logsumexp of ``terms`` terms
    whose exponents are each a few roundings off: (4·terms + 8)u of |value| + 1."""
    return value + (4 * terms + 8) * _U * (abs(value) + 1.0)


def mixture_gaussian_rdp(sigma, centers, probs, direction="remove"):
    """D_α of the mixture pair (module docstring) as an ``RDPFunction``; ``direction``
    'remove' (P||Q, exact at integer α where affordable) or 'add' (Q||P, Jensen)."""
    s2 = float(sigma) ** 2
    c = np.asarray(centers, dtype=float)
    lp = np.log(np.asarray(probs, dtype=float))

    def jensen(a):
        return _pad(float(special.logsumexp(lp + a * (a - 1) * c * c / (2 * s2))), len(c)) / (a - 1)

    @lru_cache(maxsize=4096)
    def exact(a):
        if math.comb(a + len(c) - 1, len(c) - 1) > MAX_TERMS:
            return jensen(a)
        k = _compositions(a, len(c))
        log_coef = special.gammaln(a + 1) - special.gammaln(k + 1).sum(axis=1)
        shift = k @ c
        terms = log_coef + k @ lp + (shift * shift - k @ (c * c)) / (2 * s2)
        # never above the Jensen bound (both are upper bounds; the exact one is the tighter)
        return min(_pad(float(special.logsumexp(terms)), len(terms)) / (a - 1), jensen(a))

    def fn(alpha):
        alpha = np.asarray(alpha, dtype=float)
        flat = alpha.ravel()
        if direction == "remove":
            out = [exact(int(math.ceil(a))) if a < 1e6 else jensen(a) for a in flat]
        else:
            out = [jensen(float(a)) for a in flat]
        out = np.array(out, dtype=float).reshape(alpha.shape)
        return float(out) if out.ndim == 0 else out

    key = ("mixture-of-gaussians", direction, float(sigma), tuple(c.tolist()), tuple(lp.tolist()))
    return RDPFunction(key, fn)
