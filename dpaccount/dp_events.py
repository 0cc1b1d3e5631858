"""dp_accounting's ``DpEvent`` trees as mechanism specs, and back.

``event_to_spec`` reads an event by its type's *name* and its fields, so
``dpaccount.from_dp_event`` needs no import of dp_accounting (a user who has
events has the package; the library does not). ``spec_to_event`` builds events
from a spec (``Mechanism.to_spec``) with the ``dp_event`` module it is given.

The neighbouring relation is the accountant's in dp_accounting and each
mechanism's here. ``relation`` (``"add-remove"`` by default) goes on every
mechanism that takes one, with dp_accounting's names accepted
(``ADD_OR_REMOVE_ONE``, ``REPLACE_ONE``, the enum itself). Its
``REPLACE_SPECIAL`` (a record replaced by a special, e.g. zero, record: Kairouz
et al. 2021, Def. 1.1) moves a sum by one record's contribution, as adding or
removing it does, and is read as add/remove. A noise multiplier is relative to
one record's bound C (dp_accounting's ``GaussianDpEvent``); replacing a record
moves a sum by up to 2C, so under replace-one the Gaussian, Laplace and
discrete Laplace mechanisms get sensitivity 2 (2Δ) — as dp_accounting's PLD
accountant does for ``GaussianDpEvent`` under ``REPLACE_ONE`` (its RDP
accountant's sampling without replacement takes sensitivity 1 there: dpaccount
takes the safe reading everywhere). Tree aggregation and mixtures of Gaussians,
which dp_accounting accounts under add/remove only, are refused under
replace-one. Sampling without replacement is a
replace-one scheme in dp_accounting and here (``SubsetSampling``): its subtree
is built replace-one whatever ``relation`` says, and a composition that mixes
it with add/remove parts is refused (``Composition``'s relation check).
Poisson sampling is an add/remove scheme: under replace-one a
``PoissonSampledDpEvent`` is ``ToReplaceOne`` of it, its subtree built
add/remove (replacing x by y keeps x's slot, sampled with probability q on
both sides: Lebeda, Regehr, Kamath & Steinke 2024, for a Gaussian base, as
dp_accounting's PLD accountant takes it), and a truncated Poisson-subsampled
Gaussian likewise (``transformers/truncated_poisson.py``).

Event → mechanism:

=============================================  =============================================================
``NoOpDpEvent``                                ``NoOpMechanism()``
``NonPrivateDpEvent``                          ``NonPrivateMechanism()``
``GaussianDpEvent(z)``                         ``GaussianMechanism(z)`` (z = 0: non-private)
``LaplaceDpEvent(z)``                          ``LaplaceMechanism(z)`` (z = 0: non-private)
``DiscreteLaplaceDpEvent(a, Δ)``               ``DiscreteLaplaceMechanism(1/a, Δ)``
``RandomizedResponseDpEvent(p, k)``            ``RandomizedResponse(1 − p + p/k, buckets=k)`` (p = 1: no-op)
``SelfComposedDpEvent(e, k)``                  ``Composition()([e], [k])``
``ComposedDpEvent(events)``                    ``Composition()(events, [1, …])``
``PoissonSampledDpEvent(q, e)``                ``PoissonSampling()(e, q)`` (replace-one: ``ToReplaceOne``)
``SampledWithoutReplacementDpEvent(n, b, e)``  ``SubsetSampling()(e, b/n)`` (replace-one)
``SingleEpochTreeAggregationDpEvent(z, T)``    ``TreeAggregation(z, max T)``
``RepeatAndSelectDpEvent(e, mean, shape)``     ``RepeatAndSelect()(e, mean, shape)``
``MixtureOfGaussiansDpEvent(σ, c, p)``         ``MixtureOfGaussiansMechanism(σ, c, p)``
``ZCDpEvent(ρ, ξ)``                            ``ZCDPMechanism(ρ, ξ)``
``TruncatedSubsampledGaussianDpEvent``         ``TruncatedPoissonSampling()(GaussianMechanism(z), q, n, B)``
``SampledWithReplacementDpEvent(n, b, e)``     ``SamplingWithReplacement()(e, n, b)`` (replace-one)
=============================================  =============================================================

Anything else (``UnsupportedDpEvent``, an unknown type) raises
``UnsupportedEvent`` naming it.
"""
import math
import numbers
from fractions import Fraction

