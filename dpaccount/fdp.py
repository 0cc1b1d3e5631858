"""f-DP of a mechanism: its certified trade-off curve, μ-GDP, and the CLT.

The curve. For each neighbouring direction the mechanism carries a
dominating pair (P_d, Q_d) (``pld/pairs/composition.PairComposition``), valid for
every ε ∈ ℝ. Its hockey-stick curve δ_d bounds H_{e^ε}(M(D)‖M(D')) for the
ordered pairs (D, D') of that direction, so f_d = T(Q_d, P_d) bounds the
trade-off T(M(D'), M(D)) from below (``converters/fdp.py``):

* add/remove: f_remove bounds T(M(D − x), M(D)) and f_add bounds
  T(M(D), M(D − x)): the curve covers **both orders** of every pair of
  datasets differing in one record's presence;
* replace-one (and k-fold group relations): each pair already bounds both
  orders of every neighbouring pair; the inverses f_d⁻¹ (the reversed pairs)
  are included too, which keeps the curve symmetric.

The mechanism's curve is the greatest convex minorant of the minimum of
these curves (Dong, Roth & Su 2022, §2; Zhu, Dong & Wang 2022, §5), by
conjugacy

    f(α) = sup_{ε ∈ ℝ} (1 − max_d δ_d(ε) − e^ε α),

evaluated at the kinks of the δ_d: the points of the PLD grids (method
"pld": the pessimistic grids give a lower bound on β for every α, the
optimistic ones an upper bound), or the atoms of finite pairs and G_μ in
closed form for Gaussian compositions (method "analytic", exact up to
rounding, which errs low). The analytic upper bound of finite pairs is
taken from the pairs a symmetric hull was built to dominate (the hull's
curve lies below theirs by its rounding pad) and minimises over mixtures
Σ λ_d δ_d of the curves, which is exact where two curves cross (minimax;
``converters/fdp.max_profile_to_tradeoff_upper``).

μ-GDP (``mu_gdp``): the smallest μ with δ(ε) ≤ δ_μ(ε) + tail for every ε ≥ 0
and both orders, certified on the whole half-line from the pessimistic
grids (``converters/fdp.gdp_mu_from_profile``): the mechanism's curve is
then ≥ G_μ − tail. Exact μ-GDP of a subsampled composition is decided by
probabilities far below the float range (sampling the record in every one
of T steps), hence the additive ``tail``.

The CLT of Bu, Dong, Long & Su (2020, Thm 3.2 / eq. 3.1): T Poisson-subsampled
Gaussian steps (rate q, noise σ) are approximately μ-GDP with
μ = q·sqrt(T (e^{1/σ²} − 1)) — an approximation, not a bound
(``converters/clt.py``); here for heterogeneous compositions too.
"""
import math

import numpy as np

from .converters.clt import clt_mu_parts
from .converters.fdp import gdp_mu_from_profile, gdp_tradeoff, max_profile_to_tradeoff_upper, profile_to_tradeoff
from .errors import RepresentationUnavailable
from .pld.pairs.composition import DIRECTIONS
from .pld.pairs.discrete_pair import DiscretePair
from .pld.pairs.base import GaussianPair
from .pld.pairs.poisson_sampling import PoissonRemovePair
from .pld.profiles.tiers import TIERS
from .relations import ADD_REMOVE
from .numerics import ULP_OF_ONE as _U



def symmetric(mechanism):
    """Whether each direction's pair bounds both orders (every relation but add/remove)."""
    return mechanism.relation != ADD_REMOVE


def analytic_applies(mechanism):
    """A closed form exists: a Gaussian composition, or one finite pair per direction."""
    if mechanism.pairs.gaussian_mu is not None:
        return True
    single = mechanism.pairs.as_single()
    return single is not None and all(isinstance(p, DiscretePair) for p in single)


