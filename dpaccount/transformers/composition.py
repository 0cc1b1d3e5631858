"""``Composition()(mechanisms, counts)``: heterogeneous composition.

Pairs multiply (Zhu, Dong & Wang 2022, Thm 10), RDP adds (Mironov 2017). All
parts must share one neighbouring relation (``relations.py``).
"""
from .. import validation as v
from ..mechanism import Mechanism
from ..pld.accountant import PairComposition
from ..rdp.curve import RDPCurve
from ..relations import common_relation
from .base import Transformer, check_mechanism


class ComposedMechanism(Mechanism):
    """The composition of ``parts`` = ((mechanism, count), ...)."""

    def __init__(self, parts):
        merged = {}
        for m, k in parts:
            merged[m] = merged.get(m, 0) + k
        parts = tuple(merged.items())
        name = "Compose:{" + ", ".join(f"{m.name}: {k}" for m, k in parts) + "}"
        params = {}
        names = [m.name for m, _ in parts]
        for i, (m, _) in enumerate(parts):
            prefix = m.name if names.count(m.name) == 1 else f"{m.name}#{i}"
            for key, val in m.params.items():
                params[f"{prefix}:{key}"] = val
        super().__init__(name, params, relation=common_relation(m for m, _ in parts))
        object.__setattr__(self, "parts", parts)

    def _pairs(self):
        reps = [(m.optional("pairs"), k) for m, k in self.parts]
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


class Composition(Transformer):
    """``Composition()([m1, m2, ...], [k1, k2, ...])``: m1 k1 times, then m2 k2 times, …"""

    name = "Compose"

    def __call__(self, mechanisms, counts):
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
