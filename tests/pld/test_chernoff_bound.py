"""The Chernoff bound on δ(ε) from the single-step grids alone (``chernoff.delta_bound``),
which lets the direction that does not set the answer skip its grids.

Against exact δ (mpmath loss laws of ``zoo_exact_oracles``): above it at
every ε, including where P(L = ∞) is all of δ, and within a modest factor
of it in the tail (a bound that answered 1 would skip nothing).
"""
import mpmath as mp
import numpy as np
import pytest

import dpaccount as dpa
from dpaccount.pld.grids.accountant import step_grids
from dpaccount.pld.pairs.composition import DIRECTIONS
from dpaccount.pld.grids.cache import GRIDS
from dpaccount.pld.grids.chernoff import delta_bound
from zoo_exact_oracles import Loss, leaky_rr_outcomes, rr_outcomes

EPS = np.linspace(0.0, 12.0, 25)


def _cases():
    yield ("rr x 40 with a Gaussian", dpa.Composition()([dpa.RandomizedResponse(p=0.6), dpa.GaussianMechanism(sigma=3.0)], [40, 1]),
           Loss.of_outcomes(*rr_outcomes(0.6)) ** 40 * Loss(mu2=mp.mpf(1) / 9))
    yield ("(0.5, 1e-4)-DP x 20", dpa.Composition()([dpa.ApproxDPMechanism(eps=0.5, delta=1e-4)], [20]),
           Loss.of_outcomes(*leaky_rr_outcomes(0.5, 1e-4)) ** 20)


@pytest.mark.parametrize("name, mech, law", list(_cases()), ids=lambda x: x if isinstance(x, str) else "")
@pytest.mark.parametrize("step", [2e-3, 3e-4])
def test_the_chernoff_bound_is_above_the_exact_delta_and_not_vacuous(name, mech, law, step):
    with mp.workdps(40):
        exact = np.array([float(law.delta(e)) for e in EPS])
    for d in DIRECTIONS:  # both pairs are symmetric: each direction has the same law
        bound = delta_bound(step_grids(mech.pairs.direction(d), step, 1e-100), EPS)
        assert np.all(bound >= exact), (d, EPS[bound < exact])
        tail = (exact > 1e-90) & (exact < 1e-2)
        assert tail.sum() >= 5
        assert np.all(bound[tail] <= 20 * exact[tail]), (d, np.max(bound[tail] / exact[tail]))


def test_the_bound_counts_the_mass_at_infinity():
    # (0.5, 1e-4)-DP x 20: at large ε, δ is P(L = ∞) = 1 − (1 − 1e-4)^20 itself
    mech = dpa.Composition()([dpa.ApproxDPMechanism(eps=0.5, delta=1e-4)], [20])
    p_inf = float(1 - (1 - mp.mpf(1e-4)) ** 20)
    bound = delta_bound(step_grids(mech.pairs.direction("remove"), 1e-3, 1e-100), np.array([30.0, np.inf]))
    assert np.all(p_inf <= bound) and np.all(bound <= p_inf * (1 + 1e-9))


def test_a_dismissed_direction_builds_no_grid_and_the_answer_stays_certified():
    # DP-SGD-like: the add direction's Chernoff bound is far below the remove
    # direction's δ at large ε, so no tilted add grid is built
    GRIDS.clear()
    m = dpa.Composition()([dpa.PoissonSampling()(dpa.GaussianMechanism(sigma=1.0), 0.01)], [300])
    profile = m.privacy_profile()
    eps = np.linspace(3.0, 16.0, 6)
    at = profile.at_level(profile._eps_level)
    remove = at.delta_of("remove", eps)
    assert np.all(at.chernoff_delta("add", eps, remove) < remove)
    got = profile.delta(eps)
    tilted = [key for key in list(GRIDS._items) if len(key) == 7 and key[0] != "pair" and key[5] is not None]
    assert tilted and all(key[1] == "remove" for key in tilted)
    assert np.all(got >= profile.delta_lower(eps))


