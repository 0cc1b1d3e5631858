"""The library's exceptions.

Bad user input raises the built-in ``ValueError`` / ``TypeError`` (with the
parameter's name and value in the message); the classes here are for
situations that are not the caller's typo.
"""

from typing import Any, Optional


class DPAccountError(Exception):
    """Base class of dpaccount's own exceptions."""


class RepresentationUnavailable(DPAccountError, LookupError):
    """The requested representation (or ``method=``) cannot soundly describe
    this mechanism, e.g. RDP of a mechanism with a non-zero δ at ε = ∞."""


class AccuracyNotReached(DPAccountError, RuntimeError):
    """The accountant could not meet the requested accuracy within its memory
    cap; the message says what it could reach. Where that is a certified
    interval, ``bounds`` holds it (a ``Bounds``: the exact value lies in it,
    only wider than asked), else ``bounds`` is None."""

    def __init__(self, message: str, bounds: Any = None) -> None:  # bounds: a queries.Bounds
        super().__init__(message)
        self.bounds = bounds


class GridTooLarge(DPAccountError, MemoryError):
    """A privacy-loss grid would exceed the library's size cap. Where a coarser
    accuracy would fit, ``accuracy`` holds it (else None)."""

    def __init__(self, message: str, accuracy: Optional[float] = None) -> None:
        super().__init__(message)
        self.accuracy = accuracy


class ApproximationWarning(UserWarning):
    """An answer that is not certified: an explicitly approximate method
    (``method="clt"``) answered on the unsafe side of the certified bound (it
    under-reports the privacy loss), or ``method="cf"`` gave an interval whose
    error is estimated, not bounded (``Bounds.certified`` is False)."""


class AccuracyWarning(UserWarning):
    """A certified answer (still a rigorous bound) from a coarser grid than the
    accuracy asked for needs, because the finer grid would exceed the size cap."""


class RDPFallbackWarning(UserWarning):
    """A default query answered through RDP (still a rigorous upper bound, but looser
    than a privacy-loss grid) because some part of the mechanism has no dominating
    pair — e.g. a ``ZCDPMechanism`` in a composition."""
class SpecError(DPAccountError, ValueError):
    """A mechanism spec (``specs.py``) that cannot be loaded: its message starts
    with the path inside the document (``spec.parts[2].mechanism.sigma: ...``).
    A ``ValueError`` too, so code that caught those keeps working."""


class SpecTypeError(SpecError, TypeError):
    """A spec value of the wrong JSON type (a string where a number belongs): a
    ``SpecError`` and a ``TypeError``."""


class CostWarning(UserWarning):
    """A query whose work is far beyond the usual (a composition of thousands of
    distinct parts), said up front with an estimate, before the work starts."""