from .errors import DPAccountError
from .relations import ADD_REMOVE, REPLACE_ONE, check_relation
from .validation import count
from .numerics import ULP_OF_ONE as _U

MAX_DENOMINATOR = 10 ** 12  # a sampling rate written as sample_size / dataset_size


class UnsupportedEvent(DPAccountError, ValueError):
    """A dp_accounting event (or a mechanism) with no counterpart on the other side."""


def _relation(relation):
    if relation is None:
        return ADD_REMOVE
    name = getattr(relation, "name", relation)  # dp_accounting's NeighboringRelation enum
    if isinstance(name, str) and name.upper() in ("ADD_OR_REMOVE_ONE", "REPLACE_SPECIAL"):
        return ADD_REMOVE
    return check_relation("relation", name)


def _num(value, name, event):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{type(event).__name__}.{name} must be a number, got {value!r}")
    return int(value) if isinstance(value, numbers.Integral) else float(value)


def event_to_spec(event, relation=None):
    """The spec node (``{"type": ..., ...}``) of a dp_accounting event (module docstring)."""
    special = str(getattr(relation, "name", relation)).upper() == "REPLACE_SPECIAL"
    return _node(event, _relation(relation), 0, special)


def _node(event, relation, depth, special=False):
    if depth > 64:
        raise UnsupportedEvent("dp_event nested more than 64 deep")
    kind = type(event).__name__
    f = lambda name: getattr(event, name)
    rel = {"relation": str(relation)}
    inner = lambda e, r=relation: _node(e, r, depth + 1, special and r == relation)
    if kind == "NoOpDpEvent":
        return {"type": "NoOpMechanism", **rel}
    if kind == "NonPrivateDpEvent":
        return {"type": "NonPrivateMechanism", **rel}
    # a noise multiplier is relative to one record's bound C; replacing a record moves a sum by 2C
    moved = {"sensitivity": 2.0} if relation == REPLACE_ONE else {}
    if kind in ("GaussianDpEvent", "LaplaceDpEvent"):
        z = _num(f("noise_multiplier"), "noise_multiplier", event)
        if z == 0:
            return {"type": "NonPrivateMechanism", **rel}
        return ({"type": "GaussianMechanism", "sigma": z, **moved, **rel} if kind == "GaussianDpEvent"
                else {"type": "LaplaceMechanism", "b": z, **moved, **rel})
    if kind == "DiscreteLaplaceDpEvent":
        a = _num(f("noise_parameter"), "noise_parameter", event)
        if a == 0:  # no noise
            return {"type": "NonPrivateMechanism", **rel}
        sens = _num(f("sensitivity"), "sensitivity", event)
        return {"type": "DiscreteLaplaceMechanism", "t": 1.0 / a, "sensitivity": sens * (2 if moved else 1), **rel}
    if kind == "RandomizedResponseDpEvent":
        return _randomized_response(event, relation, special)
    if kind == "SelfComposedDpEvent":
        count = _num(f("count"), "count", event)
        if count == 0:
            return {"type": "NoOpMechanism", **rel}
        return {"type": "Composition", "parts": [{"mechanism": inner(f("event")), "count": count}]}
    if kind == "ComposedDpEvent":
        events = list(f("events"))
        if not events:
            return {"type": "NoOpMechanism", **rel}
        return {"type": "Composition", "parts": [{"mechanism": inner(e), "count": 1} for e in events]}
    if kind == "PoissonSampledDpEvent":
        # under replace-one x's slot is sampled on both sides: ToReplaceOne of the add/remove scheme
        sampled = {"type": "PoissonSampling", "q": _num(f("sampling_probability"), "sampling_probability", event),
                   "mechanism": inner(f("event"), ADD_REMOVE)}
        return {"type": "ToReplaceOne", "mechanism": sampled} if moved else sampled
    if kind == "SampledWithoutReplacementDpEvent":
        n = _num(f("source_dataset_size"), "source_dataset_size", event)
        b = _num(f("sample_size"), "sample_size", event)
        if b == 0 and n > 0:  # an empty sample uses no record (dp_accounting's RDP accountant: ε = 0)
            return {"type": "NoOpMechanism", **rel}  # a no-op composes under any relation: the accountant's
        return {"type": "SubsetSampling", "gamma": b / n if n > 0 else math.nan,
                "mechanism": inner(f("event"), REPLACE_ONE)}
    if kind in ("SingleEpochTreeAggregationDpEvent", "MixtureOfGaussiansDpEvent") and moved:
        raise UnsupportedEvent(f"{kind} is accounted under add/remove (or replace-special) neighbours; "
                               f"dpaccount does not guess its sensitivity under replace-one")
    if kind == "SingleEpochTreeAggregationDpEvent":
        steps = f("step_counts")
        steps = [steps] if isinstance(steps, numbers.Real) else list(steps)
        if not steps:
            raise UnsupportedEvent(f"{kind}: step_counts is empty")
        return {"type": "TreeAggregation", "noise_multiplier": _num(f("noise_multiplier"), "noise_multiplier", event),
                "steps": max(_num(s, "step_counts", event) for s in steps), **rel}
    if kind == "RepeatAndSelectDpEvent":
        shape = _num(f("shape"), "shape", event)
        node = {"type": "RepeatAndSelect", "mechanism": inner(f("event")), "mean": _num(f("mean"), "mean", event)}
        return {**node, "poisson": True} if shape == math.inf else {**node, "shape": shape}
    if kind == "MixtureOfGaussiansDpEvent":
        sigma = _num(f("standard_deviation"), "standard_deviation", event)
        sens = [_num(c, "sensitivities", event) for c in f("sensitivities")]
        probs = [_num(p, "sampling_probs", event) for p in f("sampling_probs")]
        if sigma == 0 and len(sens) == len(probs) and all(p >= 0 for p in probs) and sum(probs) > 0:
            return _noiseless_mixture(sens, probs, rel)
        return {"type": "MixtureOfGaussiansMechanism", "sigma": sigma, "sensitivities": sens, "probs": probs, **rel}
    if kind == "ZCDpEvent":
        return {"type": "ZCDPMechanism", "rho": _num(f("rho"), "rho", event), "xi": _num(f("xi"), "xi", event), **rel}
    if kind == "TruncatedSubsampledGaussianDpEvent":  # dp_accounting's degenerate cases, as its accountant reads them
        n, q, cap, z = (_num(f(k), k, event) for k in ("dataset_size", "sampling_probability",
                                                         "truncated_batch_size", "noise_multiplier"))
        if q == 0 or cap == 0 or n == 0:
            return {"type": "NoOpMechanism", **rel}
        if z == 0:
            return {"type": "NonPrivateMechanism", **rel}
        sampled = {"type": "TruncatedPoissonSampling", "q": q, "dataset_size": n, "max_batch_size": cap,
                   "mechanism": {"type": "GaussianMechanism", "sigma": z}}
        return {"type": "ToReplaceOne", "mechanism": sampled} if moved else sampled
    if kind == "SampledWithReplacementDpEvent":
        return {"type": "SamplingWithReplacement",
                "dataset_size": _num(f("source_dataset_size"), "source_dataset_size", event),
                "batch_size": _num(f("sample_size"), "sample_size", event), "mechanism": inner(f("event"), REPLACE_ONE)}
    raise UnsupportedEvent(f"no dpaccount mechanism for the dp_accounting event {event!r} "
                           f"({kind}: {'unsupported by design' if kind == 'UnsupportedDpEvent' else 'unknown type'})")


