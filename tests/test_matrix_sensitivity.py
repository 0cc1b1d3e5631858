"""Certified sensitivity of matrix mechanisms: brute force over every participation
pattern (small n), jax_privacy's sensitivity functions, and the tree's own route."""
import itertools
import math

import numpy as np
import pytest

from dpaccount import strategies as S
from dpaccount.mechanisms.matrix import MatrixMechanism, Participation
from dpaccount.mechanisms.training import SingleTreeAggregation, TreeAggregation

TOL = 1e-9  # relative: our padding for float rounding is ~1e-13, brute force's rounding below that


def _patterns(n, k, b, fixed):
    if fixed:
        w = n // k
        return [tuple(p + j * w for j in range(k)) for p in range(w)]
    out = []
    for size in range(1, k + 1):
        for s in itertools.combinations(range(n), size):
            if all(y - x >= b for x, y in zip(s, s[1:])):
                out.append(s)
    return out


def brute_force(c, n, k, b, fixed):
    """max over patterns S and signs s of ‖C_S s‖² (scalar contributions: a lower bound
    on Δ², equal to it where X_S ≥ 0 on the maximiser)."""
    best = 0.0
    for s in _patterns(n, k, b, fixed):
        cols = c[:, list(s)]
        for signs in itertools.product((1.0, -1.0), repeat=len(s) - 1):
            y = cols @ np.array((1.0,) + signs)
            best = max(best, float(y @ y))
    return best


def _strategies(n, rng):
    lower = np.tril(rng.normal(size=(n, n)))
    band3 = np.tril(np.abs(rng.normal(size=(n, n)))) * (np.subtract.outer(np.arange(n), np.arange(n)) < 3)
    return [
        S.dense(lower), S.dense(np.abs(lower)), S.dense(band3), S.toeplitz([1.0, 0.6, 0.3, 0.1], n),
        S.toeplitz([1.0, -0.7, 0.4], n), S.toeplitz([0.5, 1.0, 0.2, 0.9], n),
        S.blt([0.9, 0.5], [0.2, 0.1], n), S.prefix(n), S.identity(n), S.tree(n),
    ]


def _participations(n):
    out = [Participation.single()]
    out += [Participation.fixed_epochs(k) for k in (2, 3, 4) if n % k == 0]
    out += [Participation.min_separation(b, k) for b, k in ((1, 2), (1, 3), (2, 2), (2, 3), (3, 3))
            if (k - 1) * b < n]
    out.append(Participation.min_separation(2))
    return out


@pytest.mark.parametrize("n", [6, 8])
def test_never_below_brute_force_and_equal_where_exact(n):
    rng = np.random.default_rng(n)
    for strategy in _strategies(n, rng):
        c = strategy.to_dense()
        for part in _participations(n):
            m = MatrixMechanism(strategy, 1.0, part)
            k, b, fixed = part.resolve(n)
            brute = brute_force(c, n, k, b, fixed)
            label = (strategy.kind, part, m.sensitivity_method)
            assert m.sensitivity ** 2 >= brute * (1 - 1e-15), label
            if m.sensitivity_exact:
                assert m.sensitivity ** 2 == pytest.approx(brute, rel=TOL), label


def test_exact_for_nonnegative_gram_and_banded():
    rng = np.random.default_rng(0)
    n = 8
    nonneg = S.dense(np.tril(np.abs(rng.normal(size=(n, n)))))
    for part in _participations(n):
        assert MatrixMechanism(nonneg, 1.0, part).sensitivity_exact, part
    signed_banded = S.toeplitz([1.0, -0.9], 40)  # 2 bands, negative Gram entries
    m = MatrixMechanism(signed_banded, 1.0, Participation.min_separation(2, 5))
    assert m.sensitivity_exact and m.sensitivity ** 2 == pytest.approx(5 * 1.81, rel=TOL)


def test_large_toeplitz_bounds_are_valid_against_brute_force():
    """The bounds that serve large n (triangle inequality, Toeplitz autocorrelation),
    forced at small n by a non-monotone Toeplitz with too many patterns to enumerate."""
    from dpaccount.mechanisms import matrix_sensitivity as ms
    for coeffs in ([0.5, 1.0, 0.2, 0.9], [1.0, -0.7, 0.4, 0.3]):
        n, b, k = 9, 2, 3
        strat = S.toeplitz(coeffs, n)
        brute = brute_force(strat.to_dense(), n, k, b, False)
        assert ms._autocorrelation_bound(strat.coeffs, n, b, k) >= brute
        norms = np.sqrt(strat.column_norms_squared())
        assert float(ms.linear_max(norms, b, k)) ** 2 >= brute
        rows = ms._contained_rows(np.abs(strat.to_dense().T @ strat.to_dense()), b, k)
        assert float(ms.linear_max(rows, b, k)) >= brute


