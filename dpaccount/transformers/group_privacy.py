"""Group privacy and the change of neighbouring relation.

``GroupPrivacy()(mechanism, k)`` — guarantees for datasets joined by at most
k steps of the mechanism's own relation (k-fold neighbours; the result's
relation is ``relations.group_relation(relation, k)``, e.g. "2-fold
add/remove", so it composes only with mechanisms for the same relation).
The steps may mix directions (remove x, add y), so for k ≥ 2 each direction
carries a pair dominating both orders (``relations.py``). Rule by rule:

* additive noise (Gaussian, GDP, Laplace, binomial, discrete Gaussian and
  Laplace): a query of sensitivity Δ moves by at most kΔ over k steps
  (triangle inequality), in either direction; the noise laws are
  log-concave, so a shift s ∈ [−kΔ, kΔ] is dominated by the shift kΔ and its
  reverse (monotone likelihood ratio: the threshold tests are optimal and
  their power grows with |s|). The mechanism is the same one with
  sensitivity kΔ (μ-GDP: kμ); tight (the query may move by exactly kΔ).
  Real products kΔ are rounded up by 2 ulp. The binomial pair is not
  symmetric, so for k ≥ 2 (and under replace-one) both directions carry the
  symmetric pair of the two orders (``pld/symmetric_hull.symmetric_hull_pair``).
* randomized response and ``PureDPMechanism``, i.e. any pure ε-DP
  mechanism: it is f_ε-DP with f_ε(x) = max(0, 1 − e^ε x, e^{−ε}(1 − x)),
  hence [1 − g^{∘k}]-DP for groups of k with g = 1 − f_ε (Dong, Roth & Su
  2022, Thm 2.14: a test of level x has power ≤ g(x) at the next dataset of
  the chain, so ≤ g^{∘k}(x) after k steps). That trade-off is attained by a
  chain of ε-DP laws (Q = U[0,1], P_j with CDF g^{∘j}), so it is tight for
  the class of ε-DP mechanisms; it is the pair of ``pure_dp_group_pair``
  and it lies strictly inside randomized response with log-odds kε (the
  folklore "kε-DP"), which is sound but loose for every δ > 0. Randomized
  response is read as its class (every mechanism with its ε₀, k-ary:
  log(p(k − 1)/(1 − p))), so the chain at ε₀ rounded down is an attained
  witness and gives the lower end; ε₀ rounded up gives the pair.
* compositions: each part separately (the k-fold neighbours of the whole
  are k-fold neighbours of every part, and pairs compose).

Anything else (subsampled mechanisms, say) raises ``RepresentationUnavailable``:
group privacy of a subsampled mechanism is not the subsampling of the group
mechanism, and a generic conversion would have to be derived. The one
exception is replace-one (below) of a Poisson-subsampled Gaussian.

``ToReplaceOne()(mechanism)`` — an add/remove mechanism as a replace-one
one: replacing x by y is removing x then adding y, two add/remove steps, so
this is group privacy with k = 2 and the relation set to replace-one
(sound for the rules above; for counting queries, whose replace-one
sensitivity is still 1, it is loose — build the mechanism with
``relation="replace-one"`` instead). A Poisson-subsampled Gaussian (or GDP)
mechanism is not two add/remove steps of itself: replacing x by y changes
one record's slot, included with probability q on both sides, and its pair
is the Gaussian mixture pair of Lebeda, Regehr, Kamath & Steinke 2024
(``pld/pairs/poisson_replace.py``; no RDP curve is derived for it). A
truncated Poisson-subsampled Gaussian is the mixture of two such pairs over
the public coin "the batch is full" (``_truncated_replace``). Other
Poisson-subsampled bases raise ``RepresentationUnavailable``. The converse has no sound general
rule: a replace-one guarantee says nothing about a mechanism that reveals
|D|, so no ``ToAddRemove`` is offered.
"""
from __future__ import annotations

import math

import numpy as np