def test_a_held_log_mgf_is_shared_and_its_grids_keep_their_points():
    """``log_mgf`` gives the log-MGF still held elsewhere (a band lattice's) even when its cache has
    dropped it, and none once nobody holds it; the grids' (log p, ε) then read its arrays: the same
    floats as their own, and K(λ) the same as a fresh one's, within ``error`` of the exact sum;
    once it is gone, they read their own again."""
    import gc
    import math

    from dpaccount.pld.grids import chernoff
    from dpaccount.pld.grids.discretise import pair_to_grid
    from dpaccount.pld.pairs.base import GaussianPair

    from dpaccount.pld.grids.grid import PLDGrid

    grids = [pair_to_grid(GaussianPair(mu), 0.01, -300, 400) for mu in (0.5, 1.0)]
    grids.append(PLDGrid(step=0.01, offset=5, probs=np.array([0.25, 0.0, 0.5]), p_inf=0.0))  # an empty point
    items = [(grids[0], 3), (grids[1], 5), (grids[2], 2)]
    own = [(np.log(g.probs[g.probs > 0]), g.losses[g.probs > 0]) for g in grids]
    held = chernoff.log_mgf(items)
    chernoff._RECENT.clear()
    assert chernoff.log_mgf(items) is held
    for g, (logp, x) in zip(grids, own):
        assert np.array_equal(g._live_log[0], logp) and np.array_equal(g._live_log[1], x)
    lam = np.array([0.1, 1.0, 4.0])
    assert np.array_equal(held(lam), chernoff.LogMGF(items)(lam))
    exact = [sum(k * math.log(math.fsum(math.exp(a + b * t) for a, b in zip(*o))) for o, (_, k) in zip(own, items))
             for t in lam]
    assert np.all(np.abs(held(lam) - exact) <= held.error(lam))
    del held
    chernoff._RECENT.clear()
    gc.collect()
    assert not chernoff._HELD.get(tuple((id(g), k) for g, k in items))
    # and the grids that outlive it hold none of its points (a view would keep them all)
    assert all("_live_log" not in g.__dict__ or g.__dict__["_live_log"][0].base is None for g in grids)
    assert np.array_equal(grids[1]._live_log[0], own[1][0])  # computed again when asked


def test_one_grid_log_mgf_matches_the_exact_sums_alone_and_in_blocks():
    """K, K', K'' of one grid: a single λ and a block of λ wider than one
    pass (the blocked passes) both within ``LogMGF.error`` of the exact sums (mpmath)."""
    from dpaccount.pld.grids.chernoff import LogMGF, _BLOCK
    from dpaccount.pld.grids.grid import PLDGrid
    probs = np.exp(-0.5 * (np.arange(-600, 601) * 0.01) ** 2)
    probs /= probs.sum()
    grid, k = PLDGrid(step=0.01, offset=-590, probs=probs, p_inf=0.0, pessimistic=True), 37
    mgf = LogMGF([(grid, k)])
    lam = np.geomspace(1e-3, 30.0, _BLOCK // len(probs) + 5)  # more λ than one pass takes
    blocked = mgf.moments(lam)
    x = [mp.mpf(float(v)) for v in grid.losses]
    for i in (0, 7, len(lam) // 2, len(lam) - 1):
        w = [mp.mpf(float(p)) * mp.exp(mp.mpf(float(lam[i])) * xj) for p, xj in zip(probs, x)]
        s0, s1, s2 = mp.fsum(w), mp.fsum(wj * xj for wj, xj in zip(w, x)), mp.fsum(wj * xj * xj for wj, xj in zip(w, x))
        exact = (k * mp.log(s0), k * s1 / s0, k * (s2 / s0 - (s1 / s0) ** 2))
        alone = mgf.moments(float(lam[i]))
        bound = mgf.error(lam[i])
        for got in (alone, tuple(v[i] for v in blocked)):
            assert abs(got[0] - exact[0]) <= bound
            for g, e in zip(got[1:], exact[1:]):  # the tilted moments: ratios of sums within n·u of themselves
                assert abs(g - e) <= 1e-9 * abs(e)
