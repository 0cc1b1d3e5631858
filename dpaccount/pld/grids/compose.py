"""Heterogeneous composition of PLD grids (Koskela & Honkela 2021, Alg. 1).

The composition of independent losses is the convolution of their P-mass
functions. Every distinct grid is transformed once, raised to its count in
the Fourier domain, the spectra are multiplied and one inverse transform
gives the composed grid. Nothing is lost silently:

* **Window.** The composed loss S is placed in a window [a, b] chosen by
  Chernoff bounds from the exact moment-generating functions of the grids,
  P(S ≥ b) ≤ exp(Σ k_i Λ_i(λ) − λ b), P(S ≤ a) ≤ exp(Σ k_i Λ_i(−λ) + λ a),
  each below ``tail``. A circular convolution of length n ≥ (b − a)/h only
  *adds* aliased mass to the window bins (never removes any), so the
  pessimistic grid adds the upper-tail bound to p_∞ and the lower-tail bound
  to the first bin; the optimistic grid keeps neither.
* **Floating-point noise** (``transform.py``). The per-bin bound B of the
  transforms' rounding is added to every bin (pessimistic) or subtracted
  (optimistic). Small problems use exact direct convolution instead
  (relative error ≤ n·u per bin).
* **Rare large losses** (``split.py``). A tilted grid of one grid taken K
  times whose noise alone raises δ at its centre by ``_NOISY`` of it, where
  one or two rare large losses on a light bulk carry that centre, is also
  composed as a binomial expansion over the heavy steps, each term tilted at
  its own saddle point; the better of the two at the centre is kept.
"""
import math

import numpy as np

from ...errors import GridTooLarge
from ...numerics import ULP_OF_ONE as _U
from .cache import GRIDS
from .chernoff import composed_p_inf, descend, exponent, quantile, tail_level
from .log_mgf import LogMGF, log_mgf
from .grid import PLDGrid, frozen
from .split import Term, carried_noise, heavy_split, mix, proxy_terms, terms
from .transform import direct, fft, untilt

MAX_GRID = 1 << 23  # 8.4M points: a complex spectrum is 134 MB
# a certified interval (both roundings, tilted grids, cache) peaks at ~320 bytes a grid point
# (measured: benchmarks/README.md, "Measurements behind constants in the code")
BYTES_PER_POINT = 320


def _too_large(what, n, step):
    """GridTooLarge for a window of ``n`` points: the points, the memory, the cap, and what answers."""
    return GridTooLarge(f"{what} needs {n:,} grid points (step {step:.3g}), ~{n * BYTES_PER_POINT / 2 ** 30:.2g} GB, "
                        f"beyond the cap of {MAX_GRID:,} points: ask for a coarser accuracy=, or method='rdp' "
                        f"(a looser upper bound, at once)")
_DIRECT_LIMIT = 4096


def chernoff_lambdas(items, tail):
    """The λ of the upper and lower window quantiles (``chernoff_window``): hints
    for the windows of the same pairs on finer grids, which move little."""
    mgf, log_t = log_mgf(items), math.log(tail)
    return quantile(mgf, log_t, 1.0)[1], quantile(mgf, log_t, -1.0)[1]


def chernoff_window(items, tail, hints=(None, None), proxy=None):
    """Grid indices (ja, jb) and bounds (below, above) on the finite mass of the
    composed loss under ja·h and over jb·h: each ≤ ``tail`` by Chernoff, and 0
    where the window reaches the end of the support. ``hints``: the
    ``chernoff_lambdas`` of the same pairs on coarser grids (searched from;
    a λ is refined only where that promises to save a grid point). ``proxy``:
    the same pairs' grids at a step between the hints' and this one, whose
    search (from the hints, to the same tolerance) starts this one's: its λ is
    nearer, which spares passes over the finer points. Only tightness rests on
    where a search starts: every λ gives a Chernoff bound, and the level is
    this grid's own at the λ the search ends at."""
    return _window(items, tail, hints, proxy)[:4]


