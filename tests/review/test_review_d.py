"""Adversarial review d of the ``speed`` branch (lattice precision, ITP, the plan's ε floor,
random allocation beyond the float range, pure ε of sampling with replacement beyond 64 copies).

Each finding is a test against an independent value: a mechanism's answers before and after
naming the spill of sampling with replacement; the μ-GDP closed form (mpmath) of a Gaussian
composition answered through grids; the ITP search's own bracket contract on random curves
and the bisection it replaced."""
import importlib.util
import math
import random

import mpmath as mp
import pytest

from dpaccount import Composition, GaussianMechanism, RandomizedResponse, SamplingWithReplacement
from dpaccount.converters.hockey_stick import hockey_stick_to_epsilon
from dpaccount.mechanisms.discrete import DiscreteLaplaceMechanism
from dpaccount.pld.pairs.base import MAX_ATOMS


# ------------------------------------------------------------------ sampling with replacement, b > 64
@pytest.mark.parametrize("b", [60, 100])
def test_with_replacement_answers_where_the_spill_cannot_be_named(b):
    """G_b (discrete Laplace, t = 2, replace-one: its k-fold hull has no symmetric pair from
    k ≈ 55 on) cannot be built, so the spill stays unnamed (pure ε ∞); δ(ε) must still answer
    from the listed components, inside the certified interval whose lower end is the
    attained instance (x adds one per copy). The pure-ε change raised RepresentationUnavailable
    from every query for b > 64 (and b ≥ 55 already before)."""
    m = SamplingWithReplacement()(DiscreteLaplaceMechanism(t=2.0, relation="replace-one"), 10 ** 9, b)
    gamma = -math.expm1(b * math.log1p(-1e-9))
    up = m.get_approx_delta(1.0)
    bounds = m.get_approx_delta_bounds(1.0)
    assert 0.0 <= bounds.lower <= up <= bounds.upper * (1 + 1e-12) and 0.0 < up <= gamma
    assert m.get_approxDP(0.0) == math.inf  # the spill is unnamed


def test_with_replacement_answers_where_the_group_pair_exceeds_the_atom_cap():
    """Randomized response at b = MAX_ATOMS + 1 draws: G_b, the pure-DP group pair of b + 1
    outcomes, is refused (GridTooLarge; now not even tried, b > MAX_NAMED); δ(ε) answered
    before the pure-ε change, and must still: the subset-sampled pair at rate γ = P(K ≥ 1)
    has δ ≤ γ, and at least the one-copy part's γ·w₁·δ_RR(ε), with w₁ = P(K = 1 | K ≥ 1)."""
    n, b, p = 10 ** 9, MAX_ATOMS + 1, 0.7
    m = SamplingWithReplacement()(RandomizedResponse(p, relation="replace-one"), n, b)
    gamma = -mp.expm1(b * mp.log1p(-mp.mpf(1) / n))
    w1 = b * mp.mpf(1) / n * (1 - mp.mpf(1) / n) ** (b - 1) / gamma
    eps = 0.1
    # subset sampling at rate γ of a mixture with weight w₁ on RR: δ ≥ γ w₁ δ_RR(ε') at ε' = log(1 + (e^ε − 1)/γ)
    eps1 = mp.log1p(mp.expm1(eps) / gamma)
    rr = max(p - mp.e ** eps1 * (1 - p), 0)
    got = m.get_approx_delta(eps)
    assert gamma * w1 * rr <= got <= gamma * (1 + 1e-12)


# ------------------------------------------------------------------ ITP against bisection
def _old_bisection():
    """The bisection of 08ab5c0 (``git show 08ab5c0:dpaccount/converters/hockey_stick.py``), inline."""
    def search(curve, delta, p_inf=0.0, upper=True, iterations=200):
        if p_inf > delta:
            return math.inf
        if curve(0.0) <= delta:
            return 0.0
        lo, hi = 0.0, 1.0
        while curve(hi) > delta:
            lo, hi = hi, 2.0 * hi
            if hi > 2.0 ** 64:  # the search's range (converters/hockey_stick.py)
                return math.inf if upper else lo
        for _ in range(iterations):
            mid = 0.5 * (lo + hi)
            if curve(mid) > delta:
                lo = mid
            else:
                hi = mid
            if hi - lo <= 4e-16 * hi:
                break
        return hi if upper else lo
    return search


def _random_curve(rng):
    """A non-increasing curve: a finite pair's δ(ε) (atoms, mass at ∞, scaled to tiny or huge
    losses), one with ±4 ulp of deterministic noise, a staircase, a flat one, or 0-then-a-jump."""
    kind = rng.choice(["pld", "noisy", "tiny", "huge", "steps", "flat", "jump"])
    if kind in ("pld", "noisy", "tiny", "huge"):
        scale = {"tiny": 1e-9, "huge": 1e5}.get(kind, 1.0)
        losses = [rng.uniform(0, 10) * scale for _ in range(rng.randint(1, 8))]
        ps = [rng.uniform(0.01, 1) / len(losses) for _ in losses]
        p_inf = rng.choice([0.0, rng.uniform(0, 1e-6)])

        def curve(e):
            v = p_inf + sum(p * -math.expm1(e - l) for p, l in zip(ps, losses) if e < l)
            return v * (1 + random.Random(hash(e)).uniform(-4e-16, 4e-16)) if kind == "noisy" else v
        return kind, curve
    if kind == "steps":
        xs = sorted(rng.uniform(0, 20) for _ in range(rng.randint(1, 6)))
        vs = sorted((rng.random() for _ in xs), reverse=True)
        return kind, lambda e: next((v for x, v in zip(xs, vs) if e < x), 0.0)
    if kind == "jump":
        a = rng.uniform(0, 5)
        return kind, lambda e: 0.5 if e < a else 0.0
    v = rng.random()
    return kind, lambda e: v


