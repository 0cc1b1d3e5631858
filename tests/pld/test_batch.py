"""Many pairs at once: the batched routes give the one-by-one answers.

Stacked masses, loss ranges, grids and mirror twins (``pairs.stacked_masses``,
``discretise.loss_ranges`` / ``pairs_to_grids``, ``cells.grid_cells``) equal
their pair-by-pair counterparts bit for bit; the Gaussian cells match
mpmath; the composed log-MGF (``chernoff.LogMGF``) matches a direct sum and
its Newton-hinted quantiles the full search; ``GridCache.get_many`` builds
only what is missing, in one call.
"""
import math

import mpmath as mp
import numpy as np
import pytest

from dpaccount.pld.grids import cells
from dpaccount.pld.grids.cache import GridCache
from dpaccount.pld.grids.chernoff import LogMGF, log_mgf, quantile
from dpaccount.pld.grids.discretise import _RANGES, _scan, loss_ranges, pair_to_grid, pairs_to_grids
from dpaccount.pld.pairs.log_cells import normal_cells
from dpaccount.pld.pairs.discrete_pair import binomial_pair, randomized_response_pair
from dpaccount.pld.pairs.base import GaussianPair, LaplacePair, stacked_masses
from dpaccount.pld.pairs.zoo import leaky_rr_pair
from dpaccount.pld.pairs.poisson_sampling import PoissonAddPair, PoissonRemovePair
from dpaccount.pld.pairs.subset_sampling import SubsetSampledPair

PAIRS = [GaussianPair(1.0), GaussianPair(0.02), LaplacePair(1.0), randomized_response_pair(0.6),
         binomial_pair(10, 0.5), PoissonRemovePair(GaussianPair(1.0), 0.1), PoissonAddPair(GaussianPair(1.0), 0.1),
         PoissonRemovePair(GaussianPair(0.4), 1.0), PoissonAddPair(GaussianPair(2.0), 0.999),
         PoissonRemovePair(LaplacePair(2.0), 0.3), PoissonAddPair(binomial_pair(10, 0.5), 0.3),
         PoissonRemovePair(leaky_rr_pair(1.0, 0.01).reverse(), 0.3), PoissonAddPair(leaky_rr_pair(1.0, 0.01), 0.3),
         PoissonRemovePair(PoissonAddPair(GaussianPair(1.0), 0.2), 0.1), SubsetSampledPair(GaussianPair(1.0), 0.1)]
EDGES = [np.linspace(-3, 3, 301), np.array([0.0]), np.array([-800.0, -50, -1e-9, 0, 1e-9, 50, 800]),
         np.linspace(-40, 40, 11), np.sort(np.random.default_rng(3).normal(0, 4, 200))]


def test_stacked_masses_are_the_masses_of_each_pair():
    pairs = [p for p in PAIRS for _ in EDGES]
    runs = [e for _ in PAIRS for e in EDGES]
    a, b = stacked_masses(pairs, np.concatenate(runs), [len(e) for e in runs])
    at = 0
    for pair, edges in zip(pairs, runs):
        want_a, want_b = pair.masses(edges)
        n = len(edges) + 1
        assert np.array_equal(a[at:at + n], want_a) and np.array_equal(b[at:at + n], want_b), (pair, edges[:3])
        at += n


def test_gaussian_cells_against_mpmath():
    """Each cell to 1e-12 of itself, tails (to Φ(−37) ≈ 6e-300) and the cell straddling 0 included."""
    z = np.concatenate(([-37.0, -30.0, -8.0], np.linspace(-3, 3, 25) + 0.01, [8.0, 30.0, 37.0]))
    got = normal_cells(z)
    ends = [-mp.inf] + [mp.mpf(x) for x in z] + [mp.inf]
    with mp.workdps(40):
        for i, g in enumerate(got):
            lo, hi = ends[i], ends[i + 1]
            exact = (mp.ncdf(hi) - mp.ncdf(lo) if hi <= 0 else mp.ncdf(-lo) - mp.ncdf(-hi) if lo >= 0
                     else 1 - mp.ncdf(lo) - mp.ncdf(-hi))
            assert abs(g - exact) <= 1e-12 * exact, (i, g, exact)


