"""Shared mechanisms and helpers of the public-API tests (test_api_*.py, test_adversarial_*.py)."""
import contextlib
import math
import re
import signal
import warnings
from functools import lru_cache

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

from dpaccount import (BinomialMechanism, Composition, GaussianMechanism, GDPMechanism, LaplaceMechanism,
                       PoissonSampling, RandomizedResponse)

METHOD_ORDER = ("analytic", "pld", "rdp")
NAN, INF = float("nan"), float("inf")

# Hypothesis: few examples, no deadline, reproducible from run to run.
FEW = settings(max_examples=12, deadline=None, derandomize=True,
               suppress_health_check=[HealthCheck.too_slow])
VERY_FEW = settings(max_examples=6, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])

# --------------------------------------------------------------------------
# shared mechanisms (built once: their PLD grids are cached on the instance)
# --------------------------------------------------------------------------

@lru_cache(maxsize=None)
def gauss_comp():
    return Composition()([GaussianMechanism(sigma=1.1), GaussianMechanism(sigma=2.0, sensitivity=0.5)],
                         [10, 5])


@lru_cache(maxsize=None)
def dpsgd():
    return Composition()([PoissonSampling()(GaussianMechanism(sigma=1.0), 0.01)], [100])


@lru_cache(maxsize=None)
def shared_mechanisms():
    """name -> mechanism; every one has P(L = +inf) < 1e-12, so ε(δ) is finite
    for δ ≥ 1e-12."""
    return {
        "gaussian-composition": gauss_comp(),
        "gdp": GDPMechanism(mu=1.0),
        "rr": RandomizedResponse(p=0.6),
        "rr-x10": Composition()([RandomizedResponse(p=0.75)], [10]),
        "laplace": LaplaceMechanism(b=1.0),
        "laplace-x5": Composition()([LaplaceMechanism(b=2.0)], [5]),
        "binomial": BinomialMechanism(n=100, p=0.5),
        "mixed": Composition()([RandomizedResponse(p=0.6), LaplaceMechanism(b=3.0),
                                GaussianMechanism(sigma=4.0)], [3, 2, 4]),
        "dpsgd": dpsgd(),
    }


SHARED_NAMES = ["gaussian-composition", "gdp", "rr", "rr-x10", "laplace", "laplace-x5",
                "binomial", "mixed", "dpsgd"]


def mech(name):
    return shared_mechanisms()[name]


# --------------------------------------------------------------------------
# helpers for error messages
# --------------------------------------------------------------------------

_INTERVAL = re.compile(r"[(\[][^()\[\]]*,[^()\[\]]*[)\]]")  # "(0.0, inf)", "[0.0, 1.0]", ('a', 'b')
_NUMBER = re.compile(r"[-+]?(?:inf|nan|(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)", re.IGNORECASE)


def mentions_value(msg, value):
    """True if ``value`` appears in ``msg`` outside any interval/tuple notation
    (so that 'got 0.0' counts, but the bound in '(0.0, inf)' does not)."""
    body = _INTERVAL.sub(" ", msg)
    if value is None:
        return "None" in body
    if isinstance(value, str):
        return repr(value) in body or f'"{value}"' in body
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value)) in body
    if isinstance(value, (list, tuple)) and len(value) == 0:
        return repr(value) in msg
    target = float(value)
    for tok in _NUMBER.findall(body):
        x = float(tok)
        if (math.isnan(target) and math.isnan(x)) or x == target:
            return True
    return False


def assert_bad_input(call, exc, name, value):
    with pytest.raises(exc) as info:
        call()
    msg = str(info.value)
    assert re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", msg), f"{name!r} not named in {msg!r}"
    assert mentions_value(msg, value), f"value {value!r} not shown in {msg!r}"


# --------------------------------------------------------------------------
# the adversarial tables (test_adversarial_input.py, test_adversarial_extremes.py)
# --------------------------------------------------------------------------

TIME_LIMIT = 120  # a hang guard, not a timing (timings live in benchmarks/): each case is seconds of work
TINY = 5e-324                        # the smallest subnormal
HUGE = 10 ** 400                     # a Python int beyond the float range


class CaseTimeout(Exception):
    pass


@contextlib.contextmanager
def time_limit(seconds=TIME_LIMIT):
    """Fail the case if it runs longer than ``seconds`` (SIGALRM: main thread,
    POSIX), and turn every warning (a leaked numpy RuntimeWarning) into an error."""
    def expire(signum, frame):
        raise CaseTimeout(f"case ran longer than {seconds} s")
    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a leaked RuntimeWarning fails the case
            yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def case_ids(table):
    """The first column of a table of cases: its pytest ids (no duplicates)."""
    ids = [row[0] for row in table]
    assert len(ids) == len(set(ids)), "duplicate case ids"
    return ids
