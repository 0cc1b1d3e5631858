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
reached. ``IntervalQueries`` is the part of ``QueryDispatch`` (``dispatch.py``)
that builds them; it uses the dispatch's ``_choose``, ``_exact_sum``,
``privacy_profile``, ``pure_epsilon`` and analytic forms.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Literal, NamedTuple, Optional, Union

import numpy as np

from .. import validation as v
from ..errors import AccuracyNotReached, RepresentationUnavailable
from ..precision import can_refine, epsilon_query, finer
from ..progress import reports
from ..pld.profiles.attained import attained_compositions, attained_lower, attained_pure_lower
from ..pld.profiles.exact_sum import delta_bounds as exact_delta_bounds
from ..pld.profiles.exact_sum import epsilon_bounds as exact_epsilon_bounds

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray
    from ..pld.pairs.composition import PairComposition
    from ..progress import ProgressArg
    from ..rdp.curve import RDPCurve
    FloatArray = NDArray[np.float64]

Method = Literal["analytic", "pld", "rdp", "cf", "clt"]
"""A query's ``method=`` (``dispatch.METHODS``); None: the tightest that applies."""
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


def _intersection(a, b):
    """The common part of two certified intervals of the mechanism (``Bounds``, scalars or
    arrays alike; ``b``'s method and step): the smaller upper end, and the larger lower end
    where both have one. Where one has none (pairs not attained and no witness: ``lower_of``
    None, at every ρ), the other's fields with the smaller upper end; None only where neither
    interval was given. (Review d: it was None wherever either lower end was absent, so such
    a refusal after a finer lattice carried no interval at all.)"""
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


def _wider(bounds, accuracy):
    return (f"certified interval [{np.min(bounds.lower):.6g}, {np.max(bounds.upper):.6g}] is still wider than "
            f"the accuracy {accuracy!r} asked for at every lattice precision of the pairs tried (precision.py)")


def _narrow(lower, upper, accuracy):
    """Where a certified interval is at most ``accuracy`` wide relative to its upper end."""
    with np.errstate(invalid="ignore", divide="ignore"):
        width = np.where(upper == lower, 0.0, np.where(upper > 0, (upper - lower) / upper, 0.0))
    return width <= accuracy


