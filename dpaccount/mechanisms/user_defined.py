"""Mechanisms the user defines by their laws, each with its tight pair.

Neighbouring relation: add/remove one record; the remove direction is the
pair (law with the record, law without), the add direction its reverse.

* ``DiscreteMechanism(p_probs, q_probs)`` — a user-given finite pair; exact RDP.
* ``ContinuousMechanism(p_dist, q_dist)`` — two continuous laws with a
  strictly increasing privacy loss (``pld/pairs/monotone_loss.MonotoneLossPair``);
  pairs only. Its spec (``to_spec``) covers the location–scale laws of
  ``SPEC_LAWS`` (normal, logistic, Gumbel) with numeric parameters only: an
  arbitrary law would have to be pickled or imported by name, which
  ``dpaccount.from_spec`` never does, so ``to_spec`` refuses it (TypeError).
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from ..pld.pairs.discrete_pair import DiscretePair
from ..pld.pairs.monotone_loss import MonotoneLossPair
from .discrete import PairMechanism

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

SPEC_LAWS = ("norm", "logistic", "gumbel_r", "gumbel_l")
"""scipy.stats laws a ``ContinuousMechanism`` spec may name (no shape parameter: args ⊆ (loc, scale))."""


def _prob_vector(name, values):
    """A finite, non-negative vector summing to 1 within 1e-9, as a float array."""
    if isinstance(values, (str, bytes)) or np.ndim(values) != 1:
        raise TypeError(f"{name} must be a 1-d sequence of probabilities, got {values!r}")
    arr = np.asarray(values)
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise TypeError(f"{name} must contain real numbers, got {values!r}")
    arr = arr.astype(float)
    if arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"{name} must be non-empty, finite and non-negative, got {values!r}")
    total = math.fsum(arr)
    if abs(total - 1.0) > 1e-9:
        raise ValueError(f"{name} must sum to 1 (within 1e-9), got sum {total!r} for {values!r}")
    return arr, total


class DiscreteMechanism(PairMechanism):
    """A user-given finite pair: outcome i has probability p_probs[i] with the
    record and q_probs[i] without. Both are renormalised (in log space, by
    their exactly rounded sum); p-mass where q = 0 is loss +∞ (``p_inf``)."""

    _spec_type = "DiscreteMechanism"

    def __init__(self, p_probs: ArrayLike, q_probs: ArrayLike, name: Optional[str] = None) -> None:
        p, p_sum = _prob_vector("p_probs", p_probs)
        q, q_sum = _prob_vector("q_probs", q_probs)
        if len(p) != len(q):
            raise ValueError(f"p_probs and q_probs differ in length: {len(p)} != {len(q)}")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name must be a string, got {name!r}")
        label = name or "Discrete"
        super().__init__(label, {"p_probs": tuple(p.tolist()), "q_probs": tuple(q.tolist())})
        with np.errstate(divide="ignore"):
            log_p, log_q = np.log(p) - math.log(p_sum), np.log(q) - math.log(q_sum)
        object.__setattr__(self, "_logs", (log_p, log_q))

    def _spec_args(self):
        return {**self.params, **({"name": self.name} if self.name != "Discrete" else {})}

    def _pair(self):
        # tight: the laws the user gives are the mechanism's outputs on neighbours
        return DiscretePair(*self._logs, name=f"user:{self.name}", tight=True)

    def _rdp(self):
        return self._exact_rdp()


class ContinuousMechanism(PairMechanism):
    """A user mechanism with continuous laws P (with the record) and Q
    (without) whose privacy loss log p(x)/q(x) increases strictly in x (see
    ``MonotoneLossPair``: scipy.stats frozen continuous distributions).

    Specs: only laws of ``SPEC_LAWS`` given by numbers (``stats.norm(1.0, 2.0)``,
    ``stats.logistic(loc=0.5)``) can be written by ``to_spec``; any other law
    is refused there, since loading a spec never imports what it names."""

    _spec_type = "ContinuousMechanism"

    def __init__(self, p_dist: Any, q_dist: Any, name: Optional[str] = None) -> None:
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name must be a string, got {name!r}")
        pair = MonotoneLossPair(p_dist, q_dist)  # validates
        super().__init__(name or "Continuous", {"p_dist": p_dist, "q_dist": q_dist})
        object.__setattr__(self, "_remove_pair", pair)

    def _pair(self):
        return self._remove_pair

    def _spec_args(self):
        laws = {key: _law_spec(key, self.params[key]) for key in ("p_dist", "q_dist")}
        return {**laws, **({"name": self.name} if self.name != "Continuous" else {})}

    def _identity(self):
        """Laws compare by family and parameters (``MonotoneLossPair.key``), not identity."""
        return (self.relation, self._remove_pair.key())


def _law_spec(name, dist):
    """{"law": ..., "args": [...], "kwds": {...}} of a frozen scipy law of ``SPEC_LAWS``; else TypeError."""
    law = getattr(getattr(dist, "dist", None), "name", None)
    args, kwds = getattr(dist, "args", None), getattr(dist, "kwds", None)
    plain = lambda x: isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool)
    if (law not in SPEC_LAWS or not isinstance(args, tuple) or not isinstance(kwds, dict) or len(args) > 2
            or not set(kwds) <= {"loc", "scale"} or not all(plain(x) for x in (*args, *kwds.values()))):
        raise TypeError(f"ContinuousMechanism.{name} = {dist!r} has no spec: specs name only the laws "
                        f"{list(SPEC_LAWS)} of scipy.stats with numeric loc/scale (loading a spec never "
                        f"imports or runs what it names)")
    return {"law": law, "args": [float(x) for x in args], "kwds": {k: float(x) for k, x in kwds.items()}}
