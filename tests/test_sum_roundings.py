"""``numerics.sum_roundings``: the rounding depth behind every bound on a numpy sum.

The depth is checked two ways: against a model of numpy's summation (pairwise within
blocks of 8,192, the blocks in sequence) followed term by term, and against exact sums
(``math.fsum``) of data built to make the blocks' sequential adds count: the largest term
first, then one unit at the start of every block (at 2^21 terms numpy 2.1 loses 256 units,
where a log₂n count would allow 39; the odometer's dot products reach 2^23).
"""
import math
from functools import lru_cache

import numpy as np
import pytest

from dpaccount.numerics import SUM_BLOCK, UNIT_ROUNDOFF, sum_roundings


@lru_cache(maxsize=None)
def _pairwise_depth(n):
    """The deepest term of numpy's pairwise sum of n terms (numpy/_core/src/umath/loops_utils.h)."""
    if n < 8:
        return max(n - 1, 0)
    if n <= 128:
        return n // 8 - 1 + 3 + n % 8  # 8 accumulators, a tree over them, the rest in sequence
    half = n // 2 - (n // 2) % 8
    return 1 + max(_pairwise_depth(half), _pairwise_depth(n - half))


def _model_depth(n):
    blocks = -(-n // SUM_BLOCK)
    return _pairwise_depth(min(n, SUM_BLOCK)) + blocks - 1


def test_the_depth_covers_numpys_summation_at_every_length():
    lengths = list(range(1, 20_000)) + [2 ** k + d for k in range(15, 24) for d in (-1, 0, 1, 7)]
    short = [n for n in lengths if sum_roundings(n) < _model_depth(n)]
    assert not short, short[:10]


@pytest.mark.parametrize("n", [8193, 1 << 16, 1 << 21])
def test_a_sum_built_against_the_blocks_stays_within_the_bound(n):
    x = np.zeros(n)
    x[0], x[SUM_BLOCK::SUM_BLOCK] = 2.0 ** 53, 1.0  # each unit lost where added to the big term
    err = abs(float(np.sum(x)) - math.fsum(x.tolist()))
    bound = (sum_roundings(n) + 1) * UNIT_ROUNDOFF * float(np.sum(np.abs(x)))
    assert err <= bound


def test_random_sums_stay_within_the_bound():
    rng = np.random.default_rng(7)
    for n in (5, 100, 129, 250, 8192, 30_000):
        x = rng.standard_normal(n) * np.exp(rng.uniform(-20, 20, n))
        err = abs(float(np.sum(x)) - math.fsum(x.tolist()))
        assert err <= (sum_roundings(n) + 1) * UNIT_ROUNDOFF * float(np.sum(np.abs(x)))
