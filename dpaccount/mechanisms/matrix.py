"""``MatrixMechanism(strategy, noise_multiplier, participation)``: correlated-noise training.

DP-FTRL, banded matrix factorization (BandMF) and buffered linear Toeplitz (BLT)
mechanisms release C·G + z·Z over n rounds (G the clipped contributions, Z
standard Gaussian noise, C the strategy: ``dpaccount.strategies``). The decoder
B of A = BC is post-processing. One record moves C·G by at most the certified
sensitivity Δ of C under its participation pattern
(``matrix_sensitivity.py``), and every shift of norm ≤ Δ is dominated by the
one of norm Δ, so the release *is* the Gaussian mechanism of noise z and
sensitivity Δ (Denisov et al. 2022, Thm 2.1; Choquette-Choo et al. 2023,
"Multi-epoch matrix factorization", §2): every query, composition and
calibration of ``GaussianMechanism`` applies. Where Δ is an upper bound and not
exact (``sensitivity_exact``), the answers are upper bounds still, but no pattern is
known to attain Δ: the pair is a dominating one only (``DominatingGaussianPair``), and
the certified intervals give no lower end.

``Participation`` says which rounds a record may take part in:

* ``Participation.single()``: one round;
* ``Participation.fixed_epochs(k)``: k epochs of n/k rounds, the same position in
  each (rounds p, p + n/k, …; k must divide n);
* ``Participation.min_separation(b, max_participations=k)``: any ≤ k rounds, any two
  ≥ b apart (k defaults to all that fit, ⌈n/b⌉). This covers any order of the
  records within epochs of b rounds only if b = 1; fixed-order epochs of b
  rounds are b-separated.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable

from .. import validation as v
from ..mechanism import Mechanism
from ..relations import Relation, with_relation
from ..strategies import Strategy, dense, strategy_from_spec
from .matrix_sensitivity import Sensitivity, matrix_sensitivity
from .standard import gaussian_pairs
from .training import TreeGaussian


@dataclass(frozen=True)
class Participation:
    """How one record may take part in the n rounds (module docstring). Build it with
    ``single``, ``fixed_epochs`` or ``min_separation``."""

    kind: str
    epochs: int | None = None
    separation: int | None = None
    max_participations: int | None = None

    @classmethod
    def single(cls) -> Participation:
        """One round."""
        return cls("single")

    @classmethod
    def fixed_epochs(cls, epochs: int) -> Participation:
        """``epochs`` epochs, the record at the same position in each (rounds p + j·n/epochs)."""
        return cls("fixed_epochs", epochs=v.count("epochs", epochs))

    @classmethod
    def min_separation(cls, separation: int, max_participations: int | None = None) -> Participation:
        """At most ``max_participations`` rounds (None: all that fit), any two
        ``separation`` or more apart."""
        b = v.count("separation", separation)
        k = None if max_participations is None else v.count("max_participations", max_participations)
        return cls("min_separation", separation=b, max_participations=k)

    def resolve(self, n: int) -> tuple[int, int, bool]:
        """(k, b, fixed) over n rounds: at most k participations, any two ≥ b apart, and
        whether only the cyclic patterns p + jb are allowed. ValueError if they cannot fit."""
        if self.kind == "single":
            return 1, n, False
        if self.kind == "fixed_epochs":
            assert self.epochs is not None  # fixed_epochs() sets it
            k = self.epochs
            if n % k:
                raise ValueError(f"participation fixed_epochs({k}) needs epochs to divide the n={n} rounds")
            return k, n // k, True
        assert self.separation is not None  # min_separation() sets it
        b, cap = self.separation, self.max_participations
        if b > n:
            raise ValueError(f"participation min_separation({b}) needs separation <= n={n} rounds")
        fit = (n - 1) // b + 1
        if cap is None:
            return fit, b, False
        if cap > fit:
            raise ValueError(f"participation min_separation({b}, max_participations={cap}) cannot fit in "
                             f"n={n} rounds (at most {fit} participations {b} apart)")
        return cap, b, False

    def to_spec(self) -> dict:
        """The participation as a dict of JSON values (``participation_from_spec`` inverts it)."""
        return {key: val for key, val in self.__dict__.items() if val is not None}


def participation_from_spec(spec: Any) -> Participation:
    """The participation a ``Participation.to_spec()`` dict describes."""
    if not isinstance(spec, dict) or "kind" not in spec:
        raise ValueError(f"participation must be a dict with a 'kind', got {spec!r}")
    args = {k: val for k, val in spec.items() if k != "kind"}
    makers: dict[str, Callable[..., Participation]] = {"single": Participation.single, "fixed_epochs": Participation.fixed_epochs,
              "min_separation": Participation.min_separation}
    if spec["kind"] not in makers:
        raise ValueError(f"participation kind must be one of {sorted(makers)}, got {spec['kind']!r}")
    try:
        return makers[spec["kind"]](**args)
    except TypeError as exc:
        raise ValueError(f"participation {spec['kind']!r} got arguments {sorted(args)}: {exc}") from exc


@lru_cache(maxsize=64)
def _sensitivity(strategy: Strategy, k: int, b: int, fixed: bool) -> Sensitivity:
    """``matrix_sensitivity``, kept for the strategies built again (a calibration's noise
    multipliers share one strategy and participation)."""
    return matrix_sensitivity(strategy, k, b, fixed)


class MatrixMechanism(TreeGaussian):
    """The matrix mechanism of ``strategy`` with noise ``noise_multiplier`` under
    ``participation``: the Gaussian of noise z and the certified sensitivity Δ
    (``sensitivity``; ``sensitivity_exact`` and ``sensitivity_method`` say which case
    of ``matrix_sensitivity.py`` gave it)."""

    _spec_type = "MatrixMechanism"
    strategy: Strategy
    participation: Participation
    sigma: float
    sensitivity: float
    mu: float
    participations: int
    separation: int
    fixed_epochs: bool
    sensitivity_exact: bool
    sensitivity_method: str

    def __init__(self, strategy: Strategy | Any, noise_multiplier: float,
                 participation: Participation | None = None, relation: Relation | str | None = None) -> None:
        if isinstance(strategy, dict):
            strategy = strategy_from_spec(strategy)
        elif not isinstance(strategy, Strategy):
            strategy = dense(strategy)
        z = v.positive("noise_multiplier", noise_multiplier)
        participation = Participation.single() if participation is None else participation
        if isinstance(participation, dict):
            participation = participation_from_spec(participation)
        if not isinstance(participation, Participation):
            raise TypeError(f"participation must be a Participation, got {participation!r}")
        k, b, fixed = participation.resolve(strategy.n)
        sens = _sensitivity(strategy, k, b, fixed)
        if not sens.value > 0:
            raise ValueError(f"strategy has zero sensitivity under {participation!r}: nothing is released")
        Mechanism.__init__(self, f"Matrix:{strategy.kind}", *with_relation(
            {"noise_multiplier": z, "strategy": strategy.kind, "n": strategy.n,
             "participation": participation.kind, "participations": k, "separation": b}, relation))
        self._set_gaussian(z, sens.value)
        for key, val in (("strategy", strategy), ("participation", participation),
                         ("participations", k), ("separation", b), ("fixed_epochs", fixed),
                         ("sensitivity_exact", sens.exact), ("sensitivity_method", sens.method)):
            object.__setattr__(self, key, val)

    @property
    def noise_multiplier(self) -> float:
        return self.sigma

    def _pairs(self):
        # attained where Δ is exact (a pattern moves C·G by Δ); an upper bound on Δ attains nothing
        return gaussian_pairs(self.mu, attained=self.sensitivity_exact)

    def _identity(self) -> tuple:
        return (self.strategy, self.sigma, self.participation, self.relation)

    def _spec_args(self) -> dict:
        return {"strategy": self.strategy.to_spec(), "noise_multiplier": self.sigma,
                "participation": self.participation.to_spec(), "relation": self.relation}

