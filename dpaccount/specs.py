"""Mechanism specs: a mechanism as a plain JSON document, and back, safely.

``m.to_spec()`` (``Mechanism.to_spec``) describes a mechanism of the library's
own classes as a dict of JSON values::

    {"dpaccount_spec": 1, "type": "Composition",
     "parts": [{"mechanism": {"type": "PoissonSampling", "q": 0.0042667,
                              "mechanism": {"type": "GaussianMechanism", "sigma": 1.1, "sensitivity": 1.0}},
                "count": 14063}]}

``from_spec(d)`` rebuilds an equal mechanism (``==``, same answers);
``dump(m, path_or_file)`` / ``load(path_or_file)`` do the same through a
JSON file. ``type`` is the name of the public constructor (a mechanism class,
or the transformer for a transformer's result); the other keys are its
arguments; nested mechanisms are nested objects without the version key.

Loading is safe on hostile documents: ``type`` is looked up in a fixed
registry of the library's own constructors (``REGISTRY``) — nothing named by
the data is ever imported, called or unpickled; unknown keys, wrong JSON
types, missing arguments and out-of-range values (the constructors' own
validation) are refused with one ``SpecError`` (a ``DPAccountError`` and a
``ValueError``) or ``SpecTypeError`` (a ``TypeError`` too) whose
message starts with the path inside the document
(``spec.parts[2].mechanism.sigma: sigma must lie in (0.0, inf), got -1.0``).
Nesting is capped at ``MAX_DEPTH`` mechanisms, lists at ``MAX_LIST``
entries, the whole document at ``MAX_NODES`` mechanisms, whole numbers at
``MAX_COUNT``, files at ``MAX_BYTES``; NaN and infinities are refused.
``ContinuousMechanism`` has a spec only for the laws of
``mechanisms.user_defined.SPEC_LAWS`` (normal, logistic, Gumbel by loc/scale).
"""
import json
import math
import os

from .lazy import lazy

from . import validation as v
from .errors import DPAccountError, SpecError, SpecTypeError
from .mechanism import SPEC_KEY, SPEC_VERSION, Mechanism
from .mechanisms.discrete import (ApproxDPMechanism, DiscreteGaussianMechanism, DiscreteLaplaceMechanism,
                                  ExponentialMechanism, PureDPMechanism)
from .dp_events import event_to_spec
from .mechanisms.trivial import NoOpMechanism, NonPrivateMechanism
from .mechanisms.training import MixtureOfGaussiansMechanism, SingleTreeAggregation, TreeAggregation, ZCDPMechanism
from .mechanisms.standard import (BinomialMechanism, GaussianMechanism, GDPMechanism, LaplaceMechanism,
                                  RandomizedResponse)
from .mechanisms.user_defined import SPEC_LAWS, ContinuousMechanism, DiscreteMechanism
from .transformers.composition import Composition
from .transformers.discretise import Discretise
from .transformers.group_privacy import GroupPrivacy, ToReplaceOne
from .transformers.poisson_sampling import PoissonSampling
from .transformers.repeat_and_select import RepeatAndSelect
from .transformers.subset_sampling import SubsetSampling
from .transformers.truncated_poisson import TruncatedPoissonSampling
from .transformers.with_replacement import SamplingWithReplacement
from .transformers.random_allocation import RandomAllocation

stats = lazy("scipy.stats")

MAX_DEPTH = 64          # mechanisms nested in one another
MAX_LIST = 100_000      # entries of one list (parts, probabilities)
MAX_NODES = 100_000     # mechanisms in one document
MAX_COUNT = 2 ** 53     # whole numbers (counts, n, k)
MAX_BYTES = 64 * 2 ** 20  # a spec file
MAX_STRING = 200        # names and relations

# field kinds
REAL, COUNT, BOOL, STR, RELATION, MECHANISM, PARTS, PROBS, LAW = (
    "a number", "a whole number", "true or false", "a string", "a relation", "a mechanism",
    "a list of parts", "a list of probabilities", "a law")


