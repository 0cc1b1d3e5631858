"""``Composition()(mechanisms, counts)``: heterogeneous composition.

Pairs multiply (Zhu, Dong & Wang 2022, Thm 10), RDP adds (Mironov 2017). All
parts must share one neighbouring relation (``relations.py``).
"""
from __future__ import annotations

import itertools
from typing import Sequence

from .. import validation as v
from ..mechanism import Mechanism
from ..pld.pairs.composition import PairComposition
from ..rdp.curve import RDPCurve
from ..relations import common_relation
from .base import Transformer, check_mechanism


class ComposedMechanism(Mechanism):
    """The composition of ``parts`` = ((mechanism, count), ...)."""

    _spec_type = "Composition"

    def __init__(self, parts):
        merged = {}
        for m, k in parts:  # equal mechanisms (==, by value) merge
            merged[m] = merged.get(m, 0) + k
        parts = tuple(merged.items())
        super().__init__(_name(parts), _params(parts), relation=common_relation(m for m, _ in parts))
        object.__setattr__(self, "parts", parts)

    def _identity(self):
        return (self.relation, self.parts)

    def _spec_args(self):
        return {"parts": [{"mechanism": m, "count": k} for m, k in self.parts]}

    def __repr__(self):
        shown = ", ".join(f"{_short(m)}×{k}" for m, k in self.parts[:3])
        more = f", … (+{len(self.parts) - 3} more)" if len(self.parts) > 3 else ""
        steps = sum(k for _, k in self.parts)
        return f"<{type(self).__name__} {self.name}: {len(self.parts)} parts, {steps} steps: {shown}{more}>"

    def _pairs_at(self, rho):
        reps = [(m.optional("pairs", rho), k) for m, k in self.parts]
        if any(rep is None for rep, _ in reps):  # a part without pairs: none for the whole
            return None
        return PairComposition((), ()).compose(reps)

    def _rdp(self):
        terms = []
        for m, k in self.parts:
            curve = m.optional("rdp")
            if curve is None:
                return None
            terms.extend((fn, c * k) for fn, c in curve.terms)
        return RDPCurve(tuple(terms))


def _name(parts):
    """autodp style, ``Compose:{A: 3, B: 2}``; a run of parts with the same name
    (a schedule of σ, say) is summarised as ``Name ×runs: steps``."""
    chunks = []
    for name, run in itertools.groupby(parts, key=lambda part: part[0].name):
        run = list(run)
        steps = sum(k for _, k in run)
        chunks.append(f"{name}: {steps}" if len(run) == 1 else f"{name} ×{len(run)}: {steps}")
    return "Compose:{" + ", ".join(chunks) + "}"


def _params(parts):
    """Plain keys: one part's own keys and its ``count``; several parts (or a
    part that has a ``count`` of its own) as ``parts[i].key`` and ``parts[i].count``."""
    if len(parts) == 1 and "count" not in parts[0][0].params:
        (m, k), = parts
        return {**m.params, "count": k}
    out = {}
    for i, (m, k) in enumerate(parts):
        out.update({f"parts[{i}].{key}": val for key, val in m.params.items()})
        out[f"parts[{i}].count"] = k
    return out


def _short(m):
    return f"{m.name}(" + ", ".join(f"{key}={val!r}" for key, val in m.params.items()) + ")"


class Composition(Transformer):
    """``Composition()([m1, m2, ...], [k1, k2, ...])``: m1 k1 times, then m2 k2 times, …"""

    name = "Compose"

    def __call__(self, mechanisms: Sequence[Mechanism], counts: Sequence[int]) -> Mechanism:
        if isinstance(mechanisms, Mechanism) or not hasattr(mechanisms, "__len__"):
            raise TypeError(f"mechanisms must be a list of Mechanism, got {mechanisms!r}")
        if isinstance(counts, (str, bytes)) or not hasattr(counts, "__len__"):
            raise TypeError(f"counts must be a list of whole numbers, got {counts!r}")
        if len(mechanisms) != len(counts):
            raise ValueError(f"mechanisms and counts differ in length: {len(mechanisms)} != {len(counts)}")
        if len(mechanisms) == 0:
            raise ValueError(f"mechanisms must not be empty, got {list(mechanisms)!r}")
        parts = [(check_mechanism(f"mechanisms[{i}]", m), v.count(f"counts[{i}]", k))
                 for i, (m, k) in enumerate(zip(mechanisms, counts))]
        return ComposedMechanism(parts)
