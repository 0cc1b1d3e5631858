"""Adversarial review of the batch schemes' certified lower ends "of the mechanism" (issue 29).

A ``Bounds`` with ``lower_of == "mechanism"`` claims some pair of neighbours of the
declared relation attains at least ``lower``. Checked against brute force over concrete
datasets (``batch_brute_force.py``: randomized response of a query of the batch, the
scheme's output law enumerated exactly, δ maximised over datasets and a query per step):
lower ≤ that maximum ≤ upper — the maximum is a lower bound on the mechanism's δ, so a
lower end above it is not yet a violation, but the witnesses' instances are in the
family, so here the lower end must *meet* it (to the grids' accuracy) and never exceed it
by more than the float sums' rounding (1e-9 relative). For the Gaussian copies witness
of sampling with replacement: the instance's δ(ε) in closed form (mpmath). Then
compositions (heterogeneous; an unattained part without a witness leaves no lower end),
pickle and spec round trips, and edge parameters where a scheme is another one exactly.
"""
import itertools
import json
import math
import pickle

import mpmath as mp
import numpy as np
import pytest

from batch_brute_force import (query_rr, allocation_law, allocation_worst, hockey, truncated_ones,
                               truncated_worst, with_replacement_worst)
from dpaccount import (AccuracyNotReached, Composition, GaussianMechanism, PoissonSampling,
                       RandomizedResponse, ToReplaceOne, specs)
from dpaccount.mechanisms.discrete import ApproxDPMechanism
from dpaccount.mechanisms.user_defined import DiscreteMechanism
from dpaccount.pld.pairs.composition import PairComposition
from dpaccount.pld.allocation.lower import SUPPORT
from dpaccount.pld.pairs.subset_sampling import SubsetSampledPair
from dpaccount.pld.profiles.attained import attained_compositions
from dpaccount.queries import intervals, route
from dpaccount.transformers.random_allocation import RandomAllocation
from dpaccount.transformers.subset_sampling import SubsetSampling
from dpaccount.transformers.truncated_poisson import TruncatedPoissonSampling
from dpaccount.transformers.with_replacement import SamplingWithReplacement

FLOAT = 1e-9   # the brute force's float sums (≲ 1e-13 relative) and the bounds' own rounding, with room
ACCURACY = 1e-2


def _bounds(m, eps, accuracy=ACCURACY):
    try:
        return m.get_approx_delta_bounds(eps, accuracy=accuracy)
    except AccuracyNotReached as err:  # (a tiny δ far below its upper end: still certified)
        return err.bounds


def _check(m, worst, eps, attained=True):
    """lower ≤ the brute-force maximum ≤ upper; the lower end meets it where ``attained``."""
    b = _bounds(m, eps)
    assert b.upper >= worst * (1 - FLOAT), ("under-report", m.name, eps, b, worst)
    if not attained:
        assert b.lower is None and b.lower_of is None and not b.certified, (m.name, eps, b)
        return
    assert b.lower_of == "mechanism" and b.certified, (m.name, eps, b)
    assert b.lower <= worst * (1 + FLOAT) + 1e-15, ("lower end above every dataset's", m.name, eps, b, worst)
    assert b.lower >= worst - 2 * ACCURACY * b.upper - 1e-12, ("witness misses its instance", m.name, eps, b, worst)


# ------------------------------------------------------------------ random allocation, k > 1


@pytest.mark.parametrize("n,t,k,epochs", [(3, 4, 2, 1), (2, 4, 3, 1), (2, 3, 2, 2)])
def test_allocation_lower_end_against_datasets(n, t, k, epochs):
    p = 0.8
    m = Composition()([RandomAllocation()(RandomizedResponse(p), t, selected=k)], [epochs])
    for eps in (0.0, 0.3, 0.9):
        _check(m, max(allocation_worst(n, t, k, p, eps, epochs)), eps)


def test_allocation_witness_each_direction_against_datasets():
    """Each direction's witness against its own order of the neighbours (a wrong add
    direction hides behind a larger remove one in the max)."""
    p, n, t, k = 0.8, 3, 4, 2
    (found,), _ = attained_compositions(RandomAllocation()(RandomizedResponse(p), t, selected=k).pairs)
    for eps in (0.3, 0.9):
        worst = allocation_worst(n, t, k, p, eps)
        for direction, order in zip(("remove", "add"), worst):
            got = sum(float(pair.delta(eps, upper=False)) for pair, _ in found.direction(direction)
                      if pair.pure_epsilon() > 0)  # the identical pairs add nothing
            assert order * (1 - 1e-6) <= got <= order * (1 + FLOAT), (direction, eps, got, order)


