"""Record the library's answers on a fixed set of queries, and compare two records to the
last bit: the check that a refactoring step changes no answer (issue 41).

    python benchmarks/answers.py record before.json     # on the commit before the step
    python benchmarks/answers.py record after.json      # on the commit after it
    python benchmarks/answers.py compare before.json after.json

Each answer is stored as ``float.hex`` (an exact, portable spelling), with the ends and grid
step of every certified interval, and a refusal as its exception's class name. ``compare``
lists every query whose record differs and exits 1 if any does. Answers of one machine are
compared with the same machine's: numpy's exp/log differ in the last bits between CPUs.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import warnings
from typing import Any, Callable, Dict, List, Tuple

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # this checkout's package
import dpaccount as dpa  # noqa: E402

Query = Tuple[str, Callable[[dpa.Mechanism], Any]]


def _mechanisms() -> Dict[str, dpa.Mechanism]:
    g, lap, rr = dpa.GaussianMechanism(1.1), dpa.LaplaceMechanism(1.0), dpa.RandomizedResponse(0.75)
    sampled = dpa.PoissonSampling()(g, 256 / 60000)
    return {
        "gaussian": g,
        "gaussian-x3": dpa.Composition()([g], [3]),
        "laplace-x5": dpa.Composition()([lap], [5]),
        "rr-x20": dpa.Composition()([rr], [20]),
        "binomial": dpa.BinomialMechanism(100, 0.5),
        "discrete-gaussian": dpa.DiscreteGaussianMechanism(2.0),
        "discrete-laplace": dpa.DiscreteLaplaceMechanism(0.5),
        "exponential": dpa.ExponentialMechanism(1.0),
        "dpsgd-1000": dpa.Composition()([sampled], [1000]),
        "dpsgd-14063": dpa.Composition()([sampled], [14063]),
        "poisson-laplace-x50": dpa.Composition()([dpa.PoissonSampling()(lap, 0.05)], [50]),
        "hetero": dpa.Composition()([sampled, dpa.PoissonSampling()(dpa.GaussianMechanism(2.0), 0.02), lap],
                                    [500, 200, 3]),
        "subset": dpa.Composition()([dpa.SubsetSampling()(dpa.GaussianMechanism(1.0, relation="replace-one"),
                                                          0.01)], [200]),
        "truncated": dpa.Composition()([dpa.TruncatedPoissonSampling()(g, 0.01, 10000, 150)], [100]),
        "allocation": dpa.RandomAllocation()(g, 50),
        "allocation-rr": dpa.RandomAllocation()(rr, 6),
        "with-replacement": dpa.Composition()(
            [dpa.SamplingWithReplacement()(dpa.GaussianMechanism(1.0, relation="replace-one"), 1000, 4)], [20]),
        "group": dpa.GroupPrivacy()(dpa.RandomizedResponse(0.7), 3),
        "tree": dpa.TreeAggregation(2.0, 64, 2),
        "mixture": dpa.MixtureOfGaussiansMechanism(1.0, [1.0, 0.5], [0.7, 0.3]),
    }


def _queries() -> List[Query]:
    return [
        ("eps(1e-5)", lambda m: m.get_approxDP(1e-5)),
        ("eps(1e-10)", lambda m: m.get_approxDP(1e-10)),
        ("eps(1e-5, accuracy=1e-4)", lambda m: m.get_approxDP(1e-5, accuracy=1e-4)),
        ("delta(1)", lambda m: m.get_approx_delta(1.0)),
        ("delta(0.1)", lambda m: m.get_approx_delta(0.1)),
        ("eps_bounds(1e-5)", lambda m: m.get_approxDP_bounds(1e-5)),
        ("delta_bounds(1)", lambda m: m.get_approx_delta_bounds(1.0)),
        ("rdp(2)", lambda m: m.get_RDP(2.0)),
        ("rdp(8)", lambda m: m.get_RDP(8.0)),
        ("fdp(0.01)", lambda m: m.get_fDP(0.01)),
    ]


def _spell(value: Any) -> Any:
    """An exact, JSON-safe spelling of an answer."""
    if isinstance(value, float):
        return float.hex(value) if math.isfinite(value) else repr(value)
    if isinstance(value, dpa.Bounds):
        return {"lower": _spell(value.lower), "upper": _spell(value.upper), "step": _spell(value.step),
                "certified": value.certified}
    if hasattr(value, "tolist"):
        return _spell(value.tolist())
    if isinstance(value, (list, tuple)):
        return [_spell(v) for v in value]
    return value


def record() -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for name, m in _mechanisms().items():
        for label, query in _queries():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    out[f"{name} {label}"] = _spell(query(m))
                except (ArithmeticError, ValueError, TypeError, dpa.DPAccountError) as err:
                    out[f"{name} {label}"] = f"refused: {type(err).__name__}"
    return out


def compare(before: Dict[str, Any], after: Dict[str, Any]) -> List[str]:
    keys = sorted((set(before) | set(after)) - {"(package)"})
    return [f"{k}: {before.get(k, '(absent)')} -> {after.get(k, '(absent)')}"
            for k in keys if before.get(k) != after.get(k)]


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("record").add_argument("path")
    both = sub.add_parser("compare")
    both.add_argument("before")
    both.add_argument("after")
    args = parser.parse_args(argv)
    if args.command == "record":
        answers = record()
        answers["(package)"] = os.path.dirname(dpa.__file__)
        with open(args.path, "w", encoding="utf-8") as f:
            json.dump(answers, f, indent=1, sort_keys=True)
        print(f"{len(answers) - 1} answers recorded in {args.path}")
        return 0
    with open(args.before, encoding="utf-8") as f, open(args.after, encoding="utf-8") as g:
        before, after = json.load(f), json.load(g)
    changed = compare(before, after)
    print("\n".join(changed) if changed else f"all {len(before) - 1} answers identical to the last bit")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
