"""``PrivacyOdometer``: online accounting, one step at a time.

Steps are composed into a running spectrum per direction and queries are
answered by Plancherel (Koskela & Honkela 2021, Sec. 6, Lemma 14) without an
inverse transform: the engine, and why its answers are upper bounds, is in
``pld/odometer.py``. The grid is planned once from a ``horizon``: the longest
composition you expect; going beyond it stays sound, only looser, and a
warning says so.
"""
import math
import warnings

from . import validation as v
from .converters.hockey_stick import hockey_stick_to_epsilon
from .mechanism import Mechanism
from .pld.accountant import DIRECTIONS
from .pld.odometer import plan_directions


class PrivacyOdometer:
    """Online privacy accounting: ``step(mechanism)`` then ``get_approx_delta(eps)``
    or ``get_approxDP(delta)`` at any time; every answer is an upper bound.

    ``horizon`` is the longest composition you plan (a ``Mechanism``, e.g.
    ``Composition()([sgd_step], [T])``); it fixes the grid. Steps may be any
    mechanisms with dominating pairs, in any order and mix."""

    def __init__(self, horizon, accuracy=1e-3, tail=1e-30):
        if not isinstance(horizon, Mechanism):
            raise TypeError(f"horizon must be a dpaccount Mechanism, got {horizon!r}")
        accuracy = v.in_interval("accuracy", accuracy, 0.0, 1.0)
        tail = v.in_interval("tail", tail, 0.0, 1e-6)
        self._dirs = plan_directions(horizon.pairs, accuracy, tail)
        self._steps, self._horizon_tail = 0, tail

    @property
    def steps(self):
        """How many steps have been taken."""
        return self._steps

    def step(self, mechanism, count=1):
        """Compose ``mechanism`` (``count`` times) into the running total."""
        if not isinstance(mechanism, Mechanism):
            raise TypeError(f"mechanism must be a dpaccount Mechanism, got {mechanism!r}")
        count = v.count("count", count)
        pairs = mechanism.pairs
        for d in DIRECTIONS:
            for pair, k in pairs.direction(d):
                self._dirs[d].add(pair, k * count)
        self._steps += count
        if max(s.above_window() for s in self._dirs.values()) > 1e3 * self._horizon_tail:
            warnings.warn("the odometer has gone past its horizon: answers stay upper bounds but "
                          "loosen; plan a longer horizon", RuntimeWarning, stacklevel=2)
        return self

    def get_approx_delta(self, eps):
        """δ(ε) of everything composed so far (an upper bound)."""
        eps = v.in_interval("eps", eps, 0.0, math.inf, lo_open=False)
        return max(s.delta(eps) for s in self._dirs.values())

    def get_approxDP(self, delta):
        """ε(δ) of everything composed so far (an upper bound), by bisection."""
        delta = v.in_interval("delta", delta, 0.0, 1.0)
        return hockey_stick_to_epsilon(self.get_approx_delta, delta, iterations=60)
