"""Neighbouring relations: which datasets count as neighbours.

Every mechanism states the relation its guarantee is about (``Mechanism.relation``):

* ``ADD_REMOVE`` (the default) — D' is D with one record added or removed.
  A mechanism carries a dominating pair per direction: ``remove``
  (M(D), M(D − x)) and ``add`` (M(D − x), M(D)) (Zhu, Dong & Wang 2022, §3).
* ``REPLACE_ONE`` — D and D' have the same size and differ in one record.
  The relation is symmetric and has no direction a composition could keep
  apart, so under it *each* of the mechanism's two pairs dominates *every*
  ordered neighbouring pair (D, D'), both orders, for every ε (ε < 0
  included). Per-direction products of such pairs then dominate every
  composition (ZDW 2022, Thm 10), and the guarantee is the worse of the two
  (the trade-off min(f, f⁻¹)** of Dong, Roth & Su 2022, §2.2).
* ``GroupRelation(base, k)`` (k ≥ 2; ``group_relation``) — D and D' are
  joined by at most k steps of ``base`` (group privacy, ``transformers/group_privacy.py``).
  Its steps may mix directions (remove x, then add y), so its pairs, like
  replace-one ones, each dominate both orders.

The relations are not interchangeable: replace-one is two add/remove steps
(remove x, add y), so an add/remove guarantee gives a replace-one one only
through group privacy of size 2 (``transformers/group_privacy.ToReplaceOne``); the
converse fails in general (a mechanism may reveal |D|, which replace-one
never changes), and a k-fold guarantee is not a 1-step one of the parts it
would be composed with. Composing mechanisms whose guarantees are about
different relations is therefore refused (``common_relation``).
"""
from __future__ import annotations

from enum import Enum
from typing import Any, Dict, Iterable, Optional, Tuple, Union


class Relation(str, Enum):
    """A neighbouring relation (a ``str`` so that it prints and compares plainly)."""

    ADD_REMOVE = "add/remove"
    REPLACE_ONE = "replace-one"

    def __str__(self) -> str:
        return self.value


ADD_REMOVE = Relation.ADD_REMOVE
REPLACE_ONE = Relation.REPLACE_ONE


class GroupRelation:
    """D and D' joined by at most ``k`` ≥ 2 steps of the ``base`` relation; immutable."""

    __slots__ = ("base", "k")
    base: Relation
    k: int

    def __init__(self, base: Relation, k: int) -> None:
        object.__setattr__(self, "base", base)
        object.__setattr__(self, "k", k)

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError("GroupRelation is immutable")

    def __reduce__(self) -> Tuple[type, Tuple[Relation, int]]:
        return GroupRelation, (self.base, self.k)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GroupRelation) and (self.base, self.k) == (other.base, other.k)

    def __hash__(self) -> int:
        return hash(("group", self.base, self.k))

    def __str__(self) -> str:
        return f"{self.k}-fold {self.base}"

    def __repr__(self) -> str:
        return f"GroupRelation({self.base.value!r}, {self.k})"


def group_relation(relation: AnyRelation, k: int) -> AnyRelation:
    """The relation of ≤ k steps of ``relation`` (itself for k = 1; k steps
    of a j-fold relation are ≤ jk steps of its base)."""
    if isinstance(relation, GroupRelation):
        return GroupRelation(relation.base, relation.k * k)
    return relation if k == 1 else GroupRelation(relation, k)


AnyRelation = Union[Relation, GroupRelation]
"""What ``Mechanism.relation`` holds."""
RelationLike = Union[Relation, GroupRelation, str]
"""What a ``relation=`` parameter accepts (``check_relation``)."""

# common spellings, compared lower-case with "-", "_", "/" and spaces removed
_SPELLINGS = {"addremove": ADD_REMOVE, "addorremove": ADD_REMOVE, "removeadd": ADD_REMOVE,
              "addorremoveone": ADD_REMOVE,  # dp_accounting's ADD_OR_REMOVE_ONE
              "unbounded": ADD_REMOVE, "replaceone": REPLACE_ONE, "replace": REPLACE_ONE,
              "substitution": REPLACE_ONE, "substitute": REPLACE_ONE, "substituteone": REPLACE_ONE,
              "bounded": REPLACE_ONE}


def check_relation(name: str, value: object) -> AnyRelation:
    """A relation from a ``Relation``, a ``GroupRelation`` or a string: a
    ``Relation``'s value or a common spelling of it ("add-remove",
    "add_remove", "unbounded", dp_accounting's "ADD_OR_REMOVE_ONE"; "replace_one",
    "substitution", "bounded"; any
    case), or a group relation as it prints ("2-fold add/remove"); else
    TypeError/ValueError naming ``name`` and the value."""
    if isinstance(value, (Relation, GroupRelation)):
        return value
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a Relation or one of "
                        f"{[r.value for r in Relation]}, got {value!r} ({type(value).__name__})")
    words = value.strip().split(" ", 1)
    if len(words) == 2 and words[0].endswith("-fold") and words[0][:-5].isdigit():
        k = int(words[0][:-5])
        base = _SPELLINGS.get(_squash(words[1]))
        if base is not None and 2 <= k <= 2 ** 53:
            return GroupRelation(base, k)
    relation = _SPELLINGS.get(_squash(value))
    if relation is None:
        raise ValueError(f"{name} must be one of {[r.value for r in Relation]} (or a spelling such as "
                         f"'add-remove', 'replace_one'), got {value!r}")
    return relation


def _squash(text: str) -> str:
    return "".join(c for c in text.lower() if c not in "-_/ ")


def common_relation(mechanisms: Iterable[Any]) -> AnyRelation:
    """The one relation shared by ``mechanisms`` (an iterable of Mechanism);
    ValueError naming the first two that disagree."""
    first = None
    for m in mechanisms:
        if first is None:
            first = m
        elif m.relation != first.relation:
            raise ValueError(
                f"cannot compose mechanisms with different neighbouring relations: {first.name} "
                f"is {first.relation}, {m.name} is {m.relation}; convert one first "
                f"(ToReplaceOne() turns add/remove into replace-one; a group guarantee is "
                f"built on the whole composition: GroupPrivacy()(Composition()(...), k))")
    return ADD_REMOVE if first is None else first.relation


def require_relation(name: str, mechanism: Any, relation: AnyRelation, why: str) -> Any:
    """``mechanism`` if its relation is ``relation``, else ValueError naming it."""
    if mechanism.relation != relation:
        raise ValueError(f"{name} must be a mechanism for {relation} neighbours ({why}), "
                         f"got {mechanism.name} for {mechanism.relation} neighbours")
    return mechanism


def with_relation(params: Dict[str, Any], relation: Optional[RelationLike]) -> Tuple[Dict[str, Any], AnyRelation]:
    """(params, relation) for a mechanism's constructor: ``relation`` checked
    (None means add/remove) and, unless it is the default, recorded in the
    params so that it shows in the mechanism's description."""
    relation = ADD_REMOVE if relation is None else check_relation("relation", relation)
    if relation != ADD_REMOVE:
        params = {**params, "relation": str(relation)}
    return params, relation
