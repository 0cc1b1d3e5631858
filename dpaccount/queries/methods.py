"""The ``method=`` values of a ``Mechanism``'s queries and how each answers: one table, tightest first.

Each ``QueryMethod`` says which queries it answers, whether it is chosen by
default, whether it is an approximation, when it applies and how it answers.
Without ``method=`` a query takes the first method of ``METHOD_TABLE`` that is
chosen by default and applies:

1. ``"analytic"`` — exact closed form: every pair is Gaussian, so the
   mechanism is μ-GDP (``converters/gdp.py``), or each direction is a single
   pair whose hockey-stick curve is known exactly (``pld/pairs/base.py``,
   ``pld/pairs/poisson_sampling.py``; ε by ``converters/hockey_stick.py``);
2. ``"pld"``      — the certified privacy profile (``pld/profiles/profile.py``): a
   few composed grids shared by every query, a rigorous upper bound; where
   each direction is a small composition of finite pairs (and at most one
   other pair, or Gaussians) the exact sum over its atoms instead
   (``pld/profiles/exact_sum.py``: no grid, certified to ~1e-11);
3. ``"rdp"``      — the RDP conversion (``converters/rdp_to_dp.py``), an upper bound.

``"cf"`` (never the default, not in ``available_methods``) inverts the
characteristic function (``cf/queries.py``): value + its error, a bound where
every pair's M is a closed form or a finite sum (then ``Bounds.certified``),
an *estimate* otherwise (Poisson subsampling, atoms on no common lattice), said
with an ``ApproximationWarning`` by its ``*_bounds``.
``"clt"`` (never the default, not in ``available_methods``) is the central
limit theorem of Bu, Dong, Long & Su (2020) for compositions of
Poisson-subsampled Gaussians (``fdp.py``): an *approximation*; it warns
(``ApproximationWarning``) whenever its answer is on the unsafe side of the
certified one.

The default route has two settings of its own (``QueryMethod.floors``,
``QueryMethod.rdp_where_infinite``): where the grid a relative accuracy asks for
exceeds the cap and RDP puts every answer below ``Floors`` (ε < 1e-3,
δ < 1e-12), "pld" answers at the finest accuracy whose grid fits
(``within_cap``); where pairs that cut a heavy tail to +∞ say ε = +∞ and RDP is
finite, the smaller of the two (``route.finite_by_rdp``).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, FrozenSet, Iterator, Optional, Tuple

import numpy as np

from ..converters.gdp import delta_gdp, epsilon_gdp
from ..converters.rdp_to_dp import rdp_to_delta, rdp_to_epsilon
from ..errors import AccuracyWarning, GridTooLarge, RDPFallbackWarning, RepresentationUnavailable
from ..pld.profiles.exact_sum import delta_bounds as exact_delta_bounds
from ..pld.profiles.exact_sum import epsilon_bounds as exact_epsilon_bounds
from .intervals import analytic_interval, cf_interval, grid_interval

if TYPE_CHECKING:
    from .at import At

FROM_RDP = "so this answer comes from RDP: an upper bound, looser than a privacy-loss grid's"
EPSILON, DELTA, INTERVAL, FDP = "epsilon", "delta", "interval", "fdp"  # the queries a method answers


@dataclass(frozen=True)
class Floors:
    """Where RDP's upper bound on every answer is below these, the default route answers at
    the finest accuracy whose grid fits, where the accuracy asked would exceed the cap
    (``within_cap``): its error is then below accuracy·floor."""

    epsilon: float
    delta: float


@dataclass(frozen=True)
class QueryMethod:
    """One ``method=``: its ``name``, the queries it ``answers``, whether the default may
    choose it (``by_default``; else opt-in and not in ``available_methods``), when it
    ``applies``, and how it answers: ``epsilon`` / ``delta`` (at, values, accuracy, floor:
    the default's ``floors``, else None) and ``interval`` (certified; None: none).
    ``approximation``: for a method whose answers are not bounds, what it is called in
    the warning where an answer falls on the unsafe side of the certified default's."""

    name: str
    answers: FrozenSet[str]
    by_default: bool
    applies: Callable[[At], bool]
    epsilon: Callable[[At, Any, float, Optional[float]], Any]
    delta: Callable[[At, Any, float, Optional[float]], Any]
    interval: Optional[Callable[..., Any]] = None
    floors: Optional[Floors] = None  # by default: answers near 0 relaxed to the grid that fits (``within_cap``)
    rdp_where_infinite: bool = False  # by default: a +∞ of pairs cut to +∞ met by a finite RDP bound
    approximation: Optional[Callable[[At], str]] = None


def _cf():
    """cf/queries.py, imported on the first ``method="cf"`` query (opt-in): not at ``import dpaccount``."""
    from ..cf import queries
    return queries


def _has_pairs(at):
    return at.optional_pairs() is not None


def _rdp_finite(at):
    return at.mechanism.optional("rdp") is not None and bool(np.isfinite(at.mechanism.rdp(2.0)))


def _pld_epsilon(at, deltas, accuracy, floor):
    if at.exact_sum() is not None:
        return exact_epsilon_bounds(at.exact_sum(), deltas.ravel())[1]
    return within_cap(at, lambda acc: at.profile(acc).epsilon(deltas), accuracy, floor,
                      lambda: [rdp_to_epsilon(at.mechanism.rdp, float(d)) for d in deltas.ravel()], deltas.shape)


def _pld_delta(at, epss, accuracy, floor):
    if at.exact_sum() is not None:
        return exact_delta_bounds(at.exact_sum(), epss.ravel())[1]
    return within_cap(at, lambda acc: at.profile(acc).delta(epss), accuracy, floor,
                      lambda: [rdp_to_delta(at.mechanism.rdp, float(e)) for e in epss.ravel()], epss.shape)


def _clt_epsilon(at, deltas, accuracy, floor):
    mu = clt_mu(at)
    return np.array([epsilon_gdp(float(d), mu) for d in deltas.ravel()])


def _clt_delta(at, epss, accuracy, floor):
    return delta_gdp(epss.ravel(), clt_mu(at))


METHOD_TABLE: Tuple[QueryMethod, ...] = (  # the order of preference: tightest first
    QueryMethod(
        "analytic", frozenset({EPSILON, DELTA, INTERVAL, FDP}), True,
        lambda at: _has_pairs(at) and (at.pairs.gaussian_mu is not None or at.single_pairs() is not None),
        lambda at, deltas, accuracy, floor: np.array([at.analytic_epsilon(float(d)) for d in deltas.ravel()]),
        lambda at, epss, accuracy, floor: at.analytic_delta(epss.ravel()),
        interval=analytic_interval, rdp_where_infinite=True),
    QueryMethod(
        "pld", frozenset({EPSILON, DELTA, INTERVAL, FDP}), True, _has_pairs, _pld_epsilon, _pld_delta,
        interval=grid_interval, floors=Floors(epsilon=1e-3, delta=1e-12), rdp_where_infinite=True),
    QueryMethod(
        "rdp", frozenset({EPSILON, DELTA}), True, _rdp_finite,
        lambda at, deltas, accuracy, floor: np.array([rdp_to_epsilon(at.mechanism.rdp, d) for d in deltas.ravel()]),
        lambda at, epss, accuracy, floor: np.array([rdp_to_delta(at.mechanism.rdp, e) for e in epss.ravel()])),
    QueryMethod(
        "cf", frozenset({EPSILON, DELTA, INTERVAL}), False, _has_pairs,
        lambda at, deltas, accuracy, floor: _cf().cf_query(at, deltas, "get_approxDP"),
        lambda at, epss, accuracy, floor: _cf().cf_query(at, epss, "get_approx_delta"), interval=cf_interval),
    QueryMethod(
        "clt", frozenset({EPSILON, DELTA, FDP}), False, _has_pairs, _clt_epsilon, _clt_delta,
        approximation=lambda at: f"the CLT (μ = {clt_mu(at):.6g})"),
)
METHODS = tuple(s.name for s in METHOD_TABLE)
_BY_NAME = {s.name: s for s in METHOD_TABLE}


def clt_mu(at: At) -> float:
    """μ of the CLT (``fdp.clt_mu_of``) of ``at``'s pairs."""
    from ..fdp import clt_mu_of  # fdp.py on the first CLT query: not at ``import dpaccount``
    return clt_mu_of(at)


def named(method: str) -> QueryMethod:
    """The ``QueryMethod`` called ``method`` (one of ``METHODS``)."""
    return _BY_NAME[method]


def available(at: At) -> Iterator[QueryMethod]:
    """The methods the default may choose that apply, tightest first (lazily: the
    default needs only the first)."""
    return (s for s in METHOD_TABLE if s.by_default and s.applies(at))


def choose(at: At, method: object) -> QueryMethod:
    """The ``QueryMethod`` ``method`` names (None: the first available, with the RDP fallback's
    warning where that is "rdp"); TypeError / ValueError for no method's name,
    RepresentationUnavailable where it does not apply."""
    if method is None:
        first = next(available(at), None)
        if first is None:
            raise RepresentationUnavailable(f"no accountant applies to {at.name}")
        if first.name == "rdp":
            warnings.warn(f"{at.name} has no dominating pair (a part known through RDP only, such "
                          f"as zCDP or repeat-and-select, or whose pairs no grid can hold), {FROM_RDP}",
                          RDPFallbackWarning, stacklevel=5)
        return first
    if not isinstance(method, str):
        raise TypeError(f"method must be a string, got {method!r}")
    if method not in _BY_NAME:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    chosen = _BY_NAME[method]
    if chosen.by_default and not any(s is chosen for s in available(at)):  # lazily: stops at the match
        raise RepresentationUnavailable(f"method={method!r} does not apply to {at.name}; "
                                        f"available: {[s.name for s in available(at)]}")
    return chosen


def within_cap(at: At, ask: Callable[[float], Any], accuracy: float, floor: Optional[float],
               by_rdp: Callable[[], Any], shape: Tuple[int, ...]) -> Any:
    """``ask(accuracy)``, a privacy profile's certified upper bounds. A relative accuracy
    of an answer near 0 asks for a vanishing grid step: where the grid ``accuracy`` needs
    exceeds the cap and RDP's upper bound R on every answer is below ``floor`` (the default
    route's ``Floors``), the tightest certified bound that fits instead — ``ask`` at the
    finest accuracy a' whose grid fits (``GridTooLarge.accuracy``), or R where smaller —
    with an ``AccuracyWarning`` naming the accuracy asked and a' (its error a'·answer <
    a'·floor). Otherwise (no RDP curve, an answer not known to be near 0, an explicit
    method: ``floor`` None) ``GridTooLarge`` stands."""
    try:
        return ask(accuracy)
    except GridTooLarge as exc:
        if floor is None or exc.accuracy is None or at.mechanism.optional("rdp") is None:
            raise
        rdp = np.reshape(np.asarray(by_rdp(), dtype=float), shape)
        if not float(np.max(rdp)) < floor:
            raise
        relaxed, reason = exc.accuracy, exc
    while True:  # each coarser level costs 4× the accuracy: the estimate may be one level short
        try:
            out = np.asarray(ask(relaxed), dtype=float)
            break
        except GridTooLarge as exc:
            if exc.accuracy is None or exc.accuracy <= relaxed:
                raise
            relaxed = exc.accuracy
    warnings.warn(f"{at.name}: {str(reason).rstrip('.')}. The answer is below {floor:g} (by RDP): answered "
                  f"at accuracy={relaxed:.2g}, or by RDP where smaller; a certified upper bound", AccuracyWarning,
                  stacklevel=6)
    return np.minimum(out.reshape(shape), rdp)