def _fields(required, optional=()):
    return dict(required), dict(optional)


_REL = (("relation", RELATION),)
REGISTRY = {
    # type: (constructor, required fields, optional fields)
    "GaussianMechanism": (GaussianMechanism, *_fields([("sigma", REAL)], [("sensitivity", REAL), *_REL])),
    "GDPMechanism": (GDPMechanism, *_fields([("mu", REAL)], _REL)),
    "LaplaceMechanism": (LaplaceMechanism, *_fields([("b", REAL)], [("sensitivity", REAL), *_REL])),
    "RandomizedResponse": (RandomizedResponse, *_fields([("p", REAL)], [*_REL, ("buckets", COUNT)])),
    "BinomialMechanism": (BinomialMechanism, *_fields([("n", COUNT), ("p", REAL)],
                                                      [("sensitivity", COUNT), ("monotone", BOOL), *_REL])),
    "DiscreteGaussianMechanism": (DiscreteGaussianMechanism, *_fields([("sigma", REAL)],
                                                                      [("sensitivity", COUNT), *_REL])),
    "DiscreteLaplaceMechanism": (DiscreteLaplaceMechanism, *_fields([("t", REAL)], [("sensitivity", COUNT), *_REL])),
    "PureDPMechanism": (PureDPMechanism, *_fields([("eps", REAL)], _REL)),
    "ApproxDPMechanism": (ApproxDPMechanism, *_fields([("eps", REAL), ("delta", REAL)], _REL)),
    "ExponentialMechanism": (ExponentialMechanism, *_fields([("eps", REAL)], _REL)),
    "DiscreteMechanism": (DiscreteMechanism, *_fields([("p_probs", PROBS), ("q_probs", PROBS)], [("name", STR)])),
    "ContinuousMechanism": (ContinuousMechanism, *_fields([("p_dist", LAW), ("q_dist", LAW)], [("name", STR)])),
    "Composition": (lambda parts: Composition()([m for m, _ in parts], [k for _, k in parts]),
                    *_fields([("parts", PARTS)])),
    "PoissonSampling": (lambda mechanism, q: PoissonSampling()(mechanism, q),
                        *_fields([("mechanism", MECHANISM), ("q", REAL)])),
    "SubsetSampling": (lambda mechanism, gamma: SubsetSampling()(mechanism, gamma),
                       *_fields([("mechanism", MECHANISM), ("gamma", REAL)])),
    "Discretise": (lambda mechanism, **kw: Discretise()(mechanism, **kw),
                   *_fields([("mechanism", MECHANISM)], [("accuracy", REAL)])),
    "GroupPrivacy": (lambda mechanism, k: GroupPrivacy()(mechanism, k),
                     *_fields([("mechanism", MECHANISM), ("k", COUNT)])),
    "ToReplaceOne": (lambda mechanism: ToReplaceOne()(mechanism), *_fields([("mechanism", MECHANISM)])),
    "TruncatedPoissonSampling": (lambda mechanism, q, dataset_size, max_batch_size: TruncatedPoissonSampling()(
        mechanism, q, dataset_size, max_batch_size), *_fields([("mechanism", MECHANISM), ("q", REAL),
                                                               ("dataset_size", COUNT), ("max_batch_size", COUNT)])),
    "SamplingWithReplacement": (lambda mechanism, dataset_size, batch_size: SamplingWithReplacement()(
        mechanism, dataset_size, batch_size), *_fields([("mechanism", MECHANISM), ("dataset_size", COUNT),
                                                        ("batch_size", COUNT)])),
    "NoOpMechanism": (NoOpMechanism, *_fields([], _REL)),
    "NonPrivateMechanism": (NonPrivateMechanism, *_fields([], _REL)),
    "MixtureOfGaussiansMechanism": (MixtureOfGaussiansMechanism, *_fields(
        [("sigma", REAL), ("sensitivities", PROBS), ("probs", PROBS)], _REL)),
    "ZCDPMechanism": (ZCDPMechanism, *_fields([("rho", REAL)], [("xi", REAL), *_REL])),
    "TreeAggregation": (TreeAggregation, *_fields([("noise_multiplier", REAL), ("steps", COUNT)],
                                                  [("epochs", COUNT), *_REL])),
    "SingleTreeAggregation": (SingleTreeAggregation, *_fields(
        [("noise_multiplier", REAL), ("steps", COUNT), ("participations", COUNT)],
        [("min_separation", COUNT), *_REL])),
    "RepeatAndSelect": (lambda mechanism, mean, shape=None, poisson=False:
                        RepeatAndSelect()(mechanism, mean, math.inf if poisson else shape),
                        *_fields([("mechanism", MECHANISM), ("mean", REAL)], [("shape", REAL), ("poisson", BOOL)])),
    "RandomAllocation": (lambda mechanism, steps, **kw: RandomAllocation()(mechanism, steps, **kw),
                         *_fields([("mechanism", MECHANISM), ("steps", COUNT)], [("selected", COUNT)])),
}