class IntervalQueries:
    """The ``*_bounds`` queries of ``QueryDispatch``."""

    if TYPE_CHECKING:  # what ``Mechanism`` supplies (mechanism.py)
        _name: str
        @property
        def pairs(self) -> PairComposition: ...
        @property
        def rdp(self) -> RDPCurve: ...
        optional: Callable[[Any], Any]
        def _cached(self, key: object, build: Callable[[], Any]) -> Any: ...

    def _bounds(self, values, scalar, method, accuracy, query):
        """``_bounds_at`` the pairs' lattice precision; where its interval is still wider than
        ``accuracy`` and some pair is built at a ρ a finer one narrows (a random-allocation
        epoch), again at ρ/10 (``dpaccount/precision.py``), down to its floor. Both intervals
        are certified: where the finer one is still too wide (its lattice may meet its caps
        sooner), their common part."""
        pairs = self.optional("pairs")
        refinable = pairs is not None and pairs.refinable
        try:
            out = self._bounds_at(values, scalar, method, accuracy, query)
        except AccuracyNotReached as err:
            if not refinable or not can_refine():
                raise
            out = err.bounds
        else:
            # (an analytic answer: the grids raise themselves. Its lower end is the pairs' own where
            # they are attained; else from attained compositions, whose width no ρ narrows)
            if not refinable or not pairs.tight or out.lower is None \
                    or np.all(_narrow(np.ravel(out.lower), np.ravel(out.upper), accuracy)):
                return out
            if not can_refine():
                raise AccuracyNotReached(_wider(out, accuracy), out)
        with finer():
            try:
                return self._bounds(values, scalar, method, accuracy, query)
            except AccuracyNotReached as err:  # a finer lattice may meet its caps sooner: the two
                both = _intersection(out, err.bounds)  # certified intervals' common part
                if both is None or both.lower is None:
                    raise AccuracyNotReached(str(err), both) from None
                if not np.all(_narrow(np.ravel(both.lower), np.ravel(both.upper), accuracy)):
                    raise AccuracyNotReached(_wider(both, accuracy), both) from None
                return both

    def _bounds_at(self, values, scalar, method, accuracy, query):
        """Certified [lower, upper], the grid refined until the interval is at
        most ``accuracy`` wide relative to ``upper``: the upper bound of the
        plain query, the lower bound from the optimistic grid at the same
        step, then one step halving per round where still too wide
        (``PrivacyProfile.epsilon_bounds`` / ``delta_bounds``)."""
        if method is None and self.optional("pairs") is None:  # (before the default's RDP fallback warning)
            raise RepresentationUnavailable(f"{self._name} has no dominating pair, so no certified interval "
                                            f"(get_approxDP answers from its RDP: an upper bound only)")
        method = self._choose(method)
        if method in ("rdp", "clt"):
            raise RepresentationUnavailable(f"method={method!r} gives no certified interval; "
                                            f"use method='pld' or 'analytic'")
        if query == "get_approxDP" and np.any(values == 0):
            return self._pure_bounds(values, scalar, method, accuracy)
        if method == "cf":  # certified where every error is a bound (cf/queries.py)
            from ..cf.queries import cf_bounds  # opt-in: not at import dpaccount
            lower, upper, certified = cf_bounds(self, values, scalar, query)
            if not self.pairs.tight:
                return Bounds(None, upper, method, None, False, None, "no lower end: the dominating pairs "
                              "are not attained (method='pld' takes one from attained compositions)")
            return Bounds(lower, upper, method, certified=certified)
        shape = values.shape
        pick = (lambda a: float(np.ravel(a)[0])) if scalar else (lambda a: np.reshape(a, shape))
        if method == "analytic":
            upper = np.ravel(getattr(self, query)(values, method=method))
            if query == "get_approxDP":
                lower = [self._analytic_epsilon(float(d), upper=False) for d in values.ravel()]
            else:
                lower = self._analytic_delta(values.ravel(), upper=False)
            lower = np.minimum(np.ravel(np.asarray(lower, dtype=float)), upper)
            return self._of_mechanism(lower, upper, method, None, values, query, accuracy, pick)
        # the pure ε bounds ε(δ) at every δ, and δ(ε) = 0 from it on (get_approxDP, get_approx_delta
        # clip to it too)
        pure = self.pure_epsilon()
        cap = (lambda u: np.minimum(u, pure)) if query == "get_approxDP" \
            else (lambda u: np.where(np.ravel(values) >= pure, 0.0, u))
        exact = self._exact_sum()
        if exact is not None:  # the exact sum over the atoms (pld/profiles/exact_sum.py)
            fn = exact_epsilon_bounds if query == "get_approxDP" else exact_delta_bounds
            lower, upper = fn(exact, values.ravel())
            upper = cap(upper)
            if np.all(_narrow(lower, upper, accuracy)):
                return self._of_mechanism(lower, upper, method, None, values, query, accuracy, pick)
        profile = self.privacy_profile(accuracy)
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
            met = _narrow(lower, upper, accuracy)
        upper = cap(upper)
        met = met | _narrow(lower, upper, accuracy)
        out = self._of_mechanism(lower, upper, method, step, values, query, accuracy, pick)
        if not np.all(met):  # the message quotes the mechanism's interval, not the pairs' (their
            # lower end bounds the mechanism only where they are attained)
            low = "no lower end" if out.lower is None else f"{np.min(out.lower):.6g}"
            raise AccuracyNotReached(
                f"certified interval [{low}, {np.max(upper):.6g}] is still wider than the "
                f"accuracy {accuracy!r} asked for at the finest grid tried (step {step:.3g}); the grid cap "
                f"or the rounds ({_ROUNDS}) stop there", out)
        return out

    def _pure_bounds(self, deltas, scalar, method, accuracy):
        """``get_approxDP_bounds`` where some δ are 0: there ``upper`` is the pure ε (as
        ``get_approxDP(0)``) and ``lower`` the largest certified lower bound on it over the
        attained compositions (``attained_pure_lower``: the optimistic grids' largest loss,
        or an exact sum's); +∞ for a Gaussian composition (its loss is unbounded: exact).
        The other δ as without them; ``AccuracyNotReached`` where an end is too wide
        (an unbounded loss known through grids: [its grids' largest loss, +∞])."""
        if method == "cf":
            raise ValueError("delta=0 has no certified interval by method='cf' (it inverts at delta > 0); "
                             "use method='pld' or 'analytic'")
        zero = deltas == 0
        upper = np.full(deltas.shape, self.pure_epsilon())
        lower = np.zeros(deltas.shape)
        mu = self.pairs.gaussian_mu
        found, why = self._cached("attained", lambda: attained_compositions(self.pairs))
        if mu is not None and mu > 0:
            lower[zero] = np.inf  # an unbounded loss: ε(0) = ∞ exactly
        elif found is not None:
            lower[zero] = min(attained_pure_lower(found, accuracy), upper.flat[0])
        step, met, reason, rest = None, _narrow(lower, upper, accuracy) | ~zero, None, ~zero
        if np.any(rest):
            try:
                got = self._bounds(deltas[rest], False, method, accuracy, "get_approxDP")
            except AccuracyNotReached as err:
                got = err.bounds
                met[rest] = False
            # both certified upper bounds: the smaller (as get_approxDP clips to the pure ε)
            upper[rest], lower[rest], step, reason = np.minimum(got.upper, upper[rest]), got.lower, got.step, got.reason
            if got.lower is None:
                lower = None
        elif found is None:
            lower, reason = None, f"no lower end: the dominating pairs are not attained ({why})"
        elif not self.pairs.tight:
            reason = f"the dominating pairs are not attained: the lower end is the largest over {len(found)} " \
                     f"attained compositions (pld/profiles/attained.py)"
        pick = (lambda a: float(np.ravel(a)[0])) if scalar else (lambda a: np.reshape(a, deltas.shape))
        out = (Bounds(pick(lower), pick(upper), method, step, True, "mechanism", reason) if lower is not None
               else Bounds(None, pick(upper), method, step, False, None, reason))
        if lower is not None and not np.all(met):
            raise AccuracyNotReached(
                f"certified interval [{np.min(lower):.6g}, {np.max(upper):.6g}] is still wider than the "
                f"accuracy {accuracy!r} asked for (at delta = 0 the upper end is the pure epsilon and the "
                f"lower end the largest loss the optimistic grids hold)", out)
        return out

    def _of_mechanism(self, lower, upper, method, step, values, query, accuracy, pick):
        """``Bounds`` whose lower end bounds the mechanism (docs/theory.rst): the pairs'
        own ``lower`` where every pair is attained; else the largest lower bound over
        attained compositions (``pld/attained.attained_lower``); else none, with the
        reason. The accuracy asked for is met by the pairs' interval (the grids'
        error); the rest of the width is the pairs' looseness, which no grid refines."""
        if self.pairs.tight:
            return Bounds(pick(lower), pick(upper), method, step)
        found, why = self._cached("attained", lambda: attained_compositions(self.pairs))
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

    @reports("epsilon(delta) interval", steps=1)  # the certified interval
    @epsilon_query  # its pairs 10× coarser than a δ query's, then finer where too wide (precision.py)
    def get_approxDP_bounds(self, delta: ArrayLike, method: Optional[Method] = None, accuracy: float = DEFAULT_ACCURACY,
                            progress: ProgressArg = None) -> Bounds:
        """ε(δ) with a certified interval: ``Bounds(lower, upper, method, step)``.

        ``upper`` comes from the pessimistic grid (as ``get_approxDP``), ``lower``
        from the optimistic one (``pld/grids/discretise_optimistic.py``): the exact ε lies
        in between. The grid is refined until upper − lower ≤ accuracy·upper,
        else ``AccuracyNotReached`` says what could be reached. Where the pairs
        are not attained, ``lower`` comes from attained compositions or is None
        (``Bounds.lower_of``, ``reason``; docs/theory.rst)."""
        deltas, scalar = v.real_array("delta", delta, lambda n, x: v.in_interval(n, x, 0.0, 1.0, lo_open=False))
        return self._bounds(deltas, scalar, method, accuracy, "get_approxDP")

    @reports("delta(epsilon) interval", steps=1)  # the certified interval
    def get_approx_delta_bounds(self, eps: ArrayLike, method: Optional[Method] = None,
                                accuracy: float = DEFAULT_ACCURACY, progress: ProgressArg = None) -> Bounds:
        """δ(ε) with a certified interval (see ``get_approxDP_bounds``)."""
        epss, scalar = v.real_array("eps", eps, lambda n, x: v.in_interval(n, x, 0.0, np.inf, lo_open=False))
        return self._bounds(epss, scalar, method, accuracy, "get_approx_delta")
