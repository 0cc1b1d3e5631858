"""The queries of a ``Mechanism`` and their ``method=`` dispatch.

``QueryDispatch`` is the half of ``Mechanism`` (``mechanism.py``) that asks
questions of its representations; its certified intervals (``*_bounds``)
are ``intervals.py``. Without ``method=`` a query takes the
tightest method that applies, in this order:

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

``method="cf"`` (never the default, not in ``available_methods``) inverts the
characteristic function (``cf/queries.py``): value + its error, a bound where
every pair's M is a closed form or a finite sum (then ``Bounds.certified``),
an *estimate* otherwise (Poisson subsampling, atoms on no common lattice), said
with an ``ApproximationWarning`` by its ``*_bounds``.
``method="clt"`` (never the default, not in ``available_methods``) is the
central limit theorem of Bu, Dong, Long & Su (2020) for compositions of
Poisson-subsampled Gaussians (``fdp.py``): an *approximation*; it warns
(``ApproximationWarning``) whenever its answer is on the unsafe side of the
certified one.

f-DP (``get_fDP``, ``get_fDP_bounds``, ``mu_GDP``): ``fdp.py``; the default is
``"analytic"`` for Gaussian compositions and finite pairs, else ``"pld"``. Attack
risk read off them (``get_advantage``, ``get_tpr``, ``get_bayes_risk`` and their
``_bounds``): ``risk.py``.

Every query takes ``progress=``: True draws a bar on stderr, a callable
receives a ``progress.Progress`` (stage, done, total, fraction, elapsed,
eta) at each stage boundary; the default None shows nothing (``progress.py``).

Every answer is a rigorous upper bound on ε (or δ): the worst case over the
add and remove directions. Arrays of queries cost little more than one: the
profile's grids are built once per accuracy and kept (within a memory
budget, ``pld/grids/cache.py``) for every later query of an equal mechanism.
"""
from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any, List, Literal, Optional, Union, overload

import numpy as np

from .. import validation as v
from ..precision import epsilon_query
from ..progress import reports
from ..converters.gdp import delta_gdp, epsilon_gdp
from ..converters.hockey_stick import hockey_stick_to_epsilon
from ..converters.rdp_to_dp import rdp_to_delta, rdp_to_epsilon
from ..errors import AccuracyWarning, ApproximationWarning, GridTooLarge, RDPFallbackWarning, RepresentationUnavailable
from ..pld.pairs.composition import DIRECTIONS
from ..pld.grids.apriori import apriori_plan
from ..pld.grids.cost import warn_if_costly
from ..pld.profiles.exact_sum import delta_bounds as exact_delta_bounds
from ..pld.profiles.exact_sum import epsilon_bounds as exact_epsilon_bounds
from ..pld.profiles.exact_sum import exact_profile
from ..pld.profiles.profile import PrivacyProfile
from .intervals import DEFAULT_ACCURACY, Bounds, IntervalQueries
from .risk import RiskQueries

if TYPE_CHECKING:
    from numpy.typing import ArrayLike
    from ..pld.grids.apriori import GridPlan
    from ..pld.grids.grid import PLDGrid
    from ..progress import ProgressArg
    from .intervals import FloatArray, Method

METHODS = ("analytic", "pld", "rdp", "cf", "clt")
_OPT_IN = ("cf", "clt")  # never chosen by default, never in available_methods()
# An answer RDP puts below its floor (ε < 1e-3, δ < 1e-12) is answered by the default route at the
# finest accuracy whose grid fits where the relative accuracy asked would exceed the cap
# (``_within_cap``)
ABSOLUTE_FLOOR = {"epsilon": 1e-3, "delta": 1e-12}
_FROM_RDP = "so this answer comes from RDP: an upper bound, looser than a privacy-loss grid's"


def _cf():
    """cf/queries.py, imported on the first ``method="cf"`` query (opt-in): not at ``import dpaccount``."""
    from ..cf import queries
    return queries


def _fdp():
    """fdp.py, imported on the first f-DP or CLT query: not at ``import dpaccount``."""
    from .. import fdp
    return fdp


