"""dpaccount: tight, fast, certified differential-privacy accounting.

    >>> from dpaccount import GaussianMechanism, PoissonSampling, Composition
    >>> sgd = Composition()([PoissonSampling()(GaussianMechanism(sigma=1.1), 256 / 60000)], [14063])
    >>> sgd.get_approxDP(1e-5)   # doctest: +ELLIPSIS
    2.38...
"""
from .errors import AccuracyNotReached, DPAccountError, GridTooLarge, RepresentationUnavailable
from .mechanism import Bounds, Mechanism
from .mechanism_zoo import (BinomialMechanism, GaussianMechanism, GDPMechanism, LaplaceMechanism,
                            RandomizedResponse)
from .odometer import PrivacyOdometer
from .transformers import Composition, PoissonSampling, Transformer

__version__ = "0.1.0"

__all__ = [
    "Mechanism", "Bounds", "Transformer", "Composition", "PoissonSampling", "PrivacyOdometer",
    "GaussianMechanism", "GDPMechanism", "LaplaceMechanism", "RandomizedResponse", "BinomialMechanism",
    "DPAccountError", "RepresentationUnavailable", "AccuracyNotReached", "GridTooLarge",
]
