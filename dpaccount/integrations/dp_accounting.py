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

from typing import Any, List, Tuple

from ._host import require

_dp = require("dp_accounting", "dp-accounting")

from ..dp_events import UnsupportedEvent  # noqa: E402
from ..queries import DEFAULT_ACCURACY  # noqa: E402
from ..specs import from_dp_event  # noqa: E402
from ..transformers.composition import Composition  # noqa: E402
from ..mechanism import Mechanism  # noqa: E402
from ..mechanisms.trivial import NoOpMechanism  # noqa: E402


class DpaccountAccountant(_dp.PrivacyAccountant):  # type: ignore[name-defined]  # the host library has no types
    """dp_accounting's accountant interface over dpaccount's mechanisms (module docstring)."""

    def __init__(self, neighboring_relation: Any = _dp.NeighboringRelation.ADD_OR_REMOVE_ONE,
                 accuracy: float = DEFAULT_ACCURACY) -> None:
        super().__init__(neighboring_relation)
        self._accuracy = accuracy
        self._parts: List[Tuple[Mechanism, int]] = []  # (mechanism, count), in the order composed

    def _maybe_compose(self, event: Any, count: int, do_compose: bool) -> Any:
        try:
            mechanism = from_dp_event(event, self.neighboring_relation)
        except (UnsupportedEvent, ValueError, TypeError) as exc:
            return self.CompositionErrorDetails(invalid_event=event, error_message=str(exc))
        if do_compose and count > 0:
            self._parts.append((mechanism, int(count)))
        return None

    def mechanism(self) -> Mechanism:
        """The dpaccount mechanism of everything composed so far."""
        if not self._parts:
            return NoOpMechanism(relation=from_dp_event(_dp.NoOpDpEvent(), self.neighboring_relation).relation)
        return Composition()([m for m, _ in self._parts], [k for _, k in self._parts])

    def get_epsilon(self, target_delta: float) -> float:
        return float(self.mechanism().get_approxDP(target_delta, accuracy=self._accuracy))

    def get_delta(self, target_epsilon: float) -> float:
        return float(self.mechanism().get_approx_delta(target_epsilon, accuracy=self._accuracy))
