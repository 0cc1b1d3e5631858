"""``dpaccount.dpsgd`` (issue 32): DP-SGD from a training loop's words, its step count
as Opacus counts a pass, and the same words on the command line."""
import json
import math

import pytest

import dpaccount as dp
from dpaccount import Composition, GaussianMechanism, PoissonSampling, SubsetSampling
from dpaccount.cli import main
from dpaccount.recipes import dpsgd_steps


@pytest.mark.parametrize("n, b, epochs, steps", [(60000, 256, 60, 60 * 235), (1000, 100, 3, 30),
                                                  (1001, 100, 1, 11), (1000, 100, 0.25, 3)])
def test_steps_are_a_pass_of_ceil_n_over_b_batches_rounded_up(n, b, epochs, steps):
    q, t = dpsgd_steps(b, n, epochs)
    assert q == b / n and t == steps == math.ceil(epochs * math.ceil(n / b))


def test_dpsgd_is_the_composition_it_names():
    assert dp.dpsgd(1.1, 256, 60000, 60) == Composition()([PoissonSampling()(GaussianMechanism(1.1), 256 / 60000)],
                                                          [14100])
    fixed = dp.dpsgd(1.1, 256, 60000, 1, sampling="without-replacement")
    assert fixed == Composition()([SubsetSampling()(GaussianMechanism(1.1, relation="replace-one"), 256 / 60000)],
                                  [235])


def test_dpsgd_refuses_bad_words():
    with pytest.raises(ValueError, match="sampling"):
        dp.dpsgd(1.0, 10, 100, 1, sampling="shuffle")
    with pytest.raises(ValueError, match="batch_size"):
        dp.dpsgd(1.0, 200, 100, 1)
    with pytest.raises(ValueError, match="epochs"):
        dp.dpsgd(1.0, 10, 100, 0)


def test_calibration_helpers_take_opacus_words():
    ours = dp.dpsgd_noise_multiplier(0.01, 1000, 2.0, 1e-5)
    assert dp.dpsgd_noise_multiplier(sample_rate=0.01, epochs=10, target_epsilon=2.0, target_delta=1e-5) == ours
    with pytest.raises(TypeError, match="steps or epochs"):
        dp.dpsgd_noise_multiplier(0.01, 1000, 2.0, 1e-5, epochs=10)
    with pytest.raises(TypeError, match="eps or target_epsilon"):
        dp.dpsgd_max_steps(1.0, 0.01, 2.0, 1e-5, target_epsilon=2.0)


def test_the_dpsgd_command_and_prv_accountants_flags(capsys):
    assert main(["dpsgd", "--noise-multiplier", "1.1", "--batch-size", "256", "--dataset-size", "60000",
                 "--epochs", "60", "--delta", "1e-5", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["results"][0]["epsilon"] == dp.dpsgd(1.1, 256, 60000, 60).get_approxDP(1e-5)
    assert main(["dpsgd", "-s", "1.1", "-b", "256", "-n", "60000", "-E", "60", "-d", "1e-5"]) == 0
    assert "14,100 steps" in capsys.readouterr().out
    # prv_accountant's compute-dp-epsilon flags: -s -p -i -d (and -e for delta)
    assert main(["epsilon", "-s", "0.8", "-p", "5e-3", "-i", "250", "-d", "1e-6", "--json"]) == 0
    eps = json.loads(capsys.readouterr().out)["results"][0]["epsilon"]
    assert eps == Composition()([PoissonSampling()(GaussianMechanism(0.8), 5e-3)], [250]).get_approxDP(1e-6)
    assert main(["delta", "--noise-multiplier", "0.8", "--sampling-probability", "5e-3",
                 "--num-compositions", "250", "-e", "1.0"]) == 0


def test_dpsgd_rate_is_b_over_n_an_upper_bound_for_opacus_loader():
    """Issue 44 defect 7 (module docstring of recipes.py): the rate is B/n, not Opacus'
    1/⌈n/B⌉ (0.1067 against 0.1 for n = 300, B = 32), so the answer bounds Opacus' loop from
    above: it is at least the certified lower end of the Poisson-sampled Gaussian at 0.1 over
    the same 20 steps."""
    q, steps = dpsgd_steps(32, 300, 2)
    assert (q, steps) == (32 / 300, 20) and q >= 1 / math.ceil(300 / 32)
    opacus = Composition()([PoissonSampling()(GaussianMechanism(1.1), 1 / math.ceil(300 / 32))], [steps])
    assert dp.dpsgd(1.1, 32, 300, 2).get_approxDP(1e-5) >= opacus.get_approxDP_bounds(1e-5).lower
