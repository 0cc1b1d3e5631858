"""Discrete-noise mechanisms and mechanisms known by a guarantee, each with its tight pairs and RDP.

Neighbouring relation: add/remove one record by default. The remove
direction is dominated by (law with the record, law without), the add
direction by the reverse pair (``pld/pairs/zoo.py`` builds the pairs). Each
mechanism below takes ``relation=`` (``relations.py``): the sensitivity (or
the guarantee of ``PureDP``/``ApproxDP``, the utility's sensitivity of
``Exponential``) is then understood over those neighbours. Their pairs are
symmetric — the reverse pair has the same hockey-stick curve at every ε (a
reflection x ↦ Δ − x of symmetric noise; the relabelling of outcomes of the
KOV and logistic pairs) — so under replace-one each direction carries the
pair itself, which dominates both orders of every neighbouring pair.

* ``DiscreteGaussianMechanism(sigma, sensitivity)`` — Canonne, Kamath &
  Steinke 2020; RDP ε(α) ≤ αΔ²/(2σ²) (their Prop. 5 / Cor. 9, Δ integer).
* ``DiscreteLaplaceMechanism(t, sensitivity)`` — noise P(x) ∝ e^{−|x|/t} on Z
  (scale t; ε₀ = Δ/t); exact finite pair, exact RDP.
* ``PureDPMechanism(eps)`` — any ε-DP mechanism: randomized response with
  p = e^ε/(1+e^ε) (Kairouz, Oh & Viswanath 2015); RDP of that pair.
* ``ApproxDPMechanism(eps, delta)`` — any (ε, δ)-DP mechanism: the leaky
  randomized response of KOV 2015; no finite RDP when δ > 0.
* ``ExponentialMechanism(eps)`` — selection ∝ exp(ε u/2), sensitivity-1
  utility: ε-bounded range, dominated by the logistic pair (Dong, Durfee &
  Rogers 2020; Zhu, Dong & Wang 2022); RDP: the tight bound of ε-BR
  mechanisms (Cesar & Rogers 2021, ``rdp/zoo.py``).

User-given pairs (``DiscreteMechanism``, ``ContinuousMechanism``) are in
``user_defined.py``; they share ``PairMechanism``.
"""


from __future__ import annotations

from typing import Optional

from .. import validation as v
from ..mechanism import Mechanism
from ..pld.pairs.composition import PairComposition
from ..pld.pairs.zoo import LogisticPair, discrete_gaussian_pair, discrete_laplace_pair, leaky_rr_pair
from ..rdp.curve import RDPCurve, discrete_pair_rdp, gaussian_rdp
from ..rdp.zoo import bounded_range_rdp, max_rdp
from ..relations import ADD_REMOVE, RelationLike, with_relation


class PairMechanism(Mechanism):
    """A mechanism given by one remove pair (``self._pair()``); add = reverse."""

    def _setup(self, name, relation=None, **params):
        """``Mechanism.__init__`` with ``params`` (and ``relation``, for a
        symmetric pair), each also an attribute."""
        Mechanism.__init__(self, name, *with_relation(params, relation))
        for key, val in params.items():
            object.__setattr__(self, key, val)

    def _pair(self):
        raise NotImplementedError

    def _pairs(self):
        pair = self._cached("pair", self._pair)
        if self.relation != ADD_REMOVE:  # set only by the symmetric pairs (module docstring)
            return PairComposition.single(pair, pair)
        return PairComposition.single(pair, pair.reverse())

    def _exact_rdp(self):
        """RDP of a finite pair, exact, valid for both directions."""
        pair = self._cached("pair", self._pair)
        fwd = discrete_pair_rdp(pair._log_p, pair._log_q, pair.key(), pair._log_err)
        back = discrete_pair_rdp(pair._log_q, pair._log_p, ("reversed",) + pair.key(), pair._log_err[::-1])
        return RDPCurve(((max_rdp(fwd, back), 1),))


