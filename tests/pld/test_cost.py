"""Issue 28 item 8: a query whose work is far beyond the usual says so up
front (``pld/grids/cost.py``), before the work starts."""
import warnings

import numpy as np
import pytest

import dpaccount as dpa
from dpaccount.pld.grids.cost import DISTINCT_WARN, distinct_pairs


def _distinct_laplace(n):
    return dpa.Composition()([dpa.LaplaceMechanism(float(b)) for b in np.linspace(50.0, 5000.0, n)], [1] * n)


def test_thousands_of_distinct_parts_are_announced_before_the_work():
    m = _distinct_laplace(DISTINCT_WARN + 500)
    assert distinct_pairs(m.pairs) == DISTINCT_WARN + 500
    for query in (lambda: m.get_approxDP(1e-5), lambda: m.get_approx_delta(1.0), lambda: m.get_fDP(0.1)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the warning stops the query before any grid is built
            with pytest.raises(dpa.CostWarning, match=rf"{DISTINCT_WARN + 500} distinct parts.*expect roughly \d+ s"):
                query()
    assert "rdp" in m.available_methods()  # the cheaper route the message names


def test_usual_compositions_are_not_announced():
    sgd = dpa.PoissonSampling()(dpa.GaussianMechanism(sigma=1.1), 0.01)
    gaussians = dpa.Composition()([dpa.GaussianMechanism(sigma=1.0 + i) for i in range(5000)], [1] * 5000)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dpa.Composition()([sgd], [1000]).get_approxDP(1e-5)
        _distinct_laplace(40).get_approxDP(1e-5)
        assert distinct_pairs(gaussians.pairs) == 1  # Gaussians merge exactly
        gaussians.get_approxDP(1e-5, method="pld")
