"""``AbsoluteAccuracy(base, epsilon_error)``: ``base``, its ε answers planned to an absolute error.

A query's ``accuracy`` is relative: the certified ε(δ) is planned to land within
accuracy/2 · ε above the exact value. A peer that discretises the privacy loss
at a fixed step h has an *absolute* error instead: dp_accounting's
``PLDAccountant`` (h = 10⁻⁴, connect-the-dots, Doroshenko, Ghazi, Kamath, Kumar
& Manurangsi 2022, arXiv 2207.04380; pessimistic, but with the float64 FFT's
rounding unbounded) is, on the Poisson-sampled Gaussian compositions of
``amplified_bandmf``, 1.1–2.3·10⁻⁶ above the exact ε at ε from 1.2 to 13
(measured against certified brackets 10⁻⁷ wide, ``benchmarks/bench_matrix.py``), while dpaccount's default (accuracy 10⁻³)
certified bound is up to 2.4·10⁻⁴ relative above it. This mechanism answers
``get_approxDP`` and ``get_approxDP_bounds`` at the relative accuracy
min(accuracy, ``epsilon_error`` / max(ε₀, 1)), ε₀ the largest finite answer at
the accuracy asked (an upper bound, so the accuracy chosen errs fine): the
answer is planned within ``epsilon_error``/2 of the exact ε wherever ε ≥ 1.

Every answer is still the certified upper bound of ``base``'s dominating pairs
(same pairs, same RDP, same δ queries); only the grid is finer. Where that
grid exceeds the memory cap (``GridTooLarge``) or the bracket cannot reach it
(``AccuracyNotReached``), the answer at the accuracy asked is given, certified
as always. A composition *containing* this mechanism plans its own grid at its
own accuracy; ``to_spec`` writes ``base`` (read back, it answers at the
accuracy asked).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Union

import numpy as np

from .. import validation as v
from ..errors import AccuracyNotReached, GridTooLarge
from ..mechanism import Mechanism
from ..queries import DEFAULT_ACCURACY

if TYPE_CHECKING:
    from numpy.typing import ArrayLike
    from ..progress import ProgressArg
    from ..queries.intervals import Bounds, FloatArray, Method


class AbsoluteAccuracy(Mechanism):
    """``base`` whose ε queries are planned to an absolute error ``epsilon_error`` (module docstring)."""

    base: Mechanism
    epsilon_error: float

    def __init__(self, base: Mechanism, epsilon_error: float) -> None:
        if not isinstance(base, Mechanism):
            raise TypeError(f"base must be a Mechanism, got {base!r}")
        super().__init__(base.name, base.params, relation=base.relation)
        object.__setattr__(self, "base", base)
        object.__setattr__(self, "epsilon_error", v.positive("epsilon_error", epsilon_error))

    def _identity(self):
        return (self.base, self.epsilon_error)

    def _spec_node(self):
        return self.base._spec_node()

    def _pairs_at(self, rho):
        return self.base.optional("pairs", rho)

    def _rdp(self):
        return self.base.optional("rdp")

    def _finer(self, coarse: Any, method: Optional[Method], accuracy: float) -> Optional[float]:
        """The relative accuracy that plans ε within ``epsilon_error`` (None: keep the one asked)."""
        if method not in (None, "pld"):
            return None
        eps = np.asarray(coarse, dtype=float)
        top = float(np.max(eps[np.isfinite(eps)], initial=0.0))
        finer = self.epsilon_error / max(top, 1.0)  # ε₀ ≥ the exact ε: the accuracy errs fine
        return finer if finer < accuracy else None

    def get_approxDP(self, delta: ArrayLike, method: Optional[Method] = None,  # type: ignore[override]
                     accuracy: float = DEFAULT_ACCURACY, progress: ProgressArg = None) -> Union[float, FloatArray]:
        """ε(δ), a certified upper bound planned to ``epsilon_error`` (module docstring)."""
        coarse = super().get_approxDP(delta, method, accuracy, progress)
        finer = self._finer(coarse, method, accuracy)
        if finer is None:
            return coarse
        try:
            return super().get_approxDP(delta, method, finer, progress)
        except GridTooLarge:  # the cap: the certified answer at the accuracy asked
            return coarse

    def get_approxDP_bounds(self, delta: ArrayLike, method: Optional[Method] = None,  # type: ignore[override]
                            accuracy: float = DEFAULT_ACCURACY, progress: ProgressArg = None) -> Bounds:
        """A certified interval of ε(δ), its upper end planned to ``epsilon_error`` (module docstring)."""
        coarse = super().get_approxDP_bounds(delta, method, accuracy, progress)
        finer = self._finer(coarse.upper, method, accuracy)
        if finer is None:
            return coarse
        try:
            return super().get_approxDP_bounds(delta, method, finer, progress)
        except (GridTooLarge, AccuracyNotReached):  # the cap: the interval at the accuracy asked
            return coarse
