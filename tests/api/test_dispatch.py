"""Public API: method dispatch (analytic / pld / rdp) and vectorised queries."""
import math

import numpy as np
import pytest
from api_fixtures import *  # noqa: F401,F403  (shared mechanisms and helpers)

import dpaccount
from dpaccount import (BinomialMechanism, Composition, DPAccountError, GaussianMechanism, GDPMechanism,
                       LaplaceMechanism, PoissonSampling, RandomizedResponse, RepresentationUnavailable)

# ==========================================================================
# 4. Method dispatch
# ==========================================================================

def test_exception_hierarchy():
    assert issubclass(RepresentationUnavailable, DPAccountError)
    assert issubclass(RepresentationUnavailable, LookupError)
    assert issubclass(dpaccount.AccuracyNotReached, DPAccountError)
    assert issubclass(dpaccount.GridTooLarge, DPAccountError)


@pytest.mark.parametrize("delta", [1e-3, 1e-5, 1e-8])
def test_gaussian_composition_dispatch(delta):
    m = gauss_comp()
    assert m.available_methods() == ["analytic", "pld", "rdp"]
    default = m.get_approxDP(delta)
    analytic = m.get_approxDP(delta, method="analytic")
    pld = m.get_approxDP(delta, method="pld")
    rdp = m.get_approxDP(delta, method="rdp")
    assert default == analytic
    assert pld >= analytic
    assert pld <= analytic * (1 + 1e-3)
    assert rdp >= analytic


@pytest.mark.parametrize("eps", [0.0, 1.0, 5.0, 12.0])
def test_gaussian_composition_delta_dispatch(eps):
    m = gauss_comp()
    analytic = m.get_approx_delta(eps, method="analytic")
    assert m.get_approx_delta(eps) == analytic
    assert m.get_approx_delta(eps, method="pld") >= analytic
    assert m.get_approx_delta(eps, method="rdp") >= analytic


def test_gaussian_composition_analytic_matches_single_gdp():
    # sqrt(10 * (1/1.1)^2 + 5 * 0.25^2)-GDP exactly
    mu = math.sqrt(10 / 1.1 ** 2 + 5 * 0.25 ** 2)
    ref = GDPMechanism(mu=mu)
    for delta in (1e-3, 1e-6):
        assert gauss_comp().get_approxDP(delta) == pytest.approx(ref.get_approxDP(delta), rel=1e-12)


def test_dpsgd_default_is_pld():
    m = dpsgd()
    assert m.available_methods()[0] == "pld"
    for delta in (1e-3, 1e-5):
        default = m.get_approxDP(delta)
        assert default == m.get_approxDP(delta, method="pld")
        assert 0.0 < default < math.inf
    with pytest.raises(RepresentationUnavailable):
        m.get_approxDP(1e-5, method="analytic")


def test_dpsgd_rdp_is_available_and_not_tighter_than_pld():
    m = dpsgd()
    assert m.available_methods() == ["pld", "rdp"]
    delta = 1e-5  # (one δ: the RDP conversion of a subsampled Gaussian is slow)
    assert m.get_approxDP(delta) == m.get_approxDP(delta, method="pld")
    assert m.get_approxDP(delta, method="pld") <= m.get_approxDP(delta, method="rdp")


def test_bare_poisson_sampled_mechanism_is_queryable():
    """A single (uncomposed) pair per direction has an exact curve: 'analytic'
    comes first, and the PLD grid agrees with it to its accuracy."""
    s = PoissonSampling()(GaussianMechanism(sigma=1.0), 0.01)
    assert s.available_methods()[:2] == ["analytic", "pld"]
    exact = s.get_approxDP(1e-5, method="analytic")
    assert 0.0 <= exact < math.inf
    assert s.get_approxDP(1e-5) == exact
    assert exact * (1 - 1e-12) <= s.get_approxDP(1e-5, method="pld") <= exact * (1 + 1e-3)


