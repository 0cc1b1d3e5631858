"""The heavy top of an allocation epoch's sum S = Y_1 + … + Y_t: one large term.

A Gaussian's likelihood ratio Y = e^L is log-normal: its density is log-convex far
out, so exponential tilting (``tilt.py``) cannot centre the law of S
there (the tilted law of Y piles up at the lattice's top), and the FFT's noise
bound (~1e-16 of the peak in every bin) sets both ends of the remove direction's
far tail: σ = 0.9, 1000 steps, the FFT alone brackets δ_remove(1) ≈ 6e-11 by [0, 5.3e-10].
Out there S is large because *one* Y_i is ("one big jump").

Split the lattice law w of Y at an index c: w = a + b, a on [0, c), b on [c, ∞),
p = |b|. With K the number of terms ≥ c (binomial),

    law(S) = a^{*t} + t·p·(a^{*(t−1)} ∗ b/p) + R,   R the terms K ≥ 2 (on s ≥ 2c).

Each of the first two is a transform of laws of total ≤ 1 (b/p normalised), so its
noise is ~1e-16 of *its* peak: the second's far top is the one large term's own law.
Lower bounds drop R (a smaller measure at the same ratios lowers both δ's) and take
the larger of the two bounds of each bin. Upper bounds take the smaller, and R is
split (as the mass above S's window, ``epoch.epoch_pair``): its Q-mass
at ratio 2c·h/t (every outcome of R lies at or above it), ≤ P(K ≥ 2) ≤ C(t,2)p², and
its P-mass beyond that ratio to +∞, at most E_Q[S/t; K ≥ 2] = E[Y_1; K ≥ 2]
≤ m_b·(t−1)p + m_a·C(t−1,2)p² (m_a, m_b the first moments of a and b; Y_1 is
independent of the other t − 1 terms). c is the least index at which both of these
are ≤ ``JUMP`` (in δ units per epoch: far below any δ asked of a composition).
"""
import numpy as np

from ..grids.grid import PLDGrid
from ..grids.transform import fft
from ...numerics import ULP_OF_ONE as _U

JUMP = 1e-17  # the terms K ≥ 2 of an epoch: their bound on δ_remove (P-mass to +∞, Q-mass at 2c)


def cut_index(w, t, h):
    """(c, P(K ≥ 2) bound, E[Y_1; K ≥ 2] bound) of the least cut c ≥ 1 at which both terms
    of R (module docstring) are ≤ ``JUMP``; None where there is none below the top."""
    j = np.arange(len(w), dtype=float)
    pb = np.cumsum(w[::-1])[::-1] * (1 + (len(w) + 4) * _U)              # |b| at each cut, rounded up
    mb = np.cumsum((j * h * w)[::-1])[::-1] * (1 + (len(w) + 6) * _U)    # m_b
    ma = float(np.sum(j * h * w)) * (1 + (len(w) + 6) * _U)              # m_a ≤ the whole first moment
    pairs = t * (t - 1) / 2.0 * pb * pb * (1 + 8 * _U)
    p_mass = (mb * (t - 1) * pb + ma * (t - 1) * (t - 2) / 2.0 * pb * pb) * (1 + 16 * _U)
    q_term = pairs * 2.0 * j * h / t * (1 + 8 * _U)                     # δ_remove of the atom at 2c
    ok = np.flatnonzero((p_mass <= JUMP) & (q_term <= JUMP) & (j >= 1) & (pb > 0))
    if not len(ok) or ok[0] >= len(w) - 1:
        return None
    c = int(ok[0])
    return c, min(float(pairs[c]), 1.0), float(p_mass[c])


def one_jump(ws, t, h, c, n, pessimistic, tail_bound):
    """t·p·(a^{*(t−1)} ∗ b/p) on bins 0 … n − 1 (``ws`` the law of Y, total ≤ 1; a, b its
    parts below and from ``c``): rounded up (pessimistic) or down, in which case the mass
    of the normalised convolution above the window (``tail_bound(items, threshold)``), which
    circular aliasing may have added to any bin, is taken off."""
    a = np.where(np.arange(len(ws)) < c, ws, 0.0)
    b = np.where(np.arange(len(ws)) >= c, ws, 0.0)
    p = float(b.sum())
    if not p > 0:
        return np.zeros(n)
    # b/p with total ≤ 1 (the division's and sum's rounding: p rounded up first)
    p_up = p * (1 + (len(b) + 4) * _U)
    items = [(PLDGrid(step=h, offset=0, probs=a, p_inf=0.0), t - 1),
             (PLDGrid(step=h, offset=0, probs=b / p_up, p_inf=0.0), 1)]
    # lower bounds: a window longer by b's reach, so that the mass above it (the t − 1 terms
    # of a above the window alone, ~TAIL) and not the large term's own top is what aliases
    size = n if pessimistic else n + len(ws)
    values, err, _, _ = fft(items, 0, size)
    values = values[:n]
    values[:c] = -err  # exactly 0 below c (b's support starts there): not its noise bound
    if pessimistic:  # b/p_up is below b/p by ≤ (len + 6)u: undone, with t·p_up, rounded up
        return np.maximum(values + err, 0.0) * (t * p_up * (1 + (len(b) + 8) * _U))
    aliased = tail_bound(items, (size - 1) * h, 1.0)
    return np.maximum(values - err - aliased, 0.0) * (t * p * (1 - (len(b) + 8) * _U))