from .. import validation as v
from ..errors import RepresentationUnavailable
from ..mechanism import Mechanism
from ..mechanisms.discrete import DiscreteGaussianMechanism, DiscreteLaplaceMechanism, PureDPMechanism
from ..mechanisms.trivial import NonPrivateMechanism
from ..mechanisms.standard import (BinomialMechanism, GaussianMechanism, GDPMechanism, LaplaceMechanism,
                                   RandomizedResponse)
from ..pld.pairs.composition import PairComposition
from ..pld.pairs.discrete_pair import DiscretePair, binomial_pair
from ..pld.pairs.base import check_atoms
from ..pld.pairs.mixture import MixturePair
from ..pld.pairs.poisson_replace import PoissonReplaceGaussianPair
from ..pld.pairs.truncated_poisson import truncation_weights
from ..rdp.curve import RDPCurve, discrete_pair_rdp
from ..relations import ADD_REMOVE, REPLACE_ONE, group_relation, require_relation, with_relation
from .base import Transformer, check_mechanism
from .composition import ComposedMechanism
from .poisson_sampling import PoissonSampledMechanism
from ..numerics import ULP_OF_ONE as _U



def _up(x, ulps):
    return x * (1 + ulps * _U)


def _rr_epsilon(p, buckets, up):
    """ε₀ = log(p(k − 1)/(1 − p)) of k-ary randomized response, rounded up (``up``) or
    down. log and log1p are not correctly rounded: each is taken to err by up to 4 ulp of
    its own size (the worst case documented for numpy/libm across platforms), and near
    p = 1/2 the terms nearly cancel, so the pad is sized by the terms, not by the
    difference (plus its own rounding)."""
    a, b, c = math.log(p), math.log1p(-p), math.log(buckets - 1)
    pad = (a - b + c) * _U + 4 * _U * (abs(a) + abs(b) + abs(c))
    return (a - b + c) + pad if up else (a - b + c) - pad


def pure_dp_group_pair(eps, k, tight=False):
    """The tight pair of k-fold neighbours of an ε-DP mechanism (module docstring).

    With c = 1/(1 + e^ε) the CDF g^{∘k} of P on [0, 1] has slope e^{(k−2i)ε}
    on [c e^{−(k−i)ε}, c e^{−(k−i−1)ε}) for i = 0..k (end points 0 and 1),
    since an orbit x, g(x), … grows by e^ε while below c and stays above c
    once there. Outcome i (loss (k − 2i)ε) thus has Q-mass
        q_0 = c e^{−(k−1)ε},  q_i = c e^{−(k−i)ε}(e^ε − 1) (0 < i < k),  q_k = 1 − c,
    and P-mass p_i = e^{(k−2i)ε} q_i = q_{k−i} (the pair is symmetric); k = 1
    is randomized response. Built in logs; callers round ε up. ``tight``: the
    caller's ε is the class's own (``PureDPMechanism``), so the chain above
    attains the pair; not where ε was rounded up from randomized response, a
    single mechanism that no k-step chain need attain."""
    eps = float(eps)
    i = np.arange(check_atoms(f"the pure-DP group pair (eps={eps!r}, k={k})", k + 1), dtype=float)
    log_c = -np.logaddexp(0.0, eps)
    log_expm1 = math.log(math.expm1(eps))
    log_q = log_c - (k - i) * eps + log_expm1
    log_q[0] = log_c - (k - 1) * eps
    log_q[k] = -np.logaddexp(0.0, -eps)
    # p_i = q_{k−i}: P's logs are Q's reversed, not log q_i + (k − 2i)ε, whose sum cancels (at i = 0
    # to log(1 − c) ≈ −e^{−ε} from terms of size kε, an absolute error ~kε·u that e^{log p} turns
    # into a relative one: δ near 1 came out below the exact). Each log's error, up: logaddexp
    # 2u|log c|, (k − i)ε u of itself, log∘expm1 u(1 + |log(e^ε − 1)|), the two sums u of their
    # terms' magnitudes: within 4u(|log c| + (k − i)ε + |log(e^ε − 1)|) + 2u
    err_q = 4 * _U * (abs(float(log_c)) + (k - i) * eps + abs(log_expm1)) + 2 * _U
    err_q[k] = 4 * _U * abs(float(log_q[k]))  # one logaddexp: 2u of itself
    return DiscretePair(log_q[::-1].copy(), log_q, lattice=eps, tight=tight, log_err=(err_q[::-1].copy(), err_q),
                        name=f"pure-dp-group(eps={eps!r},k={k}{'' if tight else ',bound'})")


