"""``At``: a mechanism's dominating pairs at one lattice precision ρ, and what is built from them.

A query decides ρ (``precision.py``: ``DEFAULT_RHO``, an ε(δ) query's
``epsilon_rho(accuracy)``, ``finer(rho)`` for an interval asked again) and
hands ``At(mechanism, rho)`` to its method (``methods.py``). Everything
here is cached on the mechanism under a key holding ρ, so answers at one ρ
never depend on what was asked at another.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple, Optional, Tuple

import numpy as np

from .. import validation as v
from ..converters.gdp import delta_gdp, epsilon_gdp
from ..converters.hockey_stick import hockey_stick_to_epsilon
from ..pld.grids.cost import warn_if_costly
from ..pld.profiles.attained import attained_compositions
from ..pld.profiles.exact_sum import exact_profile
from ..pld.profiles.profile import PrivacyProfile
from ..progress import stage

if TYPE_CHECKING:
    from .surface import Queries
    from ..pld.pairs.base import DominatingPair
    from ..pld.pairs.composition import PairComposition


class At(NamedTuple):
    """``mechanism``'s pairs built at the lattice precision ``rho`` (``Mechanism.pairs_at``)."""

    mechanism: Queries  # a ``Mechanism``
    rho: float

    @property
    def name(self) -> str:
        return self.mechanism.name

    @property
    def pairs(self) -> PairComposition:
        """The pairs, or RepresentationUnavailable."""
        return self.mechanism.pairs_at(self.rho)

    def optional_pairs(self) -> Optional[PairComposition]:
        return self.mechanism.optional("pairs", self.rho)

    def single_pairs(self) -> Optional[Tuple[DominatingPair, DominatingPair]]:
        """(remove pair, add pair) if each direction is one pair used once."""
        return self.pairs.as_single()

    def exact_sum(self) -> Any:
        """Each direction's atoms (``pld/profiles/exact_sum.py``), or None where a grid is needed."""
        return self.mechanism._cached(("exact-sum", self.rho), lambda: exact_profile(self.pairs))

    def attained(self) -> Any:
        """(attained compositions or None, why none) (``pld/profiles/attained.py``)."""
        return self.mechanism._cached(("attained", self.rho), lambda: attained_compositions(self.pairs))

    def pure_epsilon(self) -> float:
        """The pure ε of the pairs (``PairComposition.pure_epsilon``); +∞ without pairs."""
        if self.optional_pairs() is None:
            return np.inf
        return self.mechanism._cached(("pure-epsilon", self.rho), self.pairs.pure_epsilon)

    @stage("planning the grids", counts=False)
    def profile(self, accuracy: float) -> PrivacyProfile:
        """``built_profile``, as a stage of the query that asks for it (``progress.py``)."""
        return built_profile(self, accuracy)

    # -- closed forms (the "analytic" method) -------------------------------
    def analytic_delta(self, eps, upper=True):
        """δ(ε) in closed form: μ-GDP, or the exact curve of a single pair
        (rounded up, or down for the lower end of a certified interval)."""
        mu = self.pairs.gaussian_mu
        if mu is not None:
            return delta_gdp(eps, mu, upper)
        rem, add = self.single_pairs()
        return np.maximum(rem.delta(eps, upper), add.delta(eps, upper))

    def analytic_epsilon(self, delta, upper=True):
        mu = self.pairs.gaussian_mu
        if mu is not None and upper:
            return epsilon_gdp(delta, mu)
        curve = lambda e: float(self.analytic_delta(e, upper))
        # P(L = +∞): a finite pair's from its logs is rounded up (``p_inf``); a lower bound
        # takes it rounded down (``end_bounds``), else it could call a finite ε infinite
        p_inf = max(p.end_bounds()[0][1 if upper else 0] for p in self.single_pairs()) if mu is None else 0.0
        return hockey_stick_to_epsilon(curve, delta, p_inf, upper)


def built_profile(at: At, accuracy: float) -> PrivacyProfile:
    """The certified privacy profile of ``at``'s pairs at ``accuracy``, built once per
    (accuracy, ρ) and kept on the mechanism."""
    accuracy = v.in_interval("accuracy", accuracy, 0.0, 1.0)
    return at.mechanism._cached(("profile", accuracy, at.rho), lambda: _new_profile(at.pairs, accuracy))


def _new_profile(pairs, accuracy):
    warn_if_costly(pairs, stacklevel=7)  # up front, where the work is far beyond the usual
    return PrivacyProfile(pairs, accuracy)
