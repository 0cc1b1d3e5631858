"""The deep tails of an allocation epoch's sum S = Y_1 + … + Y_t, by tilted transforms.

``sum_law.sum_law`` gets the law of S on its window [0, W·h] from one FFT,
whose per-bin noise bound B ≈ 1e-16 × the peak is added (upper) or taken off (lower)
in every bin. The hockey sticks of the epoch read the far tails of S: the remove
direction E_Q[(S/t − e^ε)_+] its top, the add direction E_Q[(1 − e^ε S/t)_+] its
bottom, where the bins hold 1e-20 and less: there B sets both ends (σ = 0.9, 1000
steps: the FFT alone brackets δ_add(0.3) ≈ 2.5e-13 by [1e-13, 7.4e-11]), and through the
composed epochs the interval of δ(ε) at δ ≲ 1e-8.

Exponential tilting commutes with convolution: the transform of the tilted masses
w_j e^{λ s_j} (normalised) is the tilted law of S, whose noise, untilted, is
B·e^{C − λ s} at s (``transform.fft``, ``transform.untilt``): ~1e-15 of the bins
themselves around the tilted mean K'(λ)/… and far better than B on the side λ points
to. ``refine`` runs a few tilts of each sign (``tilts``: from the saddle point of S's
Chernoff quantile 10^{-5} outwards, each centred some standard deviations beyond the
last; a sign's chain stops once the bins beyond it carry ≤ ``_NEGLIGIBLE`` of Q- and
P-mass by their upper bounds, ``_settled``), and keeps bin by bin the smaller upper
bound or the larger lower bound (each is certified: the better of two bounds of the
same mass is one; a skipped tilt leaves a bin's bound unchanged).

Windows: the upper bounds stand on any window (circular aliasing only adds mass);
a lower bound subtracts from every bin the tilted mass outside its window, untilted:
the window is extended to the tilted law's own 1 − 10^{-20} quantile
(``chernoff.tail_level`` at λ; capped at ``_REACH``·(W + 1) and at the grid cap
``MAX_GRID``, beyond which the tilted tail above the cap is bounded by
``sum_law._chernoff_tail`` of the tilted lattice law) and 10^{-20} taken off, so
that a tilt towards the top does not lose its lower end to the aliased tilted mass
above W.
"""
import math

import numpy as np

from ..grids.chernoff import descend, exponent, quantile, tail_level
from ..grids.log_mgf import log_mgf
from ..grids.compose import MAX_GRID
from ..grids.grid import PLDGrid
from ..grids.transform import fft, untilt
from ...numerics import ULP_OF_ONE as _U

_FIRST = 1e-5    # the Chernoff quantile of S the first tilt of each sign centres its law at
_SPACING = 8.0   # standard deviations of a tilted law between its centre and the next tilt's
_MOST = 6        # tilts of each sign at most
_TILTED_TAIL = 1e-20             # a lower bound's tilted mass beyond its window
_REACH = 4                       # a tilted window's length at most this many untilted ones
_NEGLIGIBLE = 1e-30              # mass beyond a tilt's centre below which further tilts are skipped


def refine(q, w, t, h, scale, pessimistic, chernoff_tail):
    """``q`` (the law of S on [0, W·h] from the untilted transform, ``sum_law``) refined
    bin by bin by the tilted transforms (module docstring), in place; ``w`` the law of Y
    on the lattice j·h, divided by ``scale`` ≥ its total before the transform (the
    upper bins multiplied back by scale^t, rounded up). ``chernoff_tail(items, threshold,
    factor)``: a Chernoff bound on the mass of the sum of ``items`` above ``threshold``."""
    grid = PLDGrid(step=h, offset=0, probs=w / scale, p_inf=0.0)
    items = [(grid, t)]
    mgf = log_mgf(items)
    top = (len(w) - 1) * t
    n = len(q)
    back = scale ** t * (1 + (t + 4) * _U) if pessimistic and scale > 1 else 1.0
    # ``high``: upper bounds of the bins so far (the upper law itself; a lower law's from the
    # same tilted transforms, any window: aliasing only adds), read by ``_settled``
    high = q if pessimistic else np.full(n, np.inf)
    weight = np.maximum(np.arange(n) * (h / t), 1.0)  # a bin's P-mass ≤ its Q-mass × this (S/t ≥ 1)
    for lam in tilts(mgf, (n - 1) * h, lambda sign, centre: _settled(high, weight, sign, centre / h)):
        size, outside = _window(mgf, items, lam, n, top, h, pessimistic, chernoff_tail)
        if outside >= 1.0:  # a lower bound losing all its mass above the window: no bin to gain
            continue
        values, err, log_scale, log_pad = fft(items, 0, size, lam)
        probs, _ = untilt(values, err, log_scale, log_pad, lam, h, 0, pessimistic, outside)
        probs = probs[:n]
        if pessimistic:
            np.minimum(q, probs * back, out=q)
        else:
            np.maximum(q, probs, out=q)
            np.minimum(high, untilt(values, err, log_scale, log_pad, lam, h, 0, True)[0][:n], out=high)
    return q


