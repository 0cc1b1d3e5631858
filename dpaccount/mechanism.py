"""``Mechanism``: one immutable value, several representations, one set of queries.

A mechanism is a value: its typed parameters are fixed at construction,
``name`` and ``params`` are built from them (autodp style), two mechanisms
are equal (and hash equal) when they have the same type, relation and
parameters (so equal parts of a composition merge), and a mechanism pickles
(for process pools) without its caches. Its representations are computed
lazily, once, and cached:

* ``pairs`` — ``PairComposition``: dominating pairs per direction (tight), at the
  default lattice precision; ``pairs_at(rho)`` at another (``precision.py``: the
  pairs of a random allocation carry a lattice of their own);
* ``rdp``   — ``RDPCurve``: ε(α) (lossy for (ε, δ), but composes anywhere).

The queries (``get_approxDP``, ``get_approx_delta``, ``get_RDP``, the
``*_bounds`` and ``privacy_profile``) and their ``method=`` dispatch are in
``queries/``.

A mechanism of the library's own classes also describes itself as a plain
JSON document (``to_spec``; read back by ``specs.from_spec``): its type is
the public constructor's name, its fields that constructor's arguments.
"""
from __future__ import annotations

import numbers
from enum import Enum
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Dict, Literal, Mapping, Optional, Union, overload

from . import validation as v
from .errors import RepresentationUnavailable
from .precision import DEFAULT_RHO
from .queries import Queries
from .relations import ADD_REMOVE, check_relation

if TYPE_CHECKING:
    from .pld.pairs.composition import PairComposition
    from .rdp.curve import RDPCurve
    from .relations import AnyRelation, RelationLike

SPEC_VERSION = 1
"""The schema version written under ``SPEC_KEY`` by ``Mechanism.to_spec``."""
SPEC_KEY = "dpaccount_spec"


