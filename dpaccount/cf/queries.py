"""``method="cf"``: the characteristic-function accountant behind the queries.

Each direction of the mechanism's dominating pairs (``PairComposition``) is
inverted by ``cf/inversion.py`` (Zhu, Dong & Wang, AISTATS 2022): δ(ε) comes
with an error that is a rigorous bound where every pair's M is a closed form
or a finite sum and the window error is bounded (``Answer.certified``), and an
*estimate* otherwise (Poisson subsampling: M by quadrature; atoms on no common
lattice, such as the binomial's: their recurrences are probed, not bounded).
The answers are the value plus its error (the pessimistic side):

* δ(ε) = max over directions of min(1, δ_d + err_d);
* ε(δ) = max over directions of the root of δ_d(ε) + err_d(ε) = δ;
* ``Bounds(lower, upper, "cf")`` (built by the caller) with the roots (or values) of
  δ ∓ err. Where every error involved is a bound the interval is certified;
  where one is an estimate the query says so with an ``ApproximationWarning``.

A direction whose Chernoff bound (``Direction.chernoff_bound``, M on the real
axis only) is at most half the answer of the others is not inverted: the add
direction of Poisson sampling, whose loss piles up below log(1/(1−q)), is
usually skipped so.

``method="cf"`` is never chosen by default. Pairs without a characteristic
function (``cf/characteristic.py`` lists those it has) raise
``RepresentationUnavailable``, and so does Poisson subsampling of a base
with both atoms and a density (Laplace): its M(c+it) − atoms decays only
like 1/t and each evaluation is a quadrature; use the pld method there.
"""
import warnings

import numpy as np

from ..errors import ApproximationWarning, RepresentationUnavailable
from ..pld.pairs.poisson_sampling import PoissonAddPair, PoissonRemovePair
from .characteristic import atoms, log_mgf_continuous
from .inversion import direction


def _slow(pair):
    """A Poisson pair over a base with atoms and a density (module docstring)."""
    if not isinstance(pair, (PoissonAddPair, PoissonRemovePair)):
        return False
    base = pair.base
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
    terms = (pairs.remove,) if dict(pairs.remove) == dict(pairs.add) else (pairs.remove, pairs.add)
    return [direction(t) for t in terms]


def _delta(mech, eps, side):
    """(max over directions of δ + side·err clipped to [0, 1], all errors bounds)."""
    worst, certified = 0.0, True
    for d in sorted(_directions(mech), key=lambda d: -d.chernoff_bound(eps)):
        if worst > 0.0 and d.chernoff_bound(eps) <= 0.5 * worst:
            continue
        ans = d.delta(eps)
        worst = max(worst, min(max(ans.delta + side * ans.error, 0.0), 1.0))
        certified = certified and ans.certified
    return worst, certified


def _epsilon(mech, delta, side):
    """(max over directions of the root, all errors bounds); a direction whose Chernoff
    bound at the largest root so far is at most half of ``delta`` has its root below it."""
    worst, certified = 0.0, True
    for d in _directions(mech):
        if worst > 0.0 and d.chernoff_bound(worst) <= 0.5 * delta:
            continue
        eps, cert = d.epsilon(delta, side)
        worst, certified = max(worst, eps), certified and cert
    return worst, certified


def _query(mech, values, query, side):
    one = _epsilon if query == "get_approxDP" else _delta
    out = [one(mech, float(x), side) for x in np.ravel(values)]
    return np.array([a for a, _ in out]).reshape(np.shape(values)), all(c for _, c in out)


def cf_query(mech, values, query, side=1.0):
    """The answers of ``get_approxDP`` / ``get_approx_delta`` at ``values`` (an
    array), on the side ``side`` of the error (+1 pessimistic)."""
    return _query(mech, values, query, side)[0]


def cf_bounds(mech, values, scalar, query):
    """(lower, upper, certified): δ ∓ err or the roots of δ ∓ err = δ₀; certified
    where every error is a bound, else an estimate, said with an
    ``ApproximationWarning``."""
    upper, cert_up = _query(mech, values, query, 1.0)
    lower, cert_lo = _query(mech, values, query, -1.0)
    lower = np.minimum(lower, upper)
    pick = (lambda a: float(a.ravel()[0])) if scalar else (lambda a: a)
    if not (cert_up and cert_lo):
        warnings.warn(f"method='cf': [{np.min(lower):.6g}, {np.max(upper):.6g}] is an estimated interval, not a "
                      f"certified one (Poisson subsampling or atoms on no lattice: cf/queries.py); use "
                      f"method='pld' for a certified interval", ApproximationWarning, stacklevel=3)
    return pick(lower), pick(upper), bool(cert_up and cert_lo)
