"""Transformers: functions from mechanisms to new mechanisms.

Each transformer has its own parameters and one rule per representation; a
representation it cannot produce soundly is simply absent (queries that
need it raise ``RepresentationUnavailable``).

* ``Composition()(mechanisms, counts)`` — heterogeneous composition:
  pairs multiply (Zhu, Dong & Wang 2022, Thm 10), RDP adds (Mironov 2017).
  All parts must share one neighbouring relation (``relations.py``).
* ``PoissonSampling()(mechanism, q)`` — each record enters with probability
  q (add/remove mechanisms only): pairs per direction (ZDW 2022, Thm 11; ``subsampled_pairs.py``), RDP
  exactly for the Gaussian (Mironov, Talwar & Zhang 2019) and by the general
  bound of Zhu & Wang 2019 otherwise (``rdp_subsampled.py``).
"""
import numbers

from .. import validation as v
from ..mechanism import Mechanism
from ..pld.pairs import identical_pair
from ..pld.accountant import PairComposition
from ..rdp.curve import RDPCurve, RDPFunction
from ..relations import ADD_REMOVE, common_relation, require_relation
from ..pld.poisson_sampling import PoissonAddPair, PoissonRemovePair


class Transformer:
    """Base class: a callable that returns a new ``Mechanism``."""

    name = "Transformer"

    def __call__(self, *args, **kwargs):
        raise NotImplementedError


def _check_mechanism(name, m):
    if not isinstance(m, Mechanism):
        raise TypeError(f"{name} must be a dpaccount Mechanism, got {m!r} ({type(m).__name__})")
    return m


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
        parts = [(_check_mechanism(f"mechanisms[{i}]", m), v.count(f"counts[{i}]", k))
                 for i, (m, k) in enumerate(zip(mechanisms, counts))]
        return ComposedMechanism(parts)


class PoissonSampledMechanism(Mechanism):
    """``base`` run on a Poisson subsample: each record kept with probability q."""

    def __init__(self, base, q):
        super().__init__(f"PoissonSample:{base.name}",
                         {**{f"{base.name}:{k}": val for k, val in base.params.items()},
                          f"{base.name}:PoissonSample": q})
        object.__setattr__(self, "base", base)
        object.__setattr__(self, "q", q)

    def _pairs(self):
        if self.q == 0.0:  # nothing of the record is ever used: P = Q in both directions
            return PairComposition.single(identical_pair(), identical_pair())
        base = self.base.optional("pairs")
        if base is None:
            return None
        if len(base.remove) != 1 or len(base.add) != 1 or base.remove[0][1] != 1 or base.add[0][1] != 1:
            return None  # a product of pairs is not a pair of one-dimensional laws
        return PairComposition.single(PoissonRemovePair(base.remove[0][0], self.q),
                                      PoissonAddPair(base.add[0][0], self.q))

    def _rdp(self):
        from ..rdp.poisson_sampling import subsampled_gaussian_rdp, subsampled_rdp_bound
        base_curve, base_pairs = self.base.optional("rdp"), self.base.optional("pairs")
        if base_curve is None:
            return None
        q = self.q
        mu = None if base_pairs is None else base_pairs.gaussian_mu
        if mu is not None:
            sigma = 1.0 / mu
            fn = RDPFunction(("poisson-gaussian", q, sigma),
                             lambda a: subsampled_gaussian_rdp(q, sigma, a))
        else:
            fn = RDPFunction(("poisson-general", q, base_curve.terms),
                             lambda a: subsampled_rdp_bound(q, base_curve, a))
        return RDPCurve(((fn, 1),))


class PoissonSampling(Transformer):
    """``PoissonSampling()(mechanism, q)``: amplification by Poisson subsampling."""

    name = "PoissonSample"

    def __call__(self, mechanism, q):
        mechanism = require_relation("mechanism", _check_mechanism("mechanism", mechanism), ADD_REMOVE,
                                     "Poisson subsampling amplifies add/remove guarantees; use "
                                     "SubsetSampling for replace-one")
        q = v.probability("q", q)
        return PoissonSampledMechanism(mechanism, q)
