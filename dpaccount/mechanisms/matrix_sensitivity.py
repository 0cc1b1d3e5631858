"""The certified L2 sensitivity of a strategy C under a participation pattern.

A record takes part in the rounds S of an allowed pattern (``Participation``)
and contributes g_i (‖g_i‖ ≤ 1, any dimension) in round i ∈ S; the release
C·G + Z moves by Σ_{i∈S} C[:, i] g_iᵀ, of squared Frobenius norm
Σ_{i,j∈S} X_ij ⟨g_i, g_j⟩ with X = CᵀC. The sensitivity is

    Δ² = max_S max_{‖g_i‖ ≤ 1} Σ_{i,j∈S} X_ij ⟨g_i, g_j⟩ ≤ max_S Σ_{i,j∈S} |X_ij|,

with equality where X_S ≥ 0 on the maximising S (all g_i equal): Choquette-Choo,
McMahan, Rush & Thakurta 2023 ("Multi-epoch matrix factorization", §2, and
"(Amplified) banded matrix factorization", arXiv 2306.08153, Eq. 5). The mechanism
is then the Gaussian of sensitivity Δ (every shift has norm ≤ Δ, one attains it).

Cases (``matrix_sensitivity`` returns the value, whether it is exact, and which):

* single participation: the largest column norm (exact).
* banded C (bands ≤ b) under b-separation: columns b or more apart have disjoint
  supports, X_ij = 0, and Δ² = max_S Σ_{i∈S} ‖C[:, i]‖², a linear maximisation
  solved exactly by dynamic programming (arXiv 2306.08153, Alg. 3).
* fixed epochs (k epochs of w = n/k rounds, round p + jw for one offset p): the
  w patterns enumerated, Σ|X_S| each (exact where the maximising X_S ≥ 0).
* b-min-separation, at most k participations:
  - Toeplitz C with c_0 ≥ c_1 ≥ … ≥ 0: X_ij = Σ_{t ≤ n−1−max(i,j)} c_t c_{t+|i−j|}
    falls in |i − j| and in max(i, j), so moving every participation as early as
    the separation allows raises every term: S = {0, b, …, (k − 1)b} is worst
    (the argument above) — exact, O(nk).
  - small n: every pattern enumerated (exact where the maximising X_S ≥ 0);
  - moderate n: a branch and bound over the patterns (``matrix_search.py``), exact
    (where the maximiser's X_S ≥ 0) when it ends within its budget;
  - otherwise upper bounds, the smallest taken: row by row, r_i = max over the
    patterns S ∋ i of Σ_{j∈S} |X_ij|, then Δ² ≤ max_S Σ_{i∈S} r_i. This is
    jax_privacy's ``get_min_sep_sensitivity_upper_bound`` (arXiv 2306.08153,
    Alg. 4) with each row's maximum restricted to patterns that hold its own
    round, so never above it; for a Toeplitz C too large to materialise, the same
    with |X_ij| ≤ A(|i − j|) = Σ_t |c_t c_{t+|i−j|}|; and always the triangle
    inequality Δ ≤ max_S Σ_{i∈S} ‖C[:, i]‖.
* the tree: exact by ``tree_sensitivity.py`` (min separation) or enumeration.

Floating point: sums of n products err by at most n·u relative to the sums of
their absolute values (Higham, Accuracy and Stability, §3.1), and |X_ij| ≤
‖C[:, i]‖‖C[:, j]‖, so every Δ² is padded upward by that (``_pad``) before the
square root, which is rounded up. That holds in any order of summation: the Gram
matrix CᵀC is a BLAS product (O(n³), no numpy reduction would do), whose last bits
follow the BLAS thread count; the other sums are numpy's, in a fixed order.
"""
from __future__ import annotations

import math
from itertools import combinations
from typing import Iterator, NamedTuple

import numpy as np

from ..strategies import Strategy, ToeplitzStrategy, TreeStrategy
from .matrix_search import PRUNE_SLACK, branch_and_bound
from ..numerics import UNIT_ROUNDOFF as _U
from .tree_sensitivity import sqrt_up, tree_sensitivity

ENUM_CAP = 200_000  # patterns enumerated exactly (small n)
ROW_WORK_CAP = 4e8  # n²·k cells of the row-by-row bound
SEARCH_BUDGET = 2e7  # element operations of the branch and bound (a few seconds at most)
DENSE_ROUTE = 3000  # the largest n whose Gram matrix is formed (n² floats, a few at a time)


