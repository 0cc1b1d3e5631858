"""Answers whose sums went through BLAS dot products are the same floats whatever the BLAS
thread count.

A threaded BLAS dot splits its sum among the threads, so the rounding of a long dot
product follows the thread count (numpy's OpenBLAS threads a dot above ~10,000 terms).
The sums that feed the odometer's δ, a Toeplitz strategy's sensitivity, the subsampled
characteristic function and random allocation's grouping are numpy reductions, whose order
is fixed, and the allocation witness's convolutions take dots of at most 4,096 terms.
Each answer is computed under one BLAS thread and under two, in this process (the thread
count is set through OpenBLAS's own function; the test is skipped under another BLAS),
from fresh mechanisms and an empty grid cache, and the floats must be equal.
"""
import contextlib
import ctypes
import warnings

import numpy as np
import pytest

import dpaccount as dpa
from dpaccount import strategies
from dpaccount.mechanisms.matrix_sensitivity import matrix_sensitivity
from dpaccount.pld.allocation.lower import _convolve


def _openblas():
    """[(set, get) of the thread count] of every loaded OpenBLAS (numpy's, and scipy's where
    it brings its own), or [] (another BLAS, or not Linux)."""
    try:
        with open("/proc/self/maps", encoding="utf-8") as f:
            paths = sorted({line.split()[-1] for line in f if "openblas" in line.lower()})
    except OSError:
        return []
    out = []
    for path in paths:
        lib = ctypes.CDLL(path)
        for prefix, suffix in (("scipy_openblas", "64_"), ("scipy_openblas", ""), ("openblas", "64_"),
                               ("openblas", "")):
            put, get = (getattr(lib, f"{prefix}_{verb}_num_threads{suffix}", None) for verb in ("set", "get"))
            if put is not None and get is not None:
                get.restype = ctypes.c_int
                out.append((put, get))
                break
    return out


_BLAS = _openblas()


@contextlib.contextmanager
def _threads(n):
    before = [get() for _, get in _BLAS]
    for put, _ in _BLAS:
        put(n)
    try:
        assert all(get() == n for _, get in _BLAS)
        yield
    finally:
        for (put, _), k in zip(_BLAS, before):
            put(k)


def _odometer():
    """δ(1) after each of three rounds of Laplace and Gaussian steps: their spectra decay
    slowly, so each δ is a Plancherel dot product of 1,000-12,000 terms."""
    lap, gauss = dpa.LaplaceMechanism(2.0), dpa.GaussianMechanism(1.1)
    odo = dpa.PrivacyOdometer(dpa.Composition()([lap, gauss], [50, 50]))
    out = []
    for _ in range(3):
        odo.step(lap, count=2)
        odo.step(gauss)
        out.append(odo.get_approx_delta(1.0))
    return out


def _sensitivities():
    """A BLT strategy's sensitivity under 100-separation (the earliest pattern's ‖Cu‖², a
    60,000-term sum) and a Toeplitz one's autocorrelation bound."""
    blt = strategies.blt([0.9, 0.5], [0.3, 0.2], 60000)
    coeffs = np.cos(np.arange(40000)) / (1.0 + np.arange(40000))
    return [matrix_sensitivity(blt, 4, 100, False).value,
            matrix_sensitivity(strategies.toeplitz(coeffs, 40000), 3, 10000, False).value]


def _characteristic():
    """δ(1) of 100 Poisson-subsampled Gaussian steps by the characteristic function."""
    mech = dpa.Composition()([dpa.PoissonSampling()(dpa.GaussianMechanism(1.0), 0.01)], [100])
    return [mech.get_approx_delta(1.0, method="cf")]


def _allocation():
    """ε(1e-5) of a Gaussian randomly allocated to one of 50 steps."""
    return [dpa.RandomAllocation()(dpa.GaussianMechanism(1.1), 50).get_approxDP(1e-5)]


def _witness_convolution():
    """A convolution of two 20,000-point laws, as the allocation witness takes them (each
    output a sum of up to 20,000 products), rounded up and down."""
    rng = np.random.default_rng(7)
    x, y = rng.random(20000), rng.random(20000)
    return np.concatenate((_convolve(x, y, True), _convolve(x, y, False)))


@pytest.mark.skipif(not _BLAS, reason="the thread count is set through OpenBLAS's own function")
@pytest.mark.parametrize("answers", [_odometer, _sensitivities, _characteristic, _allocation, _witness_convolution])
def test_answers_do_not_depend_on_the_blas_thread_count(answers):
    runs = []
    for n in (1, 2):
        dpa.clear_cache()
        with _threads(n), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runs.append([float(v) for v in answers()])
    assert runs[0] == runs[1]
