"""Exact output laws of dp_accounting's truncated Poisson-subsampled Gaussian on small datasets.

The event (dp_accounting 0.6, ``TruncatedSubsampledGaussianDpEvent``): each of the n
records enters with probability q; if more than B entered, a uniformly random B of them
are kept; the Gaussian mechanism of noise multiplier σ releases the batch's sum of
clipped contributions. Add/remove neighbours, n counting the larger dataset (x included).
Here the contributions are numbers in [−1, 1] (a 1-D sum, clip norm 1): a dataset is a
count vector over ``values``, and the batch sum's law is enumerated exactly — the sampled
counts are independent binomials, a batch cut to B is a multivariate hypergeometric draw
of them — as float sums of at most a few thousand non-negative terms. The release is then
the Gaussian mixture Σ_s p_s N(s, σ²) over the integer sums s.

δ(ε) of one release, P against Q: P(A) − e^ε Q(A) for A = {P > e^ε Q}, the crossings of
log P − log Q = ε found on a grid and refined (brentq), each Gaussian's mass of the
intervals from its distribution function. For any set A that is a lower bound on δ(ε), so
a crossing the grid missed can only lower the value: a lower bound either way, exact up
to float sums otherwise.

k releases (a composition on one dataset): the release post-processed to its cell on a
fine grid of y (exact masses), cells of equal rounded loss merged; the k-fold product of
that finite pair, its outcomes merged by rounded loss after each product. Every merge is
a function of the output, so by data processing the finite pair's δ is a lower bound on
the k releases' δ, and within ~the loss rounding of it.
"""
import itertools
import math

import numpy as np
from scipy import optimize, special, stats

VALUES = (-1, 0, 1)


def sum_law(counts, values, q, cap):
    """{s: P(batch sum = s)}: ``counts[i]`` records of value ``values[i]``, each sampled at
    rate q, the sample cut to a uniform ``cap``-subset when larger."""
    pmfs = [stats.binom.pmf(np.arange(m + 1), m, q) for m in counts]
    out = {}
    for k in itertools.product(*(range(m + 1) for m in counts)):
        pk = math.prod(pmf[ki] for pmf, ki in zip(pmfs, k))
        if sum(k) <= cap:
            s = sum(ki * u for ki, u in zip(k, values))
            out[s] = out.get(s, 0.0) + pk
            continue
        total = math.comb(sum(k), cap)
        for j in itertools.product(*(range(min(ki, cap) + 1) for ki in k)):
            if sum(j) == cap:
                s = sum(ji * u for ji, u in zip(j, values))
                out[s] = out.get(s, 0.0) + pk * math.prod(map(math.comb, k, j)) / total
    return out


def neighbour_laws(others, x, q, cap, values=VALUES):
    """(law with x, law without) of the batch sum: ``others`` a count vector over ``values``,
    x ∈ ``values`` the record the neighbours differ by."""
    with_x = list(others)
    with_x[values.index(x)] += 1
    return sum_law(with_x, values, q, cap), sum_law(others, values, q, cap)


def instances(n, values=VALUES):
    """Every count vector of the n − 1 other records over ``values`` (the law is symmetric in
    the records, and x = 1 stands for x = −1 by negating every value)."""
    for combo in itertools.combinations_with_replacement(range(len(values)), n - 1):
        yield [combo.count(i) for i in range(len(values))]


def _log_mixture(law, y, sigma):
    s = np.fromiter(law, float)
    p = np.fromiter(law.values(), float)
    return special.logsumexp(-((y[:, None] - s) ** 2) / (2 * sigma * sigma), b=p, axis=1)


def _mass(law, lo, hi, sigma):
    """Σ_s p_s P(lo < N(s, σ²) < hi), each term from the far side of its tail."""
    total = 0.0
    for s, p in law.items():
        a, b = (lo - s) / sigma, (hi - s) / sigma
        total += p * (special.ndtr(-a) - special.ndtr(-b) if a > 0 else special.ndtr(b) - special.ndtr(a))
    return total


def _span(laws, sigma):
    atoms = [s for law in laws for s in law]
    return min(atoms) - 15 * sigma, max(atoms) + 15 * sigma


def hockey(p_law, q_law, sigma, eps_list, points=4000):
    """[P(A) − e^ε Q(A)] for each ε, A the located region {P > e^ε Q} (module docstring)."""
    lo, hi = _span((p_law, q_law), sigma)
    y = np.linspace(lo, hi, points)
    loss = _log_mixture(p_law, y, sigma) - _log_mixture(q_law, y, sigma)
    at = lambda t: float(_log_mixture(p_law, np.array([t]), sigma)[0] - _log_mixture(q_law, np.array([t]), sigma)[0])
    out = []
    for eps in eps_list:
        above = loss > eps
        cuts = [optimize.brentq(lambda t: at(t) - eps, y[i], y[i + 1], xtol=1e-13)
                for i in np.flatnonzero(above[1:] != above[:-1])]
        ends = [-np.inf] + cuts + [np.inf]
        delta = sum(_mass(p_law, a, b, sigma) - math.exp(eps) * _mass(q_law, a, b, sigma)
                    for k, (a, b) in enumerate(zip(ends[:-1], ends[1:])) if (k % 2 == 0) == bool(above[0]))
        out.append(max(delta, 0.0))
    return np.array(out)


def worst_hockey(n, q, cap, sigma, eps_list, values=VALUES):
    """max over the instances (``instances``) and both orders of δ(ε), and the maximiser
    (counts, order) of each ε."""
    best, where = np.zeros(len(eps_list)), [None] * len(eps_list)
    for others in instances(n, values):
        laws = neighbour_laws(others, 1, q, cap, values)
        for order, (p, r) in enumerate((laws, laws[::-1])):
            d = hockey(p, r, sigma, eps_list)
            for i in np.flatnonzero(d > best):
                best[i], where[i] = d[i], (tuple(others), order)
    return best, where


def finite_pair(p_law, q_law, sigma, cell=0.05, rounding=1e-2):
    """(p, q, loss) of the release cut to cells of width ``cell``·σ (two tails beyond), cells
    of equal loss rounded to ``rounding`` merged: a post-processing (module docstring)."""
    lo, hi = _span((p_law, q_law), sigma)
    edges = np.concatenate(([-np.inf], np.arange(lo, hi, cell * sigma), [np.inf]))
    p = np.array([_mass(p_law, a, b, sigma) for a, b in zip(edges[:-1], edges[1:])])
    r = np.array([_mass(q_law, a, b, sigma) for a, b in zip(edges[:-1], edges[1:])])
    return _merged(p, r, rounding)


def _merged(p, r, rounding):
    live = (p > 0) & (r > 0)  # a Gaussian mixture's cells: both positive wherever either is
    p, r = p[live], r[live]
    _, group = np.unique(np.round(np.log(p / r) / rounding), return_inverse=True)
    p, r = np.bincount(group, p), np.bincount(group, r)
    return p, r


def composed_lower(p, r, steps, eps_list, rounding=1e-2):
    """δ(ε) of ``steps`` products of the finite pair (p, r), in both orders (a pair of
    arrays), merged by rounded loss after each product (module docstring): lower bounds."""
    pk, rk = p, r
    for _ in range(steps - 1):
        pk, rk = _merged(np.outer(pk, p).ravel(), np.outer(rk, r).ravel(), rounding)
    e = np.exp(np.asarray(eps_list, float))[:, None]
    return (np.maximum(pk - e * rk, 0.0).sum(axis=1), np.maximum(rk - e * pk, 0.0).sum(axis=1))
