"""DP-SGD in its users' words: ``dpsgd(noise_multiplier, batch_size, dataset_size, epochs)``.

The rate and the step count of a training loop, as Opacus counts them
(``opacus.data_loader.DPDataLoader``): a pass over the data is
⌈dataset_size / batch_size⌉ optimizer steps (a loader that keeps its last,
short batch), the sampling rate is batch_size / dataset_size (the expected
batch), and ``epochs`` passes (a real number: a partial pass too) are
⌈epochs · ⌈dataset_size / batch_size⌉⌉ steps, rounded *up* — one step more
never under-reports.

``sampling`` names the batch scheme the loop uses (``SAMPLINGS``):

* ``"poisson"`` — each record joins each batch independently with
  probability q (Opacus' DPDataLoader): ``PoissonSampling``, add/remove;
* ``"without-replacement"`` — each batch a uniformly random subset of
  exactly ``batch_size`` records, drawn afresh every step: ``SubsetSampling``,
  replace-one (Balle, Barthe & Gaboardi 2018). A *shuffled* epoch (each record
  exactly once per pass) is another scheme, which neither accounts tightly;
* ``"truncated-poisson"`` — Poisson sampling at q, then a uniformly random
  ``max_batch_size`` of the batch if it is larger: ``TruncatedPoissonSampling``,
  add/remove (dp_accounting's ``TruncatedSubsampledGaussianDpEvent``);
* ``"with-replacement"`` — ``batch_size`` independent uniform draws of a
  record (one may appear several times): ``SamplingWithReplacement``,
  replace-one;
* ``"random-allocation"`` — each record in exactly one of the ⌈n/b⌉ steps
  of each pass, chosen uniformly (balls-in-bins): ``RandomAllocation``, one
  epoch composed ``epochs`` times (whole epochs only), add/remove.

docs/batch_schemes.rst says which scheme a training loop uses.
"""
import math

from . import validation as v
from .mechanisms.standard import GaussianMechanism
from .transformers.composition import Composition
from .transformers.poisson_sampling import PoissonSampling
from .transformers.random_allocation import RandomAllocation
from .transformers.subset_sampling import SubsetSampling
from .transformers.truncated_poisson import TruncatedPoissonSampling
from .transformers.with_replacement import SamplingWithReplacement


# one step of each batch scheme: (noise multiplier, batch size, dataset size, max batch size) -> mechanism
def _poisson(sigma, b, n, max_b):
    return PoissonSampling()(GaussianMechanism(sigma), b / n)


def _without_replacement(sigma, b, n, max_b):
    return SubsetSampling()(GaussianMechanism(sigma, relation="replace-one"), b / n)


def _truncated_poisson(sigma, b, n, max_b):
    if max_b is None:
        raise ValueError("max_batch_size is required for sampling='truncated-poisson' (the cap on a batch)")
    return TruncatedPoissonSampling()(GaussianMechanism(sigma), b / n, n, max_b)


def _with_replacement(sigma, b, n, max_b):
    return SamplingWithReplacement()(GaussianMechanism(sigma, relation="replace-one"), n, b)


def _random_allocation_epoch(sigma, b, n, max_b):
    return RandomAllocation()(GaussianMechanism(sigma), -(-n // b))


SAMPLINGS = {"poisson": _poisson, "without-replacement": _without_replacement,
             "truncated-poisson": _truncated_poisson, "with-replacement": _with_replacement,
             "random-allocation": _random_allocation_epoch}
PER_EPOCH = {"random-allocation"}   # the schemes whose unit is a pass, not a step


def dpsgd_steps(batch_size, dataset_size, epochs):
    """(sampling rate, steps): batch_size / dataset_size and ⌈epochs·⌈n / B⌉⌉ (module docstring)."""
    batch_size, dataset_size = v.count("batch_size", batch_size), v.count("dataset_size", dataset_size)
    if batch_size > dataset_size:
        raise ValueError(f"batch_size must be at most dataset_size = {dataset_size}, got {batch_size}")
    epochs = v.positive("epochs", epochs)
    per_epoch = -(-dataset_size // batch_size)  # ⌈n / B⌉, in integers
    return batch_size / dataset_size, v.count("steps (epochs × steps per epoch)", math.ceil(epochs * per_epoch))


def dpsgd(noise_multiplier, batch_size, dataset_size, epochs, sampling="poisson", max_batch_size=None):
    """The mechanism of DP-SGD trained for ``epochs`` passes with batches of ``batch_size``
    (expected, for Poisson sampling) out of ``dataset_size`` records and Gaussian noise of
    ``noise_multiplier`` times the clipping norm (module docstring: the step count and the
    schemes). ``max_batch_size``: the cap of ``sampling="truncated-poisson"`` (required there,
    refused elsewhere)."""
    sigma = v.positive("noise_multiplier", noise_multiplier)
    if sampling not in SAMPLINGS:
        raise ValueError(f"sampling must be one of {sorted(SAMPLINGS)}, got {sampling!r}")
    if max_batch_size is not None and sampling != "truncated-poisson":
        raise ValueError(f"max_batch_size applies to sampling='truncated-poisson' only, got "
                         f"max_batch_size={max_batch_size!r} with sampling={sampling!r}")
    q, steps = dpsgd_steps(batch_size, dataset_size, epochs)
    unit = SAMPLINGS[sampling](sigma, batch_size, dataset_size, max_batch_size)
    if sampling in PER_EPOCH:
        if epochs != int(epochs):
            raise ValueError(f"epochs must be a whole number for sampling={sampling!r} (each pass allocates "
                             f"every record once), got {epochs!r}")
        steps = int(epochs)
    return Composition()([unit], [steps])
