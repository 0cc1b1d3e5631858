"""The dp_accounting drop-in without dp_accounting (issue 31): events are read by their
type's name and fields, so look-alike events stand in for the real ones here
(tests/interop/ runs the real package); ``import dpaccount`` imports neither
dp_accounting nor torch."""
import math
import subprocess
import sys

import mpmath as mp
import pytest

import dpaccount as dp
from dpaccount import Composition, GaussianMechanism, PoissonSampling, SubsetSampling


def event(name, **fields):
    """An object of a class called ``name`` with ``fields``: all from_dp_event reads."""
    obj = type(name, (), {})()
    obj.__dict__.update(fields)
    return obj


def gaussian(z):
    return event("GaussianDpEvent", noise_multiplier=z)


def test_a_dpsgd_tree_is_the_native_composition():
    tree = event("SelfComposedDpEvent", count=14063,
                 event=event("PoissonSampledDpEvent", sampling_probability=256 / 60000, event=gaussian(1.1)))
    assert dp.from_dp_event(tree) == Composition()([PoissonSampling()(GaussianMechanism(1.1), 256 / 60000)], [14063])


def test_relations_by_dp_accountings_names():
    class NeighboringRelation:  # an enum member look-alike: read by its name
        name = "REPLACE_ONE"
    assert dp.from_dp_event(gaussian(1.0), NeighboringRelation()).relation == dp.REPLACE_ONE
    assert dp.from_dp_event(gaussian(1.0), "REPLACE_SPECIAL").relation == dp.ADD_REMOVE  # a sum moves by one record
    # a noise multiplier is relative to one record's bound C, and a replaced record moves the sum by 2C
    assert dp.from_dp_event(gaussian(1.0), "replace_one") == GaussianMechanism(1.0, 2.0, relation="replace-one")
    sampled = event("SampledWithoutReplacementDpEvent", source_dataset_size=100, sample_size=10, event=gaussian(1.0))
    assert dp.from_dp_event(sampled) == SubsetSampling()(GaussianMechanism(1.0, 2.0, relation="replace-one"), 0.1)


def test_k_ary_randomized_response_is_its_worst_pair():
    """k buckets, noise p: the input bucket has a = 1 − p + p/k, another b = p/k, so
    δ(ε) = a − e^ε b up to the pure ε = log(a/b), and ε(δ) = log((a − δ)/b)."""
    p, k = 0.3, 5
    m = dp.from_dp_event(event("RandomizedResponseDpEvent", noise_parameter=p, num_buckets=k))
    a, b = 1 - mp.mpf(p) + mp.mpf(p) / k, mp.mpf(p) / k
    for delta in (1e-3, 1e-12):
        exact = mp.log((a - delta) / b)
        assert exact <= m.get_approxDP(delta) <= exact * (1 + 1e-9)
    binary = dp.from_dp_event(event("RandomizedResponseDpEvent", noise_parameter=0.4, num_buckets=2))
    assert binary == dp.RandomizedResponse(0.8)


def test_degenerate_events():
    assert dp.from_dp_event(gaussian(0.0)) == dp.NonPrivateMechanism()
    assert dp.from_dp_event(event("SelfComposedDpEvent", event=gaussian(1.0), count=0)) == dp.NoOpMechanism()
    assert dp.from_dp_event(event("ComposedDpEvent", events=[])) == dp.NoOpMechanism()
    assert dp.from_dp_event(event("NoOpDpEvent")).get_approxDP(1e-9) == 0.0
    assert dp.from_dp_event(event("NonPrivateDpEvent")).get_approxDP(1e-3) == math.inf
    tree = event("SingleEpochTreeAggregationDpEvent", noise_multiplier=5.0, step_counts=[1000, 7])
    assert dp.from_dp_event(tree) == dp.TreeAggregation(5.0, 1000)
    poisson = event("RepeatAndSelectDpEvent", event=gaussian(2.0), mean=3.0, shape=math.inf)
    assert dp.from_dp_event(poisson) == dp.RepeatAndSelect()(GaussianMechanism(2.0), 3.0, math.inf)


def test_unknown_and_unsupported_events_are_library_errors_naming_them():
    for bad in (event("UnsupportedDpEvent"), event("SomethingNewDpEvent", x=1)):
        with pytest.raises(dp.DPAccountError, match=type(bad).__name__):
            dp.from_dp_event(bad)
    nested = event("ComposedDpEvent", events=[gaussian(1.0), event("UnsupportedDpEvent")])
    with pytest.raises(dp.UnsupportedEvent):
        dp.from_dp_event(nested)


def test_bad_fields_name_the_field_and_the_value():
    with pytest.raises(TypeError, match="noise_multiplier"):
        dp.from_dp_event(gaussian("1.0"))
    with pytest.raises(ValueError, match="sigma.*-1"):
        dp.from_dp_event(gaussian(-1.0))


def test_importing_dpaccount_imports_neither_dp_accounting_nor_torch():
    code = ("import sys, dpaccount; bad = [m for m in ('dp_accounting', 'torch', 'opacus') if m in sys.modules]; "
            "print(bad); sys.exit(1 if bad else 0)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_batch_schemes_of_issue_29():
    """Truncated Poisson sampling of a Gaussian (dp_accounting's degenerate cases as its
    accountant reads them) and sampling with replacement (replace-one, as without)."""
    trunc = event("TruncatedSubsampledGaussianDpEvent", dataset_size=60000, sampling_probability=0.01,
                  truncated_batch_size=700, noise_multiplier=1.1)
    assert dp.from_dp_event(trunc) == dp.TruncatedPoissonSampling()(GaussianMechanism(1.1), 0.01, 60000, 700)
    for degenerate, native in (({"sampling_probability": 0.0}, dp.NoOpMechanism()),
                               ({"truncated_batch_size": 0}, dp.NoOpMechanism()),
                               ({"noise_multiplier": 0.0}, dp.NonPrivateMechanism())):
        fields = {**trunc.__dict__, **degenerate}
        assert dp.from_dp_event(event("TruncatedSubsampledGaussianDpEvent", **fields)) == native
    drawn = event("SampledWithReplacementDpEvent", source_dataset_size=1000, sample_size=10, event=gaussian(2.0))
    assert dp.from_dp_event(drawn) == dp.SamplingWithReplacement()(GaussianMechanism(2.0, 2.0, relation="replace-one"),
                                                                   1000, 10)
