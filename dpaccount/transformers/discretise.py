"""``Discretise()``: a mechanism replaced by its certified PLD grid.

``Discretise()(mechanism, accuracy=1e-3)`` computes, per neighbouring
direction, the mechanism's pessimistic privacy-loss grid (``Mechanism.pld``:
Connect-the-Dots, every rounding upwards, the transform noise added to every
bin, the mass beyond the window at +∞) and returns a mechanism whose
dominating pair *is* that grid: the discrete pair (P̃, Q̃) with
P̃(ε_j) = p_j, Q̃(ε_j) = p_j e^{−ε_j} and P̃(+∞) = p_∞.

Why this is sound. H_α(P‖Q) = E_P[(1 − α e^{−L})_+] depends on the
P-distribution of the loss only, and the pessimistic grid over-states it for
every α > 0 (ε of either sign). The product formula
H_α(P₁×P₂‖Q₁×Q₂) = ∫ H_{α e^{−ℓ₂(y)}}(P₁‖Q₁) dP₂(y) holds for any
non-negative measures, so a pair that over-states every H_α keeps doing so
in any composition, even though the bins' noise pad may lift the total mass
of P̃ a few ulps above 1 (Zhu, Dong & Wang 2022, Thm 10, with that remark).

What it is for: freezing an expensive part (its grid is computed once and
then composed like any discrete pair), and long compositions in stages:
``Composition()([Discretise()(Composition()([m], [10**4]))], [10**5])`` is 10⁹
steps of m, each stage on a grid planned for its own spread. The rounding
is pessimistic only: an optimistic grid is not a dominating pair. Nor is
the grid attained: it lies above the mechanism's curve, so the lower end of
a certified interval comes from the base's own pairs (the grid pair's
``witnesses``, ``pld/profiles/attained.py``), never from the grid.
The result keeps the mechanism's RDP (still valid: same mechanism).
"""
from __future__ import annotations

import numpy as np

from .. import validation as v
from ..mechanism import Mechanism
from ..queries import DEFAULT_ACCURACY
from ..queries.at import At
from ..pld.pairs.composition import DIRECTIONS, PairComposition
from ..pld.pairs.discrete_pair import DiscretePair
from .base import Transformer, check_mechanism


def grid_to_pair(grid, name, witnesses=()):
    """The discrete pair whose privacy-loss distribution is the pessimistic
    ``grid`` (finite atoms at the grid points, p_∞ on an outcome Q never takes).
    Not tight (it lies above the mechanism's curve); ``witnesses``: the
    mechanism's own pairs of that direction, where its certified lower ends
    come from (``pld/profiles/attained.py``)."""
    if not grid.pessimistic:
        raise ValueError("only a pessimistic grid dominates its mechanism; got an optimistic one")
    live = grid.probs > 0
    log_p = np.log(grid.probs[live])
    log_q = log_p - grid.losses[live]
    if grid.p_inf > 0:
        log_p, log_q = np.append(log_p, np.log(grid.p_inf)), np.append(log_q, -np.inf)
    # the grid's step is a lattice hint: the next stage keeps it where it is not far finer
    # than that stage needs (``pld/grids/accountant.snap_to_lattice``)
    return DiscretePair(log_p, log_q, lattice=grid.step, name=name, witnesses=witnesses)


class DiscretisedMechanism(Mechanism):
    """``base`` represented by its pessimistic PLD grids (one per direction)."""

    _spec_type = "Discretise"

    def __init__(self, base, accuracy):
        super().__init__(f"Discretise:{base.name}",
                         {**{f"{base.name}:{k}": val for k, val in base.params.items()},
                          "Discretise:accuracy": accuracy}, relation=base.relation)
        object.__setattr__(self, "base", base)
        object.__setattr__(self, "accuracy", accuracy)

    def _identity(self):
        return (self.base, self.accuracy)

    def _spec_args(self):
        return {"mechanism": self.base, "accuracy": self.accuracy}

    def _pairs_at(self, rho):
        pairs = self.base.optional("pairs", rho)
        if pairs is None:
            return None
        profile = At(self.base, rho).profile(self.accuracy)  # the grids ``Mechanism.pld`` gives, at ``rho``
        made = {d: grid_to_pair(profile.grid(d, 1e-30, True), f"grid({self.base.name},{d})",
                                (pairs.direction(d),))
                for d in DIRECTIONS}
        return PairComposition.single(made["remove"], made["add"])

    def _rdp(self):
        return self.base.optional("rdp")


class Discretise(Transformer):
    """``Discretise()(mechanism, accuracy=1e-3)``: the mechanism as a PLD grid
    (pessimistic rounding; ``accuracy`` plans the grid as ``Mechanism.pld`` does)."""

    name = "Discretise"

    def __call__(self, mechanism: Mechanism, accuracy: float = DEFAULT_ACCURACY) -> Mechanism:
        mechanism = check_mechanism("mechanism", mechanism)
        accuracy = v.in_interval("accuracy", accuracy, 0.0, 1.0)
        return DiscretisedMechanism(mechanism, accuracy)