def _window(items, tail, hints=(None, None), proxy=None, lower=True):
    """``chernoff_window``, and the λ of its top: K(λ) − λ·jb·h ≤ log ``tail`` (``_top_holds``);
    without ``lower``, the window's bottom is the support's (ja = its first index, nothing
    below it): for a pessimistic tilted grid, whose bottom is its own (``_tilted``), bounding
    the mass below it afresh (``_tilted_term``), so the untilted bottom's search is not made."""
    step = items[0][0].step
    lo = sum(k * g.offset for g, k in items)
    hi = sum(k * (g.offset + len(g.probs) - 1) for g, k in items)
    mgf, log_t = log_mgf(items), math.log(tail)
    if proxy is not None:
        rough = log_mgf(proxy)
        hints = tuple(quantile(rough, log_t, sign, h, tol=step)[1] if lower or sign > 0 else h
                      for h, sign in zip(hints, (1.0, -1.0)))
    b, lam_top = quantile(mgf, log_t, 1.0, hints[0], tol=step)
    ja = max(lo, int(math.floor(-quantile(mgf, log_t, -1.0, hints[1], tol=step)[0] / step))) if lower else lo
    jb = max(min(hi, int(math.ceil(b / step))), ja)
    return ja, jb, (tail if ja > lo else 0.0), (tail if jb < hi else 0.0), lam_top


def _mass_beyond(mgf, rough, level, sign=1.0, start=1.0):
    """Chernoff: P(sign·S > sign·level) ≤ exp(min_λ Σ k Λ(sign·λ) − λ·sign·level), rounded up
    (λ searched from ``start`` on ``rough``, the log-MGF of coarser grids, first: ``_near``)."""
    exponent_ = _near(lambda m: exponent(m, level, sign), mgf, rough, start, tol=1e-4)[0]
    return min(1.0, math.exp(min(exponent_, 0.0)) * (1 + 16 * _U))


def _mass_below(mgf, rough, level, lam, hint):
    """Chernoff: P(S < level) ≤ exp(Σ k Λ(−λ) + λ·level), rounded up (``exponent``), at the λ > 0
    of the tilted window's bottom (``_tilted``: its quantile's first-order condition K'(−λ) = its
    bottom is that of this bound's optimum at ``level``, within a step, and the log-MGF there is
    already known); any λ > 0 gives a bound. Where there is none, searched (``_mass_beyond``) from
    ``hint`` (a λ of a lower window quantile, e.g. the plan's on coarser grids, or None)."""
    if not lam > 0:
        return _mass_beyond(mgf, rough, level, -1.0, start=hint or 1e-3)
    return min(1.0, math.exp(min(exponent(mgf, level, -1.0)(lam)[0], 0.0)) * (1 + 16 * _U))


def saddle_tilt(items, level, proxy=None, start=1.0):
    """The tilt λ ≥ 0 minimising the Chernoff exponent Σ k Λ(λ) − λ·level: the
    exponentially tilted composition is centred near ``level`` (searched from
    ``start``, on ``proxy`` first: ``_near``)."""
    # gain ≤ 1e-5: the tilted mean K'(λ) within √(2·1e-5) ≈ 0.005 standard deviations of the level
    return _near(lambda m: exponent(m, level), log_mgf(items), proxy and log_mgf(proxy), start, tol=1e-5)[1]


def _near(search, mgf, rough, start=1.0, tol=0.0):
    """``descend`` on ``search(mgf)`` from the λ of the same search on ``rough``
    (the log-MGF of coarser grids: cheap, and close where the steps' rounding
    is small), which often leaves one pass over the finer points to do."""
    if rough is not None and rough is not mgf:
        start = descend(search(rough), start, tol)[1]
    return descend(search(mgf), start, tol)


