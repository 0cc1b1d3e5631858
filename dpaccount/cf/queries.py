"""``method="cf"``: the characteristic-function accountant behind the queries.

Each direction of the mechanism's dominating pairs (``PairComposition``) is
inverted by ``cf/inversion.py`` (Zhu, Dong & Wang, AISTATS 2022): δ(ε)
comes with an error *estimate*, not a certificate, so the answers here are
the value plus its estimate (the pessimistic side):

* δ(ε) = max over directions of min(1, δ_d + err_d);
* ε(δ) = max over directions of the root of δ_d(ε) + err_d(ε) = δ;
* ``Bounds(lower, upper, "cf")`` (built by the caller) with the roots (or values) of δ ∓ err: an
  estimated interval, NOT a certified one (contrast the pld method).

``method="cf"`` is never chosen by default. Pairs without a characteristic
function (``cf/characteristic.py`` lists those it has) raise
``RepresentationUnavailable``, and so does Poisson subsampling of a base
with both atoms and a density (Laplace, logistic): its M(c+it) − atoms
decays only like 1/t and each evaluation is a quadrature, so the inversion
takes minutes; use the pld method there. A Poisson-subsampled Gaussian
composed with atoms (randomized response, finite pairs) inverts with an
honest but budget-bound estimate: ~1 % of δ, ~20 s per ε(δ)
(``cf/inversion.py``, issue 20).
"""
import numpy as np

from ..errors import RepresentationUnavailable
from ..pld.poisson_sampling import PoissonAddPair, PoissonRemovePair
from .characteristic import atoms, log_mgf_continuous
from .inversion import cf_to_delta, epsilon_root


def _slow(pair):
    """A Poisson pair over a base with atoms and a density (module docstring)."""
    if not isinstance(pair, (PoissonAddPair, PoissonRemovePair)):
        return False
    base = pair._base
    return len(atoms(base)[0]) > 0 and log_mgf_continuous(base, np.zeros(1, dtype=complex)) is not None


def _directions(mech):
    try:
        pairs = mech.pairs
    except RepresentationUnavailable as exc:
        raise RepresentationUnavailable(f"method='cf' needs dominating pairs: {exc}") from exc
    slow = [p for p, _ in pairs.remove + pairs.add if _slow(p)]
    if slow:
        raise RepresentationUnavailable(f"method='cf' does not invert {slow[0]!r} in reasonable time "
                                        f"(Poisson subsampling of a base with atoms and a density); "
                                        f"use method='pld'")
    # a symmetric mechanism has the same terms both ways: invert them once
    return (pairs.remove,) if dict(pairs.remove) == dict(pairs.add) else (pairs.remove, pairs.add)


def _delta(mech, eps, side):
    """max over directions of δ + side·err (clipped to [0, 1])."""
    return max(min(max(d + side * err, 0.0), 1.0)
               for d, err in (cf_to_delta(terms, eps) for terms in _directions(mech)))


def _epsilon(mech, delta, side):
    """max over directions of the root; a direction whose δ + side·err is
    already ≤ ``delta`` at the largest root so far has its root below it and
    is not searched (the add direction of Poisson sampling, whose loss piles up
    below log(1/(1−q)) and inverts slowly there, is usually skipped so)."""
    worst = 0.0
    for terms in _directions(mech):
        if worst > 0.0:
            d, err = cf_to_delta(terms, worst)
            if d + side * err <= delta:
                continue
        worst = max(worst, epsilon_root(terms, delta, side))
    return worst


def cf_query(mech, values, query, side=1.0):
    """The answers of ``get_approxDP`` / ``get_approx_delta`` at ``values`` (an
    array), on the side ``side`` of the error estimate (+1 pessimistic)."""
    one = _epsilon if query == "get_approxDP" else _delta
    return np.array([one(mech, float(x), side) for x in np.ravel(values)]).reshape(np.shape(values))


def cf_bounds(mech, values, scalar, query):
    """(lower, upper) of the estimate: δ ∓ err or the roots of δ ∓ err = δ₀
    (not certified)."""
    upper, lower = cf_query(mech, values, query, 1.0), cf_query(mech, values, query, -1.0)
    lower = np.minimum(lower, upper)
    pick = (lambda a: float(a.ravel()[0])) if scalar else (lambda a: a)
    return pick(lower), pick(upper)
