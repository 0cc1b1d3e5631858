"""``validation.real_array``: an array of query points checked in one pass gives what
``in_interval`` of each element gives, its error for the first element that fails."""
import numpy as np
import pytest

from dpaccount import validation as v

_INTERVALS = [(0.0, 1.0, True, True), (0.0, 1.0, False, False), (0.0, np.inf, False, True), (1.0, np.inf, True, True)]
_ARRAYS = [
    [0.0, 0.5, 1.0], [-0.0, 1e-300, 0.999999], [2.0, 1.0, 0.5], [3, 7, 1], [0.25, np.nan, -1.0],
    [0.25, -1.0, np.nan], [np.inf, 0.5], [[0.5, 1.5], [2.5, 1.0]], np.linspace(0.0, 20.0, 101),
    np.array([0.5, 2.0], dtype=np.float32), np.array([1, 2], dtype=np.uint8), np.zeros((0, 2)),
]


def _elementwise(values, interval):
    """The reference: ``in_interval`` of each element in turn (the first failure raises)."""
    arr = np.asarray(values)
    return np.array([v.in_interval("x", x, *interval) for x in arr.ravel()], dtype=float).reshape(arr.shape)


@pytest.mark.parametrize("interval", _INTERVALS)
@pytest.mark.parametrize("values", _ARRAYS, ids=range(len(_ARRAYS)))
def test_an_array_is_checked_as_each_element_alone(values, interval):
    try:
        want = _elementwise(values, interval)
    except ValueError as e:
        with pytest.raises(ValueError) as got:
            v.real_array("x", values, *interval)
        assert str(got.value) == str(e)
        return
    out, scalar = v.real_array("x", values, *interval)
    assert not scalar and out.dtype == np.float64 and out.shape == want.shape
    assert np.array_equal(out, want) and np.array_equal(np.signbit(out), np.signbit(want))


@pytest.mark.parametrize("bad", [[True, False], ["a"], [1 + 2j], np.array([0.5, None], dtype=object)])
def test_arrays_of_non_reals_are_refused(bad):
    with pytest.raises(TypeError, match="x must be real numbers"):
        v.real_array("x", bad, 0.0, 1.0)


def test_a_scalar_comes_back_as_one_element():
    out, scalar = v.real_array("x", np.float32(0.5), 0.0, 1.0)
    assert scalar and out.dtype == np.float64 and out.tolist() == [0.5]
    with pytest.raises(ValueError, match=r"x must lie in \(0.0, 1.0\), got 1.0"):
        v.real_array("x", 1, 0.0, 1.0)
