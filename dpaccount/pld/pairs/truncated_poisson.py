"""Truncated Poisson sampling: Poisson sampling, then at most B records.

The pairs of ``TruncatedPoissonSampling()(mechanism, q, dataset_size,
max_batch_size)`` (``transformers/truncated_poisson.py``): every one of the n
records enters with probability q; if more than B entered, a uniformly random
B of them are kept; ``mechanism`` runs on the batch ("Tighter privacy
analysis for truncated Poisson sampling", arXiv:2508.15089, 2025; the scheme
of dp_accounting's ``TruncatedSubsampledGaussianDpEvent``). Neighbours:
add/remove; n counts the records of the larger neighbour (x included), as
in dp_accounting.

The analysis (derived here; the conditioning is the one dp_accounting 0.6
implements for that paper, the second component's pair is taken tightly). Let D' = D ∪ {x}, S the
Poisson sample of the n − 1 others and N = |S| ~ Bin(n − 1, q), whose law
does not depend on x. Condition on the coin C = [N ≥ B]:

* N ≤ B − 1: the batch is S, or S ∪ {x} with probability q: exactly Poisson
  sampling at rate q of an add/remove neighbour. Dominated by
  ``PoissonRemovePair(base, q)`` / ``PoissonAddPair(base, q)`` (Zhu, Dong &
  Wang 2022, Thm 11).
* N ≥ B: without x the batch V is a uniform B-subset of S, hence of the
  others, *whatever N is*. With x the batch is a uniform B-subset of S ∪ {x}:
  with probability qB/(N + 1) it is {x} ∪ W, W a uniform (B−1)-subset of the
  others (again whatever N is), else it has V's law. Coupling V = W ∪ {y}:
  given C, M(D') = (1 − η)Q_B + η R_B, M(D) = Q_B, with
  Q_B = E M(W ∪ {y}), R_B = E M(W ∪ {x}) replace-one neighbours and
  η = E[qB/(N + 1) | N ≥ B] = (B/n)·P(Bin(n, q) ≥ B + 1)/P(N ≥ B) < q
  (using q·C(n−1, k)/(k+1) = C(n, k+1)q/n). The exact advanced-joint-convexity
  identity H_α((1−η)Q + ηR || Q) = η H_{1+(α−1)/η}(R || Q) (Balle, Barthe &
  Gaboardi 2018, Thm 2), with joint convexity over the coupling, gives the
  dominating pair ``PoissonRemovePair(R, η)`` (and ``PoissonAddPair(R, η)``
  for the reverse order), R a pair dominating replace-one neighbours of the
  base. R is the base's replace-one pair (``ToReplaceOne``: two add/remove
  steps; for a sum of clipped gradients g(x) − g(y) has norm ≤ 2C, i.e. the
  Gaussian at sensitivity 2, attained).

The coin C is public (its law is x-free), so the mixture over it
(``pld/pairs/mixture.py``) with weights 1 − w, w, w = P(Bin(n−1, q) ≥ B), dominates.
dp_accounting 0.6 (``from_truncated_subsampled_gaussian_mechanism``) uses the
same coin and weights, and for the second component the replace-one
subsampled Gaussian ((1−η)N(0) + ηN(−2), (1−η)N(0) + ηN(2)) (noise σ/2,
"slightly loose"), which dominates ((1−η)N(0) + ηN(2), N(0)) used here.
Revealing C is the only slack of the analysis: it is why a truncation that
happens with probability w ~ 0.4 % per step costs as much as it does
(benchmarks/bench_truncated.py). A lower bound for the Gaussian is the
instance where every other record's gradient is 0: x then enters the final
batch with probability q' = (1 − w)q + wη and nothing else moves, i.e.
Poisson sampling at q'. It is the pairs' attained witness (``pld/pairs/witnessed.py``):
for any base, on datasets whose other records leave the base's laws unchanged (as
``PoissonRemovePair.tight`` takes them), M(D') = q'P + (1 − q')Q and M(D) = Q
exactly, so Poisson sampling of the base at q' (rounded down: each direction's
curve grows with the rate, by joint convexity) gives the certified lower end. It
misses only what the replace-one component adds: x displacing a record that moves
the query the other way.

Numerics. w and wη are binomial tails (scipy's ``binom.sf``: Boost's
incomplete beta; measured against mpmath's ``betainc`` on 300 random
(n ≤ 3000, q, B): worst 3.6e-13 relative, 1.6e3 ulps; taken here within
``_REL`` = 1e-11 relative, and the tests check it against exact sums). The mixture
takes w at its lower end, 1 − w at its lower end, and the difference, with
the roundings, added to both components' weights (below); η is taken at its upper
end (each Poisson pair's curve grows with its rate).

Pure ε. The exact pair's loss takes only the two components' values, so its
supremum is the larger of log(1 + q(e^{ε_r} − 1)) and log(1 + η(e^{ε_R} − 1))
(remove; −log(1 − q(1 − e^{−ε})) for add), ε_r and ε_R the base's and its
replace-one pair's pure ε (``PoissonRemovePair.pure_epsilon``, rounded up; it grows
with the rate, so η's upper end serves). The weights' rounding is these components'
own weight, so it adds no other pure ε.
"""

