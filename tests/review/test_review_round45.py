"""Review round 45: the one-step cap of random allocation (``pld/allocation/cap.py``),
balls-in-bins of a diagonal strategy (``transformers/balls_in_bins.py``) and
``AbsoluteAccuracy`` (``mechanisms/absolute_accuracy.py``), against exact values:
enumeration (finite pairs), mpmath quadrature with lognormal calls in closed form (one
balls-in-bins epoch), a Gauss–Hermite product rule whose convergence the test checks (two
epochs)."""
import math
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from numpy.polynomial.hermite_e import hermegauss
from oracles import allocation_law, discrete_delta, mechanism_tradeoff, piecewise_linear, product_law
from scipy.special import ndtr

from dpaccount import (BallsInBinsSampling, Composition, GaussianMechanism, MatrixMechanism, Participation,
                       PoissonSampling, RandomAllocation, RandomizedResponse)
from dpaccount import strategies as S
from dpaccount.errors import AccuracyNotReached
from dpaccount.mechanisms.absolute_accuracy import AbsoluteAccuracy

TINY = 0.5 + 2.0 ** -23  # randomized response of loss ~5e-7: its epochs take the one-step cap


def _mp(values):
    return [mp.mpf(x.numerator) / x.denominator for x in values]


# -- 1. the one-step cap ----------------------------------------------------------------------
@pytest.mark.parametrize("steps", [3, 10])
def test_capped_epoch_tradeoff_bracket_holds_the_exact_curve(steps):
    """f-DP of a capped epoch (upper pair = the step's, lower pair = the lattice's): the
    certified interval of β(α) holds the exact trade-off curve (Neyman–Pearson on the
    enumerated laws, both orders)."""
    epoch = RandomAllocation()(RandomizedResponse(TINY), steps)
    assert epoch.pairs.remove[0][0].key()[0] == "one-step-cap"
    curve = mechanism_tradeoff(*allocation_law((TINY, 1 - TINY), (1 - TINY, TINY), steps))
    alphas = [0.1, 0.3, 0.5, 0.7]
    exact = np.array([float(piecewise_linear(curve, Fraction(a))) for a in alphas])
    b = epoch.get_fDP_bounds(alphas)
    assert b.certified
    assert np.all(b.lower <= exact + 1e-15) and np.all(exact <= b.upper + 1e-15), (b, exact)


def test_composed_capped_epochs_bracket_the_exact_product():
    """Two capped epochs composed: the certified δ(ε) interval (its last one where it is still
    wider than asked) holds the exact δ of the product laws (enumeration, both orders)."""
    p, q = allocation_law((TINY, 1 - TINY), (1 - TINY, TINY), 3)
    big_p, big_q = (_mp(x) for x in product_law([(p, q), (p, q)]))
    eps = [0.0, 1e-7, 4e-7]
    exact = np.array([float(max(discrete_delta(e, list(zip(big_p, big_q))),
                                discrete_delta(e, list(zip(big_q, big_p))))) for e in eps])
    two = Composition()([RandomAllocation()(RandomizedResponse(TINY), 3)], [2])
    try:
        b = two.get_approx_delta_bounds(eps)
    except AccuracyNotReached as err:
        b = err.bounds
    assert b.certified
    assert np.all(b.lower <= exact) and np.all(exact <= b.upper), (b, exact)
    assert np.all(exact <= two.get_approx_delta(eps))


# -- 2. balls-in-bins ---------------------------------------------------------------------------
def _lognormal(s):
    """(call, put) functions of B = ½·exp(s·u − s²/2), u ~ N(0, 1) (B = ½ where s = 0), mpmath."""
    s, half = abs(mp.mpf(s)), mp.mpf(1) / 2
    if s == 0:
        return (lambda k: max(half - k, 0)), (lambda k: max(k - half, 0))
    c = half * mp.e ** (-s * s / 2)

    def call(k):
        if k <= 0:
            return half - k
        d = mp.log(c / k) / s
        return half * mp.ncdf(d + s) - k * mp.ncdf(d)

    def put(k):
        if k <= 0:
            return mp.mpf(0)
        d = mp.log(c / k) / s
        return k * mp.ncdf(-d) - half * mp.ncdf(-d - s)
    return call, put


