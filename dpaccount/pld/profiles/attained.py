"""Attained compositions: where the lower end of a certified interval comes from.

A dominating pair bounds its mechanism from above only. A lower bound on the
*pair's* δ(ε) or ε(δ) (the optimistic grids, ``discretise_optimistic.py``)
bounds the *mechanism's* only where the pair is attained
(``DominatingPair.tight``): its two laws are the mechanism's outputs on some
neighbours. Where it is not, a certified interval built from the pair can
exclude the mechanism's exact value (``Composition()([BinomialMechanism(8,
0.2, relation="replace-one")], [3])`` at ε = 1: the hull's [0.484137,
0.484137] against 0.470688 for the worst fixed choice of directions).

A pair that is not tight lists ``witnesses``: attained compositions one of
which the adversary may pick at each use of the pair — the two shifts ±Δ
of a binomial's symmetric hull (``symmetric_hull.py``: a query that moves
up or down at that step), A and A reversed of a subset-sampled pair, the
base mechanism's own pairs behind a frozen ``Discretise`` grid. Any choice
of one witness per use (recursively, until every pair is tight) is the pair
of output laws of the composed mechanism on actual neighbours, so a lower
bound on *its* curve is one on the mechanism's: the mechanism's value is the
supremum over all such choices (adaptive ones included, which can do
better: in the example above an adversary choosing each direction from the
outputs so far reaches 0.475171, by exact dynamic programming).

``attained_compositions`` lists a few such fixed choices per direction:
every split of each part's uses among its witnesses where there are at most
``MAX_CHOICES``, else the pure choices and three even mixtures. The largest
lower bound over them is the mechanism's lower end (``queries/intervals.py``). A pair
that is neither tight nor has an attained witness (a mixture over a public
coin, a Poisson-subsampled product) leaves the lower
end absent, with the reason.
"""
import itertools
import math

import numpy as np

from ...errors import GridTooLarge
from ..pairs.composition import PairComposition
from .exact_sum import delta_bounds, epsilon_bounds, exact_profile, largest_loss_lower
from .profile import PrivacyProfile

MAX_CHOICES = 9  # attained compositions tried per direction (each costs one lower bound)
_MIXTURES = (0.25, 0.5, 0.75)  # shares of the first of two witnesses tried where splits are too many


def _merge(parts):
    """One composition ((pair, count), ...) from several, equal pairs' counts added."""
    out = {}
    for part in parts:
        for pair, count in part:
            if count:
                out[pair] = out.get(pair, 0) + count
    return tuple(out.items())


def _scaled(option, times):
    return tuple((p, c * times) for p, c in option)


def _splits(options, uses):
    """Compositions of ``uses`` uses, each use one of ``options`` (compositions of
    tight pairs): every split where there are at most ``MAX_CHOICES``, else the
    pure ones and, for two options, the ``_MIXTURES``."""
    m = len(options)
    if math.comb(uses + m - 1, m - 1) <= MAX_CHOICES:
        counts = [c for c in itertools.product(range(uses + 1), repeat=m) if sum(c) == uses]
    else:
        counts = [tuple(uses if j == i else 0 for j in range(m)) for i in range(m)]
        if m == 2:
            counts += [(round(uses * t), uses - round(uses * t)) for t in _MIXTURES]
    picked = list(dict.fromkeys(counts))[:MAX_CHOICES]
    return [_merge(_scaled(o, n) for o, n in zip(options, c)) for c in picked]


def _direction_choices(direction):
    """Attained compositions of one direction (a list of ((tight pair, count), ...)),
    or a string saying which pair has none."""
    parts = []
    for pair, count in direction:
        if pair.tight:
            parts.append([((pair, count),)])
            continue
        options = []
        for alt in pair.witnesses:
            found = _direction_choices(alt)
            if not isinstance(found, str):  # an alternative with no attained form is only skipped
                options.extend(found)
        if not options:
            return f"{pair!r} is not attained by any pair of neighbours and has no attained witness"
        parts.append(_splits(list(dict.fromkeys(options)), count))
    sizes = [len(p) for p in parts]
    if math.prod(sizes) <= MAX_CHOICES:
        combos = itertools.product(*parts)
    else:  # the i-th choice of every part together (the pure ones first in each)
        combos = (tuple(p[min(i, len(p) - 1)] for p in parts) for i in range(min(max(sizes), MAX_CHOICES)))
    return [_merge(c) for c in combos]


def attained_compositions(pairs):
    """(compositions, reason) for a ``PairComposition``: a list of PairCompositions of
    tight pairs, each attained by the mechanism on some neighbours (module
    docstring; remove and add choices paired in order, the shorter list's last
    repeated), and None; or None and why there is none."""
    if pairs.tight:
        return [pairs], None
    remove, add = (_direction_choices(pairs.direction(d)) for d in ("remove", "add"))
    for found in (remove, add):
        if isinstance(found, str):
            return None, found
    n = max(len(remove), len(add))
    return [PairComposition(remove[min(i, len(remove) - 1)], add[min(i, len(add) - 1)]) for i in range(n)], None


def attained_lower(found, values, kind, accuracy, rounds):
    """The largest certified lower bound on ε(δ) (``kind`` "epsilon") or δ(ε) ("delta")
    at ``values`` over the attained compositions ``found``: each by its exact sum where
    it has one (``exact_sum.py``), else by its optimistic grids, refined ``rounds``
    times where it is alone and once where there are several (every round for each
    costs about 3× the time for the same lower end on the case measured in
    benchmarks/README.md, "Measurements behind constants in the code"). A
    composition whose grids do not fit the cap is only left untried."""
    low = np.zeros(len(values))  # ε ≥ 0 and δ ≥ 0: 0 bounds both
    for pairs in found:
        exact = exact_profile(pairs)
        if exact is not None:
            low = np.maximum(low, (epsilon_bounds if kind == "epsilon" else delta_bounds)(exact, values)[0])
            continue
        profile = PrivacyProfile(pairs, accuracy)
        try:
            got = getattr(profile, kind + "_bounds")(values, rounds if len(found) == 1 else 1)[0]
        except GridTooLarge:
            continue
        low = np.maximum(low, np.ravel(got))
    return low


def attained_pure_lower(found, accuracy):
    """The largest certified lower bound on the pure ε (ε(0), the supremum of the loss)
    over the attained compositions ``found``: ε(0) ≥ ε(δ) for every δ > 0, and an
    optimistic grid's ε(0) is the largest loss it holds (or +∞ where it keeps mass at
    +∞), below which its δ — so the exact δ — is still > 0; an exact sum's lower end
    at δ = 0 (its largest loss, less its rounding); for finite pairs, their largest
    losses summed (``largest_loss_lower``: the top atom's mass may underflow, beyond
    the grids' tail or the exact sum's floats, its loss does not). Refined no further: for an
    unbounded loss (a Gaussian's) no finite lower end meets an accuracy anyway."""
    low = 0.0
    for pairs in found:
        finite = largest_loss_lower(pairs)
        if finite is not None:  # all finite: the top atom itself, whatever its mass
            low = max(low, finite)
            continue
        exact = exact_profile(pairs)
        try:
            got = (epsilon_bounds(exact, [0.0])[0] if exact is not None
                   else PrivacyProfile(pairs, accuracy).epsilon_lower(np.zeros(1)))
        except GridTooLarge:
            continue
        low = max(low, float(np.ravel(got)[0]))
    return low
