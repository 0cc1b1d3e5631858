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

from .base import DominatingPair, atoms_at, own, per_point, stacked_masses
from ...numerics import ULP_OF_ONE as _U



def _remove_base_edges(edges, q, with_error=False):
    """Base-loss edges of the remove pair's cells: log1p(expm1(ε)/q), −inf below
    (q a number, or an array of q per edge).

    The same value is ε − log q + log1p(−y), y = (1−q)e^{−ε}. That form is
    used where expm1(ε)/q would overflow (it stays finite), and where
    2(1 − q) < 1 − e^ε: the first form errs by about 2u·|x|/(1 + x) with
    x = expm1(ε)/q, large where 1 + x is small (q = 1 − 1e-9 at ε = −20 lost
    1e-7 of log1p(x)), the second by about 2u·y/(1 − y), and the ratio of the
    two is (1 − e^ε)/(1 − q) > 2 there.

    ``with_error=True`` also returns a bound on each edge's absolute error: each
    libm call errs by ≤ 4 ulp (docs/portability.md), x by ≤ 5 ulp relative, which
    log1p turns into 5u·|x|/(1 + x); the second form sums three terms (≤ 4 ulp each)
    and turns y's ≤ 5 ulp into 5u·y/(1 − y): both under
    8u(|ε| + |log q| + |edge| + 1 + min(|x|/(1 + x), y/(1 − y)))."""
    e = np.asarray(edges, dtype=float)
    if e.ndim != 1:  # worked on as one row (in place), returned in its shape
        got = _remove_base_edges(e.reshape(-1), q if np.ndim(q) == 0 else np.reshape(q, -1), with_error)
        return tuple(v.reshape(e.shape) for v in got) if with_error else got.reshape(e.shape)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        em1 = np.expm1(e)
        x = em1 / q
        # where x = +∞ (then ε > 0: e^ε − 1 > 0) and where 2(1 − q) < 1 − e^ε (for a scalar q as
        # e^ε − 1 < −2(1 − q): the same comparison)
        second = np.equal(x, np.inf)
        second |= (2.0 * (1.0 - q) < -em1) if np.ndim(q) else (em1 < -(2.0 * (1.0 - q)))
        out = np.log1p(np.maximum(x, -1.0, out=em1), out=em1)
        out[np.logical_not(x > -1.0)] = -np.inf
        if second.any():  # the second form, where it is used only (rare: few ε qualify)
            es = e[second]
            qs = q[second] if np.ndim(q) else q
            y = (1.0 - qs) * np.exp(-es)
            log_q = np.log(qs) if np.ndim(q) else math.log(q)
            out[second] = np.where((np.isinf(x[second]) & (es > 0)) | (y < 1.0),
                                   es - log_q + np.log1p(-np.minimum(y, 1.0)), out[second])
        if not with_error:
            return out
        y = (1.0 - q) * np.exp(-e)
        r1 = np.where(np.isinf(x), 1.0, np.abs(x) / (1.0 + x))   # |x|/(1 + x) → 1 as x → ∞
        amp = np.minimum(np.where(x > -1.0, r1, np.inf), np.where(y < 1.0, y / (1.0 - y), np.inf))
        err = 8 * _U * (np.abs(e) + np.abs(np.log(q)) + np.abs(out) + 1.0 + amp)
    return out, np.where(np.isfinite(out), err, 0.0)


def _log_mix(q, loss):
    """log(1 − q + q e^ℓ) for 0 < q ≤ 1 and ℓ ≥ 0: log1p(q·expm1(ℓ)), or beyond e^700
    (where expm1 overflows) ℓ + log q + (1 − q)e^{−ℓ}/q, which log1p(x) ≤ x puts above
    ℓ + log q + log1p((1 − q)e^{−ℓ}/q), the exact value."""
    if 700 < loss < math.inf:
        return loss + math.log(q) + (1 - q) * math.exp(-loss) / q
    return math.log1p(q * math.expm1(loss))


def _add_base_edges(edges, q, with_error=False):
    """Base-loss edges of the add pair's cells: −log1p(expm1(−ε)/q), +inf above
    (``with_error``: and their error bounds, ``_remove_base_edges``')."""
    got = _remove_base_edges(-np.asarray(edges, dtype=float), q, with_error)
    return (-got[0], got[1]) if with_error else -got


