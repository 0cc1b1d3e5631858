"""Neighbouring relations: reported on every mechanism, mixed relations refused,
and the symmetric replace-one pair of two finite pairs (``symmetric_hull_pair``)
checked against max(H(P||Q), H(Q||P)) computed from the outcome lists."""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from oracles import float_sum_slack
from scipy import stats

from dpaccount.mechanisms.discrete import (ApproxDPMechanism, DiscreteGaussianMechanism, DiscreteLaplaceMechanism,
                                           ExponentialMechanism, PureDPMechanism)
from dpaccount.mechanisms.standard import (BinomialMechanism, GaussianMechanism, GDPMechanism,
                                           LaplaceMechanism, RandomizedResponse)
from dpaccount.pld.pairs.discrete_pair import DiscretePair
from dpaccount.pld.pairs.symmetric_hull import symmetric_hull_pair
from dpaccount.relations import (ADD_REMOVE, REPLACE_ONE, GroupRelation, Relation, check_relation,
                                 group_relation)
from dpaccount.transformers.composition import Composition
from dpaccount.transformers.discretise import Discretise
from dpaccount.transformers.group_privacy import GroupPrivacy, ToReplaceOne
from dpaccount.transformers.poisson_sampling import PoissonSampling
from dpaccount.transformers.subset_sampling import SubsetSampling

ZOO = [lambda r: GaussianMechanism(1.0, relation=r), lambda r: GDPMechanism(0.5, relation=r),
       lambda r: LaplaceMechanism(1.0, relation=r), lambda r: RandomizedResponse(0.7, relation=r),
       lambda r: BinomialMechanism(8, 0.5, relation=r)]
SYMMETRIC_PAIRS = [lambda r: DiscreteGaussianMechanism(2.0, relation=r), lambda r: DiscreteLaplaceMechanism(1.5, 2, r),
                   lambda r: PureDPMechanism(0.8, relation=r), lambda r: ApproxDPMechanism(0.8, 1e-4, r),
                   lambda r: ExponentialMechanism(1.2, relation=r)]
ZOO += SYMMETRIC_PAIRS


# ---------------------------------------------------------------- reporting
@pytest.mark.parametrize("make", ZOO)
def test_every_zoo_mechanism_reports_its_relation(make):
    assert make(None).relation is ADD_REMOVE
    assert make("add/remove").relation is ADD_REMOVE and "relation" not in make(None).params
    m = make("replace-one")
    assert m.relation is REPLACE_ONE and m.params["relation"] == "replace-one"
    assert make(REPLACE_ONE).relation is REPLACE_ONE


def test_transformed_mechanisms_report_their_relation():
    g, g1 = GaussianMechanism(1.0), GaussianMechanism(1.0, relation="replace-one")
    assert DiscreteGaussianMechanism(2.0).relation is ADD_REMOVE
    assert Composition()([g, LaplaceMechanism(1.0)], [2, 3]).relation is ADD_REMOVE
    assert Composition()([g1, RandomizedResponse(0.6, relation="replace-one")], [1, 1]).relation is REPLACE_ONE
    assert PoissonSampling()(g, 0.1).relation is ADD_REMOVE
    assert SubsetSampling()(g1, 0.1).relation is REPLACE_ONE
    assert Composition()([SubsetSampling()(g1, 0.1)], [5]).relation is REPLACE_ONE
    assert Discretise()(g1).relation is REPLACE_ONE
    assert ToReplaceOne()(g).relation is REPLACE_ONE
    assert GroupPrivacy()(g, 1).relation is ADD_REMOVE
    assert GroupPrivacy()(g, 3).relation == GroupRelation(ADD_REMOVE, 3)
    assert str(GroupPrivacy()(g1, 2).relation) == "2-fold replace-one"
    assert GroupPrivacy()(GroupPrivacy()(g, 2), 3).relation == GroupRelation(ADD_REMOVE, 6)


def test_relation_values_print_and_compare_plainly():
    assert str(ADD_REMOVE) == "add/remove" and REPLACE_ONE == "replace-one"
    assert check_relation("relation", "replace-one") is REPLACE_ONE
    assert group_relation(REPLACE_ONE, 1) is REPLACE_ONE
    assert group_relation(GroupRelation(REPLACE_ONE, 2), 2) == GroupRelation(REPLACE_ONE, 4)
    assert GroupRelation(ADD_REMOVE, 2) != REPLACE_ONE and GroupRelation(ADD_REMOVE, 2) != ADD_REMOVE
    assert hash(GroupRelation(ADD_REMOVE, 2)) == hash(GroupRelation(ADD_REMOVE, 2))
    assert isinstance(ADD_REMOVE, Relation)


