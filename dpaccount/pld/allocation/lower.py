"""An attained lower pair for random allocation of k > 1 of t steps: a coarser statistic.

**The mechanism's pair.** With (P, Q) the base's remove pair, attained, one epoch
in which a record takes part in a uniformly random k-subset I of the t steps
outputs, on the worst neighbours (``epoch.py``: every step meets the
base's worst pair),

    P_t^(k) = E_I ⊗_i (P if i ∈ I else Q)   against   Q^t,

likelihood ratio e_k(Y_1, …, Y_t)/C(t, k) (e_k the elementary symmetric
polynomial of the steps' ratios Y_i = dP/dQ): for k > 1 not a function of one
sum, so neither the upper pair (Feldman & Shenfeld's reduction to k single
allocations) nor anything here computes it exactly.

**A lower bound (data processing).** Any statistic T of the output is
post-processing: the pair (law of T under P_t^(k), law of T under Q^t) is a pair
of output laws of the mechanism, post-processed, so every hockey-stick value of
it, and of its compositions with other such pairs, is at most the mechanism's.
The statistic here: cut Y into cells (0, a_1], (a_1, a_2], …, (a_M, ∞] on a linear
lattice a_j = j·h (the float edges fl(log a_j) define the cells: any partition
is a statistic), label cell j by j, and T = Σ_i label(Y_i) — for k = 1 nearly
the sufficient S = Σ Y_i (T ≈ S/h), and exactly sufficient for randomized
response (two atoms in two cells: T is the count of high outputs). Under Q^t, T
is the t-fold convolution of the cell masses B_j; under P_t^(k) — whatever I is —
the k-fold convolution of the P-cell masses A_j with the (t − k)-fold one of the
B_j. P(L = +∞) goes to the top label, Q(L = −∞) to label 0.

**Rounding.** The witness only needs the law on its P-side pointwise below and
the one on its Q-side pointwise above the exact ones (each (p − e^ε q)_+ then
lower, also in products): for the remove direction P_t^(k)'s law down and
Q^t's up, for the add direction (the reversed pair) the other way round. Cells
from their error bounds (mass ∓ err), direct convolutions of non-negative
vectors (no FFT: each output a sum of m ≤ 2^15 products, within (m + 2)u
relative), rounded the side's way, the upward ones padded for underflow. The support, t·M + 1 labels, is at
most ``SUPPORT``: M = SUPPORT/t − 1 cells, the lattice up to the 10⁻⁶ P-quantile
of the loss (the rest is the top cell). So the statistic coarsens as t grows;
beyond t = SUPPORT/4 there is no witness (the lower end is then absent).

**Measured** (ε(10⁻⁵) of one epoch, Gaussian base, [lower, upper]): 2 of 235
steps at σ = 1.1: [0.5653, 0.5749] (with 2^13 labels: 0.5146: the statistic's
resolution matters); 2 of 1000 at σ = 0.8: [0.5536, 0.6031]; 4 of 100
at σ = 1: [1.976, 2.402]. Cells geometric above Y = 2 (finer in the bulk, coarser
in the tail, same support) did worse: 0.4921 for 2 of 235. Exact for randomized
response (tests/transformers/test_lower.py).
"""
import math

import numpy as np

from ..grids.discretise import loss_range
from ..pairs.discrete_pair import DiscretePair
from .spread import ratio_cells
from ...numerics import ULP_OF_ONE as _U

SUPPORT = 1 << 15   # labels of T (direct convolutions of ≤ 2^15 points a witness)
_FINITE_CELLS = 1024  # cells for a finite pair (whose atoms two cells apart stay apart)
_TOP_TAIL = 1e-6    # the P-quantile of the loss where the linear cells stop
_TINY = 1e-300      # per-term pad of the Q-side against underflow (subnormal products)
_DOT = 4096         # the longest dot product of a convolution (``_convolve``)


def _convolve(x, y, up):
    """x * y (non-negative), rounded ``up`` or down: (m + 2)u relative, m the terms of a sum.
    The shorter factor goes in pieces of ``_DOT`` points (np.convolve takes each output as a
    BLAS dot, which OpenBLAS splits among its threads above 10,000 terms, in an order that
    follows the thread count), their sums added in order: each output a sum of at most
    _DOT + m/_DOT ≤ m + 2 roundings deep."""
    m = min(len(x), len(y))
    short, other = (x, y) if len(x) <= len(y) else (y, x)
    out = np.convolve(short[:_DOT], other)
    if m > _DOT:
        out = np.concatenate((out, np.zeros(m - _DOT)))
        for i in range(_DOT, m, _DOT):
            part = np.convolve(short[i:i + _DOT], other)
            out[i:i + len(part)] += part
    return out * (1 + (m + 2) * _U) + m * _TINY if up else out * (1 - (m + 2) * _U)


def _power(x, k, up):
    """x^{*k} by binary powering (k ≥ 0), each convolution rounded ``up`` or down."""
    out, base = np.ones(1), x
    while k:
        if k & 1:
            out = _convolve(out, base, up)
        k >>= 1
        if k:
            base = _convolve(base, base, up)
    return out


def label_cells(pair, cells):
    """((P-masses down, up), (Q-masses down, up)) of the ``cells`` + 1 labels of Y (module
    docstring)."""
    hi = min(loss_range(pair, _TOP_TAIL)[1], 700.0)
    top = hi if hi > 0 else 1.0
    a, b, err_a, err_b = ratio_cells(pair, math.exp(top) / cells, cells, top)  # (any h gives a valid statistic)
    (p_low, p_high), (q_low, q_high) = pair.end_bounds()
    out = []
    for mass, err, end, label in ((a, err_a, (p_low, p_high), -1), (b, err_b, (q_low, q_high), 0)):
        low, high = np.maximum(mass - err, 0.0), mass + err
        low[label] += end[0]                      # L = +∞: the top label; L = −∞: label 0
        high[label] += end[1]
        out.append((low * (1 - 4 * _U), high * (1 + 4 * _U)))
    return out


def allocation_witness(pair, steps, selected, reverse=False):
    """The remove-direction witness of ``selected`` of ``steps`` steps of ``pair``, the pair
    of T's laws (a ``DiscretePair``, attained where ``pair`` is), or with ``reverse`` its
    reverse (the add direction's): the law on the P-side rounded down and the other up
    (module docstring). None where the support would exceed ``SUPPORT``."""
    cells = SUPPORT // steps - 1
    if hasattr(pair, "atoms"):  # a finite pair: its few Y values need few cells
        cells = min(cells, _FINITE_CELLS)
    if cells < 3:
        return None
    a, b = label_cells(pair, cells)
    up = bool(reverse)  # the P-law of the remove pair is the Q-side of the reversed one
    p_law = _convolve(_power(a[up], selected, up), _power(b[up], steps - selected, up), up)
    q_law = _power(b[not up], steps, not up)
    with np.errstate(divide="ignore"):
        log_p, log_q = np.log(p_law), np.log(q_law)
    if reverse:
        log_p, log_q = log_q, log_p
    return DiscretePair(log_p, log_q, name=f"allocation-statistic({pair.key()!r},{steps},{selected},{up})",
                        tight=pair.tight)