class _PoissonPair(DominatingPair):
    """A base pair (P, Q) and the sampling probability q."""

    def __init__(self, base, q):
        self._base, self._q = base, float(q)

    base = property(lambda self: self._base, doc="The base pair (P, Q).")

    @property
    def anchor(self):
        """The base's anchor g (its atoms at ±g, Laplace) mapped: log(1 − q + q e^g), the remove
        pair's top atom (P-mass (1 − q)e^{−g}/2 + q/2, its heaviest: the count of steps on it
        sets the composition's tail) and, negated, the add pair's bottom one (P-mass e^{−g}/2,
        its lightest; the add pair's heavy atom, P-mass ½ at −log(1 − q + q e^{−g}), stays off
        the grid). A step dividing it keeps that atom on the grid (``accountant.snap_to_lattice``); between points it is rounded by a fraction
        of the step that does not average out, and ε(δ) read near a composed atom (few steps)
        moves by first order in the step (b = 0.1, q = 1e-3, 10 steps, ε(1e-7): 1.2e-3 above
        the exact value at the default accuracy). None where the base has no anchor or q = 1."""
        g = self._base.anchor
        if g is None or not 0.0 < self._q < 1.0:
            return None
        return _log_mix(self._q, g)

    @property
    def edges(self):
        """The losses where a small q piles the mass up at an edge of the support, the
        heaviest first: the base's extreme atoms mapped (a finite base: both edges),
        else log(1 − q) (remove, the bottom) or −log(1 − q) (add, the top), where the
        base's likelihood ratio near 0 (or ∞) lands. An optimistic grid with these
        off its points is first order in its step (``discretise_optimistic.py``).
        () where q is not small (|log(1 − q)| ≥ 1) or the base has atoms but is not finite."""
        if not 0.0 < self._q < 1.0 - math.exp(-1.0):
            return ()
        finite = getattr(self._base, "atoms", None)
        if finite is None:
            return (self._end_cell()[0],) if self._base.atomless else ()
        loss, p, _ = finite
        ends = [self._end_cell()[0]] if self._end_mass() > 0 else []
        mapped = self._map(np.array([loss[0], loss[-1]])) if len(loss) else np.zeros(0)
        points = sorted(set(ends + [float(v) for v in mapped if np.isfinite(v)]))
        if len(points) < 2:
            return tuple(points)
        heavy = self._map_mass(finite, points)
        return tuple(sorted((points[0], points[-1]), key=lambda v: -heavy[v]))

    def _map_mass(self, finite, points):
        """{edge: its P-mass} for the two extreme ``points`` (``atom_masses``)."""
        a, _ = self.atom_masses(np.array([points[0], points[-1]]))
        return {points[0]: float(a[0]), points[-1]: float(a[1])}
    q = property(lambda self: self._q, doc="The sampling probability.")

    @property
    def tight(self):
        """Attained where the base is: on a dataset whose other records leave the base's
        laws unchanged (they add 0 to the query) the subsampled outputs are exactly this
        mixture (ZDW 2022, Thm 11 and the remark on its tightness)."""
        return self._base.tight

    @property
    def witnesses(self):
        """The base's single-pair witnesses, subsampled alike (the adversary's choice of
        the base's pair survives the sampling); a witness that is a product of pairs has
        no subsampled pair and is left out."""
        return tuple(((type(self)(alt[0][0], self._q), 1),) for alt in self._base.witnesses
                     if len(alt) == 1 and alt[0][1] == 1)

    @property
    def atomless(self):
        """No atom where the base has none, unless its mass at an infinite loss lands finite."""
        return self._base.atomless and (self._end_mass() == 0 or self._q == 1)

    def masses(self, edges):
        return self.masses_of([self], edges, [len(edges)])

    @classmethod
    def masses_of(cls, pairs, edges, sizes, errors=False):
        """The base pairs' masses on the mapped edges (one stacked call), mixed.
        The mixture is linear with non-negative weights, so the base cells' error
        bounds mix alike; its own rounding (1 − q, two products and a sum, the
        end mass added) is ≤ 4u of the result. The base's end mass (P(L = +∞) or
        Q(L = −∞), which lands in a finite cell) errs by the base's ``end_errors``.
        (The mapped edges' rounding moves P- and Q-mass across an edge together:
        second order in δ across a continuous part; an atom of the base within
        the edge's error of it may land on the wrong side, first order: open.)"""
        edges = np.asarray(edges, dtype=float)
        sizes = np.asarray(sizes, dtype=np.int64)
        q = [p.q for p in pairs]
        base_edges = cls._base_edges(edges, per_point(q, sizes))
        base = own(stacked_masses([p.base for p in pairs], base_edges, sizes, errors))
        q_cells = per_point(q, sizes + 1)
        a, b = cls._mix(base[0], base[1], q_cells)
        run = sizes.cumsum() - sizes
        end_err = {}
        for i, p in enumerate(pairs):  # base mass at an infinite loss lands at a finite one
            m = p._end_mass()
            if m > 0 and p.q < 1:
                at, mix = p._end_cell()
                # run i's cells from run[i] + i on
                cell = run[i] + i + np.searchsorted(edges[run[i]:run[i] + sizes[i]], at)
                a[cell] += mix[0] * m
                b[cell] += mix[1] * m
                end_err[cell] = end_err.get(cell, 0.0) + p._end_mass_error()
        if not errors:
            return a, b
        out = cls._mix(base[2], base[3], q_cells)
        for err, mass in zip(out, (a, b)):
            err += np.multiply(mass, 4 * _U)
            for cell, extra in end_err.items():
                err[cell] += extra
        return (a, b) + out


