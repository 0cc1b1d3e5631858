"""The law of an allocation epoch's sum S = Y_1 + … + Y_t on the lattice of Y
(``epoch.py``: the epoch's pair is that of S alone).

S's law is the t-fold convolution of Y's lattice law w (FFT, with its per-bin noise
bound, ``transform.fft``) on a window [0, W·h], W set by a Chernoff quantile
(``chernoff.quantile``); the far tails, where that noise bound would set both ends,
by tilted transforms (``tilt.py``), the heavy top of a log-normal ratio by
one large term (``jump.py``), each bin the better of its bounds. Beyond the
window: Q(S > W·h) and E_Q[S/t; S > W·h] by Chernoff bounds (``_chernoff_tail``,
``size_biased_tail``), cut where one large term carries a heavy tail.
"""
import math

import numpy as np

from ..grids.chernoff import descend, exponent, quantile
from ..grids.log_mgf import log_mgf
from ..grids.grid import PLDGrid
from ..grids.transform import fft
from .jump import cut_index, one_jump
from .tilt import refine
from ...numerics import ULP_OF_ONE as _U

TAIL = 1e-14     # tail of the base's loss beyond the lattice where the caps are chosen
# tail of S beyond its window, and of the loss beyond the linear lattice where that fits:
# at 1e-14 each epoch sent ~6e-14 to +∞, ten epochs 6e-13, 0.5 % of δ = 1e-10 (σ = 1.1, 234 steps)
DEEP = 1e-17
_WINDOW = 2 ** 22    # the largest window of S (beyond: its Chernoff tail at the cap)


def sum_law(w, t, h, pessimistic):
    """(Q-masses of S = Σ_t Y on [0, W·h] indices 0..W, bound on Q(S > W h), W, the upper
    law's atom of two large terms or None) of the lattice law w (t-fold, FFT with its noise
    bound, its far tails by tilted transforms and its heavy top by one large term,
    ``jump.py``): rounded up (pessimistic) or down."""
    total = float(w.sum()) * (1 + (len(w) + 2) * _U)
    scale = max(total, 1.0)
    ws = w / scale
    items = [(PLDGrid(step=h, offset=0, probs=ws, p_inf=0.0), t)]
    top = (len(w) - 1) * t
    deep, _ = quantile(log_mgf(items), math.log(DEEP), 1.0)  # S's Chernoff 1 − DEEP quantile
    big_w = min(top, max(int(math.ceil(deep / h)), 1), _WINDOW)
    if big_w >= top:
        tail = 0.0
    elif big_w * h >= deep:
        tail = DEEP * scale ** t * (1 + (t + 4) * _U)
    else:  # a heavy tail whose 1 − DEEP quantile lies beyond the cap: the bound at the cap
        tail = _chernoff_tail(items, big_w * h, scale ** t)
    jump, cut = None, cut_index(ws, t, h)
    split = cut is not None and cut[0] <= big_w
    # (with the split, S's law below c is a^{*t}'s, whose tilts the split runs: none here)
    q = _bins(ws, t, h, big_w + 1, pessimistic, tail, tilted=not split)
    if split:  # the heavy top: one large term (jump.py)
        c, pairs, p_mass = cut
        both = _bins(np.where(np.arange(len(ws)) < c, ws, 0.0), t, h, big_w + 1, pessimistic, tail) \
            + one_jump(ws, t, h, c, big_w + 1, pessimistic, _chernoff_tail)
        q = np.minimum(q, both * (1 + 2 * _U)) if pessimistic else np.maximum(q, both * (1 - 2 * _U))
        jump = (2 * c, pairs, p_mass)
    if pessimistic and scale > 1:  # the division by ``scale`` undone, rounded up
        factor = scale ** t * (1 + (t + 4) * _U)
        q = q * factor
        jump = jump and (jump[0], jump[1] * factor, jump[2] * factor)
    return q, tail, big_w, jump if pessimistic else None


def _bins(ws, t, h, n, pessimistic, tail, tilted=True):
    """The t-fold law of ``ws`` (total ≤ 1) on bins 0 … n − 1, rounded up or down (less
    ``tail``, a bound on its mass above them, which aliasing may add to any bin); the far
    tails refined by tilted transforms (``tilt.py``) where ``tilted``."""
    values, err, _, _ = fft([(PLDGrid(step=h, offset=0, probs=ws, p_inf=0.0), t)], 0, n)
    q = np.maximum(values + err, 0.0) if pessimistic else np.maximum(values - err - tail, 0.0)
    return refine(q, ws, t, h, 1.0, pessimistic, _chernoff_tail) if tilted else q


def size_biased_tail(w, t, h, threshold):
    """A Chernoff bound on E_Q[S/t; S > threshold] = P(Y_1^P + Y_2 + … + Y_t > threshold), Y^P the
    size-biased law (masses a_j w_j, a_j = j·h; ``threshold`` a value of S), both laws
    divided by ``scale`` ≥ their totals (the bound multiplied back by scale^t, rounded up)."""
    j = np.arange(len(w), dtype=float)
    scale = max(float(w.sum()) * (1 + (len(w) + 2) * _U), float((j * h * w).sum()) * (1 + (len(w) + 2) * _U), 1.0)
    items = [(PLDGrid(step=h, offset=0, probs=(j * h) * w / scale, p_inf=0.0), 1),
             (PLDGrid(step=h, offset=0, probs=w / scale, p_inf=0.0), t - 1)]
    return _chernoff_tail(items, threshold, scale ** t)


def _chernoff_tail(items, threshold, factor):
    """P(S > threshold) of the sum of the items' laws (lattice masses, counts), times ``factor``
    (a normalisation undone), rounded up: the least over cuts x of

        Σ_i k_i·P_i(Y > x) + min_λ exp(K_x(λ) − λ·threshold),

    K_x the log-MGF of the laws cut at x (sub-probabilities: the event that no term exceeds
    x; ``chernoff.exponent``). Without a cut (x = ∞) this is Chernoff's bound, useless for a
    heavy tail (a log-normal likelihood ratio), where one large term carries the tail."""
    step = items[0][0].step
    size = max(len(g.probs) for g, _ in items)
    cuts = {size} | {int(c) for c in np.geomspace(8, size, 12) if c < size}
    best = 1.0
    for cut in sorted(cuts, reverse=True):  # the least mass cut off first: cuts cutting off more than the best skipped
        above = sum(k * float(g.probs[cut:].sum()) * (1 + (len(g.probs) + 2) * _U) for g, k in items)
        if above >= best:
            continue
        cut_items = [(PLDGrid(step=step, offset=0, probs=g.probs[:cut], p_inf=0.0), k) for g, k in items]
        value = descend(exponent(log_mgf(cut_items), threshold), 1.0 / max(threshold, 1.0), tol=1e-3)[0]
        best = min(best, (above + math.exp(min(value, 0.0))) * (1 + 4 * _U))
    return min(1.0, best * factor * (1 + 16 * _U))
