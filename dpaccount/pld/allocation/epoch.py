"""Random allocation of a pair: each record takes part in exactly one of t steps.

**The pair.** Let (P, Q) dominate one step in the remove direction, with
likelihood ratio Y = dP/dQ = e^L (Y ∈ [0, ∞) under Q, E_Q[Y] = 1 − P(L = ∞)).
One epoch of random allocation is dominated in the remove direction by

    P_t = (1/t) Σ_i (Q, …, Q, P at step i, Q, …, Q)   against   Q^t

(Feldman & Shenfeld 2025, "Privacy amplification by random allocation",
the dominating pair of the allocation scheme; Chua et al. 2025 use the
same pair for balls-in-bins DP-SGD). Its likelihood ratio is S/t,
S = Y_1 + … + Y_t with the Y_i iid under Q^t, so the pair is that of the
law of S alone (a sufficient statistic), plus P(L = ∞) at +∞:

    δ_remove(ε) = P(L = ∞) + E_Q[(S/t − e^ε)_+],     δ_add(ε) = E_Q[(1 − e^ε S/t)_+]

(the add direction: the reversed pair (Q^t, P_t), built from the base's
add pair reversed). Both are expectations of convex functions of S, the
first increasing, the second decreasing, for every ε of either sign.

**Upper pair (a mean-preserving spread).** On the lattice a_j = j·h (h a
power of two, so j·h is exact) each cell (a_j, a_{j+1}] of Y sends its
Q-mass B to a_j and a_{j+1} keeping its mean A/B (A its P-mass):
(a_{j+1}B − A)/h to a_j and (A − a_j B)/h to a_{j+1}; the cell above the top
a_n sends its P-mass to Y = ∞ and its Q-mass to Y = 0 (the extreme spread).
The spread Y' dominates Y in the convex order, so E[f(S')] ≥ E[f(S)] for
every convex f of the sum (iid coordinates), in both directions at once
(this is Connect-the-Dots on a linear lattice of the likelihood ratio).
Each mass is rounded up (a pointwise larger measure with the same ratios
only raises every hockey-stick value, also after composition).

**Lower pairs (convex minorants).** The remove direction's δ's, E_Q[(S/t − e^ε)_+] for
every ε of either sign (the pair's whole curve), are expectations of increasing convex
functions of S; the add direction's (the reversed pair's), E_Q[(1 − e^ε S/t)_+], of
decreasing convex ones. A sub-probability law Y'' whose call function c''(a) = E[(Y'' − a)_+]
is below c(a) = E_Q[(Y − a)_+] for every a (total ≤ 1) lowers the first kind for the sum of
iid copies; one whose put function p''(a) = E[(a − Y'')_+] is below p the second. No lattice
law is below Y in both orders at second order in h (c − c'' and p − p'' differ by the mean
gap plus a·(1 − total): the constraints pull apart near the ends of the support, and an
epoch built from one law carrying both sides is not below the exact one), so each
direction has its own. The call side: points (a_j, c(a_j) − d_j), lowered so that every
chord lies below c (the triangle between a cell's chord and its end tangents has height
ℓr/(hB), ℓ = A − a_jB, r = a_{j+1}B − A; the lowering split between the ends as in
``grids.lowering.least_over``), their lower convex hull cut at its floor
(``minorant.py``) are the call function of a measure on the lattice; the mass at 0 at
most Q(Y = 0) (the optimistic grid's tangent at x = 0). The put side: the call side of
Z = a_n − Y on the same lattice, reflected, its total at most Q(Y ≤ a_n). Masses are
rounded down; each is second order in h, as the spread.

**The law of S** (``sum_law.py``). S' = Σ Y'_i is the t-fold convolution on the lattice (FFT,
with its per-bin noise bound, ``transform.fft``) on a window [0, W·h], W set
by a Chernoff quantile (``chernoff.quantile``): the Q-mass above it goes to
the top atom (upper; lowers the add loss, raises nothing) or is dropped
(lower), the P-mass above it — E_Q[S/t; S > W h], a Chernoff bound of the
size-biased law (Y'_1 under P, the others under Q) — to +∞ (upper). The
upper bins take the noise bound up, the lower ones down (and the aliased
tail off). The far tails, where that noise bound (~1e-16 of the peak in every bin) would
set both ends, come from tilted transforms (``tilt.py``), and the heavy top of a
log-normal ratio from one large term (``jump.py``), each bin the better of its
bounds. An epoch is then a finite pair (``DiscretePair``): atoms s with
Q-mass q(s) and P-mass q(s)·s/t; it composes with everything else.

**Where the linear lattice fails.** A heavy-tailed Y (a Gaussian with σ ≲ 0.7: its
ratio reaches e^{17} at σ = 0.5) either leaves its tail off the lattice (the P-mass
above the 1 − ``_LOOSE_TAIL`` quantile to +∞) or coarsens h until the bulk of Y sits at
0; and with few steps the spread's mass at Y' = 0 is an add-direction atom at +∞,
Q(Y' = 0)^t (~1e-6 for σ = 0.8, t = 2). Where h would have to coarsen, or that atom
exceeds ``TAIL``, the epoch is built on geometric lattices instead
(``geometric.py``: the same spread and contraction, cells of width η in log Y).

**Pure ε.** The remove pair's ratio S/t = (Y_1 + … + Y_t)/t lies in [min Y, max Y]
(a mean), and Y_i = max Y for every i at once (a set of Q^t-mass ∏ Q(Y_i near max Y) > 0)
attains its top: the essential supremum of the loss under P_t is the base's, ε₀ = log
ess sup Y (``pure_epsilon`` of the base pair), with no amplification; the add pair's,
−log ess inf_Q Y, is the base pair reversed's. For randomized response at e^{ε₀}: the
outcome where every step answers as x would, P_t/Q^t = e^{ε₀}. Both are the base
pairs' own bounds (rounded up), kept beside the discretised pairs (whose mass at +∞
would say +∞).

``AllocationPair`` carries both: the upper pair for every pessimistic use
(grids, δ upper bounds) and the lower one for optimistic grids and lower
bounds (``bound(pessimistic)``).

**One step caps it** (``cap.py``): the base pair itself dominates the epoch in both
orders (joint convexity), so where its curve is the lower one at every checked ε (a
tiny loss, where the lattice's error exceeds the allocation's gain) it replaces the
upper pair (``AllocationPair.capped``); the lower pair stays.
"""
import math