class PoissonRemovePair(_PoissonPair):
    """((1−q)Q + qP, Q) for a base pair (P, Q)."""

    @property
    def p_inf(self):
        return self._q * self._base.p_inf

    @property
    def q_ninf(self):
        return self._base.q_ninf if self._q == 1.0 else 0.0

    def pure_epsilon(self):
        """log(1 + q(e^ε − 1)) of the base's ε (L' increases with L), rounded up
        (log1p, expm1 and the product: ≤ 16u of the result; beyond e^700, ε + log q
        + log1p((1 − q)e^{−ε}/q) ≤ ε + log q + (1 − q)e^{−ε}/q, its terms ≥ 0 then)."""
        return _log_mix(self._q, self._base.pure_epsilon()) * (1 + 16 * _U)

    _base_edges = staticmethod(_remove_base_edges)

    def _map(self, base_loss):
        """The remove pair's loss log(1 − q + q e^ℓ) of base losses ℓ."""
        return np.log1p(self._q * np.expm1(base_loss))

    @staticmethod
    def _mix(a, b, q):
        """((1 − q)·b + q·a, b), the first in a's array (``a`` and ``b`` owned: ``_own``)."""
        a *= q
        a += np.multiply(b, 1.0 - q)
        return a, b

    def _end_mass(self):
        """The base's Q-mass at L = −∞ (P = 0): it lands at L' = log(1−q) (``_end_cell``)."""
        return self._base.q_ninf

    def _end_mass_error(self):
        return self._base.end_errors()[1]

    def end_errors(self):
        """q·(the base's p_inf error) + the product's rounding; the base's q_ninf error at q = 1."""
        e_p, e_q = self._base.end_errors()
        return self._q * e_p + _U * self.p_inf, (e_q if self._q == 1.0 else 0.0)

    def _end_cell(self):
        """(log(1−q), the (P', Q') shares of the base mass at −∞ there) for q < 1."""
        return math.log1p(-self._q), (1.0 - self._q, 1.0)

    def atom_masses(self, points):
        a, b = self._base.atom_masses(_remove_base_edges(points, self._q))
        a = (1.0 - self._q) * b + self._q * a
        if self._base.q_ninf > 0 and self._q < 1:
            ea, eb = atoms_at(points, (math.log1p(-self._q),), ((1.0 - self._q) * self._base.q_ninf,),
                         (self._base.q_ninf,))
            a, b = a + ea, b + eb
        return a, b

    def delta(self, eps, upper=True):
        eps = np.asarray(eps, dtype=float)
        q = self._q
        inner, err = _remove_base_edges(eps, q, with_error=True)
        # the base curve is non-increasing: its argument's error is paid by moving it the safe way
        arg = inner + (-err if upper else err)
        with np.errstate(invalid="ignore", over="ignore"):  # -expm1(ε) overflows only where unused
            out = np.where(np.isfinite(inner), q * self._base.delta(np.where(np.isfinite(inner), arg, 0.0), upper),
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

    def pure_epsilon(self):
        """−log(1 − q(1 − e^{−ε})) of the base's ε (L' increases with L), rounded up:
        at most −log(1 − q), finite for q < 1 whatever the base (q = 1: the base's)."""
        x = self._q * math.expm1(-self._base.pure_epsilon())
        return math.inf if x <= -1.0 else -math.log1p(x) * (1 + 16 * _U)

    _base_edges = staticmethod(_add_base_edges)

    def _map(self, base_loss):
        """The add pair's loss −log(1 − q + q e^{−ℓ}) of base losses ℓ."""
        return -np.log1p(self._q * np.expm1(-base_loss))

    @staticmethod
    def _mix(a, b, q):
        """(a, (1 − q)·a + q·b), the second in b's array (``a`` and ``b`` owned: ``_own``)."""
        b *= q
        b += np.multiply(a, 1.0 - q)
        return a, b

    def _end_mass(self):
        """The base's P-mass at L = +∞ (Q = 0): it lands at L' = −log(1−q) (``_end_cell``)."""
        return self._base.p_inf

    def _end_mass_error(self):
        return self._base.end_errors()[0]

    def end_errors(self):
        """The base's p_inf error at q = 1; q·(the base's q_ninf error) + the product's rounding."""
        e_p, e_q = self._base.end_errors()
        return (e_p if self._q == 1.0 else 0.0), self._q * e_q + _U * self.q_ninf

    def _end_cell(self):
        """(−log(1−q), the (P', Q') shares of the base mass at +∞ there) for q < 1."""
        return -math.log1p(-self._q), (1.0, 1.0 - self._q)

    def atom_masses(self, points):
        a, b = self._base.atom_masses(_add_base_edges(points, self._q))
        b = (1.0 - self._q) * a + self._q * b
        if self._base.p_inf > 0 and self._q < 1:
            ea, eb = atoms_at(points, (-math.log1p(-self._q),), (self._base.p_inf,),
                         ((1.0 - self._q) * self._base.p_inf,))
            a, b = a + ea, b + eb
        return a, b

    def delta(self, eps, upper=True):
        eps = np.asarray(eps, dtype=float)
        q = self._q
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            s = eps + (math.log1p(-q) if q < 1 else 0.0)
            scale = -np.expm1(s) if q < 1 else np.ones_like(eps)  # 1 − e^ε(1−q)
            inner = eps + math.log(q) - np.log(scale)
            live = scale > 0
            # libm errs by ≤ 4 ulp per call (docs/portability.md): s absolutely by
            # 5u(|log(1−q)| + |s|), which expm1 turns into that times (1 − scale)/scale
            # relative on scale (+ its own 4u); inner absolutely by that, 4u|log q|,
            # 4u|log scale| and the sums. Both taken with 8u; the base curve is
            # non-increasing, so its argument moves the safe way by its error
            amp = (abs(math.log1p(-q)) + np.abs(s)) * (1.0 - scale) / scale if q < 1 else np.zeros_like(eps)
            rel = 8 * _U * (1.0 + np.where(live, amp, 0.0))
            err = rel + 8 * _U * (abs(math.log(q)) + np.abs(np.log(scale)) + np.abs(inner) + np.abs(eps))
            arg = np.where(live, inner + (-err if upper else err), 0.0)
            out = np.where(live, scale * self._base.delta(arg, upper), 0.0)
            out = out * (1 + 8 * _U + rel if upper else 1 - 8 * _U - rel)
        return float(out) if out.ndim == 0 else out

    def reverse(self):
        return PoissonRemovePair(self._base.reverse(), self._q)

    def key(self):
        return ("poisson-add", self._q, self._base.key())
