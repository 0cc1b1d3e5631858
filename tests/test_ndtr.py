"""``dpaccount.ndtr.log_ndtr`` within its documented bound, against mpmath (exact values).

The bound for x ≤ 0, 4u·|log Φ(x)| (u = 2^−52), is what the Gaussian cells rely on
(they pad by ``log_cells.LOG_NDTR_ULPS`` = 16 of it); the table it evaluates is the one
``tests/ndtr_fit.py`` makes, and each piece's approximation and Horner rounding are
within the parts of that bound the module docstring states.
"""
import math
import pathlib

import mpmath as mp
import numpy as np
import pytest

import ndtr_fit
from dpaccount import ndtr
from dpaccount.ndtr import MEASURED, log_ndtr
from dpaccount.pld.pairs.log_cells import LOG_NDTR_ULPS

U = 2.0 ** -52
BOUND = 4.0  # × u·|log Φ(x)|, x ≤ 0 (dpaccount/ndtr.py)


def exact_log_ndtr(x):
    with mp.workdps(30):
        x = mp.mpf(float(x))
        if x > 0:
            return mp.log1p(-mp.erfc(x / mp.sqrt(2)) / 2)
        return mp.log(mp.erfc(-x / mp.sqrt(2)) / 2)


def _arguments(n, seed):
    """x ≤ 0 over the whole range the grids use: uniform on [−20, 0], log-uniform out to
    −2e5 (the DP-SGD grids reach −1.1e5), dense at 0, at every piece's ends and at the tail's start."""
    rng = np.random.default_rng(seed)
    ends = np.arange(len(ndtr.COEFFS) + 1) / ndtr.PER_UNIT
    return -np.concatenate((
        rng.uniform(0.0, 20.0, n // 2), np.exp(rng.uniform(math.log(20.0), math.log(2e5), n // 4)),
        rng.uniform(0.0, 1e-3, n // 8), rng.uniform(15.0, 17.0, n // 8),
        ends, np.nextafter(ends, np.inf), np.nextafter(ends, -np.inf)[1:]))


def _worst(xs):
    """max |computed − exact| / (u·|exact|) over xs."""
    got = log_ndtr(xs)
    return max(abs(float((mp.mpf(float(g)) - e) / e)) for g, e in zip(got, map(exact_log_ndtr, xs))) / U


def test_log_ndtr_within_its_bound():
    worst = _worst(_arguments(6000, seed=0))
    assert worst <= BOUND
    assert BOUND <= LOG_NDTR_ULPS / 2   # what the cells pad, with room for the second-order terms


@pytest.mark.slow
def test_log_ndtr_within_its_bound_at_many_points():
    """The measurement the module docstring quotes (``ndtr.MEASURED``): ≥ 10^5 points."""
    worst = _worst(_arguments(120_000, seed=1))
    assert worst <= BOUND and worst <= MEASURED + 0.1   # (another libm's log moves the tail's by ≪ 0.1)


def test_log_ndtr_far_out_and_at_the_ends():
    assert _worst(-np.array([40.0, 100.0, 1e3, 3e4, 1.1e5, 1e7, 1e100, 1e150])) <= BOUND
    got = log_ndtr(np.array([-np.inf, np.inf, np.nan, -0.0, -1e160]))
    assert got[0] == -np.inf and got[1] == 0.0 and np.isnan(got[2]) and got[4] == -np.inf
    assert abs(got[3] + math.log(2.0)) <= BOUND * U * math.log(2.0)


def test_log_ndtr_keeps_shapes_and_scalars():
    assert log_ndtr(np.zeros((2, 3))).shape == (2, 3)
    one = log_ndtr(-3.0)
    assert np.ndim(one) == 0 and abs(float(one) - float(exact_log_ndtr(-3.0))) <= BOUND * U * abs(float(one))


def test_log_ndtr_of_positive_arguments():
    """x > 0, off the grids' path: ≈ −Φ(−x), within (4|log Φ(−x)| + 9)u of itself."""
    xs = np.concatenate((np.linspace(1e-3, 8.0, 400), [12.0, 20.0, 37.0]))
    for x, got in zip(xs, log_ndtr(xs)):
        exact = exact_log_ndtr(x)
        allowed = (4 * abs(float(exact_log_ndtr(-x))) + 9) * U
        assert abs(float((mp.mpf(float(got)) - exact) / exact)) <= allowed, x


def test_the_table_is_the_generators():
    assert (ndtr_fit.PER_UNIT, ndtr_fit.PIECES) == (ndtr.PER_UNIT, len(ndtr.COEFFS))
    assert ndtr_fit.table() == ndtr.COEFFS
    assert ndtr_fit.table_source() in pathlib.Path(ndtr.__file__).read_text()


def test_each_piece_within_its_share_of_the_bound():
    """The polynomial (exact arithmetic on its float coefficients) within 0.4u·|log Φ|,
    its Horner rounding within 1.7·2^−53 of it: the parts of the 4u the module docstring adds up."""
    for i, coeffs in enumerate(ndtr.COEFFS):
        assert ndtr_fit.approximation_error(coeffs, i, points=21) <= 0.4 * U, i
        assert ndtr_fit.horner_bound(coeffs) <= 1.7, i


@pytest.mark.slow
def test_each_piece_within_its_share_of_the_bound_densely():
    for i, coeffs in enumerate(ndtr.COEFFS):
        assert ndtr_fit.approximation_error(coeffs, i, points=401) <= 0.4 * U, i


def test_sorted_runs_give_the_point_by_point_values():
    # a long sorted array takes each run's coefficients once (``_coefficients``); the same
    # points in a shuffled order are gathered one by one: the same Horner sums, so equal floats
    rng = np.random.default_rng(7)
    x = np.concatenate((np.sort(rng.uniform(-17.0, 0.0, 6000)), -np.sort(rng.uniform(0.0, 17.0, 6000))))
    order = rng.permutation(len(x))
    shuffled = np.empty_like(x)
    shuffled[order] = log_ndtr(x[order])
    assert np.array_equal(log_ndtr(x), shuffled)
    assert np.array_equal(log_ndtr(x[:100]), shuffled[:100])
