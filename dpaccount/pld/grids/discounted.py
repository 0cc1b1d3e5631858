"""Discounted running sums y[i] = Σ_{k≤i} x[k]·e^{−(i−k)h} of non-negative floats
(the S̃ of ``grid.py``'s ``_sums``), vectorised, with a bound on their rounding error.

Blocks of B = ⌊L/h⌋ points (L = 32; at least 1, at most 2^16): within a block the
sum is a plain running sum of rescaled terms,

    y_loc[b, t] = e^{−th} · Σ_{t' ≤ t} x[bB + t']·e^{t'h},

where e^{t'h} ≤ e^L keeps every term finite (x ≤ 2^{1000}) and no term cancels
another. The sum carried out of block b, E_b = y_loc[b, B−1] + e^{−Bh}·E_{b−1},
is a scan with one discount R = e^{−Bh}, done by doubling (Hillis & Steele 1986):
after the pass of offset s, E_b holds the terms of the 2s blocks up to b; the pass
adds R^s·E_{b−s}, with R^s = e^{−sBh} formed directly. The passes stop once
e^{−sBh} underflows to 0 (sBh > 745; Bh ≥ L/2 or B = 2^16, so at most 7 passes, or
⌈log₂ n_b⌉). Then y[b, t] = y_loc[b, t] + e^{−(t+1)h}·E_{b−1}.

Rounding (u = 2^{−52}, roundings of u/2, numpy's exp within 4 ulp): every term
x[k]·e^{−(i−k)h} of y[i] reaches y[i] through non-negative operations only, so
each y[i] is within η·y[i] of itself, with η the first-order count of one term's
path: the exponents a of its factors e^{a} (a = t'h, −th, −sBh, −(t+1)h) are each
rounded once, and their |a| add up to at most (i−k)h + 2L ≤ nh + 2L, so they
err by e^{±(nh/2 + L)u}; each factor's exp adds 4u and its product u/2 (at most
3 + P factors, P passes); the block's running sum (B − 1)·u/2, each pass's and
the carry's addition u/2:

    η₁ = (nh/2 + L + (B − 1)/2 + 5P + 15)·u,    η = η₁ + η₁²  (for η₁ ≤ 1/2),

the second term covering the products of (1 ± u/2)-factors. Underflow: a value
below 2^{−1022} errs absolutely instead: a product by at most 2^{−1075} (sums of
subnormals are exact), and every factor after the first (e^{t'h}, on x itself) is
at most 1; at most n + 3n_b + 2 ≤ 4n + 2 products reach y[i] (the x·e^{t'h}, the
block ends', the scan's, y's own). The terms a stopped scan leaves out, those of
k at least sB points back, weigh e^{−sBh} < 2^{−1074} each: under n·2^{−1074} for
x ≤ 1 a point (masses). ``absolute`` = (3n + 1)·2^{−1074} bounds both.
"""
import functools
import math

import numpy as np

from ...numerics import ULP_OF_ONE as _U

_L = 32.0  # a block spans at most e^{L} of discount: its rescaled terms stay finite
_TINY = 2.0 ** -1074


def discounted_sums(x, step, count=None):
    """(y, η, absolute): y[i] = Σ_{k≤i} x[k]·e^{−(i−k)·step} for a 1-d array ``x`` of
    non-negative floats (each ≤ 1), with |ŷ[i] − y[i]| ≤ η·y[i] + absolute (module
    docstring), η and absolute stated for ``count`` ≥ len(x) points (default len(x)).
    Each y[i] is the same float whatever points follow x[i] (the blocks start at x[0])."""
    x = np.asarray(x, dtype=float)
    scan = DiscountedScan(step, len(x) if count is None else count)
    return (scan.extend(x),) + scan.bound