def compose(items, tail=1e-30, pessimistic=True, tilt=0.0, base=None, hints=(None, None), proxy=None, level=None):
    """Compose ``[(PLDGrid, count), ...]`` (same step, same rounding) into one grid.

    With ``tilt`` = λ > 0 the transforms run on the tilted masses p_j e^{λ ε_j}
    (normalised), which commutes with convolution; untilting divides each bin's
    noise bound by e^{λ ε} there, so bins around and above the tilt centre are
    accurate to ~1e-15 of *themselves* (plus the tilting's own rounding, a pad
    of ~1e-8 of them: ``transform.untilt``). The result is combined bin by bin with
    ``base`` (the untilted grid of the same window): the smaller upper bound
    (pessimistic) or the larger lower bound wins, both being certified.
    ``level``: the loss the tilt was chosen for (its saddle point; by default the
    tilted mean, which can lie far above it where the tilted mean jumps with λ),
    where a split (``split.py``) is judged."""
    step = items[0][0].step
    for g, _ in items:
        if g.step != step:
            raise ValueError(f"grid steps differ: {g.step!r} != {step!r}")
        if g.pessimistic != pessimistic:
            raise ValueError("cannot compose pessimistic and optimistic grids")
    if len(items) == 1 and items[0][1] == 1:
        return items[0][0]
    p_inf = composed_p_inf(items)  # 1 − Π(1 − p_inf)^k, rounded up
    log_mass = sum(k * math.log(max(g.probs.sum(), 1e-320)) for g, k in items)
    if log_mass < math.log(tail):
        # the whole finite part weighs less than the tail: count it at +∞ (pessimistic)
        # or drop it (optimistic); one empty grid point keeps the shape
        extra = math.exp(log_mass) if pessimistic else 0.0
        return PLDGrid(step=step, offset=sum(k * g.offset for g, k in items), probs=np.zeros(1),
                       p_inf=min(1.0, p_inf + extra), pessimistic=pessimistic)
    support = sum(k * (len(g.probs) - 1) for g, k in items) + 1
    tilted = bool(tilt) and support > _DIRECT_LIMIT
    window = _window(items, tail, hints, proxy, lower=not (tilted and pessimistic))
    ja, jb, below, above, _ = window
    n = jb - ja + 1
    if n > MAX_GRID and not tilted:  # (a tilted grid's window is its own: ``_tilted``)
        raise _too_large("the composed privacy-loss window", n, step)
    noise = 0.0
    if support <= _DIRECT_LIMIT:
        probs, extra_inf = direct(items, ja, jb, pessimistic)
    elif not tilt:
        values, err, _, pad = fft(items, ja, n)
        # circular aliasing adds at most the mass outside the window to any bin; a folded
        # grid's rounding moves every bin by e^{±pad} (``fft``)
        probs = np.maximum(values + err, 0.0) if pessimistic else np.maximum(values - err - below - above, 0.0)
        if pad:  # tails of the rounded law too; exp (4 ulp) and the product: 8u
            if not pessimistic:
                probs = np.maximum(probs - (below + above) * math.expm1(pad), 0.0)
            probs *= math.exp(pad + 8 * _U if pessimistic else -pad - 8 * _U)
        noise = err
        extra_inf = above if pessimistic else 0.0
        if pessimistic:
            probs[0] += below
    else:
        term = _tilted_term(items, tail, tilt, pessimistic, base, hints, proxy, window)
        grid = _grid(step, pessimistic, term._replace(p_inf=p_inf + term.p_inf))
        if len(items) == 1:
            grid = _split_if_better(grid, items[0], tail, tilt, pessimistic, proxy, level)
        return grid
    p_inf_total = min(1.0, p_inf + extra_inf) if pessimistic else p_inf
    return PLDGrid(step=step, offset=ja, probs=frozen(probs), p_inf=p_inf_total, pessimistic=pessimistic,
                   noise=noise)


def _tilted_term(items, tail, tilt, pessimistic, base=None, hints=(None, None), proxy=None, window=None):
    """The tilted composition as a ``split.Term``: its bins, their noise bounds, the
    untilted mass below its window (moved up to its bottom, upper bounds only) and the
    mass above it (not the true P(L = ∞)); ``window``: ``_window``'s, if known."""
    step = items[0][0].step
    ja, jb, below, above, lam_top = window or _window(items, tail, hints, proxy)
    bottom, top = ja, jb
    mgf, rough = log_mgf(items), proxy and log_mgf(proxy)
    ja, probs, noise_bins, lam_bottom = _tilted(items, mgf, rough, (ja, jb, lam_top), tail, tilt, pessimistic, base)
    if not pessimistic:  # lower bounds move no mass: nothing to bound
        return Term(ja, probs, noise_bins, 0.0, 0.0)
    if ja + len(probs) - 1 > top:  # the tilted window reaches higher: bound the mass above its top
        above = min(above, _mass_beyond(mgf, rough, (ja + len(probs) - 1) * step, start=tilt))
    if ja > bottom:  # it starts higher: bound the mass below its bottom (moved up to it)
        below = _mass_below(mgf, rough, ja * step, lam_bottom, hints[1])
    return Term(ja, probs, noise_bins, below, above)


