"""The a priori grid of Koskela & Honkela (Remarks 10, 12): on it the
pessimistic δ(ε) exceeds the exact value by at most the two error terms."""
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaccount.pld.grids.accountant import composed_grid
from dpaccount.pld.grids.apriori import apriori_plan
from dpaccount.pld.pairs.discrete_pair import DiscretePair
from dpaccount.pld.pairs.base import GaussianPair


def _exact_delta(p, q, k, eps):
    """δ(ε) of the k-fold product of the finite pair (p, q), by enumeration."""
    total = 0.0
    for idx in itertools.product(range(len(p)), repeat=k):
        pp, qq = np.prod(p[list(idx)]), np.prod(q[list(idx)])
        total += max(pp - math.exp(eps) * qq, 0.0)
    return total


@settings(max_examples=15, deadline=None)
@given(st.lists(st.floats(0.05, 1.0), min_size=3, max_size=3),
       st.lists(st.floats(0.05, 1.0), min_size=3, max_size=3),
       st.integers(2, 5), st.floats(0.0, 1.5))
def test_the_a_priori_bound_holds_for_random_pairs(pw, qw, k, eps):
    p, q = np.array(pw) / sum(pw), np.array(qw) / sum(qw)
    pair = DiscretePair(np.log(p), np.log(q))
    eta = 1e-4
    plan = apriori_plan(((pair, k),), eps, eta)
    grid = composed_grid(((pair, k),), tail=eta, step=plan.step)
    exact = _exact_delta(p, q, k, eps)
    got = grid.delta(eps)
    assert exact - 1e-12 <= got <= exact + plan.window_error + plan.discretisation_error + 1e-12
    assert plan.discretisation_error <= eta and plan.window_error <= eta


def test_the_plan_is_first_order_so_much_finer_than_needed():
    """The a priori step for a Gaussian and a non-lattice pair at η = 1e-6 is
    far finer than the accountant's own (certified a posteriori) step, and the
    error on it is far below its bound."""
    from dpaccount.pld.grids.accountant import plan_step
    p, q = np.array([0.5, 0.3, 0.2]), np.array([0.3, 0.3, 0.4])
    pairs = ((DiscretePair(np.log(p), np.log(q)), 3), (GaussianPair(0.5), 4))
    plan = apriori_plan(pairs, 1.0, 1e-6)
    assert plan.step < plan_step(pairs, 1e-4, 1e-6) / 10
    assert plan.points == math.ceil((plan.hi - plan.lo) / plan.step) + 1


def test_lattice_pairs_stay_exact():
    rr = DiscretePair(np.log([0.7, 0.3]), np.log([0.3, 0.7]), lattice=math.log(0.7 / 0.3))
    plan = apriori_plan(((rr, 10),), 1.0, 1e-6)
    assert plan.discretisation_error == 0.0
    assert math.isclose(rr.lattice / plan.step, round(rr.lattice / plan.step), rel_tol=1e-12)


def test_the_mechanism_reports_its_plan_and_checks_its_input():
    import dpaccount as dpa
    sgd = dpa.Composition()([dpa.PoissonSampling()(dpa.GaussianMechanism(sigma=1.1), 0.01)], [100])
    plan = sgd.apriori_plan(1.0, 1e-8)
    assert plan.discretisation_error <= 1e-8 and plan.window_error == 1e-8
    assert plan.lo < 0 < 1.0 < plan.hi
    with pytest.raises(ValueError, match="eta"):
        sgd.apriori_plan(1.0, 0.0)
    with pytest.raises(ValueError, match="direction"):
        sgd.apriori_plan(1.0, 1e-8, direction="sideways")
