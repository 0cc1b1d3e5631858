"""Attack-risk queries of a ``Mechanism``: advantage, TPR at an FPR, Bayes risk.

Each reads the mechanism's certified f-DP (``get_fDP`` / ``get_fDP_bounds``,
over both orders of every neighbouring pair) or its hockey-stick curve
(``get_approx_delta`` / ``get_approx_delta_bounds``, whose δ(0) is the total
variation) through the pure converters of ``converters/risk.py`` (definitions
and papers there; docs/theory.rst). The plain query answers on the side unsafe
for the data holder: an **upper** bound on the advantage and on the TPR, a
**lower** bound on the Bayes risk. The ``_bounds`` variants return a certified
``Bounds`` interval, the plain query's answer at one end.

``method`` and ``accuracy`` are those of the query read (``get_approx_delta``:
"analytic", "pld", "rdp", "cf", "clt"; ``get_fDP``: "analytic", "pld", "clt").
"""
from typing import Any, Callable, Optional, Union

import numpy as np
from numpy.typing import ArrayLike

from .. import validation as v
from ..converters.risk import fdp_to_advantage, fdp_to_bayes_risk, fdp_to_tpr, prior_to_epsilon
from ..errors import AccuracyNotReached
from .intervals import DEFAULT_ACCURACY, Bounds

FloatOrArray = Union[float, np.ndarray]
_NO_UPPER_CURVE = "the upper end of the trade-off curve is not certified"


def _probabilities(name: str, values: ArrayLike) -> tuple:
    return v.real_array(name, values, 0.0, 1.0, False, False)


def _shaped(values: np.ndarray, scalar: bool) -> FloatOrArray:
    return float(values.ravel()[0]) if scalar else values


