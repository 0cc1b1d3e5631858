"""The pairs' lattice precision ρ (dpaccount/precision.py), an explicit argument: ε queries
start coarse, a certified interval too wide for its accuracy is rebuilt finer, every
precision keeps its own cache (a refused query changes no answer), and a mechanism's
pairs depend on no ambient state."""
import pathlib

import numpy as np
import pytest

import dpaccount
from dpaccount import AccuracyNotReached, Composition, GaussianMechanism, PoissonSampling, RandomAllocation
from dpaccount.mechanisms.absolute_accuracy import AbsoluteAccuracy
from dpaccount.precision import DEFAULT_RHO, EPSILON_RHO, FLOOR_RHO, epsilon_rho, finer
from dpaccount.queries.at import At
from dpaccount.queries.route import bounds


def _width(b):
    return (b.upper - b.lower) / b.upper


def _at(m, rho, query, value, accuracy):
    """The certified interval of ``query`` at ``value`` with the pairs built at ``rho``."""
    return bounds(At(m, rho), np.array([value]), True, None, accuracy, query)


def test_epsilon_queries_start_coarse_refine_and_stop_at_the_floor():
    assert epsilon_rho(1e-3) == EPSILON_RHO and epsilon_rho(0.5) == EPSILON_RHO
    assert epsilon_rho(1e-4) == 1e-4 and epsilon_rho(1e-9) == FLOOR_RHO
    assert epsilon_rho("x") == EPSILON_RHO  # (the query's validation then refuses it)
    assert finer(EPSILON_RHO) == pytest.approx(EPSILON_RHO / 10) and finer(DEFAULT_RHO) == pytest.approx(FLOOR_RHO)
    assert finer(FLOOR_RHO) is None


def test_pairs_depend_only_on_the_mechanism_and_the_precision_asked():
    """``m.pairs`` is the pairs at the default ρ, before, inside and after an ε query; an
    ε query's pairs are those at its accuracy, each ρ's built once."""
    m = RandomAllocation()(GaussianMechanism(sigma=1.1), 50)
    before = m.pairs
    assert before is m.pairs_at(DEFAULT_RHO)
    m.get_approxDP(1e-5)
    assert m.pairs is before and m.pairs_at(EPSILON_RHO) is m.pairs_at(1e-3) is not before
    assert (before.remove[0][0].key()[-1], m.pairs_at(EPSILON_RHO).remove[0][0].key()[-1]) == (DEFAULT_RHO, EPSILON_RHO)
    with pytest.raises(ValueError, match="rho"):
        m.pairs_at(0.0)


@pytest.mark.parametrize("epochs", [1, 3])
def test_an_interval_too_wide_is_rebuilt_finer_and_brackets_the_coarse_ones(epochs):
    """One epoch answers analytically (the interval is the pairs' alone), three through grids.
    Built at ρ = 1e-2 the interval is wider than the default accuracy; asked for it there, the
    query rebuilds the pairs at 1e-3 and meets it. Asked for 1e-4, an ε query starts at
    ρ = 1e-4 and meets it; every certified interval, and the plain answer, agree with it."""
    m = Composition()([RandomAllocation()(GaussianMechanism(sigma=1.1), 234)], [epochs])
    loose = _at(m, 1e-2, "get_approxDP", 1e-5, 0.5)
    refined = _at(m, 1e-2, "get_approxDP", 1e-5, 1e-3)
    assert _width(refined) <= 1e-3 < _width(loose)
    fine = m.get_approxDP_bounds(1e-5, accuracy=1e-4)
    assert _width(fine) <= 1e-4 < _width(m.get_approxDP_bounds(1e-5))
    for b in (loose, refined):  # all hold the exact ε
        assert b.lower <= fine.upper and fine.lower <= b.upper
    assert fine.lower <= m.get_approxDP(1e-5) <= fine.lower * (1 + 1e-3)
    assert fine.lower <= m.get_approxDP(1e-5, accuracy=1e-4) <= fine.lower * (1 + 1e-4)


