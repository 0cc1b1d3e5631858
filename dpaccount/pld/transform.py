"""The transforms of a composition: exact direct convolution, and FFT with
a rigorous per-bin bound of its rounding (``compose.py`` uses them).

The composition of grids taken k_i times is the inverse transform of
Π ẑ_i^{k_i}, ẑ_i the real FFT of grid i. The transforms are accurate to
η = c·u·log₂n in each coefficient (inputs sum to ≤ 1); the power/product of
K = Σ k_i spectra then errs by at most K·(η + 4u)·M_ω^{K−1},
M_ω = max_i |ẑ_{i,ω}| + η, and the inverse transform adds η·mean|ŷ|; the
resulting per-bin bound B holds for every bin. Small problems are convolved
directly instead (relative error ≤ n·u per bin).
"""
import math

import numpy as np
from scipy import fft as sfft

_U = np.finfo(float).eps


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


def fft(items, ja, n, tilt=0.0):
    """Circular convolution of length ≥ n by real FFTs: (bin values, bin error
    bound), and with a tilt Σ k_i log N_i of its normalisers.

    A frequency whose bound Π(|ẑ_i| + η)^{k_i} has fallen below e^{−745}
    (where exp underflows) is dead: its coefficient is set to 0 (an error
    below that bound, kept in the noise bound) and later grids skip it.
    The composed spectrum of a grid taken many times is alive at a few hundred
    frequencies out of ~10⁶: everything after the first magnitudes runs on
    the live ones only. With a tilt λ the inputs are p_j e^{λ ε_j} normalised
    to sum 1 (N_i their sum before): the output is untilted by ``compose._tilted``."""
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
                coef = power(z, k) if coef is None else np.multiply(coef, power(z, k), out=coef)
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
