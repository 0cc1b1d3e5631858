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

import numpy as np

from . import validation as v
from .mechanism import Mechanism
from .mechanisms.standard import GaussianMechanism
from .pld.accountant import DIRECTIONS
from .pld.odometer import plan_directions
from .transformers.poisson_sampling import PoissonSampling


class PrivacyOdometer:
    """Online privacy accounting: ``step(mechanism)`` then ``get_approx_delta(eps)``
    or ``get_approxDP(delta)`` at any time; every answer is an upper bound.

    ``horizon`` is the longest composition you plan (a ``Mechanism``, e.g.
    ``Composition()([sgd_step], [T])``); it fixes the grid and the neighbouring
    relation. Steps may be any mechanisms of that relation with dominating
    pairs, in any order and mix. Opacus-style: ``step(noise_multiplier=σ,
    sample_rate=q)`` is one Poisson-subsampled Gaussian step, and
    ``get_epsilon(delta)`` is ``get_approxDP``.

    Queries: δ(ε) of one ε by Plancherel in O(live frequencies) (the weights'
    transform cached per ε); arrays, and every ε(δ), from the composed grid,
    rebuilt by one inverse transform after each step that changed it.
    ``state_dict()``/``load_state_dict()`` keep the steps taken (not the
    grids, which are rebuilt): small, picklable, replayable."""

    _STATE_VERSION = 1

    def __init__(self, horizon, accuracy=1e-3, tail=1e-30):
        if not isinstance(horizon, Mechanism):
            raise TypeError(f"horizon must be a dpaccount Mechanism, got {horizon!r}")
        accuracy = v.in_interval("accuracy", accuracy, 0.0, 1.0)
        tail = v.in_interval("tail", tail, 0.0, 1e-6)
        self._dirs = plan_directions(horizon.pairs, accuracy, tail)
        self._horizon, self._accuracy, self._tail = horizon, accuracy, tail
        self._steps, self._log, self._grids = 0, {}, None

    @property
    def steps(self):
        """How many steps have been taken."""
        return self._steps

    @property
    def relation(self):
        """The neighbouring relation of the horizon, and of every step."""
        return self._horizon.relation

    def __repr__(self):
        size = max(s.size for s in self._dirs.values())
        return (f"<PrivacyOdometer {self._steps} steps of horizon {self._horizon.name} "
                f"({self.relation}; grid of {size} points per direction)>")

    def step(self, mechanism=None, count=1, *, noise_multiplier=None, sample_rate=None):
        """Compose ``mechanism`` (``count`` times) into the running total; or,
        without it, a Poisson-subsampled Gaussian step (``noise_multiplier``,
        ``sample_rate``)."""
        if mechanism is None:
            if noise_multiplier is None or sample_rate is None:
                raise TypeError("step() needs a mechanism, or both noise_multiplier and sample_rate, "
                                f"got noise_multiplier={noise_multiplier!r}, sample_rate={sample_rate!r}")
            mechanism = PoissonSampling()(GaussianMechanism(sigma=noise_multiplier), sample_rate)
        elif noise_multiplier is not None or sample_rate is not None:
            raise TypeError("step() takes a mechanism or noise_multiplier/sample_rate, not both")
        if not isinstance(mechanism, Mechanism):
            raise TypeError(f"mechanism must be a dpaccount Mechanism, got {mechanism!r}")
        if mechanism.relation != self.relation:
            raise ValueError(f"mechanism is about {mechanism.relation} neighbours, the odometer's horizon "
                             f"about {self.relation}: their guarantees do not compose")
        count = v.count("count", count)
        pairs = mechanism.pairs
        for d in DIRECTIONS:
            for pair, k in pairs.direction(d):
                self._dirs[d].add(pair, k * count)
        self._steps += count
        self._log[mechanism] = self._log.get(mechanism, 0) + count
        self._grids = None
        if max(s.above_window() for s in self._dirs.values()) > 1e3 * self._tail:
            warnings.warn("the odometer has gone past its horizon: answers stay upper bounds but "
                          "loosen; plan a longer horizon", RuntimeWarning, stacklevel=2)
        return self

    def _composed(self):
        """The composed grid of each direction (None before the first step)."""
        if self._grids is None and self._steps:
            self._grids = [s.grid() for s in self._dirs.values()]
        return self._grids

    def get_approx_delta(self, eps):
        """δ(ε) of everything composed so far (an upper bound; vectorised over ε ≥ 0)."""
        epss, scalar = v.real_array("eps", eps, lambda n, x: v.in_interval(n, x, 0.0, math.inf, lo_open=False))
        if not self._steps:
            out = np.zeros(epss.shape)
        elif scalar:
            out = np.array(max(s.delta(float(epss.ravel()[0])) for s in self._dirs.values()))
        else:
            out = np.maximum.reduce([g.delta(epss) for g in self._composed()])
        return float(np.ravel(out)[0]) if scalar else out

    def get_approxDP(self, delta):
        """ε(δ) of everything composed so far (an upper bound; vectorised over δ ∈ (0, 1))."""
        deltas, scalar = v.real_array("delta", delta, lambda n, x: v.in_interval(n, x, 0.0, 1.0))
        if not self._steps:
            out = np.zeros(deltas.shape)
        else:
            out = np.maximum.reduce([np.asarray(g.epsilon(deltas), dtype=float) for g in self._composed()])
        return float(np.ravel(out)[0]) if scalar else out

    def get_epsilon(self, delta):
        """Opacus-style name of ``get_approxDP``."""
        return self.get_approxDP(delta)

    def state_dict(self):
        """The odometer's state: its plan and the steps taken (each distinct
        mechanism with its count), not its grids. Picklable."""
        return {"version": self._STATE_VERSION, "horizon": self._horizon, "accuracy": self._accuracy,
                "tail": self._tail, "steps": list(self._log.items())}

    def load_state_dict(self, state):
        """Replace this odometer's state by ``state`` (from ``state_dict``): the
        grid is re-planned from its horizon and the steps are replayed
        (composition commutes, so each distinct step is composed once, powered)."""
        if not isinstance(state, dict) or state.get("version") != self._STATE_VERSION:
            raise ValueError(f"state must be a PrivacyOdometer.state_dict() of version "
                             f"{self._STATE_VERSION}, got {type(state).__name__}")
        fresh = PrivacyOdometer(state["horizon"], state["accuracy"], state["tail"])
        for mechanism, count in state["steps"]:
            fresh.step(mechanism, count)
        self.__dict__.update(fresh.__dict__)
        return self
