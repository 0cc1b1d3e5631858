"""Dominating pairs given attained witnesses from outside: lower ends for batch schemes.

A batch scheme's dominating pair is often not attained (it reveals a coin the
adversary cannot see: "the batch is full", the number of copies of a record),
so on its own it gives no lower end (``pld/profiles/attained.py``). Its
transformer may know an *instance* — neighbouring datasets and a query — whose
output laws it can compute; that pair, or one pointwise below it (P-masses
rounded down, the same Q), is a witness: the adversary may pick it at each use,
and a lower bound on any composition of witnesses is one on the mechanism
(``attained.py``). These subclasses carry such witnesses beside the pair's own
(``witnesses``), in their ``key`` too (two pairs with equal curves but other
witnesses are not merged), and reversed with the pair.

The witnesses used (each transformer's docstring proves its instance):

* random allocation of k > 1 of t steps: the laws of a coarser statistic of the
  whole epoch (``allocation_lower.py``), carried by one of the epoch's k pairs; the
  others' witness is the identical pair (the statistic already holds all the
  epoch tells), so each epoch's attained composition is that statistic's pair once;
* truncated Poisson sampling: every other record leaves the base unchanged, so
  only "x is in the final batch" matters: Poisson sampling of the base at the
  inclusion probability q' (``truncated_poisson.inclusion_bounds``);
* sampling with replacement of a Gaussian sum: x adds Δ per copy, its
  replacement and the others add 0: Σ_k P(K = k) N(kΔ, σ²) against N(0, σ²)
  (``copies_noise.gaussian_copies_pair``); of a Laplace, discrete Laplace or discrete
  Gaussian sum: the same instance, binned and lumped (``copies_noise.py``).
"""
import functools
import math

from .allocation_lower import allocation_witness
from .discrete_pair import identical_pair, reverse_witnesses
from .mixture import MixturePair
from .random_allocation import AllocationPair, pure_bounds
from .subset_sampling import SubsetSampledPair


def _witness_key(witnesses):
    return tuple(tuple((p.key(), c) for p, c in alt) for alt in witnesses)


class WitnessedMixturePair(MixturePair):
    """``MixturePair`` (its curve, unchanged) with attained ``extra`` witnesses."""

    def __init__(self, components, spill, extra, spill_of=()):
        super().__init__(components, spill, spill_of)
        self._extra = tuple(extra)

    @property
    def witnesses(self):
        return self._extra

    def reverse(self):
        return WitnessedMixturePair([(w, p.reverse()) for w, p in self.components], self.spill,
                                    reverse_witnesses(self._extra), [p.reverse() for p in self._spill_of])

    def key(self):
        return ("witnessed", super().key(), _witness_key(self._extra))


class WitnessedSubsetSampledPair(SubsetSampledPair):
    """``SubsetSampledPair`` (symmetric: its own reverse, its two directions both orders
    of replace-one neighbours) with attained ``extra`` witnesses after its own (A and A
    reversed, where attained)."""

    def __init__(self, pair, extra):
        super().__init__(pair._base, pair._gamma)
        self._extra = tuple(extra)

    @property
    def witnesses(self):
        return super().witnesses + self._extra

    def reverse(self):
        return self

    def key(self):
        return ("witnessed", super().key(), _witness_key(self._extra))


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