def tradeoff(mechanism, alphas, method, accuracy, lower=True):
    """β(α) of the mechanism's curve for an array of α ∈ [0, 1]: a lower bound
    (``lower``) or an upper bound."""
    if method == "analytic":
        mu = mechanism.pairs.gaussian_mu
        if mu is not None:
            return gdp_tradeoff(alphas, mu, lower)
        if not analytic_applies(mechanism):
            raise RepresentationUnavailable(f"no closed-form trade-off curve for {mechanism.name}: "
                                            f"use method='pld'")
        return _finite_pairs(mechanism, alphas, lower)
    if method == "pld":
        return _grids(mechanism, alphas, accuracy, lower)
    raise RepresentationUnavailable(f"method={method!r} gives no trade-off curve for {mechanism.name}; "
                                    f"use 'analytic' or 'pld' (or the approximate 'clt')")


def _curves(items, symmetric_):
    """The curves whose maximum the mechanism's δ is: each direction's, and
    (symmetric relations) each reversed one, as (δ callable, kink points)."""
    out = []
    for delta, kinks in items:
        out.append((delta, kinks))
        if symmetric_:
            out.append((_reversed(delta), -kinks))
    return out


def _reversed(delta):
    """δ of the reversed pair from δ itself: H_t(Q‖P) = 1 − t + t·H_{1/t}(P‖Q)
    (exact for probability pairs; an upper bound on δ gives an upper bound;
    a lower bound a lower bound), rounded the same way as the input."""
    def rev(eps, upper=True):
        eps = np.asarray(eps, dtype=float)
        with np.errstate(over="ignore", invalid="ignore"):
            t = np.exp(np.minimum(eps, 700.0))
            val = -np.expm1(eps) + t * delta(-eps, upper)
            pad = 8 * _U * (1.0 + t * (2.0 + np.abs(eps)))
        return np.clip(np.nan_to_num(val + (pad if upper else -pad), nan=1.0 if upper else 0.0), 0.0, 1.0)
    return rev


def _evaluate(curves, alphas, lower):
    """Lower bound: the conjugate of the max of the upper-rounded curves at all
    kinks; upper bound: the smallest conjugate of a single lower-rounded curve
    (each exact at its own kinks; see ``converters.fdp.profile_to_tradeoff``)."""
    points = np.unique(np.concatenate([k for _, k in curves]))
    if lower:
        vals = [d(points, True) for d, _ in curves]
        cross = _crossings(points, vals)
        if len(cross):
            points = np.concatenate((points, cross))
            vals = [np.concatenate((v, d(cross, True))) for v, (d, _) in zip(vals, curves)]
        return profile_to_tradeoff(points, np.max(vals, axis=0), alphas, lower=True)
    return np.min([profile_to_tradeoff(points, d(points, False), alphas, lower=False)
                   for d, _ in curves], axis=0)


def _crossings(points, vals):
    """The ε where two curves cross between consecutive kinks (each is linear in
    t = e^ε there, so their maximum has a kink where they cross): the
    supremum of 1 − max_d δ_d − tα may sit there. Any ε is a valid candidate,
    so the rounding of these points costs tightness only."""
    t = np.exp(np.minimum(points, 700.0))
    out = []
    for i in range(len(vals)):
        for j in range(i + 1, len(vals)):
            diff = vals[i] - vals[j]
            k = np.flatnonzero(diff[:-1] * diff[1:] < 0)
            frac = diff[k] / (diff[k] - diff[k + 1])
            out.append(np.log(t[k] + (t[k + 1] - t[k]) * frac))
    return np.concatenate(out) if out else np.empty(0)


def _finite_pairs(mechanism, alphas, lower):
    """Exact Neyman–Pearson curve of one finite pair per direction: δ_d is
    linear in e^ε between its atoms' losses, so those are all the kinks.

    The upper bound is taken from the tight pairs a hull's witnesses are
    (``witness_pairs``: a hull lies below their curve by its rounding pad, so its own
    curve, however well rounded, can fall below the mechanism's: 3e-13 at α = ½ for
    the binomial (30, 0.3, Δ = 2)), and from all the curves at once (``converters.fdp.max_profile_to_tradeoff_upper``: exact where two
    curves cross, not the smallest single curve)."""
    pairs = list(mechanism.pairs.as_single())
    if not lower:
        return _finite_upper(pairs, symmetric(mechanism), alphas)
    if symmetric(mechanism):  # the reversed pairs exactly, not through the swap identity
        pairs += [p.reverse() for p in pairs]
    items = [(p.delta, np.append(p.atoms[0], 0.0)) for p in pairs]
    out = _evaluate(items, np.ravel(alphas), lower)
    return np.reshape(out, np.shape(alphas))