def from_spec(spec):
    """The mechanism a spec (a dict, as ``Mechanism.to_spec`` writes it) describes.

    Raises one ``SpecTypeError`` (a value of the wrong JSON type; a ``TypeError``)
    or ``SpecError`` (a ``ValueError``; anything else: unknown type or key, missing argument, out of range, too
    large or too deep, wrong schema version) whose message starts with the
    path inside the document."""
    if not isinstance(spec, dict):
        raise SpecTypeError(f"spec must be a dict (a parsed JSON object), got {type(spec).__name__}")
    if SPEC_KEY not in spec:
        raise SpecError(f"spec: missing the schema version key {SPEC_KEY!r} "
                        f"(this dpaccount reads version {SPEC_VERSION})")
    version = spec[SPEC_KEY]
    if isinstance(version, bool) or not isinstance(version, int):
        raise SpecTypeError(f"spec.{SPEC_KEY}: must be a whole number, got {version!r}")
    if version != SPEC_VERSION:
        newer = " (written by a newer dpaccount?)" if version > SPEC_VERSION else ""
        raise SpecError(f"spec.{SPEC_KEY}: unsupported schema version {version!r}{newer}; "
                        f"this dpaccount reads version {SPEC_VERSION}")
    body = {key: val for key, val in spec.items() if key != SPEC_KEY}
    return _Reader().mechanism(body, "spec", 1)


def from_dp_event(event, relation=None):
    """The mechanism of a dp_accounting ``DpEvent`` (``dp_events.py``: read by its type's name
    and fields, no import of dp_accounting), about ``relation`` neighbours (add/remove by
    default; dp_accounting's names and enum accepted). ``UnsupportedEvent`` (a
    ``DPAccountError``) names an event with no counterpart."""
    return from_spec({SPEC_KEY: SPEC_VERSION, **event_to_spec(event, relation)})


def dump(mechanism, path_or_file, indent=2):
    """Write ``mechanism.to_spec()`` as JSON to a path or a text file object."""
    if not isinstance(mechanism, Mechanism):
        raise TypeError(f"mechanism must be a dpaccount Mechanism, got {mechanism!r}")
    text = json.dumps(mechanism.to_spec(), indent=indent, allow_nan=False) + "\n"
    if hasattr(path_or_file, "write"):
        path_or_file.write(text)
    else:
        with open(os.fspath(path_or_file), "w", encoding="utf-8") as f:
            f.write(text)


def load(path_or_file):
    """The mechanism of a JSON spec file (a path or a text file object);
    refuses files over ``MAX_BYTES``, NaN/Infinity and numbers too long to be
    parameters, then ``from_spec``."""
    if hasattr(path_or_file, "read"):
        text = path_or_file.read(MAX_BYTES + 1)
    else:
        with open(os.fspath(path_or_file), "r", encoding="utf-8") as f:
            text = f.read(MAX_BYTES + 1)
    return from_spec(loads(text))


