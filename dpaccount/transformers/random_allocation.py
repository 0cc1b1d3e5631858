"""``RandomAllocation()(mechanism, steps, selected=1)``: each record takes part in
exactly ``selected`` of ``steps`` steps, chosen uniformly at random (``selected=1``:
one epoch of balls-in-bins batching). Compose epochs with ``Composition``.

Add/remove mechanisms whose pairs are one pair per direction. The remove
direction is the allocation of the base's remove pair, the add direction the
reversed allocation of the base's add pair reversed (``pld/allocation/epoch.py``:
Feldman & Shenfeld 2025; its upper pair for upper bounds, its lower pair for
certified lower bounds of the mechanism).

``selected = k > 1``: the allocation of k of t steps is dominated by the
composition of k allocations of one step each, t mod k of them over ⌈t/k⌉
steps and the others over ⌊t/k⌋ (Feldman & Shenfeld 2025, the reduction
that PLD_accounting's floor/ceil split implements). That gives upper bounds
only: those pairs are not attained, and each one's lower side is its upper pair
itself, so that the pairs' interval is the grids' error alone, which refining
narrows (a lower side coarser than the upper one would keep ``*_bounds`` from
ever meeting its accuracy). The lower end of
``*_bounds`` comes from an attained witness of the whole epoch: the laws of a
coarser statistic of its output (``pld/allocation/lower.py``, data
processing), carried by one of the epoch's k pairs (``pld/allocation/witnessed.py``);
none beyond ``allocation_lower.SUPPORT``/4 steps (the lower end is then absent).
RDP (``rdp/random_allocation.py``) from the base's RDP curve: the remove
direction by the multinomial sum over the steps' moments (exact at integer
orders for the Gaussian: Feldman & Shenfeld 2025, Cor. 6.2), the add direction
by the smaller of the geometric-mean bound and a Laplace-transform bound; for
``selected > 1`` the curves of the same floor/ceil reduction, added.
"""
from __future__ import annotations

from .. import validation as v
from ..errors import AccuracyNotReached
from ..mechanism import Mechanism
from ..pld.pairs.composition import PairComposition
from ..pld.allocation.epoch import AllocationPair, allocation_pair, pure_bounds
from ..pld.allocation.witnessed import witnessed_epoch
from ..rdp.curve import RDPCurve
from ..rdp.random_allocation import allocation_rdp
from ..relations import ADD_REMOVE, require_relation
from .base import Transformer, check_mechanism
from .poisson_sampling import sampled_params


def _one_step_parts(steps, selected):
    """[(steps per allocation, how many)] of the floor/ceil reduction of k of t to k of one."""
    small, extra = divmod(steps, selected)
    return [(s, c) for s, c in ((small + 1, extra), (small, selected - extra)) if c]


class RandomlyAllocatedMechanism(Mechanism):
    """``base`` run in ``selected`` of ``steps`` steps chosen uniformly at random per record."""

    _spec_type = "RandomAllocation"

    def __init__(self, base, steps, selected):
        params = sampled_params(sampled_params(base.params, "steps", steps), "selected", selected)
        super().__init__(f"RandomAllocation:{base.name}", params)
        object.__setattr__(self, "base", base)
        object.__setattr__(self, "steps", steps)
        object.__setattr__(self, "selected", selected)

    def _identity(self):
        return (self.base, self.steps, self.selected)

    def _spec_args(self):
        return {"mechanism": self.base, "steps": self.steps, "selected": self.selected}

    def _pairs_at(self, rho):
        base = self.base.optional("pairs", rho)
        if base is None:
            return None
        if len(base.remove) != 1 or len(base.add) != 1 or base.remove[0][1] != 1 or base.add[0][1] != 1:
            return None  # a product of pairs is not a pair of one-dimensional laws
        remove, add = base.remove[0][0], base.add[0][0].reverse()
        try:
            return self._epoch_pairs(remove, add, rho)
        except AccuracyNotReached:  # a base whose loss leaves the float range (Gaussian σ ≤ 0.03): no lattice
            return None             # holds its ratio; the queries fall back to RDP, and say so

    def _epoch_pairs(self, remove, add, rho):
        parts = {"remove": [], "add": []}
        for steps, count in _one_step_parts(self.steps, self.selected):
            rem = allocation_pair(remove, steps, rho)
            # a symmetric base (Gaussian, Laplace, randomized response): one law of S for both
            add_pair = (rem if add == remove else allocation_pair(add, steps, rho)).reverse()
            if steps > 1 and self.selected > 1:  # upper bounds only (module docstring)
                rem, add_pair = (AllocationPair(p.bound(True), p.bound(True), ("upper-only",) + p.key(),
                                                pure=pure_bounds(p), refinable=p.refinable) for p in (rem, add_pair))
            parts["remove"].append((rem, count))
            parts["add"].append((add_pair, count))
        if 1 < self.selected < self.steps and remove.tight and add.tight:  # the lower end's witness
            parts["remove"] = witnessed_epoch(parts["remove"], (remove, self.steps, self.selected, False))
            parts["add"] = witnessed_epoch(parts["add"], (add, self.steps, self.selected, True))
        return PairComposition(tuple(parts["remove"]), tuple(parts["add"]))

    def _rdp(self):
        base, pairs = self.base.optional("rdp"), self.base.optional("pairs")
        if base is None:
            return None
        mu = None if pairs is None else pairs.gaussian_mu   # the steps' exact moments where Gaussian
        return RDPCurve(tuple((allocation_rdp(base, steps, mu), count)
                              for steps, count in _one_step_parts(self.steps, self.selected)))


class RandomAllocation(Transformer):
    """``RandomAllocation()(mechanism, steps, selected=1)``: random allocation of
    each record to ``selected`` of ``steps`` steps (one epoch)."""

    name = "RandomAllocation"

    def __call__(self, mechanism: Mechanism, steps: int, selected: int = 1) -> Mechanism:
        mechanism = require_relation("mechanism", check_mechanism("mechanism", mechanism), ADD_REMOVE,
                                     "random allocation amplifies add/remove guarantees")
        steps = v.count("steps", steps)
        selected = v.count("selected", selected)
        if selected > steps:
            raise ValueError(f"selected must be at most steps = {steps}, got {selected!r}")
        return RandomlyAllocatedMechanism(mechanism, steps, selected)
