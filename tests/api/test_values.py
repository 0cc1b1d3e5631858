"""Mechanisms are values: they pickle (for process pools), compare and hash by
type and parameters (equal parts of a composition merge), and long
compositions keep readable names, reprs and plain parameter keys."""
import pickle

import numpy as np
import pytest
from scipy import stats

import dpaccount as dpa
from dpaccount import (ApproxDPMechanism, BinomialMechanism, Composition, ContinuousMechanism,
                       DiscreteGaussianMechanism, DiscreteLaplaceMechanism, DiscreteMechanism, Discretise,
                       ExponentialMechanism, GaussianMechanism, GDPMechanism, GroupPrivacy, LaplaceMechanism,
                       MixtureOfGaussiansMechanism, PoissonSampling, PureDPMechanism, RandomAllocation,
                       RandomizedResponse, RepeatAndSelect, SingleTreeAggregation, SubsetSampling, ToReplaceOne,
                       TreeAggregation, ZCDPMechanism)


def zoo():
    """One of every public mechanism and of every transformer's result (name -> factory)."""
    g = lambda: GaussianMechanism(sigma=1.1)
    return {
        "gaussian": g,
        "gdp": lambda: GDPMechanism(mu=0.7),
        "laplace": lambda: LaplaceMechanism(b=1.5, sensitivity=2.0),
        "rr": lambda: RandomizedResponse(p=0.7),
        "binomial": lambda: BinomialMechanism(n=20, p=0.5),
        "discrete-gaussian": lambda: DiscreteGaussianMechanism(sigma=3.0),
        "discrete-laplace": lambda: DiscreteLaplaceMechanism(t=2.0),
        "pure": lambda: PureDPMechanism(eps=0.5),
        "approx": lambda: ApproxDPMechanism(eps=0.5, delta=1e-6),
        "exponential": lambda: ExponentialMechanism(eps=1.0),
        "discrete": lambda: DiscreteMechanism([0.5, 0.3, 0.2], [0.2, 0.3, 0.5]),
        "continuous": lambda: ContinuousMechanism(stats.norm(1.0, 1.0), stats.norm(0.0, 1.0)),
        "replace-one": lambda: GaussianMechanism(sigma=2.0, relation="replace-one"),
        "composition": lambda: Composition()([g(), LaplaceMechanism(b=2.0)], [3, 2]),
        "poisson": lambda: PoissonSampling()(g(), 0.01),
        "dpsgd": lambda: Composition()([PoissonSampling()(g(), 0.01)], [100]),
        "subset": lambda: SubsetSampling()(RandomizedResponse(p=0.7, relation="replace-one"), 0.1),
        "discretise": lambda: Discretise()(RandomizedResponse(p=0.7), 1e-3),
        "group": lambda: GroupPrivacy()(LaplaceMechanism(b=1.0), 2),
        "group-rr": lambda: GroupPrivacy()(RandomizedResponse(p=0.7), 3),
        "to-replace-one": lambda: ToReplaceOne()(BinomialMechanism(n=20, p=0.5)),
        "mixture-of-gaussians": lambda: MixtureOfGaussiansMechanism(2.0, [0, 1, 2], [0.9, 0.07, 0.03]),
        "zcdp": lambda: ZCDPMechanism(rho=0.1, xi=0.01),
        "tree-aggregation": lambda: TreeAggregation(noise_multiplier=5.0, steps=100, epochs=2),
        "single-tree-aggregation": lambda: SingleTreeAggregation(5.0, steps=100, participations=3, min_separation=10),
        "repeat-and-select": lambda: RepeatAndSelect()(Composition()([PoissonSampling()(g(), 0.01)], [10]), 5, 1),
        "allocation": lambda: RandomAllocation()(g(), 20),
    }


ZOO = zoo()


@pytest.mark.parametrize("name", sorted(ZOO))
def test_every_mechanism_pickles_and_answers_the_same(name):
    m = ZOO[name]()
    before = m.get_approxDP(1e-5)  # fills the caches: they must not go into the pickle
    back = pickle.loads(pickle.dumps(m))
    assert type(back) is type(m) and back == m and hash(back) == hash(m)
    assert back.name == m.name and list(back.params) == list(m.params) and back.relation == m.relation
    assert back.get_approxDP(1e-5) == before
    with pytest.raises(AttributeError):
        back.brand_new = 1  # still immutable


