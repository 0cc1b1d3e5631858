"""Mechanisms of private training and tuning that are not a single noise draw.

* ``MixtureOfGaussiansMechanism(sigma, sensitivities, probs)``: N(0, σ²)
  without the record, Σᵢ pᵢ N(cᵢ, σ²) with it (Choquette-Choo et al. 2023,
  amplified banded matrix factorization; dp_accounting's
  ``MixtureOfGaussiansDpEvent``). Pairs: remove (P, Q), add (Q, P), through
  the monotone loss (``pld/pairs/mixture_gaussian.py``); where the shifts are {0, c}
  it *is* a Poisson-subsampled Gaussian of rate p(c) and μ = c/σ (ZDW 2022,
  Thm 11 — the add pair (N(μ), (1−q)N(μ) + qN(0)) is the mixture's reverse
  reflected about μ/2) and takes those pairs, which have closed forms.
  RDP: ``rdp/mixture_gaussian.py`` (exact at integer orders, remove
  direction; Jensen's bound for add), the larger of the two.
* ``ZCDPMechanism(rho, xi=0)``: a mechanism known only to be (ξ, ρ)-zCDP
  (Bun & Steinke 2016, Def. 1.1): D_α ≤ ξ + ρα for every α > 1 — an RDP curve
  and nothing else (no dominating pair follows from it), so compositions that
  hold one are answered through RDP (``method="rdp"``) and say so with a
  ``RepresentationWarning`` from the default query.
* ``TreeAggregation(noise_multiplier, steps, epochs=1)``: DP-FTRL's online
  tree aggregation (Kairouz, McMahan, Song, Thakkar, Thakurta & Xu 2021,
  §4 and App. D; dp_accounting's ``SingleEpochTreeAggregationDpEvent``), each
  record used once per epoch, the tree restarted every epoch. A record's
  step lies in ⌈log₂(T + 1)⌉ completed dyadic nodes of a T-step tree (a node
  per set bit of the steps' binary range: one per level), each released with
  N(0, z²) noise at L2 sensitivity 1, so one epoch *is* a Gaussian mechanism
  of sensitivity √⌈log₂(T + 1)⌉ (the worst record — the first — attains it),
  and E restarted epochs the Gaussian of sensitivity √(E⌈log₂(T + 1)⌉).
  The pair and the RDP are that Gaussian's: exact, where dp_accounting's RDP
  bound converts with a loss (2.814 against 2.683 at z = 5, T = 1000).
* ``SingleTreeAggregation(noise_multiplier, steps, participations,
  min_separation=1)``: one tree, never restarted, under (k, b)-participation;
  the Gaussian of the exact worst-case node-sum sensitivity
  (``tree_sensitivity.py``: a dynamic programme over the tree, checked against
  brute force).
"""
from __future__ import annotations

import math
from typing import Dict, Optional, Sequence

import numpy as np

from .. import validation as v
from ..mechanism import Mechanism
from ..pld.pairs.composition import PairComposition
from ..pld.pairs.discrete_pair import identical_pair
from ..pld.pairs.mixture_gaussian import MixtureOfGaussiansPair
from ..pld.pairs.base import GaussianPair
from ..pld.pairs.poisson_sampling import PoissonAddPair, PoissonRemovePair
from ..rdp.curve import RDPCurve, RDPFunction, gaussian_rdp
from ..rdp.mixture_gaussian import mixture_gaussian_rdp
from ..relations import RelationLike, with_relation
from .standard import GaussianMechanism
from .tree_sensitivity import sqrt_up, tree_sensitivity

_SUM_SLACK = 1e-9  # probabilities must sum to 1 within this (they are renormalised to exactly 1)


def _floats(name, values):
    if isinstance(values, (str, bytes)) or np.ndim(values) != 1:
        raise TypeError(f"{name} must be a list of numbers, got {values!r}")
    return [v.real(f"{name}[{i}]", x) for i, x in enumerate(values)]