def _one_epoch_delta(eps, s1, s2):
    """max(remove, add) δ(ε) of one balls-in-bins epoch of two rounds with shifts s1, s2 (noise
    units): P = ½N(s1·e1, I) + ½N(s2·e2, I) against Q = N(0, I), Y = dP/dQ = A(u1) + B(u2); the
    u2 integral a lognormal call/put, the u1 one by mpmath quadrature."""
    eps, s1 = mp.mpf(eps), abs(mp.mpf(s1))
    a = lambda u: mp.e ** (s1 * u - s1 * s1 / 2) / 2
    call, put = _lognormal(s2)
    big = mp.e ** eps
    cuts = [-mp.inf, -5, 0, 5, mp.inf]
    remove = mp.quad(lambda u: mp.npdf(u) * call(big - a(u)), cuts)
    add = big * mp.quad(lambda u: mp.npdf(u) * put(1 / big - a(u)), cuts)
    return max(remove, add)


def _two_epochs_delta(eps, s, nodes):
    """max(remove, add) δ(ε) of two epochs of two rounds of shift s: E[(Y·Y' − e^ε)_+] and
    e^ε·E[(e^{−ε} − Y·Y')_+], Y, Y' iid epoch ratios; the last coordinate's integral a
    lognormal call/put in closed form, the other three by a Gauss–Hermite product rule."""
    x, w = hermegauss(nodes)
    w = w / w.sum()
    u1, u2, u3 = np.meshgrid(x, x, x, indexing="ij")
    wt = w[:, None, None] * w[None, :, None] * w[None, None, :]
    a = lambda u: 0.5 * np.exp(s * u - s * s / 2)
    c, big = 0.5 * math.exp(-s * s / 2), math.exp(eps)
    y, a3 = a(u1) + a(u2), a(u3)

    def d_of(k):
        return np.log(c / np.maximum(k, 1e-300)) / s
    k = big / y - a3
    call = np.where(k > 0, 0.5 * ndtr(d_of(k) + s) - np.maximum(k, 0) * ndtr(d_of(k)), 0.5 - k)
    k = 1 / (big * y) - a3
    put = np.where(k > 0, np.maximum(k, 0) * ndtr(-d_of(k)) - 0.5 * ndtr(-d_of(k) - s), 0.0)
    return max(float(np.sum(wt * y * call)), big * float(np.sum(wt * y * put)))


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0])
@pytest.mark.parametrize("participation", [Participation.fixed_epochs(2), Participation.min_separation(2)])
def test_two_epochs_of_identity_bracket_the_exact_value(eps, participation):
    """n = 4 rounds, b = 2: the certified δ(ε) interval holds the exact δ of the mechanism's
    output laws on neighbouring datasets (two independent epochs of two rounds). The
    quadrature's convergence (90 against 120 nodes) is checked and allowed for."""
    z = 2.0
    got = BallsInBinsSampling()(MatrixMechanism(S.identity(4), z, participation))
    coarse, exact = (_two_epochs_delta(eps, 1 / z, n) for n in (90, 120))
    slack = 10 * abs(coarse - exact) + 1e-12
    assert slack < 1e-5 * exact  # far inside the bracket's width (the default accuracy 1e-3)
    b = got.get_approx_delta_bounds(eps)
    assert b.certified and b.lower <= exact + slack and exact <= b.upper + slack, (b, exact)


@pytest.mark.parametrize("c", [(0.25, 1.0), (0.0, 1.0), (-1.0, 1.0), (1.0, -0.5)])
@pytest.mark.parametrize("eps", [0.1, 0.5])
def test_one_epoch_of_an_unequal_diagonal_is_bounded(c, eps):
    """Diagonal C = diag(c), n = b = 2: the upper bound (the Gaussian of max|c_t|) is at least
    the exact δ of the real epoch (shifts c_1, c_2; a zero entry releases noise only)."""
    z = 1.0
    got = BallsInBinsSampling()(MatrixMechanism(S.dense(np.diag(c)), z, Participation.fixed_epochs(1)))
    with mp.workdps(30):
        exact = float(_one_epoch_delta(eps, c[0] / z, c[1] / z))
    assert exact <= got.get_approx_delta(eps)
    assert exact <= got.get_approx_delta_bounds(eps).upper


@pytest.mark.parametrize("c", [(0.25, 1.0), (0.0, 1.0)])
def test_lower_end_of_an_unequal_diagonal_is_below_the_exact_value(c):
    """The certified lower end (said to bound the mechanism) at most the exact δ of the real epoch."""
    z, eps = 1.0, 0.1
    got = BallsInBinsSampling()(MatrixMechanism(S.dense(np.diag(c)), z, Participation.fixed_epochs(1)))
    with mp.workdps(30):
        exact = float(_one_epoch_delta(eps, c[0] / z, c[1] / z))
    b = got.get_approx_delta_bounds(eps)
    assert b.lower is None or b.lower <= exact, (b, exact)


