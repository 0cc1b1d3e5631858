"""The transforms of a composition: exact direct convolution, and FFT with
a rigorous per-bin bound of its rounding (``compose.py`` uses them).

The composition of grids taken k_i times is the inverse transform of
Π ẑ_i^{k_i}, ẑ_i the real FFT of grid i. The transforms are accurate to
η = c·u·log₂n in each coefficient (inputs sum to ≤ 1); the power/product of
K = Σ k_i spectra then errs by at most K·(η + 4u)·M_ω^{K−1},
M_ω = max_i |ẑ_{i,ω}| + η, and the inverse transform adds η·mean|ŷ|; the
resulting per-bin bound B holds for every bin. Small problems are convolved
directly instead (relative error ≤ n·u per bin). A tilted transform also
carries the rounding of the tilting itself, a relative error that the
composition multiplies by K (``tilted_masses``); ``untilt`` moves every bin
outwards by it (~1e-9 of the bin for 10⁴ steps).
"""
import math

import numpy as np

from ... import fourier, progress
from ...numerics import ULP_OF_ONE as _U


def truncate(probs, offset, ja, jb, pessimistic):
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


def direct(items, ja, jb, pessimistic):
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
    probs, to_inf = truncate(acc, acc_off, ja, jb, pessimistic)
    scale = fudge if pessimistic else 1.0 / fudge
    return probs * scale, to_inf * scale


def power(z, k):
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


def tilted_masses(g, tilt, out):
    """Write grid g's masses tilted by λ, x_j = p_j e^{λε_j − c} (their sum ≤ 1), into
    ``out`` (at the grid's indices) and return (c, θ): each x_j is within a factor
    e^{±θ} of p_j e^{λε_j − c}, ε_j = (offset + j)·h exactly and c as returned.

    Rounding (u = 2^{−52}, libm within 4 ulp): log p_j (``PLDGrid._live_log``)
    within 4u·L, L = max|log p_j|; λ·fl(ε_j) within u·E, E = max|λε_j|; their
    sum w_j and w_j − t (t the largest w) u/2 of |w| ≤ L + E and of |w − t| each;
    exp 4u; the division by N' = N·(1 + (n + 2)u), N the rounded sum (so Σ x ≤ 1),
    u/2; c = t + log N' within 4u·|log N'| + u/2·|c|. In all, θ ≤
    u·(5L + 2E + |t| + 4|log N'| + |c| + 8). (A mass below 2^{−1022} is off by up
    to 5·2^{−1074} instead: summed over every point and count, far below the u·B
    that pads the noise bound B ≥ 1e-21.)"""
    lp, x = g._live_log
    if not len(lp):
        return 0.0, 0.0
    w = np.multiply(x, tilt)
    w += lp
    top = float(w.max())
    w -= top
    np.exp(w, out=w)
    total = float(w.sum()) * (1.0 + (len(w) + 2) * _U)
    if len(lp) == len(g.probs):
        np.divide(w, total, out=out[:len(w)])
    else:
        out[np.flatnonzero(g.probs > 0)] = w / total
    log_total = math.log(total)
    c = top + log_total
    big_l, big_e = max(-float(lp.min()), float(lp.max())), abs(tilt) * max(abs(float(x[0])), abs(float(x[-1])))
    return c, _U * (5 * big_l + 2 * big_e + abs(top) + 4 * abs(log_total) + abs(c) + 8)


