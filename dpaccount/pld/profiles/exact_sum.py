"""Exact δ(ε) and ε(δ) of small compositions of finite pairs, by enumeration.

A direction whose pairs are all finite (``DiscretePair``: randomized
response, pure/approximate DP, discrete noise, user pairs; and Poisson or
subset sampling of those), except for at most one *kernel* — a single other
pair, or any number of Gaussian pairs (one Gaussian, μ² added) — has the
privacy-loss law of finitely many atoms (ℓ_j, p_j), P(L = ∞) = p_∞, convolved
with the kernel K. Then, exactly (the hockey-stick identity of a product),

    δ(ε) = p_∞ + Σ_j p_j · H_K(ε − ℓ_j),

H_K the kernel's curve at every real argument (``DominatingPair.delta``), or
(1 − e^x)_+ without a kernel. The k uses of an m-outcome pair are its
C(k+m−1, m−1) count vectors (multinomial masses), different pairs multiply:
where that stays within ``BUDGET`` atoms (``KERNEL_BUDGET`` with a kernel)
this is cheaper than a grid and exact, also where a grid is first order
in its step: δ(ε) just below an atom of the composed support (the top of
a finite support, an off-grid atom of a mixture).

Rounding (every answer is certified): each atom's loss is a float sum of
float losses, each of those off by at most τ (its logs' rounding), so the
composed loss is known within τ_j = Σ n_i τ_i + (m+2)u Σ n_i|ℓ_i|; its mass
exp(Σ n_i log p_i + log multinomial) within a relative 8u(Σ n_i|log p_i| +
|log multinomial| + 2). The upper bound shifts every loss up by τ_j and
every mass up, the kernel's curve rounded up; the lower bound the other way
round; the non-negative sums are padded by (n + 8)u of themselves. ε(δ) is
bisected on these bounds: δ_upper(ε_hi) ≤ δ certifies ε(δ) ≤ ε_hi whatever
the rounding of the curve in between, δ_lower(ε_lo) > δ that ε(δ) > ε_lo.
"""
import itertools
import math

import numpy as np

from ...lazy import lazy
from ..pairs.discrete_pair import DiscretePair

from ..pairs.base import GaussianPair
from ..pairs.poisson_sampling import PoissonAddPair, PoissonRemovePair
from ..pairs.subset_sampling import SubsetSampledPair
from ...numerics import ULP_OF_ONE as _U

special = lazy("scipy.special")
mp = lazy("mpmath")  # composed_p_inf only

BUDGET = 1 << 16         # composed atoms of an all-finite direction (each δ(ε) sums over them)
KERNEL_BUDGET = 1 << 10  # with a kernel (whose curve costs more per atom)
_BISECT = 64


def _tau(loss, log_p, log_q):
    """Rounding of a computed loss log p − log q: a few ulp of each log and of the difference."""
    return 4 * _U * (np.abs(log_p) + np.abs(log_q)) + 8 * _U * np.abs(loss)


