"""The basic mechanisms, each with its tight dominating pair(s) and RDP.

Neighbouring relation: add/remove one record by default. For a mechanism
whose output is M(D) with the record and M(D') without, the remove
direction is dominated by (P, Q) = (law with, law without) and the add
direction by (Q, P); for the symmetric mechanisms below both coincide.
Each takes ``relation=`` (``relations.py``): with ``"replace-one"`` the
sensitivity is understood over replace-one neighbours, and each direction
carries a pair dominating both orders of every neighbouring pair — the same
pair for the symmetric mechanisms (Gaussian, GDP, Laplace, randomized
response), the symmetric hull of the two shifts for the binomial.

* ``GaussianMechanism(sigma, sensitivity)``: (N(Δ, σ²), N(0, σ²)) ≅ μ-GDP, μ = Δ/σ.
* ``GDPMechanism(mu)``: (N(μ, 1), N(0, 1)) (Dong, Roth & Su 2022).
* ``LaplaceMechanism(b, sensitivity)``: (Lap(Δ, b), Lap(0, b)), ε₀ = Δ/b.
* ``RandomizedResponse(p, buckets=2)``: ((p, 1−p), (1−p, p)), p ∈ (1/2, 1); k buckets:
  ((p, r, (k−2)r), (r, p, (k−2)r)), r = (1−p)/(k−1), p ∈ (1/k, 1).
* ``BinomialMechanism(n, p, sensitivity, monotone=False)``: shifts of
  Bin(n, p) (Agarwal et al. 2018); no finite RDP (P has mass where Q has
  none, in either order). The noise is asymmetric unless p = ½, so the sign
  of the shift matters. Removing a record moves the query by some
  d ∈ [−Δ, Δ]: the remove direction compares (d + Bin, Bin), the add
  direction (Bin, d + Bin) ≅ (−d + Bin, Bin) (shift both laws). Both
  directions must therefore dominate (Δ + Bin, Bin) *and* its reverse
  (Bin, Δ + Bin) at every ε (ε < 0 included: ZDW 2022, Thm 10 composes
  dominance at every ε); shifts 0 < |d| < Δ are covered by ±Δ because
  Bin(n, p) is log-concave, so the shift family has a monotone likelihood
  ratio and the power of its Neyman–Pearson tests grows with |d|
  (Karlin–Rubin). The pair with the tight curve max(H(P||Q), H(Q||P)) at
  every ε is the symmetric hull (``pld/symmetric_hull.symmetric_hull_pair``,
  whose docstring shows why ε ≥ 0 suffices for a symmetric pair); each
  direction carries it, as under replace-one, where the count moves either
  way too (with p = ½ the pair (Δ + Bin, Bin) is its own reverse up to
  relabelling and is kept under add/remove). Only a query that never decreases when a record
  is added (a count, a sum of non-negative values: d ∈ [0, Δ]) may declare
  ``monotone=True``, which keeps the one-sided pairs (Δ + Bin, Bin) for
  remove and its reverse for add — tighter, and wrong for any other query.
  Where no finite symmetric pair exists (p so close to 0 or 1 that the two
  shifts are all but disjoint), the fully revealing pair is used: δ(ε) = 1.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from .. import validation as v
from ..mechanism import Mechanism
from ..pld.pairs.composition import PairComposition
from ..pld.pairs.discrete_pair import DiscretePair, binomial_pair, randomized_response_pair
from ..pld.pairs.base import DominatingGaussianPair, GaussianPair, LaplacePair
from ..pld.pairs.symmetric_hull import symmetric_hull_pair
from ..rdp.curve import RDPCurve, discrete_pair_rdp, gaussian_rdp, laplace_rdp, randomized_response_rdp
from ..relations import ADD_REMOVE, RelationLike, with_relation


def gaussian_pairs(mu: float, attained: bool = True) -> PairComposition:
    """The Gaussian pair of μ in both directions: attained (a shift of norm exactly μ), or a
    dominating pair only (``DominatingGaussianPair``: a shift of norm at most μ)."""
    pair = (GaussianPair if attained else DominatingGaussianPair)(mu)
    return PairComposition.single(pair, pair)


class GaussianMechanism(Mechanism):
    """Adds N(0, σ²) noise to a query of L2 sensitivity Δ."""

    _spec_type = "GaussianMechanism"

    def __init__(self, sigma: float, sensitivity: float = 1.0, relation: Optional[RelationLike] = None) -> None:
        self_sigma = v.positive("sigma", sigma)
        self_sens = v.positive("sensitivity", sensitivity)
        super().__init__("Gaussian", *with_relation({"sigma": self_sigma, "sensitivity": self_sens}, relation))
        object.__setattr__(self, "sigma", self_sigma)
        object.__setattr__(self, "sensitivity", self_sens)
        object.__setattr__(self, "mu", v.ratio(("sensitivity", "sigma"), self_sens, self_sigma))

    def _pairs(self):
        return gaussian_pairs(self.mu)

    def _rdp(self):
        return RDPCurve(((gaussian_rdp(self.mu), 1),))


class GDPMechanism(GaussianMechanism):
    """A μ-GDP mechanism: its tight pair is (N(μ, 1), N(0, 1))."""

    _spec_type = "GDPMechanism"

    def __init__(self, mu: float, relation: Optional[RelationLike] = None) -> None:
        mu = v.positive("mu", mu)
        Mechanism.__init__(self, "GDP", *with_relation({"mu": mu}, relation))
        object.__setattr__(self, "sigma", 1.0 / mu)
        object.__setattr__(self, "sensitivity", 1.0)
        object.__setattr__(self, "mu", mu)


class LaplaceMechanism(Mechanism):
    """Adds Laplace(0, b) noise to a query of L1 sensitivity Δ."""

    _spec_type = "LaplaceMechanism"

    def __init__(self, b: float, sensitivity: float = 1.0, relation: Optional[RelationLike] = None) -> None:
        b = v.positive("b", b)
        sens = v.positive("sensitivity", sensitivity)
        super().__init__("Laplace", *with_relation({"b": b, "sensitivity": sens}, relation))
        object.__setattr__(self, "b", b)
        object.__setattr__(self, "sensitivity", sens)
        object.__setattr__(self, "eps0", v.ratio(("sensitivity", "b"), sens, b))

    def _pairs(self):
        pair = LaplacePair(self.eps0)
        return PairComposition.single(pair, pair)

    def _rdp(self):
        return RDPCurve(((laplace_rdp(self.eps0), 1),))


class RandomizedResponse(Mechanism):
    """Reports the true bucket (of ``buckets`` = k ≥ 2) with probability p, each
    other bucket with probability (1 − p)/(k − 1); p ∈ (1/k, 1). k = 2: a bit
    reported truthfully with probability p, flipped otherwise.

    Two inputs a ≠ b give the laws P = (p, r, r, …) and Q = (r, p, r, …),
    r = (1 − p)/(k − 1), on (a, b, the k − 2 others); the others have loss 0
    and merge into one atom. The pair is attained (inputs that differ) and is
    its own reverse up to relabelling a ↔ b, so it serves add/remove and
    replace-one alike; ε₀ = log(p/r) (Warner 1965; Kairouz, Oh & Viswanath 2016
    for k-ary RR). dp_accounting's ``RandomizedResponseDpEvent(noise, k)`` is
    p = 1 − noise + noise/k."""

    _spec_type = "RandomizedResponse"

    def __init__(self, p: float, relation: Optional[RelationLike] = None, buckets: int = 2) -> None:
        buckets = v.count("buckets", buckets)
        if buckets < 2:
            raise ValueError(f"buckets must be at least 2, got {buckets!r}")
        p = v.in_interval("p", p, 1.0 / buckets, 1.0)
        params = {"p": p, **({"buckets": buckets} if buckets != 2 else {})}
        super().__init__("RandomizedResponse", *with_relation(params, relation))
        object.__setattr__(self, "p", p)
        object.__setattr__(self, "buckets", buckets)

    def _pairs(self):
        pair = randomized_response_pair(self.p, self.buckets)
        return PairComposition.single(pair, pair)

    def _rdp(self):
        if self.buckets == 2:
            return RDPCurve(((randomized_response_rdp(self.p), 1),))
        pair = randomized_response_pair(self.p, self.buckets)  # its own reverse: one order suffices
        return RDPCurve(((discrete_pair_rdp(pair._log_p, pair._log_q, pair.key()), 1),))


class BinomialMechanism(Mechanism):
    """Adds Bin(n, p) noise to an integer query of sensitivity Δ
    (Agarwal, Suresh, Yu, Kumar & McMahan 2018).

    By default the query may move either way by up to Δ when a record is
    added or removed, and each direction carries a pair dominating both
    shifts +Δ and −Δ at every ε (module docstring). ``monotone=True``
    declares a query that can only grow when a record is added (a count):
    then remove is dominated by (Δ + Bin, Bin) and add by (Bin, Δ + Bin),
    which is tighter for p ≠ ½ and under-reports for any other query. Under
    replace-one the count moves either way whatever the query, so
    ``monotone`` is refused there."""

    _spec_type = "BinomialMechanism"

    def __init__(self, n: int, p: float, sensitivity: int = 1, relation: Optional[RelationLike] = None,
                 monotone: bool = False) -> None:
        n = v.count("n", n)
        p = v.in_interval("p", p, 0.0, 1.0)
        sens = v.count("sensitivity", sensitivity)
        monotone = v.flag("monotone", monotone)
        params = {"n": n, "p": p, "sensitivity": sens, **({"monotone": True} if monotone else {})}
        params, relation = with_relation(params, relation)
        if monotone and relation != ADD_REMOVE:
            raise ValueError(f"monotone=True is an add/remove notion (a replaced record moves the "
                             f"query either way), got relation={str(relation)!r}")
        super().__init__("Binomial", params, relation)
        object.__setattr__(self, "n", n)
        object.__setattr__(self, "p", p)
        object.__setattr__(self, "sensitivity", sens)
        object.__setattr__(self, "monotone", monotone)

    def _pairs(self):
        pair = binomial_pair(self.n, self.p, shift=self.sensitivity)
        if self.monotone or (self.p == 0.5 and self.relation == ADD_REMOVE):
            # p = ½: x ↦ n + Δ − x maps (Δ + Bin, Bin) onto (Bin, Δ + Bin), so the pair
            # already dominates its reverse, at every ε
            return PairComposition.single(pair, pair.reverse())
        # both shifts in every direction (module docstring; under replace-one, relations.py)
        try:
            hull = symmetric_hull_pair(pair, pair.reverse())
        except ValueError:
            # no finite symmetric pair (total variation within 1e-6 of 1, or losses beyond the
            # float range of e^loss): the fully revealing pair, δ(ε) = 1, dominates any pair;
            # it is loose by at most e^ε (1 − TV) ≤ 1e-6·e^ε where the total variation is the cause
            # (not attained; its witnesses are the two shifts, as the hull's)
            hull = DiscretePair(np.array([0.0, -np.inf]), np.array([-np.inf, 0.0]), name="revealing",
                                p_inf=1.0, q_ninf=1.0, witnesses=(((pair, 1),), ((pair.reverse(), 1),)))
        return PairComposition.single(hull, hull)

    def _rdp(self):
        # +∞ at every order, in either order of the laws and for every shift ≠ 0 (each law
        # has an outcome the other lacks), so one curve serves monotone or not
        pair = binomial_pair(self.n, self.p, shift=self.sensitivity)
        return RDPCurve(((discrete_pair_rdp(pair._log_p, pair._log_q, pair.key(), pair._log_err), 1),))