class DiscreteGaussianMechanism(PairMechanism):
    """Adds discrete Gaussian noise N_Z(0, σ²) to an integer query of
    sensitivity Δ (Canonne, Kamath & Steinke 2020)."""

    _spec_type = "DiscreteGaussianMechanism"

    def __init__(self, sigma: float, sensitivity: int = 1, relation: Optional[RelationLike] = None) -> None:
        self._setup("DiscreteGaussian", relation, sigma=v.positive("sigma", sigma),
                    sensitivity=v.count("sensitivity", sensitivity))

    def _pair(self):
        return discrete_gaussian_pair(self.sigma, self.sensitivity)

    def _rdp(self):
        # CKS 2020: D_α(N_Z(Δ,σ²) || N_Z(0,σ²)) ≤ αΔ²/(2σ²), both orders
        return RDPCurve(((gaussian_rdp(self.sensitivity / self.sigma), 1),))


class DiscreteLaplaceMechanism(PairMechanism):
    """Adds discrete Laplace noise, P(x) ∝ exp(−|x|/t) on the integers (scale
    t), to an integer query of sensitivity Δ: pure ε₀-DP with ε₀ = Δ/t."""

    _spec_type = "DiscreteLaplaceMechanism"
    t: float
    sensitivity: int

    def __init__(self, t: float, sensitivity: int = 1, relation: Optional[RelationLike] = None) -> None:
        self._setup("DiscreteLaplace", relation, t=v.positive("t", t),
                    sensitivity=v.count("sensitivity", sensitivity))
        object.__setattr__(self, "eps0", self.sensitivity / self.t)

    def _pair(self):
        return discrete_laplace_pair(self.t, self.sensitivity)

    def _rdp(self):
        return self._exact_rdp()


class ApproxDPMechanism(PairMechanism):
    """Any (ε, δ)-DP mechanism, through the pair that dominates them all
    (Kairouz, Oh & Viswanath 2015, Thm 2.1). RDP: none when δ > 0 (P has
    mass where Q has none)."""

    _spec_type = "ApproxDPMechanism"

    def __init__(self, eps: float, delta: float, relation: Optional[RelationLike] = None) -> None:
        self._setup("ApproxDP", relation, eps=v.nonnegative("eps", eps),
                    delta=v.probability("delta", delta, hi_open=True))

    def _pair(self):
        return leaky_rr_pair(self.eps, self.delta)

    def _rdp(self):
        return self._exact_rdp() if self.delta == 0 else None


class PureDPMechanism(ApproxDPMechanism):
    """Any ε-DP mechanism: dominated by randomized response with
    p = e^ε/(1+e^ε) (KOV 2015; the talk's list of known pairs)."""

    _spec_type = "PureDPMechanism"

    def __init__(self, eps: float, relation: Optional[RelationLike] = None) -> None:
        self._setup("PureDP", relation, eps=v.positive("eps", eps))
        object.__setattr__(self, "delta", 0.0)


class ExponentialMechanism(PairMechanism):
    """The exponential mechanism (McSherry & Talwar 2007) choosing y with
    probability ∝ exp(ε u(D, y)/2) for a utility of sensitivity 1.

    It is ε-bounded-range (Durfee & Rogers 2019): the loss of any two
    neighbours lies in an interval of width ε. Every ε-BR mechanism is
    dominated by ``LogisticPair(eps)`` (Dong, Durfee & Rogers 2020, Lemma
    3.2, maximised over their t; "dominated by two logistic distributions",
    Zhu, Dong & Wang 2022 talk), tight for one use and below the ε-DP
    randomized-response pair. RDP: the worst two-outcome ε-BR pair's, below
    the logistic pair's (Cesar & Rogers 2021; ``rdp/zoo.bounded_range_rdp``).
    """

    _spec_type = "ExponentialMechanism"

    def __init__(self, eps: float, relation: Optional[RelationLike] = None) -> None:
        self._setup("Exponential", relation, eps=v.positive("eps", eps))

    def _pair(self):
        return LogisticPair(self.eps)

    def _pairs(self):
        pair = self._pair()
        return PairComposition.single(pair, pair)  # symmetric

    def _rdp(self):
        return RDPCurve(((bounded_range_rdp(self.eps), 1),))
