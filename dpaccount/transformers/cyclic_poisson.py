"""``CyclicPoissonSampling()(matrix_mechanism, q)``: amplified banded matrix factorization.

Cyclic Poisson sampling splits the records into b groups; round i samples each
record of group i mod b independently with probability q (jax_privacy's
``CyclicPoissonSampling`` with ``cycle_length = b``). A record thus takes part only
in rounds b apart, at most ⌈n/b⌉ of them. For a strategy C with at most b non-zero
bands, the rows that one participation moves (t … t + b − 1) are disjoint from
those of the record's next one, and the matrix mechanism with noise z is dominated
by DP-SGD (a Poisson-subsampled Gaussian at rate q, noise z, sensitivity the
largest column norm of C) run for ⌈n/b⌉ rounds (Choquette-Choo, Ganesh, McKenna,
McMahan, Rush, Thakurta & Xu 2023, "(Amplified) banded matrix factorization",
arXiv 2306.08153, its amplification theorem for banded strategies). The
transformer returns exactly that ``Composition``; jax_privacy's
``amplified_bandmf_event`` is the same event for column norms ≤ 1.

With ``largest_group_size`` and ``max_batch_size`` the Poisson batch of each
round is truncated to at most ``max_batch_size`` records (jax_privacy's
``truncated_amplified_bandmf_event``): each of the ⌈n/b⌉ rounds is then
``TruncatedPoissonSampling`` of the Gaussian over the record's group, whose size
is at most ``largest_group_size``; the same row-disjointness reduces the banded
mechanism to these rounds (the truncation of a round depends only on the
records of its own group).

The recipes ``amplified_bandmf`` and ``truncated_amplified_bandmf`` plan their ε
queries to an absolute error (``mechanisms/absolute_accuracy.py``: dp_accounting's
PLD answer on jax_privacy's event has an absolute error, the default plan a relative one).

Balls-in-bins batching: ``transformers/balls_in_bins.py`` (diagonal strategies only,
and why).
"""
from __future__ import annotations

import math

from .. import validation as v
from ..mechanism import Mechanism
from ..mechanisms.absolute_accuracy import AbsoluteAccuracy
from ..mechanisms.matrix import MatrixMechanism
from ..mechanisms.matrix_sensitivity import matrix_sensitivity
from ..mechanisms.standard import GaussianMechanism
from .base import Transformer
from .composition import Composition
from .poisson_sampling import PoissonSampling
from .truncated_poisson import TruncatedPoissonSampling


def banded_dpsgd(noise_multiplier: float, column_norm: float, rounds: int, q: float,
                 largest_group_size: int | None = None, max_batch_size: int | None = None) -> Mechanism:
    """DP-SGD of ``rounds`` Poisson-sampled Gaussians (noise z, sensitivity ``column_norm``),
    each truncated to ``max_batch_size`` records of a group of ``largest_group_size`` if given."""
    gaussian = GaussianMechanism(noise_multiplier, column_norm)
    if (largest_group_size is None) != (max_batch_size is None):
        raise ValueError(f"largest_group_size and max_batch_size go together, got {largest_group_size!r} "
                         f"and {max_batch_size!r}")
    if max_batch_size is None or largest_group_size is None:
        step = PoissonSampling()(gaussian, q)
    else:
        step = TruncatedPoissonSampling()(gaussian, q, largest_group_size, max_batch_size)
    return Composition()([step], [v.count("rounds", rounds)])


class CyclicPoissonSampling(Transformer):
    """``CyclicPoissonSampling()(matrix_mechanism, q, largest_group_size=None,
    max_batch_size=None)`` (module docstring). The groups are b = the mechanism's
    participation separation (``Participation.min_separation(b)`` or ``fixed_epochs``);
    the strategy must have at most b bands."""

    name = "CyclicPoissonSample"

    def __call__(self, mechanism: MatrixMechanism, q: float, largest_group_size: int | None = None,
                 max_batch_size: int | None = None) -> Mechanism:
        if not isinstance(mechanism, MatrixMechanism):
            raise TypeError(f"mechanism must be a MatrixMechanism, got {mechanism!r}")
        q = v.probability("q", q)
        strategy, b = mechanism.strategy, mechanism.separation
        bands = strategy.bands
        if bands is None or bands > b:
            raise ValueError(
                f"cyclic Poisson amplification needs a strategy with at most b={b} bands (the participation's "
                f"separation, the number of groups), got {strategy.kind} with "
                f"{'no banded square form' if bands is None else f'{bands} bands'}: the reduction to DP-SGD "
                f"(arXiv 2306.08153) does not hold for it")
        norm = matrix_sensitivity(strategy, 1, strategy.n, False).value  # the largest column norm, rounded up
        rounds = math.ceil(strategy.n / b)
        return banded_dpsgd(mechanism.noise_multiplier, norm, rounds, q, largest_group_size, max_batch_size)


RECIPE_EPSILON_ERROR = 1e-6
"""The absolute error the recipes' ε queries are planned to (``AbsoluteAccuracy``)."""


def amplified_bandmf(noise_multiplier: float, iterations: int, num_bands: int, sampling_prob: float) -> Mechanism:
    """jax_privacy's ``amplified_bandmf_event`` as a mechanism: BandMF of ``num_bands`` bands
    (column norms ≤ 1) over ``iterations`` rounds with cyclic Poisson sampling at
    ``sampling_prob``: DP-SGD for ⌈iterations/num_bands⌉ rounds (module docstring).

    The recipe chooses its own accuracy: its ε queries are planned to an absolute error
    of ``RECIPE_EPSILON_ERROR`` = 10⁻⁶ (``AbsoluteAccuracy``; ``.base`` is the plain
    ``Composition``, at the default relative accuracy 10⁻³). dp_accounting's PLD answer
    on jax_privacy's event is 1.1–2.3·10⁻⁶ above the exact ε at δ = 10⁻⁶ (a fixed loss
    step of 10⁻⁴), so the default relative plan would certify up to 2.4·10⁻⁴ relative
    above it; this one certifies at or below it on the tests' and
    ``benchmarks/bench_matrix.py``'s settings, at a cost comparable to dp_accounting's
    (where dp_accounting's answer is below the exact ε, as at δ = 10⁻¹⁰ in two of them,
    no certified answer can be: docs/matrix_mechanisms.rst)."""
    z = v.positive("noise_multiplier", noise_multiplier)
    n, b = v.count("iterations", iterations), v.count("num_bands", num_bands)
    return AbsoluteAccuracy(banded_dpsgd(z, 1.0, math.ceil(n / b), v.probability("sampling_prob", sampling_prob)),
                            RECIPE_EPSILON_ERROR)


def truncated_amplified_bandmf(noise_multiplier: float, iterations: int, num_bands: int, sampling_prob: float,
                               largest_group_size: int, truncated_batch_size: int) -> Mechanism:
    """jax_privacy's ``truncated_amplified_bandmf_event`` as a mechanism: as
    ``amplified_bandmf`` with each batch truncated to ``truncated_batch_size`` records
    (its ε queries planned to the same absolute error)."""
    z = v.positive("noise_multiplier", noise_multiplier)
    n, b = v.count("iterations", iterations), v.count("num_bands", num_bands)
    return AbsoluteAccuracy(banded_dpsgd(z, 1.0, math.ceil(n / b), v.probability("sampling_prob", sampling_prob),
                                         v.count("largest_group_size", largest_group_size),
                                         v.count("truncated_batch_size", truncated_batch_size)),
                            RECIPE_EPSILON_ERROR)