def _epoch_delta(p_law, q_law, t, k, eps):
    """max over both orders of δ(ε) of (E_I ⊗_i (P if i ∈ I else Q), Q^t), I a uniform
    k-subset of the t steps: the epoch's exact pair where every step meets the base's
    (P, Q) (a finite base: every outcome sequence enumerated)."""
    subsets = list(itertools.combinations(range(t), k))
    pl, ql = [], []
    for o in itertools.product(range(len(p_law)), repeat=t):
        ql.append(math.prod(q_law[i] for i in o))
        pl.append(sum(math.prod(p_law[o[i]] if i in chosen else q_law[o[i]] for i in range(t))
                      for chosen in subsets) / len(subsets))
    pl, ql = np.array(pl), np.array(ql)
    return max(hockey(pl, ql, eps), hockey(ql, pl, eps))


@pytest.mark.parametrize("t,k", [(3, 2), (4, 3)])
def test_allocation_witness_of_bases_with_infinite_losses(t, k):
    """(ε, δ)-DP's pair (atoms at L = ±∞: the statistic's top label and label 0) and a
    user's asymmetric finite pair, against the epoch's exact pair."""
    e = math.exp(1.0)
    bases = [(ApproxDPMechanism(1.0, 0.1), [0.1, 0.9 * e / (1 + e), 0.9 / (1 + e), 0.0],
              [0.0, 0.9 / (1 + e), 0.9 * e / (1 + e), 0.1]),
             (DiscreteMechanism([0.6, 0.3, 0.1, 0.0], [0.25, 0.3, 0.4, 0.05]), [0.6, 0.3, 0.1, 0.0],
              [0.25, 0.3, 0.4, 0.05])]
    for base, p_law, q_law in bases:
        m = RandomAllocation()(base, t, selected=k)
        for eps in (0.0, 0.5, 1.5, 3.0):
            _check(m, _epoch_delta(p_law, q_law, t, k, eps), eps)


# ------------------------------------------------------------------ truncated Poisson sampling


@pytest.mark.parametrize("n,q,batch,steps", [(4, 0.6, 2, 1), (3, 0.5, 1, 2), (4, 0.9, 1, 2)])
def test_truncated_lower_end_against_datasets(n, q, batch, steps):
    p = 0.75
    m = Composition()([TruncatedPoissonSampling()(RandomizedResponse(p), q, n, batch)], [steps])
    for eps in (0.0, 0.3, 0.8):
        _check(m, max(truncated_worst(n, q, batch, p, eps, steps)), eps)


def test_truncated_witness_each_direction_against_datasets():
    p, n, q, batch = 0.75, 4, 0.6, 2
    (found,), _ = attained_compositions(TruncatedPoissonSampling()(RandomizedResponse(p), q, n, batch).pairs)
    for eps in (0.0, 0.2, 0.5):
        worst = truncated_worst(n, q, batch, p, eps)
        for direction, order in zip(("remove", "add"), worst):
            ((pair, _),) = found.direction(direction)
            got = float(pair.delta(eps, upper=False))
            assert order * (1 - 1e-6) - 1e-15 <= got <= order * (1 + FLOAT), (direction, eps, got, order)


def _epsilon(worst, delta):
    """The brute force's ε(δ) bracketed by bisection: (lo, hi) with δ(hi) ≤ δ < δ(lo)."""
    lo, hi = 0.0, 20.0
    if worst(0.0) <= delta:
        return 0.0, 0.0
    for _ in range(40):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if worst(mid) <= delta else (mid, hi)
    return lo, hi


@pytest.mark.parametrize("scheme", ["truncated", "with-replacement"])
def test_epsilon_lower_ends_against_datasets(scheme):
    p = 0.8
    if scheme == "truncated":
        m = TruncatedPoissonSampling()(RandomizedResponse(p), 0.6, 4, 2)
        worst = lambda e: max(truncated_worst(4, 0.6, 2, p, e))  # noqa: E731
    else:
        m = Composition()([SamplingWithReplacement()(RandomizedResponse(p, relation="replace-one"), 3, 1)], [2])
        worst = lambda e: max(with_replacement_worst(3, 1, p, e, 2))  # noqa: E731
    for delta in (0.01, 0.1):
        lo, hi = _epsilon(worst, delta)
        try:
            b = m.get_approxDP_bounds(delta, accuracy=ACCURACY)
        except AccuracyNotReached as err:
            b = err.bounds
        assert b.lower_of == "mechanism" and b.lower <= hi * (1 + FLOAT) and b.upper >= lo, (delta, b, lo, hi)
        assert b.lower >= lo - 2 * ACCURACY * b.upper, (delta, b, lo)


