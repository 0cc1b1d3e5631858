"""Sampling with replacement under replace-one neighbours.

The pair of ``SamplingWithReplacement()(mechanism, dataset_size, batch_size)``
(``transformers/with_replacement.py``): b independent uniform draws from the
n records form the batch (a list: a record may appear several times), and
``mechanism`` — replace-one on lists of b records — runs on it. Neighbours
are replace-one: record x at index i becomes y.

The analysis (derived here from Balle, Barthe & Gaboardi 2018, Thm 2 and
the proof of Dong, Roth & Su 2022, Thm 4.2). The count K of draws that hit
index i is Bin(b, 1/n) on both neighbours. Let T be the other b − K draws
(uniform over the others) and U_K, K further such draws. With w_k = P(K = k),
γ = P(K ≥ 1) = 1 − (1 − 1/n)^b,

    M(D)  = w_0 M_0 + γ P_+,  P_+ = Σ_{k≥1} (w_k/γ) E M(T + k·x),
    M(D') = w_0 M_0 + γ Q_+,  Q_+ = Σ_{k≥1} (w_k/γ) E M(T + k·y),

with M_0 = E M(b draws from the others) = E M(T + U_k) for every k. For
α = e^ε ≥ 1, BBG's Thm 2 (advanced joint convexity) gives
H_α(M(D) || M(D')) = γ H_{α'}(P_+ || (1 − β)M_0 + βQ_+), α' = 1 + (α−1)/γ,
and, coupling component k of P_+ with component k of M_0 (= E M(T + U_k))
and of Q_+, joint convexity bounds it by γ Σ_k (w_k/γ) H_{α'}(G_k), where
G_k dominates both orders of k-fold replace-one neighbours (T + k·x against
T + U_k and T + k·y: k list entries replaced): the base's k-fold group pair
(``GroupPrivacy``; for a sum query of sensitivity Δ, the same noise at kΔ).
That is the ε ≥ 0 curve of ``PoissonRemovePair(A, γ)``, A = ⊕_{k≥1} (w_k/γ) G_k
the disjoint mixture (``pld/pairs/mixture.py``), and exchanging x and y gives the
same bound for the reverse order, so the mechanism is dominated by the
symmetric pair of min(f_γ, f_γ⁻¹)** built from it: ``SubsetSampledPair(A, γ)``
(``pld/pairs/subset_sampling.py``). With b = 1, K ∈ {0, 1}, γ = 1/n and A = G_1:
this *is* subset sampling at rate 1/n (DRS Thm 4.2, tight). For b > 1 the
slack is the disjoint mixture over k (K is revealed): K ≥ 2 has probability
≈ (b − 1)/(2n) given K ≥ 1, but it is paid at sensitivity 2Δ. The instance
"every other record contributes 0" is the mixture Σ_k w_k N(kΔ, σ²) against
N(0, σ²) on *one* space, where the rare second copy hides in the first one's
tail: on DP-SGD (n = 60000, b = 256, σ = 1.1, 1000 steps) our ε(1e-5) is 1.559
and that instance's ≈ 0.60 (dp_accounting's pessimistic PLD of it;
benchmarks/bench_truncated.py). It does not dominate every dataset (below), so it
is not used as the pair. It is attained, though: for a sum query (x adds Δ per copy, y and the others 0) the outputs are
exactly those two laws, so for a Gaussian base (μ = Δ/σ) the pair
(Σ_{k≥0} w_k N(kμ, 1), N(0, 1)) is a witness of the mechanism's pair in either
order of the neighbours (``pld/pairs/witnessed.py``): the lower end of ``*_bounds``
(``copies_witness``, weights rounded down and the last ones left out: a P-law
pointwise below the exact one only lowers every composed hockey-stick value).
Its reverse (x and y exchanged) is attained too, but as a witness it would need
that law pointwise *above* the exact one, every k included: not built, so the
lower end can miss where the reverse order is the worse one (small ε). The same
instance for Laplace, discrete Laplace and discrete Gaussian noise:
``copies_noise.py``. Other bases (randomized response, binomial hulls, user pairs)
leave the lower end absent for b > 1: no instance with computable laws is built.

No tight pair, Gaussian bases included. No mixture of the following attained family
is a dominating pair: on a line, x valued +W/2, y −W/2 and every other record
(1/2 − t)W, t ∈ [0, 1] (clipped gradients; μ = W/σ) give
P_t = Σ_k w_k N(ktμ, 1) against Q_t = Σ_k w_k N(−k(1 − t)μ, 1). t = 1 is the instance
above; t = 1/2 is two mixtures shifted in opposite directions, the form of the tight
pair of Schuchardt, Stoian, Kosmala & Günnemann 2024 (NeurIPS; Thm 3.8 as their code
cites it) for Poisson subsampling with group insertion/removal, where the other
records' draws do not depend on the group's, and the form their code evaluates for
sampling with replacement (Bin(b, 1/n) weights on both sides). Here the others fill
the b − K draws the record does not take, so where they sit moves with K, and by exact
computation (``tests/transformers/test_with_replacement_family.py``) t = 1/2 exceeds
t = 1 at ε = 0 (n = 20, b = 5, μ = 1: δ 0.09361 against 0.09232, either order), t = 1
exceeds t = 1/2 tenfold at ε = 0.6, and inner members exceed both ends (n = 3, b = 5,
μ = 2, ε = 0.6: t = 0.8 gives 0.6860 against 0.6685). The worst case is not an end of
even this one-parameter family (a base with a general W-Lipschitz f, whose direction
may change with the count, may have more room), so the disjoint mixture stays the upper
end for every base. On DP-SGD the best instance found is t = 1 (composed ε(1e-5) ≈ 0.604;
t = 1/2 ≈ 0.427, t = 0, the reverse order, ≈ 0.493): the width of [0.6036, 1.5589] is
this analysis's, not the grids'.

Pure ε. ``SubsetSampledPair``'s, log(1 + γ(e^{ε_A} − 1)), with ε_A = max_{k ≤ b} of
G_k's pure ε (A's loss takes only its components' values): every G_k built for
b ≤ ``MAX_COPIES``; beyond, G_b alone, which dominates every k ≤ b (padding a k-fold
neighbour with records replaced by themselves), so ε_A ≤ G_b's; +∞ beyond ``MAX_NAMED``
copies or where the base gives no G_b.

Numerics. γ = −expm1(b·log1p(−1/n)) rounded up (the pair's curve grows with
γ); w_k/γ in logs with its error bound, taken at the lower end
(``copies_weights``); K is cut at the first k whose upper tail P(K > k)/γ is below
``_TAIL``, and that tail with the weights' slack is the mixture's ``spill``.
"""
import math