def _grid(step, pessimistic, term):
    """A ``PLDGrid`` of one term (its moved mass added to its first bin)."""
    probs = term.probs
    probs[0] += term.below
    return PLDGrid(step=step, offset=term.offset, probs=frozen(probs), p_inf=min(1.0, term.p_inf),
                   pessimistic=pessimistic, noise=float(term.noise.max()), noise_bins=frozen(term.noise))


_NOISY = 1e-3  # a tilted grid whose noise alone raises δ at its centre by this (relative) tries a split


def _split_if_better(grid, item, tail, tilt, pessimistic, proxy=None, level=None):
    """``grid`` (one grid taken K times, tilted), or the bulk/heavy split of the same
    composition (``split.py``) where ``grid`` is noise-bound at ``level`` and the
    split answers better there (lower δ for upper bounds, higher for lower bounds)."""
    g, count = item
    if level is None:
        level = log_mgf([item]).moments(tilt)[1]  # the tilted mean
    at = np.array([level])
    first = max(int(math.floor(level / grid.step)) + 1 - grid.offset, 0)
    # ``noise_effect`` and, a guide that is at least δ(level), the mass above the level, as plain
    # sums (the grid's own suffix sums run from the top down only as far as its reads need)
    if not float(grid.noise_bins[first:].sum()) > _NOISY * float(grid.probs[first:].sum()):
        return grid
    split = heavy_split(g, count, tilt, level, tail)
    if split is None:
        return grid
    other = _split_grid(split, g, count, tail, level, pessimistic, proxy_terms(split, proxy, count, pessimistic))
    better = (float(other.delta(at)[0]) < float(grid.delta(at)[0])) == pessimistic
    return other if better else grid


def _split_grid(split, g, count, tail, level, pessimistic, proxies=None):
    """The terms of ``split`` (``split.py``), each tilted at its own saddle point and
    bounding its exact term from its side (as a law: not bin by bin, since the
    bulk's window moves mass, so it is not combined with the untilted grid), mixed.
    ``proxies``: each term's items on coarser grids (``split.proxy_terms``), which
    its searches start from."""
    parts = []
    for k, dominated in terms(pessimistic):
        bulk = compose([(split.bulk, count - k)], tail, pessimistic) if k and not dominated else None
        items = [(split.bulk, count)] if k == 0 else [(g, count - k) if dominated else (bulk, 1), (split.heavy, k)]
        if k < 2:  # tilted at its own saddle point
            rough = proxies and proxies[k]
            term = _tilted_term(items, tail, saddle_tilt(items, level, rough), pessimistic, proxy=rough)
            # lower bounds drop the mass at +∞ (≤ K·P(L = ∞) ≤ tail: ``heavy_split``)
            term = term._replace(p_inf=composed_p_inf(items) + term.p_inf if pessimistic else 0.0)
        else:  # two heavy steps or more, untilted: their weight leaves their noise far below the
            # others', and their windows stay the untilted ones, not the far wider tilted laws'
            # (so the same for every tilt of the same split: the grids re-centred at an answer
            # share it, from the cache)
            key = ("split term", g, count, k, split.heavy.offset, split.exponent, tail, pessimistic)
            part = GRIDS.get(key, lambda: compose(items, tail, pessimistic))
            term = Term(part.offset, np.array(part.probs), np.full(len(part.probs), part.noise), 0.0,
                        part.p_inf if pessimistic else 0.0)
        if bulk is not None:  # the bulk's own noise bound, carried by the heavy steps
            term.noise[:] += carried_noise(bulk, split.heavy, k, term.offset, len(term.probs))
        parts.append(term)
    first, probs, noise, moved, p_inf = mix(parts, split.weights, pessimistic)
    for j, mass in moved:  # (lower bounds move none) the sum rounded up: 2u
        if mass:
            probs[j - first] = (probs[j - first] + mass) * (1 + 2 * _U)
    return PLDGrid(step=g.step, offset=first, probs=frozen(probs), p_inf=min(1.0, p_inf), pessimistic=pessimistic,
                   noise=float(noise.max()), noise_bins=frozen(noise))


