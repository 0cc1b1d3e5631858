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
* **Floating-point noise.** The transforms are accurate to η = c·u·log₂n in
  each coefficient (inputs sum to ≤ 1); the power/product of K spectra
  then errs by at most K·(η + 4u)·M_ω^{K−1}, M_ω = max_i |ẑ_{i,ω}| + η, and the
  inverse transform adds η·mean|ŷ|. The resulting per-bin bound B is added
  to every bin (pessimistic) or subtracted (optimistic). Small problems
  use exact direct convolution instead (relative error ≤ n·u per bin).
"""
import math

import numpy as np
from scipy import fft as sfft

from ..errors import GridTooLarge
from .chernoff import descend, exponent, quantile, tail_level
from .chernoff import log_mgf as _MGF
from .grid import PLDGrid

_U = np.finfo(float).eps
MAX_GRID = 1 << 23  # 8.4M points: a complex spectrum is 134 MB
_DIRECT_LIMIT = 4096


def chernoff_lambdas(items, tail):
    """The λ of the upper and lower window quantiles (``chernoff_window``): hints
    for the windows of the same pairs on finer grids, which move little."""
    mgf, log_t = _MGF(items), math.log(tail)
    return quantile(mgf, log_t, 1.0)[1], quantile(mgf, log_t, -1.0)[1]


def chernoff_window(items, tail, hints=(None, None), proxy=None):
    """Grid indices (ja, jb) and bounds (below, above) on the finite mass of the
    composed loss under ja·h and over jb·h: each ≤ ``tail`` by Chernoff, and 0
    where the window reaches the end of the support. ``hints``: the
    ``chernoff_lambdas`` of the same pairs on coarser grids (searched from;
    a λ is refined only where that promises to save a grid point); where
    there are none, ``proxy`` (such grids) gives them."""
    step = items[0][0].step
    lo = sum(k * g.offset for g, k in items)
    hi = sum(k * (g.offset + len(g.probs) - 1) for g, k in items)
    mgf, log_t = _MGF(items), math.log(tail)
    if proxy is not None and None in hints:
        rough = _MGF(proxy)
        hints = tuple(quantile(rough, log_t, sign)[1] if h is None else h for h, sign in zip(hints, (1.0, -1.0)))
    b = quantile(mgf, log_t, 1.0, hints[0], tol=step)[0]
    a = -quantile(mgf, log_t, -1.0, hints[1], tol=step)[0]
    ja = max(lo, int(math.floor(a / step)))
    jb = max(min(hi, int(math.ceil(b / step))), ja)
    return ja, jb, (tail if ja > lo else 0.0), (tail if jb < hi else 0.0)


def _mass_beyond(mgf, rough, level, sign=1.0, start=1.0):
    """Chernoff: P(sign·S > sign·level) ≤ exp(min_λ Σ k Λ(sign·λ) − λ·sign·level), rounded up
    (λ searched from ``start`` on ``rough``, the log-MGF of coarser grids, first: ``_near``)."""
    exponent_ = _near(lambda m: exponent(m, level, sign), mgf, rough, start, tol=1e-4)[0]
    return min(1.0, math.exp(min(exponent_, 0.0)) * (1 + 16 * _U))


def saddle_tilt(items, level, proxy=None, start=1.0):
    """The tilt λ ≥ 0 minimising the Chernoff exponent Σ k Λ(λ) − λ·level: the
    exponentially tilted composition is centred near ``level`` (searched from
    ``start``, on ``proxy`` first: ``_near``)."""
    # gain ≤ 1e-5: the tilted mean K'(λ) within √(2·1e-5) ≈ 0.005 standard deviations of the level
    return _near(lambda m: exponent(m, level), _MGF(items), proxy and _MGF(proxy), start, tol=1e-5)[1]


def _near(search, mgf, rough, start=1.0, tol=0.0):
    """``descend`` on ``search(mgf)`` from the λ of the same search on ``rough``
    (the log-MGF of coarser grids: cheap, and close where the steps' rounding
    is small), which often leaves one pass over the finer points to do."""
    if rough is not None and rough is not mgf:
        start = descend(search(rough), start, tol)[1]
    return descend(search(mgf), start, tol)


def compose(items, tail=1e-30, pessimistic=True, tilt=0.0, base=None, hints=(None, None), proxy=None):
    """Compose ``[(PLDGrid, count), ...]`` (same step, same rounding) into one grid.

    With ``tilt`` = λ > 0 the transforms run on the tilted masses p_j e^{λ ε_j}
    (normalised), which commutes with convolution; untilting divides each bin's
    noise bound by e^{λ ε} there, so bins around and above the tilt centre are
    accurate to ~1e-15 of *themselves*. The result is combined bin by bin with
    ``base`` (the untilted grid of the same window): the smaller upper bound
    (pessimistic) or the larger lower bound wins, both being certified."""
    step = items[0][0].step
    for g, _ in items:
        if g.step != step:
            raise ValueError(f"grid steps differ: {g.step!r} != {step!r}")
        if g.pessimistic != pessimistic:
            raise ValueError("cannot compose pessimistic and optimistic grids")
    if len(items) == 1 and items[0][1] == 1:
        return items[0][0]
    log_finite = sum(k * math.log1p(-min(g.p_inf, 1.0)) if g.p_inf < 1 else -math.inf for g, k in items)
    # 1 − Π(1 − p_inf)^k, rounded up (a few ulps per operation)
    p_inf = min(1.0, -math.expm1(log_finite) * (1 + 16 * _U)) if log_finite > -math.inf else 1.0
    log_mass = sum(k * math.log(max(g.probs.sum(), 1e-320)) for g, k in items)
    if log_mass < math.log(tail):
        # the whole finite part weighs less than the tail: count it at +∞ (pessimistic)
        # or drop it (optimistic); one empty grid point keeps the shape
        extra = math.exp(log_mass) if pessimistic else 0.0
        return PLDGrid(step=step, offset=sum(k * g.offset for g, k in items), probs=np.zeros(1),
                       p_inf=min(1.0, p_inf + extra), pessimistic=pessimistic)
    ja, jb, below, above = chernoff_window(items, tail, hints, proxy)
    n = jb - ja + 1
    if n > MAX_GRID:
        raise GridTooLarge(f"the composed privacy-loss window needs {n} grid points "
                           f"(step {step:.3g}); the cap is {MAX_GRID}. Use a coarser accuracy.")
    support = sum(k * (len(g.probs) - 1) for g, k in items) + 1
    noise = 0.0
    if support <= _DIRECT_LIMIT:
        probs, extra_inf = _direct(items, ja, jb, pessimistic)
    elif not tilt:
        values, err = _fft(items, ja, n)
        # circular aliasing adds at most the mass outside the window to any bin
        probs = np.maximum(values + err, 0.0) if pessimistic else np.maximum(values - err - below - above, 0.0)
        noise = err
        extra_inf = above if pessimistic else 0.0
        if pessimistic:
            probs[0] += below
    else:
        bottom, top = ja, jb
        mgf, rough = _MGF(items), proxy and _MGF(proxy)
        ja, probs, noise_bins = _tilted(items, mgf, rough, ja, jb, tail, tilt, pessimistic, base)
        if ja + len(probs) - 1 > top:  # the tilted window reaches higher: bound the mass above its top
            above = min(above, _mass_beyond(mgf, rough, (ja + len(probs) - 1) * step, start=tilt))
        if ja > bottom:  # it starts higher: bound the mass below its bottom (moved up to it)
            below = _mass_beyond(mgf, rough, ja * step, -1.0, start=1e-3)
        extra_inf = above if pessimistic else 0.0
        if pessimistic:
            probs[0] += below
        return PLDGrid(step=step, offset=ja, probs=probs, p_inf=min(1.0, p_inf + extra_inf) if pessimistic
                       else p_inf, pessimistic=pessimistic, noise=float(noise_bins.max()), noise_bins=noise_bins)
    p_inf_total = min(1.0, p_inf + extra_inf) if pessimistic else p_inf
    return PLDGrid(step=step, offset=ja, probs=probs, p_inf=p_inf_total, pessimistic=pessimistic,
                   noise=noise)


def _tilted(items, mgf, rough, ja, jb, tail, tilt, pessimistic, base):
    """The tilted transform on a window that holds the tilted measure.

    The tilt runs at θ ≤ λ (``_read_tilt``: narrower windows where the law
    tilted at λ itself is very wide). The window is the tilted measure's own
    Chernoff quantiles at 1e-10 (1e-20 for lower bounds; its log-MGF is
    θ' ↦ Σ k Λ(θ + θ') − Σ k Λ(θ)), its top raised to the untilted window's
    [ja, jb] where that is higher; the untilted mass below its bottom is
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
    lo = sum(k * g.offset for g, k in items)
    hi = sum(k * (g.offset + len(g.probs) - 1) for g, k in items)
    # of the tilted measure: upper bounds only lose accuracy far from the bands read; lower
    # bounds subtract it (untilted) from every bin, so theirs stays at 1e-20
    tilted_tail = max(tail, 1e-10 if pessimistic else 1e-20)
    log_t = math.log(tilted_tail)
    rough = rough or mgf
    tilt = _read_tilt(rough, tilt, jb * step)
    start = math.sqrt(-2.0 * log_t / max(rough.moments(tilt)[2], 1e-300))  # the quantile of a normal law
    b, a = (sign * _near(lambda m: tail_level(m, log_t, sign, tilt), mgf, rough, start, tol=step)[0]
            for sign in (1.0, -1.0))
    # the bottom is the tilted measure's own: the untilted mass below it is moved up to it (by
    # ``compose``), where it adds nothing to δ(ε) for ε above the bottom, the tilted grid's use
    # (lower bounds keep the untilted bottom: below their window they drop mass, and an ε(δ)
    # read at the window's bottom would be no lower bound)
    bottom = int(math.floor(a / step)) if pessimistic else min(ja, int(math.floor(a / step)))
    new_a, new_b = max(lo, bottom), min(hi, max(jb, int(math.ceil(b / step))))
    n = new_b - new_a + 1
    if n > MAX_GRID:
        raise GridTooLarge(f"the tilted privacy-loss window needs {n} grid points (cap {MAX_GRID})")
    values, bin_err, log_scale = _fft(items, new_a, n, tilt)
    # untilt: p_s = p̃_s · exp(Σ k log N_i − λ s), s = (new_a + j)·h; beyond e^700 the bin is useless
    # anyway (its noise bound, ≥ 1e-21 tilted, makes it ≥ 1 pessimistic and 0 optimistic)
    factor = np.arange(new_a, new_a + n, dtype=float)
    factor *= -tilt * step
    factor += log_scale
    np.exp(np.minimum(factor, 700.0, out=factor), out=factor)
    # (tilted values ± their noise bound and, optimistic, the tilted tails) · factor, in place:
    # these windows are the largest
    outside = (tilted_tail if new_a > lo else 0.0) + (tilted_tail if new_b < hi else 0.0)
    values += bin_err if pessimistic else -(bin_err + outside)
    values *= factor
    probs = np.maximum(values, 0.0, out=values)
    err = np.multiply(factor, bin_err, out=factor)
    first, last = (max(new_a, base.offset), min(new_b, base.offset + len(base.probs) - 1)) if base else (0, -1)
    if last >= first:  # where the windows overlap, each bin bounds the same mass: keep the better one
        part, theirs = slice(first - new_a, last - new_a + 1), base.probs[first - base.offset:last - base.offset + 1]
        (np.minimum if pessimistic else np.maximum)(probs[part], theirs, out=probs[part])
        np.minimum(err[part], base.noise, out=err[part])  # the bin kept is the one with the smaller error
    return new_a, probs, err