class Sensitivity(NamedTuple):
    """A certified upper bound ``value`` on Δ; ``exact`` where it equals Δ (up to the
    float padding); ``method`` names the case of the module docstring."""

    value: float
    exact: bool
    method: str


def _pad(sq: float, n: int, k: int, norm2_max: float) -> float:
    """Δ² padded upward for the rounding of n-term sums (module docstring)."""
    terms = n + k * k + 8
    return sq * (1 + 4 * terms * _U) + 4 * terms * _U * k * k * norm2_max


def _result(sq: float, n: int, k: int, norm2_max: float, exact: bool, method: str) -> Sensitivity:
    return Sensitivity(math.nextafter(math.sqrt(_pad(max(sq, 0.0), n, k, norm2_max)), math.inf), exact, method)


def linear_max(x: np.ndarray, b: int, k: int) -> np.ndarray:
    """max over S ⊆ [0, n), gaps ≥ b, |S| ≤ k of Σ_{i∈S} x_i, along the last axis
    (x ≥ 0 or not: the empty S gives 0). Dynamic programming, O(nk)."""
    n = x.shape[-1]
    f = np.zeros(x.shape[:-1] + (n + b,))
    for _ in range(k):
        f[..., :n] = x + f[..., b:b + n]
        f = np.maximum.accumulate(f[..., ::-1], axis=-1)[..., ::-1]
    return f[..., 0]


def _banded(norms2: np.ndarray, b: int, k: int, fixed: bool) -> float:
    if fixed:
        return float(norms2.reshape(k, -1).sum(axis=0).max())
    return float(linear_max(norms2, b, k))


def _contained_rows(xabs: np.ndarray, b: int, k: int) -> np.ndarray:
    """r_i = max over b-separated S ∋ i, |S| ≤ k, of Σ_{j∈S} xabs[i, j]: the row's own
    entry plus the best split of the other k − 1 between its left (≤ i − b) and its
    right (≥ i + b), by prefix and suffix dynamic programmes over every row at once."""
    n = xabs.shape[0]
    rows = np.arange(n)
    left = np.zeros((k, n))   # left[c, i]: ≤ c picks in row i at columns ≤ i − b
    right = np.zeros((k, n))  # right[c, i]: ≤ c picks in row i at columns ≥ i + b
    pre = np.zeros((n, n + b))  # column j + b holds the prefix value at j; the first b are 0
    suf = np.zeros((n, n + b))  # column j holds the suffix value at j; the last b are 0
    for c in range(1, k):
        pre[:, b:] = np.maximum.accumulate(xabs + pre[:, :n], axis=1)
        suf[:, :n] = np.maximum.accumulate((xabs + suf[:, b:])[:, ::-1], axis=1)[:, ::-1]
        left[c] = pre[rows, rows]       # prefix value at column i − b (0 where i < b)
        right[c] = suf[rows, rows + b]  # suffix value at column i + b (0 beyond n)
    split = np.max(left + right[::-1], axis=0)  # c to the left, k − 1 − c to the right
    return xabs[rows, rows] + split


def _patterns(n: int, b: int, k: int) -> Iterator[np.ndarray]:
    """Every b-separated k-subset of [0, n), as rows of an int array, in chunks."""
    slots = n - (k - 1) * (b - 1)
    offset = np.arange(k) * (b - 1)
    chunk = []
    for comb in combinations(range(slots), k):
        chunk.append(comb)
        if len(chunk) == 4096:
            yield np.array(chunk) + offset
            chunk = []
    if chunk:
        yield np.array(chunk) + offset


def _enumerate(x: np.ndarray, b: int, k: int) -> tuple[float, bool]:
    """max over the k-patterns of Σ|X_S|, and whether X_S ≥ 0 on a maximiser."""
    best, nonneg = -1.0, False
    for idx in _patterns(x.shape[0], b, k):
        block = x[idx[:, :, None], idx[:, None, :]]
        sums = np.abs(block).sum(axis=(1, 2))
        top = int(np.argmax(sums))
        if sums[top] > best:
            best, nonneg = float(sums[top]), bool(np.all(block[sums == sums[top]] >= 0))
        elif sums[top] == best:
            nonneg = nonneg or bool(np.all(block[sums == sums[top]] >= 0))
    return best, nonneg


