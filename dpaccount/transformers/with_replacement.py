"""``SamplingWithReplacement()(mechanism, dataset_size, batch_size)``: a batch
of ``batch_size`` independent uniform draws from ``dataset_size`` records (a
record may appear several times), under replace-one neighbours.

The pair and why it dominates: ``pld/pairs/with_replacement.py`` (the count K of the
differing record's copies is Bin(b, 1/n); each K = k is a k-fold replace-one
neighbour, the base's ``GroupPrivacy`` pair; the result is the subset-sampling
construction at rate γ = P(K ≥ 1) on their mixture; no tighter pair is known,
Gaussian bases included: "No tight pair" there). The assumption, stated: the base is
a replace-one mechanism on the *list* of b draws (a record drawn twice counts twice:
a sum of clipped gradients moves by ≤ kΔ for k copies). With ``batch_size=1`` this
is ``SubsetSampling`` at rate 1/n. Lower ends (``*_bounds``) for additive-noise
bases on a sum (Gaussian, Laplace, discrete Laplace, discrete Gaussian; natively
replace-one or ``ToReplaceOne`` of one): the instance where x adds W per copy and
the others 0 (``copies_witness``, ``pld/pairs/copies_noise.py``); other bases have
none for b > 1 (their lower end is absent, with the reason). No RDP rule; no
add/remove version (the batch has a fixed size, and the relation between batches of
datasets of different sizes is not analysed).
"""
from __future__ import annotations

import functools

from .. import validation as v
from ..errors import RepresentationUnavailable
from ..mechanism import Mechanism
from ..pld.pairs.composition import PairComposition
from ..pld.pairs.subset_sampling import replace_one_pair
from ..mechanisms.discrete import DiscreteGaussianMechanism, DiscreteLaplaceMechanism
from ..mechanisms.standard import GaussianMechanism, GDPMechanism, LaplaceMechanism
from ..pld.pairs.copies_noise import discrete_gaussian_copies_pair, gaussian_copies_pair, laplace_copies_pair
from ..pld.pairs.with_replacement import copies_probs, copies_witness, with_replacement_pair
from ..relations import ADD_REMOVE, REPLACE_ONE, require_relation
from .base import Transformer, check_mechanism
from .group_privacy import GroupMechanism, GroupPrivacy
from .poisson_sampling import sampled_params


class WithReplacementSampledMechanism(Mechanism):
    """``base`` run on ``batch_size`` uniform draws, with replacement, from ``dataset_size`` records."""

    _spec_type = "SamplingWithReplacement"

    def __init__(self, base, dataset_size, batch_size):
        params = sampled_params(base.params, "dataset_size", dataset_size)
        params["batch_size"] = batch_size
        super().__init__(f"WithReplacementSample:{base.name}", params, relation=REPLACE_ONE)
        for key, val in (("base", base), ("dataset_size", dataset_size), ("batch_size", batch_size)):
            object.__setattr__(self, key, val)

    def _identity(self):
        return (self.base, self.dataset_size, self.batch_size)

    def _spec_args(self):
        return {"mechanism": self.base, "dataset_size": self.dataset_size, "batch_size": self.batch_size}

    def _group_pair(self, k, rho):
        """G_k: one pair dominating both orders of k-fold replace-one neighbours of the base."""
        base = self.base if k == 1 else GroupPrivacy()(self.base, k)
        return replace_one_pair(base.pairs_at(rho))

    def _pairs_at(self, rho):
        if self.base.optional("pairs", rho) is None:
            return None
        try:
            pair = with_replacement_pair(functools.partial(self._group_pair, rho=rho), self.dataset_size,
                                         self.batch_size, self._witness(rho))
        except RepresentationUnavailable as exc:
            raise RepresentationUnavailable(
                f"sampling with replacement needs the base's k-fold replace-one pairs (a record drawn k "
                f"times), and {self.base.name} has none: {exc}") from exc
        return PairComposition.single(pair, pair)

    def _witness(self, rho):
        """``witness(n, b)``, the pair of the instance "x adds W per copy, the others 0" of an
        additive-noise base (``pld/pairs/copies_noise.py``), or None where none is known."""
        found = _noise_and_width(self.base)
        if found is not None:
            return functools.partial(_noise_witness, *found)
        base = self.base.pairs_at(rho)
        if base.tight and base.gaussian_mu is not None:  # another Gaussian sum: its pair's μ
            return functools.partial(copies_witness, base.gaussian_mu)
        return None


def _noise_and_width(mech):
    """(the instance's pair builder, noise scale, W) where ``mech`` adds Gaussian, Laplace,
    discrete Laplace or discrete Gaussian noise to a sum whose replace-one sensitivity is W:
    the noise mechanism itself under replace-one (W its sensitivity), or ``ToReplaceOne`` of
    it (W = 2Δ, exact in floats: the instance's g ∈ [−Δ, Δ]); else None."""
    factor = 1
    if isinstance(mech, GroupMechanism):
        if not (mech.k == 2 and mech.relation == REPLACE_ONE and mech.base.relation == ADD_REMOVE):
            return None
        mech, factor = mech.base, 2
    kind = type(mech)
    if kind is GDPMechanism:
        return gaussian_copies_pair, 1.0, factor * mech.mu
    if kind is GaussianMechanism:
        return gaussian_copies_pair, mech.sigma, factor * mech.sensitivity
    if kind is LaplaceMechanism:
        return functools.partial(laplace_copies_pair, discrete=False), mech.b, factor * mech.sensitivity
    if kind is DiscreteLaplaceMechanism:
        return functools.partial(laplace_copies_pair, discrete=True), mech.t, factor * mech.sensitivity
    if kind is DiscreteGaussianMechanism:
        return discrete_gaussian_copies_pair, mech.sigma, factor * mech.sensitivity
    return None


def _noise_witness(build, scale, width, n, b):
    return build(scale, width, *copies_probs(n, b))


class SamplingWithReplacement(Transformer):
    """``SamplingWithReplacement()(mechanism, dataset_size, batch_size)`` (replace-one)."""

    name = "WithReplacementSample"

    def __call__(self, mechanism: Mechanism, dataset_size: int, batch_size: int) -> Mechanism:
        mechanism = require_relation("mechanism", check_mechanism("mechanism", mechanism), REPLACE_ONE,
                                     "sampling with replacement is analysed for replace-one neighbours; "
                                     "use ToReplaceOne() first for an add/remove mechanism")
        n = v.count("dataset_size", dataset_size)
        b = v.count("batch_size", batch_size)
        return WithReplacementSampledMechanism(mechanism, n, b)
