"""The two ends of the scale: a mechanism that ignores the record, and one that
reveals it (dp_accounting's ``NoOpDpEvent`` and ``NonPrivateDpEvent``).

* ``NoOpMechanism()``: P = Q, so δ(ε) = 0 for every ε ≥ 0 and ε(δ) = 0;
  RDP 0 at every order.
* ``NonPrivateMechanism()``: the fully revealing pair, P and Q disjoint
  (P(L = +∞) = Q(L = −∞) = 1), so δ(ε) = 1 and ε(δ) = ∞ for every δ < 1; RDP
  ∞ at every order. It dominates every mechanism: composing with it gives no
  guarantee, as it should.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..mechanism import Mechanism
from ..pld.pairs.composition import PairComposition
from ..pld.pairs.discrete_pair import DiscretePair, identical_pair
from ..rdp.curve import RDPCurve, RDPFunction
from ..relations import RelationLike, with_relation


class NoOpMechanism(Mechanism):
    """A mechanism that does not look at the data: ε = 0."""

    _spec_type = "NoOpMechanism"

    def __init__(self, relation: Optional[RelationLike] = None) -> None:
        super().__init__("NoOp", *with_relation({}, relation))

    def _pairs(self):
        return PairComposition.single(identical_pair(), identical_pair())

    def _rdp(self):
        return RDPCurve(((RDPFunction(("no-op",), lambda a: np.zeros(np.shape(a))), 1),))


class NonPrivateMechanism(Mechanism):
    """A mechanism that reveals the data: ε = ∞ at every δ < 1."""

    _spec_type = "NonPrivateMechanism"

    def __init__(self, relation: Optional[RelationLike] = None) -> None:
        super().__init__("NonPrivate", *with_relation({}, relation))

    def _pairs(self):
        pair = DiscretePair(np.array([0.0, -np.inf]), np.array([-np.inf, 0.0]), name="revealing",
                            p_inf=1.0, q_ninf=1.0)
        return PairComposition.single(pair, pair)

    def _rdp(self):
        return RDPCurve(((RDPFunction(("non-private",), lambda a: np.full(np.shape(a), np.inf)), 1),))
