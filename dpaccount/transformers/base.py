"""The ``Transformer`` base class: a callable from mechanisms to a new ``Mechanism``.

Each transformer has its own parameters and one rule per representation; a
representation it cannot produce soundly is simply absent (queries that
need it raise ``RepresentationUnavailable``).
"""
from __future__ import annotations

from typing import Any

from ..mechanism import Mechanism


class Transformer:
    """Base class: a callable that returns a new ``Mechanism``."""

    name = "Transformer"

    def __call__(self, *args: Any, **kwargs: Any) -> Mechanism:
        raise NotImplementedError


def check_mechanism(name: str, m: object) -> Mechanism:
    if not isinstance(m, Mechanism):
        raise TypeError(f"{name} must be a dpaccount Mechanism, got {m!r} ({type(m).__name__})")
    return m