class MixtureOfGaussiansMechanism(Mechanism):
    """N(0, σ²) without the record; Σᵢ pᵢ N(cᵢ, σ²) with it (module docstring).
    ``sensitivities`` cᵢ ≥ 0 (all of one sign: a mixture of shifts both ways has no
    monotone loss), ``probs`` pᵢ ≥ 0 summing to 1."""

    _spec_type = "MixtureOfGaussiansMechanism"

    def __init__(self, sigma: float, sensitivities: Sequence[float], probs: Sequence[float],
                 relation: Optional[RelationLike] = None) -> None:
        sigma = v.positive("sigma", sigma)
        cs, ps = _floats("sensitivities", sensitivities), _floats("probs", probs)
        if len(cs) != len(ps) or not cs:
            raise ValueError(f"sensitivities and probs must be non-empty lists of one length, "
                             f"got {len(cs)} and {len(ps)}")
        for i, (c, p) in enumerate(zip(cs, ps)):
            v.in_interval(f"sensitivities[{i}]", c, 0.0, math.inf, lo_open=False)
            v.probability(f"probs[{i}]", p)
        total = math.fsum(ps)
        if abs(total - 1.0) > _SUM_SLACK:
            raise ValueError(f"probs must sum to 1, got {ps!r} (sum {total!r})")
        super().__init__("MixtureOfGaussians", *with_relation(
            {"sigma": sigma, "sensitivities": tuple(cs), "probs": tuple(ps)}, relation))
        # the support: shifts of positive probability, merged (equal shifts add their weights)
        merged: Dict[float, float] = {}
        for c, p in zip(cs, ps):
            if p > 0:
                merged[c] = merged.get(c, 0.0) + p / total
        object.__setattr__(self, "sigma", sigma)
        object.__setattr__(self, "_support", tuple(sorted(merged.items())))

    def _spec_args(self):
        return {"sigma": self.sigma, "sensitivities": list(self.params["sensitivities"]),
                "probs": list(self.params["probs"]), "relation": self.relation}

    def _shifts(self):
        return [c for c, _ in self._support], [p for _, p in self._support]

    def _pairs(self):
        cs, ps = self._shifts()
        if cs == [0.0]:  # the record changes nothing
            return PairComposition.single(identical_pair(), identical_pair())
        if len(cs) == 1:  # a plain Gaussian
            pair = GaussianPair(cs[0] / self.sigma)
            return PairComposition.single(pair, pair)
        if len(cs) == 2 and cs[0] == 0.0:  # a Poisson-subsampled Gaussian (module docstring)
            base = GaussianPair(cs[1] / self.sigma)
            return PairComposition.single(PoissonRemovePair(base, ps[1]), PoissonAddPair(base, ps[1]))
        pair = MixtureOfGaussiansPair(self.sigma, cs, ps)
        return PairComposition.single(pair, pair.reverse())

    def _rdp(self):
        cs, ps = self._shifts()
        remove = mixture_gaussian_rdp(self.sigma, cs, ps, "remove")
        add = mixture_gaussian_rdp(self.sigma, cs, ps, "add")
        both = RDPFunction(("max", remove, add), lambda a: np.maximum(remove(a), add(a)))
        return RDPCurve(((both, 1),))


class ZCDPMechanism(Mechanism):
    """A mechanism known only to be (ξ, ρ)-zCDP: D_α ≤ ξ + ρα for all α > 1
    (Bun & Steinke 2016). RDP only (module docstring)."""

    _spec_type = "ZCDPMechanism"

    def __init__(self, rho: float, xi: float = 0.0, relation: Optional[RelationLike] = None) -> None:
        rho = v.nonnegative("rho", rho)
        xi = v.nonnegative("xi", xi)
        super().__init__("zCDP", *with_relation({"rho": rho, "xi": xi}, relation))
        object.__setattr__(self, "rho", rho)
        object.__setattr__(self, "xi", xi)

    def _rdp(self):
        rho, xi = self.rho, self.xi
        return RDPCurve(((RDPFunction(("zcdp", rho, xi), lambda a: xi + rho * np.asarray(a, dtype=float)), 1),))


def tree_depth(steps):
    """⌈log₂(T + 1)⌉: the completed dyadic nodes holding one step of a T-step tree
    (in integers: the bit length of T)."""
    return int(steps).bit_length()


class TreeGaussian(GaussianMechanism):
    """A tree's release as the Gaussian of noise z and sensitivity √nodes² (exact)."""

    def _set_gaussian(self, z, sensitivity):
        object.__setattr__(self, "sigma", z)
        object.__setattr__(self, "sensitivity", sensitivity)
        object.__setattr__(self, "mu", v.ratio(("sensitivity", "noise_multiplier"), sensitivity, z))

    def _rdp(self):
        return RDPCurve(((gaussian_rdp(self.mu), 1),))


class TreeAggregation(TreeGaussian):
    """DP-FTRL's tree aggregation: ``steps`` per epoch, ``epochs`` restarted trees,
    each record used once per epoch (module docstring): the Gaussian mechanism of
    noise ``noise_multiplier`` and sensitivity √(epochs·⌈log₂(steps + 1)⌉)."""

    _spec_type = "TreeAggregation"

    def __init__(self, noise_multiplier: float, steps: int, epochs: int = 1, relation: Optional[RelationLike] = None) -> None:
        z = v.positive("noise_multiplier", noise_multiplier)
        steps, epochs = v.count("steps", steps), v.count("epochs", epochs)
        nodes = epochs * tree_depth(steps)
        Mechanism.__init__(self, "TreeAggregation", *with_relation(
            {"noise_multiplier": z, "steps": steps, "epochs": epochs}, relation))
        self._set_gaussian(z, sqrt_up(nodes))


class SingleTreeAggregation(TreeGaussian):
    """One tree over all ``steps`` (never restarted), a record in at most
    ``participations`` steps any two of which are ``min_separation`` or more apart
    ((k, b)-participation, e.g. k epochs of b steps each with one pass per epoch in
    any order: b = 1 is sound for it, b = steps/k assumes a fixed order). The
    Gaussian of noise ``noise_multiplier`` and sensitivity Δ, Δ² = the largest
    Σ over completed nodes of (participations inside)², computed exactly
    (``tree_sensitivity.py``, attained: module docstring there)."""

    _spec_type = "SingleTreeAggregation"

    def __init__(self, noise_multiplier: float, steps: int, participations: int, min_separation: int = 1,
                 relation: Optional[RelationLike] = None) -> None:
        z = v.positive("noise_multiplier", noise_multiplier)
        steps, k = v.count("steps", steps), v.count("participations", participations)
        b = v.count("min_separation", min_separation)
        sensitivity = tree_sensitivity(steps, k, b)  # refuses (ValueError) past its work cap
        Mechanism.__init__(self, "SingleTreeAggregation", *with_relation(
            {"noise_multiplier": z, "steps": steps, "participations": k, "min_separation": b}, relation))
        self._set_gaussian(z, sensitivity)
