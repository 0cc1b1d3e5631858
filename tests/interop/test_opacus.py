"""The Opacus accountant (issue 31) against the real Opacus: a tiny CPU training loop
with it plugged in reports the ε of the offline composition of the steps it took."""
import pytest

torch = pytest.importorskip("torch")
opacus = pytest.importorskip("opacus")

from dpaccount import Composition, GaussianMechanism, PoissonSampling  # noqa: E402
from dpaccount.integrations.opacus import DpaccountAccountant  # noqa: E402


def _train(engine, epochs=2, noise=1.3, seed=0):
    torch.manual_seed(seed)
    x, y = torch.randn(64, 3), torch.randint(0, 2, (64,))
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=16)
    model = torch.nn.Linear(3, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer, loader = engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                                                   noise_multiplier=noise, max_grad_norm=1.0)
    for _ in range(epochs):
        for xb, yb in loader:
            if len(xb) == 0:
                continue
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(xb), yb).backward()
            optimizer.step()
    return engine


def test_a_training_loop_reports_the_offline_composition_of_its_steps():
    engine = _train(opacus.PrivacyEngine(accountant="dpaccount"))
    acc = engine.accountant
    assert isinstance(acc, DpaccountAccountant) and acc.mechanism() == "dpaccount"
    (sigma, q, steps), = acc.history  # one run: Opacus' noise and sample rate, every step
    assert len(acc) == steps > 0 and sigma == 1.3 and q == pytest.approx(16 / 64)
    offline = Composition()([PoissonSampling()(GaussianMechanism(sigma), q)], [steps]).get_approxDP(1e-5)
    assert engine.get_epsilon(1e-5) == offline


def test_swapping_the_accountant_on_an_engine_and_restoring_its_state():
    engine = opacus.PrivacyEngine()
    engine.accountant = DpaccountAccountant()
    _train(engine, epochs=1)
    state = engine.accountant.state_dict()
    again = DpaccountAccountant()
    again.load_state_dict(state)
    assert again.history == engine.accountant.history and again.get_epsilon(1e-5) == engine.get_epsilon(1e-5)
    with pytest.raises(ValueError):
        opacus.accountants.RDPAccountant().load_state_dict(state)  # Opacus' own check of the mechanism


def test_opacus_calibration_runs_on_it():
    from opacus.accountants.utils import get_noise_multiplier
    sigma = get_noise_multiplier(target_epsilon=2.0, target_delta=1e-5, sample_rate=0.01, steps=1000,
                                 accountant="dpaccount", epsilon_tolerance=0.01)
    eps = Composition()([PoissonSampling()(GaussianMechanism(sigma), 0.01)], [1000]).get_approxDP(1e-5)
    assert 1.99 - 0.01 <= eps <= 2.0  # Opacus' bisection stops within its tolerance, on the safe side
