"""Poisson sampling under replace-one neighbours: the Gaussian mixture pair.

Each record enters the sample independently with probability q, and the
datasets D, D' differ in one record, x replaced by y. Couple the two samples
through the replaced record's coin: with probability 1 − q neither is used
and the outputs have the same law A; with probability q the sample holds x
(under D) or y (under D'), laws B and C. So the pair of outputs is

    ((1 − q)A + qB, (1 − q)A + qC),

which is neither Poisson pair of ``pld/pairs/poisson_sampling.py``: B and C are
replace-one neighbours (two add/remove steps apart), A and B (A and C)
add/remove ones. Composing the remove and the add pair, or subsampling the
group-of-two pair, are the pitfalls of Lebeda, Regehr, Kamath & Steinke
(2024, "Avoiding pitfalls for privacy accounting of subsampled mechanisms
under composition"): neither is this pair.

For the Gaussian mechanism (noise σ, every record moving the query by a
vector of norm ≤ Δ; μ = Δ/σ), joint convexity over the rest of the sample
leaves A = N(c, σ²I), B = N(c + u, σ²I), C = N(c + v, σ²I) with |u|, |v| ≤ Δ,
and the worst case is u = −v of norm Δ (Lebeda et al. 2024, §5; the pair of
dp_accounting's ``AdjacencyType.REPLACE``): in units of σ, the one pair

    P = (1 − q)N(0, 1) + qN(μ, 1),   Q = (1 − q)N(0, 1) + qN(−μ, 1)

dominates every ordered replace-one pair, and is attained. It is symmetric
(x ↦ −x swaps P and Q), so it is its own reverse and serves both directions.
With ψ(w) = log(1 − q + q e^w) its loss,

    L(x) = ψ(μx − μ²/2) − ψ(−μx − μ²/2),

increases strictly in x, and solving the quadratic in e^{μx} gives its inverse

    x(ℓ) = (ℓ/2 + asinh(K sinh(ℓ/2)))/μ,   K = (1 − q)e^{μ²/2}/q,

so {L ≤ ℓ} = {x ≤ x(ℓ)} and every cell is a mixture of three normal cells
(``log_cells.normal_cells``, with their error bounds). q = 1 is the Gaussian
pair of 2μ (K = 0); q = 0 is the identical pair (the transformer's).
"""
import math

import numpy as np

from .log_cells import normal_cells
from .base import DominatingPair
from ...numerics import ULP_OF_ONE as _U



def _loss_to_x(ell, mu, q):
    """(x(ℓ), a bound on its absolute error) elementwise (module docstring).

    K sinh(ℓ/2) is formed in logs where it would leave the float range: there
    asinh(z) = sign(z)(log|z| + log 2) to within 1/(4z²) < 1e-26 (|log z| > 30).
    Error: sinh, exp, log1p and asinh ≤ 4 ulp each (docs/portability.md), μ²/2
    rounds by u·μ²/2 (relative, in exp), so z errs by ≤ (16 + μ²)u relative and
    asinh(z) by that plus 4u|asinh z| absolute; the sum and the quotient by ulps
    of their terms: taken as 8u(|ℓ| + |A| + 2 + μ²)/μ + 2u|x|, A = asinh(K sinh(ℓ/2))."""
    ell, mu, q = (np.asarray(v, dtype=float) for v in (ell, mu, q))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        half = np.abs(ell) / 2
        log_k = np.log1p(-q) + mu * mu / 2 - np.log(q)                            # −inf at q = 1
        log_sinh = half + np.log(-np.expm1(-2 * half)) - math.log(2.0)             # log sinh(|ℓ|/2)
        log_z = log_k + log_sinh
        far = log_z > 30
        a_abs = np.where(far, log_z + math.log(2.0), np.arcsinh(np.exp(np.minimum(log_z, 30.0))))
        a_abs = np.where(np.isfinite(log_z) | far, a_abs, 0.0)                     # K = 0 or ℓ = 0
        big_a = np.sign(ell) * a_abs
        x = (ell / 2 + big_a) / mu
        err = 8 * _U * (np.abs(ell) + a_abs + 2 + mu * mu) / mu + 2 * _U * np.abs(x)
    return x, err