def finite_atoms(pair):
    """(loss, P-mass, loss rounding τ, relative mass rounding, p_∞) of a finite pair
    (atoms of P-mass > 0 only), or None where the pair is not one of the finite kinds."""
    if isinstance(pair, DiscretePair):
        loss, p, _ = pair.atoms
        log_q = pair._sorted_log_q  # Q-masses may underflow where their logs do not
        # a P-mass that underflowed (< 2^-1074 each) is dropped, and counted at +∞ by the upper bound
        keep = p > 0
        dropped = 5e-324 * np.count_nonzero(~keep)
        loss, p, log_q = loss[keep], p[keep], log_q[keep]
        # a mass is exp of its log: 4 ulp of itself, and the given log's own error (the pair's
        # ``log_err``: the callers' libm, a binomial's lgamma sums), which is in the pair's τ too
        return (loss, p, pair._tau[keep], 4 * _U + pair._err_p[keep], (pair.p_inf + dropped, pair._p_inf_low))
    if isinstance(pair, (PoissonRemovePair, PoissonAddPair)) and pair.q < 1.0:
        base = pair.base
        if not isinstance(base, DiscretePair):
            return None
        loss, p, q = base.atoms
        rate = pair.q
        # the base's mass at ±∞ lands at a finite loss ∓log(1 − q) as P- and Q-mass in a fixed
        # ratio (its error cancels in the loss), m computed from the base's logs: it errs by
        # the base's ``end_errors()`` (its logs' ``log_err``), relative e/m, both ways
        (p_low_b, p_high_b), _ = base.end_bounds()
        e_p, e_q = base.end_errors()
        if isinstance(pair, PoissonRemovePair):
            a, b, p_inf = (1 - rate) * q + rate * p, q, rate * p_high_b
            p_low = rate * p_low_b * (1 - 4 * _U)  # (the product's rounding, down)
            ends = (((1 - rate) * base.q_ninf, base.q_ninf, e_q / base.q_ninf),) if base.q_ninf > 0 else ()
        else:
            a, b, p_inf = p, (1 - rate) * p + rate * q, 0.0
            p_low = 0.0
            ends = ((base.p_inf, (1 - rate) * base.p_inf, e_p / base.p_inf),) if base.p_inf > 0 else ()
        if not np.all(p > 0):
            return None  # a base P-mass that underflowed: its share is not at +∞ here (the grids cope)
        for ea, eb, _ in ends:  # the base's atom at ±∞ lands at ∓log(1 − q)
            a, b = np.append(a, ea), np.append(b, eb)
        keep = a > 0
        a, b = a[keep], b[keep]
        if not np.all(b > 0):
            return None  # a Q-mass that underflowed (the grids handle it)
        la, lb = np.log(a), np.log(b)
        # a mixture's masses: a few ulp of themselves (two products and a sum on exp'd logs)
        # and the base's given logs' errors (``log_err``), so their logs are off by as much
        # absolute: 16u and both errors more in the loss
        given = np.max(np.vstack((base._err_p, base._err_q)), axis=0) if len(p) else np.zeros(0)
        given = np.append(given, [rel + 8 * _U for _, _, rel in ends])[keep]  # the end mass's error, relative
        return (la - lb, a, _tau(la - lb, la, lb) + 16 * _U + 2 * given, 16 * _U + given,
                (p_inf, p_low))
    if isinstance(pair, SubsetSampledPair):
        inner = finite_atoms(pair._a)
        if inner is None:
            return None
        loss, p, tau, rel, p_inf = inner
        pos = loss - tau > 0  # surely positive: mirrored; the rest sits in the zero atom
        if np.any((loss + tau > 0) & ~pos):
            return None  # an atom within rounding of 0: which side it is on is unknown
        # Q_A of the positive atoms is the mirrored P-mass: p e^{−ℓ}, off by τ (the loss) and
        # the exp's and product's ulps, relative, on top of p's own rounding
        mirrored = p[pos] * np.exp(-loss[pos])
        # the atom at 0: rounded up by the pair (``zero_mass``), the exact one within its error
        # (the ends of A among it: ``end_bounds``), relative, so that the lower bound takes it down
        z = pair.zero_mass
        z_rel = pair.zero_mass_error / z + 8 * _U if z > 0 else 8 * _U
        return (np.concatenate((loss[pos], -loss[pos], [0.0])), np.concatenate((p[pos], mirrored, [z])),
                np.concatenate((tau[pos], tau[pos], [0.0])),
                np.concatenate((rel[pos], rel[pos] + 2 * tau[pos] + 8 * _U, [z_rel])), p_inf)
    return None


def _uses(atoms, k, budget):
    """The k-fold composition of one finite pair: (loss, log mass, τ, relative mass error) of
    every count vector."""
    loss, p, tau, rel, _ = atoms
    m = len(loss)
    if m == 0 or math.comb(k + m - 1, m - 1) > budget:
        return None  # (no finite atom at all: the grids handle a pair that is all mass at ±∞)
    if k == 1:  # the atoms themselves: the count vectors below would be an m × m matrix
        log_p = np.log(p)
        return loss, log_p, tau + (m + 2) * _U * np.abs(loss), 8 * _U * (np.abs(log_p) + 2.0) + rel
    # stars and bars: the m − 1 bars among k + m − 1 slots give the counts n_1 … n_m
    bars = np.array(list(itertools.combinations(range(k + m - 1), m - 1)), dtype=np.int64).reshape(-1, m - 1) \
        if m > 1 else np.zeros((1, 0), dtype=np.int64)
    edges = np.concatenate((np.full((len(bars), 1), -1), bars, np.full((len(bars), 1), k + m - 1)), axis=1)
    n = np.diff(edges, axis=1) - 1
    log_p = np.log(p)
    log_multi = special.gammaln(k + 1) - special.gammaln(n + 1).sum(axis=1)
    log_mass = n @ log_p + log_multi
    # the exponent's float sum and the gammaln calls: a few ulp of the terms' magnitudes
    mass_err = 8 * _U * (n @ np.abs(log_p) + np.abs(log_multi) + 2.0) + n @ rel
    composed = n @ loss
    err = n @ tau + (m + 2) * _U * (n @ np.abs(loss))
    return composed, log_mass, err, mass_err