_READ_RATIO = math.log(1e3)  # how far below its peak the tilted density may be where it is read


def _read_tilt(mgf, lam, top):
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
        new = max(theta - (theta * v - k0 - rate + _READ_RATIO) / (v - k1), 0.0)
        if abs(new - theta) <= 1e-4 * lam:
            return new or theta
        theta = new
    return theta or lam


def _truncate(probs, offset, ja, jb, pessimistic):
    """Cut a grid to indices [ja, jb]: returns (probs, mass sent to +∞)."""
    lo_cut, hi_cut = ja - offset, jb - offset + 1
    below = probs[:max(lo_cut, 0)].sum()
    above = probs[max(hi_cut, 0):].sum()
    body = probs[max(lo_cut, 0):max(hi_cut, 0)]
    out = np.zeros(jb - ja + 1)
    start = max(offset - ja, 0)
    out[start:start + len(body)] = body
    if pessimistic:
        out[0] += below          # moved up to the window's bottom
        return out, above        # the top goes to +∞
    out[-1] += above             # moved down to the window's top
    return out, 0.0              # the bottom is dropped


def _direct(items, ja, jb, pessimistic):
    """Exact repeated squaring with direct convolution (small supports only).

    Each convolution of non-negative arrays is accurate to (length + 2)·u
    relative in every bin; the accumulated factor is applied outwards."""
    acc, acc_off, fudge = np.array([1.0]), 0, 1.0
    for g, k in items:
        base, base_off = g.probs, g.offset
        while k:
            if k & 1:
                fudge *= 1.0 + (min(len(acc), len(base)) + 2) * _U
                acc, acc_off = np.convolve(acc, base), acc_off + base_off
            k >>= 1
            if k:
                fudge *= 1.0 + (len(base) + 2) * _U
                base, base_off = np.convolve(base, base), 2 * base_off
    probs, to_inf = _truncate(acc, acc_off, ja, jb, pessimistic)
    scale = fudge if pessimistic else 1.0 / fudge
    return probs * scale, to_inf * scale


