"""Adversarial rounding (issue 18): numpy's, libm's and scipy.special's
transcendental functions made to err by their documented worst case.

numpy's vectorised exp/log/expm1/log1p are not correctly rounded, and which
implementation runs depends on the CPU (AVX-512 kernels, SVML, or the
platform's libm). A machine other than ours may round every one of them
differently, by up to the documented bound. ``install(K)`` simulates such a
machine: every result of the functions below is moved by K units in the last
place (one ulp = ``np.spacing`` of the result), away from what this machine
computed, with a sign per element that looks random but is a fixed function
of the result (a real libm is deterministic). A rigorous bound must survive it;
a test comparing two routes must allow for it.

What is perturbed, and by how much (the sources are in docs/portability.md):

* numpy's ufuncs ``NUMPY_UFUNCS`` (exp, log, expm1, log1p, logaddexp, ...),
  replaced on the ``numpy`` module itself, so every ``np.exp(...)`` at run
  time (the library's, the tests' float routes, scipy's Python code) sees
  them: K ulp. ``out=``, ``where=``, ``.reduce`` and ``.accumulate`` are
  handled; other attributes forward to the real ufunc.
* libm through Python's ``math`` (``MATH_FUNCTIONS``), inside dpaccount's
  modules only (their ``math`` name is bound to a perturbed copy; mpmath's
  oracles and the tests' own ``math`` stay untouched): K ulp.
* scipy.special (``SPECIAL_FUNCTIONS``), replaced on ``scipy.special`` and
  wherever a dpaccount module imported the name: K·a(x) ulp, where a(x) is
  1, ½ for gammaln (cephes: ≈ 2 ulp), or for the erfc family 1 + x² (erfc,
  erfcx) and 1 + x²/2 (ndtr, log_ndtr) on the side where the function is
  computed through exp(−x²) (cephes documents errors that grow so: its
  peaks 3.4e-14 for ndtr on [−13, 0] and 5.7e-14 for erfc on [0, 26.6] are
  under those bounds at K = 4). ``logsumexp`` errs by K ulp of
  max(|result|, 1).

The perturbation is added to what this machine computes, which already errs
(numpy's and glibc's exp/log family by under 1 ulp here, scipy's erfcx by up
to 8): the simulated machine errs by up to that plus K·a(x).

Exact cases that C99 Annex F and the libraries guarantee stay exact: results
that are 0, ±inf or NaN are not moved, nor results at an argument of 0
(exp(0) = 1, erfc(0) = 1, ...); results stay inside the function's range
(exp ≥ 0, expm1 ≥ −1, ndtr in [0, 1], ...). Not covered: the ``**``
operator (it calls ``np.power`` through the array type, not the module)
and scipy's compiled internals (``stats.binom.logpmf`` and the like).
"""
import contextlib
import importlib
import math as _math
import os
import pkgutil
import sys
import types

import numpy as np
from scipy import special as _special

# name: (lowest, highest) value of the function (its results are kept inside)
_R = (-np.inf, np.inf)
NUMPY_UFUNCS = {
    "exp": (0.0, np.inf), "exp2": (0.0, np.inf), "expm1": (-1.0, np.inf),
    "log": _R, "log2": _R, "log10": _R, "log1p": _R,
    "logaddexp": _R, "logaddexp2": _R,
    "sin": (-1.0, 1.0), "cos": (-1.0, 1.0), "tan": _R,
    "sinh": _R, "cosh": (1.0, np.inf), "tanh": (-1.0, 1.0),
    "arctan": _R, "arcsinh": _R, "power": _R, "float_power": _R,
}
MATH_FUNCTIONS = {
    "exp": (0.0, np.inf), "exp2": (0.0, np.inf), "expm1": (-1.0, np.inf),
    "log": _R, "log2": _R, "log10": _R, "log1p": _R, "pow": _R,
    "sin": (-1.0, 1.0), "cos": (-1.0, 1.0), "tan": _R,
    "sinh": _R, "cosh": (1.0, np.inf), "tanh": (-1.0, 1.0),
    "erf": (-1.0, 1.0), "erfc": (0.0, 2.0), "lgamma": _R,
}


def _one(x):
    return 1.0


def _half(x):      # gammaln: cephes documents 3.5e-16 relative (≈ 2 ulp), K/2
    return 0.5


def _sq_pos(x):    # erfc(x), x > 0: through exp(−x²), whose rounded argument costs ~x² ulp
    return 1.0 + np.square(np.maximum(x, 0.0))


def _sq_neg(x):    # erfcx(x), x < 0: 2e^{x²} − erfcx(−x)
    return 1.0 + np.square(np.minimum(x, 0.0))


def _half_sq_neg(x):   # Φ(x) = ½erfc(−x/√2), x < 0
    return 1.0 + 0.5 * np.square(np.minimum(x, 0.0))


def _half_sq_pos(x):   # log Φ(x) ≈ −Φ(−x), x > 0
    return 1.0 + 0.5 * np.square(np.maximum(x, 0.0))


