"""The disjoint mixture of dominating pairs: one pair per value of a public coin.

If a mechanism's output laws are mixtures with the *same* weights on both
neighbours, M(D) = Σ_i w_i P_i and M(D') = Σ_i w_i Q_i (the index i a coin
whose law does not depend on the differing record: the others' batch size,
the number of copies of a record), and (A_i, B_i) dominates (P_i, Q_i), then
by the joint convexity of every hockey-stick divergence H_α (α ≥ 0)

    H_α(M(D) || M(D')) ≤ Σ_i w_i H_α(P_i || Q_i) ≤ Σ_i w_i H_α(A_i || B_i),

and the right side is the hockey-stick curve of the pair that also reveals the
coin: P* = ⊕_i w_i A_i, Q* = ⊕_i w_i B_i on the disjoint union (Balle,
Barthe & Gaboardi 2018, the conditioning step of their coupling proofs; it
is how dp_accounting mixes PLDs, ``compute_mixture``). Its privacy loss takes
component i's values with component i's masses, so every cell, atom and
end mass is the weighted sum of the components' ones.

Weights are probabilities computed in floating point. ``MixturePair`` takes
them already rounded *down* (each ≤ its exact value) and a ``spill`` t ≥ the
exact 1 − Σ w_i: that mass sits in the totally non-private pair (P-mass t at
L = +∞, Q-mass t at L = −∞, H_α = t for every α), which bounds what the
missing weight could add, since every H_α(A_i || B_i) ≤ 1.

Pure ε. The exact mixture's loss takes only its components' values, so its
supremum is the largest of theirs (``pure_epsilon``). The spill is rounding
or a cut tail of the weights, not a pair of the mechanism: where the caller
names the pairs the missing weight belongs to (``spill_of``), those join the
maximum; otherwise a spill keeps the pure ε at +∞ (its stand-in pair's).
"""
import math

import numpy as np

from .base import DominatingPair, stacked_masses
from ...numerics import ULP_OF_ONE as _U

_BATCH = 1 << 20  # edges per vectorised call of the components' cells (~8 MB an array)


class MixturePair(DominatingPair):
    """⊕_i w_i (A_i, B_i) plus ``spill`` at the two infinite losses (module docstring).

    ``components``: a sequence of (weight, pair), weights ≥ 0 rounded down;
    ``spill`` ≥ 0 rounded up. The P-mass may then exceed 1 by the rounding:
    more mass at L = +∞ only raises every δ (the safe side). ``spill_of``: pairs
    whose pure ε bounds that of every component the exact weights give the spilled
    mass to (module docstring; only ``pure_epsilon`` reads them)."""

    def __init__(self, components, spill=0.0, spill_of=()):
        comps = tuple((float(w), p) for w, p in components if w > 0)
        if not comps:
            raise ValueError("a mixture needs a component of positive weight")
        if any(w > 1 for w, _ in comps) or not 0 <= spill <= 1:
            raise ValueError(f"mixture weights must lie in [0, 1], got {[w for w, _ in comps]} and spill {spill!r}")
        self._comps, self._spill, self._spill_of = comps, float(spill), tuple(spill_of)
        self._round = (len(comps) + 2) * _U  # weighted sums of ≤ n + 1 terms: (n + 1) ½-ulp roundings and a product
        self.atomless = all(p.atomless for _, p in comps)
        lattices = {p.lattice for _, p in comps}
        self.lattice = lattices.pop() if len(lattices) == 1 else None
        anchors = {p.anchor for _, p in comps}
        self.anchor = anchors.pop() if len(anchors) == 1 else None

    components = property(lambda self: self._comps, doc="The (weight, pair) components.")
    spill = property(lambda self: self._spill, doc="The mass at the two infinite losses.")

    def pure_epsilon(self):
        """The largest pure ε of the components (and of ``spill_of`` where the spill is
        theirs; +∞ for a spill of no named pairs): each one's, rounded up already."""
        if self._spill > 0 and not self._spill_of:
            return math.inf
        return max(p.pure_epsilon() for p in (*(p for _, p in self._comps), *self._spill_of))

    @property
    def p_inf(self):
        """Σ w_i P_i(L = +∞) + t, rounded up."""
        return min(math.fsum(w * p.p_inf for w, p in self._comps) * (1 + self._round) + self._spill, 1.0)

    @property
    def q_ninf(self):
        return math.fsum(w * p.q_ninf for w, p in self._comps) + self._spill

    def end_errors(self):
        """The components' end errors, weighted, this sum's rounding, and the spill: the
        exact mixture may have none (its weights sum to 1), so the low ends
        (``end_bounds``, taken by the optimistic grids) leave it out."""
        errs = [p.end_errors() for _, p in self._comps]
        return tuple(math.fsum(w * e[i] for (w, _), e in zip(self._comps, errs)) + self._round * m + self._spill
                     for i, m in enumerate((self.p_inf, self.q_ninf)))

    def masses(self, edges):
        return self._masses(edges, False)

    def _masses(self, edges, errors):
        """Σ_i w_i × component i's cells; errors: theirs, weighted, and the sum's rounding."""
        e = np.asarray(edges, dtype=float)
        out = np.zeros((4 if errors else 2, len(e) + 1))
        # the components' cells a few at a time (one class's pairs are vectorised together;
        # ≤ ``_BATCH`` edges a call: memory), summed in the components' order, as one call each would
        per = max(1, _BATCH // max(len(e), 1))
        for start in range(0, len(self._comps), per):
            comps = self._comps[start:start + per]
            cells = np.array(stacked_masses([p for _, p in comps], np.tile(e, len(comps)), [len(e)] * len(comps),
                                            errors))
            for i, (w, _) in enumerate(comps):
                out += w * cells[:, i * (len(e) + 1):(i + 1) * (len(e) + 1)]
        if errors:
            out[2:] += self._round * out[:2]
        return tuple(out)

    def atom_masses(self, points):
        pts = np.asarray(points, dtype=float)
        a, b = np.zeros(len(pts)), np.zeros(len(pts))
        for w, p in self._comps:
            pa, pb = p.atom_masses(pts)
            a, b = a + w * pa, b + w * pb
        return a, b

    def delta(self, eps, upper=True):
        """Σ_i w_i δ_i(ε) + t, each δ_i rounded the asked way, the sum by (n + 2) ulp;
        rounded down (``upper=False``) without t: the weights, each ≤ its exact value,
        then bound the exact mixture's curve from below."""
        eps = np.asarray(eps, dtype=float)
        out = sum(w * np.asarray(p.delta(eps, upper), dtype=float) for w, p in self._comps)
        out = out * (1 + self._round) + self._spill if upper else out * (1 - self._round)
        out = np.minimum(out, 1.0)
        return float(out) if out.ndim == 0 else out

    def reverse(self):
        return MixturePair([(w, p.reverse()) for w, p in self._comps], self._spill,
                           [p.reverse() for p in self._spill_of])

    def key(self):
        named = (tuple(p.key() for p in self._spill_of),) if self._spill_of else ()  # pure ε differs
        return ("mixture", tuple((w, p.key()) for w, p in self._comps), self._spill) + named
