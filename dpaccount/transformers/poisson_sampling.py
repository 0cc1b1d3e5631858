"""``PoissonSampling()(mechanism, q)``: each record enters with probability q.

Add/remove mechanisms only. Pairs per direction (Zhu, Dong & Wang 2022,
Thm 11; ``pld/poisson_sampling.py``); RDP exactly for the Gaussian (Mironov,
Talwar & Zhang 2019) and by the general bound of Zhu & Wang 2019 otherwise
(``rdp/poisson_sampling.py``).
"""
from .. import validation as v
from ..mechanism import Mechanism
from ..pld.accountant import PairComposition
from ..pld.discrete_pair import identical_pair
from ..pld.poisson_sampling import PoissonAddPair, PoissonRemovePair
from ..rdp.curve import RDPCurve, RDPFunction
from ..rdp.poisson_sampling import subsampled_gaussian_rdp, subsampled_rdp_bound
from ..relations import ADD_REMOVE, require_relation
from .base import Transformer, check_mechanism


def sampled_params(base_params, key, rate):
    """The base's keys, plain, and the rate under ``key``; ``base.``-prefixed
    keys where the base already has that key (sampling a sampled mechanism)."""
    if key in base_params:
        return {**{f"base.{k}": val for k, val in base_params.items()}, key: rate}
    return {**base_params, key: rate}


class PoissonSampledMechanism(Mechanism):
    """``base`` run on a Poisson subsample: each record kept with probability q."""

    _spec_type = "PoissonSampling"

    def __init__(self, base, q):
        super().__init__(f"PoissonSample:{base.name}", sampled_params(base.params, "q", q))
        object.__setattr__(self, "base", base)
        object.__setattr__(self, "q", q)

    def _identity(self):
        return (self.base, self.q)

    def _spec_args(self):
        return {"mechanism": self.base, "q": self.q}

    def _pairs(self):
        if self.q == 0.0:  # nothing of the record is ever used: P = Q in both directions
            return PairComposition.single(identical_pair(), identical_pair())
        base = self.base.optional("pairs")
        if base is None:
            return None
        if len(base.remove) != 1 or len(base.add) != 1 or base.remove[0][1] != 1 or base.add[0][1] != 1:
            return None  # a product of pairs is not a pair of one-dimensional laws
        return PairComposition.single(PoissonRemovePair(base.remove[0][0], self.q),
                                      PoissonAddPair(base.add[0][0], self.q))

    def _rdp(self):
        base_curve, base_pairs = self.base.optional("rdp"), self.base.optional("pairs")
        if base_curve is None:
            return None
        q = self.q
        mu = None if base_pairs is None else base_pairs.gaussian_mu
        if mu is not None:
            sigma = 1.0 / mu
            fn = RDPFunction(("poisson-gaussian", q, sigma),
                             lambda a: subsampled_gaussian_rdp(q, sigma, a))
        else:
            fn = RDPFunction(("poisson-general", q, base_curve.terms),
                             lambda a: subsampled_rdp_bound(q, base_curve, a))
        return RDPCurve(((fn, 1),))


class PoissonSampling(Transformer):
    """``PoissonSampling()(mechanism, q)``: amplification by Poisson subsampling."""

    name = "PoissonSample"

    def __call__(self, mechanism, q):
        mechanism = require_relation("mechanism", check_mechanism("mechanism", mechanism), ADD_REMOVE,
                                     "Poisson subsampling amplifies add/remove guarantees; use "
                                     "SubsetSampling for replace-one")
        q = v.probability("q", q)
        return PoissonSampledMechanism(mechanism, q)
