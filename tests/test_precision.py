"""The pairs' lattice precision ρ (dpaccount/precision.py): ε queries start coarse, a
certified interval too wide for its accuracy is rebuilt finer, and every precision keeps
its own cache (a refused query changes no answer)."""
import numpy as np
import pytest

from dpaccount import AccuracyNotReached, Composition, GaussianMechanism, RandomAllocation
from dpaccount.precision import DEFAULT_RHO, EPSILON_RHO, FLOOR_RHO, at, can_refine, finer, for_epsilon, lattice_rho


def _width(b):
    return (b.upper - b.lower) / b.upper


def test_contexts_start_coarse_for_epsilon_refine_and_stop_at_the_floor():
    assert lattice_rho() == DEFAULT_RHO
    with for_epsilon():
        assert lattice_rho() == EPSILON_RHO
        with for_epsilon(1e-4):  # inside a query: its ρ stands
            assert lattice_rho() == EPSILON_RHO
        with finer():
            with for_epsilon():  # an ε query inside a refinement keeps the finer ρ
                assert lattice_rho() == pytest.approx(EPSILON_RHO / 10)
    assert lattice_rho() == DEFAULT_RHO
    with for_epsilon(1e-4):
        assert lattice_rho() == 1e-4
    with for_epsilon(1e-9):
        assert lattice_rho() == FLOOR_RHO
    with finer():
        assert lattice_rho() == pytest.approx(DEFAULT_RHO / 10) and (lattice_rho() > FLOOR_RHO) == can_refine()
        with finer():
            assert not can_refine() or lattice_rho() > FLOOR_RHO


@pytest.mark.parametrize("epochs", [1, 3])
def test_an_interval_too_wide_is_rebuilt_finer_and_brackets_the_coarse_ones(epochs):
    """One epoch answers analytically (the interval is the pairs' alone), three through grids.
    Built at ρ = 1e-2 the interval is wider than the default accuracy; asked for it there, the
    query rebuilds the pairs at 1e-3 and meets it. Asked for 1e-4, an ε query starts at
    ρ = 1e-4 and meets it; every certified interval, and the plain answer, agree with it."""
    m = Composition()([RandomAllocation()(GaussianMechanism(sigma=1.1), 234)], [epochs])
    with at(1e-2):
        loose = m.get_approxDP_bounds(1e-5, accuracy=0.5)
        refined = m.get_approxDP_bounds(1e-5)
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
    assert lattice_rho() == DEFAULT_RHO


def test_the_common_part_of_two_certified_intervals():
    from dpaccount import Bounds
    from dpaccount.queries.intervals import _intersection
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
    with at(FLOOR_RHO):
        finest = m.get_approx_delta_bounds(1.0, accuracy=0.5)
    assert finest.lower <= got.lower <= got.upper <= finest.upper and _width(got) < 0.5 * _width(finest)
