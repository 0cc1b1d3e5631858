"""The shared reference cases, through the certified bounds.

For every case of ../shared/reference/cases.json (skipped when the file is
not beside the repository): the certified interval [lower, upper] overlaps
the case's truth interval (it contains the exact value when lo == hi), and
upper is within 0.1% of it. The shared checker tests the default answers;
this test holds the lower bounds to the same standard.
"""
import json
import os

import pytest
from oracles import SHARED_REFERENCE

import dpaccount as dpa

CASES = os.path.join(SHARED_REFERENCE, "cases.json")


def _build(spec):
    (kind, args), = spec.items()
    simple = {"gaussian": lambda a: dpa.GaussianMechanism(sigma=a["sigma"]),
              "laplace": lambda a: dpa.LaplaceMechanism(b=a["b"]),
              "randomized_response": lambda a: dpa.RandomizedResponse(p=a["p"]),
              "binomial": lambda a: dpa.BinomialMechanism(n=a["n"], p=a["p"]),
              "gdp": lambda a: dpa.GDPMechanism(mu=a["mu"])}
    if kind in simple:
        return simple[kind](args)
    if kind == "poisson":
        return dpa.PoissonSampling()(_build(args["of"]), args["q"])
    return dpa.Composition()([_build(s) for s, _ in args], [int(k) for _, k in args])


def _cases():
    if not os.path.exists(CASES):
        return []
    with open(CASES) as fh:
        return [c for c in json.load(fh)["cases"] if c["query"] in ("eps", "delta")]


@pytest.mark.skipif(not os.path.exists(CASES), reason="../shared/reference/cases.json not present")
# ids as a list: pytest 7.0 calls an id function on the marker of an empty parameter set
@pytest.mark.parametrize("case", _cases(), ids=[c["id"] for c in _cases()])
def test_certified_interval_holds_the_truth(case):
    mech = _build(case["mechanism"])
    query = mech.get_approxDP_bounds if case["query"] == "eps" else mech.get_approx_delta_bounds
    b = query(case["value"])
    lo, hi = case["truth"]
    slack = 1e-15 if case["query"] == "delta" else 0.0
    exact = lo == hi
    assert b.lower <= hi * (1 + 1e-9) + slack          # never claims more than the truth allows
    assert b.upper >= lo * (1 - (1e-9 if exact else 1e-4)) - slack  # never under-reports
    assert b.upper <= hi * (1 + 1e-3) + slack           # tight