def test_equal_magnitudes_keep_their_lower_end():
    """c = (−1, 1): the same epoch as the identity's (a sign is a bijection of the output), so
    the attained lower end holds the exact value."""
    z, eps = 1.0, 0.5
    got = BallsInBinsSampling()(MatrixMechanism(S.dense(np.diag([-1.0, 1.0])), z, Participation.fixed_epochs(1)))
    with mp.workdps(30):
        exact = float(_one_epoch_delta(eps, 1 / z, 1 / z))
    b = got.get_approx_delta_bounds(eps)
    assert b.certified and b.lower <= exact <= b.upper


# -- 3. AbsoluteAccuracy ------------------------------------------------------------------------
def test_absolute_accuracy_lies_in_its_base_certified_interval():
    """Its ε(δ) and its interval are certified bounds of the same pairs: the answer within the
    base's certified interval at a fine accuracy, the two intervals overlap, and the answer
    is at most the base's at the accuracy asked plus the grids' error (both upper bounds)."""
    base = Composition()([PoissonSampling()(GaussianMechanism(1.0), 0.1)], [10])
    m = AbsoluteAccuracy(base, 1e-6)
    for delta in (1e-3, 1e-6):
        fine = base.get_approxDP_bounds(delta, accuracy=1e-6)
        got, b = m.get_approxDP(delta), m.get_approxDP_bounds(delta)
        assert fine.lower <= got and b.lower <= fine.upper and fine.lower <= b.upper
        assert got - fine.lower <= 1e-6 * max(fine.lower, 1.0)


def test_absolute_accuracy_refused_calls_name_the_parameter_and_change_nothing():
    m = AbsoluteAccuracy(PoissonSampling()(GaussianMechanism(1.0), 0.1), 1e-6)
    before = set(m._cache)
    for call, name in ((lambda: m.get_approxDP(-1.0), "delta"), (lambda: m.get_approxDP(1e-6, accuracy=2.0), "accuracy"),
                       (lambda: m.get_approxDP_bounds(float("nan")), "delta"),
                       (lambda: m.get_approxDP(1e-6, method="bogus"), "method")):
        with pytest.raises((ValueError, TypeError), match=name):
            call()
    assert set(m._cache) == before
    for bad in (0.0, -1.0, float("nan"), float("inf"), True, None):
        with pytest.raises((ValueError, TypeError), match="epsilon_error"):
            AbsoluteAccuracy(m.base, bad)


def test_capped_gaussian_epoch_brackets_the_exact_value():
    """A Gaussian of σ = 1e8 over two steps (its epoch takes the one-step cap): the certified
    δ(ε) interval holds the exact epoch (mpmath quadrature, ``_one_epoch_delta`` at equal
    shifts 1/σ), and the upper end is at most the one step's closed form."""
    sigma, eps = 1e8, [0.0, 1e-9, 5e-9]
    epoch = RandomAllocation()(GaussianMechanism(sigma), 2)
    assert epoch.pairs.remove[0][0].key()[0] == "one-step-cap"
    with mp.workdps(40):
        exact = np.array([float(_one_epoch_delta(e, 1 / sigma, 1 / sigma)) for e in eps])
    b = epoch.get_approx_delta_bounds(eps)
    assert b.certified
    assert np.all(b.lower <= exact) and np.all(exact <= b.upper), (b, exact)


def test_balls_in_bins_spec_only_where_the_step_is_a_gaussian_mechanism():
    """Equal |c_t|: the random allocation of a Gaussian mechanism, read back equal from its spec.
    Unequal: a dominating step that is no Gaussian mechanism's release, which has no spec
    (a TypeError, as for every mechanism without one), rather than a spec read back as the
    attained Gaussian."""
    import dpaccount
    same = BallsInBinsSampling()(MatrixMechanism(S.dense(np.diag([-0.5, 0.5, 0.5, -0.5])), 1.0,
                                                 Participation.fixed_epochs(2)))
    assert dpaccount.from_spec(same.to_spec()) == same
    assert same.pairs.tight
    mixed = BallsInBinsSampling()(MatrixMechanism(S.dense(np.diag([0.5, 1.0, 0.5, 1.0])), 1.0,
                                                  Participation.fixed_epochs(2)))
    assert not mixed.pairs.tight
    with pytest.raises(TypeError, match="no spec"):
        mixed.to_spec()
