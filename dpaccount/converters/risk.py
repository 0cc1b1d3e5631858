"""Attack risk from f-DP: advantage, true-positive rate at a false-positive rate, Bayes risk.

A membership-inference attack is a test between M(D) (the record in) and M(D′)
(the record out) on one output. Its false-positive rate α and true-positive
rate TPR = 1 − β are limited by the trade-off curve f of the mechanism (Dong,
Roth & Su 2022, Def. 2.1): β ≥ f(α), over **both orders** of every
neighbouring pair (which of D, D′ the attacker calls "in"). Kulynych, Gomez et
al. (2024, arXiv 2407.02191, §3) read the usual attack-risk measures off f:

* **TPR at FPR α**: the largest TPR of any test at level α, 1 − f(α)
  (``fdp_to_tpr``);
* **advantage**: the largest TPR − FPR of any test,
  sup_α (1 − α − f(α)) = δ(0), the hockey-stick divergence at ε = 0, which
  is the total variation distance between the two outputs (by the conjugacy
  f(α) = sup_ε (1 − δ(ε) − e^ε α), the supremum over α at slope e^ε = 1;
  Dong, Roth & Su 2022, Prop. 2.12; ``fdp_to_advantage``);
* **Bayes risk under a prior π** that the record is in (or that a binary
  attribute is 1): the smallest probability of error of any guess,
  R(π) = min_α (π f(α) + (1 − π) α) = π (1 − δ(log((1 − π)/π))) (the same
  conjugacy at slope e^ε = (1 − π)/π; Kulynych et al. 2025, arXiv 2507.06969,
  Prop. D.1). Both orders are covered, so R(π) = R(1 − π), and with
  p = min(π, 1 − π) it is p (1 − δ(|log((1 − π)/π)|)), at an ε ≥ 0
  (``prior_to_epsilon``, ``fdp_to_bayes_risk``). With no privacy (δ = 1)
  the attacker never errs; with perfect privacy (δ = 0) R = p: guess the
  likelier value.

Which way these err. An upper bound on δ (or a lower bound on f) gives an
upper bound on TPR and advantage and a lower bound on R: the side on which
the attack risk is *not* under-stated, each rounded further that way by a
few ulps. The lower-bound side (``upper=False`` / ``lower=False``) is
rounded the other way.
"""
from typing import Union

import numpy as np
from numpy.typing import ArrayLike
from ..numerics import ULP_OF_ONE as _U


FloatOrArray = Union[float, np.ndarray]


def _out(values: np.ndarray) -> FloatOrArray:
    return float(values) if values.ndim == 0 else values


def fdp_to_tpr(beta: ArrayLike, upper: bool = True) -> FloatOrArray:
    """TPR = 1 − β at the type-II errors ``beta`` of the trade-off curve (vectorised):
    from a lower bound on β an upper bound on the attack's TPR, rounded up by an ulp
    (``upper=False``: from an upper bound on β, a lower bound, rounded down)."""
    beta = np.asarray(beta, dtype=float)
    pad = 2 * _U if upper else -2 * _U  # 1 − β is exact for β ≥ ½ (Sterbenz), else within ½ ulp of 1
    return _out(np.clip(1.0 - beta + pad, 0.0, 1.0))


def fdp_to_advantage(delta_at_zero: float) -> float:
    """The advantage sup_α (1 − α − f(α)) = δ(0) of a curve given its hockey-stick
    value at ε = 0 (an upper bound on δ(0) gives an upper bound; module docstring):
    the value, checked to be a probability."""
    value = float(delta_at_zero)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"delta_at_zero must lie in [0, 1], got {value!r}")
    return value


def gdp_advantage(mu: float, upper: bool = True) -> float:
    """The advantage of μ-GDP, 2Φ(μ/2) − 1 = erf(μ/(2√2)) (Dong, Roth & Su 2022,
    Cor. 2.13 at ε = 0), rounded up (``upper=False``: down) by a few ulps of erf."""
    from scipy.special import erf
    if not mu >= 0:
        raise ValueError(f"mu must be >= 0, got {mu!r}")
    value = float(erf(mu / (2.0 * np.sqrt(2.0))))
    return float(np.clip(value * (1.0 + 8 * _U if upper else 1.0 - 8 * _U), 0.0, 1.0))


def prior_to_epsilon(prior: ArrayLike, upper_delta: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(ε, p): the ε ≥ 0 at which δ decides the Bayes risk under the prior π,
    |log((1 − π)/π)|, and the weight p = min(π, 1 − π) (module docstring), for
    π ∈ (0, 1), vectorised. δ(ε) is non-increasing, so ε is rounded *down* where δ
    will be an upper bound (``upper_delta``: δ there is at least δ at the true ε)
    and up otherwise."""
    prior = np.asarray(prior, dtype=float)
    p = np.minimum(prior, 1.0 - prior)
    with np.errstate(divide="ignore"):
        eps = np.log1p(-p) - np.log(p)  # log((1 − p)/p), each log within an ulp or so
    if upper_delta:
        return np.maximum(eps * (1.0 - 8 * _U) - 4 * _U, 0.0), p
    return eps * (1.0 + 8 * _U) + 4 * _U, p


def fdp_to_bayes_risk(prior: ArrayLike, delta: ArrayLike, lower: bool = True) -> FloatOrArray:
    """R(π) = min(π, 1 − π)·(1 − δ), with δ the hockey-stick value at
    ``prior_to_epsilon(prior)``: from an upper bound on δ a lower bound on the
    smallest error any attacker reaches, rounded down (``lower=False``: from a lower
    bound on δ an upper bound, rounded up). π = 0 or 1 gives 0 (δ unused)."""
    prior = np.asarray(prior, dtype=float)
    delta = np.clip(np.asarray(delta, dtype=float), 0.0, 1.0)
    p = np.minimum(prior, 1.0 - prior)
    value = p * (1.0 - delta)
    # R ≤ p always (δ ≥ 0), and p = min(π, 1 − π) is exact: the upper end is capped there
    value = value * (1.0 - 4 * _U) if lower else np.minimum(value * (1.0 + 4 * _U) + 2 * _U * p, p)
    return _out(np.clip(np.where(p > 0, value, 0.0), 0.0, 0.5))