import numpy as np

from ...errors import GridTooLarge, RepresentationUnavailable
from ...lazy import lazy
from ...numerics import ULP_OF_ONE as _U
from .mixture import MixturePair
from .mixture_gaussian import MixtureOfGaussiansPair
from .subset_sampling import subset_sampled_pair
from .witnessed import WitnessedSubsetSampledPair

special = lazy("scipy.special")  # bdtrc: scipy.stats costs 0.9 s to import

_REL = 1e-11     # the relative error allowed to scipy's binomial tails (bdtrc)
_TAIL = 1e-30    # P(K > k_max | K ≥ 1) left in the spill
_WITNESS_CUT = 1e-20  # P(K = k) below this is left out of the witness (it lowers δ by at most that)
MAX_COPIES = 64  # k_max is at most this; the rest of K's tail is spilled (b/n ≳ 20: ε may be ∞)
MAX_NAMED = 1 << 16  # batches beyond this leave the spill unnamed: pure ε +∞ (``_spill_names``)


def copies_rate(n, b):
    """γ = P(K ≥ 1) = 1 − (1 − 1/n)^b, rounded up (1/n itself for b = 1, as
    ``SubsetSampling`` takes it)."""
    if b == 1:
        return 1.0 / n
    return min(-math.expm1(b * math.log1p(-1.0 / n)) * (1 + 16 * _U), 1.0)


def copies_weights(n, b):
    """(weights, spill): lower bounds on P(K = k | K ≥ 1) for k = 1..k_max, and
    an upper bound on the rest of the probability (module docstring).

    log P(K = k)/γ = Σ_{j<k} log(b − j) − log k! − k log n + (b − k) log1p(−1/n)
    − log γ, summed from libm values (≤ 4 ulp each, docs/portability.md) and
    rounded: its error is ≤ 8u·(the sum of the terms' magnitudes + 1), which exp
    turns into that much relative (+ 4 ulp). The tail P(K > k_max)/γ is scipy's
    ``bdtrc`` (within ``_REL``: ≤ 6e-13 relative against mpmath at n = 60000, b = 256)."""
    if b == 1:
        return [1.0], 0.0
    log_gamma = math.log(-math.expm1(b * math.log1p(-1.0 / n)))
    ks = np.arange(1, min(b, MAX_COPIES) + 1)
    tails = special.bdtrc(ks, b, 1.0 / n) / math.exp(log_gamma)  # P(K > k)/γ
    k_max = int(ks[np.argmax(tails < _TAIL)]) if (tails < _TAIL).any() else int(ks[-1])
    log_n, log_stay = math.log(n), math.log1p(-1.0 / n)
    weights, slack = [], 0.0
    for k in range(1, k_max + 1):
        terms = [math.log(b - j) for j in range(k)] + [-math.lgamma(k + 1), -k * log_n,
                                                      (b - k) * log_stay, -log_gamma]
        rel = 8 * _U * (math.fsum(abs(t) for t in terms) + 1) + 4 * _U
        w = math.exp(math.fsum(terms))
        weights.append(w * (1 - rel))
        slack += 2 * rel * w
    # 1 − Σ weights ≤ the exact tail + the weights' slack; rounded up
    spill = (float(tails[k_max - 1]) * (1 + _REL) + slack + (k_max + 4) * _U) * (1 + 2 * _U)
    return weights, min(spill, 1.0)