@pytest.mark.parametrize("seed", [0] + [pytest.param(s, marks=pytest.mark.slow) for s in (1, 2, 3)])
def test_itp_keeps_the_bracket_and_meets_bisection_on_random_curves(seed):
    """The upper answer meets δ, the lower one does not (or is 0), and on a curve exact in floats
    both lie within 8 ulp of the bisection's (3000 curves, δ log-uniform in [1e-14, 1))."""
    rng, old = random.Random(seed), _old_bisection()
    for _ in range(3000 if seed == 0 else 20000):
        kind, curve = _random_curve(rng)
        delta = 10 ** rng.uniform(-14, -0.01)
        up, low = hockey_stick_to_epsilon(curve, delta), hockey_stick_to_epsilon(curve, delta, upper=False)
        assert up == math.inf or curve(up) <= delta
        assert low == 0.0 or curve(low) > delta
        assert low <= up
        if kind != "noisy":
            ulps = 8 * math.ulp(max(up, 1.0)) if up < math.inf else 0.0
            assert abs(up - old(curve, delta)) <= ulps or up == old(curve, delta)
            assert abs(low - old(curve, delta, upper=False)) <= 8 * math.ulp(max(low, 1.0))


# ------------------------------------------------------------------ the plan's ε floor
def _gdp_epsilon(delta, mu):
    """ε(δ) of μ-GDP (Dong, Roth & Su 2022, Cor. 2.13), by bisection in mpmath at 50 digits."""
    mp.mp.dps = 50
    mu = mp.mpf(mu)

    def curve(e):
        return mp.ncdf(-e / mu + mu / 2) - mp.e ** e * mp.ncdf(-e / mu - mu / 2)
    lo, hi = mp.mpf(0), mp.mpf(1)
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if curve(mid) > delta else (lo, mid)
    return hi


@pytest.mark.parametrize("sigma,k", [(1e11, 2), (1e11, 5), (1e12, 5)])
def test_tiny_but_genuine_epsilons_keep_the_default_accuracy(sigma, k):
    """A Gaussian composition through grids (method='pld'), μ = √k/σ ~ 1e-11: ε(1e-20) ~ 1e-10.
    The plan's floor (tail ε < 1e-12 is rounding) dropped every tilt of these compositions
    (whose tilted means sit below it: λ ≤ 1e3 never reaches their tails), so the coarse level
    answered: 0.67 %, 0.59 % and 6.4 % above the exact ε, where the plan before it met the
    default accuracy (0.066 %, 0.041 %, 0.053 %)."""
    m = Composition()([GaussianMechanism(sigma=sigma)], [k])
    exact = _gdp_epsilon(mp.mpf("1e-20"), math.sqrt(k) / sigma)
    got = m.get_approxDP(1e-20, method="pld")
    assert exact <= got <= exact * (1 + 1e-3)


# ------------------------------------------------------------------ refusals after a finer lattice
def test_the_common_part_keeps_an_upper_end_without_a_lower_one():
    """Pairs not attained and without a witness give intervals with no lower end (``lower_of``
    None) at every ρ; their common part is the smaller upper end, the lower end still absent
    (it was None, and a refusal carried no interval at all)."""
    from dpaccount import Bounds
    from dpaccount.queries.intervals import intersection
    why = "no lower end: the dominating pairs are not attained"
    coarse, fine = Bounds(None, 3.0, "pld", 0.1, False, None, why), Bounds(None, 2.5, "pld", 0.05, False, None, why)
    assert intersection(coarse, fine) == fine
    assert intersection(fine, coarse) == coarse._replace(upper=2.5)
    assert intersection(None, fine) == fine and intersection(fine, None) == fine


@pytest.mark.slow
def test_a_refusal_without_a_lower_end_still_carries_its_upper_end():
    """Random allocation of the exponential mechanism (its logistic pair is not attained): a δ
    interval too wide at ρ = 1e-4 and at 1e-5 carries the smaller certified upper end, as a
    refusal did before the finer lattices (it carried None). ~3 s."""
    from dpaccount import AccuracyNotReached, RandomAllocation
    from dpaccount.mechanisms.discrete import ExponentialMechanism
    m = Composition()([RandomAllocation()(ExponentialMechanism(1.0), 3)], [2])
    with pytest.raises(AccuracyNotReached) as err:
        m.get_approx_delta_bounds(1.0, accuracy=1e-6)
    got = err.value.bounds
    assert got is not None and got.lower is None and got.lower_of is None and "not attained" in got.reason
    assert 0.0 <= got.upper <= 1.0


def test_with_replacement_names_no_spill_beyond_max_named_copies():
    """Beyond ``MAX_NAMED`` copies G_b is not built for the pure ε (a pure-DP base's has b + 1
    outcomes: 5e6 copies cost 2.7 s and 1 GB where δ(ε) took 2 ms): ε(0) = ∞ there, finite
    (log(1 + γ(e^{bε₀} − 1)), ``test_pure_batch.py``) up to it; δ(ε) the same either side."""
    from dpaccount.pld.pairs.with_replacement import MAX_NAMED
    rr = RandomizedResponse(0.7, relation="replace-one")
    beyond = SamplingWithReplacement()(rr, 10 ** 9, MAX_NAMED + 1)
    assert beyond.get_approxDP(0.0) == math.inf
    assert 0.0 < beyond.get_approx_delta(1.0) <= -math.expm1((MAX_NAMED + 1) * math.log1p(-1e-9)) * (1 + 1e-12)
    assert SamplingWithReplacement()(rr, 10 ** 9, 100).get_approxDP(0.0) < math.inf
