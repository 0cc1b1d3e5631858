"""``PrivacyOdometer``: online accounting, one step at a time.

Steps are composed into a running spectrum per direction and queries are
answered by Plancherel (Koskela & Honkela 2021, Sec. 6, Lemma 14) without an
inverse transform: the engine, and why its answers are upper bounds, is in
``pld/grids/odometer.py``. The grid is planned from a ``horizon``: the longest
composition you expect. A step the grid does not suit — past the horizon
(the window would lose mass), wider than the window, or so unlike the
horizon that the step is too coarse for it — re-plans the grid for the steps
taken (twice as many, for room to grow, and the horizon) and replays them:
a few re-plans over a run, each O(distinct steps · n log n). A step that is
refused (bad input, or no grid within the cap) changes nothing.
"""
from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING, Any, Dict, Optional, Union, overload

import numpy as np

from . import validation as v
from .errors import AccuracyWarning
from .mechanism import Mechanism
from .mechanisms.standard import GaussianMechanism
from .pld.pairs.composition import DIRECTIONS, PairComposition, no_finite_mass
from .pld.grids.odometer import online_step, plan_directions
from .transformers.poisson_sampling import PoissonSampling

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray
    from .relations import AnyRelation


class PrivacyOdometer:
    """Online privacy accounting: ``step(mechanism)`` then ``get_approx_delta(eps)``
    or ``get_approxDP(delta)`` at any time; every answer is an upper bound.

    ``horizon`` is the longest composition you plan (a ``Mechanism``, e.g.
    ``Composition()([sgd_step], [T])``); it fixes the grid and the neighbouring
    relation. Steps may be any mechanisms of that relation with dominating
    pairs, in any order and mix. Opacus-style: ``step(noise_multiplier=σ,
    sample_rate=q)`` is one Poisson-subsampled Gaussian step, and
    ``get_epsilon(delta)`` is ``get_approxDP``. Steps past the horizon or
    unlike it re-plan the grid (module docstring): answers stay within the
    accuracy of the offline ``Composition`` of the steps taken.

    Queries: δ(ε) of one ε by Plancherel in O(live frequencies) (the weights'
    transform cached per ε); arrays, and every ε(δ), from the composed grid,
    rebuilt by one inverse transform after each step that changed it.
    ``state_dict()``/``load_state_dict()`` keep the steps taken and the plan
    (not the grids, which are rebuilt): small, picklable, replayable."""

    _STATE_VERSION = 2
    _STATE_KEYS = ("version", "horizon", "accuracy", "tail", "steps")
    _log: Dict[Mechanism, int]  # each distinct step taken, and its count
    _plan: Dict[Mechanism, int]  # the steps the grid was last planned for

    def __init__(self, horizon: Mechanism, accuracy: float = 1e-3, tail: float = 1e-30) -> None:
        if not isinstance(horizon, Mechanism):
            raise TypeError(f"horizon must be a dpaccount Mechanism, got {horizon!r}")
        accuracy = v.in_interval("accuracy", accuracy, 0.0, 1.0)
        tail = v.in_interval("tail", tail, 0.0, 1e-6)
        if _disjoint(horizon):
            raise ValueError(f"horizon {horizon.name} tells the neighbours apart surely (ε = ∞): nothing to plan")
        self._horizon, self._accuracy, self._tail = horizon, accuracy, tail
        self._steps, self._log, self._grids, self._plan, self._planned_at = 0, {}, None, {}, 0
        self._dirs = self._planned(self._plan)

    @property
    def steps(self) -> int:
        """How many steps have been taken."""
        return self._steps

    @property
    def relation(self) -> AnyRelation:
        """The neighbouring relation of the horizon, and of every step."""
        return self._horizon.relation

    def __repr__(self) -> str:
        size = max(s.size for s in self._dirs.values())
        return (f"<PrivacyOdometer {self._steps} steps of horizon {self._horizon.name} "
                f"({self.relation}; grid of {size} points per direction)>")

    def step(self, mechanism: Optional[Mechanism] = None, count: int = 1, *, noise_multiplier: Optional[float] = None,
             sample_rate: Optional[float] = None) -> PrivacyOdometer:
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
        parts = {d: [(pair, k * count) for pair, k in mechanism.pairs.direction(d)] for d in DIRECTIONS}
        log = {**self._log, mechanism: self._log.get(mechanism, 0) + count}
        if _disjoint(mechanism):  # its loss is +∞ surely, and so the composition's: δ ≡ 1 from now on
            dirs = self._dirs
        elif self._suits(parts, self._steps + count):
            dirs = self._dirs
            for d in DIRECTIONS:  # (every check is done: nothing below raises)
                for pair, k in parts[d]:
                    dirs[d].add(pair, k)
        else:  # re-plan for the steps taken, twice as many, and replay them (state set after: a failure changes none)
            dirs = self._planned(log, stacklevel=3)
            self._plan, self._planned_at = log, self._steps + count
        self._dirs, self._log, self._steps, self._grids = dirs, log, self._steps + count, None
        return self

    def _suits(self, parts, steps):
        """Whether the grid takes the step (``steps`` in all, then) without loosening:

        * the mass it leaves outside the window (``OnlineDirection.outside_after``) is
          at most 1e3·tail — or at most 1e-20 (far below any δ one asks of a float
          accountant) until the steps have grown by a quarter since the last plan: the
          Chernoff tilts tracked are coarser than the planner's exact ones, and this
          keeps their slack from re-planning at every step (re-plans stay geometric);
        * the grid step is at most twice the one the composition would be planned with
          (the coarser direction's, as ``online_step``): the discretisation error,
          ∝ step², at most 4× the planned one."""
        outside = max(s.outside_after(parts[d]) for d, s in self._dirs.items())
        tolerated = 1e3 * self._tail if steps >= 1.25 * self._planned_at else max(1e3 * self._tail, 1e-20)
        if outside > tolerated:
            return False
        wanted = max(s.step_wanted(parts[d], 0.1 * self._accuracy) for d, s in self._dirs.items())
        return self._dirs[DIRECTIONS[0]].step <= 2.0 * wanted

    def _planned(self, log, stacklevel=None):
        """Fresh directions planned for the horizon and twice the steps of ``log``, with
        those steps composed in; the step the finer of the horizon's and the log's."""
        taken = PairComposition((), ()).compose([(m.pairs, c) for m, c in log.items() if not _disjoint(m)])
        window = self._horizon.pairs.compose([(taken, 2)])
        step = online_step(self._horizon.pairs, self._accuracy, self._tail)
        if log:
            step = min(step, online_step(taken, self._accuracy, self._tail))
        dirs, coarsened = plan_directions(window, self._accuracy, self._tail, step)
        if coarsened and stacklevel:
            warnings.warn(f"the odometer's {sum(log.values())} steps need a grid beyond the cap at accuracy "
                          f"{self._accuracy!r}: answered from a coarser one (still upper bounds, looser)",
                          AccuracyWarning, stacklevel=stacklevel)
        for d in DIRECTIONS:
            if dirs[d].outside_after(taken.direction(d)) == math.inf:
                raise ValueError(f"this step's privacy loss reaches beyond anything the odometer can plan for "
                                 f"({dirs[d].size} grid points); the step is refused and nothing changed: "
                                 f"account such a run offline, Composition()(mechanisms, counts).get_approxDP(delta)")
            for pair, k in taken.direction(d):
                dirs[d].add(pair, k)
        return dirs

    def _composed(self):
        """The composed grid of each direction (None before the first step)."""
        if self._grids is None and self._steps:
            self._grids = [s.grid() for s in self._dirs.values()]
        return self._grids

    @overload
    def get_approx_delta(self, eps: float) -> float: ...  # type: ignore[overload-overlap]
    @overload
    def get_approx_delta(self, eps: ArrayLike) -> NDArray[np.float64]: ...
    def get_approx_delta(self, eps: ArrayLike) -> Union[float, NDArray[np.float64]]:
        """δ(ε) of everything composed so far (an upper bound; vectorised over ε ≥ 0)."""
        epss, scalar = v.real_array("eps", eps, 0.0, math.inf, lo_open=False)
        if not self._steps:
            out = np.zeros(epss.shape)
        elif any(map(_disjoint, self._log)):
            out = np.ones(epss.shape)
        elif scalar:
            out = np.array(max(s.delta(float(epss.ravel()[0])) for s in self._dirs.values()))
        else:
            out = np.maximum.reduce([g.delta(epss) for g in self._composed()])
        return float(np.ravel(out)[0]) if scalar else out

    @overload
    def get_approxDP(self, delta: float) -> float: ...  # type: ignore[overload-overlap]
    @overload
    def get_approxDP(self, delta: ArrayLike) -> NDArray[np.float64]: ...
    def get_approxDP(self, delta: ArrayLike) -> Union[float, NDArray[np.float64]]:
        """ε(δ) of everything composed so far (an upper bound; vectorised over δ ∈ (0, 1))."""
        deltas, scalar = v.real_array("delta", delta, 0.0, 1.0)
        if not self._steps:
            out = np.zeros(deltas.shape)
        elif any(map(_disjoint, self._log)):
            out = np.full(deltas.shape, np.inf)
        else:
            out = np.maximum.reduce([np.asarray(g.epsilon(deltas), dtype=float) for g in self._composed()])
        return float(np.ravel(out)[0]) if scalar else out

    def get_epsilon(self, delta: ArrayLike) -> Union[float, NDArray[np.float64]]:
        """Opacus-style name of ``get_approxDP``."""
        return self.get_approxDP(delta)

    def state_dict(self) -> Dict[str, Any]:
        """The odometer's state: its horizon, the steps taken (each distinct
        mechanism with its count) and those its grid was last planned for, not
        its grids. Picklable."""
        return {"version": self._STATE_VERSION, "horizon": self._horizon, "accuracy": self._accuracy,
                "tail": self._tail, "steps": list(self._log.items()), "plan": list(self._plan.items())}

    def load_state_dict(self, state: Dict[str, Any]) -> PrivacyOdometer:
        """Replace this odometer's state by ``state`` (from ``state_dict``): the
        grid is re-planned as it was and the steps are replayed (composition
        commutes, so each distinct step is composed once, powered). A state of
        version 1 (no plan) replays its steps one distinct step at a time. A
        state that is refused changes nothing."""
        if not isinstance(state, dict) or state.get("version") not in (1, self._STATE_VERSION):
            raise ValueError(f"state must be a PrivacyOdometer.state_dict() of version "
                             f"{self._STATE_VERSION}, got {_describe(state)}")
        missing = [k for k in self._STATE_KEYS + (("plan",) if state["version"] > 1 else ()) if k not in state]
        if missing:
            raise ValueError(f"state lacks {', '.join(map(repr, missing))}: not a PrivacyOdometer.state_dict()")
        steps, plan = (_steps(state, key) for key in ("steps", "plan"))
        fresh = PrivacyOdometer(state["horizon"], state["accuracy"], state["tail"])
        if state["version"] == 1:
            for mechanism, count in steps:
                fresh.step(mechanism, count)
        else:
            fresh._plan, fresh._planned_at = dict(plan), sum(c for _, c in plan)
            dirs = fresh._planned(fresh._plan)
            for mechanism, count in steps:  # the steps taken since the last plan, on top
                extra = 0 if _disjoint(mechanism) else count - fresh._plan.get(mechanism, 0)
                for d in DIRECTIONS:
                    for pair, k in (mechanism.pairs.direction(d) if extra > 0 else ()):
                        dirs[d].add(pair, k * extra)
            fresh._dirs, fresh._log, fresh._steps = dirs, dict(steps), sum(c for _, c in steps)
        self.__dict__.update(fresh.__dict__)
        return self


def _disjoint(mechanism):
    """Whether a pair of the mechanism has its loss at +∞ surely (P ⟂ Q: ε = ∞ at every δ < 1)."""
    return any(no_finite_mass(p) for d in DIRECTIONS for p, _ in mechanism.pairs.direction(d))


def _describe(state):
    return f"version {state.get('version')!r}" if isinstance(state, dict) else type(state).__name__


def _steps(state, key):
    """``state[key]`` checked: a list of (Mechanism, count) pairs."""
    items = state.get(key, [])
    if not isinstance(items, (list, tuple)) or not all(
            isinstance(it, (list, tuple)) and len(it) == 2 and isinstance(it[0], Mechanism) for it in items):
        raise ValueError(f"state[{key!r}] must be a list of (Mechanism, count) pairs, got {items!r:.80}")
    return [(m, v.count(f"state[{key!r}] count", c)) for m, c in items]