def _spill_names(group_pairs, parts, b):
    """The pairs the spill belongs to (``with_replacement_pair``), or () where the base cannot
    give one of them: the spill stays unnamed and the pure ε +∞, while every δ(ε) still
    answers from the listed components. G_b beyond MAX_COPIES is built only here, lazily: a base
    whose b-fold pair is refused (a discrete Laplace hull with no symmetric pair at b ≳ 55, a
    pure-DP group pair of more than MAX_ATOMS outcomes) must still answer every δ(ε)."""
    if b > MAX_NAMED:  # G_b of a pure-DP base has b + 1 outcomes: naming a pure ε of ~b·ε
        return ()      # for millions of copies costs seconds and ~1 GB (benchmarks/README.md)
    rest = range(len(parts) + 1, b + 1) if b <= MAX_COPIES else (b,)
    try:
        return [p for _, p in parts] + [group_pairs(k) for k in rest]
    except (RepresentationUnavailable, GridTooLarge):
        return ()


def copies_probs(n, b):
    """(ks, ws): w_k ≤ P(K = k), K ~ Bin(b, 1/n), for the k with w_k ≥ ``_WITNESS_CUT``.
    w_0 = e^{b log1p(−1/n)}, w_k = γ·P(K = k | K ≥ 1) for k ≥ 1 (``copies_weights``),
    γ and w_0 rounded down by 16u (an exp and a log1p: ≤ 4 ulp each, the product).
    The others are left out (P-mass dropped: a witness's P-law stays below the exact one)."""
    stay = b * math.log1p(-1.0 / n)
    w0 = math.exp(stay) * (1 - 16 * _U)
    gamma = -math.expm1(stay) * (1 - 16 * _U)
    weights, _ = copies_weights(n, b)
    probs = [w0] + [w * gamma * (1 - 2 * _U) for w in weights]
    keep = [k for k, w in enumerate(probs) if w >= _WITNESS_CUT]
    return keep, [probs[k] for k in keep]


def copies_witness(mu, n, b):
    """(Σ_k w_k N(kμ, 1), N(0, 1)) with w_k ≤ P(K = k) (``copies_probs``): the outputs of a
    Gaussian sum on neighbours where x adds Δ = μσ per copy (module docstring); each
    component costs the loss's bisection a log-sum-exp term."""
    keep, probs = copies_probs(n, b)
    return MixtureOfGaussiansPair(1.0, [k * mu for k in keep], probs)


def with_replacement_pair(group_pairs, n, b, witness=None):
    """``SubsetSampledPair(A, γ)``: ``group_pairs(k)`` returns G_k, a pair
    dominating both orders of k-fold replace-one neighbours of the base;
    ``witness(n, b)``: the pair of an instance of the base's (``copies_witness`` for a
    Gaussian sum, ``pld/pairs/copies_noise.py`` for others), attained in both orders,
    or None."""
    if n == 1:  # every draw is the record: K = b, no sampling left (G_b dominates both orders)
        return group_pairs(b)
    weights, spill = copies_weights(n, b)
    if not any(w > 0 for w in weights):  # b ≫ n: K's mass lies beyond MAX_COPIES, where G_b
        # dominates every G_k (below): the mixture is bounded by G_b alone (no witness listed)
        return subset_sampled_pair(group_pairs(b), copies_rate(n, b))
    parts = [(w, group_pairs(k)) for k, w in enumerate(weights, start=1)]
    # the spill is K's tail beyond the listed k and the weights' rounding: the pairs G_k of every
    # k ≤ b (pure ε, ``MixturePair``), each one up to MAX_COPIES; beyond, G_b alone, which
    # dominates every k ≤ b (a k-fold replace-one neighbour is a b-fold one whose other b − k
    # records are replaced by themselves), so its pure ε bounds all of theirs
    named = parts[0][1].pure_epsilon() < math.inf
    spill_of = _spill_names(group_pairs, parts, b) if named else ()
    if not named and spill > 0.0:  # no pure ε to name the spill by: the spill's k are G_b's
        # (G_b dominates every G_k, k ≤ b, so its hockey sticks bound theirs, weight for weight),
        # where the spill at +∞ put every δ below it at ε = ∞ (b = 100 draws of n = 2)
        try:
            parts, spill = parts + [(spill, group_pairs(b))], 0.0
        except (RepresentationUnavailable, GridTooLarge):
            pass
    mix = parts[0][1] if (len(parts) == 1 and spill == 0.0) else MixturePair(parts, spill, spill_of)
    pair = subset_sampled_pair(mix, copies_rate(n, b))
    if witness is None or b == 1:  # b = 1: subset sampling itself, attained where the base is
        return pair
    return WitnessedSubsetSampledPair(pair, (((witness(n, b), 1),),))
