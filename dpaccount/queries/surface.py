"""The queries of a ``Mechanism``: its whole query surface, in one class.

``Queries`` is the half of ``Mechanism`` (``mechanism.py``) that asks
questions of its representations. Each query validates its arguments, decides
the lattice precision ρ its pairs are built at (``precision.py``: an ε(δ)
query its accuracy, else ``DEFAULT_RHO``) and hands ``At(self, rho)``
(``at.py``) to its route (``route.py``), which looks ``method=`` up in one
table (``methods.py``; None: the tightest that applies, ``available_methods``). Certified intervals (``*_bounds``, ``Bounds``):
``intervals.py``; attack risk (``get_advantage``, ``get_tpr``,
``get_bayes_risk`` and their ``_bounds``): ``risk.py``.

f-DP (``get_fDP``, ``get_fDP_bounds``, ``mu_GDP``): ``fdp.py``; the default is
``"analytic"`` for Gaussian compositions and finite pairs, else ``"pld"``.

Every query takes ``progress=``: True draws a bar on stderr, a callable
receives a ``progress.Progress`` (stage, done, total, fraction, elapsed,
eta) at each stage boundary; the default None shows nothing (``progress.py``).

Every answer is a rigorous upper bound on ε (or δ): the worst case over the
add and remove directions. Arrays of queries cost little more than one: the
profile's grids are built once per accuracy and kept (within a memory
budget, ``pld/grids/cache.py``) for every later query of an equal mechanism.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, List, Literal, Optional, Union, overload

import numpy as np

from .. import validation as v
from ..errors import RepresentationUnavailable
from ..pld.grids.apriori import apriori_plan
from ..pld.pairs.composition import DIRECTIONS
from ..pld.profiles.profile import PrivacyProfile
from ..precision import DEFAULT_RHO, epsilon_rho
from ..progress import reports
from . import route
from .at import At, built_profile
from .intervals import DEFAULT_ACCURACY, Bounds
from .risk import RiskQueries
from .methods import FDP, available, choose, named

if TYPE_CHECKING:
    from numpy.typing import ArrayLike
    from ..pld.grids.apriori import GridPlan
    from ..pld.grids.grid import PLDGrid
    from ..pld.pairs.composition import PairComposition
    from ..progress import ProgressArg
    from ..rdp.curve import RDPCurve
    from .intervals import FloatArray, Method


def _fdp():
    """fdp.py, imported on the first f-DP or CLT query: not at ``import dpaccount``."""
    from .. import fdp
    return fdp


def _shaped(out: Any, scalar: bool) -> Any:
    return float(np.ravel(out)[0]) if scalar else out


class Queries(RiskQueries):
    """The queries of ``Mechanism`` (which supplies ``pairs``, ``rdp``, ``optional``,
    ``pairs_at`` and the per-instance ``_cached``)."""

    if TYPE_CHECKING:  # what ``Mechanism`` supplies (mechanism.py)
        _name: str
        @property
        def name(self) -> str: ...
        @property
        def pairs(self) -> PairComposition: ...
        @property
        def rdp(self) -> RDPCurve: ...
        optional: Callable[..., Any]
        def pairs_at(self, rho: float) -> PairComposition: ...
        def _cached(self, key: object, build: Callable[[], Any]) -> Any: ...

    def available_methods(self) -> List[str]:
        """The methods that apply to this mechanism, tightest first."""
        return [s.name for s in available(At(self, DEFAULT_RHO))]

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
        return built_profile(At(self, DEFAULT_RHO), accuracy)

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
        return At(self, DEFAULT_RHO).pure_epsilon()

    @overload  # a float in, a float out; an array in, an array of its shape out
    def get_approxDP(self, delta: float, method: Optional[Method] = ..., accuracy: float = ...,  # type: ignore[overload-overlap]
                     progress: ProgressArg = ...) -> float: ...
    @overload
    def get_approxDP(self, delta: ArrayLike, method: Optional[Method] = ..., accuracy: float = ...,
                     progress: ProgressArg = ...) -> FloatArray: ...
    @reports("epsilon(delta)", steps=1)  # the upper bound
    def get_approxDP(self, delta: ArrayLike, method: Optional[Method] = None, accuracy: float = DEFAULT_ACCURACY,
                     progress: ProgressArg = None) -> Union[float, FloatArray]:
        """ε(δ): the smallest ε ≥ 0 such that the mechanism is (ε, δ)-DP
        (an upper bound; vectorised over δ ∈ [0, 1)). At δ = 0: the pure ε
        (``pure_epsilon``), +∞ where there is none; every answer is at most it."""
        deltas, scalar = v.real_array("delta", delta, 0.0, 1.0, lo_open=False)
        v.in_interval("accuracy", accuracy, 0.0, 1.0)
        at = At(self, epsilon_rho(accuracy))  # its pairs 10× coarser than a δ query's
        return _shaped(route.epsilon(at, deltas, method, accuracy), scalar)

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
        epss, scalar = v.real_array("eps", eps, 0.0, np.inf, lo_open=False)
        v.in_interval("accuracy", accuracy, 0.0, 1.0)
        return _shaped(route.delta(At(self, DEFAULT_RHO), epss, method, accuracy), scalar)

    @overload
    def get_RDP(self, alpha: float) -> float: ...  # type: ignore[overload-overlap]
    @overload
    def get_RDP(self, alpha: ArrayLike) -> FloatArray: ...
    def get_RDP(self, alpha: ArrayLike) -> Union[float, FloatArray]:
        """Rényi-DP ε(α) for real α > 1 (vectorised)."""
        alphas, scalar = v.real_array("alpha", alpha, 1.0, np.inf)
        out = np.asarray(self.rdp(alphas), dtype=float)
        return float(out.ravel()[0]) if scalar else out

    # -- f-DP (fdp.py) ----------------------------------------------------------
    def _fdp_method(self, method):
        if method is None:
            if self.optional("pairs") is None:
                raise RepresentationUnavailable(f"{self._name} has no dominating pairs: no f-DP curve")
            return "analytic" if _fdp().analytic_applies(self) else "pld"
        return choose(At(self, DEFAULT_RHO), method).name

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
        alphas, scalar = v.real_array("fpr", fpr, 0.0, 1.0, False, False)
        v.in_interval("accuracy", accuracy, 0.0, 1.0)
        method = self._fdp_method(method)
        if method == "clt":
            from ..converters.fdp import gdp_tradeoff
            mu = _fdp().clt_mu_of(self)
            out = np.asarray(gdp_tradeoff(alphas, mu, lower=False), dtype=float).reshape(alphas.shape)
            route.warn_if_unsafe(out > self.get_fDP(alphas, None, accuracy),
                                 f"β(α) of the CLT (μ = {mu:.6g})", "above", stacklevel=4)
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
        alphas, scalar = v.real_array("fpr", fpr, 0.0, 1.0, False, False)
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
            route.warn_if_unsafe(np.array([mu < self.mu_GDP(None, accuracy, tail)]),
                                 f"the CLT's μ = {mu:.6g}", "below", stacklevel=4)
            return mu
        if FDP not in named(method).answers:
            raise RepresentationUnavailable(f"method={method!r} gives no μ-GDP; use 'analytic' or 'pld'")
        return _fdp().mu_gdp(self, method, accuracy, tail)

    @reports("epsilon(delta) interval", steps=1)  # the certified interval
    def get_approxDP_bounds(self, delta: ArrayLike, method: Optional[Method] = None, accuracy: float = DEFAULT_ACCURACY,
                            progress: ProgressArg = None) -> Bounds:
        """ε(δ) with a certified interval: ``Bounds(lower, upper, method, step)``.

        ``upper`` comes from the pessimistic grid (as ``get_approxDP``), ``lower``
        from the optimistic one (``pld/grids/discretise_optimistic.py``): the exact ε lies
        in between. The grid is refined until upper − lower ≤ accuracy·upper,
        else ``AccuracyNotReached`` says what could be reached. Where the pairs
        are not attained, ``lower`` comes from attained compositions or is None
        (``Bounds.lower_of``, ``reason``; docs/theory.rst)."""
        deltas, scalar = v.real_array("delta", delta, 0.0, 1.0, lo_open=False)
        at = At(self, epsilon_rho(accuracy))  # then finer where too wide (precision.py)
        return route.bounds(at, deltas, scalar, method, accuracy, "get_approxDP")

    @reports("delta(epsilon) interval", steps=1)  # the certified interval
    def get_approx_delta_bounds(self, eps: ArrayLike, method: Optional[Method] = None,
                                accuracy: float = DEFAULT_ACCURACY, progress: ProgressArg = None) -> Bounds:
        """δ(ε) with a certified interval (see ``get_approxDP_bounds``)."""
        epss, scalar = v.real_array("eps", eps, 0.0, np.inf, lo_open=False)
        return route.bounds(At(self, DEFAULT_RHO), epss, scalar, method, accuracy, "get_approx_delta")
