"""How finely pairs that carry a lattice of their own are built: the lattice precision ρ.

A random-allocation epoch's pair (``pld/allocation/epoch.py``) is the law
of a sum S = Y_1 + … + Y_t on a lattice of Y of step h, chosen so that the
spread adds at most a relative ρ to S's variance (``lattice_step``). Both its
upper and its lower pair are certified at every ρ; ρ sets only how far apart
they are (about ρ/5 of ε each, measured: σ = 1.1, 234 steps, δ = 1e-5, one epoch
0.036 % wide at ρ = 1e-3, 0.0022 % at ρ = 1e-4).

ρ is an argument: the query decides it and hands it to what builds the pairs
(``Mechanism.pairs_at(rho)``, which a transformer passes on to its bases' pairs).
``m.pairs`` and δ(ε) queries take ``DEFAULT_RHO``; an ε(δ) query
``epsilon_rho(accuracy)``, its accuracy (10× coarser at the default 1e-3). ε errs by
about ρ/5 relative per side, δ(ε) by |d log δ/dε|·ε times that (σ = 1.1, 234 steps,
10 epochs, δ(1): 0.35 % at ρ = 1e-3, within 0.1 % at 1e-4); the ε query is 4× quicker
for it. A certified interval still wider than its accuracy is asked again at
``finer(rho)`` (ρ/10, down to ``FLOOR_RHO``). What a mechanism builds from its pairs
is cached under a key holding ρ (``Mechanism._cached``), so a finer build never
replaces a coarser one and a refused query changes no answer already given.
"""
import numbers
from typing import Any, Optional

DEFAULT_RHO = 1e-4
EPSILON_RHO = 1e-3
FLOOR_RHO = 1e-5


def epsilon_rho(accuracy: Any) -> float:
    """The ρ of an ε(δ) query at ``accuracy``: the accuracy, within [``FLOOR_RHO``,
    ``EPSILON_RHO``] (``EPSILON_RHO`` for an accuracy that is not a positive real: the
    query's validation refuses it)."""
    real = isinstance(accuracy, numbers.Real) and not isinstance(accuracy, bool) and accuracy > 0  # type: ignore[operator]
    return min(max(float(accuracy), FLOOR_RHO), EPSILON_RHO) if real else EPSILON_RHO


def finer(rho: float) -> Optional[float]:
    """ρ/10, the precision a certified interval too wide at ``rho`` is asked at again;
    None where that is below ``FLOOR_RHO``."""
    return rho / 10 if rho / 10 >= FLOOR_RHO * (1 - 1e-9) else None
