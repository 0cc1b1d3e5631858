"""``BallsInBinsSampling()(matrix_mechanism)``: balls-in-bins batching of a diagonal strategy.

Balls-in-bins (Chua, Ghazi, Harrison, Leeman, Kamath, Kumar, Manurangsi, Sinha
& Zhang 2025, "Balls-and-bins sampling for DP-SGD", arXiv 2412.16802): the n
rounds are cut into epochs of b rounds (b = the participation's separation,
n/k for ``fixed_epochs(k)``), and in every epoch each record is put in one of
its b rounds, uniformly and independently of the other records and of the
other epochs. For a *diagonal* strategy C (one band: DP-SGD, round t scaled by
c_t, |c_t| ≤ s) round t releases c_t·x_t + z·Z_t, a Gaussian of sensitivity
≤ s given the past, so an epoch is the random allocation of one of b adaptive
steps of that Gaussian (Feldman & Shenfeld 2025, arXiv 2502.08202;
``RandomAllocation``) and, the epochs' allocations being independent, the
mechanism is dominated by their composition:
``Composition()([RandomAllocation()(GaussianMechanism(z, s), b)], [n // b])``,
which the transformer returns (s = the largest |c_t|, rounded up). Where the |c_t|
differ, that Gaussian still dominates every round (N(c, z²) against N(0, z²) is
N(s, z²) against N(0, z²) after the kernel x ↦ (c/s)·x + N(0, z²(1 − c²/s²)),
which maps N(0, z²) to itself: the round's likelihood ratio is a conditional
expectation of the Gaussian's, smaller in the convex order, and so is an epoch's
mean of independent ones, which both directions' δ are convex functions of),
but it is not attained: the step's pair is then marked so (``_DominatingRound``),
and the intervals have no certified lower end (that Gaussian's would lie above
the mechanism's exact δ: 0.264 against 0.167 at c = (¼, 1), z = 1, ε = 0.1).

Where it does not apply (a clear ``ValueError``):

* **a strategy with two or more bands** (BandMF, Toeplitz, BLT, prefix, the
  tree). Round t's contribution moves rows t … t + β − 1, so the b alternatives
  of one epoch (rounds i, i + 1, …) move overlapping rows: the record's shifts
  C·e_i are not orthogonal, and the epoch is not "P at step i, Q elsewhere" in
  any product of steps, which is the pair the random-allocation analyses
  (arXiv 2502.08202, 2412.16802) bound. Nor do epochs compose as independent
  steps: the last round of one epoch and the first of the next are adjacent,
  so their rows overlap as well. The separation that makes amplified BandMF a
  product of rounds (participations ≥ b apart, disjoint rows;
  ``CyclicPoissonSampling``) is exactly what balls-in-bins does not give.
  Such a strategy is accounted without amplification (``MatrixMechanism``
  itself: a mixture of Gaussians of shift ≤ Δ is dominated by the Gaussian of
  Δ, by joint convexity of the hockey-stick divergence), or by the
  Rényi/conditional-composition bounds of Schuchardt & Kalinin 2026 (arXiv
  2601.21636) or the Monte Carlo of Choquette-Choo et al. 2025, which
  dpaccount does not implement.
* **b not dividing n** (a partial epoch's allocation is not specified).

jax_privacy's ``BallsInBinsSampling`` is a different scheme: the bins are drawn
*once*, and a record is in every round ≡ its bin (mod b). That is not provided:
non-adaptively it is one random allocation of a Gaussian of sensitivity
√⌈n/b⌉·s over b bins, but its bins' rounds interleave in time (round j + cb
is chosen after round j' + (c − 1)b of other bins), and neither analysis above
covers adaptive steps allocated by residue classes.
"""
from __future__ import annotations

from ..mechanism import Mechanism
from ..mechanisms.matrix import MatrixMechanism
from ..mechanisms.matrix_sensitivity import matrix_sensitivity
from ..mechanisms.standard import GaussianMechanism, gaussian_pairs
from .base import Transformer
from .composition import Composition
from .random_allocation import RandomAllocation


class _DominatingRound(GaussianMechanism):
    """The Gaussian of the largest |c_t| standing for every round of a diagonal whose |c_t|
    differ: it dominates each round, not attained (module docstring). No spec: it is no
    Gaussian mechanism's own release (``_spec_node`` reads a spec type its class declares)."""

    def _pairs(self):
        return gaussian_pairs(self.mu, attained=False)


class BallsInBinsSampling(Transformer):
    """``BallsInBinsSampling()(matrix_mechanism)`` (module docstring): every epoch of
    b rounds (b = the participation's separation) puts each record in one of its
    rounds uniformly; the strategy must be diagonal and b must divide n."""

    name = "BallsInBinsSample"

    def __call__(self, mechanism: MatrixMechanism) -> Mechanism:
        if not isinstance(mechanism, MatrixMechanism):
            raise TypeError(f"mechanism must be a MatrixMechanism, got {mechanism!r}")
        strategy, b = mechanism.strategy, mechanism.separation
        bands = strategy.bands
        if bands is None or bands > 1:
            raise ValueError(
                f"balls-in-bins amplification needs a diagonal strategy (one band: DP-SGD), got {strategy.kind} "
                f"with {'no banded square form' if bands is None else f'{bands} bands'}: the rounds one record may "
                f"take within an epoch move overlapping rows, which the random-allocation analysis "
                f"(arXiv 2502.08202) does not cover; account it without amplification (the MatrixMechanism itself)")
        n = strategy.n
        if n % b:
            raise ValueError(f"balls-in-bins needs epochs of b={b} rounds (the participation's separation) to "
                             f"divide the n={n} rounds")
        largest = matrix_sensitivity(strategy, 1, n, False).value  # the largest |c_t|, rounded up
        attained = len(set(strategy.column_norms_squared().tolist())) == 1  # every |c_t| the same
        step = (GaussianMechanism if attained else _DominatingRound)(mechanism.noise_multiplier, largest,
                                                                      relation=mechanism.relation)
        return Composition()([RandomAllocation()(step, b)], [n // b])