@progress.stage("FFT composition")
def fft(items, ja, n, tilt=0.0):
    """Circular convolution of length ≥ n by real FFTs: (bin values, bin error
    bound, C, ρ). With a tilt λ the inputs are the tilted masses
    (``tilted_masses``) and C = Σ k_i c_i (its rounding included in ρ); ρ
    bounds the log of the relative error that the inputs' rounding causes in
    the composed masses, Π (1 ± θ_i)^{k_i}: e^{±ρ} ⊇ e^{±1.01 Σ k_i θ_i}
    (0 untilted, unless a grid longer than the transform is folded: its bins
    are sums of ⌈len/size⌉ terms, θ ≤ that·u/2).

    A frequency whose bound Π(|ẑ_i| + η)^{k_i} has fallen below e^{−745}
    (where exp underflows) is dead: its coefficient is set to 0 (an error
    below that bound, kept in the noise bound) and later grids skip it.
    The composed spectrum of a grid taken many times is alive at a few hundred
    frequencies out of ~10⁶: everything after the first magnitudes runs on
    the live ones only."""
    size = fourier.next_fast_len(n)
    eta = 5.0 * _U * math.ceil(math.log2(size) + 1)
    total_k = sum(k for _, k in items)
    origin = sum(k * g.offset for g, k in items)
    nfreq = size // 2 + 1
    live = None                           # the live frequencies (ascending); before the first grid: all
    coef = log_bound = log_max = None     # at the live ones: Π ẑ_i^{k_i}, Σ k_i log(|ẑ_i| + η), max_i log(|ẑ_i| + η)
    log_scale = log_pad = 0.0             # C, and ρ
    batch = max(1, (1 << 22) // size)     # transform a few grids at once, ≤ 32 MB
    progress.expect(-(-len(items) // batch) + 1, f"FFT composition of {total_k} grids ({size} points)")
    # one stack of rows and one of spectra for every batch (no fresh pages per batch); each row
    # is zeroed again where its grid was written
    stack = np.zeros((min(batch, len(items)), size))
    spectra = np.empty((len(stack), nfreq), dtype=complex)
    used = [0] * len(stack)
    for start in range(0, len(items), batch):
        chunk = items[start:start + batch]
        for row, (g, k) in enumerate(chunk):
            stack[row, :used[row]] = 0.0
            longer = len(g.probs) > size
            used[row] = size if longer else len(g.probs)
            x = np.zeros(len(g.probs)) if longer else stack[row]
            theta = 0.0
            if tilt:
                c, theta = tilted_masses(g, tilt, x)
                log_scale += k * c
                log_pad += _U * (len(items) + 1) * abs(k * c)  # C's running sum: u/2 of each term and sum
            else:
                x[:len(g.probs)] = g.probs
            if longer:  # longer than the transform: fold it (aliasing, as above)
                stack[row] = np.bincount(np.arange(len(x)) % size, x, minlength=size)
                theta += math.ceil(len(x) / size) * _U / 2
            log_pad += 1.01 * k * theta
        fourier.rfft(stack[:len(chunk)], axis=1, out=spectra[:len(chunk)])
        progress.advance()
        for z, (_, k) in zip(spectra, chunk):
            if live is None:
                # the first grid: k·log(|ẑ| + η) < −745 ⟺ |ẑ| + η < e^{−745/k}, compared without logs.
                # |ẑ| and the threshold are each within 5u of themselves, so a frequency cut here has
                # (|ẑ| + η)^k < e^{−745 + 11ku}, below 2^{−1074} = e^{−744.4} for any k < 10^{14}
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
                coef = power(z, k) if coef is None else np.multiply(coef, power(z, k), out=coef)
    del stack, spectra
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
    out = fourier.irfft(spec, size)
    del spec
    start = (ja - origin) % size  # the window's first bin in the circular result
    out = out[start:start + n] if start + n <= size else np.concatenate((out[start:], out[:start + n - size]))
    return out, bin_err, log_scale, log_pad


def untilt(values, bin_err, log_scale, log_pad, tilt, step, first, pessimistic, outside=0.0):
    """(probs, per-bin noise bounds) of a tilted transform's bins, values[j] at grid
    index s = first + j: p_s = p̃_s·exp(C − λh·s) (``fft``), bounded outwards.

    The true p_s lies within e^{±ρ} of (p̃_s ± noise)·e^{C − λhs}; the exponent as
    computed, fl(s·fl(−λh)) + fl(C ± shift), errs by u/2 of λhs twice, of itself
    and of C, exp by 4u and the two final products by u: shift = 1.01·(ρ + u·(R + |E|/2
    + |C|/2 + 5)), R = max|λhs|, E ≤ |C| + ρ + R, moves every bin outwards. Beyond
    e^{700} a bin is useless anyway: its noise bound (≥ 1e-21 tilted) makes it ≥ 1
    (pessimistic) or 0 (optimistic). Lower bounds also lose the tilted tails
    ``outside`` the window (of the exact law; ×e^ρ for the rounded one)."""
    n = len(values)
    reach = abs(tilt * step) * max(abs(first), abs(first + n - 1))
    shift = 1.01 * (log_pad + _U * (reach + (abs(log_scale) + log_pad + reach) / 2 + abs(log_scale) / 2 + 5))
    factor = np.arange(first, first + n, dtype=float)
    factor *= -tilt * step
    factor += log_scale + (shift if pessimistic else -shift)
    np.exp(np.minimum(factor, 700.0, out=factor), out=factor)
    # (tilted values ± their noise bound and, optimistic, the tilted tails) · factor: a new array
    # (a grid keeps it), the rest in place: these windows are the largest
    probs = np.add(values, bin_err if pessimistic else -(bin_err + outside * math.exp(log_pad)))
    probs *= factor
    return np.maximum(probs, 0.0, out=probs), np.multiply(factor, bin_err, out=factor)