class RiskQueries:
    """The attack-risk queries of ``Queries`` (``surface.py``, which supplies ``get_fDP``,
    ``get_fDP_bounds``, ``get_approx_delta`` and ``get_approx_delta_bounds``)."""

    # the queries read, as ``Queries`` defines them (declared only)
    get_fDP: Callable[..., Any]
    get_fDP_bounds: Callable[..., Bounds]
    get_approx_delta: Callable[..., Any]
    get_approx_delta_bounds: Callable[..., Bounds]

    def get_advantage(self, method: Optional[str] = None, accuracy: float = DEFAULT_ACCURACY) -> float:
        """The largest TPR − FPR of any membership-inference attack: δ(0), the total
        variation between the outputs on neighbouring datasets (``converters/risk.py``).
        A certified **upper** bound (the data holder's unsafe side)."""
        return fdp_to_advantage(self.get_approx_delta(0.0, method=method, accuracy=accuracy))

    def get_advantage_bounds(self, method: Optional[str] = None, accuracy: float = DEFAULT_ACCURACY) -> Bounds:
        """The advantage with a certified interval (``get_approx_delta_bounds(0)``): ``Bounds``."""
        return self.get_approx_delta_bounds(0.0, method=method, accuracy=accuracy)

    def get_tpr(self, fpr: ArrayLike, method: Optional[str] = None,
                accuracy: float = DEFAULT_ACCURACY) -> FloatOrArray:
        """The largest true-positive rate of any membership-inference attack whose
        false-positive rate is ``fpr`` (vectorised over [0, 1]): 1 − f(fpr) for the
        mechanism's trade-off curve f over both orders of every neighbouring pair.
        A certified **upper** bound (from the lower bound ``get_fDP``)."""
        alphas, scalar = _probabilities("fpr", fpr)
        beta = np.asarray(self.get_fDP(alphas, method=method, accuracy=accuracy), dtype=np.float64)
        return _shaped(np.asarray(fdp_to_tpr(beta, upper=True)), scalar)

    def get_tpr_bounds(self, fpr: ArrayLike, method: Optional[str] = None,
                       accuracy: float = DEFAULT_ACCURACY) -> Bounds:
        """TPR at ``fpr`` with a certified interval from ``get_fDP_bounds``: the upper
        end is ``get_tpr``'s. Where the upper end of β bounds the dominating pairs'
        curve only (pairs not attained), the lower end of the TPR is dropped (None,
        ``certified`` False, ``reason`` says why), as ``get_approx_delta_bounds`` does."""
        alphas, scalar = _probabilities("fpr", fpr)
        got = self.get_fDP_bounds(alphas, method=method, accuracy=accuracy)
        upper = _shaped(np.asarray(fdp_to_tpr(np.asarray(got.lower, dtype=np.float64), upper=True)), scalar)
        if not got.certified:
            return Bounds(None, upper, got.method, got.step, False, None,
                          f"no lower end: {got.reason or _NO_UPPER_CURVE}")
        lower = _shaped(np.asarray(fdp_to_tpr(np.asarray(got.upper, dtype=np.float64), upper=False)), scalar)
        return Bounds(lower, upper, got.method, got.step, True, "mechanism", got.reason)

    def get_bayes_risk(self, prior: ArrayLike, method: Optional[str] = None,
                       accuracy: float = DEFAULT_ACCURACY) -> FloatOrArray:
        """The smallest probability of error of any attacker guessing, from one output,
        which of two neighbouring datasets (or which value of a binary attribute) was
        used, when the first has prior probability ``prior`` (vectorised over [0, 1]):
        min(π, 1 − π)·(1 − δ(|log((1 − π)/π)|)) (``converters/risk.py``). A certified
        **lower** bound (the data holder's unsafe side)."""
        priors, scalar = _probabilities("prior", prior)
        eps, inside = self._prior_epsilons(priors, upper_delta=True)
        delta = np.zeros(priors.shape)
        if np.any(inside):
            delta[inside] = self.get_approx_delta(eps[inside], method=method, accuracy=accuracy)
        return _shaped(np.asarray(fdp_to_bayes_risk(priors, delta, lower=True)), scalar)

    def get_bayes_risk_bounds(self, prior: ArrayLike, method: Optional[str] = None,
                              accuracy: float = DEFAULT_ACCURACY) -> Bounds:
        """The Bayes risk with a certified interval from ``get_approx_delta_bounds``; the
        lower end is ``get_bayes_risk``'s, and the interval is at most ``accuracy`` wide
        relative to its upper end: δ's interval is asked for at the relative accuracy that
        gives (``_delta_accuracy``: coarser where δ is small beside 1 − δ), else at ``accuracy``. Where δ has no
        certified lower end, the upper end is min(π, 1 − π) (δ ≥ 0 always) and ``reason``
        says so. ``AccuracyNotReached`` carries the interval reached, in Bayes-risk terms."""
        priors, scalar = _probabilities("prior", prior)
        accuracy = v.in_interval("accuracy", accuracy, 0.0, 1.0)
        eps, inside = self._prior_epsilons(priors, upper_delta=True)
        d_upper, d_lower = np.zeros(priors.shape), np.zeros(priors.shape)
        methods: list = []
        steps: list = []
        reasons: list = []
        failure: Optional[AccuracyNotReached] = None
        if np.any(inside):
            plain, level = self._delta_accuracy(eps[inside], method, accuracy)
            d_upper[inside] = plain  # the plain query's upper bound: the lower end is get_bayes_risk's
            for acc in np.unique(level):
                at = np.flatnonzero(inside.ravel())[level == acc]
                got, failure_at, low = self._delta_lower(eps.ravel()[at], priors.ravel()[at],
                                                         d_upper.ravel()[at], float(acc), method, accuracy)
                d_lower.ravel()[at] = low
                failure = failure or failure_at
                methods.append(got.method)
                if got.step is not None:
                    steps.append(float(got.step))  # type: ignore[arg-type]
                if got.lower is None:
                    reasons.append("the upper end is min(prior, 1 - prior): δ has no certified lower end "
                                   f"({got.reason})")
                elif got.reason:
                    reasons.append(str(got.reason))
        lower = _shaped(np.asarray(fdp_to_bayes_risk(priors, d_upper, lower=True)), scalar)
        upper = _shaped(np.asarray(fdp_to_bayes_risk(priors, d_lower, lower=False)), scalar)
        out = Bounds(lower, upper, methods[0] if methods else "analytic", min(steps) if steps else None, True,
                     "mechanism", "; ".join(dict.fromkeys(reasons)) or None)
        if failure is not None:
            raise AccuracyNotReached(f"Bayes risk: {failure}", out) from None
        return out

    def _delta_lower(self, eps: np.ndarray, priors: np.ndarray, plain: np.ndarray, level: float,
                     method: Optional[str], accuracy: float) -> tuple:
        """(``Bounds`` of δ, the ``AccuracyNotReached`` met or None, certified lower bounds on δ at
        the ε of ``priors`` rounded up) from ``get_approx_delta_bounds`` at ``eps`` (rounded down):
        at the relative accuracy ``level``, then at ``accuracy`` itself where the risk's interval
        [p(1 − plain), p(1 − lower)] is still wider than ``accuracy`` relative to its upper end."""
        for acc in dict.fromkeys((level, accuracy)):
            failure = None
            try:
                got = self.get_approx_delta_bounds(eps, method=method, accuracy=acc)
            except AccuracyNotReached as err:
                if err.bounds is None:
                    raise
                got, failure = err.bounds, err
            if got.lower is None:
                return got, failure, np.zeros(eps.shape)
            # δ at the ε rounded up, from δ at the ε rounded down: δ falls by at most
            # e^ε (ε_up − ε_down) in between (its slope is −e^ε Q(L > ε))
            high = prior_to_epsilon(priors, upper_delta=False)[0]
            lost = np.exp(np.minimum(high, 700.0)) * (high - eps)
            lower = np.maximum(np.ravel(np.asarray(got.lower, dtype=np.float64)) - lost, 0.0)
            if failure is None and np.all(plain - lower <= accuracy * (1.0 - lower)):
                return got, None, lower
        if failure is None:
            failure = AccuracyNotReached(f"the certified interval of the Bayes risk is wider than the accuracy "
                                         f"{accuracy!r} asked for", None)
        return got, failure, lower

    def _delta_accuracy(self, eps: np.ndarray, method: Optional[str], accuracy: float) -> tuple:
        """(δ(ε) of the plain query, the relative accuracy of δ(ε) that makes p(1 − δ)
        ``accuracy``-accurate): a width a·δ of δ is a relative width a·δ/(1 − δ) of the risk, so
        a = accuracy·(1 − δ)/δ, with the plain query's δ; snapped down to accuracy·10^k, at
        most 0.1 (few distinct accuracies: few interval queries)."""
        delta = np.asarray(self.get_approx_delta(eps, method=method, accuracy=accuracy), dtype=np.float64)
        with np.errstate(divide="ignore"):
            wanted = np.where(delta > 0, accuracy * (1.0 - delta) / delta, np.inf)
        top = max(accuracy, 0.1)
        k = np.floor(np.log10(np.clip(wanted, accuracy, top) / accuracy) + 1e-12)
        return delta, np.minimum(accuracy * 10.0 ** k, top)

    @staticmethod
    def _prior_epsilons(priors: np.ndarray, upper_delta: bool) -> tuple:
        """(ε at each prior, where 0 < π < 1): the ε ≥ 0 whose δ decides the Bayes risk."""
        inside = (priors > 0) & (priors < 1)
        eps = np.zeros(priors.shape)
        eps[inside] = prior_to_epsilon(priors[inside], upper_delta)[0]
        return eps, inside
