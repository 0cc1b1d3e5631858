"""``DpaccountAccountant``: an Opacus ``IAccountant`` answered by dpaccount.

    privacy_engine = PrivacyEngine(accountant="dpaccount")   # registered on import
    # or: privacy_engine.accountant = DpaccountAccountant()

Opacus' optimizer hook calls ``step(noise_multiplier=, sample_rate=)`` once per
optimizer step; the accountant keeps Opacus' ``history`` of
(noise_multiplier, sample_rate, steps) runs (Opacus' own calibration,
``get_noise_multiplier(..., accountant="dpaccount")``, writes it directly) and
answers ``get_epsilon(delta)`` with the certified upper bound of the
composition of those runs: each run a Poisson-subsampled Gaussian (Opacus'
sampling), composed by ``Composition`` (the privacy-loss grid). Equal
histories share one answer (dpaccount caches grids by value), so a query
repeated between steps is answered from the cache and one after a new step
composes the new history (timings: benchmarks/README.md, "Measurements behind
constants in the code").
"""
from __future__ import annotations

from typing import Any

from ._host import require

_accountants = require("opacus.accountants", "opacus")

from ..mechanism import Mechanism  # noqa: E402
from ..mechanisms.standard import GaussianMechanism  # noqa: E402
from ..mechanisms.trivial import NonPrivateMechanism, NoOpMechanism  # noqa: E402
from ..queries import DEFAULT_ACCURACY  # noqa: E402
from ..transformers.composition import Composition  # noqa: E402
from ..transformers.poisson_sampling import PoissonSampling  # noqa: E402

MECHANISM = "dpaccount"


def _noise(sigma: float) -> Mechanism:
    """The Gaussian of noise multiplier σ; σ = 0 adds no noise (Opacus' own accountants
    answer ε = ∞ there): the non-private mechanism, still Poisson-sampled."""
    return NonPrivateMechanism() if sigma == 0 else GaussianMechanism(sigma)


class DpaccountAccountant(_accountants.IAccountant):  # type: ignore[name-defined]  # the host library has no types
    """Opacus' accountant interface over dpaccount (module docstring)."""

    def __init__(self, accuracy: float = DEFAULT_ACCURACY) -> None:
        super().__init__()
        self.accuracy = accuracy

    def step(self, *, noise_multiplier: float, sample_rate: float) -> None:
        last = self.history[-1] if self.history else None
        if last is not None and last[0] == noise_multiplier and last[1] == sample_rate:
            self.history[-1] = (noise_multiplier, sample_rate, last[2] + 1)
        else:
            self.history.append((noise_multiplier, sample_rate, 1))

    def composition(self) -> Mechanism:
        """The dpaccount mechanism of the steps taken (``history``)."""
        runs = [(sigma, q, k) for sigma, q, k in self.history if k > 0]
        if not runs:
            return NoOpMechanism()
        return Composition()([PoissonSampling()(_noise(sigma), q) for sigma, q, _ in runs], [k for _, _, k in runs])

    def get_epsilon(self, delta: float, *args: Any, **kwargs: Any) -> float:
        return float(self.composition().get_approxDP(delta, accuracy=self.accuracy))

    def __len__(self) -> int:
        return sum(k for _, _, k in self.history)

    @classmethod
    def mechanism(cls) -> str:
        return MECHANISM


try:
    _accountants.register_accountant(MECHANISM, DpaccountAccountant)
except ValueError:  # registered already (a module reloaded)
    pass
