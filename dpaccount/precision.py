"""How finely pairs that carry a lattice of their own are built (one context).

A random-allocation epoch's pair (``pld/allocation/epoch.py``) is the law
of a sum S = Y_1 + … + Y_t on a lattice of Y of step h, chosen so that the
spread adds at most a relative ρ to S's variance (``lattice_step``). Both its
upper and its lower pair are certified at every ρ; ρ sets only how far apart
they are (about ρ/5 of ε each, measured: σ = 1.1, 234 steps, δ = 1e-5, one epoch
0.036 % wide at ρ = 1e-3, 0.0022 % at ρ = 1e-4).

Pairs are built at ``lattice_rho()``: ``DEFAULT_RHO``, except inside an ε(δ)
query (``for_epsilon``), which starts at its accuracy (10× coarser at the default
1e-3). ε errs by about ρ/5 relative per side, δ(ε) by |d log δ/dε|·ε times that
(σ = 1.1, 234 steps, 10 epochs, δ(1): 0.35 % at ρ = 1e-3, within 0.1 % at 1e-4);
the ε query is 4× quicker for it. A
certified interval still wider than its accuracy retries under ``finer()`` (ρ/10,
down to ``FLOOR_RHO``): the mechanisms' caches are kept per ρ
(``Mechanism._cached``), so a finer build never replaces a coarser one and a
refused query changes no answer already given.
"""
import contextlib
import contextvars
import functools
import inspect
import numbers
from typing import Any, Callable, TypeVar, cast

F = TypeVar("F", bound=Callable[..., Any])  # a decorated query, its signature kept

DEFAULT_RHO = 1e-4
EPSILON_RHO = 1e-3
FLOOR_RHO = 1e-5
_RHO = contextvars.ContextVar("dpaccount_lattice_rho", default=None)  # None: no query has set one


def lattice_rho() -> float:
    """The ρ pairs are built at in this context."""
    rho = _RHO.get()
    return DEFAULT_RHO if rho is None else rho


def can_refine() -> bool:
    """Whether ``finer()`` would lower ρ (it stops at ``FLOOR_RHO``)."""
    return lattice_rho() / 10 >= FLOOR_RHO * (1 - 1e-9)


@contextlib.contextmanager
def at(rho):
    """A context whose pairs are built at ``rho`` (ε queries inside keep it)."""
    token = _RHO.set(rho)
    try:
        yield
    finally:
        _RHO.reset(token)


def finer():
    """A context whose pairs are built at ρ/10 (the caller checks ``can_refine``)."""
    return at(lattice_rho() / 10)


def for_epsilon(accuracy=EPSILON_RHO):
    """The context of an ε(δ) query at ``accuracy``: ρ = the accuracy, within [``FLOOR_RHO``,
    ``EPSILON_RHO``], where no query has set ρ yet (an ε query inside another query, or
    inside ``finer()``, keeps the ρ it is given)."""
    return at(min(max(accuracy, FLOOR_RHO), EPSILON_RHO) if _RHO.get() is None else _RHO.get())


def epsilon_query(query: F) -> F:
    """``query`` (an ε(δ) query of a mechanism, with an ``accuracy`` parameter) run in
    ``for_epsilon(accuracy)``."""
    signature = inspect.signature(query)

    @functools.wraps(query)
    def run(*args, **kwargs):
        accuracy = signature.bind(*args, **kwargs).arguments.get("accuracy", EPSILON_RHO)
        real = isinstance(accuracy, numbers.Real) and not isinstance(accuracy, bool) and accuracy > 0
        with for_epsilon(float(accuracy) if real else EPSILON_RHO):
            return query(*args, **kwargs)
    return cast(F, run)