from ...lazy import lazy
from .poisson_sampling import PoissonAddPair, PoissonRemovePair
from .witnessed import WitnessedMixturePair
from ...numerics import ULP_OF_ONE as _U

stats = lazy("scipy.stats")

_REL = 1e-11      # the relative error allowed to scipy's binomial tails
_TINY = 1e-290    # a tail this small is spilled whole (its relative error is then moot)


def truncation_weights(q, n, batch):
    """(w_low, w_high, eta_high): P(Bin(n−1, q) ≥ B) bracketed and an upper
    bound on η = E[qB/(N+1) | N ≥ B] (module docstring); (0, 0, 0) where
    truncation is impossible (B ≥ n or q = 0)."""
    if batch >= n or q == 0.0:
        return 0.0, 0.0, 0.0
    w = float(stats.binom.sf(batch - 1, n - 1, q))
    m = float(stats.binom.sf(batch, n, q)) * batch / n  # E[qB/(N+1); N ≥ B]
    w_high = min(w * (1 + _REL) + _TINY, 1.0)
    w_low = w * (1 - _REL) if w > _TINY else 0.0
    if w_low == 0.0:
        return 0.0, w_high, q
    eta = m * (1 + _REL) / w_low * (1 + 4 * _U)
    return w_low, w_high, min(eta, q)


def truncated_pairs(remove, add, replace, q, n, batch):
    """(remove pair, add pair) of truncated Poisson sampling: ``remove``/``add``
    the base's add/remove pairs, ``replace`` a pair dominating both orders of
    its replace-one neighbours (module docstring). Plain Poisson pairs where
    truncation cannot happen."""
    w_low, w_high, eta = truncation_weights(q, n, batch)
    if w_high == 0.0:
        return PoissonRemovePair(remove, q), PoissonAddPair(add, q)
    keep = (1.0 - w_high) * (1 - 2 * _U)         # ≤ the exact 1 − w
    spill = (w_high - w_low + 2 * _U) * (1 + 2 * _U)  # ≥ 1 − keep − w_low
    rem = (PoissonRemovePair(remove, q), PoissonRemovePair(replace, eta))
    ad = (PoissonAddPair(add, q), PoissonAddPair(replace, eta))
    rate = inclusion_probability(q, n, batch, lower=True)  # the attained instance (module docstring)
    # the spill, only the weights' rounding, goes to both components: the disjoint mixture's δ is
    # Σ w_i δ_i, linear in the weights, so weights at least the exact ones (1 − w ≤ keep + spill,
    # w ≤ w_low + spill) raise every δ, also composed (the spill at ±∞ said ε = ∞ wherever δ is
    # below the composed spill: 10^6 steps of 1e-11 each at δ = 1e-5)
    weights = (min(keep + spill, 1.0), min(w_low + spill, 1.0))
    return (WitnessedMixturePair(zip(weights, rem), 0.0, (((PoissonRemovePair(remove, rate), 1),),), rem),
            WitnessedMixturePair(zip(weights, ad), 0.0, (((PoissonAddPair(add, rate), 1),),), ad))


def inclusion_probability(q, n, batch, lower=False):
    """q' = P(x is in the final batch) = q·P(Bin(n−1, q) ≤ B − 1) + (B/n)·P(Bin(n, q) ≥ B + 1)
    = (1 − w)q + wη: as computed, or with ``lower`` rounded down (each of scipy's
    binomial tails by ``_REL``, the two products and the sum by 4u: the rate of the
    attained instance, module docstring)."""
    if batch >= n:
        return q
    terms = (q * float(stats.binom.cdf(batch - 1, n - 1, q)), float(stats.binom.sf(batch, n, q)) * batch / n)
    if not lower:
        return terms[0] + terms[1]
    return (terms[0] + terms[1]) * (1 - _REL) * (1 - 4 * _U)