@pytest.mark.parametrize("spelling,relation", [
    ("add/remove", ADD_REMOVE), ("add-remove", ADD_REMOVE), ("add_remove", ADD_REMOVE), ("Add Remove", ADD_REMOVE),
    ("unbounded", ADD_REMOVE), ("replace-one", REPLACE_ONE), ("replace_one", REPLACE_ONE),
    ("REPLACE ONE", REPLACE_ONE), ("substitution", REPLACE_ONE), ("bounded", REPLACE_ONE),
    ("2-fold add/remove", GroupRelation(ADD_REMOVE, 2)), ("3-fold replace_one", GroupRelation(REPLACE_ONE, 3)),
])
def test_common_spellings_are_accepted(spelling, relation):
    assert check_relation("relation", spelling) == relation
    assert check_relation("relation", str(relation)) == relation  # a relation's string reads back
    assert GaussianMechanism(1.0, relation=spelling).relation == relation


@pytest.mark.parametrize("make", SYMMETRIC_PAIRS)
def test_symmetric_pairs_under_replace_one_dominate_both_orders(make):
    """Under replace-one each direction carries the pair itself: it must have
    the curve of its reverse at every ε (ε < 0 too), and the answers are the
    add/remove ones (the worse direction is the same curve)."""
    m = make("replace-one")
    pair = m.pairs.remove[0][0]
    assert m.pairs.add[0][0] == pair
    eps = np.linspace(-3.0, 3.0, 25)
    np.testing.assert_allclose(pair.delta(eps), pair.reverse().delta(eps), rtol=1e-9, atol=1e-15)
    assert m.get_approx_delta(0.5) == pytest.approx(make(None).get_approx_delta(0.5), rel=1e-9)
    assert SubsetSampling()(m, 0.1).get_approxDP(1e-5) <= m.get_approxDP(1e-5)


def test_bad_relations_are_refused_by_name():
    with pytest.raises(ValueError, match="relation.*'swap'"):
        GaussianMechanism(1.0, relation="swap")
    with pytest.raises(TypeError, match="relation"):
        LaplaceMechanism(1.0, relation=2)


# ---------------------------------------------------------------- refusals
def test_composing_different_relations_raises_naming_both():
    g, g1 = GaussianMechanism(1.0), GaussianMechanism(2.0, relation="replace-one")
    with pytest.raises(ValueError, match="add/remove.*replace-one"):
        Composition()([g, g1], [1, 1])
    with pytest.raises(ValueError, match="replace-one.*add/remove"):
        Composition()([g1, g], [1, 1])


def test_composing_a_group_guarantee_with_a_one_step_one_raises():
    g = GaussianMechanism(1.0)
    with pytest.raises(ValueError, match="2-fold add/remove"):
        Composition()([GroupPrivacy()(g, 2), g], [1, 1])
    assert Composition()([GroupPrivacy()(g, 2), GroupPrivacy()(LaplaceMechanism(1.0), 2)],
                         [1, 1]).relation == GroupRelation(ADD_REMOVE, 2)



def test_groups_of_groups_multiply_their_relation():
    """k steps of a j-fold relation are jk steps: a group of 3 of a group of 2 is 6-fold,
    composes with 6-fold guarantees and with no other."""
    g = GaussianMechanism(1.0)
    nested = GroupPrivacy()(GroupPrivacy()(g, 2), 3)
    assert nested.relation == GroupRelation(ADD_REMOVE, 6) == group_relation(GroupRelation(ADD_REMOVE, 2), 3)
    assert Composition()([nested, GroupPrivacy()(g, 6)], [1, 1]).relation == GroupRelation(ADD_REMOVE, 6)
    with pytest.raises(ValueError, match="5-fold add/remove"):
        Composition()([nested, GroupPrivacy()(g, 5)], [1, 1])

def test_poisson_sampling_needs_add_remove():
    with pytest.raises(ValueError, match="replace-one"):
        PoissonSampling()(GaussianMechanism(1.0, relation="replace-one"), 0.1)
    with pytest.raises(ValueError, match="2-fold"):
        PoissonSampling()(GroupPrivacy()(GaussianMechanism(1.0), 2), 0.1)


def test_subset_sampling_needs_replace_one():
    """Refused, not converted: the replace-one sensitivity of an add/remove
    mechanism's query is not known (1 for counts, 2Δ in general)."""
    with pytest.raises(ValueError, match="add/remove.*ToReplaceOne"):
        SubsetSampling()(GaussianMechanism(1.0), 0.1)
    assert SubsetSampling()(ToReplaceOne()(GaussianMechanism(1.0)), 0.1).relation is REPLACE_ONE


# ---------------------------------------------------------------- symmetric hull
def hockey(p, q, eps):
    return math.fsum(max(a - math.exp(eps) * b, 0.0) for a, b in zip(p, q))


