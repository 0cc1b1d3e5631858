"""The queries of a ``Mechanism``: ``surface.py`` (``Queries``: every public query),
``methods.py`` (the ``method=`` table), ``route.py`` (a query's way through it),
``at.py`` (a mechanism's pairs at one lattice precision), ``intervals.py`` (the
certified intervals, ``Bounds``) and ``risk.py`` (attack risk)."""
from .intervals import DEFAULT_ACCURACY, Bounds
from .methods import METHODS
from .surface import Queries

__all__ = ["METHODS", "Queries", "DEFAULT_ACCURACY", "Bounds"]
