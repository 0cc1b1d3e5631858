"""``RepeatAndSelect()(mechanism, mean, shape)``: private hyperparameter tuning.

Run the mechanism a random number K of times (independently of the data) and
release only the best run (Liu & Talwar 2019; Papernot & Steinke 2022). K's
law: Poisson of mean ``mean`` (``shape=math.inf``), or truncated negative
binomial of shape η = ``shape`` ∈ [0, ∞) with E[K] = ``mean`` (η = 1 geometric,
η = 0 logarithmic).

Representations: RDP by Papernot & Steinke's Thm 2 (truncated negative
binomial) and Thm 6 (Poisson, with the base's certified δ̂ from its tightest
route) — ``rdp/repeat_and_select.py``. Where K is 1 surely (``mean=1`` with a
truncated negative binomial) the selection *is* the base mechanism and keeps
all of its representations (its privacy-loss pairs included). No dominating
pair of the selection is known in general; Koskela, Redberg & Wang (ICML 2024,
"Privacy profiles for private selection") bound its privacy profile from the
base's, a tighter route not taken here yet.
"""
from __future__ import annotations

import math
from typing import Union

from .. import validation as v
from ..mechanism import Mechanism
from ..rdp.curve import RDPCurve, RDPFunction
from ..rdp.repeat_and_select import repeat_and_select_rdp
from .base import Transformer, check_mechanism
from .poisson_sampling import sampled_params


class RepeatAndSelectMechanism(Mechanism):
    """``base`` run K times, the best run released (module docstring)."""

    _spec_type = "RepeatAndSelect"

    def __init__(self, base, mean, shape):
        params = sampled_params(sampled_params(base.params, "mean", mean), "shape", shape)
        super().__init__(f"RepeatAndSelect:{base.name}", params, base.relation)
        object.__setattr__(self, "base", base)
        object.__setattr__(self, "mean", mean)
        object.__setattr__(self, "shape", shape)

    def _identity(self):
        return (self.base, self.mean, self.shape)

    def _spec_args(self):
        # JSON has no ∞: a Poisson count is written as "poisson": true
        if math.isinf(self.shape):
            return {"mechanism": self.base, "mean": self.mean, "poisson": True}
        return {"mechanism": self.base, "mean": self.mean, "shape": self.shape}

    def _certain_once(self):
        return self.mean == 1.0 and not math.isinf(self.shape)

    def _pairs_at(self, rho):
        return self.base.optional("pairs", rho) if self._certain_once() else None

    def _rdp(self):
        base_curve = self.base.optional("rdp")
        if base_curve is None:
            return None
        if self._certain_once():
            return base_curve
        base_delta = (lambda eps: self.base.get_approx_delta(eps)) if math.isinf(self.shape) else None
        fn = repeat_and_select_rdp(base_curve, self.mean, self.shape, base_delta)
        return RDPCurve(((RDPFunction(("repeat-and-select", self.base, self.mean, self.shape), fn), 1),))


class RepeatAndSelect(Transformer):
    """``RepeatAndSelect()(mechanism, mean, shape)``: run K times, release the best."""

    name = "RepeatAndSelect"

    def __call__(self, mechanism: Mechanism, mean: float, shape: Union[float, str]) -> Mechanism:
        mechanism = check_mechanism("mechanism", mechanism)
        if isinstance(shape, str) and shape.strip().lower() in ("inf", "infinity", "poisson"):
            shape = math.inf
        shape = v.in_interval("shape", shape, 0.0, math.inf, lo_open=False, hi_open=False)
        if math.isinf(shape):
            mean = v.positive("mean", mean)
        else:
            mean = v.in_interval("mean", mean, 1.0, math.inf, lo_open=False)  # K ≥ 1: E[K] ≥ 1
        return RepeatAndSelectMechanism(mechanism, mean, shape)
