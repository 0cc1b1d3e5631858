"""The representation a mechanism carries for the tight accountants: ``PairComposition``.

For each neighbouring direction (remove, add) the multiset of dominating pairs
whose product dominates it (Zhu, Dong & Wang 2022, Thm 10: dominating pairs
compose by taking products), and the exact merge of its Gaussian pairs
(μ = sqrt(Σ k μ_i²)) that every grid planner applies first.
"""
import math
from dataclasses import dataclass

from .base import DominatingGaussianPair, GaussianPair
from .discrete_pair import DiscretePair
from ...numerics import ULP_OF_ONE as _U


DIRECTIONS = ("remove", "add")


@dataclass(frozen=True)
class PairComposition:
    """Per direction, a tuple of (DominatingPair, count) whose product dominates."""

    remove: tuple
    add: tuple

    @staticmethod
    def single(remove_pair, add_pair):
        return PairComposition(((remove_pair, 1),), ((add_pair, 1),))

    def as_single(self):
        """(remove pair, add pair) where each direction is one pair used once (``single``), else None."""
        if len(self.remove) == 1 and len(self.add) == 1 and self.remove[0][1] == 1 and self.add[0][1] == 1:
            return self.remove[0][0], self.add[0][0]
        return None

    def direction(self, name):
        return getattr(self, name)

    def compose(self, parts):
        """Concatenate ``[(PairComposition, count), ...]`` after this one."""
        rem, add = dict(self.remove), dict(self.add)
        for rep, k in parts:
            for pair, c in rep.remove:
                rem[pair] = rem.get(pair, 0) + c * k
            for pair, c in rep.add:
                add[pair] = add.get(pair, 0) + c * k
        return PairComposition(_absorbed(rem), _absorbed(add))

    def pure_epsilon(self):
        """The pure ε: per direction Σ k·(each pair's ``pure_epsilon``), the larger
        direction; rounded up (the n-term sum: (1 + n·u)); +∞ where a pair's is."""
        sums = [math.fsum(k * p.pure_epsilon() for p, k in pairs) * (1 + (len(pairs) + 2) * _U)
                for pairs in (self.remove, self.add)]
        return max(max(sums), 0.0)

    @property
    def tight(self):
        """Every pair attained (``DominatingPair.tight``): then lower bounds on this
        composition's curves are lower bounds on the mechanism's (every step sees the
        same neighbours); else see ``pld/profiles/attained.py``."""
        return all(p.tight for p in self._each())

    @property
    def refinable(self):
        """Some pair built at a lattice precision ρ (``dpaccount/precision.py``): a finer ρ
        brings its upper and lower pairs closer."""
        return any(p.refinable for p in self._each())

    @property
    def cuts_to_infinity(self):
        """Some pair's P(L = +∞) holds finite losses its construction cut off: its ε = +∞ may
        be that cut's, not the mechanism's."""
        return any(p.cuts_to_infinity for p in self._each())

    def _each(self):
        """Every pair of both directions (with repeats)."""
        return (p for side in (self.remove, self.add) for p, _ in side)

    @property
    def gaussian_mu(self):
        """μ if every pair in both directions is Gaussian, else None."""
        mus = []
        for pairs in (self.remove, self.add):
            if any(p.gaussian_mu is None for p, _ in pairs):
                return None
            mus.append(root_sum_squares((p.gaussian_mu, k) for p, k in pairs))
        return max(mus)


def _absorbed(parts):
    """A direction's parts; where one pair has no finite P-mass at all (P ⟂ Q: its
    loss is +∞ P-almost surely), that pair once: the composed loss is then +∞
    P-almost surely too, whatever the other parts (δ(ε) = 1 for every ε), and the
    single pair says so exactly instead of a grid of no finite mass."""
    for pair in parts:
        if no_finite_mass(pair):
            return ((pair, 1),)
    return tuple(parts.items())


def no_finite_mass(pair):
    """Whether the pair's loss is +∞ P-almost surely (a finite pair with P ⟂ Q)."""
    return isinstance(pair, DiscretePair) and pair.atoms[0].size == 0


def root_sum_squares(terms):
    """sqrt(Σ k μ²) over (μ, k) without overflow or underflow of μ²: the μ are
    scaled by a power of two first (exact), so in range the value is unchanged
    (up to terms far below the rounding of the sum)."""
    terms = list(terms)
    top = max((mu for mu, _ in terms), default=0.0)
    if top == 0.0 or not math.isfinite(top):
        return top
    scale = math.ldexp(1.0, math.frexp(top)[1] - 1)  # top/scale in [1, 2)
    return scale * math.sqrt(sum(k * (mu / scale) ** 2 for mu, k in terms))


def merge_gaussians(pairs):
    gauss = [(p, k) for p, k in pairs if p.gaussian_mu is not None]
    rest = [(p, k) for p, k in pairs if p.gaussian_mu is None]
    if len(gauss) > 1 or (gauss and gauss[0][1] > 1):
        mu = root_sum_squares((p.gaussian_mu, k) for p, k in gauss)
        attained = all(p.tight for p, _ in gauss)  # one shift of norm ≤ μ stands for a dominated one
        gauss = [((GaussianPair if attained else DominatingGaussianPair)(mu), 1)]
    return gauss + rest