import numpy as np

from ..grids.discretise import loss_range
from ..pairs.base import DominatingPair, stacked_masses
from .cap import one_step_is_lower
from .minorant import minorant_law
from .spread import ratio_cells, ratio_pair, spread_law
from .sum_law import DEEP, TAIL, size_biased_tail, sum_law
from ...numerics import ULP_OF_ONE as _U

_GROUP = 3e-4        # width in log s of the groups an epoch's atoms are merged into (``coarsen``)
_POINTS = 2 ** 21    # lattice points of S's window planned for (an FFT of 2^21 reals)
_CELLS = 2 ** 19     # lattice points of Y (each cell's masses with error bounds)
_LOOSE_TAIL = 1e-10  # the P-tail of the loss a heavy-tailed base may leave off its linear lattice
_MANY = 512          # steps from which a heavy-tailed base stays on the cut linear lattice


def lattice_step(pair, rho):
    """h = 2^m with h²/4 ≤ ρ·Var_Q(Y): the spread adds at most h²/4 to each Y's
    variance (a relative ρ of S's spread); Var_Q(Y) = E_P[Y] − 1 from coarse cells."""
    top = min(loss_range(pair, TAIL)[1], 700.0)
    cells = ratio_cells(pair, math.exp(top) / 2048, 2048, top)
    a, b = cells[0][:-1], cells[1][:-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        second = float(np.sum(np.where(b > 0, a * a / b, 0.0)))  # Σ A·(A/B) ≤ E_P[Y] (Jensen)
    var = max(second - 1.0, 1e-12)
    return 2.0 ** math.floor(math.log2(2.0 * math.sqrt(rho * var)))


def epoch_pair(pair, t, h, n, cells, pessimistic, side="call"):
    """One epoch's remove-direction pair (``DiscretePair``): atoms s = i·h with Q-mass q_i
    and P-mass q_i·s/t, plus P(L = ∞); the upper (spread) or lower (minorant, of the
    ``side`` of ``minorant_law``) version."""
    w, p_inf = spread_law(pair, np.arange(n + 1) * h, cells) if pessimistic else minorant_law(pair, h, n, cells, side)
    q, tail, big_w, jump = sum_law(w, t, h, pessimistic)
    if pessimistic and tail:  # the P-mass above the window to +∞
        p_inf = min(1.0, (p_inf + size_biased_tail(w, t, h, big_w * h)) * (1 + 4 * _U))
    if jump:  # two large terms or more (jump.py): their P-mass beyond ratio 2c·h/t to +∞
        p_inf = min(1.0, (p_inf + jump[2]) * (1 + 4 * _U))
    # groups narrow against the spread of the loss (sd of S/S̄: the loss's, to first order),
    # whose second-order error they otherwise set
    # (products and numpy's pairwise sums, not BLAS's dot, whose threads wait for one another on
    # a few shared cores: the width is a choice, any rounding of the moments will do)
    i = np.arange(len(q), dtype=float)
    qi = q * i
    m1, m2 = float(qi.sum()), float(np.multiply(qi, i, out=qi).sum())
    spread = math.sqrt(max(m2 * float(q.sum()) / (m1 * m1) - 1.0, 0.0)) if m1 > 0 else 1.0
    index, q, rel = coarsen(q, pessimistic, min(_GROUP, 0.02 * spread))
    live = q > 0
    index, q, rel = index[live], q[live], rel[live]
    if pessimistic and tail:
        # the Q-mass above the window at the window's top W·h: each outcome s > W·h split into
        # (its Q-mass at ratio W·h/t) and (P-mass q·(s − W·h)/t at +∞, in ``p_inf`` already) is a
        # dominating pair (merging the two gives it back); the atom's Q-mass rounded up to
        # ``tail`` at the same ratio only raises both δ's. (At ratio 0 instead it would be an atom
        # at +∞ in the add direction: δ_add ≥ TAIL per epoch, 10× that over 10 epochs, at δ ~ 1e-13.)
        index, q, rel = np.append(index, float(big_w)), np.append(q, tail), np.append(rel, 0.0)
    if jump:  # and their Q-mass at ratio 2c·h/t, below every outcome of theirs (the same split)
        index, q, rel = np.append(index, float(jump[0])), np.append(q, jump[1]), np.append(rel, 0.0)
    with np.errstate(divide="ignore"):
        log_q = np.log(q)
        log_ratio = np.log(index * (h / t))  # i·h exact (an integer i, or a group's mean); /t ½ ulp
    return ratio_pair(log_q, log_ratio, rel, p_inf,
                      f"allocation(t={t},h={h!r},{'up' if pessimistic else 'low-' + side})")


def coarsen(q, pessimistic, eta=_GROUP):
    """(indices, Q-masses, relative errors of the indices) of the law q of S on the index
    lattice, its atoms grouped by log-spaced bins of width ``eta`` in log s (the loss
    log(s/t) moves by ≤ eta inside a group; S = 0 alone). Upper: each group's mass spread to
    its first and last index keeping its mean (convex order: both δ's only rise), rounded
    up. Lower: each group as one atom at its mean (Jensen: both δ's only fall), masses
    rounded down, the mean's rounding ((m + 4)u of it, m atoms) returned for the loss."""
    i = np.arange(len(q), dtype=float)
    with np.errstate(divide="ignore"):
        group = np.where(i > 0, np.floor(np.log(np.maximum(i, 1.0)) / eta) + 1, 0).astype(np.int64)
    starts = np.flatnonzero(np.diff(group, prepend=-1))
    ends = np.append(starts[1:], len(q)) - 1
    mass = np.add.reduceat(q, starts)
    moment = np.add.reduceat(q * i, starts)
    size = (ends - starts + 1).astype(float)
    if not pessimistic:
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(mass > 0, moment / mass, starts.astype(float))
        mean = np.clip(mean, starts, ends)
        return mean, mass * (1 - (size + 4) * _U), (size + 4) * _U
    lo, hi = starts.astype(float), ends.astype(float)
    span = np.maximum(hi - lo, 1.0)
    # the spread of the group [lo, hi]: (moment − lo·mass)/span up, (hi·mass − moment)/span down,
    # each rounded up by the sums' rounding ((m + 4)u of the terms)
    pad = (size + 4) * _U * (moment + hi * mass)
    up = np.where(hi > lo, np.maximum(moment - lo * mass + pad, 0.0) / span, 0.0)
    down = np.where(hi > lo, np.maximum(hi * mass - moment + pad, 0.0) / span, mass)
    index = np.concatenate((lo, hi[hi > lo]))
    masses = np.concatenate((down, up[hi > lo])) * (1 + 4 * _U)
    order = np.argsort(index, kind="stable")
    return index[order], masses[order], np.zeros(len(index))


class AllocationPair(DominatingPair):
    """A pair known through two finite pairs, ``upper`` (dominates the mechanism) and
    ``lower`` (dominated by it): every pessimistic use takes ``upper``, every optimistic
    one ``lower`` (``bound``)."""

    cuts_to_infinity = True  # the window of S and a heavy-tailed Y's lattice send their tails to +∞

    def __init__(self, upper, lower, key, tight=False, pure=(math.inf, math.inf), refinable=False,
                 lower_reverse=None):
        self.upper, self.lower, self._key, self._tight = upper, lower, key, tight
        # a pair whose reverse lies below this pair's reverse (the put-side law of a linear
        # lattice's epoch: ``lower`` is below in the call side only), or a function making it on
        # first use; None: ``lower`` itself (a law below in both orders, or an attained witness)
        self._lower_reverse = lower_reverse
        self.pure = tuple(pure)  # (this pair's, its reverse's) pure ε bounds (module docstring)
        # built on a linear lattice at a ρ (``allocation_pair``): a smaller ρ brings upper and
        # lower closer (``dpaccount/precision.py``)
        self.refinable = refinable

    @property
    def tight(self):
        """Attained where the base pair is: the allocation of an attained base pair is the
        mechanism's own pair in that direction (a record whose every step meets the base's
        worst neighbours), and ``lower`` lies below it in the convex order, so the optimistic
        grids bound the mechanism."""
        return self._tight

    def bound(self, pessimistic):
        return self.upper if pessimistic else self.lower

    p_inf = property(lambda self: self.upper.p_inf)
    q_ninf = property(lambda self: self.upper.q_ninf)

    def masses(self, edges):
        return self.upper.masses(edges)

    def _masses(self, edges, errors):
        return self.upper._masses(edges, errors)

    def end_bounds(self):
        (p_low, _), (q_low, _) = self.lower.end_bounds()
        (_, p_up), (_, q_up) = self.upper.end_bounds()
        return (min(p_low, p_up), p_up), (min(q_low, q_up), q_up)

    def delta(self, eps, upper=True):
        return self.bound(upper).delta(eps, upper)

    def pure_epsilon(self):
        """The base's own bound (module docstring), rounded up by it; or the upper pair's."""
        return min(self.pure[0], self.upper.pure_epsilon())

    def reverse(self):
        return AllocationPair(self.upper.reverse(), self.lower_reverse().reverse(), ("reversed",) + self._key,
                              self._tight, self.pure[::-1], self.refinable, lambda: self.lower.reverse())

    def lower_reverse(self):
        """The pair whose reverse bounds this pair's reverse from below (``__init__``)."""
        if callable(self._lower_reverse):
            self._lower_reverse = self._lower_reverse()
        return self.lower if self._lower_reverse is None else self._lower_reverse

    def key(self):
        return self._key

    def capped(self, pair):
        """This epoch with ``pair`` (the one step it allocates) as its upper pair where that is
        lower at every checked ε in both orders (``cap.py``: it dominates the epoch too); else itself."""
        if not one_step_is_lower(pair, self.upper):
            return self
        return AllocationPair(pair, self.lower, ("one-step-cap",) + self._key, self._tight, self.pure,
                              self.refinable, self._lower_reverse)


def allocation_pair(pair, steps, rho):
    """The remove-direction ``AllocationPair`` of one epoch of ``steps`` steps of ``pair``, its
    linear lattice's spread adding at most a relative ``rho`` to S's variance (``lattice_step``;
    the query decides it, ``dpaccount/precision.py``: upper and lower pair ~ρ/2 of ε apart)."""
    # a pair with atoms (a finite one): its call function has kinks between lattice points,
    # where the minorant loses h·B/4, first order in h: a finer lattice (ρ·10⁻⁴). The window of
    # S stays within _POINTS and Y's lattice within _CELLS: a heavy-tailed Y (a small σ) first
    # gives up its lattice above the 1 − _LOOSE_TAIL quantile of the loss under P (that P-mass
    # goes to +∞: δ rises by at most that) where the steps are many (the FFT's cost does not grow
    # with them); where h would then have to coarsen, where the steps are fewer than _MANY, or
    # where the spread's atom Q(Y' = 0)^t exceeds TAIL, the geometric lattices
    # (``geometric.py``: tighter there than the cut linear lattice; the measured trade-off is in
    # benchmarks/README.md, "Measurements behind constants in the code")
    if steps == 1 or pair.end_bounds()[0][0] >= 1.0:
        return pair  # one step; or P(L = ∞) = 1, which the allocation keeps (its pair is the base's)
    h = lattice_step(pair, rho * (1e-4 if hasattr(pair, "atoms") else 1.0))
    top = math.exp(min(loss_range(pair, TAIL)[1], 700.0))
    key = ("allocation", pair.key(), steps, rho)
    if (steps + top) / h > _POINTS or top / h > _CELLS:
        top = max(min(_POINTS * h - steps, _CELLS * h), math.exp(min(loss_range(pair, _LOOSE_TAIL)[1], 700.0)))
        coarse = 2.0 ** math.ceil(math.log2(max((steps + top) / _POINTS, top / _CELLS)))
        h = h if coarse <= h and steps >= _MANY else 0.0
    else:  # the lattice as deep as DEEP where that fits the caps (the choice above made at TAIL)
        deep = math.exp(min(loss_range(pair, DEEP)[1], 700.0))
        top = max(top, min(deep, _CELLS * h, _POINTS * h - steps))
    pure = pure_bounds(pair)  # the allocation's (module docstring)
    if not h or _zero_floor(pair, h, steps) > TAIL:
        from .geometric import geometric_epoch_pairs
        return AllocationPair(*geometric_epoch_pairs(pair, steps), key, pair.tight, pure).capped(pair)
    n = int(math.ceil(top / h)) + 1
    cells = ratio_cells(pair, h, n)
    return AllocationPair(epoch_pair(pair, steps, h, n, cells, True), epoch_pair(pair, steps, h, n, cells, False),
                          key, pair.tight, pure, refinable=True,
                          lower_reverse=lambda: epoch_pair(pair, steps, h, n, cells, False, "put")).capped(pair)


def pure_bounds(pair):
    """(``pair``'s pure ε, its reverse's): an ``AllocationPair``'s ``pure`` argument."""
    return pair.pure_epsilon(), pair.reverse().pure_epsilon()


def _zero_floor(pair, h, steps):
    """Q(Y' = 0)^t of the linear spread (the add direction's atom at +∞): at least the first
    cell's Q-mass less its P-mass over h (its share sent to 0)."""
    a, b = stacked_masses([pair], np.array([math.log(h)]), [1])
    return max(float(b[0] - a[0] / h), 0.0) ** steps