def _noiseless_mixture(sens, probs, rel):
    """A mixture of Gaussians without noise: the output moves by a drawn c ≠ 0 (and so
    reveals x) with probability q = P(c ≠ 0), else not at all: Poisson sampling at q
    of the non-private mechanism (q rounded up: δ(ε) = q). q = 0: a no-op."""
    q = math.fsum(p for c, p in zip(sens, probs) if c != 0) / math.fsum(probs)
    if q == 0:
        return {"type": "NoOpMechanism", **rel}
    q = min(q * (1 + 4 * _U), 1.0)
    revealing = {"type": "NonPrivateMechanism", **rel}
    return revealing if q == 1.0 else {"type": "PoissonSampling", "q": q, "mechanism": revealing}


def _float_up(x: Fraction) -> float:
    """The least float ≥ x (x ∈ [0, 1]; int/int division is correctly rounded)."""
    f = x.numerator / x.denominator
    return f if Fraction(f) >= x else math.nextafter(f, math.inf)


def _float_down(x: Fraction) -> float:
    """The greatest float ≤ x (x ∈ [0, 1])."""
    f = x.numerator / x.denominator
    return f if Fraction(f) <= x else math.nextafter(f, -math.inf)


def _randomized_response(event, relation, special=False):
    """dp_accounting's k-ary randomized response: the input bucket with probability
    1 − p, else a uniform bucket, i.e. ``RandomizedResponse(1 − p + p/k, buckets=k)``
    (its pair, for two inputs that differ, is attained and symmetric: it serves
    every relation). Under ``REPLACE_SPECIAL`` the special record's output is a
    uniform bucket (dp_accounting's ``from_randomized_response``): the remove pair
    is (P, U), P = (1 − p + p/k, rest (k − 1)p/k) on (x's bucket, the others: one
    loss, log p, so one atom), U = (1/k, (k − 1)/k), and add is its reverse — an
    add/remove ``DiscreteMechanism``, attained by a record replaced by the special one.

    keep = 1 − p(k − 1)/k is computed exactly (as a fraction: p is a float, k an
    integer) and rounded *up*: k-ary RR with keep' ≥ keep dominates RR with keep (mix
    its output with a uniform bucket, which leaves the uniform law unchanged), so the
    answer is never below the event's. Where keep' rounds up to 1 (noise below about
    1.1e-16) no float RR lies between, and the event is accounted as non-private
    (ε = +∞, sound); under ``REPLACE_SPECIAL`` P becomes (1, 0): remove's ε is log k, add's
    δ(ε) = (k − 1)/k at every ε (sound)."""
    p = _num(event.noise_parameter, "noise_parameter", event)
    k = _num(event.num_buckets, "num_buckets", event)
    if not (0 <= p <= 1) or k < 1:
        raise ValueError(f"RandomizedResponseDpEvent: noise_parameter must lie in [0, 1] and num_buckets be "
                         f"at least 1, got {p!r} and {k!r}")
    k = count("RandomizedResponseDpEvent.num_buckets", k)
    rel = {"relation": str(relation)}
    if k == 1 or p == 1:
        return {"type": "NoOpMechanism", **rel}
    if p == 0:
        return {"type": "NonPrivateMechanism", **rel}
    exact = 1 - Fraction(p) * (k - 1) / k
    keep = _float_up(exact)
    if special:
        # P's first atom rounded up and U's down; the second atoms the other way, so that after
        # DiscreteMechanism's renormalisation P'(1) ≥ P(1) and U'(1) ≤ 1/k. P' is RR at a keep ≥
        # the event's (post-processing, as above); U'(1) ≤ U(1) ≤ P'(1) makes U = λU' + (1 − λ)P'
        # with λ ∈ [0, 1], so at ε ≥ 0 the hockey stick of (P', U) is at most λ times that of
        # (P', U'), in either order (joint convexity)
        u = _float_down(Fraction(1, k))
        return {"type": "DiscreteMechanism", "p_probs": [keep, _float_down(1 - Fraction(keep))],
                "q_probs": [u, _float_up(1 - Fraction(u))], "name": f"RandomizedResponse{k}:special"}
    if keep == 1.0:
        return {"type": "NonPrivateMechanism", **rel}
    return {"type": "RandomizedResponse", "p": keep, **({"buckets": k} if k != 2 else {}), **rel}