def test_randomized_response_analytic_is_its_closed_form():
    """RR(p): δ(ε) = p − e^ε(1 − p) for 0 ≤ ε < log(p/(1−p)), so ε(δ) = log((p − δ)/(1 − p));
    composed, it has no closed form here."""
    p = 0.6
    rr = RandomizedResponse(p=p)
    assert rr.available_methods()[0] == "analytic"
    for delta in (1e-9, 1e-3, 0.1):
        assert rr.get_approxDP(delta) == pytest.approx(math.log((p - delta) / (1 - p)), rel=1e-12)
    twice = Composition()([rr], [2])
    assert "analytic" not in twice.available_methods()
    with pytest.raises(RepresentationUnavailable):
        twice.get_approxDP(1e-5, method="analytic")
    with pytest.raises(RepresentationUnavailable):
        twice.get_approx_delta(1.0, method="analytic")


def test_binomial_has_no_rdp_method():
    b = BinomialMechanism(n=100, p=0.5)
    assert b.available_methods() == ["analytic", "pld"]
    with pytest.raises(RepresentationUnavailable):
        b.get_approxDP(1e-5, method="rdp")
    with pytest.raises(RepresentationUnavailable):
        b.get_approx_delta(1.0, method="rdp")
    assert 0.0 < b.get_approxDP(1e-5) < math.inf


@pytest.mark.parametrize("name", SHARED_NAMES)
def test_available_methods_are_tightest_first_and_default_uses_the_first(name):
    m = mech(name)
    methods = m.available_methods()
    assert methods, name
    assert all(x in METHOD_ORDER for x in methods)
    assert methods == sorted(methods, key=METHOD_ORDER.index)
    assert len(set(methods)) == len(methods)
    assert m.get_approxDP(1e-5) == m.get_approxDP(1e-5, method=methods[0])
    assert m.get_approx_delta(1.0) == m.get_approx_delta(1.0, method=methods[0])
    for method in methods:  # every listed method answers
        assert m.get_approxDP(1e-5, method=method) >= 0.0


@pytest.mark.parametrize("name", ["rr", "laplace", "laplace-x5", "mixed"])
def test_rdp_is_never_tighter_than_pld(name):
    m = mech(name)
    # the PLD grid is a (nearly) tight bound, the RDP conversion a loose one;
    # allow for the PLD discretisation (accuracy 1e-3)
    for delta in (1e-3, 1e-6):
        assert m.get_approxDP(delta, method="rdp") >= m.get_approxDP(delta, method="pld") * (1 - 1e-2)


def test_known_closed_forms():
    # randomized response: δ(ε) = p − e^ε (1 − p) below log(p/(1−p)), so
    # ε(δ) = log((p − δ)/(1 − p)) (the PLD is exact on RR's lattice)
    rr = RandomizedResponse(p=0.6)
    for delta in (1e-9, 1e-3, 0.1):
        exact = math.log((0.6 - delta) / 0.4)
        got = rr.get_approxDP(delta, method="pld")
        assert exact * (1 - 1e-12) <= got <= exact * (1 + 1e-9)
        assert rr.get_approx_delta(exact, method="pld") == pytest.approx(delta, rel=1e-9)
    # Laplace: δ(ε) = 1 - exp((ε - ε0)/2) on [0, ε0]
    lap = LaplaceMechanism(b=1.0)
    exact = 1 + 2 * math.log1p(-1e-5)
    got = lap.get_approxDP(1e-5, method="pld")
    assert exact <= got <= exact * (1 + 1e-3)
    # Gaussian RDP: α μ² / 2
    assert GaussianMechanism(sigma=2.0).get_RDP(3.0) == pytest.approx(3 * 0.25 / 2, rel=1e-12)


# ==========================================================================
# 5. Vectorised queries
# ==========================================================================

DELTAS = np.array([1e-3, 1e-5])
EPSS = np.array([0.0, 0.5, 3.0])
ALPHAS = np.array([1.5, 2.0, 10.0])


def _cases_with_methods():
    out = []
    for name, methods in [("gaussian-composition", ["analytic", "pld", "rdp"]),
                          ("rr", ["pld", "rdp"]), ("laplace", ["pld", "rdp"]),
                          ("binomial", ["pld"]), ("dpsgd", ["pld"]), ("mixed", ["pld", "rdp"])]:
        out.append((name, None))
        out.extend((name, m) for m in methods)
    return out


