"""``SubsetSampling()(mechanism, gamma)``: fixed-size batches drawn without
replacement, under replace-one neighbours.

The tight pair (Dong, Roth & Su 2022, Thm 4.2) and why it dominates are in
``pld/pairs/subset_sampling.py``; RDP: Wang, Balle & Kasiviswanathan 2019, Thm 9
(``rdp/subset_sampling.py``).
"""
from __future__ import annotations

import numpy as np

from .. import validation as v
from ..mechanism import Mechanism
from ..pld.pairs.composition import PairComposition
from ..pld.pairs.subset_sampling import replace_one_pair, subset_sampled_pair
from ..rdp.curve import RDPCurve, RDPFunction
from ..rdp.subset_sampling import pure_epsilon, subset_rdp_bound
from ..relations import REPLACE_ONE, require_relation
from .base import Transformer, check_mechanism
from .poisson_sampling import sampled_params


class SubsetSampledMechanism(Mechanism):
    """``base`` run on a batch of γn records drawn without replacement."""

    _spec_type = "SubsetSampling"

    def __init__(self, base, gamma):
        super().__init__(f"SubsetSample:{base.name}", sampled_params(base.params, "gamma", gamma),
                         relation=REPLACE_ONE)
        object.__setattr__(self, "base", base)
        object.__setattr__(self, "gamma", gamma)

    def _identity(self):
        return (self.base, self.gamma)

    def _spec_args(self):
        return {"mechanism": self.base, "gamma": self.gamma}

    def _pairs_at(self, rho):
        pair = subset_sampled_pair(replace_one_pair(self.base.pairs_at(rho)), self.gamma)
        return PairComposition.single(pair, pair)

    def _rdp(self):
        curve, pairs = self.base.optional("rdp"), self.base.optional("pairs")
        if curve is None:
            return None
        eps_inf = np.inf if pairs is None else pure_epsilon(pairs)
        gamma = self.gamma
        fn = RDPFunction(("subset-wbk", gamma, eps_inf, curve.terms),
                         lambda alpha: subset_rdp_bound(gamma, curve, alpha, eps_inf))
        return RDPCurve(((fn, 1),))


class SubsetSampling(Transformer):
    """``SubsetSampling()(mechanism, gamma)``: amplification by sampling a
    fixed fraction γ = m/n of the records without replacement (replace-one)."""

    name = "SubsetSample"

    def __call__(self, mechanism: Mechanism, gamma: float) -> Mechanism:
        require_relation("mechanism", check_mechanism("mechanism", mechanism), REPLACE_ONE,
                         "sampling without replacement is analysed for replace-one neighbours; "
                         "use PoissonSampling for add/remove, or ToReplaceOne() first")
        gamma = v.probability("gamma", gamma, lo_open=True)
        return SubsetSampledMechanism(mechanism, gamma)