def test_cells_of_a_descending_run_are_those_of_its_reverse_and_within_their_bounds():
    """``log_cells(…, descending=True)``: the cells of a non-increasing log G in its own order,
    their error bounds and end terms are, to the bit, those of the reversed logs read backwards;
    with G = 1 − Φ (log Φ(−z), the upper side of ``normal_cells``' runs, ending at −∞), each cell
    lies within its bound of the exact mass Φ(−z_i) − Φ(−z_{i+1}) (mpmath, 50 digits)."""
    from dpaccount.ndtr import log_ndtr
    from dpaccount.numerics import ULP_OF_ONE
    from dpaccount.pld.pairs.log_cells import LOG_NDTR_ULPS, log_cells
    z = np.concatenate(([0.0, 1e-300, 0.01], np.linspace(0.3, 9.0, 40), np.geomspace(9.5, 37.5, 12), [np.inf]))
    logs = log_ndtr(-z)
    eta = LOG_NDTR_ULPS * ULP_OF_ONE * np.abs(logs)
    cells, err, ends = log_cells(logs, eta.copy(), descending=True)
    back, back_err, back_ends = log_cells(logs[::-1].copy(), eta[::-1].copy())
    for got, want in ((cells, back), (err, back_err), (ends, back_ends)):
        assert np.array_equal(got, want[::-1])
    with mp.workdps(50):
        for i, (g, e) in enumerate(zip(cells, err)):
            exact = mp.ncdf(-mp.mpf(z[i])) - (0 if np.isinf(z[i + 1]) else mp.ncdf(-mp.mpf(z[i + 1])))
            assert 0 < e and abs(g - exact) <= e, (i, z[i], g, exact, e)


@pytest.mark.parametrize("errors", [False, True])
def test_gaussian_pairs_cells_of_p_and_q_together_are_those_of_a_call_each(errors):
    """``GaussianPair.masses_of`` takes P's and Q's short runs in one ``normal_cells`` call: the
    cells (and bounds) are those of a call per law on z = (e ∓ μ²/2)/μ, to the bit, for one pair
    and for several of different μ, short runs and long ones."""
    from dpaccount.pld.pairs.base import _z_error, per_point
    from dpaccount.pld.pairs.log_cells import _LONG
    cases = [([0.9], [np.array([-10.7, np.inf])]), ([0.9], [np.linspace(-3, 9, 40)]),
             ([0.02, 1.0, 7.0], [np.array([-np.inf, -1.0, 0.0, 0.0, 2.0]), np.array([]), np.linspace(-50, 50, 31)]),
             ([1.0, 0.5], [np.linspace(-4, 4, 3 * _LONG), np.array([0.3])])]
    for mus, runs in cases:
        pairs, sizes, edges = [GaussianPair(m) for m in mus], np.array([len(r) for r in runs]), np.concatenate(runs)
        got = GaussianPair.masses_of(pairs, edges, sizes, errors)
        mu = per_point(mus, sizes)
        want = [normal_cells((edges + s * mu * mu / 2) / mu, sizes,
                             _z_error((edges + s * mu * mu / 2) / mu, mu) if errors else None) for s in (-1, 1)]
        want = (want[0][0], want[1][0], want[0][1], want[1][1]) if errors else want
        assert len(got) == len(want) and all(np.array_equal(g, w) for g, w in zip(got, want)), mus


def test_gaussian_cells_of_several_runs_are_those_of_each_run():
    runs = [np.array([-np.inf, -np.inf, -3.0, 0.0, 0.0, 2.0, np.inf]), np.array([]), np.array([0.0]),
            np.array([-1e-300, 1e-300]), np.linspace(-40, -1, 5), np.linspace(1, 40, 5)]
    got, at = normal_cells(np.concatenate(runs), [len(r) for r in runs]), 0
    for r in runs:
        assert np.array_equal(got[at:at + len(r) + 1], normal_cells(r))
        at += len(r) + 1