def _pattern_count(n: int, b: int, k: int) -> int:
    return math.comb(n - (k - 1) * (b - 1), k)


def _fixed_dense(x: np.ndarray, k: int) -> tuple[float, bool]:
    """Σ|X_S| over the offsets p of the k-epoch patterns {p + jw}; X_S ≥ 0 on the maximiser."""
    w = x.shape[0] // k
    blocks = x.reshape(k, w, k, w)
    sums = np.einsum("jplp->p", np.abs(blocks))
    mins = np.einsum("jplp->pjl", blocks).min(axis=(1, 2))
    top = sums == sums.max()
    return float(sums.max()), bool(np.all(mins[top] >= 0))


def _fixed_toeplitz(c: np.ndarray, n: int, k: int) -> tuple[float, bool]:
    """The same for a Toeplitz C in O(nk): X at rounds p + jw, p + lw is
    Σ_{t < n − p − max(j,l)w} c_t c_{t+|j−l|w}, read off prefix sums per distance."""
    w = n // k
    p = np.arange(w)
    padded = np.concatenate([c, np.zeros(n + 1)])[:n]
    sums, mins = np.zeros(w), np.full(w, np.inf)
    for m in range(k):
        prod = padded[:n - m * w] * padded[m * w:]
        pref = np.concatenate([[0.0], np.cumsum(prod)])  # pref[T] = Σ_{t<T} c_t c_{t+mw}
        for a in range(m, k):
            terms = n - p - a * w  # how many t fit below n − max index
            val = pref[np.clip(terms, 0, prod.size)]
            sums += (1 if m == 0 else 2) * np.abs(val)
            mins = np.minimum(mins, val)
    top = sums == sums.max()
    return float(sums.max()), bool(np.all(mins[top] >= 0))


def _monotone_toeplitz(c: np.ndarray, n: int, b: int, k: int) -> float:
    """‖C u‖² for u the indicator of {0, b, …, (k − 1)b} (the worst pattern when
    c_0 ≥ c_1 ≥ … ≥ 0: module docstring)."""
    y = np.zeros(n)
    for start in range(0, (k - 1) * b + 1, b):
        m = min(c.size, n - start)
        y[start:start + m] += c[:m]
    return float(np.sum(y * y))


def _autocorrelation_bound(c: np.ndarray, n: int, b: int, k: int) -> float:
    """k·(A(0) + max_c W(c) + W(k − 1 − c)), A(d) = Σ_t |c_t c_{t+d}| (each padded for
    the FFT's rounding), W(c) the best c picks of A on distances ≥ b, b apart."""
    a = np.abs(c)
    size = 1 << int(2 * a.size - 1).bit_length()
    spec = np.fft.rfft(a, size)
    corr = np.fft.irfft(spec * np.conj(spec), size)[:a.size]
    corr = np.maximum(corr, 0.0) + 16 * (math.log2(size) + 1) * _U * float(np.sum(a * a))  # FFT error: up
    full = np.zeros(n)
    full[:corr.size] = corr
    tail = full[b:]
    w = [0.0]
    f = np.zeros(tail.size + b)
    for _ in range(k - 1):
        f[:tail.size] = tail + f[b:b + tail.size]
        f = np.maximum.accumulate(f[::-1])[::-1]
        w.append(float(f[0]))
    return k * (full[0] + max(w[i] + w[k - 1 - i] for i in range(k)))


