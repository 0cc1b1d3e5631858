"""One tree under (k, b)-participation (issue 30 §4): the dynamic programme of
``tree_sensitivity.py`` against brute force over every participation pattern,
the restart formula where they coincide, and the mechanism against its Gaussian."""
import itertools
import math
import pickle

import pytest

import dpaccount as dpa
from dpaccount import GaussianMechanism, SingleTreeAggregation, TreeAggregation
from dpaccount.mechanisms.training import tree_depth
from dpaccount.mechanisms.tree_sensitivity import tree_sensitivity, tree_sensitivity_squared


def _completed_nodes(steps):
    """Every dyadic interval [k2^j + 1, (k + 1)2^j] inside [1, steps]."""
    out, size = [], 1
    while size <= steps:
        out += [(k * size + 1, (k + 1) * size) for k in range(steps // size)]
        size *= 2
    return out


def _brute_force(steps, k, b):
    """max Σ_v |S ∩ v|² over every S ⊆ [1, steps] of at most k steps, any two b or more apart."""
    nodes, best = _completed_nodes(steps), 0
    for c in range(1, k + 1):
        for s in itertools.combinations(range(1, steps + 1), c):
            if all(y - x >= b for x, y in zip(s, s[1:])):
                best = max(best, sum(sum(lo <= p <= hi for p in s) ** 2 for lo, hi in nodes))
    return best


@pytest.mark.parametrize("steps", range(1, 17))
def test_the_programme_is_the_brute_force_maximum(steps):
    for k in (1, 2, 3):
        for b in sorted({1, 2, 3, 5, 8, steps, steps + 1}):
            assert tree_sensitivity_squared(steps, k, b) == _brute_force(steps, k, b), (k, b)


def test_many_participations_against_brute_force():
    for steps, k, b in [(12, 12, 1), (15, 6, 2), (16, 5, 3), (13, 4, 4)]:
        assert tree_sensitivity_squared(steps, k, b) == _brute_force(steps, k, b)


def test_one_participation_is_the_restart_formula():
    for steps in range(1, 300):
        assert tree_sensitivity_squared(steps, 1) == tree_depth(steps)
    for steps in range(1, 300, 13):
        assert tree_sensitivity_squared(steps, 5, steps) == tree_depth(steps)  # only one fits
    assert SingleTreeAggregation(5.0, 1000, 1).get_approxDP(1e-5) >= TreeAggregation(5.0, 1000).get_approxDP(1e-5)
    assert SingleTreeAggregation(5.0, 1000, 1).sensitivity == pytest.approx(math.sqrt(10), rel=1e-15)


def test_monotone_in_participations_and_separation():
    for k in range(1, 6):
        row = [tree_sensitivity_squared(64, k, b) for b in (1, 2, 4, 8, 16)]
        assert row == sorted(row, reverse=True)
        assert tree_sensitivity_squared(64, k + 1, 4) >= tree_sensitivity_squared(64, k, 4)
    # b = 1 and k = T: every step, Σ_v |v|² = Σ_j (T/2^j)(2^j)² = T(2T − 1) for T a power of two
    assert tree_sensitivity_squared(64, 64) == 64 * 127


def test_the_mechanism_is_its_gaussian():
    tree = SingleTreeAggregation(3.0, 200, 4, 20)
    delta2 = tree_sensitivity_squared(200, 4, 20)
    assert tree.sensitivity == tree_sensitivity(200, 4, 20) >= math.sqrt(delta2)
    gauss = GaussianMechanism(3.0, sensitivity=tree.sensitivity)
    for delta in (1e-5, 1e-9):
        assert tree.get_approxDP(delta) == gauss.get_approxDP(delta)
    assert tree.get_RDP(4.0) == gauss.get_RDP(4.0)
    assert dpa.from_spec(tree.to_spec()) == tree and pickle.loads(pickle.dumps(tree)) == tree


def test_refuses_bad_input_and_work_beyond_its_cap():
    with pytest.raises(ValueError, match="participations"):
        SingleTreeAggregation(1.0, 10, 0)
    with pytest.raises(ValueError, match="min_separation"):
        SingleTreeAggregation(1.0, 10, 2, 0)
    with pytest.raises(ValueError, match="noise_multiplier"):
        SingleTreeAggregation(-1.0, 10, 2)
    with pytest.raises(ValueError, match="min_separation=2000"):
        SingleTreeAggregation(1.0, 20000, 10, 2000)


def test_deeper_trees_against_brute_force():
    """Six levels, partial nodes on the right: pairs and triples of participations."""
    for steps, k, bs in [(33, 2, (1, 3, 10, 17)), (45, 2, (1, 8, 22)), (24, 3, (1, 5, 8))]:
        for b in bs:
            assert tree_sensitivity_squared(steps, k, b) == _brute_force(steps, k, b), (steps, k, b)