def _product(a, b):
    return (np.add.outer(a[0], b[0]).ravel(), np.add.outer(a[1], b[1]).ravel(),
            np.add.outer(a[2], b[2]).ravel(), np.add.outer(a[3], b[3]).ravel())


class ExactDirection:
    """δ(ε) bounds of one direction from its atoms and kernel (module docstring)."""

    def __init__(self, loss, log_mass, err, rel, p_inf, kernel, p_inf_above_low=False):
        self.kernel, self.p_inf = kernel, p_inf
        # P(L = ∞) > p_inf[1] exactly (not only ≥): a δ equal to that float is below P(L = ∞)
        self.p_inf_above_low = p_inf_above_low
        self.pad = (len(loss) + 8) * _U
        self._sides = {}
        for upper in (True, False):
            shifted = loss + err if upper else loss - err  # every loss moved its safe way
            log_p = log_mass + (np.log1p(2 * rel) if upper else np.log1p(-np.minimum(2 * rel, 0.5)))
            self._sides[upper] = (shifted, np.exp(log_p))

    def delta(self, eps, upper):
        """δ(ε) rounded up (``upper``) or down, for an array of ε: each element on its own
        (the same float operations whatever the array), as a sum of non-negative terms
        p_j·K(ε − ℓ_j), K(x) = −expm1(x) for x < 0 without a kernel (no cancellation, no
        overflow of e^ε); the sum is padded by (n + 8)u of itself."""
        eps = np.asarray(eps, dtype=float)
        loss, p = self._sides[upper]
        p_inf = self.p_inf[0] if upper else self.p_inf[1]
        core = np.empty(len(eps))
        for i, e in enumerate(eps):
            x = e - loss
            if self.kernel is None:
                k = -np.expm1(np.minimum(x, 0.0))
                k = k * (1 + 4 * _U) if upper else k * (1 - 4 * _U)  # expm1's own rounding
            else:
                k = np.asarray(self.kernel.delta(x, upper), dtype=float)
            core[i] = np.sum(p * k)
        out = core * (1 + self.pad) + p_inf if upper else core * (1 - self.pad) + p_inf
        return np.minimum(out, 1.0)


def exact_direction(parts):
    """``ExactDirection`` of a direction's (pair, count) parts, or None (no finite form / too many atoms)."""
    gauss, kernel, finite = 0.0, None, []
    for pair, k in parts:
        if pair.gaussian_mu is not None:
            gauss += k * pair.gaussian_mu ** 2
            continue
        atoms = finite_atoms(pair)
        if atoms is not None:
            finite.append((atoms, k))
        elif kernel is None and k == 1:
            kernel = pair
        else:
            return None
    if not finite:
        return None  # a kernel alone: the closed forms ("analytic") or the grids
    if gauss > 0:
        if kernel is not None:
            return None
        kernel = GaussianPair(math.sqrt(gauss))
    budget = BUDGET if kernel is None else KERNEL_BUDGET
    total = (np.zeros(1), np.zeros(1), np.zeros(1), np.zeros(1))
    for atoms, k in finite:
        used = _uses(atoms, k, budget)
        if used is None or len(total[0]) * len(used[0]) > budget:
            return None
        total = _product(total, used)
    ends = [(atoms[4], k) for atoms, k in finite]
    (up, _), (low, strict) = composed_p_inf(ends, True), composed_p_inf(ends, False)
    return ExactDirection(*total, (up, low), kernel, strict)


_PREC = 320  # bits of the exact P(L = ∞) below


def composed_p_inf(ends, upper):
    """P(L = ∞) = 1 − Π_i (1 − p_∞,i)^{k_i} of [((p_∞ rounded up, rounded down), k_i)], from
    each pair's end rounded its way (``upper``: up), as a float within one of the exact value on
    that side (the largest float below it, or the smallest above, or the exact value's own
    float moved by the pad); and whether that float is strictly on its side (a lower bound
    equal to δ then still certifies P(L = ∞) > δ).

    In floats (log1p, the sum, expm1) it would err by some ulps, and δ(ε) jumps to P(L = ∞)
    at the largest finite loss: ε(δ) there is finite exactly when P(L = ∞) < δ, which a
    δ within those ulps (a user's δ = 0.28 for 1 − 0.9·0.8) cannot tell. At ``_PREC`` bits
    (mpmath, rounding to nearest) each operation errs by at most 2^-320 of its result: the
    ≤ 2·bits(k) + 2 of a power by squaring, the products and the differences, all on values
    in [0, 1], so the value is within (ops + 1)·2^-319 of the exact one; that pad, and then
    rounding to the float on the safe side, make it a bound."""
    side = [(end[0 if upper else 1], k) for end, k in ends]
    if any(m >= 1.0 for m, _ in side):
        return 1.0, False
    if all(m == 0.0 or k == 0 for m, k in side):
        return 0.0, False  # exactly (the pad below would make it 1e-96)
    ops = sum(2 * int(k).bit_length() + 4 for _, k in ends) + 1
    with mp.workprec(_PREC):
        keep = mp.mpf(1)
        for m, k in side:
            keep *= (1 - mp.mpf(m)) ** int(k)
        pad = ops * mp.mpf(2) ** (1 - _PREC)
        value = 1 - keep + (pad if upper else -pad)
        out = float(value)  # to nearest, then one float further where that fell on the unsafe side
        if upper and mp.mpf(out) < value:
            out = float(np.nextafter(out, np.inf))
        if not upper and mp.mpf(out) > value:
            out = float(np.nextafter(out, -np.inf))
        strict = bool(mp.mpf(out) > value if upper else mp.mpf(out) < value)
    return min(max(out, 0.0), 1.0), strict


