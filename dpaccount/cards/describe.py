"""A mechanism and its numbers in words: "14,063 × Poisson-sampled (q = 0.00427) Gaussian
(σ = 1.1)" rather than its structured name, read from its spec (``Mechanism.to_spec``); a
bound printed to a few digits on its own safe side (``fmt``)."""
import math
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from typing import Any, Optional


_WORDS = {"GaussianMechanism": "Gaussian", "GDPMechanism": "GDP", "LaplaceMechanism": "Laplace",
          "RandomizedResponse": "randomized response", "BinomialMechanism": "binomial",
          "DiscreteGaussianMechanism": "discrete Gaussian", "DiscreteLaplaceMechanism": "discrete Laplace",
          "PureDPMechanism": "pure DP", "ApproxDPMechanism": "approximate DP", "ExponentialMechanism": "exponential"}
_SYMBOLS = {"sigma": "σ", "mu": "μ", "eps": "ε", "delta": "δ", "sensitivity": "Δ"}


def title_of(m: Any) -> str:
    """A readable description of a mechanism for titles: "14,063 × Poisson-sampled (q = 0.00427)
    Gaussian (σ = 1.1)" rather than its structured name; the name where it has no spec."""
    try:
        return _describe(m.to_spec())
    except TypeError:
        return m.name


def _numbers(node, skip=()):
    """The numeric fields of a spec node, as "σ = 1.1" (sensitivity 1 left out)."""
    return ", ".join(f"{_SYMBOLS.get(k, k)} = {v:.3g}" for k, v in node.items()
                     if k not in skip and isinstance(v, (int, float)) and not isinstance(v, bool)
                     and not (k == "sensitivity" and v == 1))


def _describe(node):
    kind = node["type"]
    if kind == "Composition":
        return " + ".join(f"{part['count']:,} × {_describe(part['mechanism'])}" if part["count"] > 1
                          else _describe(part["mechanism"]) for part in node["parts"])
    if kind == "PoissonSampling":
        return f"Poisson-sampled (q = {node['q']:.3g}) {_describe(node['mechanism'])}"
    if kind == "SubsetSampling":
        return f"subsampled (γ = {node['gamma']:.3g}) {_describe(node['mechanism'])}"
    shown = _numbers(node, skip=("dpaccount_spec",))
    head = f"{_WORDS.get(kind, kind)}{f' ({shown})' if shown else ''}"
    return f"{head} of {_describe(node['mechanism'])}" if "mechanism" in node else head


def fmt(x: Optional[float], up: bool = True, digits: int = 6) -> str:
    """``x`` to ``digits`` significant digits, rounded up (an upper bound) or down."""
    if x is None:
        return "n/a"
    if not math.isfinite(x):
        return str(x)
    if x == 0:
        return "0"
    d = Decimal(x)  # exact
    q = d.quantize(Decimal(1).scaleb(d.adjusted() - digits + 1), rounding=ROUND_CEILING if up else ROUND_FLOOR)
    return f"{q.normalize():g}" if abs(q.adjusted()) < 6 else f"{q.normalize():E}".replace("E+", "e+").replace("E-", "e-")