def target(p, q, eps):
    return max(hockey(p, q, eps), hockey(q, p, eps))


def make_pair(p, q):
    with np.errstate(divide="ignore"):
        return DiscretePair(np.log(p), np.log(q))


def check_hull(p, q, hull, tol):
    atoms = hull.atoms[0]
    grid = np.concatenate((np.linspace(-4, 4, 81), atoms, -atoms, atoms + 1e-9, atoms - 1e-9, [0.0]))
    grid = grid[np.abs(grid) < 30]
    ours = hull.delta(grid)
    exact = np.array([target(p, q, e) for e in grid])
    # exact: a float brute force (a second route), so within its own rounding (oracles.py)
    assert np.all(ours >= exact - float_sum_slack(len(p)))
    np.testing.assert_allclose(ours, exact, atol=tol, rtol=0)
    # symmetric: the reversed pair has the same curve and mirrored atoms
    np.testing.assert_allclose(hull.reverse().delta(grid), ours, atol=1e-15, rtol=1e-13)
    loss, pm, qm = hull.atoms
    order = np.argsort(-loss)
    np.testing.assert_allclose(loss[order], -loss, atol=1e-12)
    np.testing.assert_allclose(pm[order], qm, rtol=1e-12, atol=1e-300)
    assert abs(hull.p_inf - hull.q_ninf) <= 1e-15
    assert pm.sum() + hull.p_inf <= 1 + 1e-12 and qm.sum() + hull.q_ninf <= 1 + 1e-12


# zero or not tiny: a subnormal q makes e^loss overflow, which the hull refuses (ValueError, tested below)
probs = st.lists(st.one_of(st.just(0.0), st.floats(1e-9, 1.0)), min_size=2, max_size=7)


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(probs, probs, st.booleans())
def test_symmetric_hull_equals_the_worse_order(a, b, zeros):
    n = min(len(a), len(b))
    p, q = np.array(a[:n]) + 1e-3, np.array(b[:n]) + (0.0 if zeros else 1e-3)
    q[0] += 1e-3  # zeros=True: outcomes with q = 0 put P-mass at +∞
    p, q = p / p.sum(), q / q.sum()
    assume(target(p, q, 0.0) < 0.99)
    hull = symmetric_hull_pair(make_pair(p, q), make_pair(q, p))
    check_hull(p, q, hull, tol=1e-10)  # the rounding pads grow with e^loss·u (seen: ≤ 4e-12)


def test_hull_drops_kinks_left_by_rounding():
    """Bin(1, θ) + {0, 1}: the worse order's curve is flat at max(θ, 1 − θ) for
    ε ≥ 0, so the hull has no finite atom but 0 (it would otherwise keep
    ~1e-15 masses where the two curves meet, and a grid planned from the loss
    variance would become absurdly fine), and says every finite loss is on
    any lattice."""
    theta = 0.4344644014317443
    p, q = np.array([0.0, 1 - theta, theta]), np.array([1 - theta, theta, 0.0])
    hull = symmetric_hull_pair(make_pair(p, q), make_pair(q, p))
    check_hull(p, q, hull, tol=1e-12)
    assert list(hull.atoms[0]) == [0.0] and hull.lattice == 1.0


def test_binomial_under_replace_one_is_the_hull_of_both_shifts():
    """Bin(n, θ) + count, shifts ±1: the replace-one pair's curve is the worse shift at every ε."""
    n, theta = 12, 0.3
    k = np.arange(n + 2)
    p, q = stats.binom.pmf(k - 1, n, theta), stats.binom.pmf(k, n, theta)
    m = BinomialMechanism(n, theta, relation="replace-one")
    rem, add = m.pairs.remove[0][0], m.pairs.add[0][0]
    assert rem == add
    check_hull(p, q, rem, tol=1e-12)
    eps = np.linspace(0, 3, 13)
    np.testing.assert_allclose(m.get_approx_delta(eps), [target(p, q, e) for e in eps], atol=1e-12)


def test_hull_refuses_pairs_no_symmetric_pair_lies_above():
    """Two pairs whose worse curve needs more mass than a symmetric pair has."""
    p, q = np.array([0.5, 0.5]), np.array([0.5, 0.5])
    with pytest.raises(ValueError, match="no symmetric pair"):
        symmetric_hull_pair(make_pair(np.array([1.0, 0.0]), np.array([0.0, 1.0])), make_pair(p, q))


def test_hull_refuses_losses_beyond_the_float_range():
    p, q = np.array([0.5, 0.5]), np.array([1.0 - 5e-324, 5e-324])
    with pytest.raises(ValueError, match="float range"):
        symmetric_hull_pair(make_pair(p, q), make_pair(q, p))
