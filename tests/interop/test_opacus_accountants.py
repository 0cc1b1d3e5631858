"""Opacus 1.6's accountant tests (``opacus/tests/accountants_test.py``), restated for the
dpaccount accountant (issue 39): the registry, the DP-SGD numbers of its RDP, GDP and PRV
tests, Opacus' noise calibration run with ``accountant="dpaccount"``, the state-dict
checks, and a noiseless run. Where Opacus asserts its own accountant's number, the test
places that number against dpaccount's certified bracket (docs/coming_from_opacus.rst)."""
import math

import pytest

opacus = pytest.importorskip("opacus", reason="the interop extra (opacus) is not installed")
from opacus.accountants import RDPAccountant, create_accountant  # noqa: E402
from opacus.accountants.utils import get_noise_multiplier  # noqa: E402

from dpaccount import Composition, GaussianMechanism, PoissonSampling  # noqa: E402
from dpaccount.integrations.opacus import DpaccountAccountant  # noqa: E402

SIGMA, RATE, STEPS = 1.5, 0.04, 2250  # the test file's DP-SGD: 90 epochs at q = 0.04


def _stepped(accountant, sigma=SIGMA, rate=RATE, steps=STEPS):
    for _ in range(steps):
        accountant.step(noise_multiplier=sigma, sample_rate=rate)
    return accountant


def test_the_registry_creates_it_by_name():
    accountant = create_accountant("dpaccount")
    assert isinstance(accountant, DpaccountAccountant) and accountant.mechanism() == "dpaccount"
    assert len(accountant) == 0 and accountant.get_epsilon(1e-5) == 0.0


def test_dpsgd_epsilon_against_opacus_accountants():
    """Opacus' RDP (7.32911, an upper bound) is above dpaccount's certified bracket; its PRV
    estimate (6.77740, within its eps_error = 0.01) is within 0.01 of it; its GDP (CLT) value
    (6.59–6.6) is an approximation below the bracket's lower end."""
    accountant = _stepped(DpaccountAccountant())
    bounds = accountant.composition().get_approxDP_bounds(1e-5)
    assert bounds.certified and accountant.get_epsilon(1e-5) == bounds.upper <= bounds.lower * (1 + 1e-3)
    assert bounds.upper < 7.32911117143
    assert bounds.lower - 0.01 <= 6.777395712150674 <= bounds.upper + 0.01
    assert 6.6 < bounds.lower


def test_opacus_calibration_with_dpaccount_lands_on_the_safe_side():
    """``get_noise_multiplier(..., accountant="dpaccount")`` for ε = 8, δ = 1e-5: σ below RDP's
    (1.416 for 90 epochs, 1.3562 for 2000 steps: a tighter accountant needs less noise), and
    the ε of the σ it returns is at most the target (the test file's overshoot check)."""
    for budget, rdp_sigma in (({"epochs": 90}, 1.416), ({"steps": 2000}, 1.3562)):
        sigma = get_noise_multiplier(target_epsilon=8, target_delta=1e-5, sample_rate=RATE,
                                     accountant="dpaccount", **budget)
        steps = budget.get("steps") or int(budget["epochs"] / RATE)
        accountant = create_accountant("dpaccount")
        accountant.history = [(sigma, RATE, steps)]
        assert sigma < rdp_sigma and accountant.get_epsilon(1e-5) < 8


def test_state_dict_round_trip_and_its_refusals():
    accountant = _stepped(DpaccountAccountant(), steps=STEPS - 1000)
    state = accountant.state_dict()
    assert state["history"] == accountant.history and state["history"] is not accountant.history
    assert accountant.state_dict({"dummy_k": "dummy_v"})["mechanism"] == "dpaccount"
    fresh = DpaccountAccountant()
    for bad in ({}, {"1": 2}, {"history": []}, RDPAccountant().state_dict()):
        with pytest.raises(ValueError):
            fresh.load_state_dict(bad)
    with pytest.raises(ValueError):
        RDPAccountant().load_state_dict(state)
    fresh.load_state_dict(state)
    assert fresh.state_dict() == state
    _stepped(fresh, steps=1000)
    assert fresh.get_epsilon(1e-5) == _stepped(DpaccountAccountant()).get_epsilon(1e-5)


def test_no_noise_is_infinite_epsilon_as_opacus_says():
    ours = DpaccountAccountant()
    ours.step(noise_multiplier=0.0, sample_rate=0.1)
    theirs = RDPAccountant()
    theirs.step(noise_multiplier=0.0, sample_rate=0.1)
    with pytest.warns(UserWarning):  # Opacus' RDP warns that its optimal order is its smallest
        assert ours.get_epsilon(1e-5) == theirs.get_epsilon(1e-5) == math.inf
    ours.step(noise_multiplier=1.0, sample_rate=0.1)
    assert ours.get_epsilon(1e-5) == math.inf  # a noiseless step is never paid back


def test_make_private_without_noise_reports_infinity():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    data = torch.utils.data.TensorDataset(torch.randn(32, 3), torch.randint(0, 2, (32,)))
    model = torch.nn.Linear(3, 2)
    engine = opacus.PrivacyEngine(accountant="dpaccount")
    model, optimizer, loader = engine.make_private(
        module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
        data_loader=torch.utils.data.DataLoader(data, batch_size=8), noise_multiplier=0.0, max_grad_norm=1.0)
    for xb, yb in loader:
        if len(xb):
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(xb), yb).backward()
            optimizer.step()
    assert len(engine.accountant) > 0 and engine.get_epsilon(1e-5) == math.inf


def test_runs_of_different_noise_compose_as_the_offline_mechanism():
    accountant = _stepped(_stepped(DpaccountAccountant(), 1.0, 0.01, 30), 2.0, 0.02, 40)
    assert accountant.history == [(1.0, 0.01, 30), (2.0, 0.02, 40)] and len(accountant) == 70
    offline = Composition()([PoissonSampling()(GaussianMechanism(1.0), 0.01),
                             PoissonSampling()(GaussianMechanism(2.0), 0.02)], [30, 40])
    assert accountant.get_epsilon(1e-5) == offline.get_approxDP(1e-5)