class _SymmetricPairMechanism(Mechanism):
    """A mechanism of one symmetric pair, ``pair``, in both directions."""

    def __init__(self, name, params, pair):
        super().__init__(name, params)
        object.__setattr__(self, "pair", pair)

    def _pairs(self):
        return PairComposition.single(self.pair, self.pair)


class _PurePairMechanism(_SymmetricPairMechanism):
    """The k-fold equivalent of an ε-DP mechanism: ``pure_dp_group_pair``
    (``tight`` where ε is the class's own, ``PureDPMechanism``; else, where
    ``attained`` ≤ ε is an ε the class attains (randomized response's own ε₀,
    rounded down), the chain at ``attained`` is the pair's witness)."""

    def __init__(self, eps, k, tight=False, attained=None):
        pair = pure_dp_group_pair(eps, k, tight)
        if not tight and attained is not None and attained > 0:
            witness = pure_dp_group_pair(attained, k, tight=True)
            pair = pair.with_witnesses((((witness, 1),),), f"-attained({attained!r})")
        super().__init__("PureDPGroup", {"eps": eps, "k": k, **({"tight": True} if tight else {})}, pair)

    def _rdp(self):
        # symmetric pair: the one order's Rényi divergence is the other's
        return RDPCurve(((discrete_pair_rdp(self.pair._log_p, self.pair._log_q, self.pair.key(),
                                                  self.pair._log_err), 1),))


class _PoissonReplaceMechanism(_SymmetricPairMechanism):
    """A Poisson-subsampled Gaussian seen through replace-one: ``PoissonReplaceGaussianPair``."""

    def __init__(self, mu, q):
        super().__init__("PoissonReplaceGaussian", {"mu": mu, "q": q}, PoissonReplaceGaussianPair(mu, q))


def _revealed_slot_pair(q):
    """((1 − q)R + q·δ_x, (1 − q)R + q·δ_y), δ_x ⊥ δ_y ⊥ R: loss +∞ with P-mass q,
    −∞ with Q-mass q, 0 else; δ(ε) = q at every ε ≥ 0. Attained (a base that
    outputs its records) and its own reverse."""
    log_p = np.array([math.log(q), math.log1p(-q), -np.inf])
    return DiscretePair(log_p, log_p[::-1].copy(), name=f"revealed-slot(q={q!r})", p_inf=q, q_ninf=q, tight=True)


def _poisson_replace(m):
    """The replace-one equivalent of a Poisson-subsampled mechanism (module docstring)."""
    if isinstance(m.base, NonPrivateMechanism):  # x's slot, sampled w.p. q, reveals x or y
        return _SymmetricPairMechanism("PoissonReplaceNonPrivate", {"q": m.q}, _revealed_slot_pair(m.q))
    pairs = m.base.optional("pairs")
    mu = None if pairs is None else pairs.gaussian_mu
    if mu is None:
        raise RepresentationUnavailable(
            f"replace-one neighbours of {m.name} are not supported: Poisson sampling under "
            f"replace-one has a sound pair for Gaussian bases only (Lebeda, Regehr, Kamath & "
            f"Steinke 2024); it is not two add/remove steps of the subsampled mechanism")
    if m.q == 1.0:  # every record is used: the Gaussian of twice the sensitivity
        return GDPMechanism(_up(2 * mu, 2))
    return _PoissonReplaceMechanism(mu, m.q)


