"""``dpaccount.fourier``: the sizes are scipy's 5-smooth ones, and the composition's
per-bin noise bound (``pld/grids/transform.fft``) holds for the transforms it now runs,
checked against exact convolution (integer masses, Python integers)."""
from fractions import Fraction
from types import SimpleNamespace

import numpy as np
import pytest
import scipy.fft

from dpaccount import fourier
from dpaccount.pld.grids import transform


def _smooth(m):
    for p in (2, 3, 5):
        while m % p == 0:
            m //= p
    return m == 1


def test_next_fast_len_is_the_least_5_smooth_size():
    smooth = [m for m in range(1, 4000) if _smooth(m)]
    for n in range(1, 3600):
        assert fourier.next_fast_len(n) == next(m for m in smooth if m >= n), n
    for n in (1_900_000, 933_121, 2 ** 24 + 1, 10 ** 8 + 7):
        assert fourier.next_fast_len(n) == scipy.fft.next_fast_len(n, real=True)


def test_next_fast_len_refuses_a_size_below_one():
    with pytest.raises(ValueError, match="n=0"):
        fourier.next_fast_len(0)


def _exact_power(ints, k):
    """The k-fold self-convolution of a non-negative integer array, exactly (Python integers)."""
    out = [1]
    for _ in range(k):
        new = [0] * (len(out) + len(ints) - 1)
        for i, a in enumerate(out):
            if a:
                for j, b in enumerate(ints):
                    new[i + j] += a * b
        out = new
    return out


@pytest.mark.parametrize("n, k, seed", [(200, 3, 0), (150, 4, 1), (700, 2, 2)])
def test_the_fft_noise_bound_holds_against_exact_convolution(n, k, seed):
    """Masses m_j/D with integer m_j (D their sum rounded up to a power of two: exact
    floats summing to ≤ 1), composed k times: every bin within the bound ``fft`` states."""
    rng = np.random.default_rng(seed)
    ints = [int(v) for v in rng.integers(0, 2 ** 20, n) * (rng.random(n) < 0.7)]
    ints[0] = ints[-1] = 1 + ints[0]
    denom = 1 << (sum(ints) - 1).bit_length()
    grid = SimpleNamespace(probs=np.array(ints, dtype=float) / denom, offset=-3)
    width = k * (n - 1) + 1
    values, bin_err, _, _ = transform.fft([(grid, k)], k * grid.offset, width)
    exact = _exact_power(ints, k)
    scale = Fraction(1, denom ** k)
    worst = max(abs(Fraction(float(v)) - e * scale) for v, e in zip(values, exact))
    assert worst <= Fraction(bin_err)
    assert worst > 0  # the transform rounds: the comparison is not vacuous


def test_the_fft_noise_bound_holds_at_a_long_transform():
    """A 2-fold composition of 30,000 bins (a 60,000-point transform: 16 radix passes)."""
    rng = np.random.default_rng(3)
    ints = rng.integers(0, 2 ** 12, 30_000)
    denom = 1 << (int(ints.sum()) - 1).bit_length()
    grid = SimpleNamespace(probs=ints / denom, offset=0)
    values, bin_err, _, _ = transform.fft([(grid, 2)], 0, 2 * len(ints) - 1)
    exact = np.convolve(ints, ints)          # int64: sums below 2^24·30,000 < 2^63, exact
    err = np.abs(values * float(denom) ** 2 - exact.astype(float))  # scaling by 2^m is exact
    # exact.astype(float) rounds by ½ ulp of a value below 2^39: < 2^−14, far below bin_err·D²
    assert np.all(err <= bin_err * float(denom) ** 2 - 2.0 ** -14)


def test_numpy_and_scipy_transforms_agree_within_the_bound():
    """numpy's transform (numpy ≥ 2) and scipy's each within η of the exact one: within 2η
    of each other, coefficient by coefficient (inputs summing to 1)."""
    rng = np.random.default_rng(4)
    size = fourier.next_fast_len(100_001)
    x = rng.random((3, size))
    x /= x.sum(axis=1, keepdims=True) * (1 + 1e-12)
    eta = 5.0 * 2.0 ** -52 * np.ceil(np.log2(size) + 1)
    ours, theirs = fourier.rfft(x, axis=1), scipy.fft.rfft(x, axis=1)
    assert np.max(np.abs(ours - theirs)) <= 2 * eta
    back = fourier.irfft(ours, size, axis=1)
    assert np.max(np.abs(back - scipy.fft.irfft(theirs, size, axis=1))) <= 4 * eta


def _batched_items():
    """Five distinct grids (exact dyadic masses, some 0) on a transform of 2^21 points: two grids a
    batch, so rows are used again, a short grid after a long one (300, 5 and 7 points in row 0)."""
    from dpaccount.pld.grids.grid import PLDGrid
    rng = np.random.default_rng(5)
    items = []
    for n, k, offset in ((300, 1, -20), (40, 2, 3), (5, 1, 0), (200, 1, -7), (7, 2, 1)):
        ints = rng.integers(0, 2 ** 10, n) * (rng.random(n) < 0.8)
        ints[0] = ints[-1] = 1
        probs = ints / float(1 << (int(ints.sum()) - 1).bit_length())
        items.append((PLDGrid(step=0.01, offset=offset, probs=probs, p_inf=0.0), k))
    return items


@pytest.mark.parametrize("tilt", [0.0, 3.0])
def test_a_transform_of_several_batches_matches_direct_convolution(tilt):
    """``fft`` reuses its rows from batch to batch: every bin, untilted, within the noise bound
    of exact direct convolution (``direct``, bracketed by its own rounding); tilted, brought
    back (``untilt``) both ways, it brackets it."""
    items = _batched_items()
    size = 2 ** 21
    assert (1 << 22) // size == 2 < len(items)
    origin = sum(k * g.offset for g, k in items)
    width = sum(k * (len(g.probs) - 1) for g, k in items) + 1
    high, _ = transform.direct(items, origin, origin + width - 1, True)
    low, _ = transform.direct(items, origin, origin + width - 1, False)
    values, bin_err, log_scale, log_pad = transform.fft(items, origin, size, tilt)
    assert len(values) == size and np.all(np.abs(values[width:]) <= bin_err)
    if not tilt:
        assert np.all(values[:width] <= high + bin_err) and np.all(values[:width] >= low - bin_err)
        return
    upper, _ = transform.untilt(values[:width], bin_err, log_scale, log_pad, tilt, 0.01, origin, True)
    lower, _ = transform.untilt(values[:width], bin_err, log_scale, log_pad, tilt, 0.01, origin, False)
    assert np.all(upper >= low) and np.all(lower <= high)
    assert np.count_nonzero(lower > 0.5 * high) > width // 2  # tight where it is read, not vacuous
