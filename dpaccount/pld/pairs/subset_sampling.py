"""Sampling without replacement (fixed-size batches) under replace-one neighbours.

The pair of ``SubsetSampling()(mechanism, gamma)`` (``transformers/subset_sampling.py``):
the dataset has n records, a batch of
m = γn of them is drawn uniformly without replacement, and ``mechanism`` (a
replace-one mechanism on datasets of size m) runs on the batch. Neighbours
of the subsampled mechanism are again replace-one.

Pairs (the tight accountant). Dong, Roth & Su 2022, Thm 4.2 (the f-DP form
of Zhu, Dong & Wang 2022, Thm 11 (2)): if the base is f-DP with f
symmetric, the subsampled mechanism is C_γ(f) = min(f_γ, f_γ⁻¹)**-DP with
f_γ = γf + (1−γ)Id, and this is tight. f_γ is the trade-off of the pair

    A = ((1−γ)Q + γP, Q)        (``PoissonRemovePair(base, γ)``),

and C_γ(f) is the trade-off of ``SubsetSampledPair``: its privacy loss L*
agrees with A's on L > 0, is mirrored on L < 0,

    P*(L = ℓ) = Q_A(L = −ℓ),  Q*(L = ℓ) = P_A(L = −ℓ)   (ℓ < 0, also ℓ = −∞),

and puts z = 1 − P_A(0 < L ≤ ∞) − Q_A(0 < L < ∞) at L = 0 under both. Its
hockey-stick curve is A's for ε ≥ 0 and, by the swap identity
H_α = 1 − α + α H_{1/α}(reversed), 1 − e^ε + e^ε H_A(−ε) for ε < 0, i.e.
max(H(A), H(A reversed)) at every ε (the conjugate of min(f_γ, f_γ⁻¹)**);
the pair is its own reverse. z ≥ 0 for a symmetric base: with
a = P(L > 0), b = Q(L > 0) = P(L < 0) ≤ a,
P_A(L > 0) + Q_A(L > 0) = (2−γ)b + γa ≤ a + b ≤ 1.

Which base pair. Under replace-one each of the mechanism's pairs dominates
every ordered neighbouring pair, both orders (``relations.py``), so by the
advanced joint convexity of Balle, Barthe & Gaboardi 2018 (batches with the
differing record against batches without it or with its replacement, all
replace-one neighbours) γ·H_B(log(1 + (e^ε − 1)/γ)) = H_A(ε) bounds every
ordered pair of the subsampled mechanism for ε ≥ 0, and the swap identity
applied to (D', D) gives the mirrored bound for ε < 0: the construction
above only uses B's curve for ε ≥ 0. B is the pair itself when both
directions are the same pair, else ``pld/symmetric_hull.symmetric_hull_pair`` of the
two (finite pairs; its curve is the larger of theirs for ε ≥ 0). Where B is
not symmetric enough for z ≥ 0 (e.g. a pessimistic grid of ``Discretise``),
it is replaced by the symmetric hull of B and B reversed, whose ε ≥ 0 curve
is max(H_B, H_B reversed) ≥ H_B (``subset_sampled_pair``). Otherwise (a
composition, a continuous non-symmetric pair) the pairs representation is
unavailable (``RepresentationUnavailable`` says why) and RDP is used.
Mechanisms for add/remove (or k-fold) neighbours are refused, not
converted: their replace-one sensitivity is unknown (``ToReplaceOne`` gives
the sound, sometimes loose, conversion).

Pure ε. L* takes A's losses on L > 0, their negatives and 0 (and +∞ with
P_A(L = +∞)), so its supremum under P* is A's (≥ 0): log(1 + γ(e^{ε₀} − 1)) of the
base's ε₀ (``PoissonRemovePair.pure_epsilon``, rounded up) — the amplification of
pure ε-DP by subsampling without replacement, Balle, Barthe & Gaboardi 2018, Thm 9
(replace-one); the pair is its own reverse, so both directions have it.

RDP: Wang, Balle & Kasiviswanathan 2019, Thm 9 (``rdp/subset_sampling.py``).
"""
import numpy as np

from ...errors import RepresentationUnavailable
from .base import DominatingPair, stacked_masses
from .poisson_sampling import PoissonRemovePair
from .symmetric_hull import symmetric_hull_pair
from ...numerics import ULP_OF_ONE as _U

_ZERO = 1e-12  # |ℓ| this small is the atom at L = 0 (the tolerance of base.atoms_at)