def witness_pairs(pair):
    """The tight pairs a pair that is not tight stands for, where each of its witnesses
    (``pld/profiles/attained.py``) is one use of one tight pair — a symmetric hull's two shifts or
    orders, one of which the adversary picks (``pld/pairs/symmetric_hull.py``): for one use the
    mechanism's curve is theirs, its δ the largest of theirs. Else (pair,): also where a witness
    is not finite (the grid of a continuous pair, ``Discretise``), whose curve has no atoms to
    evaluate here."""
    alternatives = getattr(pair, "witnesses", ())
    if pair.tight or not alternatives or any(len(a) != 1 or a[0][1] != 1 or not a[0][0].tight
                                             or not isinstance(a[0][0], DiscretePair) for a in alternatives):
        return (pair,)
    return tuple(a[0][0] for a in alternatives)


def finite_upper_attained(mechanism):
    """Whether the analytic upper curve of one finite pair per direction bounds the mechanism's:
    every curve it takes (``witness_pairs``) is of a tight pair."""
    return all(q.tight for p in mechanism.pairs.as_single() for q in witness_pairs(p))


def _dominated_curves(pairs, symmetric_):
    """The pairs, each hull replaced by the pairs it dominates and their reverses (the hull is
    symmetric: both orders of its sources are the mechanism's), each reversed too where the
    relation is symmetric; one of each curve."""
    curves = {}
    for pair in pairs:
        sources = witness_pairs(pair)
        for p in sources + tuple(q.reverse() for q in sources if symmetric_ or len(sources) > 1):
            curves.setdefault(p.key()[1:], p)  # (size, digest of the logs): one curve each
    return list(curves.values())


def _finite_upper(pairs, symmetric_, alphas):
    """Upper bound on β of the curves of ``pairs`` (hulls replaced by the pairs they dominate,
    with the reverses where the hull, or the relation, is symmetric)."""
    curves = _dominated_curves(pairs, symmetric_)
    loss = np.concatenate([p.atoms[0] for p in curves])
    tau = np.concatenate([p.loss_errors for p in curves])
    eps, where = np.unique(loss, return_inverse=True)
    kink_tau = np.zeros(len(eps))
    np.maximum.at(kink_tau, where, tau)  # each kink within the largest τ of the atoms computed there
    deltas = [p.delta(eps, upper=False) for p in curves]
    p_inf = [p.end_bounds()[0][0] for p in curves]
    out = max_profile_to_tradeoff_upper(eps, kink_tau, deltas, p_inf, np.ravel(alphas))
    return np.reshape(out, np.shape(alphas))


def _grids(mechanism, alphas, accuracy, lower):
    """The curve of the base grids of the privacy profile at ``accuracy``
    (tail 1e-30 at +∞): kinks at the grid points, k·step."""
    profile = mechanism.privacy_profile(accuracy)
    grids = [profile.grid(d, TIERS[0], pessimistic=lower) for d in DIRECTIONS]
    items = []
    for g in grids:
        # the grid points, and the point at 0 (where a curve of ε ≥ 0 alone would stop)
        items.append((lambda e, upper, g=g: g.delta(e), np.append(g.losses, 0.0)))
    out = _evaluate(_curves(items, symmetric(mechanism)), np.ravel(alphas), lower)
    return np.reshape(out, np.shape(alphas))


def mu_gdp(mechanism, method, accuracy, tail):
    """Certified μ (see the module docstring)."""
    mu = mechanism.pairs.gaussian_mu
    if method == "analytic":
        if mu is not None:
            return float(mu)
        if not analytic_applies(mechanism):
            raise RepresentationUnavailable(f"{mechanism.name} is neither a Gaussian composition nor one "
                                            f"finite pair: its μ-GDP needs method='pld'")
        return _finite_mu(mechanism.pairs.as_single(), tail)
    profile = mechanism.privacy_profile(accuracy)
    window = max([t for t in TIERS if t <= 0.1 * tail], default=TIERS[-1])
    grids = [profile.grid(d, window, pessimistic=True) for d in DIRECTIONS]
    top = max(g.offset + len(g.probs) for g in grids)
    lattice = np.arange(0, max(top, 1) + 1) * grids[0].step
    # the grids are linear in e^ε between lattice points, and so between any finer points:
    # a fine subdivision makes the tangent test of ``gdp_mu_from_profile`` tight on coarse lattices
    eps = np.union1d(lattice, np.linspace(0.0, lattice[-1], int(lattice[-1] / 2e-3) + 2))
    delta = np.max([g.delta(eps) for g in grids], axis=0)
    return gdp_mu_from_profile(eps, delta, tail)


