"""``TruncatedPoissonSampling()(mechanism, q, dataset_size, max_batch_size)``:
Poisson sampling at rate q, then a uniformly random subset of at most
``max_batch_size`` records ("Tighter privacy analysis for truncated Poisson
sampling", arXiv:2508.15089, 2025; dp_accounting's
``TruncatedSubsampledGaussianDpEvent``, here for any base with pairs).

Add/remove mechanisms only. Pairs: ``pld/pairs/truncated_poisson.py`` — a mixture,
over the public coin "the other records' Poisson sample has ≥ B members", of
Poisson sampling at rate q of the base and Poisson sampling at the smaller
rate η of the base's *replace-one* pair (``ToReplaceOne``: when the batch is
full, x displaces another record y). The assumption, stated: the base is
differentially private for add/remove neighbours of its batch, and its
replace-one guarantee is that of two add/remove steps (for DP-SGD, a sum of
gradients clipped to C moves by ≤ 2C when x replaces y). ``dataset_size``
counts the records of the larger neighbour (the one holding x). RDP: for a Gaussian
base only (``rdp/truncated_poisson.py``). Lower ends (``*_bounds``): Poisson sampling
at x's inclusion probability q', the instance where the others leave the base unchanged
(the pairs' witness, ``pld/pairs/truncated_poisson.py``).
"""
from __future__ import annotations

from .. import validation as v
from ..errors import RepresentationUnavailable
from ..mechanism import Mechanism
from ..pld.pairs.composition import PairComposition
from ..pld.pairs.subset_sampling import replace_one_pair
from ..pld.pairs.truncated_poisson import truncated_pairs, truncation_weights
from ..rdp.curve import RDPCurve, RDPFunction
from ..rdp.truncated_poisson import truncated_gaussian_rdp
from ..relations import ADD_REMOVE, require_relation
from .base import Transformer, check_mechanism
from .group_privacy import ToReplaceOne
from .poisson_sampling import PoissonSampledMechanism, sampled_params


class TruncatedPoissonSampledMechanism(Mechanism):
    """``base`` run on a Poisson sample at rate q cut down to at most B records."""

    _spec_type = "TruncatedPoissonSampling"

    def __init__(self, base, q, dataset_size, max_batch_size):
        params = sampled_params(base.params, "q", q)
        params.update({"dataset_size": dataset_size, "max_batch_size": max_batch_size})
        super().__init__(f"TruncatedPoissonSample:{base.name}", params)
        for key, val in (("base", base), ("q", q), ("dataset_size", dataset_size),
                         ("max_batch_size", max_batch_size)):
            object.__setattr__(self, key, val)

    def _identity(self):
        return (self.base, self.q, self.dataset_size, self.max_batch_size)

    def _spec_args(self):
        return {"mechanism": self.base, "q": self.q, "dataset_size": self.dataset_size,
                "max_batch_size": self.max_batch_size}

    def _pairs_at(self, rho):
        plain = PoissonSampledMechanism(self.base, self.q).optional("pairs", rho)
        if plain is None or self.q == 0.0 or self.max_batch_size >= self.dataset_size:
            return plain  # no truncation possible: Poisson sampling itself
        base = self.base.pairs_at(rho)
        try:
            replace = replace_one_pair(ToReplaceOne()(self.base).pairs_at(rho))
        except RepresentationUnavailable as exc:
            raise RepresentationUnavailable(
                f"truncated Poisson sampling needs the base's replace-one pair (a full batch's record "
                f"displaces another), and {self.base.name} has none: {exc}") from exc
        rem, add = truncated_pairs(base.remove[0][0], base.add[0][0], replace, self.q,
                                   self.dataset_size, self.max_batch_size)
        return PairComposition.single(rem, add)

    def _rdp(self):
        """Gaussian bases only (``rdp/truncated_poisson.py``); Poisson sampling's where
        no truncation can happen."""
        if self.q == 0.0 or self.max_batch_size >= self.dataset_size:
            return PoissonSampledMechanism(self.base, self.q).optional("rdp")
        pairs = self.base.optional("pairs")
        mu = None if pairs is None else pairs.gaussian_mu
        if mu is None or mu == 0:
            return None
        mu_r = ToReplaceOne()(self.base).pairs.gaussian_mu
        _, w_high, eta = truncation_weights(self.q, self.dataset_size, self.max_batch_size)
        args = (self.q, 1.0 / mu, w_high, eta, 1.0 / mu_r)
        fn = RDPFunction(("truncated-poisson-gaussian",) + args,
                         lambda a: truncated_gaussian_rdp(*args, a))
        return RDPCurve(((fn, 1),))


class TruncatedPoissonSampling(Transformer):
    """``TruncatedPoissonSampling()(mechanism, q, dataset_size, max_batch_size)``."""

    name = "TruncatedPoissonSample"

    def __call__(self, mechanism: Mechanism, q: float, dataset_size: int, max_batch_size: int) -> Mechanism:
        mechanism = require_relation("mechanism", check_mechanism("mechanism", mechanism), ADD_REMOVE,
                                     "truncated Poisson sampling is analysed for add/remove neighbours")
        q = v.probability("q", q)
        n = v.count("dataset_size", dataset_size)
        b = v.count("max_batch_size", max_batch_size)
        return TruncatedPoissonSampledMechanism(mechanism, q, n, b)