# name: (ulps per unit of K as a function of the argument, range); K = 4 gives the
# documented bounds: cephes' peaks (3.4e-14 for ndtr on [−13, 0], 5.7e-14 for erfc
# on [0, 26.6]) are under 4(1 + x²/2) and 4(1 + x²) ulp; ndtri ≤ 7.2e-16 (≈ 3 ulp)
SPECIAL_FUNCTIONS = {
    "erfc": (_sq_pos, (0.0, 2.0)), "erfcx": (_sq_neg, (0.0, np.inf)),
    "ndtr": (_half_sq_neg, (0.0, 1.0)), "log_ndtr": (_half_sq_pos, (-np.inf, 0.0)),
    "erf": (_one, (-1.0, 1.0)), "ndtri": (_one, _R), "expit": (_one, (0.0, 1.0)),
    "log_expit": (_half_sq_pos, (-np.inf, 0.0)), "gammaln": (_half, _R),
    "xlogy": (_one, _R), "xlog1py": (_one, _R),
}
# Cases that fail under DPACCOUNT_ULP_NOISE=4 because of a pad the library knows to be
# short of the documented bounds (docs/portability.md, "Known gaps"), not because of the
# harness: node id -> the reason. Marked xfail (not strict) under the perturbation only.
# None now: the last two (DiscretePair's logs taken as exact; the Gaussian cell masses,
# whose errors are ulps of |log Φ|, not of the mass) are closed.
KNOWN_GAPS = {}
_MAX_STEP = 2.0 ** 40      # ulps; a(x) beyond this is beyond any finite result
_MAX_BITS = np.array(np.finfo(float).max).view(np.int64)

_state = {"k": 0.0, "seed": np.uint64(0), "saved": None}


def noise_level():
    """The K of the perturbation in force (0 when none is installed)."""
    return _state["k"]


def nudge(result, ulps, lo=-np.inf, hi=np.inf, keep=None):
    """``result`` moved by ``ulps`` ulp (scalar or per element), a hashed sign
    each; 0, ±inf, NaN and the elements where ``keep`` is True stay; the
    outcome is clipped to [lo, hi]. Returns a new array (or a float/np.float64
    for a scalar); real and imaginary parts of complex results separately."""
    if type(result) is float:
        return float(_nudge_array(np.float64(result), ulps, lo, hi, keep))
    if isinstance(result, np.float64):
        return np.float64(_nudge_array(np.asarray(result), ulps, lo, hi, keep))
    if isinstance(result, np.ndarray) and result.dtype == np.complex128:
        out = result.copy()
        out.real = _nudge_array(result.real, ulps, -np.inf, np.inf, keep)
        out.imag = _nudge_array(result.imag, ulps, -np.inf, np.inf, keep)
        return out
    if isinstance(result, np.complex128):
        return np.complex128(nudge(np.asarray(result), ulps, lo, hi, keep))
    if isinstance(result, np.ndarray) and result.dtype == np.float64:
        return _nudge_array(result, ulps, lo, hi, keep)
    return result   # other types (ints, float32, objects): left alone


def _signs(r):
    """±1 per element, a fixed function of the bits of ``r`` and the seed (a
    splitmix64 hash): another machine's libm is deterministic, so the same
    argument must err the same way every time it is asked."""
    shape = np.shape(r)
    z = np.atleast_1d(np.asarray(r, dtype=np.float64)).view(np.uint64) ^ _state["seed"]  # arrays wrap silently
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return ((z >> np.uint64(63)).astype(np.int64) * 2 - 1).reshape(shape)


def _nudge_array(r, ulps, lo, hi, keep):
    r = np.asarray(r, dtype=np.float64)
    step = np.minimum(np.ceil(np.asarray(ulps, dtype=float)), _MAX_STEP).astype(np.int64)
    # |r| as an integer counts the floats below it: ±step on it is exactly step ulps
    bits = np.abs(r).view(np.int64) + _signs(r) * step
    moved = np.copysign(np.clip(bits, 0, _MAX_BITS).view(np.float64), r)
    moved = np.clip(moved, lo, hi)
    stay = ~np.isfinite(r) | (r == 0)
    if keep is not None:
        stay = stay | np.asarray(keep, dtype=bool)
    out = np.where(stay, r, moved)
    return out if out.ndim else out[()]


