"""Random allocation's attained witnesses (lower ends; ``pld/pairs/witnessed.py``).

An epoch of k > 1 of t steps: the laws of a coarser statistic of the whole epoch
(``lower.py``), carried by one of the epoch's k pairs; the others' witness is the
identical pair (the statistic already holds all the epoch tells), so each epoch's
attained composition is that statistic's pair once.
"""
import functools
import math

from ..pairs.discrete_pair import identical_pair, reverse_witnesses
from .epoch import AllocationPair, pure_bounds
from .lower import allocation_witness


class WitnessedAllocationPair(AllocationPair):
    """``AllocationPair`` (an upper pair, its own lower side: not attained) whose attained
    witnesses ``make()`` builds on first use (a plain upper-bound query never needs them),
    named in the key by ``key``."""

    def __init__(self, upper, lower, key, make, reversed_=False, pure=(math.inf, math.inf), refinable=False):
        super().__init__(upper, lower, key, pure=pure, refinable=refinable)
        self._make, self._reversed = make, reversed_

    @property
    def witnesses(self):
        if "_found" not in self.__dict__:
            found = self._make()
            self.__dict__["_found"] = reverse_witnesses(found) if self._reversed else found
        return self.__dict__["_found"]

    def reverse(self):
        return WitnessedAllocationPair(self.upper.reverse(), self.lower.reverse(), ("reversed",) + self._key,
                                       self._make, not self._reversed, self.pure[::-1], self.refinable)


def no_more():
    """The identical pair as the only witness: the use adds nothing to the epoch's statistic."""
    return (((identical_pair(), 1),),)


def epoch_witness(*args):
    """``allocation_witness(*args)`` as a witness list (none where it is None)."""
    found = allocation_witness(*args)
    return () if found is None else (((found, 1),),)


def witnessed_epoch(direction, args):
    """One direction of an epoch of k > 1 allocations, [(pair, count), ...] (the floor/ceil
    parts, upper pairs), with the whole epoch's attained witness (``allocation_witness(*args)``,
    built on first use) carried by one use of the last part and the identical pair
    witnessing every other use (module docstring)."""
    def wrapped(pair, make, tag):
        upper = pair.bound(True) if isinstance(pair, AllocationPair) else pair
        return WitnessedAllocationPair(upper, upper, (tag,) + pair.key(), make, pure=pure_bounds(pair),
                                       refinable=pair.refinable)

    out = [(wrapped(p, no_more, "epoch-part"), c) for p, c in direction[:-1]]
    last, count = direction[-1]
    if count > 1:
        out.append((wrapped(last, no_more, "epoch-part"), count - 1))
    out.append((wrapped(last, functools.partial(epoch_witness, *args), ("epoch-statistic",) + args[1:]), 1))
    return out
