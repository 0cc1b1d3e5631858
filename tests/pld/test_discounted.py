"""discounted_sums gives scipy.signal.lfilter([1], [1, −r], x)'s very floats both
ways (the loop and lfilter itself), so grid.py's error analysis of S̃ holds
whichever way a call takes; the loop runs only within its budget."""
import math

import numpy as np
import pytest
from scipy import signal

from dpaccount.pld.grids import discounted
from dpaccount.pld.grids.discounted import discounted_sums


def _masses(seed, n):
    """Non-negative floats over many binades, with zeros and subnormals: a grid's masses."""
    rng = np.random.default_rng(seed)
    x = rng.random(n) * np.exp(rng.uniform(-700, 0, n))
    x[rng.random(n) < 0.1] = 0.0
    x[rng.random(n) < 0.01] = 5e-324
    return x


@pytest.mark.parametrize("step", [1e-7, 1e-3, 0.05, 1.0, 8.0])
@pytest.mark.parametrize("looped", [0, discounted._LOOP_BUDGET], ids=["loop", "lfilter"])
def test_both_ways_give_lfilters_floats(monkeypatch, step, looped):
    monkeypatch.setattr(discounted, "_looped", looped)
    r = 1.0 + math.expm1(-step)
    for seed, n in enumerate([0, 1, 2, 7, 5000]):
        x = _masses(seed, n)[::-1]  # a reversed view, as grid.py passes its masses
        got = discounted_sums(x, r)
        assert got.dtype == np.float64 and got.shape == (n,)
        np.testing.assert_array_equal(got, signal.lfilter([1.0], [1.0, -r], x))  # dtype, shape: above
        assert not np.signbit(got).any()


class _Recorder:
    def __init__(self):
        self.calls = []

    def lfilter(self, b, a, x):
        self.calls.append(len(x))
        return signal.lfilter(b, a, x)


def test_the_loop_runs_within_its_budget_then_lfilter_takes_every_call(monkeypatch):
    recorder = _Recorder()
    monkeypatch.setattr(discounted, "signal", recorder)
    monkeypatch.setattr(discounted, "_looped", 0)
    budget, x = discounted._LOOP_BUDGET, _masses(1, 1000)
    discounted_sums(x, 0.5)
    assert recorder.calls == [] and discounted._looped == 1000
    monkeypatch.setattr(discounted, "_looped", budget - 999)  # this call alone would overrun it
    discounted_sums(x, 0.5)
    assert recorder.calls == [1000] and discounted._looped == budget - 999
    discounted_sums(x[:999], 0.5)  # what is left of the budget still loops
    assert recorder.calls == [1000] and discounted._looped == budget