def _tree_fixed(n: int, k: int, block: int) -> int:
    """max over offsets p of Σ over completed nodes of |S ∩ node|², S = {p + jw}, the tree
    restarted every ``block`` rounds (a node: its block and its place in that block's tree)."""
    w = n // k
    s = np.arange(w)[:, None] + w * np.arange(k)[None, :]
    pos = s % block
    total = np.zeros(w, dtype=np.int64)
    for lv in range(int(block).bit_length()):
        ids = (s // block) * block + (pos >> lv)  # increasing along each row, one value per node
        start = np.where(np.concatenate([np.ones((w, 1), bool), ids[:, 1:] != ids[:, :-1]], axis=1),
                         np.arange(k)[None, :], 0)
        first = np.maximum.accumulate(start, axis=1)  # where the run of equal node ids began
        completed = (((pos >> lv) + 1) << lv) <= block
        total += np.sum((2 * (np.arange(k)[None, :] - first) + 1) * completed, axis=1)
    return int(total.max())


def matrix_sensitivity(strategy: Strategy, participations: int, separation: int, fixed: bool) -> Sensitivity:
    """The certified Δ of ``strategy`` when a record takes part in at most ``participations``
    rounds any two ``separation`` or more apart; ``fixed``: only the rounds p + j·separation
    (k = participations epochs of ``separation`` rounds). The caller checks that they fit."""
    n, k, b = strategy.n, participations, separation
    if isinstance(strategy, TreeStrategy):
        if k == 1:
            return Sensitivity(sqrt_up(strategy.depth), True, "single participation: the tree's depth")
        if fixed:
            return Sensitivity(sqrt_up(_tree_fixed(n, k, strategy.restart_every)), True,
                               "fixed epochs: every offset of the tree")
        if strategy.restart_every != n:
            raise ValueError(f"min separation over a tree restarted every {strategy.restart_every} rounds is not "
                             f"accounted: take fixed_epochs, or one tree (SingleTreeAggregation's case)")
        return Sensitivity(tree_sensitivity(n, k, b), True, "min separation: the tree's dynamic programme")
    norms2 = strategy.column_norms_squared()
    top = float(norms2.max())
    if k == 1:
        return _result(top, n, 1, top, True, "single participation: the largest column norm")
    bands = strategy.bands
    if bands is not None and bands <= b:
        return _result(_banded(norms2, b, k, fixed), n, k, top, True,
                       f"banded ({strategy.bands} bands <= separation {b}): column norms")
    toeplitz = strategy if isinstance(strategy, ToeplitzStrategy) else None
    if fixed:
        if not toeplitz and n > DENSE_ROUTE:  # no Gram matrix: the triangle inequality per offset
            norms = np.sqrt(norms2) * (1 + 2 * n * _U)
            return _result(float(norms.reshape(k, -1).sum(axis=0).max()) ** 2, n, k, top, False,
                           "fixed epochs: triangle inequality (a dense strategy too large for its Gram matrix)")
        sq, exact = (_fixed_toeplitz(toeplitz.coeffs, n, k) if toeplitz else _fixed_dense(_gram(strategy), k))
        return _result(sq, n, k, top, exact, "fixed epochs: every offset" +
                       ("" if exact else " (sum of |C^T C| entries: an upper bound)"))
    if toeplitz and toeplitz.is_nonnegative_nonincreasing():
        return _result(_monotone_toeplitz(toeplitz.coeffs, n, b, k), n, k, top, True,
                       "min separation: non-negative non-increasing Toeplitz, earliest pattern")
    norms = np.sqrt(norms2) * (1 + 2 * n * _U)  # rounded up: the triangle inequality's terms
    candidates = [(float(linear_max(norms, b, k)) ** 2, False, "min separation: triangle inequality")]
    if n <= DENSE_ROUTE:
        x = _gram(strategy)
        if _pattern_count(n, b, k) <= ENUM_CAP:
            sq, exact = _enumerate(x, b, k)
            candidates.append((sq, exact, "min separation: every pattern" +
                               ("" if exact else " (sum of |C^T C| entries: an upper bound)")))
        elif n * n * k <= ROW_WORK_CAP:
            rows = _contained_rows(np.abs(x), b, k)
            found = branch_and_bound(x, rows, b, k, SEARCH_BUDGET)
            if found.finished:
                candidates.append((found.value * (1 + 2 * PRUNE_SLACK), found.nonnegative,
                                   "min separation: branch and bound over the patterns" +
                                   ("" if found.nonnegative else " (sum of |C^T C| entries: an upper bound)")))
            candidates.append((float(linear_max(rows, b, k)), False, "min separation: row-by-row bound"))
    if toeplitz:
        candidates.append((_autocorrelation_bound(toeplitz.coeffs, n, b, k), False,
                           "min separation: Toeplitz autocorrelation bound"))
    exacts = [cand for cand in candidates if cand[1]]
    sq, is_exact, method = exacts[0] if exacts else min(candidates, key=lambda cand: cand[0])
    return _result(sq, n, k, top, is_exact, method)


def _gram(strategy: Strategy) -> np.ndarray:
    c = strategy.to_dense()
    return c.T @ c