class SubsetSampledPair(DominatingPair):
    """The symmetric pair of C_γ(T(base)) (module docstring): A = ((1−γ)Q+γP, Q)
    on L > 0, mirrored on L < 0, the rest at L = 0. ``base`` must have a
    symmetric replace-one trade-off (ValueError if its zero atom is negative)."""

    def __init__(self, base, gamma):
        self._base, self._gamma = base, float(gamma)
        self._a = PoissonRemovePair(base, self._gamma)
        a, b, err_a, err_b = stacked_masses([self._a], np.array([0.0]), [1], errors=True)
        # z = Q_A(L ≤ 0, incl. −∞) − P_A(L > 0, incl. +∞), rounded up by the two
        # cells' error bounds and the roundings of its ≤ 4 terms (each ≤ 1). Extra
        # equal P- and Q-mass at L = 0 can only raise every composed δ, so up is the safe side:
        # Q_A(L = −∞) at its upper end, P_A(L = +∞) at its lower one (``end_bounds``; a finite
        # base computes them from its logs, which err by their ``log_err``)
        (p_low, p_high), (q_low, q_high) = self._a.end_bounds()
        pad = err_b[0] + err_a[1] + 8 * _U
        z = (b[0] + q_high) - (a[1] + p_low) + pad
        if z < 0:
            raise ValueError(f"base pair {base!r} is not symmetric: its mirrored pair would put "
                             f"negative mass {z:.3g} at loss 0")
        self._z = float(z)
        # z's own error: the exact z is ≥ z − 2·pad − (the ends' spans), rounded (``_masses``: the
        # cell at 0 carries it, so that the optimistic grids take z at its lower end)
        self._z_err = float((2 * pad + (q_high - q_low) + (p_high - p_low)) * (1 + 4 * _U))

    @property
    def p_inf(self):
        return self._a.p_inf

    @property
    def q_ninf(self):
        return self._a.p_inf  # Q*(L = −∞) = P_A(L = +∞)

    def end_errors(self):
        """Both ends are A's P(L = +∞): its error, twice."""
        e = self._a.end_errors()[0]
        return e, e

    @property
    def atomless_off_zero(self) -> bool:
        """Its atoms are A's, mirrored, and the one at L = 0 (``zero_mass``)."""
        return bool(self._a.atomless)

    @property
    def zero_mass(self):
        """P*(L = 0) = Q*(L = 0), rounded up."""
        return self._z

    @property
    def zero_mass_error(self):
        """A bound on ``zero_mass`` − the exact P*(L = 0) (≥ 0: it is rounded up)."""
        return self._z_err

    def masses(self, edges):
        return self._masses(edges, False)

    def _masses(self, edges, errors):
        """Rows P*, Q* (and with ``errors`` their error bounds, A's summed: the
        regrouping adds ≤ 2 non-negative terms per cell, ≤ 2u of it) of the cells."""
        e = np.asarray(edges, dtype=float)
        n = len(e)
        rows = 4 if errors else 2
        out = np.zeros((rows, n + 1))
        # L* > 0: A's cells (0, e_j0], …, (e_{n−1}, ∞) are output cells j0, …, n
        j0 = int(np.searchsorted(e, 0.0, side="right"))
        out[:, j0:] += np.array(stacked_masses([self._a], np.concatenate(([0.0], e[j0:])), [n - j0 + 1], errors))[:, 1:]
        # L* < 0: A's losses ℓ > 0 mirror to −ℓ, so output cell (e_{j−1}, e_j] takes A's
        # [−e_j, −e_{j−1}): left-closed, while A's cells are right-closed. With the mirrored
        # edges m_k = −e_{jn−k}, A's cells are cut at m_k(1 − τ) and m_k: the sliver
        # (m_k(1 − τ), m_k] holds exactly the atoms A itself places at m_k and goes with
        # the cell above it in A (output cell jn − k). Its continuous mass then sits up to
        # τ|m_k| above its output cell's top edge: a rounding down of ≤ τ·(sliver mass),
        # ~τ² of the density (~1e-24), far below the pessimistic grid's own slack.
        jn = int(np.searchsorted(e, 0.0, side="left"))
        m = -e[:jn][::-1]
        below = np.maximum(m * (1.0 - _ZERO), np.concatenate(([0.0], m[:-1])))
        cuts = np.empty(2 * jn + 1)
        cuts[0], cuts[1::2], cuts[2::2] = 0.0, below, m
        cells = np.array(stacked_masses([self._a], cuts, [len(cuts)], errors))
        # A's cells (0, m_1(1−τ)], sliver 1, (m_1, m_2(1−τ)], …, sliver jn, (m_jn, ∞):
        # group k ≥ 1 is sliver k with the cell above it, [m_k, m_{k+1}) up to τ
        groups = np.concatenate(([0], np.arange(1, 2 * jn, 2)))
        out[:, :jn + 1] += np.add.reduceat(cells[:, 1:], groups, axis=1)[[1, 0, 3, 2][:rows], ::-1]  # P* = Q_A mirrored
        out[:2, jn] += self._z   # the atom at 0 lies in (e_{jn−1}, e_jn]
        if errors:
            out[2:] += 2 * _U * out[:2]
            out[2:, jn] += self._z_err  # z rounded up: the exact one may be that much lower
        return tuple(out)

    def atom_masses(self, points):
        pts = np.asarray(points, dtype=float)
        p_out, q_out = np.zeros(len(pts)), np.zeros(len(pts))
        pos, neg = pts > _ZERO, pts < -_ZERO
        p_out[pos], q_out[pos] = self._a.atom_masses(pts[pos])
        q_out[neg], p_out[neg] = self._a.atom_masses(-pts[neg])
        zero = ~(pos | neg)
        p_out[zero], q_out[zero] = self._z, self._z
        return p_out, q_out

    def delta(self, eps, upper=True):
        eps = np.asarray(eps, dtype=float)
        d = np.asarray(self._a.delta(np.abs(eps), upper), dtype=float)
        # ε < 0: swap identity, two non-negative terms: expm1 and exp (≤ 4 ulp each, the
        # documented worst case assumed), the product and the sum: rounded by (1 ± 8u)
        with np.errstate(over="ignore", invalid="ignore"):  # overflows only where ε ≥ 0: unused
            swapped = (-np.expm1(eps) + np.exp(eps) * d) * (1 + 8 * _U if upper else 1 - 8 * _U)
        out = np.minimum(np.where(eps >= 0, d, swapped), 1.0)
        return float(out) if out.ndim == 0 else out

    @property
    def witnesses(self):
        """Not ``tight`` under composition (its curve is max(H(A), H(A reversed)) at each
        ε, attained by the one or the other, like a symmetric hull): its witnesses are A
        and A reversed — A is the batch with the record against the batch with its
        replacement when the other records leave the base's laws unchanged (module
        docstring), attained where the base pair is."""
        return (((self._a, 1),), ((self._a.reverse(), 1),))

    def pure_epsilon(self):
        """A's pure ε (module docstring), rounded up by A."""
        return self._a.pure_epsilon()

    def reverse(self):
        return self

    def key(self):
        return ("subset", self._gamma, self._base.key())