_MU_POINTS = 1 << 14  # points of a finite pair's δ(ε) in the μ search (at most)
_MU_CELLS = 1 << 22   # points × atoms of one evaluation of δ (memory)


def _finite_mu(pairs, tail):
    """Certified μ of one finite pair per direction from their curves δ(ε) rounded up (no grid).

    The tight pairs a hull's witnesses are stand in for it (``witness_pairs``: for one use the
    mechanism's δ is the largest of theirs, and the hull's rounding pad of ~1e-13 at +∞ would
    exceed any small tail). δ is evaluated at 0, at the atoms' losses and beyond the
    largest loss plus its rounding τ, where it is P(L = ∞) rounded up and nothing else (a grid
    there sends a rounding sliver of the top atom to +∞: pure ε-DP at ε = 1 had μ = ∞). δ is
    convex in t = e^ε, so the chord between upper bounds at two points lies above it: a fine
    subdivision (which makes ``gdp_mu_from_profile``'s tangent test tight) takes its values on
    the chords, padded by 8u of the larger end and 16u·t of the slope (the rounding of e^ε at
    the three points)."""
    pairs = _dominated_curves(pairs, False)  # (the reverses of a hull's sources: only more δ, safe)
    atoms = np.concatenate([p.atoms[0] for p in pairs])
    top = max(float(np.max(p.atoms[0] + p.loss_errors, initial=0.0)) for p in pairs)
    top = max(top, 0.0) * (1 + 1e-9) + 1e-300  # δ is P(L = ∞) from here on
    at = np.union1d([0.0, top], atoms[(atoms >= 0) & (atoms < top)])
    chunk = max(1, _MU_CELLS // max(max(len(p.atoms[0]) for p in pairs), 1))
    d_at = np.max([np.concatenate([p.delta(at[i:i + chunk]) for i in range(0, len(at), chunk)])
                   for p in pairs], axis=0)
    eps = np.union1d(at, np.linspace(0.0, top, min(int(top / 2e-3) + 2, _MU_POINTS)))
    t_at, t = np.exp(np.minimum(at, 700.0)), np.exp(np.minimum(eps, 700.0))
    cell = np.clip(np.searchsorted(at, eps, side="right") - 1, 0, max(len(at) - 2, 0))
    right = np.minimum(cell + 1, len(at) - 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        slope = np.nan_to_num((d_at[cell] - d_at[right]) / (t_at[right] - t_at[cell]), nan=0.0, posinf=0.0)
    delta = np.interp(t, t_at, d_at) + 8 * _U * np.maximum(d_at[cell], d_at[right]) + 16 * _U * t * slope
    delta[np.isin(eps, at)] = d_at  # the evaluated points as they are
    return gdp_mu_from_profile(eps, np.minimum(delta, 1.0), tail)


def clt_mu_of(mechanism):
    """μ of the CLT for a composition of Poisson-subsampled Gaussians (and plain
    Gaussians, which add μ² exactly); RepresentationUnavailable otherwise."""
    parts, exact = [], 0.0
    for pair, k in mechanism.pairs.remove:
        if isinstance(pair, GaussianPair):
            exact += k * pair.gaussian_mu ** 2
        elif isinstance(pair, PoissonRemovePair) and isinstance(pair.base, GaussianPair):
            parts.append((pair.q, 1.0 / pair.base.gaussian_mu, k))
        else:
            raise RepresentationUnavailable(
                f"the CLT (method='clt') covers compositions of Poisson-subsampled Gaussian "
                f"mechanisms; {mechanism.name} has a part {pair!r}")
    return math.sqrt(clt_mu_parts(parts) ** 2 + exact)
