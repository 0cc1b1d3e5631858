"""Checks of user-supplied parameters.

Every check raises ``TypeError`` (not a real number) or ``ValueError`` (out of
its domain, NaN included) with a message that names the parameter and the
value, and returns the value as a Python ``float``/``int``.
"""
from __future__ import annotations

import math
import numbers
import sys
from typing import Any, Tuple

import numpy as np


def _unwrap(value: Any) -> Any:
    """A 0-d numeric numpy array as its scalar (``np.array(2.0)`` is a number
    to the user); anything else unchanged."""
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        return value.item()
    return value


_MAX_COUNT = 2 ** 63 - 1  # counts index numpy int64 arrays and grid offsets


def real(name: str, value: object) -> float:
    """A finite-or-infinite real number (bools are refused); NaN is refused.
    numpy scalars and 0-d numeric arrays count as numbers. An int or Fraction
    beyond the float range (|x| ≥ 2^1024: ``float`` overflows) is refused too."""
    value = _unwrap(value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r} ({type(value).__name__})")
    try:
        value = float(value)
    except OverflowError:
        raise ValueError(f"{name} must lie within the float range (magnitude at most "
                         f"{sys.float_info.max!r}), got {value!r}") from None
    if math.isnan(value):
        raise ValueError(f"{name} must not be NaN, got {value!r}")
    return value


def in_interval(name: str, value: object, lo: float, hi: float, lo_open: bool = True, hi_open: bool = True) -> float:
    """A real number in the interval (lo, hi), ends open or closed as asked."""
    value = real(name, value)
    too_low = value <= lo if lo_open else value < lo
    too_high = value >= hi if hi_open else value > hi
    if too_low or too_high:
        left, right = ("(" if lo_open else "["), (")" if hi_open else "]")
        raise ValueError(f"{name} must lie in {left}{lo}, {hi}{right}, got {value!r}")
    return value


def positive(name: str, value: object) -> float:
    """A finite real number > 0."""
    return in_interval(name, value, 0.0, math.inf)


def nonnegative(name: str, value: object) -> float:
    """A finite real number >= 0."""
    return in_interval(name, value, 0.0, math.inf, lo_open=False)


def probability(name: str, value: object, lo_open: bool = False, hi_open: bool = False) -> float:
    """A real number in [0, 1] (ends open as asked)."""
    return in_interval(name, value, 0.0, 1.0, lo_open=lo_open, hi_open=hi_open)


def count(name: str, value: Any, minimum: int = 1) -> int:
    """A whole number in [minimum, 2^63 − 1] (integral floats such as 3.0 are accepted)."""
    value = _unwrap(value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a whole number, got {value!r} ({type(value).__name__})")
    if isinstance(value, numbers.Integral):
        value = int(value)
    else:
        if math.isnan(value) or not float(value).is_integer():
            raise ValueError(f"{name} must be a whole number, got {value!r}")
        value = int(value)  # type: ignore[call-overload]  # a numbers.Real has __int__ (typeshed omits it)
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value!r}")
    if value > _MAX_COUNT:
        raise ValueError(f"{name} must be at most 2**63 - 1 = {_MAX_COUNT}, got {value!r}")
    return value


def flag(name: str, value: object) -> bool:
    """A bool (numpy's included); anything else, 0 and 1 too, is refused."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r} ({type(value).__name__})")
    return bool(value)


def real_array(name: str, values: Any, lo: float, hi: float, lo_open: bool = True,
               hi_open: bool = True) -> Tuple[np.ndarray, bool]:
    """``in_interval`` of each element of ``values``: a float array of them.

    Returns ``(array, was_scalar)`` so that queries can answer in the shape
    they were asked. An array of real numbers is checked in one pass (each element
    as ``float`` gives it; NaN fails every comparison); where one fails, the first
    such element is checked alone, which raises ``in_interval``'s error for it.
    """
    if np.ndim(values) == 0:
        value = values.item() if hasattr(values, "item") else values
        return np.array([in_interval(name, value, lo, hi, lo_open, hi_open)]), True
    arr = np.asarray(values)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number)) or np.issubdtype(arr.dtype, np.complexfloating) or arr.dtype == bool:
        raise TypeError(f"{name} must be real numbers, got {values!r}")
    out = arr.astype(float)
    inside = (out > lo if lo_open else out >= lo) & (out < hi if hi_open else out <= hi)
    if not inside.all():
        in_interval(name, arr.ravel()[np.argmin(inside.ravel())], lo, hi, lo_open, hi_open)
    return out, False


def ratio(names: Tuple[str, str], num: float, den: float) -> float:
    """num/den of two positive parameters (a privacy loss such as Δ/σ): a
    ratio beyond the float range is refused (that mechanism offers no
    privacy at all), one below it is rounded up to the smallest positive
    float (a larger loss only weakens the guarantee, so that is sound)."""
    out = num / den
    if not math.isfinite(out):
        raise ValueError(f"{names[0]}/{names[1]} = {num!r}/{den!r} overflows the float range: "
                         f"such a mechanism offers no privacy")
    from fractions import Fraction  # here: fractions (and decimal) stay out of import dpaccount
    if Fraction(out) < Fraction(num) / Fraction(den):  # rounded down: take the next float up
        out = math.nextafter(out, math.inf)
    return max(out, math.ulp(0.0))
