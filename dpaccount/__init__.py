"""dpaccount: tight, fast, certified differential-privacy accounting.

    >>> from dpaccount import GaussianMechanism, PoissonSampling, Composition
    >>> sgd = Composition()([PoissonSampling()(GaussianMechanism(sigma=1.1), 256 / 60000)], [14063])
    >>> sgd.get_approxDP(1e-5)   # doctest: +ELLIPSIS
    2.38...
"""
from importlib import import_module as _import_module
from typing import TYPE_CHECKING

from .calibrate import calibrate
from .converters.clt import clt_mu
from .errors import (AccuracyNotReached, AccuracyWarning, ApproximationWarning, DPAccountError, GridTooLarge,
                     RDPFallbackWarning, RepresentationUnavailable)
from .errors import CostWarning, SpecError, SpecTypeError
from .mechanism import Mechanism
from .pld.grids.cache import clear_cache, set_cache_limit
from .pld.profiles.profile import PrivacyProfile
from .queries import Bounds
from .mechanisms.discrete import (ApproxDPMechanism, DiscreteGaussianMechanism, DiscreteLaplaceMechanism,
                                  ExponentialMechanism, PureDPMechanism)
from .mechanisms.standard import (BinomialMechanism, GaussianMechanism, GDPMechanism, LaplaceMechanism,
                                  RandomizedResponse)
from .progress import Progress
from .relations import ADD_REMOVE, REPLACE_ONE, Relation
from .mechanisms.trivial import NoOpMechanism, NonPrivateMechanism
from .sweep import SerialExecutor, SweepResult, sweep
from .transformers.base import Transformer
from .transformers.composition import Composition
from .transformers.poisson_sampling import PoissonSampling

# Imported on first use (PEP 562), so that ``import dpaccount`` loads only the common core:
# module -> its public names. Not calibrate or sweep: importing their modules would rebind the names to them.
_ON_FIRST_USE = {
    "mechanisms.training": ("MixtureOfGaussiansMechanism", "SingleTreeAggregation", "TreeAggregation",
                            "ZCDPMechanism"),
    "mechanisms.user_defined": ("ContinuousMechanism", "DiscreteMechanism"),
    "transformers.discretise": ("Discretise",), "transformers.group_privacy": ("GroupPrivacy", "ToReplaceOne"),
    "transformers.repeat_and_select": ("RepeatAndSelect",), "transformers.subset_sampling": ("SubsetSampling",),
    "transformers.truncated_poisson": ("TruncatedPoissonSampling",),
    "transformers.with_replacement": ("SamplingWithReplacement",),
    "transformers.random_allocation": ("RandomAllocation",),
    "odometer": ("PrivacyOdometer",), "plots": ("plot_fDP", "plot_privacy_profile", "plot_rdp"),
    "recipes": ("dpsgd", "dpsgd_max_sample_rate", "dpsgd_max_steps", "dpsgd_noise_multiplier"),
    "dp_events": ("UnsupportedEvent",), "cards": ("report", "PrivacyReport"),
    "mechanisms.matrix": ("MatrixMechanism", "Participation"),
    "transformers.cyclic_poisson": ("CyclicPoissonSampling", "amplified_bandmf", "truncated_amplified_bandmf"),
    "transformers.balls_in_bins": ("BallsInBinsSampling",),
    "specs": ("dump", "from_dp_event", "from_spec", "load"),
}
_MODULE_OF = {name: module for module, names in _ON_FIRST_USE.items() for name in names}

if TYPE_CHECKING:  # the same names, seen by type checkers and editors (tests/test_import_cost.py)
    from .mechanisms.training import (MixtureOfGaussiansMechanism, SingleTreeAggregation, TreeAggregation,
                                      ZCDPMechanism)
    from .mechanisms.user_defined import ContinuousMechanism, DiscreteMechanism
    from .transformers.discretise import Discretise
    from .transformers.group_privacy import GroupPrivacy, ToReplaceOne
    from .transformers.repeat_and_select import RepeatAndSelect
    from .transformers.subset_sampling import SubsetSampling
    from .transformers.truncated_poisson import TruncatedPoissonSampling
    from .transformers.with_replacement import SamplingWithReplacement
    from .transformers.random_allocation import RandomAllocation
    from .odometer import PrivacyOdometer
    from .plots import plot_fDP, plot_privacy_profile, plot_rdp
    from .recipes import dpsgd, dpsgd_max_sample_rate, dpsgd_max_steps, dpsgd_noise_multiplier
    from .dp_events import UnsupportedEvent
    from .cards import PrivacyReport, report
    from .mechanisms.matrix import MatrixMechanism, Participation
    from .transformers.cyclic_poisson import CyclicPoissonSampling, amplified_bandmf, truncated_amplified_bandmf
    from .transformers.balls_in_bins import BallsInBinsSampling
    from .specs import dump, from_dp_event, from_spec, load

__version__ = "0.1.0"

__all__ = [
    "Mechanism", "Bounds", "PrivacyProfile", "set_cache_limit", "clear_cache",
    "Transformer", "Composition", "PoissonSampling", "PrivacyOdometer",
    "from_spec", "dump", "load", "from_dp_event", "UnsupportedEvent", "NoOpMechanism", "NonPrivateMechanism",
    "sweep", "SweepResult", "SerialExecutor",
    "calibrate", "dpsgd", "dpsgd_noise_multiplier", "dpsgd_max_steps", "dpsgd_max_sample_rate",
    "Discretise", "SubsetSampling", "GroupPrivacy", "ToReplaceOne", "Relation", "ADD_REMOVE", "REPLACE_ONE",
    "GaussianMechanism", "GDPMechanism", "LaplaceMechanism", "RandomizedResponse", "BinomialMechanism",
    "DiscreteGaussianMechanism", "DiscreteLaplaceMechanism", "PureDPMechanism", "ApproxDPMechanism",
    "ExponentialMechanism", "DiscreteMechanism", "ContinuousMechanism",
    "MixtureOfGaussiansMechanism", "ZCDPMechanism", "TreeAggregation", "RepeatAndSelect",
    "SingleTreeAggregation",
    "DPAccountError", "RepresentationUnavailable", "AccuracyNotReached", "GridTooLarge", "ApproximationWarning", "AccuracyWarning",
    "RDPFallbackWarning",
    "clt_mu", "plot_fDP", "plot_privacy_profile", "plot_rdp",
    "TruncatedPoissonSampling", "SamplingWithReplacement", "Progress",
    "SpecError", "SpecTypeError", "CostWarning",
    "RandomAllocation", "report", "PrivacyReport",
    "MatrixMechanism", "Participation", "CyclicPoissonSampling", "amplified_bandmf", "truncated_amplified_bandmf",
    "BallsInBinsSampling",
]


def __dir__():
    """The public API only: subpackages stay importable (``dpaccount.pld``)
    but are not listed as if they were part of it (PEP 562)."""
    return sorted(__all__ + ["__version__"])


def __getattr__(name):
    """A public name of ``_ON_FIRST_USE``: its module imported now, the name kept (PEP 562)."""
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'dpaccount' has no attribute {name!r}")
    value = getattr(_import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
