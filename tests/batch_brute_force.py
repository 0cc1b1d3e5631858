"""Brute force over concrete datasets for the batch schemes' lower ends (issue 29 review).

Base: randomized response (keep probability p) of a binary query of the batch. Records
are bits (or, for sampling with replacement, values in {0, 1, 2}); the query is
[the batch's count vector ∈ S] for every non-constant S (every symmetric binary query).
The scheme's output law is enumerated exactly (floats: sums of ≤ a few thousand
products of probabilities, relative error ≲ 1e-13) on neighbouring datasets of the
relation the mechanism declares — add/remove: D' = D ∪ {x}, with n counting D' where the
scheme counts records; replace-one: x ↔ y — and δ(ε) is maximised over the datasets and
over a query per step (``_best``; the adversary's fixed choices). That maximum is a lower
bound on the mechanism's δ(ε) (a sub-family of its neighbours and queries), and it holds
the instances the schemes' witnesses name (x = 1 and the others 0 with S ∋ 1, and
x's or y's indicator): a certified lower end must not exceed the mechanism's δ, and here
it should meet this maximum; the default upper bound must be at least it.
"""
import itertools
import math

import numpy as np


def _rr(values_law, p):
    """RR's output law on {0, 1}^t (bit i the i-th step's) from the law of the t query
    values ({pattern: probability})."""
    t = len(next(iter(values_law)))
    out = np.zeros(2 ** t)
    for pattern, w in values_law.items():
        for o in range(2 ** t):
            out[o] += w * math.prod(p if ((o >> i) & 1) == pattern[i] else 1 - p for i in range(t))
    return out


def _queries(m):
    """Every S ⊆ {0, …, m} but the empty and the full one (a constant query)."""
    for mask in range(1, 2 ** (m + 1) - 1):
        yield frozenset(j for j in range(m + 1) if (mask >> j) & 1)


def query_rr(ones_law, chosen, p):
    """RR's output law on {0, 1} of [ones ∈ chosen], ``ones_law`` the law of the batch's ones."""
    f = sum(ones_law[j] for j in chosen if j < len(ones_law))
    return _rr({(1,): f, (0,): 1 - f}, p)


def hockey(p_law, q_law, eps):
    """Σ (p − e^ε q)_+."""
    return float(np.sum(np.maximum(p_law - math.exp(eps) * q_law, 0.0)))


def _best(pairs, eps, steps):
    """(δ(M(D) ‖ M(D')), δ(M(D') ‖ M(D))) maximised over a query per step, ``pairs`` the
    (law on D, law on D') of each query on one pair of datasets (D holding x)."""
    best = [0.0, 0.0]
    for combo in itertools.combinations_with_replacement(range(len(pairs)), steps):
        a, b = np.ones(1), np.ones(1)
        for i in combo:
            a, b = np.outer(a, pairs[i][0]).ravel(), np.outer(b, pairs[i][1]).ravel()
        best = [max(best[0], hockey(a, b, eps)), max(best[1], hockey(b, a, eps))]
    return best


def _merge(best, found):
    return [max(x, y) for x, y in zip(best, found)]


def allocation_law(bits, t, k, chosen, p):
    """Output law of one epoch of k-of-t random allocation of the records ``bits``, each
    step RR of [the ones in its batch ∈ chosen]."""
    subsets = list(itertools.combinations(range(t), k))
    law = {}
    for choice in itertools.product(subsets, repeat=len(bits)):
        ones = [0] * t
        for bit, steps in zip(bits, choice):
            for i in steps:
                ones[i] += bit
        pattern = tuple(int(c in chosen) for c in ones)
        law[pattern] = law.get(pattern, 0.0) + len(subsets) ** -len(bits)
    return _rr(law, p)


def allocation_worst(n, t, k, p, eps, epochs=1):
    """(remove order, add order) δ(ε) of ``epochs`` epochs, maximised over D' = D ∪ {x}
    (n records, bits) and a query per epoch."""
    best = [0.0, 0.0]
    for others in itertools.combinations_with_replacement((0, 1), n - 1):
        for x in (0, 1):
            pairs = [(allocation_law(list(others) + [x], t, k, s, p), allocation_law(list(others), t, k, s, p))
                     for s in _queries(n)]
            best = _merge(best, _best(pairs, eps, epochs))
    return best


def truncated_ones(bits, q, batch):
    """Law of the ones in the batch: Poisson sampling at q, then a uniform ``batch``-subset
    where more entered."""
    n = len(bits)
    law = np.zeros(n + 1)
    for mask in range(2 ** n):
        members = [i for i in range(n) if (mask >> i) & 1]
        prob = q ** len(members) * (1 - q) ** (n - len(members))
        subs = list(itertools.combinations(members, min(batch, len(members))))
        for sub in subs:
            law[sum(bits[i] for i in sub)] += prob / len(subs)
    return law


def truncated_worst(n, q, batch, p, eps, steps=1):
    """(remove order, add order) δ(ε) of ``steps`` uses, maximised over D' = D ∪ {x} with
    n records (as ``TruncatedPoissonSampling`` counts them) and a query per step."""
    best = [0.0, 0.0]
    for others in itertools.combinations_with_replacement((0, 1), n - 1):
        for x in (0, 1):
            with_x, without = truncated_ones(list(others) + [x], q, batch), truncated_ones(list(others), q, batch)
            pairs = [(query_rr(with_x, s, p), query_rr(without, s, p)) for s in _queries(n)]
            best = _merge(best, _best(pairs, eps, steps))
    return best


def _count_vectors(size, values):
    return [c for c in itertools.product(range(size + 1), repeat=values) if sum(c) == size]


def with_replacement_worst(n, b, p, eps, steps=1, values=3):
    """(D first, D' first) δ(ε) of ``steps`` uses of b uniform draws with replacement from
    n records valued in {0, …, values − 1}, D ∋ x and D' ∋ y in its place (replace-one),
    maximised over the datasets and a query per step of the batch's count vector: the
    family holds x's and y's indicators, so both orders of subset sampling (b = 1) in
    one composition."""
    vecs = _count_vectors(b, values)
    best = [0.0, 0.0]
    for others in itertools.combinations_with_replacement(range(values), n - 1):
        for x, y in itertools.permutations(range(values), 2):
            laws = []
            for records in (list(others) + [x], list(others) + [y]):
                freq = [records.count(v) / n for v in range(values)]
                laws.append(np.array([math.factorial(b) / math.prod(math.factorial(c) for c in vec)
                                      * math.prod(f ** c for f, c in zip(freq, vec)) for vec in vecs]))
            pairs = []
            for mask in range(1, 2 ** len(vecs) - 1):
                sel = np.array([(mask >> i) & 1 for i in range(len(vecs))], dtype=bool)
                pairs.append(tuple(query_rr([1 - law[sel].sum(), law[sel].sum()], {1}, p) for law in laws))
            best = _merge(best, _best(pairs, eps, steps))
    return best
