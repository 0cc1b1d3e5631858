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

* random allocation of k > 1 of t steps: ``pld/allocation/witnessed.py``;
* truncated Poisson sampling: every other record leaves the base unchanged, so
  only "x is in the final batch" matters: Poisson sampling of the base at the
  inclusion probability q' (``truncated_poisson.inclusion_bounds``);
* sampling with replacement of a Gaussian sum: x adds Δ per copy, its
  replacement and the others add 0: Σ_k P(K = k) N(kΔ, σ²) against N(0, σ²)
  (``copies_noise.gaussian_copies_pair``); of a Laplace, discrete Laplace or discrete
  Gaussian sum: the same instance, binned and lumped (``copies_noise.py``).
"""
from .discrete_pair import reverse_witnesses
from .mixture import MixturePair
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