def exact_profile(pairs):
    """(remove, add) ``ExactDirection``s of a ``PairComposition``, or None where either has none."""
    out = tuple(exact_direction(pairs.direction(d)) for d in ("remove", "add"))
    return None if any(d is None for d in out) else out


def largest_loss_lower(pairs):
    """A certified lower bound on the pure ε (the largest loss) of a ``PairComposition``
    whose pairs are all finite (``finite_atoms``), however many atoms their composition
    has; None where a pair is not finite. +∞ where some P(L = ∞) is surely > 0.

    Every atom of P-mass > 0 is attained by its count vector (mass Π p^n > 0, however far
    below the float range), so in each direction ε(0) ≥ Σ k_i·max_j ℓ_ij exactly. Each
    computed loss is within τ of its exact one (less it, down); the k_i products and the
    n-term sum err by at most (n + 2)u of Σ|terms| (subtracted: down). Atoms whose P-mass
    underflowed are left out by ``finite_atoms``: a smaller maximum, still a lower bound."""
    best = 0.0
    for name in ("remove", "add"):
        terms = []
        for pair, k in pairs.direction(name):
            atoms = finite_atoms(pair)
            if atoms is None:
                return None
            loss, _, tau, _, (_, p_inf_low) = atoms
            if p_inf_low > 0:
                return math.inf
            if len(loss):
                terms.append(k * float(np.max(loss - tau)))
        total = math.fsum(terms) - (len(terms) + 2) * _U * math.fsum(abs(t) for t in terms)
        best = max(best, total)
    return best


def delta_bounds(directions, eps):
    """(lower, upper) of δ(ε): the larger direction's, each rounded its way."""
    eps = np.asarray(eps, dtype=float).ravel()
    eps = np.where(np.isnan(eps), np.inf, eps)
    upper = np.max([d.delta(eps, True) for d in directions], axis=0)
    lower = np.max([d.delta(eps, False) for d in directions], axis=0)
    return lower, upper


def epsilon_bounds(directions, delta):
    """(lower, upper) of ε(δ) (ε ≥ 0; +inf where δ is below P(L = ∞)), by bisection."""
    delta = np.asarray(delta, dtype=float).ravel()
    upper = _crossing(directions, delta, True)
    lower = _crossing(directions, delta, False)
    return np.minimum(lower, upper), upper


def _crossing(directions, target, upper):
    """upper: an ε with δ_upper(ε) ≤ target (the smallest found); lower: the largest ε found
    with δ_lower(ε) > target, 0 where δ_lower(0) ≤ target. Bisection on the float ε, all
    targets at once; +inf where no ε ≤ 2^20 is found (δ below P(L = ∞))."""
    curve = lambda e: np.max([d.delta(e, upper) for d in directions], axis=0)
    zero = curve(np.zeros(len(target))) <= target
    lo, hi = np.zeros(len(target)), np.ones(len(target))
    for _ in range(21):
        far = ~zero & (curve(hi) > target)
        if not far.any():
            break
        lo, hi = np.where(far, hi, lo), np.where(far, 2 * hi, hi)
    far = ~zero & (curve(hi) > target)
    for _ in range(_BISECT):
        mid = 0.5 * (lo + hi)
        above = curve(mid) > target
        lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
    out = hi if upper else lo
    out = np.where(far, np.inf if upper else lo, out)
    if not upper:  # δ ≥ P(L = ∞) everywhere: below its lower bound ε(δ) is +inf
        beyond = [(d.p_inf[1] > target) | ((d.p_inf[1] == target) & d.p_inf_above_low) for d in directions]
        out = np.where(np.any(beyond, axis=0), np.inf, out)
    return np.where(zero, 0.0, out)