def test_gaussian_cells_of_long_and_short_runs_agree_within_their_bounds():
    """Runs on average ``_LONG`` points long go one by one (slices), shorter ones stacked
    (index arrays): the two routes' cells lie within the sum of their error bounds of each
    other, and their bounds agree, on runs with zeros, infinities and a cell straddling 0."""
    from dpaccount.pld.pairs import log_cells
    runs = [np.array([-np.inf, -3.0, 0.0, 0.0, 2.0, np.inf]), np.array([]), np.array([0.0]),
            np.linspace(-9, -1, 7), np.linspace(1, 9, 7), np.linspace(-6.0, 7.0, 3 * log_cells._LONG)]
    z = np.concatenate(runs)
    sizes = np.array([len(r) for r in runs])
    z_err = 1e-15 * np.where(np.isfinite(z), np.abs(z) + 1, 0.0)
    slack = (np.abs(z) + 2) * z_err
    stacked, stacked_err = (np.nan_to_num(a, nan=0.0) for a in log_cells._stacked_cells(z, sizes, slack))
    cuts = np.concatenate(([0], np.cumsum(sizes)))
    one = [log_cells._run_cells(z[a:b], slack[a:b]) for a, b in zip(cuts[:-1], cuts[1:])]
    single, single_err = (np.nan_to_num(np.concatenate([r[i] for r in one]), nan=0.0) for i in (0, 1))
    assert len(stacked) == len(single) == len(z) + len(runs)
    assert np.all(np.abs(stacked - single) <= stacked_err + single_err)
    assert np.allclose(stacked_err, single_err, rtol=1e-12, atol=0.0)
    both = normal_cells(z, sizes, z_err)  # 3·_LONG + 22 points in 6 runs: stacked
    assert np.all(np.abs(both[0] - single) <= both[1] + single_err)
    assert abs(float(np.sum(single)) - len(runs)) < 1e-12  # each run's cells add up to 1


def test_loss_ranges_in_lockstep_are_those_of_each_pair():
    pairs = [p for p in PAIRS if not isinstance(p, SubsetSampledPair)]
    together = _scan(pairs, 1e-30)
    assert together == [_scan([p], 1e-30)[0] for p in pairs]
    _RANGES.clear()
    assert loss_ranges(pairs, 1e-30) == together


@pytest.mark.parametrize("pessimistic", [True, False])
def test_grids_together_are_the_grids_of_each_pair(pessimistic):
    step = 0.01
    ranges = [(math.floor(lo / step), math.ceil(hi / step)) for lo, hi in loss_ranges(PAIRS, 1e-20)]
    cells._CELLS.clear()
    together = pairs_to_grids(PAIRS, step, ranges, pessimistic)
    for pair, (lo, hi), grid in zip(PAIRS, ranges, together):
        cells._CELLS.clear()
        alone = pair_to_grid(pair, step, lo, hi, pessimistic)
        assert (grid.offset, grid.p_inf) == (alone.offset, alone.p_inf) and np.array_equal(grid.probs, alone.probs)


def test_grids_in_groups_are_the_grids_of_one_pass(monkeypatch):
    """Continuous pairs are discretised in groups of at most ``_GROUP_POINTS`` points
    (a pair larger than that alone): small groups give the grids of one pass."""
    from dpaccount.pld.grids import discretise
    step = 0.01
    ranges = [(math.floor(lo / step), math.ceil(hi / step)) for lo, hi in loss_ranges(PAIRS, 1e-20)]
    cells._CELLS.clear()
    together = pairs_to_grids(PAIRS, step, ranges)
    sizes = [hi - lo + 1 for lo, hi in ranges]
    monkeypatch.setattr(discretise, "_GROUP_POINTS", 2 * min(sizes))
    groups = discretise.groups(list(range(len(PAIRS))), sizes, 2 * min(sizes))
    assert [i for g in groups for i in g] == list(range(len(PAIRS))) and len(groups) > 2
    assert all(len(g) == 1 or sum(sizes[i] for i in g) <= 2 * min(sizes) for g in groups)
    cells._CELLS.clear()
    for a, b in zip(together, pairs_to_grids(PAIRS, step, ranges)):
        assert (a.offset, a.p_inf) == (b.offset, b.p_inf) and np.array_equal(a.probs, b.probs)