def _power(z, k):
    """z**k elementwise by binary powering. Each complex product is within
    √5·u/2 of itself, and the rounding of a product that ends up raised to the
    m-th power in z^k counts m times: the squarings count ⌊k/2^j⌋ (j ≥ 1) and
    the multiplications once, k − 1 in all, so z^k (and its product into the
    other grids' powers) errs by under (1 + √5u/2)^k − 1 ≤ 4ku. (NumPy's z ** k
    is cexp(k·clog z) for k ≥ 100: its phase error, ~3.6k·u where arg z ≈ π,
    rests on libm's clog and leaves that allowance little margin; it is also
    several times slower than a few dozen products.)"""
    if not k:
        return np.ones_like(z)
    out, base = None, z
    while True:
        if k & 1:
            out = base.copy() if out is None else np.multiply(out, base, out=out)
        k >>= 1
        if not k:
            return out
        base = base * base


def _fft(items, ja, n, tilt=0.0):
    """Circular convolution of length ≥ n by real FFTs: (bin values, bin error
    bound), and with a tilt Σ k_i log N_i of its normalisers.

    A frequency whose bound Π(|ẑ_i| + η)^{k_i} has fallen below e^{−745}
    (where exp underflows) is dead: its coefficient is set to 0 (an error
    below that bound, kept in the noise bound) and later grids skip it.
    The composed spectrum of a grid taken many times is alive at a few hundred
    frequencies out of ~10⁶: everything after the first magnitudes runs on
    the live ones only. With a tilt λ the inputs are p_j e^{λ ε_j} normalised
    to sum 1 (N_i their sum before): the output is untilted by ``_tilted``."""
    size = sfft.next_fast_len(n, real=True)
    eta = 5.0 * _U * math.ceil(math.log2(size) + 1)
    total_k = sum(k for _, k in items)
    origin = sum(k * g.offset for g, k in items)
    nfreq = size // 2 + 1
    live = None                           # the live frequencies (ascending); before the first grid: all
    coef = log_bound = log_max = None     # at the live ones: Π ẑ_i^{k_i}, Σ k_i log(|ẑ_i| + η), max_i log(|ẑ_i| + η)
    log_scale = 0.0                       # Σ k_i log(normaliser_i) of the tilt
    batch = max(1, (1 << 22) // size)     # transform a few grids at once, ≤ 32 MB
    for start in range(0, len(items), batch):
        chunk = items[start:start + batch]
        stack = np.zeros((len(chunk), size))
        for row, (g, k) in enumerate(chunk):
            if tilt:
                with np.errstate(divide="ignore"):
                    w = np.log(g.probs) + tilt * g.losses
                top = w.max()
                x = np.exp(w - top)
                total = x.sum()
                x = x / total
                log_scale += k * (top + math.log(total))
            else:
                x = g.probs
            if len(x) > size:  # longer than the transform: fold it (aliasing, as above)
                x = np.bincount(np.arange(len(x)) % size, x, minlength=size)
            stack[row, :len(x)] = x
        spectra = sfft.rfft(stack, axis=1, workers=-1)
        del stack
        for z, (_, k) in zip(spectra, chunk):
            if live is None:
                # the first grid: k·log(|ẑ| + η) < −745 ⟺ |ẑ| + η < e^{−745/k}, compared without logs.
                # |ẑ| and the threshold are each within 2u of themselves, so a frequency cut here has
                # (|ẑ| + η)^k < e^{−745 + 3ku}, below 2^{−1074} = e^{−744.4} for any k < 10^{14}
                mag = np.abs(z)
                live = np.flatnonzero(mag >= (math.exp(-745.0 / k) if k else 0.0) - eta)
                z, mag = z[live], mag[live]
                log_bound, log_max = np.zeros(len(live)), np.full(len(live), -np.inf)
            else:
                z = z[live]
                mag = np.abs(z)
            log_mag = np.log(np.minimum(mag + eta, 1.0 + eta))
            log_bound += k * log_mag
            np.maximum(log_max, log_mag, out=log_max)
            keep = log_bound >= -745.0  # the others are dying now: not worth powering
            if not keep.all():
                live, z, log_bound, log_max = live[keep], z[keep], log_bound[keep], log_max[keep]
                coef = None if coef is None else coef[keep]
            with np.errstate(under="ignore"):
                coef = _power(z, k) if coef is None else np.multiply(coef, _power(z, k), out=coef)
    # error of each product coefficient, then of the inverse transform:
    # Σ_ω w_ω (coef_err + η|ŷ| + dead) / size, w = 2 but at 0 and (even size) Nyquist. A dead
    # frequency's coefficient is 0 and its exact one below 2^{−1074} (later grids multiply it by
    # at most their masses, ≤ 1); the live ones' terms are summed with an upward pad (m terms,
    # relative rounding < m·u), and the sum, its division and a possible underflow are padded too
    terms = eta * np.abs(coef)
    terms += total_k * (eta + 4 * _U) * np.exp(log_bound - log_max)
    lost = coef == 0                                         # underflowed: their bound
    terms[lost] += np.exp(np.minimum(log_bound[lost], 0.0))
    terms[(live > 0) & ((live < nfreq - 1) | (size % 2 == 1))] *= 2.0
    dead_bound = 2.0 * (nfreq - len(live)) * 2.0 ** -1074
    live_sum = float(terms.sum()) * (1.0 + (len(terms) + 4) * _U)
    bin_err = (live_sum + dead_bound) / size * (1.0 + 4 * _U) + 2.0 ** -1074
    spec = np.zeros(nfreq, dtype=complex)
    spec[live] = coef
    del terms, log_bound, log_max, coef
    out = sfft.irfft(spec, size, workers=-1)
    del spec
    start = (ja - origin) % size  # the window's first bin in the circular result
    out = out[start:start + n] if start + n <= size else np.concatenate((out[start:], out[:start + n - size]))
    return (out, bin_err, log_scale) if tilt else (out, bin_err)
