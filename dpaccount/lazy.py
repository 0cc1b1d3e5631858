"""Modules imported on first use, so that ``import dpaccount`` stays quick.

scipy's submodules take most of a cold import (scipy.stats alone ~10× numpy);
each dpaccount module names the ones it needs as ``lazy("scipy.optimize")``
and the first attribute read imports it (then Python's module cache answers).
"""
import importlib


class _LazyModule:
    __slots__ = ("_name",)

    def __init__(self, name):
        object.__setattr__(self, "_name", name)

    def __getattr__(self, attr):
        return getattr(importlib.import_module(self._name), attr)

    def __repr__(self):
        return f"<lazy module {self._name}>"


def lazy(name):
    """A stand-in for ``import name`` that imports it at the first attribute read."""
    return _LazyModule(name)
