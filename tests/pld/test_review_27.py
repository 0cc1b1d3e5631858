"""Issue 27 review: certified intervals of heterogeneous randomized-response
compositions bracket the exact δ(ε), ε(δ) and pure ε (binomial enumeration:
the loss is Σ (2a_i − k_i)·log(p_i/(1 − p_i)), a_i ~ Bin(k_i, p_i) under P)."""
import math
import random

import numpy as np
import pytest
from scipy import optimize, stats

import dpaccount as dpa


def _exact_delta(parts, eps):
    """δ(ε) = E_P[(1 − e^{ε − L})_+] by enumerating the product of binomial laws."""
    losses, probs = np.array([0.0]), np.array([1.0])
    for p, k in parts:
        a = np.arange(k + 1)
        losses = (losses[:, None] + (2 * a - k) * math.log(p / (1 - p))).ravel()
        probs = (probs[:, None] * stats.binom.pmf(a, k, p)).ravel()
    return float(np.sum(probs * np.clip(1 - np.exp(eps - losses), 0, None)))


def _cases(seed, count):
    rng = random.Random(seed)
    return [([(rng.choice([0.51, 0.6, 0.75, 0.9, 0.99]), rng.randint(1, 25)) for _ in range(rng.randint(1, 3))],
             rng.choice([1e-2, 1e-3, 1e-4]), rng.uniform(0, 3)) for _ in range(count)]


def _check(parts, accuracy, eps):
    comp = dpa.Composition()([dpa.RandomizedResponse(p=p) for p, _ in parts], [k for _, k in parts])
    exact = _exact_delta(parts, eps)
    lo, hi = comp.get_approx_delta_bounds(eps, accuracy=accuracy)[:2]
    assert lo <= exact * (1 + 1e-9) + 1e-15 and hi >= exact * (1 - 1e-9) - 1e-15  # 1e-9: the oracle's float sums
    top = sum(k * math.log(p / (1 - p)) for p, k in parts)
    lo, hi = comp.get_approxDP_bounds(0, accuracy=accuracy)[:2]
    assert lo <= top * (1 + 1e-12) and hi >= top * (1 - 1e-12)
    delta = 1e-3
    if _exact_delta(parts, 0) > delta:
        eps_exact = optimize.brentq(lambda e: _exact_delta(parts, e) - delta, 0, top, xtol=1e-13)
        lo, hi = comp.get_approxDP_bounds(delta, accuracy=accuracy)[:2]
        assert lo <= eps_exact + 1e-9 and hi >= eps_exact - 1e-9


@pytest.mark.parametrize("parts,accuracy,eps", _cases(27, 3))
def test_rr_compositions_bracket_exact(parts, accuracy, eps):
    _check(parts, accuracy, eps)


@pytest.mark.slow
@pytest.mark.parametrize("parts,accuracy,eps", _cases(2727, 40))
def test_rr_compositions_bracket_exact_sweep(parts, accuracy, eps):
    _check(parts, accuracy, eps)
