"""Balls-in-bins batching of a diagonal strategy: the composition of random allocations it
returns, an exact δ(ε) of one epoch by quadrature, and the refusals."""
import math

import numpy as np
import pytest
from scipy import integrate, stats

from dpaccount import (BallsInBinsSampling, Composition, GaussianMechanism, MatrixMechanism, Participation,
                       RandomAllocation)
from dpaccount import strategies as S


def _epoch_delta(z, eps):
    """δ(ε) of one epoch of two rounds, sensitivity 1, noise z: the pair P = ½N(e₁, z²I) + ½N(e₂, z²I),
    Q = N(0, z²I). With Y = dP/dQ = a(u₁) + a(u₂), a(u) = ½exp(u/z − 1/(2z²)), u ~ N(0, 1):
    remove δ = E[(Y − e^ε)_+], add δ = E[(1 − e^ε Y)_+]. The inner expectation over u₂ is a
    lognormal call/put in closed form; the outer one over u₁ by adaptive quadrature."""
    s, c = 1 / z, 0.5 * math.exp(-1 / (2 * z * z))
    mean = c * math.exp(s * s / 2)  # E[a(u)]

    def call(strike):  # E[(a(u) − strike)_+]
        if strike <= 0:
            return mean - strike
        d2 = (math.log(c / strike)) / s
        return mean * stats.norm.cdf(d2 + s) - strike * stats.norm.cdf(d2)

    def put(strike):  # E[(strike − a(u))_+]
        if strike <= 0:
            return 0.0
        d2 = (math.log(c / strike)) / s
        return strike * stats.norm.cdf(-d2) - mean * stats.norm.cdf(-d2 - s)

    def a(u):
        return c * math.exp(s * u)

    remove = integrate.quad(lambda u: stats.norm.pdf(u) * call(math.exp(eps) - a(u)), -40, 40,
                            epsabs=1e-14, epsrel=1e-11, limit=400)[0]
    add = integrate.quad(lambda u: stats.norm.pdf(u) * math.exp(eps) * put(math.exp(-eps) - a(u)), -40, 40,
                         epsabs=1e-14, epsrel=1e-11, limit=400)[0]
    return max(remove, add)


def test_identity_is_a_composition_of_random_allocations():
    n, k, z = 60, 4, 0.9
    m = MatrixMechanism(S.identity(n), z, Participation.fixed_epochs(k))  # epochs of 15 rounds
    got = BallsInBinsSampling()(m)
    norm = MatrixMechanism(m.strategy, z).sensitivity  # 1, certified (rounded up)
    assert norm == pytest.approx(1.0, rel=1e-12)
    want = Composition()([RandomAllocation()(GaussianMechanism(z, norm), 15)], [k])
    assert got == want
    # min_separation(b): the same epochs of b rounds
    assert BallsInBinsSampling()(MatrixMechanism(S.identity(n), z, Participation.min_separation(15))) == want


def test_scaled_diagonal_takes_its_largest_entry():
    c = np.diag([0.5, -0.8, 0.3, 0.7, 0.2, 0.6])
    z = 1.3
    got = BallsInBinsSampling()(MatrixMechanism(S.dense(c), z, Participation.fixed_epochs(2)))
    (epoch, count), = got.parts
    assert count == 2 and epoch.steps == 3
    assert epoch.base.sensitivity == pytest.approx(0.8, rel=1e-12) and epoch.base.sensitivity >= 0.8


@pytest.mark.parametrize("z,eps", [(1.0, 0.5), (0.8, 1.0), (2.0, 0.1)])
def test_one_epoch_against_exact_quadrature(z, eps):
    """One epoch of two rounds: the certified δ(ε) bracket holds the exact value and the
    upper bound is within the default accuracy of it."""
    mech = BallsInBinsSampling()(MatrixMechanism(S.identity(2), z, Participation.fixed_epochs(1)))
    exact = _epoch_delta(z, eps)
    bounds = mech.get_approx_delta_bounds(eps)
    assert bounds.certified and bounds.lower <= exact * (1 + 1e-8) and exact <= bounds.upper * (1 + 1e-8)
    assert mech.get_approx_delta(eps) <= exact * (1 + 1e-3)


def test_amplifies_but_never_below_one_epoch_per_record():
    """Sanity of the reduction: k epochs are at most the unamplified Gaussian of √k (every
    record in one round of each epoch, deterministically) and at least one epoch alone."""
    n, k, z = 40, 4, 1.0
    got = BallsInBinsSampling()(MatrixMechanism(S.identity(n), z, Participation.fixed_epochs(k)))
    plain = MatrixMechanism(S.identity(n), z, Participation.fixed_epochs(k))
    one = BallsInBinsSampling()(MatrixMechanism(S.identity(n // k), z, Participation.fixed_epochs(1)))
    assert one.get_approxDP(1e-6) < got.get_approxDP(1e-6) < plain.get_approxDP(1e-6)


def test_refusals():
    n = 24
    for strat in (S.toeplitz([1.0, 0.5], n), S.prefix(n), S.blt([0.9], [0.5], n), S.tree(n)):
        with pytest.raises(ValueError, match="diagonal"):
            BallsInBinsSampling()(MatrixMechanism(strat, 1.0, Participation.fixed_epochs(4)))
    with pytest.raises(ValueError, match="n=24"):
        BallsInBinsSampling()(MatrixMechanism(S.identity(n), 1.0, Participation.min_separation(5)))
    with pytest.raises(TypeError, match="MatrixMechanism"):
        BallsInBinsSampling()(GaussianMechanism(1.0))
    with pytest.raises(ValueError, match="add/remove"):
        BallsInBinsSampling()(MatrixMechanism(S.identity(n), 1.0, Participation.fixed_epochs(4),
                                              relation="replace-one"))
