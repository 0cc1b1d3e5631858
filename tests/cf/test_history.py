"""A method="cf" answer is a function of its query alone: the same in a fresh process and
after any other queries in it (the house rule: a cache's content never changes an answer).

The cached ``Direction`` (``cf/inversion.py``) once kept its line samples across queries: a
query reused the line the last one left (a nearby c, its step, its reach) and remembered the
δ(ε) its root searches had met, so ε(1e-8) of DP-SGD (σ = 0.9, q = 1e-3, T = 1000) came out as
[0.4515, 0.5279] in a fresh process and [0.52792305, 0.52792306] after ε(1e-6) (``-m slow``
tests/cf/test_sweep.py). Here each query is asked once with every cache cleared, then again
in two orders, caches kept: the answers must be equal to the last bit (same process, same
floats: no tolerance is due).
"""
import sys
import warnings

import pytest

import dpaccount as dpa

PS, C = dpa.PoissonSampling(), dpa.Composition()
MECHANISMS = {
    "gaussian-x10": lambda: C([dpa.GaussianMechanism(1.5)], [10]),
    "gaussian-rr": lambda: C([dpa.GaussianMechanism(2.0), dpa.RandomizedResponse(0.6)], [4, 9]),
    "sg-1.0-0.05-10": lambda: C([PS(dpa.GaussianMechanism(1.0), 0.05)], [10]),
}
QUERIES = [("eps", 1e-6), ("eps", 1e-3), ("delta", 0.3), ("delta", 2.0)]
FEWER = {"sg-1.0-0.05-10": QUERIES[1:3]}  # quadrature: each query costs ~0.1 s


def _clear_caches():
    """Every functools cache of dpaccount.* and the grid caches: a fresh process's state."""
    for name, mod in list(sys.modules.items()):
        if mod is not None and (name == "dpaccount" or name.startswith("dpaccount.")):
            for obj in list(vars(mod).values()):
                if callable(getattr(obj, "cache_clear", None)) and callable(getattr(obj, "cache_info", None)):
                    obj.cache_clear()
    dpa.clear_cache()


def _ask(name, query):
    kind, value = query
    m = MECHANISMS[name]()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpa.ApproximationWarning)  # Poisson sampling: an estimate, said so
        b = (m.get_approxDP_bounds if kind == "eps" else m.get_approx_delta_bounds)(value, method="cf")
        plain = (m.get_approxDP if kind == "eps" else m.get_approx_delta)(value, method="cf")
    return b.lower, b.upper, plain


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_a_cf_answer_does_not_depend_on_the_queries_before_it(name):
    queries, fresh = FEWER.get(name, QUERIES), {}
    for query in queries:
        _clear_caches()
        fresh[query] = _ask(name, query)
        lower, upper, plain = fresh[query]
        assert lower <= upper == plain, (query, fresh[query])  # the plain answer is the pessimistic end
    for order in (queries, queries[::-1]):
        _clear_caches()
        for query in order:
            assert _ask(name, query) == fresh[query], (query, order)