def loads(text):
    """The parsed JSON of a spec document (a str), hostile input refused as ``SpecError``."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    if not isinstance(text, str):
        raise SpecTypeError(f"spec text must be a str, got {type(text).__name__}")
    if len(text) > MAX_BYTES:
        raise SpecError(f"spec: the document is larger than {MAX_BYTES} bytes")
    try:
        return json.loads(text, parse_constant=_no_constant, parse_int=_int, parse_float=_float)
    except RecursionError:
        raise SpecError(f"spec: nested too deeply (at most {MAX_DEPTH} mechanisms)") from None
    except json.JSONDecodeError as exc:
        raise SpecError(f"spec: not valid JSON: {exc}") from None


def _no_constant(name):
    raise SpecError(f"spec: {name} is not a valid parameter value")


def _int(text):
    if len(text.lstrip("-")) > 20:
        raise SpecError(f"spec: number too large: {text[:20]}…")
    return int(text)


def _float(text):
    value = float(text)
    if not math.isfinite(value):
        raise SpecError(f"spec: number out of range: {text[:40]}")
    return value


class _Reader:
    """One document's walk: checks every node and counts the mechanisms."""

    def __init__(self):
        self.nodes = 0

    def mechanism(self, node, path, depth):
        if depth > MAX_DEPTH:
            raise SpecError(f"{path}: nested too deeply (at most {MAX_DEPTH} mechanisms)")
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise SpecError(f"{path}: too many mechanisms in one document (at most {MAX_NODES})")
        if not isinstance(node, dict):
            raise SpecTypeError(f"{path}: must be an object describing a mechanism, got {_kind(node)}")
        kind = node.get("type")
        if not isinstance(kind, str):
            raise SpecTypeError(f"{path}.type: must be a string naming the mechanism, got {_short(kind)}")
        if kind not in REGISTRY:
            raise SpecError(f"{path}.type: unknown mechanism type {_short(kind)} (specs name only the "
                            f"library's own constructors: {', '.join(sorted(REGISTRY))})")
        build, required, optional = REGISTRY[kind]
        unknown = [key for key in node if key != "type" and key not in required and key not in optional]
        if unknown:
            raise SpecError(f"{path}: unknown key {_short(unknown[0])} for {kind} "
                            f"(allowed: {', '.join([*required, *optional])})")
        missing = [key for key in required if key not in node]
        if missing:
            raise SpecError(f"{path}: {kind} needs {', '.join(map(repr, missing))}")
        fields = {**required, **optional}
        args = {key: self.value(node[key], fields[key], f"{path}.{key}", depth)
                for key in node if key != "type"}
        try:
            return build(**args)
        except (TypeError, ValueError, DPAccountError) as exc:
            message = str(exc)
            named = next((key for key in args if message.startswith(f"{key} ")), None)
            where = f"{path}.{named}" if named else path
            raise (SpecTypeError if isinstance(exc, TypeError) else SpecError)(f"{where}: {message}") from None

    def value(self, x, kind, path, depth):
        """``x`` checked for its JSON type (ranges are the constructors' business)."""
        if kind == MECHANISM:
            return self.mechanism(x, path, depth + 1)
        if kind == PARTS:
            parts = []
            for i, part in enumerate(_list(x, path)):
                where = f"{path}[{i}]"
                if not isinstance(part, dict):
                    raise SpecTypeError(f"{where}: must be an object {{\"mechanism\": ..., \"count\": ...}}, "
                                        f"got {_kind(part)}")
                extra = sorted(set(part) - {"mechanism", "count"}, key=str)
                if extra or "mechanism" not in part or "count" not in part:
                    raise SpecError(f"{where}: must have exactly the keys 'mechanism' and 'count', "
                                    f"got {sorted(map(str, part))}")
                parts.append((self.mechanism(part["mechanism"], f"{where}.mechanism", depth + 1),
                              self.value(part["count"], COUNT, f"{where}.count", depth)))
            if not parts:
                raise SpecError(f"{path}: must not be empty")
            return parts
        if kind == PROBS:
            return [self.value(p, REAL, f"{path}[{i}]", depth) for i, p in enumerate(_list(x, path))]
        if kind == LAW:
            return _law(x, path)
        if kind == REAL:
            if isinstance(x, bool) or not isinstance(x, (int, float)):
                raise SpecTypeError(f"{path}: must be {kind}, got {_kind(x)}")
            if isinstance(x, int) and abs(x) > MAX_COUNT or not math.isfinite(float(x)):
                raise SpecError(f"{path}: number out of range: {_short(x)}")
            return float(x) if isinstance(x, float) else x
        if kind == COUNT:
            if isinstance(x, bool) or not isinstance(x, (int, float)):
                raise SpecTypeError(f"{path}: must be {kind}, got {_kind(x)}")
            if not (isinstance(x, int) or math.isfinite(x)) or abs(x) > MAX_COUNT:
                raise SpecError(f"{path}: whole number out of range (at most {MAX_COUNT}): {_short(x)}")
            if x < 1:
                raise SpecError(f"{path}: must be at least 1, got {_short(x)}")
            return v.count(path, x)
        if kind == BOOL:
            if not isinstance(x, bool):
                raise SpecTypeError(f"{path}: must be {kind}, got {_kind(x)}")
            return x
        return _sized(x, path, str, f"{kind} (a string)", MAX_STRING, "string")  # STR, RELATION