@pytest.mark.parametrize("steps,k,b", [(7, 1, 1), (8, 2, 1), (12, 3, 4), (16, 4, 4), (30, 5, 3)])
def test_tree_agrees_with_single_tree_aggregation(steps, k, b):
    m = MatrixMechanism(S.tree(steps), 1.3, Participation.min_separation(b, k))
    assert m.sensitivity == SingleTreeAggregation(1.3, steps, k, b).sensitivity
    assert m.get_approxDP(1e-6) == SingleTreeAggregation(1.3, steps, k, b).get_approxDP(1e-6)


def test_tree_single_is_tree_aggregation():
    m = MatrixMechanism(S.tree(1000), 5.0)
    assert m.sensitivity == TreeAggregation(5.0, 1000).sensitivity


def test_tree_fixed_epochs_matches_dense_enumeration():
    for n, k in ((12, 3), (16, 4), (20, 5)):
        c = S.tree(n).to_dense()
        brute = brute_force(c, n, k, n // k, True)  # the tree's Gram is non-negative: exact
        m = MatrixMechanism(S.tree(n), 1.0, Participation.fixed_epochs(k))
        assert m.sensitivity ** 2 == pytest.approx(brute, rel=TOL)


def test_structured_matches_dense():
    n = 60
    for strat in (S.toeplitz([1.0, 0.5, 0.25], n), S.blt([0.8], [0.3], n), S.prefix(n)):
        for part in (Participation.fixed_epochs(4), Participation.min_separation(7, 5)):
            a = MatrixMechanism(strat, 1.0, part)
            d = MatrixMechanism(S.dense(strat.to_dense()), 1.0, part)
            assert a.sensitivity_exact
            if d.sensitivity_exact:
                assert a.sensitivity == pytest.approx(d.sensitivity, rel=TOL)
            else:  # too many patterns to enumerate densely: the dense route's bound is above
                assert d.sensitivity >= a.sensitivity


def test_blt_coefficients():
    strat = S.blt([0.5, 0.25], [2.0, 4.0], 5)
    want = [1.0, 6.0, 2.0 * 0.5 + 4.0 * 0.25, 2.0 * 0.25 + 4.0 / 16, 2.0 / 8 + 4.0 / 64]
    np.testing.assert_allclose(strat.to_dense()[:, 0], want, rtol=1e-15)


@pytest.mark.parametrize("bad,match", [
    (np.ones((3, 4)), "square"), (np.triu(np.ones((3, 3))), "lower triangular"),
    (np.array([[1.0, 0], [np.nan, 1]]), "finite"), ([[1.0]] * 0, "square"), ("abc", "strategy"),
])
def test_bad_strategy(bad, match):
    with pytest.raises((ValueError, TypeError), match=match):
        MatrixMechanism(bad, 1.0)


def test_bad_participation_and_coeffs():
    with pytest.raises(ValueError, match="max_participations=4"):
        MatrixMechanism(S.prefix(6), 1.0, Participation.min_separation(2, 4))
    with pytest.raises(ValueError, match="fixed_epochs"):
        MatrixMechanism(S.prefix(7), 1.0, Participation.fixed_epochs(2))
    with pytest.raises(ValueError, match="separation"):
        MatrixMechanism(S.prefix(7), 1.0, Participation.min_separation(8))
    with pytest.raises(ValueError, match="separation"):
        Participation.min_separation(0)
    with pytest.raises(ValueError, match="coeffs"):
        S.toeplitz([1.0, float("nan")], 5)
    with pytest.raises(ValueError, match="coeffs"):
        S.toeplitz([1.0] * 6, 5)
    with pytest.raises(ValueError, match="noise_multiplier"):
        MatrixMechanism(S.prefix(6), -1.0)
    with pytest.raises(TypeError, match="participation"):
        MatrixMechanism(S.prefix(6), 1.0, "single")


def test_gaussian_answers_and_calibration():
    from dpaccount import GaussianMechanism, calibrate
    m = MatrixMechanism(S.toeplitz([1.0, 0.5], 100), 2.0, Participation.min_separation(2, 10))
    g = GaussianMechanism(2.0, m.sensitivity)
    assert m.get_approxDP(1e-5) == g.get_approxDP(1e-5)
    assert m.mu == pytest.approx(math.sqrt(10 * 1.25) / 2.0, rel=TOL)


# -- jax_privacy's sensitivity functions -------------------------------------------------------

def _jax():
    sens = pytest.importorskip("jax_privacy.matrix_factorization.sensitivity",
                               reason="jax_privacy (the matrix-peers extra) is not installed")
    import jax
    jax.config.update("jax_enable_x64", True)
    return sens


@pytest.mark.parametrize("n", [12, 24])
def test_against_jax_privacy(n):
    jp = _jax()
    rng = np.random.default_rng(7)
    for strategy in _strategies(n, rng)[:-1]:  # the tree is not square
        c = strategy.to_dense()
        assert MatrixMechanism(strategy, 1.0).sensitivity == pytest.approx(
            float(jp.single_participation_sensitivity(c)), rel=TOL)
        for k in (2, 3, 4):
            ours = MatrixMechanism(strategy, 1.0, Participation.fixed_epochs(k)).sensitivity
            assert ours == pytest.approx(jp.fixed_epoch_sensitivity(c, k), rel=TOL)
        for b, k in ((1, 3), (2, 4), (3, 3), (5, 2)):
            m = MatrixMechanism(strategy, 1.0, Participation.min_separation(b, k))
            upper = jp.get_min_sep_sensitivity_upper_bound(c, b, k)
            assert m.sensitivity <= upper * (1 + TOL), (strategy.kind, b, k)
            if strategy.bands <= b:  # jax_privacy's exact case
                assert m.sensitivity == pytest.approx(jp.get_sensitivity_banded(c, b, k), rel=TOL)
                assert m.sensitivity_exact


def test_branch_and_bound_is_the_enumerated_maximum():
    from dpaccount.mechanisms.matrix_search import branch_and_bound
    from dpaccount.mechanisms.matrix_sensitivity import _contained_rows, _enumerate
    rng = np.random.default_rng(3)
    for trial in range(24):
        n, b, k = int(rng.integers(6, 14)), int(rng.integers(1, 4)), int(rng.integers(2, 5))
        if (k - 1) * b >= n:
            continue
        c = np.tril(rng.normal(size=(n, n)))
        c = c if trial % 2 else np.abs(c)
        x = c.T @ c
        found = branch_and_bound(x, _contained_rows(np.abs(x), b, k), b, k, 1e9)
        want, _ = _enumerate(x, b, k)
        assert found.finished and found.value == pytest.approx(want, rel=1e-12)


def test_branch_and_bound_route_against_brute_force(monkeypatch):
    """With enumeration switched off, the search route still never goes below brute force
    and is equal to it where it claims exactness."""
    from dpaccount.mechanisms import matrix_sensitivity as ms
    monkeypatch.setattr(ms, "ENUM_CAP", 0)
    rng = np.random.default_rng(5)
    n = 9
    for c in (np.tril(np.abs(rng.normal(size=(n, n)))), np.tril(rng.normal(size=(n, n))), S.prefix(n).to_dense()):
        for b, k in ((1, 3), (2, 3), (3, 3)):
            m = MatrixMechanism(S.dense(c), 1.0, Participation.min_separation(b, k))
            brute = brute_force(c, n, k, b, False)
            assert m.sensitivity ** 2 >= brute
            if m.sensitivity_exact:
                assert "branch and bound" in m.sensitivity_method
                assert m.sensitivity ** 2 == pytest.approx(brute, rel=1e-10)


@pytest.mark.parametrize("steps,epochs", [(1000, 3), (7, 5), (64, 2)])
def test_restarted_tree_is_tree_aggregation(steps, epochs):
    m = MatrixMechanism(S.tree(steps * epochs, restart_every=steps), 5.0, Participation.fixed_epochs(epochs))
    want = TreeAggregation(5.0, steps, epochs)
    assert m.sensitivity == want.sensitivity and m.sensitivity_exact
    assert m.get_approxDP(1e-5) == want.get_approxDP(1e-5)


def test_restarted_tree_fixed_epochs_brute_force_and_refusals():
    for n, block, k in ((12, 4, 3), (12, 6, 2), (16, 8, 4), (24, 8, 3), (20, 5, 4)):
        strat = S.tree(n, restart_every=block)
        m = MatrixMechanism(strat, 1.0, Participation.fixed_epochs(k))
        assert m.sensitivity ** 2 == pytest.approx(brute_force(strat.to_dense(), n, k, n // k, True), rel=TOL)
    with pytest.raises(ValueError, match="restart_every"):
        S.tree(10, restart_every=3)
    with pytest.raises(ValueError, match="restarted"):
        MatrixMechanism(S.tree(12, restart_every=4), 1.0, Participation.min_separation(2, 3))


def test_calibrate_the_noise_multiplier():
    from dpaccount import GaussianMechanism, calibrate
    strat, part = S.blt([0.9, 0.5], [0.2, 0.1], 500), Participation.min_separation(50, 10)
    z = calibrate(lambda x: MatrixMechanism(strat, x, part), eps=2.0, delta=1e-5, bounds=(0.5, 200.0))
    sens = MatrixMechanism(strat, 1.0, part).sensitivity
    assert z == calibrate(lambda x: GaussianMechanism(x, sens), eps=2.0, delta=1e-5, bounds=(0.5, 200.0))
    assert MatrixMechanism(strat, z, part).get_approxDP(1e-5) <= 2.0


def test_large_dense_fixed_epochs_falls_back_to_a_valid_bound(monkeypatch):
    from dpaccount.mechanisms import matrix_sensitivity as ms
    monkeypatch.setattr(ms, "DENSE_ROUTE", 4)
    rng = np.random.default_rng(11)
    n, k = 8, 2
    c = np.tril(rng.normal(size=(n, n)))
    m = MatrixMechanism(S.dense(c), 1.0, Participation.fixed_epochs(k))
    assert not m.sensitivity_exact and "triangle" in m.sensitivity_method
    assert m.sensitivity ** 2 >= brute_force(c, n, k, n // k, True)