def test_atomless_pairs():
    assert GaussianPair(1.0).atomless and PoissonRemovePair(GaussianPair(1.0), 0.1).atomless
    assert PoissonAddPair(PoissonRemovePair(GaussianPair(1.0), 0.2), 0.1).atomless
    assert not LaplacePair(1.0).atomless and not randomized_response_pair(0.6).atomless
    assert not PoissonRemovePair(leaky_rr_pair(1.0, 0.01).reverse(), 0.3).atomless
    assert not SubsetSampledPair(GaussianPair(1.0), 0.1).atomless


@pytest.mark.parametrize("sigma, q, step", [(2.0, 0.01, 1e-3), (0.8, 0.3, 0.01), (5.0, 1.0, 0.02)])
def test_mirror_twins_give_the_grids_computed_directly(sigma, q, step):
    """The add pair's cells read from the remove pair's (mirrored) are bit-identical to its
    own; where the remove pair's points do not cover them, it computes its own."""
    remove = PoissonRemovePair(GaussianPair(1 / sigma), q)
    add = remove.reverse()
    (rlo, rhi), (alo, ahi) = loss_ranges([remove, add], 1e-30)
    r_range = (math.floor(rlo / step), math.ceil(rhi / step))
    a_range = (math.floor(alo / step), math.ceil(ahi / step))
    cover = (min(r_range[0], -a_range[1]), max(r_range[1], -a_range[0]))
    cells._CELLS.clear()
    direct = pair_to_grid(add, step, *a_range)
    for own, covers in ((r_range, r_range == cover), (cover, True), ((cover[0] + 1, cover[1]), False)):
        cells._CELLS.clear()
        pair_to_grid(remove, step, *own)
        assert (cells.twin(add, step, a_range) is not None) == covers
        mirrored = pair_to_grid(add, step, *a_range)
        assert mirrored.p_inf == direct.p_inf and np.array_equal(mirrored.probs, direct.probs)


def _items():
    pairs = [PoissonRemovePair(GaussianPair(1 / s), 0.02) for s in (1.0, 2.0, 3.0)]
    step = 0.005
    ranges = [(math.floor(lo / step), math.ceil(hi / step)) for lo, hi in loss_ranges(pairs, 1e-30)]
    return list(zip(pairs_to_grids(pairs, step, ranges), (100, 50, 20)))


def test_log_mgf_and_its_moments_against_a_direct_sum():
    items = _items()
    lam = np.array([-20.0, -1.0, 0.3, 5.0, 40.0])
    k0, k1, k2 = LogMGF(items).moments(lam)
    for i, x in enumerate(lam):
        direct = [0.0, 0.0, 0.0]
        for g, k in items:
            w = [mp.mpf(p) * mp.exp(mp.mpf(x) * mp.mpf(e)) for p, e in zip(g.probs, g.losses) if p > 0]
            e = [mp.mpf(v) for p, v in zip(g.probs, g.losses) if p > 0]
            total = mp.fsum(w)
            mean = mp.fsum(wi * ei for wi, ei in zip(w, e)) / total
            direct[0] += k * mp.log(total)
            direct[1] += k * mean
            direct[2] += k * (mp.fsum(wi * ei ** 2 for wi, ei in zip(w, e)) / total - mean ** 2)
        assert k0[i] == pytest.approx(float(direct[0]), rel=1e-12, abs=1e-12)
        assert LogMGF(items)(x) == pytest.approx(float(direct[0]), rel=1e-12, abs=1e-12)
        assert abs(mp.mpf(LogMGF(items)(x)) - direct[0]) <= LogMGF(items).error(x)  # the rounding bound holds
        assert k1[i] == pytest.approx(float(direct[1]), rel=1e-10, abs=1e-12)
        assert k2[i] == pytest.approx(float(direct[2]), rel=1e-7, abs=1e-12)