# ------------------------------------------------------------------ sampling with replacement


@pytest.mark.parametrize("n,b,steps,attained", [(5, 1, 2, True), (3, 1, 2, True), (3, 2, 1, False)])
def test_with_replacement_against_datasets(n, b, steps, attained):
    """b = 1: subset sampling, whose two witnesses (A, A reversed) mix within one
    composition (x's indicator at one step, y's at the other: records of three values);
    b > 1 with a non-Gaussian base: no lower end, and the upper end above every dataset's."""
    p = 0.75
    m = Composition()([SamplingWithReplacement()(RandomizedResponse(p, relation="replace-one"), n, b)], [steps])
    for eps in (0.0, 0.3, 0.8):
        _check(m, max(with_replacement_worst(n, b, p, eps, steps)), eps, attained)


def _copies_delta(mu, n, b, eps, x_first=True):
    """δ(ε) of the instance x adds μσ per copy, y and the others 0 (mpmath, closed form):
    (Σ_k w_k N(kμ, 1), N(0, 1)) with w_k = P(Bin(b, 1/n) = k), or the other order. The
    loss is increasing in the output, so {L > ε} is a half-line from the loss's root."""
    w = [mp.binomial(b, k) * mp.mpf(1) / n ** k * (1 - mp.mpf(1) / n) ** (b - k) for k in range(b + 1)]

    def loss(x):
        return mp.log(mp.fsum(wk * mp.e ** (k * mu * x - k * k * mu * mu / 2) for k, wk in enumerate(w)))
    alpha = mp.e ** eps
    if x_first:
        root = mp.findroot(lambda x: loss(x) - eps, (-60, 60), solver="bisect")
        return mp.fsum(wk * mp.ncdf(k * mu - root) for k, wk in enumerate(w)) - alpha * mp.ncdf(-root)
    if loss(mp.mpf(-60)) > -eps:  # the loss never falls below −ε
        return mp.mpf(0)
    root = mp.findroot(lambda x: loss(x) + eps, (-60, 60), solver="bisect")
    return mp.ncdf(root) - alpha * mp.fsum(wk * mp.ncdf(root - k * mu) for k, wk in enumerate(w))


@pytest.mark.mp_dps(30)
@pytest.mark.parametrize("sigma,n,b", [(1.0, 10, 3), (0.5, 2, 2), (1.0, 3, 6)])
def test_with_replacement_gaussian_witness_against_its_instance(sigma, n, b):
    m = SamplingWithReplacement()(GaussianMechanism(sigma, relation="replace-one"), n, b)
    for eps in (0.0, 0.5, 1.5):
        exact = float(max(_copies_delta(1 / sigma, n, b, eps), _copies_delta(1 / sigma, n, b, eps, False)))
        b_ = _bounds(m, eps, 1e-3)
        assert b_.lower_of == "mechanism"
        assert exact * (1 - 2e-3) <= b_.lower <= exact * (1 + FLOAT) <= b_.upper * (1 + FLOAT), (eps, b_, exact)


# ------------------------------------------------------------------ compositions


def test_heterogeneous_compositions_keep_lower_below_upper():
    rr, g = RandomizedResponse(0.7), GaussianMechanism(1.0)
    m = Composition()([RandomAllocation()(rr, 5, 2), TruncatedPoissonSampling()(g, 0.1, 50, 6),
                       PoissonSampling()(g, 0.05), RandomAllocation()(rr, 4, 3)], [2, 1, 3, 1])
    for eps in (0.2, 1.0):
        b = _bounds(m, eps)
        assert b.lower_of == "mechanism" and 0 < b.lower <= b.upper, (eps, b)