@pytest.mark.parametrize("name", sorted(ZOO))
def test_equal_by_type_and_parameters(name):
    a, b = ZOO[name](), ZOO[name]()
    assert a is not b and a == b and hash(a) == hash(b)
    assert len({a, b}) == 1


def test_different_parameters_types_or_relations_differ():
    distinct = [GaussianMechanism(1.1), GaussianMechanism(1.2), GaussianMechanism(1.1, sensitivity=2.0),
                GaussianMechanism(1.1, relation="replace-one"), GDPMechanism(1 / 1.1),
                PoissonSampling()(GaussianMechanism(1.1), 0.01), PoissonSampling()(GaussianMechanism(1.1), 0.02),
                Composition()([GaussianMechanism(1.1)], [2]), Composition()([GaussianMechanism(1.1)], [3])]
    for i, a in enumerate(distinct):
        for b in distinct[i + 1:]:
            assert a != b, (a, b)
    assert GaussianMechanism(1.1) != "Gaussian"


def test_equal_parts_of_a_composition_merge():
    m = Composition()([GaussianMechanism(1.1), LaplaceMechanism(1.0), GaussianMechanism(1.1)], [2, 1, 3])
    assert len(m.parts) == 2 and dict(m.parts)[GaussianMechanism(1.1)] == 5
    assert m == Composition()([GaussianMechanism(1.1), LaplaceMechanism(1.0)], [5, 1])
    steps = [PoissonSampling()(GaussianMechanism(1.1), 0.01) for _ in range(50)]
    assert len(Composition()(steps, [1] * 50).parts) == 1


def test_a_long_schedule_has_a_readable_name_repr_and_plain_keys():
    sigmas = np.linspace(3.0, 2.0, 11)
    m = Composition()([PoissonSampling()(GaussianMechanism(s), 0.02) for s in sigmas], [500] * 11)
    assert m.name == "Compose:{PoissonSample:Gaussian ×11: 5500}"
    text = repr(m)
    assert "11 parts, 5500 steps" in text and "sigma=3.0" in text and "+8 more" in text and len(text) < 400
    assert m.params["parts[0].sigma"] == 3.0 and m.params["parts[10].q"] == 0.02
    assert m.params["parts[3].count"] == 500
    one = Composition()([PoissonSampling()(GaussianMechanism(1.1), 0.01)], [100])
    assert dict(one.params) == {"sigma": 1.1, "sensitivity": 1.0, "q": 0.01, "count": 100}


def test_pickled_mechanisms_go_through_a_process_pool():
    from concurrent.futures import ProcessPoolExecutor
    ms = [Composition()([PoissonSampling()(GaussianMechanism(s), 0.01)], [50]) for s in (1.0, 2.0)]
    with ProcessPoolExecutor(max_workers=2) as pool:
        got = list(pool.map(_epsilon, ms))
    assert got == [m.get_approxDP(1e-5) for m in ms]


def _epsilon(m):
    return m.get_approxDP(1e-5)


def test_set_cache_limit_validates_and_bounds_memory():
    with pytest.raises(ValueError, match="nbytes"):
        dpa.set_cache_limit(-1)
    with pytest.raises((TypeError, ValueError), match="nbytes"):
        dpa.set_cache_limit("a lot")
    from dpaccount.pld.grids.cache import GRIDS, DEFAULT_LIMIT
    try:
        dpa.set_cache_limit(4 * 2 ** 20)
        for s in (1.0, 1.5, 2.0, 2.5):
            Composition()([PoissonSampling()(GaussianMechanism(s), 0.01)], [300]).get_approx_delta(1.0)
            assert GRIDS.nbytes <= 4 * 2 ** 20
        dpa.clear_cache()
        assert GRIDS.nbytes == 0 and len(GRIDS) == 0
    finally:
        dpa.set_cache_limit(DEFAULT_LIMIT)