class QueryDispatch(IntervalQueries, RiskQueries):
    """The queries of ``Mechanism`` (which supplies ``pairs``, ``rdp``,
    ``optional`` and the per-instance ``_cached``)."""

    # -- method dispatch ---------------------------------------------------
    def available_methods(self) -> List[str]:
        """The methods that apply to this mechanism, tightest first."""
        return list(self._methods())

    def _methods(self):
        """``available_methods`` lazily (the default needs only the first)."""
        if self.optional("pairs") is not None:
            if self.pairs.gaussian_mu is not None or self._single_pairs() is not None:
                yield "analytic"
            yield "pld"
        if self.optional("rdp") is not None and np.isfinite(self.rdp(2.0)):
            yield "rdp"

    def _single_pairs(self):
        """(remove pair, add pair) if each direction is one pair used once."""
        rem, add = self.pairs.remove, self.pairs.add
        if len(rem) == 1 and len(add) == 1 and rem[0][1] == 1 and add[0][1] == 1:
            return rem[0][0], add[0][0]
        return None

    def _analytic_delta(self, eps, upper=True):
        """δ(ε) in closed form: μ-GDP, or the exact curve of a single pair
        (rounded up, or down for the lower end of a certified interval)."""
        mu = self.pairs.gaussian_mu
        if mu is not None:
            return delta_gdp(eps, mu, upper)
        rem, add = self._single_pairs()
        return np.maximum(rem.delta(eps, upper), add.delta(eps, upper))

    def _analytic_epsilon(self, delta, upper=True):
        mu = self.pairs.gaussian_mu
        if mu is not None and upper:
            return epsilon_gdp(delta, mu)
        curve = lambda e: float(self._analytic_delta(e, upper))
        # P(L = +∞): a finite pair's from its logs is rounded up (``p_inf``); a lower bound
        # takes it rounded down (``end_bounds``), else it could call a finite ε infinite
        p_inf = max(p.end_bounds()[0][1 if upper else 0] for p in self._single_pairs()) if mu is None else 0.0
        return hockey_stick_to_epsilon(curve, delta, p_inf, upper)

    def _choose(self, method):
        if method is None:
            first = next(self._methods(), None)
            if first is None:
                raise RepresentationUnavailable(f"no accountant applies to {self._name}")
            if first == "rdp":
                warnings.warn(f"{self._name} has no dominating pair (a part known through RDP only, such "
                              f"as zCDP or repeat-and-select, or whose pairs no grid can hold), {_FROM_RDP}",
                              RDPFallbackWarning, stacklevel=3)
            return first
        if not isinstance(method, str):
            raise TypeError(f"method must be a string, got {method!r}")
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {method!r}")
        if method not in _OPT_IN and method not in self._methods():  # lazily: stops at the match
            raise RepresentationUnavailable(f"method={method!r} does not apply to {self._name}; "
                                            f"available: {self.available_methods()}")
        return method

    def _exact_sum(self):
        """Each direction's atoms (``pld/profiles/exact_sum.py``), or None where a grid is needed."""
        return self._cached("exact-sum", lambda: exact_profile(self.pairs))

    @reports("planning the grids", counts=False)
    def privacy_profile(self, accuracy: float = DEFAULT_ACCURACY, progress: ProgressArg = None) -> PrivacyProfile:
        """The certified privacy profile (``pld.profiles.profile.PrivacyProfile``) at
        ``accuracy``: ``.delta(eps)``, ``.epsilon(delta)`` (upper bounds),
        ``.delta_lower``/``.epsilon_lower`` (lower bounds on the *pairs'* curves:
        the mechanism's only where ``pairs.tight``; ``get_*_bounds`` say which)
        and ``.certificate()``, for arrays of queries from grids composed once
        (shared by equal mechanisms).

        Its grid steps are planned from the question (``pld/profiles/plan.py``): each
        answer is planned to land within half the accuracy above the exact
        value (measured: benchmarks/rho_calibration.py)."""
        accuracy = v.in_interval("accuracy", accuracy, 0.0, 1.0)
        return self._cached(("profile", accuracy), lambda: self._new_profile(accuracy))

    def _new_profile(self, accuracy):
        warn_if_costly(self.pairs, stacklevel=6)  # up front, where the work is far beyond the usual
        return PrivacyProfile(self.pairs, accuracy)

    def pld(self, direction: Literal["remove", "add"] = "remove", accuracy: float = DEFAULT_ACCURACY,
            pessimistic: bool = True, tail: float = 1e-30) -> PLDGrid:
        """The certified ``PLDGrid`` of one direction ('remove' or 'add'), as the
        privacy profile at ``accuracy`` composes it; mass beyond the window
        (≤ ``tail``) is counted at +∞."""
        if direction not in DIRECTIONS:
            raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
        tail = v.in_interval("tail", tail, 0.0, 1e-6)
        return self.privacy_profile(accuracy).grid(direction, tail, pessimistic)

    def apriori_plan(self, eps: float, eta: float, direction: Literal["remove", "add"] = "remove") -> GridPlan:
        """The grid Koskela & Honkela's a priori analysis (Thm 9, Remarks 10
        and 12) asks for so that δ(ε) errs by at most 2η: a ``GridPlan`` with
        the step, window, size and both error terms (``pld/grids/apriori.py``). The
        accountant itself plans coarser grids and certifies them a posteriori."""
        if direction not in DIRECTIONS:
            raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
        eps = v.in_interval("eps", eps, 0.0, np.inf, lo_open=False)
        eta = v.in_interval("eta", eta, 0.0, 1.0)
        return apriori_plan(self.pairs.direction(direction), eps, eta)

    # -- queries -------------------------------------------------------------
    def pure_epsilon(self) -> float:
        """The pure ε (ε(0): the supremum of the privacy loss), a certified upper
        bound from the dominating pairs (``PairComposition.pure_epsilon``); +∞
        where a loss is unbounded, has mass at +∞, or the mechanism has no pairs."""
        if self.optional("pairs") is None:
            return np.inf
        return self._cached("pure-epsilon", self.pairs.pure_epsilon)

    @overload  # a float in, a float out; an array in, an array of its shape out
    def get_approxDP(self, delta: float, method: Optional[Method] = ..., accuracy: float = ...,  # type: ignore[overload-overlap]
                     progress: ProgressArg = ...) -> float: ...
    @overload
    def get_approxDP(self, delta: ArrayLike, method: Optional[Method] = ..., accuracy: float = ...,
                     progress: ProgressArg = ...) -> FloatArray: ...
    @reports("epsilon(delta)", steps=1)  # the upper bound
    @epsilon_query  # its pairs 10× coarser than a δ query's (precision.py)
    def get_approxDP(self, delta: ArrayLike, method: Optional[Method] = None, accuracy: float = DEFAULT_ACCURACY,
                     progress: ProgressArg = None) -> Union[float, FloatArray]:
        """ε(δ): the smallest ε ≥ 0 such that the mechanism is (ε, δ)-DP
        (an upper bound; vectorised over δ ∈ [0, 1)). At δ = 0: the pure ε
        (``pure_epsilon``), +∞ where there is none; every answer is at most it."""
        deltas, scalar = v.real_array("delta", delta, lambda n, x: v.in_interval(n, x, 0.0, 1.0, lo_open=False))
        v.in_interval("accuracy", accuracy, 0.0, 1.0)
        default, method = method is None, self._choose(method)
        if deltas.size == 0:
            return np.empty(deltas.shape)
        pure = self.pure_epsilon()
        if np.any(deltas == 0):  # the other methods answer δ > 0 only
            out: Any = np.full(deltas.shape, pure)
            some = deltas > 0
            if np.any(some):
                out[some] = np.minimum(self.get_approxDP(deltas[some], method, accuracy), pure)
            return float(out.ravel()[0]) if scalar else out
        if method == "analytic":
            out = np.array([self._analytic_epsilon(float(d)) for d in deltas.ravel()])
        elif method == "pld" and self._exact_sum() is not None:
            out = exact_epsilon_bounds(self._exact_sum(), deltas.ravel())[1]
        elif method == "pld":
            out = self._within_cap(lambda acc: self.privacy_profile(acc).epsilon(deltas), accuracy, default,
                                   lambda: [rdp_to_epsilon(self.rdp, float(d)) for d in deltas.ravel()], deltas.shape,
                                   ABSOLUTE_FLOOR["epsilon"])
        elif method == "cf":
            out = _cf().cf_query(self, deltas, "get_approxDP")
        elif method == "clt":
            mu = _fdp().clt_mu_of(self)
            out = np.array([epsilon_gdp(float(d), mu) for d in deltas.ravel()])
            self._warn_if_unsafe(out.reshape(deltas.shape) < self.get_approxDP(deltas, None, accuracy),
                                 f"ε(δ) of the CLT (μ = {mu:.6g})", "below")
        else:
            out = np.array([rdp_to_epsilon(self.rdp, d) for d in deltas.ravel()])
        out = np.clip(np.asarray(out, dtype=float).reshape(deltas.shape), 0.0, pure)
        if default and method in ("analytic", "pld"):
            out = self._finite_by_rdp(out, deltas)
        return float(out.ravel()[0]) if scalar else out

    def _within_cap(self, ask, accuracy, default, by_rdp, shape, floor):
        """``ask(accuracy)``, a privacy profile's certified upper bounds. A relative accuracy
        of an answer near 0 asks for a vanishing grid step: where the grid ``accuracy`` needs
        exceeds the cap and RDP's upper bound R on every answer is below ``floor``
        (``ABSOLUTE_FLOOR``), the default route answers the tightest certified bound that
        fits instead — ``ask`` at the finest accuracy a' whose grid fits
        (``GridTooLarge.accuracy``), or R where smaller — with an ``AccuracyWarning`` naming
        the accuracy asked and a' (its error a'·answer < a'·floor). Otherwise (no RDP
        curve, an answer not known to be near 0, an explicit method) ``GridTooLarge`` stands."""
        try:
            return ask(accuracy)
        except GridTooLarge as exc:
            if not default or exc.accuracy is None or self.optional("rdp") is None:
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
        warnings.warn(f"{self._name}: {str(reason).rstrip('.')}. The answer is below {floor:g} (by RDP): answered "
                      f"at accuracy={relaxed:.2g}, or by RDP where smaller; a certified upper bound", AccuracyWarning,
                      stacklevel=5)
        return np.minimum(out.reshape(shape), rdp)

    def _finite_by_rdp(self, out, deltas):
        """The default ε where pairs that cut a heavy tail to +∞ (``cuts_to_infinity``: a random
        allocation's epochs at σ ≈ 0.03–0.05) say +∞ and RDP is finite: the smaller of two upper
        bounds, with the RDP fallback's warning (else the default answer could rise as the noise
        grows). Not for other pairs: there +∞ is a δ below the grids' tail, and some RDP searches
        are costly there (a Poisson-sampled Gaussian at σ = 1e-3 asks for GBs)."""
        where = np.isinf(out)
        if not np.any(where) or not self.pairs.cuts_to_infinity or self.optional("rdp") is None:
            return out
        rdp = np.array([rdp_to_epsilon(self.rdp, float(d)) for d in deltas[where]])
        if np.all(np.isinf(rdp)):
            return out
        warnings.warn(f"{self._name}: its dominating pairs give ε = +∞ at δ = {float(np.min(deltas[where])):g}, "
                      f"{_FROM_RDP}", RDPFallbackWarning, stacklevel=4)
        out = out.copy()
        out[where] = np.minimum(out[where], rdp)
        return out

    @overload
    def get_approx_delta(self, eps: float, method: Optional[Method] = ..., accuracy: float = ...,  # type: ignore[overload-overlap]
                         progress: ProgressArg = ...) -> float: ...
    @overload
    def get_approx_delta(self, eps: ArrayLike, method: Optional[Method] = ..., accuracy: float = ...,
                         progress: ProgressArg = ...) -> FloatArray: ...
    @reports("delta(epsilon)", steps=1)  # the upper bound
    def get_approx_delta(self, eps: ArrayLike, method: Optional[Method] = None, accuracy: float = DEFAULT_ACCURACY,
                         progress: ProgressArg = None) -> Union[float, FloatArray]:
        """δ(ε): the smallest δ such that the mechanism is (ε, δ)-DP
        (an upper bound; vectorised over ε ≥ 0)."""
        epss, scalar = v.real_array("eps", eps, lambda n, x: v.in_interval(n, x, 0.0, np.inf, lo_open=False))
        v.in_interval("accuracy", accuracy, 0.0, 1.0)
        default, method = method is None, self._choose(method)
        if epss.size == 0:
            return np.empty(epss.shape)
        if method == "analytic":
            out = self._analytic_delta(epss.ravel())
        elif method == "pld" and self._exact_sum() is not None:
            out = exact_delta_bounds(self._exact_sum(), epss.ravel())[1]
        elif method == "pld":
            out = self._within_cap(lambda acc: self.privacy_profile(acc).delta(epss), accuracy, default,
                                   lambda: [rdp_to_delta(self.rdp, float(e)) for e in epss.ravel()], epss.shape,
                                   ABSOLUTE_FLOOR["delta"])
        elif method == "cf":
            out = _cf().cf_query(self, epss, "get_approx_delta")
        elif method == "clt":
            mu = _fdp().clt_mu_of(self)
            out = delta_gdp(epss.ravel(), mu)
            self._warn_if_unsafe(out.reshape(epss.shape) < self.get_approx_delta(epss, None, accuracy),
                                 f"δ(ε) of the CLT (μ = {mu:.6g})", "below")
        else:
            out = np.array([rdp_to_delta(self.rdp, e) for e in epss.ravel()])
        out = np.clip(np.asarray(out, dtype=float).reshape(epss.shape), 0.0, 1.0)
        out = np.where(epss >= self.pure_epsilon(), 0.0, out)  # δ(ε) = 0 from the pure ε on (exact)
        return float(out.ravel()[0]) if scalar else out

    @overload
    def get_RDP(self, alpha: float) -> float: ...  # type: ignore[overload-overlap]
    @overload
    def get_RDP(self, alpha: ArrayLike) -> FloatArray: ...
    def get_RDP(self, alpha: ArrayLike) -> Union[float, FloatArray]:
        """Rényi-DP ε(α) for real α > 1 (vectorised)."""
        alphas, scalar = v.real_array("alpha", alpha, lambda n, x: v.in_interval(n, x, 1.0, np.inf))
        out = np.asarray(self.rdp(alphas), dtype=float)
        return float(out.ravel()[0]) if scalar else out

    # -- f-DP (fdp.py) ----------------------------------------------------------
    def _fdp_method(self, method):
        if method is None:
            if self.optional("pairs") is None:
                raise RepresentationUnavailable(f"{self._name} has no dominating pairs: no f-DP curve")
            return "analytic" if _fdp().analytic_applies(self) else "pld"
        return self._choose(method)

    @staticmethod
    def _warn_if_unsafe(unsafe, what, side):
        if np.any(unsafe):
            warnings.warn(f"{what} is {side} the certified bound (an under-report of the privacy loss) "
                          f"at {int(np.sum(unsafe))} of {np.size(unsafe)} points: the CLT is an "
                          f"approximation, not a bound", ApproximationWarning, stacklevel=3)

    @overload
    def get_fDP(self, fpr: float, method: Optional[Method] = ..., accuracy: float = ...,  # type: ignore[overload-overlap]
                progress: ProgressArg = ...) -> float: ...
    @overload
    def get_fDP(self, fpr: ArrayLike, method: Optional[Method] = ..., accuracy: float = ...,
                progress: ProgressArg = ...) -> FloatArray: ...
    @reports("f-DP curve", steps=2)  # a grid per direction
    def get_fDP(self, fpr: ArrayLike, method: Optional[Method] = None, accuracy: float = DEFAULT_ACCURACY,
                progress: ProgressArg = None) -> Union[float, FloatArray]:
        """The trade-off curve: the type-II error β(α) at type-I error α = ``fpr``
        (vectorised over α ∈ [0, 1]), a certified **lower** bound on β (the
        safe side). It covers both orders of every neighbouring pair (under
        add/remove: the dataset with the record tested against the one without
        and vice versa); see ``fdp.py`` for which curves it is the greatest
        convex minorant of. ``method``: "analytic" (G_μ for Gaussian
        compositions, exact Neyman–Pearson for finite pairs; the default where
        it applies), "pld" (pessimistic grids), "clt" (approximate, opt-in)."""
        alphas, scalar = v.real_array("fpr", fpr, lambda n, x: v.in_interval(n, x, 0.0, 1.0, False, False))
        v.in_interval("accuracy", accuracy, 0.0, 1.0)
        method = self._fdp_method(method)
        if method == "clt":
            from ..converters.fdp import gdp_tradeoff
            mu = _fdp().clt_mu_of(self)
            out = np.asarray(gdp_tradeoff(alphas, mu, lower=False), dtype=float).reshape(alphas.shape)
            self._warn_if_unsafe(out > self.get_fDP(alphas, None, accuracy),
                                 f"β(α) of the CLT (μ = {mu:.6g})", "above")
        else:
            out = np.asarray(_fdp().tradeoff(self, alphas, method, accuracy), dtype=float).reshape(alphas.shape)
        return float(out.ravel()[0]) if scalar else out

    @reports("f-DP interval", steps=4)  # pessimistic and optimistic grids
    def get_fDP_bounds(self, fpr: ArrayLike, method: Optional[Method] = None, accuracy: float = DEFAULT_ACCURACY,
                       progress: ProgressArg = None) -> Bounds:
        """β(α) with a certified interval ``Bounds(lower, upper, method)``: lower
        from the pessimistic grids (as ``get_fDP``), upper from the optimistic
        ones (or the closed forms rounded both ways; for finite pairs, from the
        tight pairs a hull's witnesses are, all curves at once: ``fdp.py``); not
        refined. Here the lower end is the safe one (``lower_of`` "mechanism"
        always); the upper end bounds the mechanism's β only where its pairs are
        attained (or, finite pairs, their witnesses are), else ``certified`` is
        False and ``reason`` says so (docs/theory.rst)."""
        alphas, scalar = v.real_array("fpr", fpr, lambda n, x: v.in_interval(n, x, 0.0, 1.0, False, False))
        v.in_interval("accuracy", accuracy, 0.0, 1.0)
        method = self._fdp_method(method)
        if method == "clt":
            raise RepresentationUnavailable("method='clt' gives no certified interval")
        tradeoff = _fdp().tradeoff
        lower = np.asarray(tradeoff(self, alphas, method, accuracy), dtype=float)
        upper = np.maximum(np.asarray(tradeoff(self, alphas, method, accuracy, lower=False), dtype=float), lower)
        pick = (lambda a: float(a.ravel()[0])) if scalar else (lambda a: a.reshape(alphas.shape))
        step = self.privacy_profile(accuracy).step if method == "pld" else None
        finite = method == "analytic" and self.pairs.gaussian_mu is None  # from the witnesses' curves
        if self.pairs.tight or (finite and _fdp().finite_upper_attained(self)):
            return Bounds(pick(lower), pick(upper), method, step)
        return Bounds(pick(lower), pick(upper), method, step, False, "mechanism",
                      "the upper end bounds the dominating pairs' trade-off curve, not the mechanism's: the "
                      "pairs are not attained, and the mechanism's curve may lie above it")

    @reports("mu-GDP", steps=2)  # a grid per direction
    def mu_GDP(self, method: Optional[Method] = None, accuracy: float = DEFAULT_ACCURACY, tail: float = 1e-30,
               progress: ProgressArg = None) -> float:
        """The smallest μ for which the mechanism is certified μ-GDP up to the
        additive ``tail``: δ(ε) ≤ δ_μ(ε) + tail for all ε, i.e. its trade-off
        curve is ≥ G_μ − tail (an upper bound on μ; exact for Gaussian
        compositions, where ``tail`` plays no part). From the pessimistic PLD
        grids (one finite pair per direction: its exact curve), not the CLT
        (``fdp.mu_gdp``); ``method="clt"`` gives the CLT's μ, an
        approximation, and warns when it is below the certified one.

        Why the default (``tail=1e-30``) can be far above the CLT's μ: δ_μ(ε)
        falls like a Gaussian tail, e^{−ε²/(2μ²)}, while the privacy loss of
        a composition of subsampled or finite mechanisms has a heavier far
        tail (the record sampled in many of the steps), so matching δ(ε) down
        to 1e-30 takes a much larger μ than matching its bulk. DP-SGD
        (σ = 1.1, q = 256/60000, 14063 steps): μ = 2.82 at tail 1e-30, 1.04
        at 1e-10, 0.584 at 1e-6, where the CLT says 0.574. Choose ``tail``
        as the δ you are willing to add to every guarantee drawn from μ."""
        v.in_interval("accuracy", accuracy, 0.0, 1.0)
        tail = v.in_interval("tail", tail, 0.0, 1e-6, lo_open=False, hi_open=False)
        method = self._fdp_method(method)
        if method == "clt":
            mu = _fdp().clt_mu_of(self)
            self._warn_if_unsafe(np.array([mu < self.mu_GDP(None, accuracy, tail)]),
                                 f"the CLT's μ = {mu:.6g}", "below")
            return mu
        if method not in ("analytic", "pld"):
            raise RepresentationUnavailable(f"method={method!r} gives no μ-GDP; use 'analytic' or 'pld'")
        return _fdp().mu_gdp(self, method, accuracy, tail)
