"""A query's route through the method table (``methods.py``) at one lattice precision.

``epsilon`` and ``delta`` answer ε(δ) and δ(ε) at ``At(mechanism, rho)``: the
method ``method=`` names (None: the tightest that applies), its answers
clipped to what the pure ε certifies, with the default route's settings
(``QueryMethod.floors``, ``QueryMethod.rdp_where_infinite``) and the check of an
approximate method against the certified default. ``bounds`` is the
certified interval (``intervals.py``); where it is still wider than its
accuracy and some pair is built at a ρ a finer one narrows (a
random-allocation epoch), it is asked again at ``precision.finer(rho)``.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable, Optional

import numpy as np

from ..converters.rdp_to_dp import rdp_to_epsilon
from ..errors import AccuracyNotReached, ApproximationWarning, RDPFallbackWarning, RepresentationUnavailable
from ..precision import finer
from ..progress import stage
from .at import At
from .intervals import DEFAULT_ACCURACY, Bounds, intersection, narrow, pure_interval, wider
from .methods import DELTA, EPSILON, FROM_RDP, INTERVAL, choose

EPSILON_STAGE, DELTA_STAGE = "epsilon(delta)", "delta(epsilon)"  # the plain queries' progress stages


def epsilon(at: At, deltas: Any, method: Optional[str], accuracy: float) -> Any:
    """ε(δ) at every δ of ``deltas`` (an array), an upper bound (``Queries.get_approxDP``)."""
    default, chosen = method is None, choose(at, method)
    if deltas.size == 0:
        return np.empty(deltas.shape)
    pure = at.pure_epsilon()
    if np.any(deltas == 0):  # the other methods answer δ > 0 only
        out: Any = np.full(deltas.shape, pure)
        some = deltas > 0
        if np.any(some):
            out[some] = np.minimum(_staged(epsilon, EPSILON_STAGE)(at, deltas[some], chosen.name, accuracy), pure)
        return out
    floor = chosen.floors.epsilon if default and chosen.floors else None
    out = chosen.epsilon(at, deltas, accuracy, floor)
    if chosen.approximation is not None:
        below = np.asarray(out).reshape(deltas.shape) < _staged(epsilon, EPSILON_STAGE)(at, deltas, None, accuracy)
        warn_if_unsafe(below, f"ε(δ) of {chosen.approximation(at)}", "below")
    out = np.clip(np.asarray(out, dtype=float).reshape(deltas.shape), 0.0, pure)
    if default and chosen.rdp_where_infinite:
        out = finite_by_rdp(at, out, deltas)
    return out


def delta(at: At, epss: Any, method: Optional[str], accuracy: float) -> Any:
    """δ(ε) at every ε of ``epss`` (an array), an upper bound (``Queries.get_approx_delta``)."""
    default, chosen = method is None, choose(at, method)
    if epss.size == 0:
        return np.empty(epss.shape)
    floor = chosen.floors.delta if default and chosen.floors else None
    out = chosen.delta(at, epss, accuracy, floor)
    if chosen.approximation is not None:
        below = np.asarray(out).reshape(epss.shape) < _staged(delta, DELTA_STAGE)(at, epss, None, accuracy)
        warn_if_unsafe(below, f"δ(ε) of {chosen.approximation(at)}", "below")
    out = np.clip(np.asarray(out, dtype=float).reshape(epss.shape), 0.0, 1.0)
    return np.where(epss >= at.pure_epsilon(), 0.0, out)  # δ(ε) = 0 from the pure ε on (exact)


def _staged(query, name):
    """``query`` as the stage a nested public query was (``progress.py``)."""
    return stage(name, steps=1)(query)


def warn_if_unsafe(unsafe: Any, what: str, side: str, stacklevel: int = 5) -> None:
    """An ``ApproximationWarning`` where an approximation is on the unsafe ``side`` of the certified answer."""
    if np.any(unsafe):
        warnings.warn(f"{what} is {side} the certified bound (an under-report of the privacy loss) "
                      f"at {int(np.sum(unsafe))} of {np.size(unsafe)} points: the CLT is an "
                      f"approximation, not a bound", ApproximationWarning, stacklevel=stacklevel)


def finite_by_rdp(at: At, out: Any, deltas: Any) -> Any:
    """The default ε where pairs that cut a heavy tail to +∞ (``cuts_to_infinity``: a random
    allocation's epochs at σ ≈ 0.03–0.05) say +∞ and RDP is finite: the smaller of two upper
    bounds, with the RDP fallback's warning (else the default answer could rise as the noise
    grows). Not for other pairs: there +∞ is a δ below the grids' tail, and some RDP searches
    are costly there (a Poisson-sampled Gaussian at σ = 1e-3 asks for GBs)."""
    where = np.isinf(out)
    if not np.any(where) or not at.pairs.cuts_to_infinity or at.mechanism.optional("rdp") is None:
        return out
    rdp = np.array([rdp_to_epsilon(at.mechanism.rdp, float(d)) for d in deltas[where]])
    if np.all(np.isinf(rdp)):
        return out
    warnings.warn(f"{at.name}: its dominating pairs give ε = +∞ at δ = {float(np.min(deltas[where])):g}, "
                  f"{FROM_RDP}", RDPFallbackWarning, stacklevel=5)
    out = out.copy()
    out[where] = np.minimum(out[where], rdp)
    return out


def bounds(at: At, values: Any, scalar: bool, method: Optional[str], accuracy: float, query: str) -> Bounds:
    """``_bounds_at`` the pairs' lattice precision; where its interval is still wider than
    ``accuracy`` and some pair is built at a ρ a finer one narrows (a random-allocation
    epoch), again at ρ/10 (``precision.finer``), down to its floor. Both intervals are
    certified: where the finer one is still too wide (its lattice may meet its caps
    sooner), their common part."""
    pairs = at.optional_pairs()
    refinable = pairs is not None and pairs.refinable
    rho = finer(at.rho)
    try:
        out = _bounds_at(at, values, scalar, method, accuracy, query)
    except AccuracyNotReached as err:
        if not refinable or rho is None:
            raise
        out = err.bounds
    else:
        # (an analytic answer: the grids raise themselves. Its lower end is the pairs' own where
        # they are attained; else from attained compositions, whose width no ρ narrows)
        if not refinable or pairs is None or not pairs.tight or out.lower is None \
                or np.all(narrow(np.ravel(out.lower), np.ravel(out.upper), accuracy)):
            return out
        if rho is None:
            raise AccuracyNotReached(wider(out, accuracy), out)
    try:
        return bounds(At(at.mechanism, rho), values, scalar, method, accuracy, query)
    except AccuracyNotReached as err:  # a finer lattice may meet its caps sooner: the two
        both = intersection(out, err.bounds)  # certified intervals' common part
        if both is None or both.lower is None:
            raise AccuracyNotReached(str(err), both) from None
        if not np.all(narrow(np.ravel(both.lower), np.ravel(both.upper), accuracy)):
            raise AccuracyNotReached(wider(both, accuracy), both) from None
        return both


def _bounds_at(at: At, values: Any, scalar: bool, method: Optional[str], accuracy: float, query: str) -> Bounds:
    """The certified interval of the method ``method`` names at ``at``'s precision."""
    if method is None and at.optional_pairs() is None:  # (before the default's RDP fallback warning)
        raise RepresentationUnavailable(f"{at.name} has no dominating pair, so no certified interval "
                                        f"(get_approxDP answers from its RDP: an upper bound only)")
    chosen = choose(at, method)
    if INTERVAL not in chosen.answers or chosen.interval is None:
        raise RepresentationUnavailable(f"method={chosen.name!r} gives no certified interval; "
                                        f"use method='pld' or 'analytic'")
    if query == "get_approxDP" and np.any(values == 0):
        return pure_interval(at, values, scalar, chosen.name, accuracy,
                             lambda rest: bounds(at, rest, False, chosen.name, accuracy, "get_approxDP"))
    plain: Callable[[Any], Any] = (
        (lambda x: _staged(epsilon, EPSILON_STAGE)(at, x, chosen.name, DEFAULT_ACCURACY))
        if query == "get_approxDP" else (lambda x: _staged(delta, DELTA_STAGE)(at, x, chosen.name, DEFAULT_ACCURACY)))
    return chosen.interval(at, chosen.name, values, scalar, query, accuracy, plain)


__all__ = ["EPSILON", "DELTA", "epsilon", "delta", "bounds"]
