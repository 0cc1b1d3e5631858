"""Dominating pairs of Poisson-subsampled mechanisms, per direction.

Zhu, Dong & Wang (2022), Theorem 11 (1): if (P, Q) dominates M, then with
sampling probability q

    remove:  P' = (1−q)Q + qP,  Q' = Q          (``PoissonRemovePair``)
    add:     P' = P,            Q' = (1−q)P + qQ (``PoissonAddPair``)

dominate M∘S_Poisson (the base pair of the add direction is the base
mechanism's add pair). Both new losses are increasing functions of the base
loss L, so their cells are cells of L and their masses are mixtures:

    remove: L' = log(1 − q + q e^L),     L' ≤ ε ⇔ L ≤ log1p(expm1(ε)/q)
    add:    L' = −log(1 − q + q e^{−L}),  L' ≤ ε ⇔ L ≤ −log1p(expm1(−ε)/q)

and their hockey-stick curves follow from the base curve (advanced joint
convexity, Balle, Barthe & Gaboardi 2018):

    remove: H_α(P'||Q') = q·H_{1+(α−1)/q}(P||Q)                 (α > 1−q),
            = 1 − α                                                (α ≤ 1−q);
    add:    H_α(P'||Q') = (1 − α(1−q))·H_{αq/(1−α(1−q))}(P||Q)  (α < 1/(1−q)),
            = 0                                                    otherwise.
"""
import math

import numpy as np

from .pairs import DominatingPair, _at

_U = np.finfo(float).eps


def _remove_base_edges(edges, q):
    """Base-loss edges of the remove pair's cells: log1p(expm1(ε)/q), −inf below.

    The same value is ε − log q + log1p(−y), y = (1−q)e^{−ε}. That form is
    used where expm1(ε)/q would overflow (it stays finite), and where
    2(1 − q) < 1 − e^ε: the first form errs by about 2u·|x|/(1 + x) with
    x = expm1(ε)/q, large where 1 + x is small (q = 1 − 1e-9 at ε = −20 lost
    1e-7 of log1p(x)), the second by about 2u·y/(1 − y), and the ratio of the
    two is (1 − e^ε)/(1 − q) > 2 there."""
    e = np.asarray(edges, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        em1 = np.expm1(e)
        x = em1 / q
        out = np.where(x > -1.0, np.log1p(np.maximum(x, -1.0)), -np.inf)
        second = (np.isinf(x) & (e > 0)) | (2.0 * (1.0 - q) < -em1)
        if second.any():  # the second form, where it is used only (rare: few ε qualify)
            es = e[second]
            y = (1.0 - q) * np.exp(-es)
            out[second] = np.where((np.isinf(x[second]) & (es > 0)) | (y < 1.0),
                                   es - math.log(q) + np.log1p(-np.minimum(y, 1.0)), out[second])
    return out


def _add_base_edges(edges, q):
    """Base-loss edges of the add pair's cells: −log1p(expm1(−ε)/q), +inf above."""
    return -_remove_base_edges(-np.asarray(edges, dtype=float), q)


class _PoissonPair(DominatingPair):
    """A base pair (P, Q) and the sampling probability q."""

    def __init__(self, base, q):
        self._base, self._q = base, float(q)

    base = property(lambda self: self._base, doc="The base pair (P, Q).")
    q = property(lambda self: self._q, doc="The sampling probability.")


class PoissonRemovePair(_PoissonPair):
    """((1−q)Q + qP, Q) for a base pair (P, Q)."""

    @property
    def p_inf(self):
        return self._q * self._base.p_inf

    @property
    def q_ninf(self):
        return self._base.q_ninf if self._q == 1.0 else 0.0

    def masses(self, edges):
        a, b = self._base.masses(_remove_base_edges(edges, self._q))
        a = (1.0 - self._q) * b + self._q * a
        extra = self._base.q_ninf  # base L = −∞ (P = 0) lands at L' = log(1−q)
        if extra > 0 and self._q < 1:
            cell = np.searchsorted(np.asarray(edges, dtype=float), math.log1p(-self._q))
            a[cell] += (1.0 - self._q) * extra
            b[cell] += extra
        return a, b

    def atom_masses(self, points):
        a, b = self._base.atom_masses(_remove_base_edges(points, self._q))
        a = (1.0 - self._q) * b + self._q * a
        if self._base.q_ninf > 0 and self._q < 1:
            ea, eb = _at(points, (math.log1p(-self._q),), ((1.0 - self._q) * self._base.q_ninf,),
                         (self._base.q_ninf,))
            a, b = a + ea, b + eb
        return a, b

    def delta(self, eps, upper=True):
        eps = np.asarray(eps, dtype=float)
        q = self._q
        inner = _remove_base_edges(eps, q)
        with np.errstate(invalid="ignore", over="ignore"):  # -expm1(ε) overflows only where unused
            out = np.where(np.isfinite(inner), q * self._base.delta(np.where(np.isfinite(inner), inner, 0.0), upper),
                           -np.expm1(eps))
            out = out * (1 + 8 * _U if upper else 1 - 8 * _U)  # the identity's roundings
        return float(out) if out.ndim == 0 else out

    def reverse(self):
        return PoissonAddPair(self._base.reverse(), self._q)

    def key(self):
        return ("poisson-remove", self._q, self._base.key())


class PoissonAddPair(_PoissonPair):
    """(P, (1−q)P + qQ) for a base pair (P, Q)."""

    @property
    def p_inf(self):
        return self._base.p_inf if self._q == 1.0 else 0.0

    @property
    def q_ninf(self):
        return self._q * self._base.q_ninf

    def masses(self, edges):
        a, b = self._base.masses(_add_base_edges(edges, self._q))
        b = (1.0 - self._q) * a + self._q * b
        extra = self._base.p_inf  # base L = +∞ (Q = 0) lands at L' = −log(1−q)
        if extra > 0 and self._q < 1:
            cell = np.searchsorted(np.asarray(edges, dtype=float), -math.log1p(-self._q))
            a[cell] += extra
            b[cell] += (1.0 - self._q) * extra
        return a, b

    def atom_masses(self, points):
        a, b = self._base.atom_masses(_add_base_edges(points, self._q))
        b = (1.0 - self._q) * a + self._q * b
        if self._base.p_inf > 0 and self._q < 1:
            ea, eb = _at(points, (-math.log1p(-self._q),), (self._base.p_inf,),
                         ((1.0 - self._q) * self._base.p_inf,))
            a, b = a + ea, b + eb
        return a, b

    def delta(self, eps, upper=True):
        eps = np.asarray(eps, dtype=float)
        q = self._q
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            scale = -np.expm1(eps + math.log1p(-q)) if q < 1 else np.ones_like(eps)  # 1 − e^ε(1−q)
            inner = eps + math.log(q) - np.log(scale)
            live = scale > 0
            out = np.where(live, scale * self._base.delta(np.where(live, inner, 0.0), upper), 0.0)
            out = out * (1 + 8 * _U if upper else 1 - 8 * _U)
        return float(out) if out.ndim == 0 else out

    def reverse(self):
        return PoissonRemovePair(self._base.reverse(), self._q)

    def key(self):
        return ("poisson-add", self._q, self._base.key())