def test_heterogeneous_composition_of_datasets():
    """Two schemes on the same neighbours, their own query each: the brute force of the
    two together (a product of the laws on each dataset pair) against the composition."""
    p, n = 0.8, 3
    m = Composition()([RandomAllocation()(RandomizedResponse(p), 3, selected=2),
                       TruncatedPoissonSampling()(RandomizedResponse(p), 0.5, n, 1)], [1, 1])
    for eps in (0.2, 0.8):
        # each part's per-order worst is attained by x = 1, the others 0 (the same datasets for
        # both parts, a query each): the product of those laws is an instance of the composition
        a1, b1 = allocation_law([0, 0, 1], 3, 2, {1, 2, 3}, p), allocation_law([0, 0], 3, 2, {1, 2, 3}, p)
        a2, b2 = (query_rr(truncated_ones(bits, 0.5, 1), {1}, p) for bits in ([0, 0, 1], [0, 0]))
        a, b = np.outer(a1, a2).ravel(), np.outer(b1, b2).ravel()
        instance = max(hockey(a, b, eps), hockey(b, a, eps))
        got = _bounds(m, eps, 1e-3)
        assert got.upper >= instance * (1 - FLOAT)
        assert instance * (1 - 2e-3) <= got.lower <= instance * (1 + FLOAT), (eps, got, instance)


@pytest.mark.parametrize("parts", [
    # (the exponential mechanism's envelope has attained witnesses now: the two-outcome pairs)
    lambda: [SubsetSampling()(RandomizedResponse(0.7, relation="replace-one"), 0.1),
             ToReplaceOne()(TruncatedPoissonSampling()(GaussianMechanism(1.0), 0.1, 50, 6))],
    lambda: [SamplingWithReplacement()(RandomizedResponse(0.7, relation="replace-one"), 10, 3),
             ToReplaceOne()(TruncatedPoissonSampling()(GaussianMechanism(1.0), 0.5, 4, 2))],
    lambda: [SamplingWithReplacement()(RandomizedResponse(0.7, relation="replace-one"), 10, 3),
             SamplingWithReplacement()(GaussianMechanism(1.0, relation="replace-one"), 10, 3)],
], ids=["subset+truncated-replace", "rr-copies+truncated-replace", "rr-copies+gaussian-copies"])
def test_an_unattained_part_without_witness_leaves_no_lower_end(parts):
    b = _bounds(Composition()(parts(), [1, 1]), 0.5)
    assert b.lower is None and b.lower_of is None and not b.certified and "not attained" in b.reason, b


# ------------------------------------------------------------------ round trips


def _witnessed():
    g, gr = GaussianMechanism(1.0), GaussianMechanism(0.9, relation="replace-one")
    return [SamplingWithReplacement()(gr, 20, 4),
            Composition()([RandomAllocation()(RandomizedResponse(0.7), 4, 2),
                           TruncatedPoissonSampling()(g, 0.1, 50, 6)], [2, 3])]


@pytest.mark.parametrize("index", range(2))
def test_round_trips_keep_the_bounds(index):
    m = _witnessed()[index]
    before = tuple(_bounds(m, 0.5))
    for back in (pickle.loads(pickle.dumps(m)), specs.from_spec(json.loads(json.dumps(m.to_spec()))),
                 pickle.loads(pickle.dumps(m))):  # the last after the first query filled the caches
        assert back == m and hash(back) == hash(m)
        assert tuple(_bounds(back, 0.5)) == before
    assert pickle.loads(pickle.dumps(m.pairs)) == m.pairs


def test_witnessed_pairs_are_not_merged_with_plain_ones():
    """Equal curves, other witnesses: other keys (a composition must not merge them),
    and only the witnessed one has an attained composition."""
    gr = GaussianMechanism(1.0, relation="replace-one")
    witnessed = SamplingWithReplacement()(gr, 20, 4).pairs.remove[0][0]
    plain = SubsetSampledPair(witnessed._base, witnessed._gamma)
    assert plain != witnessed and hash(plain) != hash(witnessed)
    assert attained_compositions(PairComposition.single(plain, plain))[0] is None
    both = PairComposition(((plain, 1), (witnessed, 1)), ((plain, 1), (witnessed, 1)))
    assert len(both.direction("remove")) == 2
    assert attained_compositions(both)[0] is None  # the plain part has no attained form
    assert attained_compositions(PairComposition.single(witnessed, witnessed))[0] is not None


# ------------------------------------------------------------------ edges: another scheme exactly


def _same(a, b, eps=0.5):
    x, y = _bounds(a, eps, 1e-3), _bounds(b, eps, 1e-3)
    assert x.lower_of == y.lower_of, (x, y)
    assert (x.lower is None) == (y.lower is None), (x, y)
    ends = [(a, b) for a, b in ((x.lower, y.lower), (x.upper, y.upper)) if a is not None]
    assert all(a == pytest.approx(b, rel=1e-12) for a, b in ends), (x, y)


