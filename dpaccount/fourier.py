"""The real FFTs the grids compose with (``pld/grids/transform.py``, ``pld/grids/odometer.py``):
numpy.fft where numpy ≥ 2, scipy.fft before.

numpy 2.0 replaced its C pocketfft by the C++ pocketfft (M. Reinecke) that
scipy.fft has run since scipy 1.4. On the sizes used here, 5-smooth
(``next_fast_len``), both run the same radix-2, 3, 4 and 5 passes with the same
exactly computed twiddle factors: the per-coefficient rounding bound the
composition assumes, η = 5u·⌈log₂ n + 1⌉ for inputs that sum to ≤ 1
(``transform.py``: each pass errs by a few u of the sum of its inputs' moduli,
which no pass increases), holds for either; tests/test_fourier.py checks the
bound against exact convolution and that both libraries give the same floats
here (numpy 2.1, scipy 1.17, sizes up to 1.9·10⁶). numpy's transform costs
the same CPU single-threaded (benchmarks/README.md), and a first query does not
import scipy.fft. numpy 1.x has its older C pocketfft, slower on stacks of rows
and not the same floats: there scipy.fft runs, on all cores for a stack of rows
(``workers=-1``).
"""
import numpy as np

from .lazy import lazy

_NUMPY_FFT = np.lib.NumpyVersion(np.__version__) >= "2.0.0"
_sfft = lazy("scipy.fft")


def next_fast_len(n: int) -> int:
    """The least 5-smooth integer (2^a·3^b·5^c) ≥ n, n ≥ 1: scipy.fft.next_fast_len(n, real=True)."""
    if n < 1:
        raise ValueError(f"next_fast_len needs n >= 1, got n={n!r}")
    best = 1 << (n - 1).bit_length()
    p5 = 1
    while p5 < best:
        p35 = p5
        while p35 < best:
            need = -(-n // p35)                       # the least 2^a with 2^a·p35 ≥ n
            best = min(best, p35 << (need - 1).bit_length())
            p35 *= 3
        p5 *= 5
    return best


def rfft(x: np.ndarray, n: "int | None" = None, axis: int = -1, out: "np.ndarray | None" = None) -> np.ndarray:
    """The real FFT of ``x`` along ``axis`` (zero-padded or cut to ``n``), unnormalised; written
    into ``out`` (a complex array of the result's shape) where given, and returned."""
    if _NUMPY_FFT:
        return np.fft.rfft(x, n, axis=axis, out=out)
    z = _sfft.rfft(x, n, axis=axis, workers=-1)
    if out is None:
        return z
    out[...] = z
    return out


def irfft(z: np.ndarray, n: int, axis: int = -1) -> np.ndarray:
    """The inverse real FFT of length ``n`` along ``axis`` (divided by n)."""
    if _NUMPY_FFT:
        return np.fft.irfft(z, n, axis=axis)
    return _sfft.irfft(z, n, axis=axis, workers=-1)
