"""``PoissonSampling()(mechanism, q)``: each record enters with probability q.

Add/remove mechanisms only. Pairs per direction (Zhu, Dong & Wang 2022,
Thm 11; ``pld/pairs/poisson_sampling.py``); RDP exactly for the Gaussian (Mironov,
Talwar & Zhang 2019), by exact sums over the outcomes for finite pairs and
the discrete Gaussian (``rdp/poisson_sums.py``), and by the general bound of
Zhu & Wang 2019 otherwise (``rdp/poisson_sampling.py``; also where a sum
cannot be certified).
"""
from __future__ import annotations

import numpy as np

from .. import validation as v
from ..mechanism import Mechanism
from ..pld.pairs.composition import PairComposition
from ..pld.pairs.discrete_pair import identical_pair
from ..pld.pairs.poisson_sampling import PoissonAddPair, PoissonRemovePair
from ..rdp.curve import RDPCurve, RDPFunction
from ..mechanisms.discrete import DiscreteGaussianMechanism
from ..pld.pairs.discrete_pair import DiscretePair
from ..rdp.poisson_sampling import subsampled_gaussian_rdp, subsampled_rdp_bound
from ..rdp.poisson_sums import discrete_gaussian_poisson_rdp, poisson_finite_rdp
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

    def _pairs_at(self, rho):
        if self.q == 0.0:  # nothing of the record is ever used: P = Q in both directions
            return PairComposition.single(identical_pair(), identical_pair())
        base = self.base.optional("pairs", rho)
        if base is None:
            return None
        if len(base.remove) != 1 or len(base.add) != 1 or base.remove[0][1] != 1 or base.add[0][1] != 1:
            return None  # a product of pairs is not a pair of one-dimensional laws
        return PairComposition.single(PoissonRemovePair(base.remove[0][0], self.q),
                                      PoissonAddPair(base.add[0][0], self.q))

    def _rdp(self):
        base_curve, base_pairs = self.base.optional("rdp"), self.base.optional("pairs")
        q = self.q
        mu = None if base_pairs is None else base_pairs.gaussian_mu
        if mu is not None and base_curve is not None:
            sigma = 1.0 / mu
            fn = RDPFunction(("poisson-gaussian", q, sigma),
                             lambda a: subsampled_gaussian_rdp(q, sigma, a))
        else:
            fn = self._exact_sums(base_curve, base_pairs)
        return None if fn is None else RDPCurve(((fn, 1),))

    def _exact_sums(self, base_curve, base_pairs):
        """The exact sums of a finite base (or the discrete Gaussian) where they apply,
        else Zhu & Wang's bound (also per order where a sum is not certified or is
        infinite for this pair, e.g. a frozen grid's mass at +∞; ∞ there if the base
        has no RDP curve); None if neither applies."""
        q = self.q
        general = None if base_curve is None else RDPFunction(("poisson-general", q, base_curve.terms),
                                                              lambda a: subsampled_rdp_bound(q, base_curve, a))
        if not 0 < q < 1:
            return general
        base = self.base
        if type(base) is DiscreteGaussianMechanism:
            sigma, sens = base.sigma, base.sensitivity
            exact, key = (lambda a: discrete_gaussian_poisson_rdp(sigma, sens, q, a)), (sigma, sens)
        elif (base_pairs is not None and len(base_pairs.remove) == 1 and len(base_pairs.add) == 1
              and all(isinstance(p, DiscretePair) and k == 1 for p, k in base_pairs.remove + base_pairs.add)):
            remove, add = base_pairs.remove[0][0].log_masses, base_pairs.add[0][0].log_masses
            if general is None and base_pairs.remove[0][0].p_inf > 0:
                return None  # infinite for this pair; the base claims no RDP to compare with: absent
            exact = lambda a: poisson_finite_rdp(remove, add, q, a)
            key = (base_pairs.remove[0][0].key(), base_pairs.add[0][0].key())
        else:
            return general

        def fn(alpha):
            a = np.asarray(alpha, dtype=float)
            out = np.asarray(exact(a.ravel()), dtype=float)
            miss = ~np.isfinite(out)
            if miss.any():  # not certified, or infinite for this pair: the general bound there (∞ without one)
                out[miss] = np.inf if general is None else np.asarray(general(a.ravel()[miss]), dtype=float)
            return out.reshape(a.shape)
        return RDPFunction(("poisson-exact-sums", q, key), fn)


class PoissonSampling(Transformer):
    """``PoissonSampling()(mechanism, q)``: amplification by Poisson subsampling."""

    name = "PoissonSample"

    def __call__(self, mechanism: Mechanism, q: float) -> Mechanism:
        mechanism = require_relation("mechanism", check_mechanism("mechanism", mechanism), ADD_REMOVE,
                                     "Poisson subsampling amplifies add/remove guarantees; use "
                                     "SubsetSampling for replace-one")
        q = v.probability("q", q)
        return PoissonSampledMechanism(mechanism, q)