def _list(x, path):
    return _sized(x, path, list, "a list", MAX_LIST, "list")


def _sized(x, path, cls, what, cap, label):
    """``x`` if it is a ``cls`` of at most ``cap`` entries; else TypeError/ValueError naming ``path``."""
    if not isinstance(x, cls):
        raise SpecTypeError(f"{path}: must be {what}, got {_kind(x)}")
    if len(x) > cap:
        raise SpecError(f"{path}: {label} too long ({len(x)} entries, at most {cap})")
    return x


def _law(x, path):
    """A frozen scipy law of ``SPEC_LAWS`` from {"law": name, "args": [...], "kwds": {...}}."""
    if not isinstance(x, dict):
        raise SpecTypeError(f"{path}: must be an object {{\"law\": ..., \"args\": [...], \"kwds\": {{...}}}}, "
                            f"got {_kind(x)}")
    extra = sorted(set(x) - {"law", "args", "kwds"}, key=str)
    if extra:
        raise SpecError(f"{path}: unknown key {_short(extra[0])} (allowed: law, args, kwds)")
    law = x.get("law")
    if law not in SPEC_LAWS:
        raise SpecError(f"{path}.law: unknown law {_short(law)}; specs name only {list(SPEC_LAWS)}")
    args, kwds = x.get("args", []), x.get("kwds", {})
    reader = _Reader()
    if not isinstance(args, list) or len(args) > 2:
        raise SpecTypeError(f"{path}.args: must be a list of at most 2 numbers (loc, scale), got {_short(args)}")
    if not isinstance(kwds, dict) or not set(kwds) <= {"loc", "scale"}:
        raise SpecError(f"{path}.kwds: must be an object with keys among loc, scale, got {_short(kwds)}")
    args = [reader.value(a, REAL, f"{path}.args[{i}]", 0) for i, a in enumerate(args)]
    kwds = {k: reader.value(a, REAL, f"{path}.kwds.{k}", 0) for k, a in kwds.items()}
    for where, scale in ((f"{path}.args[1]", args[1:]), (f"{path}.kwds.scale", [kwds.get("scale", 1.0)])):
        if scale and not scale[0] > 0:
            raise SpecError(f"{where}: the law's scale must be > 0, got {_short(scale[0])}")
    return getattr(stats, law)(*args, **kwds)  # law ∈ SPEC_LAWS, a fixed tuple of names


def _kind(x):
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
            type(None): "null"}.get(type(x), f"{_short(x)} ({type(x).__name__})")


def _short(x):
    text = repr(x)
    return text if len(text) <= 60 else text[:57] + "..."