def test_log_mgf_in_groups_of_grids_is_that_of_one_pass(monkeypatch):
    """A composition's grids are evaluated in groups of at most ``_GROUP`` points (work
    arrays that stay in cache): in small groups K, K' and K'' are those of one pass, and each
    group agrees with the direct sum (``test_log_mgf_and_its_moments_against_a_direct_sum``)."""
    from dpaccount.pld.grids import chernoff
    items = _items()
    lam = np.array([-20.0, -1.0, 0.3, 5.0, 40.0])
    whole = LogMGF(items)
    monkeypatch.setattr(chernoff, "_GROUP", min(len(g.probs) for g, _ in items) + 1)
    grouped = LogMGF(items)
    assert len(grouped._groups) > 1 and len(whole._groups) == 1
    for a, b in zip(whole.moments(lam), grouped.moments(lam)):
        assert np.array_equal(a, b)
    assert [whole(x) for x in lam] == [grouped(x) for x in lam]


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_hinted_quantile_is_a_chernoff_level_near_the_best(sign):
    """From any hint the level is (K(sλ) − log t)/λ at the λ returned (a valid Chernoff
    level), rounded up by K's error bound and no more, and at most the full search's
    (Newton ends nearer the optimum than Brent's tolerance), up to 1e-9."""
    mgf, log_t = LogMGF(_items()), math.log(1e-30)
    best, lam = quantile(mgf, log_t, sign)
    for hint in (lam * 0.97, lam, lam * 1.05, lam * 3.0, lam / 3.0):
        level, at = quantile(mgf, log_t, sign, hint, tol=0.0)
        k = mgf(sign * at)
        pad = (mgf.error(at) + 4 * np.finfo(float).eps * (abs(k) + abs(log_t))) / at
        assert 0 < pad < 1e-9 * abs(level)
        # K's bound covers the worst case of its n-term sums, (n − 1)u of each of the k_i Λ_i
        assert mgf.error(at) >= np.finfo(float).eps * sum(k_i * (np.count_nonzero(g.probs) - 1) for g, k_i in _items())
        assert (k - log_t) / at < level <= (k - log_t) / at + pad * (1 + 1e-9)  # f(λ) rounded up: ≥ the minimum
        assert level <= best + 1e-9 * abs(best), (hint, level, best)


def test_get_many_builds_what_is_missing_in_one_call():
    cache, calls = GridCache(limit=10, size_of=lambda _: 1), []

    def build(keys):
        calls.append(list(keys))
        return [k * 10 for k in keys]

    assert cache.get_many([1, 2], build) == [10, 20]
    assert cache.get_many([2, 3, 1, 3], build) == [20, 30, 10, 30]
    assert calls == [[1, 2], [3]]
    assert cache.peek(4) is None and cache.peek(3) == 30
    cache.put(3, 31)
    assert cache.get(3, lambda: 0) == 31 and len(cache) == 3


def test_a_shared_log_mgf_answers_threads_one_at_a_time():
    """``log_mgf`` hands one LogMGF (and its work arrays) to every caller on the same grids."""
    import threading
    items = _items()
    mgf, lam = log_mgf(items), np.linspace(-30.0, 30.0, 13)
    assert log_mgf(items) is mgf
    want = LogMGF(items).moments(lam)
    got, errors = {}, []

    def run(i):
        try:
            for _ in range(20):
                got[i] = mgf.moments(lam)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)
    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and all(all(np.array_equal(a, b) for a, b in zip(v, want)) for v in got.values())
