"""Grid limits (issue 28, item 2): the README's DP-SGD is served at accuracy
1e-5 (and 1e-6, slow), and where a grid truly does not fit, the refusal is
consistent (the points it needs exceed the limit it names) and says the
memory needed and what would answer."""
import re
import warnings

import pytest

import dpaccount as dpa
from dpaccount.pld.profiles.plan import BYTES_PER_POINT, MAX_BASE, affordable

README = dpa.Composition()([dpa.PoissonSampling()(dpa.GaussianMechanism(sigma=1.1), 256 / 60000)], [14063])


def test_the_readme_dpsgd_at_accuracy_1e5_is_certified_to_it():
    dp_accounting = pytest.importorskip("dp_accounting")
    with warnings.catch_warnings():
        warnings.simplefilter("error", dpa.AccuracyWarning)  # the grid asked for, not a coarser one
        b = README.get_approxDP_bounds(1e-5, accuracy=1e-5)
    assert b.certified and b.upper - b.lower <= 1e-5 * b.upper
    # an independent estimate (connect-the-dots, pessimistic) above the exact
    # value: our certified lower end must not exceed it
    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(256 / 60000, dp_accounting.GaussianDpEvent(1.1)), 14063)
    theirs = dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-3).compose(event).get_epsilon(1e-5)
    assert b.lower <= theirs


def test_a_grid_that_does_not_fit_says_what_it_needs_and_what_fits():
    with pytest.raises(dpa.GridTooLarge) as info:
        README.get_approxDP(1e-5, accuracy=1e-7)
    text = str(info.value)
    needed = int(re.search(r"~([\d,]+) grid points", text).group(1).replace(",", ""))
    limit = int(re.search(r"cap of ([\d,]+) points", text).group(1).replace(",", ""))
    assert limit == MAX_BASE < needed  # the cap named is the one applied
    assert f"~{needed * BYTES_PER_POINT / 2 ** 30:.2g} GB" in text and "method='rdp'" in text
    fits = info.value.accuracy
    assert fits > 1e-7 and f"accuracy={fits:.2g} fits" in text
    plan = README.privacy_profile(fits).plan
    assert affordable(plan, plan.eps_level) == plan.eps_level  # it does fit


@pytest.mark.slow
def test_the_readme_dpsgd_at_accuracy_1e6_fits():
    with warnings.catch_warnings():
        warnings.simplefilter("error", dpa.AccuracyWarning)
        eps = README.get_approxDP(1e-5, accuracy=1e-6)
        b = README.get_approxDP_bounds(1e-5, accuracy=1e-5)
    assert b.lower <= eps <= b.upper * (1 + 1e-6)  # the plan lands within the accuracy of the exact value
