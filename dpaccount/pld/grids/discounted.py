"""Discounted running sums y[i] = x[i] + r·y[i−1] (y[−1] = 0): the S̃ of
``grid.py``'s ``_sums``, as the very floats ``scipy.signal.lfilter([1], [1, −r], x)``
gives, without importing scipy.signal where that costs more than it saves.

Why: importing scipy.signal (0.3–0.6 s cold; it loads scipy.stats,
interpolate, optimize, sparse and spatial) was most of a first query's time,
for this one filter, where a default query filters ~10⁵ points. A Python
loop costs ~0.1–0.2 µs a point, lfilter ~5 ns: the loop runs for the first
``_LOOP_BUDGET`` points of the process (a few default queries, a certified
interval among them: ~0.1–0.2 s, less than the import), then lfilter takes
every call, so a long session pays at most that much more than lfilter alone
would have cost it; a single call longer than what is left of the budget goes
to lfilter at once.

The same floats: lfilter's direct form II (transposed), for b = [1] and
a = [1, −r], computes y[i] = fl(x[i]·1 + z) with z = fl(x[i−1]·0 − y[i−1]·(−r))
= fl(r·y[i−1]) — the products by 1 and 0 and the negation are exact, fused
multiply-adds or not — so y[i] = fl(x[i] + fl(r·y[i−1])), from y = 0 before
the first point: the loop's operations in the loop's order (for finite x;
``tests/pld/test_discounted.py`` checks both ways agree bit for bit). Which
way a call takes (a counter shared by threads) changes no result.
"""
import itertools

import numpy as np

from ...lazy import lazy

signal = lazy("scipy.signal")

_LOOP_BUDGET = 1 << 20  # points, ~0.1–0.2 s of loop (DP-SGD's default ε filters ~120,000, its interval ~420,000)
_looped = 0  # points filtered by the loop in this process


def discounted_sums(x, r):
    """y[i] = fl(x[i] + fl(r·y[i−1])), y[−1] = 0, over a 1-d array of finite floats ``x``
    (lfilter's floats; module docstring)."""
    global _looped
    n = len(x)
    if _looped + n > _LOOP_BUDGET:
        return signal.lfilter([1.0], [1.0, -r], x)
    _looped += n
    running = itertools.accumulate(x.tolist(), lambda y, xi: xi + r * y, initial=0.0)
    return np.fromiter(running, dtype=float, count=n + 1)[1:]