class PoissonReplaceGaussianPair(DominatingPair):
    """((1−q)N(0,1) + qN(μ,1), (1−q)N(0,1) + qN(−μ,1)): the Poisson-subsampled
    Gaussian under replace-one (module docstring); symmetric, no atoms."""

    p_inf = 0.0
    atomless = True
    # attained: the outputs on D = S ∪ {x}, D' = S ∪ {y} of a sum query to which x adds +Δ and y −Δ
    tight = True

    def __init__(self, mu, q):
        self._mu, self._q = float(mu), float(q)

    mu = property(lambda self: self._mu)
    q = property(lambda self: self._q)

    def masses(self, edges):
        return self.masses_of([self], edges, [len(edges)])

    def _masses(self, edges, errors):
        return self.masses_of([self], edges, [len(edges)], errors)

    @classmethod
    def masses_of(cls, pairs, edges, sizes, errors=False):
        """P-masses (1−q)Φ-cells at x + q·Φ-cells at x − μ, Q-masses with x + μ, x = x(ℓ)
        at each edge; with ``errors``, the three normal cells' bounds (x's error and
        log Φ's, ``normal_cells``) mixed alike, + 4u of each mass (1 − q, two products
        and a sum)."""
        sizes = np.asarray(sizes, dtype=np.int64)
        mu = np.repeat([p._mu for p in pairs], sizes)
        q = np.repeat([p._q for p in pairs], sizes)
        x, x_err = _loss_to_x(edges, mu, q)
        runs = [x, x - mu, x + mu]
        cells = [normal_cells(z, sizes, (x_err + _U * np.abs(z)) if errors else None) for z in runs]
        qc = np.repeat([p._q for p in pairs], sizes + 1)
        if errors:
            (c0, e0), (cp, ep), (cm, em) = cells
        else:
            c0, cp, cm = cells
        a, b = (1.0 - qc) * c0 + qc * cp, (1.0 - qc) * c0 + qc * cm
        if not errors:
            return a, b
        return a, b, (1.0 - qc) * e0 + qc * ep + 4 * _U * a, (1.0 - qc) * e0 + qc * em + 4 * _U * b

    def delta(self, eps, upper=True):
        """P(L > ε) − e^ε Q(L > ε) from the upper cell at ε and its error bounds (e^ε Q
        formed as exp(ε + log Q): no overflow). The cell's edge x(ε) errs by ≤ x_err,
        and the curve in the threshold is stationary at x(ε) with second derivative
        |p′ − e^ε q′| ≤ ¼(1 + e^ε) (|φ′| ≤ φ(1) < ¼): ≤ ⅛(1 + e^ε)x_err² lost, added."""
        eps = np.asarray(eps, dtype=float)
        flat = eps.ravel()
        out = np.empty(len(flat))
        for i, e in enumerate(flat):
            cells = self._masses(np.array([e]), True)
            a1, b1, ea, eb = (float(c[1]) for c in cells)
            _, x_err = _loss_to_x(e, self._mu, self._q)
            with np.errstate(divide="ignore", over="ignore"):
                if upper:
                    qb = b1 - eb
                    sub = math.exp(e + math.log(qb)) * (1 - 8 * _U) if qb > 0 else 0.0
                    val = a1 + ea - sub + 8 * _U * (a1 + sub) + float(np.exp(min(e, 700.0)) + 1) * float(x_err) ** 2
                else:
                    qb = b1 + eb
                    sub = math.exp(min(e + math.log(qb), 709.0)) * (1 + 8 * _U) if qb > 0 else 0.0
                    val = a1 - ea - sub - 8 * _U * (a1 + sub) - float(np.exp(min(e, 700.0)) + 1) * float(x_err) ** 2
            out[i] = min(max(val, 0.0), 1.0)
        out = out.reshape(eps.shape)
        return float(out) if out.ndim == 0 else out

    def reverse(self):
        return self  # x ↦ −x swaps P and Q

    def key(self):
        return ("poisson-replace-gaussian", self._mu, self._q)