class Mechanism(Queries):
    """Base class. Subclasses pass ``name`` and ``params`` and override
    ``_pairs`` and/or ``_rdp`` to return a representation (or None); a mechanism
    whose pairs are built from other mechanisms' (a transformer's result) overrides
    ``_pairs_at(rho)`` instead and asks its parts for theirs at the same ``rho``.

    Equality is by ``_identity()``: type, relation and parameters by default;
    transformers' results override it with their structure (base mechanism,
    rate, parts)."""

    _name: str
    _params: Mapping[str, Any]
    _cache: Dict[Any, Any]
    _relation: AnyRelation

    def __init__(self, name: str, params: Mapping[str, Any], relation: Optional[RelationLike] = None) -> None:
        object.__setattr__(self, "_name", str(name))
        object.__setattr__(self, "_params", MappingProxyType(dict(params)))
        object.__setattr__(self, "_cache", {})
        # -- neighbouring relation (relations.py): add/remove unless a subclass says otherwise
        object.__setattr__(self, "_relation", ADD_REMOVE if relation is None
                           else check_relation("relation", relation))

    @property
    def relation(self) -> AnyRelation:
        """The neighbouring relation (``relations.Relation``) the guarantees are about."""
        return self._relation

    def __setattr__(self, key, value):
        raise AttributeError(f"{type(self).__name__} is immutable; build a new mechanism instead")

    def __delattr__(self, key):
        raise AttributeError(f"{type(self).__name__} is immutable; cannot delete {key!r}")

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={val!r}" for k, val in self._params.items())
        return f"<{type(self).__name__} {self._name} ({inner})>"

    @property
    def name(self) -> str:
        """autodp-style structured name"""
        return self._name

    @property
    def params(self) -> Mapping[str, Any]:
        """read-only view of the parameters"""
        return self._params

    # -- a value -------------------------------------------------------------
    def _identity(self):
        return (self._relation, tuple(self._params.items()))

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if type(other) is not type(self):
            return NotImplemented
        return self._identity() == other._identity()

    def __hash__(self) -> int:
        if "hash" not in self._cache:
            self._cache["hash"] = hash((type(self).__qualname__, self._identity()))
        return self._cache["hash"]

    def __getstate__(self):
        """Pickle the parameters and attributes, not the caches (representations
        may hold closures; they are rebuilt on demand)."""
        state = {k: val for k, val in self.__dict__.items() if k != "_cache"}
        state["_params"] = dict(self._params)
        return state

    def __setstate__(self, state):
        for key, val in state.items():
            object.__setattr__(self, key, MappingProxyType(val) if key == "_params" else val)
        object.__setattr__(self, "_cache", {})

    # -- a plain description (specs.py reads it back) ----------------------
    _spec_type: Optional[str] = None  # the public constructor's name, set on each class that has a spec

    def _spec_args(self):
        """The constructor's arguments (mechanisms as Mechanism objects): the
        parameters, by default (the zoo's ``params`` are its keyword arguments)."""
        return dict(self._params)

    def to_spec(self) -> Dict[str, Any]:
        """A plain JSON-able dict describing this mechanism (``dpaccount.from_spec``
        rebuilds an equal one): ``{"dpaccount_spec": 1, "type": ..., <arguments>}``,
        nested mechanisms as ``{"type": ..., ...}``. TypeError for a class
        without a spec (a user's subclass, ``ContinuousMechanism`` with a law
        outside the safe registry of ``specs.py``)."""
        return {SPEC_KEY: SPEC_VERSION, **self._spec_node()}

    def to_dp_event(self) -> Any:
        """dp_accounting's ``DpEvent`` for this mechanism (``dp_events.py``; dp_accounting
        must be installed): ``dpaccount.from_dp_event(m.to_dp_event(), relation=m.relation)``
        gives ``m`` back (up to sensitivity 1: a Gaussian of σ and Δ is the event of
        noise multiplier σ/Δ). The relation is the accountant's in dp_accounting: give it
        there. ``UnsupportedEvent`` where dp_accounting has no event (binomial, discrete
        Gaussian, pure/approximate DP, user pairs, frozen grids, group privacy)."""
        try:
            from dp_accounting import dp_event
        except ImportError:
            raise ImportError("to_dp_event needs dp_accounting: pip install dp-accounting") from None
        from .dp_events import spec_to_event  # here: dp_events (and fractions) stay out of import dpaccount
        return spec_to_event(self._spec_node(), dp_event)

    def _spec_node(self):
        kind = vars(type(self)).get("_spec_type")  # declared by this very class, not inherited
        if kind is None:
            raise TypeError(f"{type(self).__name__} ({self._name}) has no spec: only the library's own "
                            f"mechanisms and transformers' results can be written as one")
        return {"type": kind, **{key: _plain(val) for key, val in self._spec_args().items()}}

    # -- representations -------------------------------------------------
    def _pairs(self):
        """This mechanism's own dominating pairs (a ``PairComposition``), or None."""
        return None

    def _pairs_at(self, rho):
        """The pairs built at the lattice precision ``rho`` (``precision.py``): a mechanism's
        own pairs carry no lattice (``_pairs``); a transformer's result overrides this and
        hands ``rho`` to its parts' ``pairs_at``."""
        return self._pairs()

    def _rdp(self):
        return None

    def _cached(self, key, build):
        """``build()``, once per ``key``: the key holds every argument the value depends on
        (a lattice precision ρ wherever it is built from pairs)."""
        if key not in self._cache:
            self._cache[key] = build()
        return self._cache[key]

    def _representation(self, key, build, label):
        rep = self._cached(key, build)
        if rep is None:
            raise RepresentationUnavailable(f"{self._name} has no {label} representation")
        return rep

    @property
    def pairs(self) -> PairComposition:
        """The dominating pairs (``PairComposition``) at the default lattice precision
        (``precision.DEFAULT_RHO``), or RepresentationUnavailable."""
        return self.pairs_at(DEFAULT_RHO)

    def pairs_at(self, rho: float) -> PairComposition:
        """The dominating pairs, those with a lattice of their own (random allocation's
        epochs) built at the lattice precision ``rho`` (``precision.py``: their upper and
        lower pair about ρ/5 of ε apart, both certified), or RepresentationUnavailable."""
        rho = v.in_interval("rho", rho, 0.0, 1.0)
        return self._representation(("pairs", rho), lambda: self._pairs_at(rho), "dominating-pair")

    @property
    def rdp(self) -> RDPCurve:
        """The RDP curve (``RDPCurve``) or RepresentationUnavailable."""
        return self._representation("rdp", self._rdp, "Rényi-DP")

    @overload
    def optional(self, attr: Literal["pairs"], rho: float = ...) -> Optional[PairComposition]: ...
    @overload
    def optional(self, attr: Literal["rdp"], rho: float = ...) -> Optional[RDPCurve]: ...
    def optional(self, attr: str, rho: float = DEFAULT_RHO) -> Union[PairComposition, RDPCurve, None]:
        """The representation ``attr`` ("pairs" or "rdp"), or None where it is unavailable;
        pairs at the lattice precision ``rho`` (``pairs_at``)."""
        try:
            return self.pairs_at(rho) if attr == "pairs" else getattr(self, attr)
        except RepresentationUnavailable:
            return None


def _plain(value):
    """JSON-able form of a constructor argument: mechanisms as nested specs,
    numpy numbers as Python ones, relations as their strings."""
    if isinstance(value, Mechanism):
        return value._spec_node()
    if isinstance(value, (list, tuple)):
        return [_plain(x) for x in value]
    if isinstance(value, dict):
        return {str(key): _plain(x) for key, x in value.items()}
    if isinstance(value, (bool, str)) or value is None:
        return str(value) if isinstance(value, Enum) else value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    return str(value)  # a GroupRelation: "2-fold add/remove" (relations.check_relation reads it)
