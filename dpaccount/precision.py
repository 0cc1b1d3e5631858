"""How finely pairs that carry a lattice of their own are built (one context).

A random-allocation epoch's pair (``pld/pairs/random_allocation.py``) is the law
of a sum S = Y_1 + … + Y_t on a lattice of Y of step h, chosen so that the
spread adds at most a relative ρ to S's variance (``lattice_step``). Both its
upper and its lower pair are certified at every ρ; ρ sets only how far apart
they are (about ρ/5 of ε each, measured: σ = 1.1, 234 steps, δ = 1e-5, one epoch
0.036 % wide at ρ = 1e-3, 0.0022 % at ρ = 1e-4).

Pairs are built at ``lattice_rho()``: ``DEFAULT_RHO``, except inside an ε(δ)
query (``for_epsilon``), which starts 10× coarser. ε errs by about ρ/5 relative
per side, δ(ε) by |d log δ/dε|·ε times that (σ = 1.1, 234 steps, 10 epochs, δ(1):
0.35 % at ρ = 1e-3, within 0.1 % at 1e-4); the ε query is 4× quicker for it. A
certified interval still wider than its accuracy retries under ``finer()`` (ρ/10,
down to ``FLOOR_RHO``): the mechanisms' caches are kept per ρ
(``Mechanism._cached``), so a finer build never replaces a coarser one and a
refused query changes no answer already given.
"""
import contextlib
import contextvars
import functools

DEFAULT_RHO = 1e-4
EPSILON_RHO = 1e-3
FLOOR_RHO = 1e-5
_RHO = contextvars.ContextVar("dpaccount_lattice_rho", default=None)  # None: no query has set one


def lattice_rho():
    """The ρ pairs are built at in this context."""
    rho = _RHO.get()
    return DEFAULT_RHO if rho is None else rho


def can_refine():
    """Whether ``finer()`` would lower ρ (it stops at ``FLOOR_RHO``)."""
    return lattice_rho() / 10 >= FLOOR_RHO * (1 - 1e-9)


@contextlib.contextmanager
def _at(rho):
    token = _RHO.set(rho)
    try:
        yield
    finally:
        _RHO.reset(token)


def finer():
    """A context whose pairs are built at ρ/10 (the caller checks ``can_refine``)."""
    return _at(lattice_rho() / 10)


def for_epsilon():
    """The context of an ε(δ) query: ``EPSILON_RHO`` where no query has set ρ yet (an ε query
    inside another query, or inside ``finer()``, keeps the ρ it is given)."""
    return _at(EPSILON_RHO if _RHO.get() is None else _RHO.get())


def epsilon_query(query):
    """``query`` (an ε(δ) query of a mechanism) run in ``for_epsilon()``."""
    @functools.wraps(query)
    def run(*args, **kwargs):
        with for_epsilon():
            return query(*args, **kwargs)
    return run