def replace_one_pair(pairs):
    """A pair B whose curve dominates both directions of a replace-one
    ``PairComposition`` for ε ≥ 0 (module docstring); RepresentationUnavailable
    with the reason when there is none."""
    rem, add = pairs.remove, pairs.add
    if len(rem) != 1 or len(add) != 1 or rem[0][1] != 1 or add[0][1] != 1:
        raise RepresentationUnavailable(
            "subset sampling of a composition: a product of pairs is not a pair of one-dimensional "
            "laws; sample each part, or use method='rdp'")
    r, a = rem[0][0], add[0][0]
    if r == a:
        return r
    return _hull(r, a)


def _hull(first, second):
    """``pld/symmetric_hull.symmetric_hull_pair`` of two finite pairs, else RepresentationUnavailable."""
    if not (hasattr(first, "atoms") and hasattr(second, "atoms")):
        raise RepresentationUnavailable(
            f"subset sampling needs one symmetric pair dominating both orders of a replace-one "
            f"neighbour, and {first!r} / {second!r} are not finite pairs it can be built from; "
            f"use method='rdp'")
    try:
        return symmetric_hull_pair(first, second)
    except ValueError as exc:
        raise RepresentationUnavailable(f"subset sampling: {exc}; use method='rdp'") from exc


def subset_sampled_pair(base, gamma):
    """``SubsetSampledPair(base, γ)``; a base whose mirrored pair would be
    invalid (not symmetric: a replace-one pair dominating both orders need not
    be) is first replaced by the symmetric pair of max(H(base), H(base
    reversed)), whose curve is ≥ base's for ε ≥ 0, which is all the
    construction uses."""
    try:
        return SubsetSampledPair(base, gamma)
    except ValueError:
        return SubsetSampledPair(_hull(base, base.reverse()), gamma)