class DiscountedScan:
    """``discounted_sums`` of x fed in consecutive pieces (``extend``): each piece's y are
    the floats ``discounted_sums`` of all the points so far gives there. It keeps the
    running sum of the block begun (before its discount e^{−th}) and the sums out of the
    blocks done (y_loc at their last point); the doubling scan runs again over those ends,
    which changes none of the E_b already formed (a pass of offset s leaves blocks < s be)."""

    def __init__(self, step: float, count: int):
        self.step, self.count = step, count
        self._block = _block(step)
        self._reach = min(self._block, 1 << max(count - 1, 0).bit_length())  # factors used: t < count
        self._fed = 0
        self._ends: list = []   # y_loc at the last point of each block done
        self._running = 0.0     # Σ x[bB + t']·e^{t'h} over the points fed of the block begun

    @property
    def bound(self):
        """(η, absolute) of the module docstring for ``count`` points."""
        return _bound(self.count, self.step, self._block)

    def extend(self, x, out=None):
        """y at the next len(x) points (x non-negative floats, each ≤ 1), written into ``out``
        (a 1-d array of len(x), any stride) where given. Worked on where they go: the
        rest of the block begun, the whole blocks after it (as rows of one 2-d view) and
        the block begun last, each as one piece."""
        x = np.asarray(x, dtype=float)
        n, block = len(x), self._block
        out = np.empty(n) if out is None else out
        if not n:
            return out
        t0, b0 = self._fed % block, self._fed // block  # the first point's place: block b0, t0 in it
        up, down, into = _factors(self.step, self._reach)
        head = min(n, block - t0) if t0 else 0        # the rest of the block begun
        whole = (n - head) // block                    # whole blocks
        cuts = [(0, head, t0)] if head else []        # (from, to, place in its block) of each piece
        cuts += [(head, head + whole * block, 0)] if whole else []
        cuts += [(head + whole * block, n, 0)] if head + whole * block < n else []
        pieces = []
        for a, b, t in cuts:
            rows = (b - a) // block if (b - a) % block == 0 and t == 0 else 1
            width = (b - a) // rows
            piece = out[a:b].reshape(rows, width)
            np.multiply(x[a:b].reshape(rows, width), up[t:t + width], out=piece)
            if t:  # the block begun goes on from its running sum (r + x·e^{th}, as a sum from r)
                piece[0, 0] += self._running
            np.cumsum(piece, axis=1, out=piece)
            complete = t + width == block
            self._running = 0.0 if complete else float(piece[-1, -1])
            piece *= down[t:t + width]
            if complete:
                self._ends.extend(piece[:, -1].tolist())
            pieces.append((piece, t, width))
        first = b0
        if b0 + -(-(t0 + n) // block) > 1:
            carry = self._scan()  # E_b of every block done
            for piece, t, width in pieces:  # the rows of blocks b ≥ 1 get E_{b−1}·e^{−(t+1)h}
                rows = len(piece)
                if first + rows > 1:
                    skip = 0 if first else 1
                    piece[skip:] += carry[first + skip - 1:first + rows - 1, None] * into[None, t:t + width]
                first += rows
        self._fed += n
        return out

    def _scan(self):
        """E_b = y_loc[b, B−1] + e^{−Bh}·E_{b−1} of the blocks done, by doubling (module docstring)."""
        carry, block = np.array(self._ends), self._block
        s = 1
        while s < len(carry):
            f = math.exp(-(s * block) * self.step)
            if f == 0.0:
                break
            carry[s:] = carry[s:] + f * carry[:-s]
            s *= 2
        return carry


def _block(step):
    """B = ⌊L/h⌋, at least 1, at most 2^16 (where h is tiny, more blocks and passes instead)."""
    return int(min(1 << 16, max(1.0, math.floor(_L / step))))


@functools.lru_cache(maxsize=8)
def _factors(step, reach):
    """e^{th}, e^{−th} and e^{−(t+1)h} for t < ``reach`` (≤ B), each exponent rounded once (counted
    in η); computed once a step (and reach: a grid of fewer points than B uses fewer), the same
    floats at every t whatever the reach, so a point's factors do not depend on how many points
    a call has."""
    t = np.arange(reach + 1) * step
    up, falls = np.exp(t[:-1]), np.exp(-t)  # e^{−(t+1)h} is e^{−th} one point on: one exp for both
    up.setflags(write=False)
    falls.setflags(write=False)
    return up, falls[:-1], falls[1:]


def _bound(count, step, block):
    """(η, absolute) of the module docstring for sums of ``count`` points."""
    nb, passes, s = -(-count // block), 0, 1
    while s < nb and math.exp(-(s * block) * step) > 0.0:
        passes, s = passes + 1, 2 * s
    eta = (count * step / 2 + _L + (block - 1) / 2 + 5 * passes + 15) * _U
    return eta + eta * eta, (3 * count + 1) * _TINY
