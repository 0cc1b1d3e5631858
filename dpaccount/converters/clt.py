"""The central limit theorem of Bu, Dong, Long & Su (2020): an APPROXIMATION.

T steps of the Poisson-subsampled Gaussian mechanism (sampling rate q, noise
multiplier σ, sensitivity 1) have trade-off curve (q G_{1/σ} + (1−q) Id)^{⊗T},
which tends to G_μ as T → ∞ with q·sqrt(T) → ν (Bu et al. 2020, Thm 3.2;
Dong, Roth & Su 2022, Cor. 5.4), where

    μ = q · sqrt(T (e^{1/σ²} − 1))       (Bu et al. eq. 3.1).

For finite T this is neither an upper nor a lower bound: it can under-report
the privacy loss (the ε it implies can be below the certified ε). dpaccount
offers it only as the explicitly approximate ``method="clt"``.

Heterogeneous steps (rates q_i, noise σ_i, counts k_i): the same theorem's
triangular-array form adds the terms, μ² = Σ k_i q_i² (e^{1/σ_i²} − 1)
(Dong, Roth & Su 2022, Thm 5.2 with the Gaussian functionals of Cor. 5.4).
"""
from __future__ import annotations

import math
from typing import Iterable, Tuple

from .. import validation as v


def clt_mu(q: float, sigma: float, steps: int) -> float:
    """Bu et al.'s CLT μ = q·sqrt(T (e^{1/σ²} − 1)) — an approximation, not a bound."""
    q = v.in_interval("q", q, 0.0, 1.0, hi_open=False)
    sigma = v.positive("sigma", sigma)
    steps = v.count("steps", steps)
    return clt_mu_parts([(q, sigma, steps)])


def clt_mu_parts(parts: Iterable[Tuple[float, float, int]]) -> float:
    """μ = sqrt(Σ k q² (e^{1/σ²} − 1)) over (q, σ, k) parts — an approximation."""
    return math.sqrt(sum(k * q * q * math.expm1(1.0 / (sigma * sigma)) for q, sigma, k in parts))
