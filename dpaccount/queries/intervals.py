"""Certified intervals of a ``Mechanism``'s answers: ``get_approxDP_bounds``,
``get_approx_delta_bounds`` and the ``Bounds`` they return.

An interval [lower, upper] holds the mechanism's exact value. ``upper`` is the
plain query's rigorous upper bound; ``lower`` comes from the optimistic grids
at the same step (``pld/grids/discretise_optimistic.py``), from the exact sum
over the atoms of a small finite composition (``pld/profiles/exact_sum.py``),
or, where the dominating pairs are not attained, from attained compositions
(``pld/profiles/attained.py``); where none is known ``lower`` is None with the
reason (docs/theory.rst). The grid is refined (at most ``_ROUNDS`` times) until
upper − lower ≤ accuracy·upper, else ``AccuracyNotReached`` carries what was
reached. Here: each method's interval (``methods.METHOD_TABLE`` names them),
built from ``At`` (a mechanism's pairs at one lattice precision); ``route.py``
chooses the method and asks again at a finer precision where too wide.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Literal, NamedTuple, Optional, Union

import numpy as np

from ..errors import AccuracyNotReached
from ..pld.profiles.attained import attained_lower, attained_pure_lower
from ..pld.profiles.exact_sum import delta_bounds as exact_delta_bounds
from ..pld.profiles.exact_sum import epsilon_bounds as exact_epsilon_bounds

if TYPE_CHECKING:
    from numpy.typing import NDArray
    from .at import At
    FloatArray = NDArray[np.float64]

Method = Literal["analytic", "pld", "rdp", "cf", "clt"]
"""A query's ``method=`` (``methods.METHODS``); None: the tightest that applies."""
DEFAULT_ACCURACY = 1e-3  # the relative width of a certified interval every query is sized by
_ROUNDS = 5  # grid refinements a *_bounds query tries before AccuracyNotReached


class Bounds(NamedTuple):
    """An interval [lower, upper] around the mechanism's exact value. ``certified``
    says whether the exact value provably lies in it: for "analytic" and "pld"
    wherever the lower end is present; for "cf" where every error involved is a
    bound, else the interval is value ∓ an error *estimate* (cf/queries.py).

    ``lower_of``: what the lower end bounds — "mechanism" (from attained pairs:
    the dominating pairs where tight, else attained compositions,
    ``pld/profiles/attained.py``, which ``reason`` then says), or None: no attained pair
    is known, ``lower`` is None and ``reason`` says why (docs/theory.rst)."""

    lower: Union[float, FloatArray, None]
    upper: Union[float, FloatArray]
    method: str
    step: Optional[float] = None
    certified: bool = True
    lower_of: Optional[str] = "mechanism"
    reason: Optional[str] = None


def intersection(a, b):
    """The common part of two certified intervals of the mechanism (``Bounds``, scalars or
    arrays alike; ``b``'s method and step): the smaller upper end, and the larger lower end
    where both have one. Where one has none (pairs not attained and no witness: ``lower_of``
    None, at every ρ), the other's fields with the smaller upper end; None only where neither
    interval was given (a refusal after a finer lattice carries the interval it has)."""
    if a is None or b is None:
        return b if a is None else a
    shape = np.shape(b.upper)
    upper = np.minimum(np.ravel(a.upper), np.ravel(b.upper))
    pick = (lambda x: float(x[0])) if shape == () else (lambda x: x.reshape(shape))
    if a.lower is None or b.lower is None:
        return (a if b.lower is None and a.lower is not None else b)._replace(upper=pick(upper))
    lower = np.maximum(np.ravel(a.lower), np.ravel(b.lower))
    if np.any(lower > upper):  # two certified intervals that miss each other: a bug
        raise RuntimeError("internal error: two certified intervals of one mechanism do not meet; please "
                           "report this mechanism")
    return b._replace(lower=pick(lower), upper=pick(upper))


def wider(bounds, accuracy):
    return (f"certified interval [{np.min(bounds.lower):.6g}, {np.max(bounds.upper):.6g}] is still wider than "
            f"the accuracy {accuracy!r} asked for at every lattice precision of the pairs tried (precision.py)")


