"""Public API: construction, autodp-style names and params, immutability."""
from collections.abc import Mapping, MutableMapping

import numpy as np
import pytest
from api_fixtures import *  # noqa: F401,F403  (shared mechanisms and helpers)

from dpaccount import (BinomialMechanism, Composition, GaussianMechanism, GDPMechanism, LaplaceMechanism,
                       Mechanism, PoissonSampling, RandomizedResponse)

# ==========================================================================
# 1. Construction & names
# ==========================================================================

@pytest.mark.parametrize("factory, name, params", [
    (lambda: GaussianMechanism(sigma=1.1), "Gaussian", {"sigma": 1.1, "sensitivity": 1.0}),
    (lambda: GaussianMechanism(sigma=2, sensitivity=0.5), "Gaussian", {"sigma": 2.0, "sensitivity": 0.5}),
    (lambda: LaplaceMechanism(b=1.0), "Laplace", {"b": 1.0, "sensitivity": 1.0}),
    (lambda: RandomizedResponse(p=0.6), "RandomizedResponse", {"p": 0.6}),
    (lambda: GDPMechanism(mu=1.0), "GDP", {"mu": 1.0}),
    (lambda: BinomialMechanism(n=100, p=0.5), "Binomial", {"n": 100, "p": 0.5, "sensitivity": 1}),
])
def test_basic_mechanisms_construct_with_name_and_params(factory, name, params):
    m = factory()
    assert isinstance(m, Mechanism)
    assert m.name == name
    assert isinstance(m.params, Mapping)
    assert dict(m.params) == params
    assert name in repr(m)


def test_numpy_and_int_parameters_are_accepted_and_stored_as_python_numbers():
    m = GaussianMechanism(sigma=np.float64(1.5), sensitivity=2)
    assert m.params["sigma"] == 1.5 and type(m.params["sigma"]) is float
    assert m.params["sensitivity"] == 2.0
    b = BinomialMechanism(n=np.int64(10), p=0.25, sensitivity=3.0)
    assert b.params["n"] == 10 and type(b.params["n"]) is int
    assert b.params["sensitivity"] == 3 and type(b.params["sensitivity"]) is int


def test_poisson_sampling_name_and_params():
    s = PoissonSampling()(GaussianMechanism(sigma=5.0), 0.01)
    assert isinstance(s, Mechanism)
    assert s.name == "PoissonSample:Gaussian"
    values = list(s.params.values())
    assert 5.0 in values and 0.01 in values
    assert any("sigma" in k for k in s.params)


def test_composition_name_and_params_of_dpsgd():
    m = Composition()([PoissonSampling()(GaussianMechanism(sigma=5.0), 0.01)], [10000])
    assert isinstance(m, Mechanism)
    assert m.name == "Compose:{PoissonSample:Gaussian: 10000}"
    assert isinstance(m.params, Mapping)
    assert not isinstance(m.params, MutableMapping)
    values = list(m.params.values())
    assert 5.0 in values and 0.01 in values
    sigma_keys = [k for k, v in m.params.items() if v == 5.0]
    assert any("sigma" in k for k in sigma_keys)


def test_heterogeneous_composition_name():
    m = Composition()([GaussianMechanism(sigma=1.0), LaplaceMechanism(b=2.0)], [3, 2])
    assert m.name == "Compose:{Gaussian: 3, Laplace: 2}"
    assert 1.0 in m.params.values() and 2.0 in m.params.values()


def test_composition_accepts_tuples_arrays_and_integral_counts():
    g = GaussianMechanism(sigma=2.0)
    assert Composition()((g,), (3,)).name == "Compose:{Gaussian: 3}"
    assert Composition()([g], np.array([3])).name == "Compose:{Gaussian: 3}"
    assert Composition()([g], [3.0]).name == "Compose:{Gaussian: 3}"


def test_nested_composition_equals_flat_composition():
    g = GaussianMechanism(sigma=2.0)
    nested = Composition()([Composition()([g], [3])], [2])
    flat = Composition()([g], [6])
    assert nested.name == "Compose:{Compose:{Gaussian: 3}: 2}"
    assert nested.get_approxDP(1e-5) == pytest.approx(flat.get_approxDP(1e-5), rel=1e-12)


def test_composition_params_keep_every_parts_parameters():
    m = Composition()([GaussianMechanism(sigma=1.1), GaussianMechanism(sigma=2.0, sensitivity=0.5)], [10, 5])
    values = list(m.params.values())
    assert 1.1 in values
    assert 2.0 in values and 0.5 in values


# ==========================================================================
# 2. Immutability
# ==========================================================================

IMMUTABLE_CASES = [
    (lambda: GaussianMechanism(sigma=1.1), "sigma"),
    (lambda: LaplaceMechanism(b=1.0), "b"),
    (lambda: RandomizedResponse(p=0.6), "p"),
    (lambda: GDPMechanism(mu=1.0), "mu"),
    (lambda: BinomialMechanism(n=100, p=0.5), "n"),
    (lambda: PoissonSampling()(GaussianMechanism(sigma=1.0), 0.01), "q"),
    (lambda: Composition()([GaussianMechanism(sigma=1.0)], [3]), "parts"),
]


@pytest.mark.parametrize("factory, attr", IMMUTABLE_CASES)
def test_setting_attributes_raises(factory, attr):
    m = factory()
    before = getattr(m, attr)
    for key, value in ((attr, 123), ("name", "x"), ("params", {}), ("brand_new_attribute", 1)):
        with pytest.raises(AttributeError):
            setattr(m, key, value)
    assert getattr(m, attr) == before
    assert not hasattr(m, "brand_new_attribute")


@pytest.mark.parametrize("factory, attr", IMMUTABLE_CASES)
def test_params_mapping_cannot_be_mutated(factory, attr):
    m = factory()
    snapshot = dict(m.params)
    key = next(iter(m.params))
    with pytest.raises(TypeError):
        m.params[key] = 99.0
    with pytest.raises(TypeError):
        m.params["new"] = 1.0
    with pytest.raises(TypeError):
        del m.params[key]
    with pytest.raises(AttributeError):
        m.params.clear()
    assert dict(m.params) == snapshot


def test_params_do_not_alias_the_inputs_of_composition():
    g = GaussianMechanism(sigma=1.0)
    mechs, counts = [g], [3]
    m = Composition()(mechs, counts)
    mechs.append(LaplaceMechanism(b=1.0))
    counts[0] = 50
    counts.append(1)
    assert m.name == "Compose:{Gaussian: 3}"


@pytest.mark.parametrize("factory, attr", IMMUTABLE_CASES)
def test_deleting_attributes_raises(factory, attr):
    m = factory()
    before = getattr(m, attr)
    with pytest.raises(AttributeError):
        delattr(m, attr)
    with pytest.raises(AttributeError):
        del m.params
    assert getattr(m, attr) == before