def spec_to_event(node, dp_event):
    """The dp_accounting event of a spec node (``Mechanism.to_spec``), built with the
    ``dp_event`` module; ``UnsupportedEvent`` where dp_accounting has none."""
    kind, e = node["type"], dp_event
    inner = lambda key="mechanism": spec_to_event(node[key], dp_event)
    # under replace-one a record's bound C is half the sensitivity (event_to_spec)
    per_record = 2.0 if node.get("relation") == str(REPLACE_ONE) else 1.0
    if kind == "NoOpMechanism":
        return e.NoOpDpEvent()
    if kind == "NonPrivateMechanism":
        return e.NonPrivateDpEvent()
    if kind == "GaussianMechanism":
        return e.GaussianDpEvent(node["sigma"] * per_record / node.get("sensitivity", 1.0))
    if kind == "GDPMechanism":
        return e.GaussianDpEvent(per_record / node["mu"])
    if kind == "LaplaceMechanism":
        return e.LaplaceDpEvent(node["b"] * per_record / node.get("sensitivity", 1.0))
    if kind == "DiscreteLaplaceMechanism":
        sens = node.get("sensitivity", 1)
        if sens % per_record:
            raise UnsupportedEvent(f"a replace-one DiscreteLaplaceMechanism of odd sensitivity {sens} has no "
                                   f"dp_accounting event (a record's bound would be {sens / 2})")
        return e.DiscreteLaplaceDpEvent(1.0 / node["t"], int(sens // per_record))
    if kind == "RandomizedResponse":
        k = node.get("buckets", 2)
        return e.RandomizedResponseDpEvent((1 - node["p"]) * k / (k - 1), k)
    if kind == "Composition":
        events = [spec_to_event(part["mechanism"], dp_event) for part in node["parts"]]
        events = [ev if part["count"] == 1 else e.SelfComposedDpEvent(ev, part["count"])
                  for ev, part in zip(events, node["parts"])]
        return events[0] if len(events) == 1 else e.ComposedDpEvent(events)
    if kind == "PoissonSampling":
        return e.PoissonSampledDpEvent(node["q"], inner())
    if kind == "SubsetSampling":
        rate = Fraction(node["gamma"]).limit_denominator(MAX_DENOMINATOR)
        if rate.numerator / rate.denominator != node["gamma"]:
            raise UnsupportedEvent(f"SubsetSampling at rate {node['gamma']!r} is no sample_size / dataset_size "
                                   f"with dataset_size ≤ {MAX_DENOMINATOR}")
        return e.SampledWithoutReplacementDpEvent(rate.denominator, rate.numerator, inner())
    if kind == "TreeAggregation":
        tree = e.SingleEpochTreeAggregationDpEvent(node["noise_multiplier"], node["steps"])
        epochs = node.get("epochs", 1)
        return tree if epochs == 1 else e.SelfComposedDpEvent(tree, epochs)
    if kind == "RepeatAndSelect":
        return e.RepeatAndSelectDpEvent(inner(), node["mean"], math.inf if node.get("poisson") else node["shape"])
    if kind == "MixtureOfGaussiansMechanism":
        return e.MixtureOfGaussiansDpEvent(node["sigma"], list(node["sensitivities"]), list(node["probs"]))
    if kind == "ZCDPMechanism":
        return e.ZCDpEvent(node["rho"], node.get("xi", 0.0))
    if kind == "TruncatedPoissonSampling" and node["mechanism"]["type"] == "GaussianMechanism":
        base = node["mechanism"]
        return e.TruncatedSubsampledGaussianDpEvent(node["dataset_size"], node["q"], node["max_batch_size"],
                                                    base["sigma"] / base.get("sensitivity", 1.0))
    if kind == "SamplingWithReplacement":
        return e.SampledWithReplacementDpEvent(node["dataset_size"], node["batch_size"], inner())
    raise UnsupportedEvent(f"{kind} has no dp_accounting event")