def narrow(lower: Any, upper: Any, accuracy: float) -> Any:
    """Where a certified interval is at most ``accuracy`` wide relative to its upper end."""
    with np.errstate(invalid="ignore", divide="ignore"):
        width = np.where(upper == lower, 0.0, np.where(upper > 0, (upper - lower) / upper, 0.0))
    return width <= accuracy


def _picker(values, scalar):
    shape = values.shape
    return (lambda a: float(np.ravel(a)[0])) if scalar else (lambda a: np.reshape(a, shape))


def analytic_interval(at, method, values, scalar, query, accuracy, plain):
    """The closed forms rounded both ways: ``upper`` the plain query's answer (``plain``),
    ``lower`` the closed form rounded down."""
    upper = np.ravel(plain(values))
    if query == "get_approxDP":
        lower = [at.analytic_epsilon(float(d), upper=False) for d in values.ravel()]
    else:
        lower = at.analytic_delta(values.ravel(), upper=False)
    lower = np.minimum(np.ravel(np.asarray(lower, dtype=float)), upper)
    return of_mechanism(at, lower, upper, method, None, values, query, accuracy, _picker(values, scalar))


def cf_interval(at, method, values, scalar, query, accuracy, plain):
    """value ∓ its error, certified where every error is a bound (cf/queries.py)."""
    from ..cf.queries import cf_bounds  # opt-in: not at import dpaccount
    lower, upper, certified = cf_bounds(at, values, scalar, query)
    if not at.pairs.tight:
        return Bounds(None, upper, method, None, False, None, "no lower end: the dominating pairs "
                      "are not attained (method='pld' takes one from attained compositions)")
    return Bounds(lower, upper, method, certified=certified)


def grid_interval(at, method, values, scalar, query, accuracy, plain):
    """Certified [lower, upper], the grid refined until the interval is at
    most ``accuracy`` wide relative to ``upper``: the upper bound of the
    plain query, the lower bound from the optimistic grid at the same
    step, then one step halving per round where still too wide
    (``PrivacyProfile.epsilon_bounds`` / ``delta_bounds``); where the exact sum over
    the atoms applies, the tighter ends of the two."""
    pick = _picker(values, scalar)
    # the pure ε bounds ε(δ) at every δ, and δ(ε) = 0 from it on (get_approxDP, get_approx_delta
    # clip to it too)
    pure = at.pure_epsilon()
    cap = (lambda u: np.minimum(u, pure)) if query == "get_approxDP" \
        else (lambda u: np.where(np.ravel(values) >= pure, 0.0, u))
    exact = at.exact_sum()
    if exact is not None:  # the exact sum over the atoms (pld/profiles/exact_sum.py)
        fn = exact_epsilon_bounds if query == "get_approxDP" else exact_delta_bounds
        lower, upper = fn(exact, values.ravel())
        upper = cap(upper)
        if np.all(narrow(lower, upper, accuracy)):
            return of_mechanism(at, lower, upper, method, None, values, query, accuracy, pick)
    profile = at.profile(accuracy)
    fn = profile.epsilon_bounds if query == "get_approxDP" else profile.delta_bounds
    lower_g, upper_g, step, met = fn(values, _ROUNDS)
    lower_g, upper_g = np.ravel(lower_g), np.ravel(upper_g)
    if exact is None:
        lower, upper = lower_g, upper_g
    else:  # both certified: the tighter ends of the two
        lower, upper = np.maximum(lower, lower_g), np.minimum(upper, upper_g)
        if np.any(lower > upper):  # a certified lower bound above a certified upper one is a bug
            raise RuntimeError(f"internal error: the exact atom sum and the grids disagree at {query}"
                               f"({values.ravel()[np.argmax(lower - upper)]!r}); please report this mechanism")
        met = narrow(lower, upper, accuracy)
    upper = cap(upper)
    met = met | narrow(lower, upper, accuracy)
    out = of_mechanism(at, lower, upper, method, step, values, query, accuracy, pick)
    if not np.all(met):  # the message quotes the mechanism's interval, not the pairs' (their
        # lower end bounds the mechanism only where they are attained)
        low = "no lower end" if out.lower is None else f"{np.min(out.lower):.6g}"
        raise AccuracyNotReached(
            f"certified interval [{low}, {np.max(upper):.6g}] is still wider than the "
            f"accuracy {accuracy!r} asked for at the finest grid tried (step {step:.3g}); the grid cap "
            f"or the rounds ({_ROUNDS}) stop there", out)
    return out