def _settled(high, weight, sign, centre):
    """Whether the bins beyond ``centre`` (an index, halfway to the next tilt's centre; above it for ``sign`` > 0, below it
    otherwise), where the further tilts of that sign would refine, carry at most
    ``_NEGLIGIBLE`` of Q- and P-mass altogether by their upper bounds ``high``: skipping
    those tilts leaves each bin's bound as it is (still valid), off by at most that much."""
    cut = int(math.ceil(centre)) if sign > 0 else int(math.floor(centre)) + 1
    part = slice(max(cut, 0), None) if sign > 0 else slice(0, max(cut, 0))
    return float(np.sum(high[part] * weight[part])) <= _NEGLIGIBLE


def tilts(mgf, end, settled=lambda sign, centre: False):
    """The tilts λ, of each sign: the first at the saddle point of the Chernoff quantile
    ``_FIRST`` of S (``chernoff.quantile``), each next one centring the tilted law
    ``_SPACING`` of its standard deviations further out (K'(λ) = that centre: the
    minimiser of the Chernoff exponent, ``chernoff.exponent``), until the centre leaves
    [0, ``end``], ``_MOST`` tilts are made, or ``settled(sign, x)`` (read after the
    consumer has used the last tilt: ``x`` halfway between its centre and the next's,
    within which the last is accurate to ~1e-15·e^8 of each bin) says the bins beyond
    need no more. Within a few standard deviations of a
    centre the bins are accurate to ~1e-15 of themselves, ~1e-15·e^{d²/2} at d of them;
    a heavy-tailed Y (a log-normal ratio: σ ≲ 1) carries the far top by one large term,
    where the quantiles of the bulk (1e-13: ~8 standard deviations) do not reach."""
    for sign in (1.0, -1.0):
        lam = quantile(mgf, math.log(_FIRST), sign)[1]
        for _ in range(_MOST):
            if not (math.isfinite(lam) and lam > 0.0):
                break
            yield sign * lam
            _, mean, var = mgf.moments(sign * lam)
            centre = mean + sign * _SPACING * math.sqrt(max(var, 0.0))
            if not 0.0 < centre < end or settled(sign, (mean + centre) / 2):
                break
            lam = descend(exponent(mgf, centre, sign), lam, tol=1e-6)[1]


def _window_cap(n):
    """The most points of a tilted transform's window for ``n`` bins: ``_REACH``·n, within
    the grid cap ``MAX_GRID`` (beyond it the tilted mass above is bounded, ``_window``)."""
    return min(_REACH * n, MAX_GRID)


def _window(mgf, items, lam, n, top, h, pessimistic, chernoff_tail):
    """(points of the tilted transform's window [0, size − 1], the tilted mass above it):
    upper bounds keep the untilted window (aliasing only adds); lower bounds reach the
    tilted law's 1 − ``_TILTED_TAIL`` quantile (the whole support where that reaches its
    top), at most ``_window_cap(n)`` points (module docstring), and take off what lies above:
    beyond the cap, a Chernoff bound on the tilted mass above it (≤ 1: a useless tilt leaves
    the bins as they are)."""
    if pessimistic or n - 1 >= top:
        return n, 0.0
    log_t = math.log(_TILTED_TAIL)
    start = math.sqrt(-2.0 * log_t / max(mgf.moments(lam)[2], 1e-300))
    far = descend(tail_level(mgf, log_t, 1.0, lam), start, tol=h)[0]  # the tilted law's 1 − _TILTED_TAIL quantile
    end = int(math.ceil(far / h)) if math.isfinite(far) else top
    size = _window_cap(n)
    if end >= top and top < size:
        return top + 1, 0.0
    if end < size:
        return max(n, end + 1), _TILTED_TAIL
    grid = items[0][0]
    j = np.arange(len(grid.probs), dtype=float)
    with np.errstate(divide="ignore"):
        log_w = np.log(grid.probs) + lam * h * j
    peak = float(np.max(log_w))
    tilted = np.exp(log_w - peak)
    tilted /= float(tilted.sum()) * (1 - (len(tilted) + 4) * _U)  # total ≥ 1: its tail bound only rises
    above = chernoff_tail([(PLDGrid(step=h, offset=0, probs=tilted, p_inf=0.0), items[0][1])], (size - 1) * h, 1.0)
    return size, min(1.0, above * (1 + 1e-9))  # the tilted lattice law's rounding against fft's (≤ 1e-12)