def _tilted(items, mgf, rough, window, tail, tilt, pessimistic, base):
    """The tilted transform on a window that holds the tilted measure.

    The tilt runs at θ ≤ λ (``read_tilt``: narrower windows where the law
    tilted at λ itself is very wide). The window is the tilted measure's own
    Chernoff quantiles at 1e-10 (1e-20 for lower bounds; its log-MGF is
    θ' ↦ Σ k Λ(θ + θ') − Σ k Λ(θ)), its top raised to the untilted window's
    [ja, jb] (``window``: ja, jb and the λ of jb) where that is higher (its
    top is not searched where jb holds it by far, ``_top_holds``); the untilted mass below its bottom is
    moved up to the bottom (``compose``: pessimistic, and nothing for δ(ε)
    at the ε it is read at, which lie above). Circular
    aliasing only adds mass, so the upper bounds stand whatever the window;
    for lower bounds the tilted mass outside the window (≤ 1e-20 on each
    side), untilted, is subtracted from every bin. What wraps around lands at the window's
    bottom, a window's width below the tilt centre: the bins a tilted grid is
    read at (its band, ``step_profile.py``) get the tilted mass beyond the
    centre plus that width, far below 1e-10 of theirs. (A 1e-20 quantile
    made the windows of DP-SGD's far tail half as wide again, for nothing.)"""
    step = items[0][0].step
    ja, jb, lam_top = window
    lo = sum(k * g.offset for g, k in items)
    hi = sum(k * (g.offset + len(g.probs) - 1) for g, k in items)
    # of the tilted measure: upper bounds only lose accuracy far from the bands read; lower
    # bounds subtract it (untilted) from every bin, so theirs stays at 1e-20
    tilted_tail = max(tail, 1e-10 if pessimistic else 1e-20)
    log_t = math.log(tilted_tail)
    rough = rough or mgf
    tilt = read_tilt(rough, tilt, jb * step)
    start = math.sqrt(-2.0 * log_t / max(rough.moments(tilt)[2], 1e-300))  # the quantile of a normal law
    b = -math.inf if _top_holds(mgf, tilt, lam_top, jb * step, tail, log_t) else \
        _near(lambda m: tail_level(m, log_t, 1.0, tilt), mgf, rough, start, tol=step)[0]
    a, lower = _near(lambda m: tail_level(m, log_t, -1.0, tilt), mgf, rough, start, tol=step)
    a = -a
    # the bottom is the tilted measure's own: the untilted mass below it is moved up to it (by
    # ``compose``), where it adds nothing to δ(ε) for ε above the bottom, the tilted grid's use
    # (lower bounds keep the untilted bottom: below their window they drop mass, and an ε(δ)
    # read at the window's bottom would be no lower bound)
    bottom = int(math.floor(a / step)) if pessimistic else min(ja, int(math.floor(a / step)))
    new_a, new_b = max(lo, bottom), min(hi, jb if b == -math.inf else max(jb, int(math.ceil(b / step))))
    n = new_b - new_a + 1
    if n > MAX_GRID:
        raise _too_large("the tilted privacy-loss window", n, step)
    values, bin_err, log_scale, log_pad = fft(items, new_a, n, tilt)
    outside = (tilted_tail if new_a > lo else 0.0) + (tilted_tail if new_b < hi else 0.0)
    probs, err = untilt(values, bin_err, log_scale, log_pad, tilt, step, new_a, pessimistic, outside)
    if base is not None:
        _prefer(new_a, probs, err, base, pessimistic)
    return new_a, probs, err, lower - tilt  # the bottom's untilted λ: K(tilt − θ') is known there


_TOP_MARGIN = math.log(1e10)  # how far below the tilted tail the untilted top's bound must put it