class NoisyUfunc:
    """A ufunc whose results are nudged by K·amp(first argument) ulp."""

    def __init__(self, ufunc, k, amp=_one, bounds=_R):
        self._ufunc, self._k, self._amp, self._bounds = ufunc, k, amp, bounds
        self.__name__ = ufunc.__name__
        self.__doc__ = ufunc.__doc__

    def __repr__(self):
        return f"<perturbed ufunc {self.__name__!r}, {self._k:g} ulp>"

    def __call__(self, *args, **kw):
        res = self._ufunc(*args, **kw)
        x = np.asarray(args[0])
        ulps = self._k if self._amp is _one else self._k * self._amp(np.real(x).astype(float))
        keep = (x == 0) if (self._ufunc.nin == 1 and x.dtype.kind in "fic") else None
        return self._settle(res, ulps, keep, kw)

    def _settle(self, res, ulps, keep, kw):
        moved = nudge(res, ulps, *self._bounds, keep=keep)
        if kw.get("out") is None or moved is res:
            return moved
        where = kw.get("where", True)
        np.copyto(res, moved, where=where)   # the caller's out= array, only where computed
        return res

    def __getattr__(self, name):
        attr = getattr(self._ufunc, name)
        if name in ("reduce", "accumulate", "reduceat", "outer"):
            def method(*args, **kw):
                return self._settle(attr(*args, **kw), self._k, None, kw)
            return method
        return attr


def _noisy_scalar(fn, k, bounds):
    def wrapped(*args):
        res = fn(*args)
        if isinstance(res, float) and not (args and args[0] == 0):
            return float(nudge(np.float64(res), k, *bounds))
        return res
    wrapped.__name__ = wrapped.__qualname__ = fn.__name__
    return wrapped


def _noisy_logsumexp(fn, k):
    def logsumexp(*args, **kw):
        res = fn(*args, **kw)
        if isinstance(res, tuple):   # return_sign=True
            return (_shift_abs(res[0], k),) + tuple(res[1:])
        return _shift_abs(res, k)
    return logsumexp


def _shift_abs(res, k):
    """K ulp of max(|res|, 1): the log of a sum near 1 errs absolutely."""
    arr = np.asarray(res, dtype=float)
    sign = _signs(arr)
    moved = np.where(np.isfinite(arr), arr + sign * k * np.spacing(np.maximum(np.abs(arr), 1.0)), arr)
    return moved if isinstance(res, np.ndarray) else np.float64(moved)


def _library_modules():
    import dpaccount
    for info in pkgutil.walk_packages(dpaccount.__path__, "dpaccount."):
        if info.name != "dpaccount.__main__":
            try:
                importlib.import_module(info.name)
            except ImportError:     # an optional dependency (matplotlib) absent
                pass
    return [m for name, m in sys.modules.items() if name.split(".")[0] == "dpaccount" and m]


def install(k, seed=0):
    """Perturb every function above by K ulp until ``uninstall()``."""
    if _state["saved"] is not None:
        raise RuntimeError("ulp_noise is already installed; uninstall() it first")
    _state.update(k=float(k), seed=np.uint64((0x9E3779B97F4A7C15 * (seed + 1)) % 2 ** 64), seed_arg=seed)
    saved, swap = [], {}
    for name, bounds in NUMPY_UFUNCS.items():
        swap[id(getattr(np, name))] = NoisyUfunc(getattr(np, name), k, _one, bounds)
    for name, (amp, bounds) in SPECIAL_FUNCTIONS.items():
        swap[id(getattr(_special, name))] = NoisyUfunc(getattr(_special, name), k, amp, bounds)
    swap[id(_special.logsumexp)] = _noisy_logsumexp(_special.logsumexp, k)
    for module in (np, _special):
        for name, value in list(vars(module).items()):
            if id(value) in swap and not name.startswith("_"):
                saved.append((module, name, value))
                setattr(module, name, swap[id(value)])
    noisy_math = types.ModuleType("math", "math, with its transcendental functions perturbed")
    noisy_math.__dict__.update({n: v for n, v in vars(_math).items() if not n.startswith("__")})
    for name, bounds in MATH_FUNCTIONS.items():
        if hasattr(_math, name):
            setattr(noisy_math, name, _noisy_scalar(getattr(_math, name), k, bounds))
    for module in _library_modules():
        for name, value in list(vars(module).items()):
            if value is _math or id(value) in swap:
                saved.append((module, name, value))
                setattr(module, name, noisy_math if value is _math else swap[id(value)])
    _state["saved"] = saved


def uninstall():
    """Put every replaced name back."""
    for module, name, value in reversed(_state["saved"] or []):
        setattr(module, name, value)
    _state.update(k=0.0, seed=np.uint64(0), saved=None)


def python_command(module):
    """argv that runs ``python -m module`` in a child process perturbed as this one
    (an unperturbed child would be another machine than the one it is compared with)."""
    if not _state["k"]:
        return (sys.executable, "-m", module)
    boot = (f"import sys, runpy; sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r}); "
            f"import ulp_noise; ulp_noise.install({_state['k']!r}, {_state['seed_arg']!r}); "
            f"runpy.run_module({module!r}, run_name='__main__', alter_sys=True)")
    return (sys.executable, "-c", boot)


@contextlib.contextmanager
def installed(k, seed=0):
    """``install(k, seed)`` for the duration of a ``with`` block."""
    install(k, seed)
    try:
        yield
    finally:
        uninstall()