def test_a_refused_query_changes_no_answer():
    m = RandomAllocation()(GaussianMechanism(sigma=1.1), 50)
    before = m.get_approxDP(np.array([1e-6, 1e-3]))
    with pytest.raises(AccuracyNotReached):
        m.get_approxDP_bounds(1e-6, accuracy=1e-12)
    assert np.array_equal(m.get_approxDP(np.array([1e-6, 1e-3])), before)


def test_the_common_part_of_two_certified_intervals():
    from dpaccount import Bounds
    from dpaccount.queries.intervals import intersection as _intersection
    a, b = Bounds(1.0, 3.0, "pld", 0.1), Bounds(2.0, 4.0, "pld", 0.05)
    assert _intersection(a, b) == Bounds(2.0, 3.0, "pld", 0.05)
    arrays = _intersection(Bounds(np.array([1.0, 5.0]), np.array([3.0, 9.0]), "pld"),
                           Bounds(np.array([2.0, 4.0]), np.array([4.0, 8.0]), "pld"))
    assert np.array_equal(arrays.lower, [2.0, 5.0]) and np.array_equal(arrays.upper, [3.0, 8.0])
    assert _intersection(a, Bounds(None, 4.0, "pld", None, False, None, "no lower end")) == a  # review d
    with pytest.raises(RuntimeError, match="do not meet"):
        _intersection(a, Bounds(3.5, 4.0, "pld"))


@pytest.mark.slow
def test_a_refused_interval_is_the_common_part_of_every_precision_tried():
    """Ten 1000-step epochs at σ = 0.9, δ(1): at ρ = 1e-5 the lattice meets its caps and its
    interval is 1.2 % wide, at 1e-4 0.22 %; the refusal carries their common part."""
    m = Composition()([RandomAllocation()(GaussianMechanism(sigma=0.9), 1000)], [10])
    with pytest.raises(AccuracyNotReached) as err:
        m.get_approx_delta_bounds(1.0)
    got = err.value.bounds
    finest = _at(m, FLOOR_RHO, "get_approx_delta", 1.0, 0.5)
    assert finest.lower <= got.lower <= got.upper <= finest.upper and _width(got) < 0.5 * _width(finest)


def _floats(key):
    """Every float inside a pair's (nested) key."""
    if isinstance(key, tuple):
        return {x for part in key for x in _floats(part)}
    return {key} if isinstance(key, float) else set()


@pytest.mark.parametrize("wrap", [lambda m: Composition()([m, GaussianMechanism(sigma=2.0)], [2, 1]),
                                  lambda m: PoissonSampling()(m, 0.5),
                                  lambda m: Composition()([PoissonSampling()(m, 0.5)], [3]),
                                  lambda m: AbsoluteAccuracy(m, 1e-6)],
                         ids=["composition", "poisson", "composition-of-poisson", "absolute-accuracy"])
def test_transformers_hand_the_precision_to_their_parts(wrap):
    """A random allocation's epochs inside another transformer's pairs are built at the ρ
    asked of the whole (``Mechanism._pairs_at``), not at a default of their own."""
    m = wrap(RandomAllocation()(GaussianMechanism(sigma=1.1), 20))
    for rho, other in ((EPSILON_RHO, DEFAULT_RHO), (DEFAULT_RHO, EPSILON_RHO)):
        floats = _floats(tuple(p.key() for p, _ in m.pairs_at(rho).remove))
        assert rho in floats and other not in floats


def test_no_module_keeps_a_setting_in_ambient_state():
    """Settings are arguments: only progress reporting lives in a context variable."""
    root = pathlib.Path(dpaccount.__file__).parent
    holders = sorted(str(p.relative_to(root)) for p in root.rglob("*.py") if "ContextVar" in p.read_text())
    assert holders == ["progress.py"]