def _top_holds(mgf, theta, lam, top, tail, log_tilted):
    """Whether the untilted window's top (the loss ``top``, whose λ is ``lam``: K(λ) − λ·top ≤
    log ``tail``, ``_window``) holds the law tilted at θ < λ far beyond its own tail
    e^``log_tilted``: P_θ(S ≥ top) = E[e^{θS − K(θ)}; S ≥ top] ≤ e^{K(λ) − K(θ) − (λ − θ)·top}
    ≤ tail·e^{θ·top − K(θ)}, checked ``_TOP_MARGIN`` below e^``log_tilted``. The window's requirement
    (the tilted mass above its top at most e^``log_tilted``) then holds at ``top`` without the
    tilted quantile's search (``tail_level``), whose level, the least value over θ' > 0 found to
    within about a step, lies ≥ 23/(λ − θ) below ``top`` (at θ' = λ − θ already), so that it
    would not have raised the top. K(θ) is taken less its rounding (``LogMGF.error``) and the
    sum padded by 8u of its terms. (The grid's bounds stand whatever the window: aliasing only
    adds mass, ``_tilted``.)"""
    if lam is None or not 0.0 < theta < lam or not math.isfinite(top):
        return False
    k_theta = mgf(theta) - mgf.error(theta)
    exponent_ = math.log(tail) + theta * top - k_theta
    exponent_ += 8 * _U * (abs(math.log(tail)) + abs(theta * top) + abs(k_theta))
    return exponent_ <= log_tilted - _TOP_MARGIN


def _prefer(offset, probs, err, base, pessimistic):
    """Where the window from ``offset`` overlaps ``base``'s, each bin bounds the same mass:
    keep the better one (in place; ``err`` too)."""
    first, last = max(offset, base.offset), min(offset + len(probs) - 1, base.offset + len(base.probs) - 1)
    if last >= first:
        part, theirs = slice(first - offset, last - offset + 1), base.probs[first - base.offset:last - base.offset + 1]
        (np.minimum if pessimistic else np.maximum)(probs[part], theirs, out=probs[part])
        # both bins are bounds on the same mass m, each within twice its own noise of it, so the
        # better one is within twice the smaller noise of m (whichever bin that is)
        np.minimum(err[part], base.noise, out=err[part])


_READ_RATIO = math.log(1e3)  # how far below its peak the tilted density may be where it is read


def read_tilt(mgf: LogMGF, lam: float, top: float) -> float:
    """The tilt θ ≤ λ the transform runs at, for reads from about the tilted
    mean m(λ) = K'(λ) up to v = min(m + 3 sd, top) (``top``: the untilted
    window's top, above which the tier's tail sets δ anyway): the smallest θ
    at which the tilted density at v is still within ``_READ_RATIO`` of its
    peak, log f_θ(v) ≈ θv − K(θ) − I(v), I(v) = sup_t (tv − K(t)) (Legendre).
    Where the log-MGF is nearly linear (a compound of rare large losses) the
    law tilted at the saddle point is very wide, and a slightly smaller θ
    halves the window while v stays well resolved. Any θ is valid: it only
    chooses which bins are accurate to ~1e-15 of themselves."""
    _, mean, var = mgf.moments(lam)
    v = min(mean + 3.0 * math.sqrt(max(var, 0.0)), top)
    if not v > mean:
        return lam
    rate = -descend(exponent(mgf, v), lam, tol=1e-6)[0]  # I(v)

    # h(θ) = θv − K(θ) − I(v) + log ratio: concave, increasing on [0, λ] (K'(θ) ≤ m < v);
    # Newton from λ lands at or below its root, and from there climbs to it
    if -mgf(0.0) - rate >= -_READ_RATIO:
        return lam  # no smaller θ gains anything worth the search
    theta = lam
    for _ in range(16):
        k0, k1, _ = mgf.moments(theta)
        if not v > k1:
            return lam
        new = min(max(theta - (theta * v - k0 - rate + _READ_RATIO) / (v - k1), 0.0), lam)
        if abs(new - theta) <= 1e-4 * lam:
            return new or theta
        theta = new
    return theta or lam