def pure_interval(at, deltas, scalar, method, accuracy, rest_bounds):
    """``get_approxDP_bounds`` where some δ are 0: there ``upper`` is the pure ε (as
    ``get_approxDP(0)``) and ``lower`` the largest certified lower bound on it over the
    attained compositions (``attained_pure_lower``: the optimistic grids' largest loss,
    or an exact sum's); +∞ for a Gaussian composition (its loss is unbounded: exact).
    The other δ as without them (``rest_bounds``); ``AccuracyNotReached`` where an end is
    too wide (an unbounded loss known through grids: [its grids' largest loss, +∞])."""
    if method == "cf":
        raise ValueError("delta=0 has no certified interval by method='cf' (it inverts at delta > 0); "
                         "use method='pld' or 'analytic'")
    zero = deltas == 0
    upper = np.full(deltas.shape, at.pure_epsilon())
    lower = np.zeros(deltas.shape)
    mu = at.pairs.gaussian_mu
    found, why = at.attained()
    if mu is not None and mu > 0:
        lower[zero] = np.inf  # an unbounded loss: ε(0) = ∞ exactly
    elif found is not None:
        lower[zero] = min(attained_pure_lower(found, accuracy), upper.flat[0])
    step, met, reason, rest = None, narrow(lower, upper, accuracy) | ~zero, None, ~zero
    if np.any(rest):
        try:
            got = rest_bounds(deltas[rest])
        except AccuracyNotReached as err:
            got = err.bounds
            met[rest] = False
        # both certified upper bounds: the smaller (as get_approxDP clips to the pure ε)
        upper[rest], lower[rest], step, reason = np.minimum(got.upper, upper[rest]), got.lower, got.step, got.reason
        if got.lower is None:
            lower = None
    elif found is None:
        lower, reason = None, f"no lower end: the dominating pairs are not attained ({why})"
    elif not at.pairs.tight:
        reason = f"the dominating pairs are not attained: the lower end is the largest over {len(found)} " \
                 f"attained compositions (pld/profiles/attained.py)"
    pick = _picker(deltas, scalar)
    out = (Bounds(pick(lower), pick(upper), method, step, True, "mechanism", reason) if lower is not None
           else Bounds(None, pick(upper), method, step, False, None, reason))
    if lower is not None and not np.all(met):
        raise AccuracyNotReached(
            f"certified interval [{np.min(lower):.6g}, {np.max(upper):.6g}] is still wider than the "
            f"accuracy {accuracy!r} asked for (at delta = 0 the upper end is the pure epsilon and the "
            f"lower end the largest loss the optimistic grids hold)", out)
    return out


def of_mechanism(at, lower, upper, method, step, values, query, accuracy, pick):
    """``Bounds`` whose lower end bounds the mechanism (docs/theory.rst): the pairs'
    own ``lower`` where every pair is attained; else the largest lower bound over
    attained compositions (``pld/attained.attained_lower``); else none, with the
    reason. The accuracy asked for is met by the pairs' interval (the grids'
    error); the rest of the width is the pairs' looseness, which no grid refines."""
    if at.pairs.tight:
        return Bounds(pick(lower), pick(upper), method, step)
    found, why = at.attained()
    if found is None:
        return Bounds(None, pick(upper), method, step, False, None,
                      f"no lower end: the dominating pairs are not attained ({why})")
    flat, upper = values.ravel(), np.ravel(upper)
    low = attained_lower(found, flat, "epsilon" if query == "get_approxDP" else "delta", accuracy, _ROUNDS)
    if np.any(low > upper):  # both certified: a lower bound above an upper one is a bug
        raise RuntimeError(f"internal error: an attained composition's lower bound is above the dominating "
                           f"pairs' upper bound at {query}({flat[np.argmax(low - upper)]!r}); please report "
                           f"this mechanism")
    return Bounds(pick(low), pick(upper), method, step, True, "mechanism",
                  f"the dominating pairs are not attained: the lower end is the largest over {len(found)} "
                  f"attained compositions (pld/profiles/attained.py); the width beyond the accuracy is the pairs' "
                  f"looseness, not the grids'")