def test_edges_that_are_other_schemes():
    g, gr = GaussianMechanism(1.0), GaussianMechanism(1.0, relation="replace-one")
    _same(RandomAllocation()(g, 3, 3), Composition()([g], [3]))           # selected = steps
    _same(RandomAllocation()(g, 1, 1), g)                                  # steps = 1
    _same(TruncatedPoissonSampling()(g, 0.1, 50, 50), PoissonSampling()(g, 0.1))  # B ≥ n
    _same(SamplingWithReplacement()(gr, 20, 1), SubsetSampling()(gr, 1 / 20))   # b = 1
    _same(SamplingWithReplacement()(gr, 1, 3), GaussianMechanism(1 / 3, relation="replace-one"))  # n = 1


def test_edges_without_or_with_trivial_lower_ends():
    g = GaussianMechanism(1.0)
    far = _bounds(RandomAllocation()(g, SUPPORT // 4 + 1, 2), 0.5)
    assert far.lower is None and far.lower_of is None and "not attained" in far.reason
    zero = _bounds(TruncatedPoissonSampling()(g, 0.0, 50, 2), 0.5)
    assert zero.lower == zero.upper == 0.0
    full = _bounds(TruncatedPoissonSampling()(g, 1.0, 50, 2), 0.5)   # q = 1: every record sampled
    assert full.lower_of == "mechanism" and 0 < full.lower <= full.upper


# ------------------------------------------------------------------ the wider sweep


@pytest.mark.slow
def test_sweep_against_datasets():
    p = 0.75
    for n, t, k, epochs in [(4, 4, 2, 1), (3, 4, 3, 2), (3, 5, 2, 1), (2, 5, 4, 2), (3, 3, 2, 3), (4, 5, 3, 1)]:
        m = Composition()([RandomAllocation()(RandomizedResponse(p), t, selected=k)], [epochs])
        for eps in (0.0, 0.5, 1.2):
            _check(m, max(allocation_worst(n, t, k, p, eps, epochs)), eps)
    for (n, q, batch), steps in [((5, 0.3, 1), 1), ((5, 0.8, 3), 2), ((6, 0.5, 2), 1), ((3, 0.05, 1), 3),
                                 ((3, 0.99, 2), 3), ((3, 0.5, 3), 2), ((4, 0.7, 2), 2)]:
        m = Composition()([TruncatedPoissonSampling()(RandomizedResponse(p), q, n, batch)], [steps])
        for eps in (0.0, 0.3, 0.8):
            _check(m, max(truncated_worst(n, q, batch, p, eps, steps)), eps)
    for n, b, steps in [(3, 2, 2), (6, 1, 3), (2, 2, 2)]:
        m = Composition()([SamplingWithReplacement()(RandomizedResponse(p, relation="replace-one"), n, b)],
                          [steps])
        for eps in (0.0, 0.3, 0.8):
            _check(m, max(with_replacement_worst(n, b, p, eps, steps)), eps, attained=(b == 1))


@pytest.mark.parametrize("finer_lattices", [False, True])
def test_accuracy_not_reached_quotes_the_mechanisms_interval(monkeypatch, finer_lattices):
    """The message of ``AccuracyNotReached`` quoted the *pairs'* grid interval as
    "certified": for unattained pairs its lower end bounds only the pairs (here 0.4018
    against the mechanism's exact 0.37719, which the brute force attains). The grids' own
    refusal, and the one after finer lattices (``precision.py``: the common part)."""
    monkeypatch.setattr(intervals, "_ROUNDS", 0)  # (the first grid: cheap, and too coarse for 1e-6)
    if not finer_lattices:
        monkeypatch.setattr(route, "finer", lambda rho: None)
    p, n, t, k, eps = 0.75, 3, 4, 2, 0.3
    with pytest.raises(AccuracyNotReached) as err:
        RandomAllocation()(RandomizedResponse(p), t, selected=k).get_approx_delta_bounds(eps, accuracy=1e-6)
    worst = max(allocation_worst(n, t, k, p, eps))
    quoted = float(str(err.value).split("[")[1].split(",")[0])
    assert quoted == float(f"{err.value.bounds.lower:.6g}") and quoted <= worst * (1 + 1e-5), (str(err.value), worst)