@pytest.mark.parametrize("name, method", _cases_with_methods())
def test_vectorised_get_approxDP_matches_scalar_calls(name, method):
    m = mech(name)
    out = m.get_approxDP(DELTAS, method=method)
    assert isinstance(out, np.ndarray) and out.shape == DELTAS.shape
    scalars = [m.get_approxDP(float(d), method=method) for d in DELTAS]
    assert all(type(s) is float for s in scalars)
    np.testing.assert_allclose(out, scalars, rtol=1e-12, atol=0)


@pytest.mark.parametrize("name, method", _cases_with_methods())
def test_vectorised_get_approx_delta_matches_scalar_calls(name, method):
    m = mech(name)
    out = m.get_approx_delta(EPSS, method=method)
    assert isinstance(out, np.ndarray) and out.shape == EPSS.shape
    scalars = [m.get_approx_delta(float(e), method=method) for e in EPSS]
    assert all(type(s) is float for s in scalars)
    np.testing.assert_allclose(out, scalars, rtol=1e-12, atol=0)
    assert np.all((out >= 0) & (out <= 1))


@pytest.mark.parametrize("name", ["gaussian-composition", "gdp", "rr", "laplace", "mixed"])
def test_vectorised_get_RDP_matches_scalar_calls(name):
    m = mech(name)
    out = m.get_RDP(ALPHAS)
    assert isinstance(out, np.ndarray) and out.shape == ALPHAS.shape
    scalars = [m.get_RDP(float(a)) for a in ALPHAS]
    assert all(type(s) is float for s in scalars)
    np.testing.assert_allclose(out, scalars, rtol=1e-12, atol=0)
    assert np.all(np.diff(out) >= 0)  # RDP ε(α) is non-decreasing in α


def test_binomial_rdp_is_infinite():
    out = BinomialMechanism(n=100, p=0.5).get_RDP(ALPHAS)
    assert out.shape == ALPHAS.shape and np.all(np.isinf(out))


@pytest.mark.parametrize("name", ["gaussian-composition", "rr"])
def test_shapes_lists_and_numpy_scalars(name):
    m = mech(name)
    grid = np.array([[1e-3, 1e-5], [1e-6, 1e-7]])
    out = m.get_approxDP(grid)
    assert out.shape == (2, 2)
    np.testing.assert_allclose(out.ravel(), m.get_approxDP(grid.ravel()), rtol=1e-12)
    as_list = m.get_approxDP([1e-3, 1e-5])
    assert isinstance(as_list, np.ndarray) and as_list.shape == (2,)
    for scalar in (1e-5, np.float64(1e-5), np.array(1e-5), np.float32(1e-5)):
        assert type(m.get_approxDP(scalar)) is float
    for scalar in (1, 1.0, np.float64(1.0), np.array(1.0), np.int64(1)):
        assert type(m.get_approx_delta(scalar)) is float
    for scalar in (2, 2.0, np.float64(2.0), np.array(2.0)):
        assert type(m.get_RDP(scalar)) is float


def test_vectorised_pld_answer_does_not_depend_on_the_rest_of_the_batch():
    m = gauss_comp()
    batch = m.get_approxDP(np.array([1e-3, 1e-40]), method="pld")
    assert batch[0] == pytest.approx(m.get_approxDP(1e-3, method="pld"), rel=1e-12, abs=0)
    assert batch[1] == pytest.approx(m.get_approxDP(1e-40, method="pld"), rel=1e-12, abs=0)


@pytest.mark.parametrize("method", [None, "analytic", "rdp"])
def test_empty_query_returns_empty_array(method):
    out = GaussianMechanism(sigma=1.0).get_approxDP(np.array([]), method=method)
    assert isinstance(out, np.ndarray) and out.shape == (0,)


def test_empty_query_returns_empty_array_pld():
    out = GaussianMechanism(sigma=1.0).get_approxDP(np.array([]), method="pld")
    assert isinstance(out, np.ndarray) and out.shape == (0,)
