"""An exact search for the worst participation pattern: branch and bound.

The maximum of f(S) = Σ_{i,j∈S} |X_ij| over the b-separated sets S of at most k
rounds (``matrix_sensitivity.py``; equal to Δ² where X_S ≥ 0 on the maximiser, in
particular for a non-negative Gram matrix X = CᵀC). Patterns are built in
increasing order of rounds. A node holds the chosen rounds S (the last at ℓ), f(S)
and the links L_j = Σ_{i∈S} |X_ij|; adding T (rounds ≥ ℓ + b, b apart, at most
k − |S|) gives

    f(S ∪ T) = f(S) + Σ_{j∈T} (2L_j + Σ_{l∈T} |X_jl|) ≤ f(S) + max_T Σ_{j∈T} (2L_j + r_j),

with r_j the largest row sum over the patterns that hold j (an upper bound on
Σ_{l∈T} |X_jl| for every such T), solved by the linear dynamic programme. A node
whose bound does not exceed the best pattern found is pruned; the search is exact
when it ends within its work budget, and says so (``finished``), up to a relative
``PRUNE_SLACK`` (a subtree within it of the best is pruned as rounding noise).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np


PRUNE_SLACK = 1e-12  # a subtree is pruned when its bound is within this of the best: the maximum may be
# this much (relative) above the value found, and the caller pads by twice it


class SearchResult(NamedTuple):
    """The best pattern's f value, whether its block of X is non-negative, and whether
    the search ended (the value is then the maximum)."""

    value: float
    nonnegative: bool
    finished: bool


def _linear_max_with_argmax(x: np.ndarray, b: int, k: int) -> tuple[float, list[int]]:
    """max over b-separated S ⊆ [0, len(x)), |S| ≤ k of Σ x_S, and a maximiser."""
    n = x.size
    f = np.zeros((k + 1, n + b))  # f[c, i]: the best with ≤ c picks in x[i:]
    for c in range(1, k + 1):
        take = np.maximum(x, 0.0) + f[c - 1, b:b + n]
        f[c, :n] = np.maximum.accumulate(take[::-1])[::-1]
    picks, i, c = [], 0, k
    while c > 0 and i < n:
        if x[i] > 0 and x[i] + f[c - 1, i + b] >= f[c, i + 1]:
            picks.append(i)
            i, c = i + b, c - 1
        else:
            i += 1
    return float(f[k, 0]), picks


def branch_and_bound(x: np.ndarray, rows: np.ndarray, b: int, k: int, budget: float) -> SearchResult:
    """The search of the module docstring on the Gram matrix ``x`` with the row bounds
    ``rows``; ``budget``: element operations before it stops unfinished."""
    n = x.shape[0]
    xabs = np.abs(x)

    def value(pattern: list[int]) -> tuple[float, bool]:
        block = x[np.ix_(pattern, pattern)]
        return float(np.abs(block).sum()), bool(np.all(block >= 0))

    best, picks = _linear_max_with_argmax(rows, b, k)
    incumbent, nonneg = value(picks) if picks else (0.0, True)
    work = [0.0]

    def search(chosen: list[int], total: float, links: np.ndarray) -> bool:
        """Explore below a node; False where the budget ran out."""
        nonlocal incumbent, nonneg
        start = chosen[-1] + b if chosen else 0
        left = k - len(chosen)
        if left == 0 or start >= n:
            return True
        score = 2.0 * links[start:] + rows[start:]
        work[0] += (n - start) * (left + 16)  # the bound's programme, the sort and the loop
        if work[0] > budget:
            return False
        bound, _ = _linear_max_with_argmax(score, b, left)
        if total + bound <= incumbent * (1 + PRUNE_SLACK):
            return True
        top = float(score.max())
        for j in np.argsort(-score, kind="stable") + start:
            j = int(j)
            if total + score[j - start] + (left - 1) * max(top, 0.0) <= incumbent * (1 + PRUNE_SLACK):
                break  # the scores fall from here on: no later child can beat the incumbent
            pattern = chosen + [j]
            new_total = total + 2.0 * links[j] + xabs[j, j]
            if new_total > incumbent:
                incumbent, nonneg = value(sorted(pattern))
            if not search(pattern, new_total, links + xabs[j]):
                return False
        return True

    finished = search([], 0.0, np.zeros(n))
    return SearchResult(incumbent, nonneg, finished)