def _truncated_replace(m):
    """The replace-one equivalent of a truncated Poisson-subsampled Gaussian: the
    mixture, over the public coin C = [the others' sample has ≥ B members], of the
    Poisson replace pair at rate q (C false: x's slot as in ``_poisson_replace``) and
    at rate η with twice the sensitivity (C true: x or y enters the full batch with
    probability η in place of a record z of the others' sample, so the laws are
    (1 − η)N(g_z) + ηN(g_x) and (1 − η)N(g_z) + ηN(g_y) with |g_x − g_z|, |g_y − g_z| ≤ 2Δ:
    Lebeda et al.'s pair at 2Δ). Weights and η as in ``pld/pairs/truncated_poisson.py``
    (w rounded down, the rest spilled; η rounded up: the pair's curve grows with its
    rate); dp_accounting 0.6 takes the same mixture (``from_truncated_subsampled_gaussian_mechanism``)."""
    if m.q == 0.0 or m.max_batch_size >= m.dataset_size:
        return _equivalent(PoissonSampledMechanism(m.base, m.q), 2, True, True)
    base = _poisson_replace(PoissonSampledMechanism(m.base, m.q))
    w_low, w_high, eta = truncation_weights(m.q, m.dataset_size, m.max_batch_size)
    if w_high == 0.0:
        return base
    full = _poisson_replace(PoissonSampledMechanism(_equivalent(m.base, 2, True), eta))
    comps = tuple(x.pairs.remove[0][0] for x in (base, full))
    keep = (1.0 - w_high) * (1 - 2 * _U)              # ≤ the exact 1 − w
    spill = (w_high - w_low + 2 * _U) * (1 + 2 * _U)  # ≥ 1 − keep − w_low
    name = f"TruncatedPoissonReplace:{m.base.name}"
    return _SymmetricPairMechanism(name, dict(m.params), MixturePair(zip((keep, w_low), comps), spill, comps))


def _equivalent(m, k, both, replace=False):
    """A mechanism whose pairs and RDP for one step are ``m``'s for ≤ k steps;
    ``both``: the steps may go either way (each pair must cover both orders);
    ``replace``: the k = 2 steps are a removal and an addition (``ToReplaceOne``), one
    replacement: a Poisson-subsampled base keeps the replaced record's slot (module docstring)."""
    kind = type(m)
    if kind is GroupMechanism:
        return _equivalent(m.equivalent, k, both, replace)
    if kind is PoissonSampledMechanism and replace:
        return m if m.q == 0 else _poisson_replace(m)  # q = 0: the record is never used
    if getattr(kind, "_spec_type", None) == "TruncatedPoissonSampling" and replace:  # (a cyclic import)
        return _truncated_replace(m)
    if kind is _PurePairMechanism:
        return _PurePairMechanism(m.params["eps"], m.params["k"] * k, m.pair.tight)
    if kind is GDPMechanism:
        return GDPMechanism(_up(m.mu * k, 2))
    if kind is GaussianMechanism:
        return GaussianMechanism(m.sigma, _up(m.sensitivity * k, 2))
    if kind is LaplaceMechanism:
        return LaplaceMechanism(m.b, _up(m.sensitivity * k, 2))
    if kind is DiscreteGaussianMechanism:
        return DiscreteGaussianMechanism(m.sigma, m.sensitivity * k)
    if kind is DiscreteLaplaceMechanism:
        return DiscreteLaplaceMechanism(m.t, m.sensitivity * k)
    if kind is BinomialMechanism:
        # the replace-one binomial carries the symmetric pair; wrapped so that every
        # equivalent is add/remove and a composition of them can be built (mixed steps
        # move a monotone count either way too: ``monotone`` only survives one-way steps)
        wide = (BinomialMechanism(m.n, m.p, m.sensitivity * k, relation=REPLACE_ONE) if both
                else BinomialMechanism(m.n, m.p, m.sensitivity * k, monotone=m.monotone))
        if both and replace and m.monotone:
            return _MonotoneReplaced(m, wide)
        return _Delegate(wide.name, wide.params, ADD_REMOVE, wide) if both else wide
    if kind is RandomizedResponse:
        # ε = log(p/(1−p)) rounded up: a larger ε only weakens the bound
        return _PurePairMechanism(_rr_epsilon(m.p, m.buckets, up=True), k,
                                  attained=_rr_epsilon(m.p, m.buckets, up=False))
    if kind is PureDPMechanism:
        return _PurePairMechanism(m.eps, k, tight=True)
    if kind is ComposedMechanism:
        return ComposedMechanism([(_equivalent(part, k, both, replace), c) for part, c in m.parts])
    raise RepresentationUnavailable(
        f"group privacy of {m.name} ({kind.__name__}) is not supported: only additive-noise "
        f"mechanisms, pure-DP ones (randomized response, PureDP) and their compositions "
        f"have a sound, tight rule")


