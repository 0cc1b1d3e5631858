"""The queries of a ``Mechanism``: ``dispatch.py`` (``QueryDispatch``: the
``method=`` dispatch and every plain query) and ``intervals.py`` (the certified
intervals, ``Bounds``)."""
from .dispatch import METHODS, QueryDispatch
from .intervals import DEFAULT_ACCURACY, Bounds

__all__ = ["METHODS", "QueryDispatch", "DEFAULT_ACCURACY", "Bounds"]
