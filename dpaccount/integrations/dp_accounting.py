"""``DpaccountAccountant``: a ``dp_accounting.PrivacyAccountant`` answered by dpaccount.

Swap one line — ``dp_accounting.pld.PLDAccountant()`` for
``DpaccountAccountant()`` — and every event composed is translated
(``dpaccount.from_dp_event``) into a mechanism; ``get_epsilon`` /
``get_delta`` are the composition's certified upper bounds (dpaccount's
default route: closed forms, then the privacy-loss grid, then RDP).
``supports(event)`` is True exactly for the events that translate. The
neighbouring relation is the accountant's, as in dp_accounting:
``ADD_OR_REMOVE_ONE`` (the default), ``REPLACE_ONE``, or ``REPLACE_SPECIAL``
(read as add/remove: ``dp_events.py``).
"""
from __future__ import annotations

import math
from typing import Any, List, Tuple

import numpy as np

from ._host import require
from ..numerics import ULP_OF_ONE

_dp = require("dp_accounting", "dp-accounting")

from .. import validation as v  # noqa: E402
from ..dp_events import UnsupportedEvent  # noqa: E402
from ..errors import RepresentationUnavailable  # noqa: E402
from ..queries import DEFAULT_ACCURACY  # noqa: E402
from ..specs import from_dp_event  # noqa: E402
from ..transformers.composition import Composition  # noqa: E402
from ..mechanism import Mechanism  # noqa: E402
from ..mechanisms.trivial import NoOpMechanism  # noqa: E402

_REFUSED = (UnsupportedEvent, RepresentationUnavailable, ValueError, TypeError, ArithmeticError)
_SUBEVENTS = ("events", "event")  # the fields that nest events (composed, self-composed, sampled, …)


def _subevents(event: Any) -> List[Any]:
    """The events nested in ``event`` (dp_accounting's composite events), in order."""
    for field in _SUBEVENTS:
        inner = getattr(event, field, None)
        if isinstance(inner, (list, tuple)):
            return list(inner)
        if isinstance(inner, _dp.DpEvent):
            return [inner]
    return []


def mass_at_infinity(mechanism: Mechanism) -> float:
    """P(L = +∞), an upper bound: 1 − Π(1 − p_∞)^k over each direction's pairs, the
    larger direction (the product in logs; log1p and expm1 err by ≤ 4 ulp each, padded
    upward by 16 ulp of the result); δ(ε) at the largest float where there are no pairs
    (δ(ε) decreases to P(L = +∞))."""
    pairs = mechanism.optional("pairs")
    if pairs is None:
        return float(mechanism.get_approx_delta(float(np.finfo(float).max)))
    worst = 0.0
    for direction in (pairs.remove, pairs.add):
        if any(p.p_inf >= 1.0 for p, _ in direction):
            return 1.0
        log_keep = math.fsum(k * math.log1p(-p.p_inf) for p, k in direction)
        worst = max(worst, -math.expm1(log_keep))
    return min(worst * (1 + 16 * ULP_OF_ONE), 1.0)


class DpaccountAccountant(_dp.PrivacyAccountant):  # type: ignore[name-defined]  # the host library has no types
    """dp_accounting's accountant interface over dpaccount's mechanisms (module docstring)."""

    def __init__(self, neighboring_relation: Any = _dp.NeighboringRelation.ADD_OR_REMOVE_ONE,
                 accuracy: float = DEFAULT_ACCURACY) -> None:
        super().__init__(neighboring_relation)
        self._accuracy = accuracy
        self._parts: List[Tuple[Mechanism, int]] = []  # (mechanism, count), in the order composed

    def _translate(self, event: Any) -> Any:
        return from_dp_event(event, self.neighboring_relation)

    def _maybe_compose(self, event: Any, count: int, do_compose: bool) -> Any:
        try:
            mechanism = self._translate(event)
        except _REFUSED as exc:
            offender, message = event, str(exc)
            while True:  # descend to the innermost sub-event that is refused on its own
                for sub in _subevents(offender):
                    try:
                        self._translate(sub)
                    except _REFUSED as inner:
                        offender, message = sub, str(inner)
                        break
                else:
                    break
            return self.CompositionErrorDetails(invalid_event=offender, error_message=message)
        if do_compose and count > 0:
            self._parts.append((mechanism, int(count)))
        return None

    def mechanism(self) -> Mechanism:
        """The dpaccount mechanism of everything composed so far."""
        if not self._parts:
            return NoOpMechanism(relation=from_dp_event(_dp.NoOpDpEvent(), self.neighboring_relation).relation)
        return Composition()([m for m, _ in self._parts], [k for _, k in self._parts])

    def get_epsilon(self, target_delta: float) -> float:
        """ε(δ), a certified upper bound. δ = 1: 0, or +∞ for a mechanism that reveals
        the data with probability 1 (dp_accounting's convention for non-private events)."""
        delta = v.in_interval("target_delta", target_delta, 0.0, 1.0, lo_open=False, hi_open=False)
        mechanism = self.mechanism()
        if delta == 1.0:
            return math.inf if mass_at_infinity(mechanism) >= 1.0 else 0.0
        return float(mechanism.get_approxDP(delta, accuracy=self._accuracy))

    def get_delta(self, target_epsilon: float) -> float:
        """δ(ε), a certified upper bound; ε = +∞: P(L = +∞) (``mass_at_infinity``)."""
        eps = v.in_interval("target_epsilon", target_epsilon, 0.0, math.inf, lo_open=False, hi_open=False)
        mechanism = self.mechanism()
        if eps == math.inf:
            return mass_at_infinity(mechanism)
        return float(mechanism.get_approx_delta(eps, accuracy=self._accuracy))