class _Delegate(Mechanism):
    """A mechanism whose representations are those of ``equivalent``."""

    def __init__(self, name, params, relation, equivalent):
        super().__init__(name, params, relation)
        object.__setattr__(self, "equivalent", equivalent)

    def _identity(self):
        return (self.relation, tuple(self.params.items()), self.equivalent)

    def _pairs_at(self, rho):
        return self.equivalent.optional("pairs", rho)

    def _rdp(self):
        return self.equivalent.optional("rdp")


class _MonotoneReplaced(_Delegate):
    """A monotone binomial under ``ToReplaceOne``: the hull of the shifts ±2Δ
    dominates, but a count that never decreases when a record is added moves by
    at most Δ when one is replaced (f(D ∪ y) − f(D ∪ x) ∈ [−Δ, Δ]): the hull's
    attained witnesses are the shifts ±Δ, not ±2Δ."""

    def __init__(self, base, wide):
        super().__init__(wide.name, {**wide.params, "monotone": True}, ADD_REMOVE, wide)
        object.__setattr__(self, "shift", base.sensitivity)

    def _pairs_at(self, rho):
        hull = self.equivalent.pairs_at(rho).remove[0][0]
        if not hasattr(hull, "with_witnesses"):
            return self.equivalent.pairs_at(rho)
        one = binomial_pair(self.equivalent.n, self.equivalent.p, shift=self.shift)
        pair = hull.with_witnesses((((one, 1),), ((one.reverse(), 1),)), f"-replaced-monotone({self.shift})")
        return PairComposition.single(pair, pair)


class GroupMechanism(_Delegate):
    """``base`` seen through ≤ k steps of its relation, reported under
    ``relation``; its representations are those of ``equivalent``.
    Its spec is ``ToReplaceOne`` when it turned add/remove into replace-one,
    ``GroupPrivacy`` otherwise."""

    _spec_type = "GroupPrivacy"

    def __init__(self, base, k, relation):
        both = relation != ADD_REMOVE  # ≥ 2 add/remove steps, or a symmetric relation
        replace = relation == REPLACE_ONE and base.relation == ADD_REMOVE  # ToReplaceOne
        equivalent = base if (k == 1 and relation == base.relation) else _equivalent(base, k, both, replace)
        params = {**{f"{base.name}:{key}": val for key, val in base.params.items()}, f"{base.name}:Group": k}
        super().__init__(f"Group:{base.name}", *with_relation(params, relation), equivalent)
        object.__setattr__(self, "base", base)
        object.__setattr__(self, "k", k)

    def _identity(self):
        return (self.relation, self.base, self.k)

    def _spec_node(self):
        if self.relation == REPLACE_ONE and self.base.relation == ADD_REMOVE:
            return {"type": "ToReplaceOne", "mechanism": self.base._spec_node()}
        return super()._spec_node()

    def _spec_args(self):
        return {"mechanism": self.base, "k": self.k}


class GroupPrivacy(Transformer):
    """``GroupPrivacy()(mechanism, k)``: the guarantee for datasets joined by
    at most k steps of the mechanism's relation."""

    name = "Group"

    def __call__(self, mechanism: Mechanism, k: int) -> Mechanism:
        mechanism = check_mechanism("mechanism", mechanism)
        k = v.count("k", k)
        return GroupMechanism(mechanism, k, group_relation(mechanism.relation, k))


class ToReplaceOne(Transformer):
    """``ToReplaceOne()(mechanism)``: an add/remove mechanism's guarantee for
    replace-one neighbours (group privacy of 2, module docstring)."""

    name = "ToReplaceOne"

    def __call__(self, mechanism: Mechanism) -> Mechanism:
        mechanism = require_relation("mechanism", check_mechanism("mechanism", mechanism), ADD_REMOVE,
                                     "it is converted to replace-one")
        return GroupMechanism(mechanism, 2, REPLACE_ONE)
