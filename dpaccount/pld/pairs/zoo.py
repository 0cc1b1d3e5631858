"""Dominating pairs of the discrete and user-defined mechanisms.

Each pair is (P, Q) = (law with the record, law without), seen through the
privacy loss L = log dP/dQ (``pld/pairs/base.py`` explains the protocol).

* ``discrete_gaussian_pair(sigma, sensitivity)`` — (N_Z(Δ, σ²), N_Z(0, σ²)),
  the discrete Gaussian of Canonne, Kamath & Steinke (NeurIPS 2020, Def. 1):
  P(x) ∝ exp(−(x−Δ)²/(2σ²)) on the integers. L(x) = (2xΔ − Δ²)/(2σ²).
* ``discrete_laplace_pair(t, sensitivity)`` — (Δ + DLap(t), DLap(t)) with
  DLap(t)(x) ∝ exp(−|x|/t) on Z; represented exactly by Δ + 1 atoms.
* ``leaky_rr_pair(eps, delta)`` — the pair of Kairouz, Oh & Viswanath
  (ICML 2015, Thm 2.1) that dominates every (ε, δ)-DP mechanism; δ = 0 is
  randomized response with p = e^ε/(1+e^ε), which dominates every ε-DP one.
* ``LogisticPair(eps)`` — (Logistic(ε, 1), Logistic(0, 1)): the envelope of
  all ε-bounded-range pairs (the exponential mechanism; see its docstring).

``MonotoneLossPair`` (two continuous laws with a monotone loss) is in
``monotone_loss.py``.
"""
import math

import numpy as np

from ...lazy import lazy
from .discrete_pair import DiscretePair
from .base import DominatingPair, check_atoms, underflow_slack
from ...numerics import ULP_OF_ONE as _U

special = lazy("scipy.special")

_BR_SHARES = tuple(j / 8 for j in range(1, 8)) + (15 / 16, 63 / 64)  # t/ε of the witnesses
_TINY = 1e-300  # mass dropped from an infinite support is at most this (relative)


def discrete_gaussian_pair(sigma, sensitivity=1):
    """(N_Z(Δ, σ²), N_Z(0, σ²)) on the integers x ∈ [−X, Δ + X], X ≈ 37σ + 2.

    The normaliser Z = Σ_x exp(−x²/(2σ²)) is summed in log space (it is not
    sqrt(2πσ²) for small σ). The two tails beyond the range carry the same
    mass T ≤ 1e-300 under P and under Q (by the reflection x ↦ Δ − x); it is
    bounded above by a geometric series and put at L = +∞ under P and at
    L = −∞ under Q. That can only increase every hockey-stick value:
    Σ_tail (p − αq)_+ ≤ Σ_tail p = T, and both laws stay normalised (up to T
    rounded up). The loss (Δ/σ²)(x − Δ/2) lies on the lattice Δ/σ² (Δ even)
    or Δ/(2σ²) (Δ odd); each log p is built as log q + (lattice index)·g so
    that the losses are exact multiples of g.

    Tight: the outputs on neighbours where the query moves by Δ, up to the
    tails T ≤ 1e-300 put at ±∞ (a total variation of T per use, far below the
    downward rounding of every lower bound at any δ(ε) above ~1e-280).
    """
    sigma, delta_ = float(sigma), int(sensitivity)
    two_var = 2.0 * sigma * sigma
    reach = math.sqrt(two_var * 310 * math.log(10))
    # |L(x)| ≤ (2|x| + Δ)Δ/(2σ²) on the support |x| ≤ reach + Δ + 3: it must stay in the float range
    if not (two_var > 0.0 and (2 * reach + 3 * delta_ + 6) * delta_ / two_var < 1e300):
        raise ValueError(f"sigma={sigma!r} with sensitivity={delta_}: the privacy loss (2x − Δ)Δ/(2σ²) "
                         f"of the discrete Gaussian leaves the float range (sigma too small)")
    check_atoms(f"the discrete Gaussian pair (sigma={sigma!r}, sensitivity={delta_})", 2 * reach + delta_)
    half = int(math.ceil(reach)) + 2  # w(X) ≤ 1e-310 ≤ 1e-310·Z
    x = np.arange(-half - delta_, half + delta_ + 1, dtype=float)
    log_w = -x * x / two_var
    log_z = special.logsumexp(log_w)  # omits a relative ≤1e-300 tail: Z rounds down, masses up
    keep = (x >= -half) & (x <= half + delta_)
    xs = x[keep]
    log_q = log_w[keep] - log_z
    g = delta_ / sigma ** 2 if delta_ % 2 == 0 else delta_ / (2 * sigma ** 2)
    index = (xs - delta_ // 2) if delta_ % 2 == 0 else (2 * xs - delta_)  # L / g, exact integers
    log_p = log_q + index * g
    # tail beyond x > half (each side under Q; P's tails are the mirror image):
    # Σ_{y > X} w(y) ≤ w(X+1)/(1 − r), r = w(X+2)/w(X+1) bounds every later ratio
    log_r = -(2 * half + 3) / two_var
    log_tail = -(half + 1) ** 2 / two_var - math.log(-math.expm1(log_r)) - log_z
    log_tail = max(log_tail + math.log(2.0), math.log(_TINY))  # both sides; floor: representable
    log_p = np.concatenate((log_p, [log_tail, -np.inf]))
    log_q = np.concatenate((log_q, [-np.inf, log_tail]))
    return DiscretePair(log_p, log_q, lattice=g,
                        name=f"discrete-gaussian(sigma={sigma!r},sensitivity={delta_})", tight=True)


def discrete_laplace_pair(t, sensitivity=1):
    """(Δ + DLap(t), DLap(t)), DLap(t)(x) = (1−ρ)/(1+ρ) ρ^{|x|}, ρ = e^{−1/t}.

    L(x) = (|x| − |x−Δ|)/t: −Δ/t on x ≤ 0, +Δ/t on x ≥ Δ, (2x−Δ)/t between.
    The geometric tails are summed in closed form, so the pair is exact:
      x ≤ 0: P = ρ^Δ/(1+ρ), Q = 1/(1+ρ);  x ≥ Δ: P = 1/(1+ρ), Q = ρ^Δ/(1+ρ);
      0 < x < Δ: P = (1−ρ)/(1+ρ) ρ^{Δ−x}, Q = (1−ρ)/(1+ρ) ρ^x.
    Every loss is a multiple of 1/t (the lattice). Tight: the outputs on
    neighbours where the query moves by Δ, exactly.
    """
    t, d = float(t), int(sensitivity)
    check_atoms(f"the discrete Laplace pair (t={t!r}, sensitivity={d})", d + 1)
    s = 1.0 / t
    log_end = -math.log1p(math.exp(-s))                       # log 1/(1+ρ)
    log_mid = math.log(-math.expm1(-s)) + log_end             # log (1−ρ)/(1+ρ)
    x = np.arange(1, d, dtype=float)
    log_p = np.concatenate(([log_end - d * s], log_mid - (d - x) * s, [log_end]))
    log_q = np.concatenate(([log_end], log_mid - x * s, [log_end - d * s]))
    return DiscretePair(log_p, log_q, lattice=s, name=f"discrete-laplace(t={t!r},sensitivity={d})", tight=True)


def leaky_rr_pair(eps, delta=0.0):
    """Kairouz–Oh–Viswanath's pair on four outcomes (ICML 2015, Thm 2.1):
    P = (δ, (1−δ)e^ε/(1+e^ε), (1−δ)/(1+e^ε), 0), Q = P reversed.

    Every (ε, δ)-DP mechanism is a post-processing of it, so it dominates
    both directions; H_{e^ε}(P||Q) = δ exactly. With δ = 0 it is randomized
    response with p = e^ε/(1+e^ε) (the ε-DP pair). Logs are formed without
    computing p first: log p = −log(1+e^{−ε}), log(1−p) = −ε − log(1+e^{−ε}),
    so the losses are ±ε to the last bit (the lattice is ε); the mass at
    L = +∞ is δ itself, not exp(log δ), so that ε(δ) is ε, not ∞.
    Tight for the class it stands for: the pair is itself (ε, δ)-DP (both
    orders), so the worst (ε, δ)-DP mechanism attains it.
    """
    eps, delta = float(eps), float(delta)
    log_d = math.log(delta) if delta > 0 else -math.inf
    log_hi = math.log1p(-delta) - math.log1p(math.exp(-eps))
    log_lo = log_hi - eps
    log_p = np.array([log_d, log_hi, log_lo, -np.inf])
    return DiscretePair(log_p, log_p[::-1].copy(), lattice=eps or None, p_inf=delta, q_ninf=delta,
                        name=f"leaky-rr(eps={eps!r},delta={delta!r})", tight=True)


class LogisticPair(DominatingPair):
    """(Logistic(ε, 1), Logistic(0, 1)): the tight pair of ε-bounded range.

    A mechanism is ε-BR if for all neighbours the loss lies in an interval
    [t − ε, t] (Durfee & Rogers 2019); the exponential mechanism with
    probabilities ∝ exp(ε u/2) and a sensitivity-1 utility is ε-BR.
    Dong, Durfee & Rogers (2020, Lemma 3.2) show that, for fixed t, the
    worst case is the two-outcome pair with losses t and t − ε. Its curve is
    p_t(1 − e^{ε'−t}) with p_t = (e^ε − e^t)/(e^ε − 1); the maximum over
    t ∈ [0, ε] is at t = (ε + ε')/2 and gives, for |ε'| ≤ ε,

        δ(ε') = (e^{ε/2} − e^{ε'/2})² / (e^ε − 1),

    (1 − e^{ε'} below −ε, 0 above ε) — the hockey-stick curve of this
    logistic pair ("the exponential mechanism is dominated by two logistic
    distributions", Zhu, Dong & Wang 2022, talk). So it dominates every
    ε-BR mechanism and no smaller pair does (each ε' is attained). Not
    ``tight``: each ε' is attained by a different two-outcome pair (its own
    t), none by this one, and a composition's worst case is not the product
    of envelopes. Its ``witnesses`` are those two-outcome pairs at
    t = jε/8, j = 1..7, and at 15ε/16 and 63ε/64 (``bounded_range_pair``;
    small δ asks for t near ε; nine in all, ``attained.MAX_CHOICES``): each is the exponential
    mechanism's output on two candidates whose utility gap moves by 2 (lower
    ends within ~0.5 % of the envelope at one use: ε = 1, ε' = 0.3).
    The loss law is simple: e^{L/2} ~ Uniform(e^{−ε/2}, e^{ε/2}) under P and
    e^{−L/2} ~ Uniform(e^{−ε/2}, e^{ε/2}) under Q, so with c = e^{ε/2}

        P(L ∈ (a, b]) = c (e^{b/2} − e^{a/2}) / (c² − 1),
        Q(L ∈ (a, b]) = c (e^{−a/2} − e^{−b/2}) / (c² − 1)   (a, b ∈ [−ε, ε]).
    """

    p_inf = 0.0

    def __init__(self, eps):
        self._eps = float(eps)

    def pure_epsilon(self):
        return self._eps  # L ∈ [−ε, ε], the pair's own parameter (exact)

    def masses(self, edges):
        e = self._eps
        z = np.clip(np.concatenate(([-e], np.asarray(edges, dtype=float), [e])), -e, e)
        lo, hi = z[:-1], z[1:]
        # c/(c²−1) = 1/(2 sinh(ε/2)); each cell as e^{lo/2}·expm1((hi−lo)/2): no cancellation
        scale = 0.5 / math.sinh(e / 2)
        a = scale * np.exp(lo / 2) * np.expm1((hi - lo) / 2)
        b = scale * np.exp(-hi / 2) * np.expm1((hi - lo) / 2)
        return a, b

    def _masses(self, edges, errors):
        """``masses``; with ``errors``, (24 + ε)u of each cell: sinh, exp and expm1 ≤ 4 ulp
        each (docs/portability.md; the arguments ε/2, lo/2, −hi/2 are exact), the quotient
        and two products ½ ulp each, hi − lo ½ ulp, which moves expm1(x), x = (hi − lo)/2 ≤ ε,
        by ≤ ½(1 + x) ulp (its relative slope x·e^x/(e^x − 1) ≤ 1 + x): ≤ 14u + ½u·ε, taken
        as (24 + ε)u (second-order terms, and a simulated machine erring 5 ulp per call);
        + 16 subnormal spacings for results that underflow (``underflow_slack``). (The
        default 8u of the cell fell short with exp, expm1 and sinh erring 4 ulp the wrong
        way, 12.4u at ε = 1, and under ``DPACCOUNT_ULP_NOISE=4``, 12.3u.)"""
        a, b = self.masses(edges)
        if not errors:
            return a, b
        slack = (24 + self._eps) * _U
        z = np.clip(np.asarray(edges, dtype=float), -self._eps, self._eps)
        live = np.concatenate(([-self._eps], z)) < np.concatenate((z, [self._eps]))  # else exactly 0
        return a, b, slack * a + underflow_slack(a, live), slack * b + underflow_slack(b, live)

    def delta(self, eps, upper=True):
        eps = np.asarray(eps, dtype=float)
        e = self._eps
        inside = np.clip(eps, -e, e)
        # (c − e^{ε'/2})² / (c² − 1) = e^{ε'} expm1((ε−ε')/2)² / (e^ε − 1)
        with np.errstate(over="ignore", divide="ignore"):
            if e < 700:  # no factor can overflow: e^{ε'} expm1(·)² ≤ e^ε
                # exp, expm1 (squared) and expm1: ≤ 4 ulp each (the documented worst case
                # assumed) and three products: 24 ulp; the rounded argument x = (ε − ε')/2
                # moves expm1(x)² by ≤ 2x ulp more
                mid = np.exp(inside) * np.expm1((e - inside) / 2) ** 2 / math.expm1(e)
                err = (24 + np.abs(e - inside)) * _U
            else:  # in logs; a rounded log of size |x| errs by ≤ |x|·u, pad 8 u per unit of size
                half = (e - inside) / 2
                log_em1 = half + np.log(-np.expm1(-half))  # log expm1(half), no overflow
                log_mid = inside + 2 * log_em1 - (e + math.log(-math.expm1(-e)))
                mid = np.exp(log_mid)
                err = 8 * _U * (2 + np.abs(inside) + 2 * np.abs(log_em1) + e + np.abs(log_mid))
                err = np.where(np.isfinite(log_mid), err, 0.0)  # mid = 0 exactly (ε' = ε)
            out = np.where(eps >= e, 0.0, np.where(eps <= -e, -np.expm1(eps), mid))
        out = np.minimum(out * (1 + err), 1.0) if upper else out * np.maximum(1 - err, 0.0)
        return float(out) if out.ndim == 0 else out

    def reverse(self):
        return self  # symmetric under the reflection x ↦ ε − x (and so is the set of witnesses)

    def key(self):
        return ("logistic", self._eps)

    @property
    def witnesses(self):
        # only where the two-outcome pair has float logs: e^ε − 1 finite (ε ≤ 709) and
        # e^t − 1, e^{ε−t} − 1 above 0 (no underflow); elsewhere no witness (no lower end from it)
        shares = (self._eps * f for f in _BR_SHARES)
        return tuple(((bounded_range_pair(self._eps, t), 1),) for t in shares
                     if self._eps <= 709.0 and math.expm1(t) > 0 and math.expm1(self._eps - t) > 0)


def bounded_range_pair(eps, t):
    """The two-outcome ε-BR pair with losses t and t − ε (0 < t < ε; Dong, Durfee &
    Rogers 2020, Lemma 3.2): P = (p, 1 − p), p = (e^ε − e^t)/(e^ε − 1), Q = (p e^{−t},
    (1 − p)e^{ε−t}). Attained by the exponential mechanism (∝ e^{εu/2}, sensitivity 1) on
    two candidates a, b: its law is Bernoulli(σ(ℓ)), ℓ = ε(u_a − u_b)/2, and a neighbour
    that moves u_a by +1 and u_b by −1 shifts ℓ by ε, so the losses are
    t = log σ(ℓ + ε)/σ(ℓ) at a and t − ε at b, and t covers (0, ε) as ℓ ranges over ℝ.
    Logs: log p = log expm1(ε − t) + t − log expm1(ε), log(1 − p) = log expm1(t) −
    log expm1(ε); expm1 and log err by ≤ 4 ulp each, so each log by ≤ 16 ulp of the
    sum of its terms' sizes (``log_err``)."""
    em1 = math.log(math.expm1(eps))
    a, b = math.log(math.expm1(eps - t)), math.log(math.expm1(t))
    log_p = np.array([a + t - em1, b - em1])
    log_q = np.array([a - em1, b + eps - t - em1])
    size = abs(a) + abs(b) + abs(em1) + eps + t
    return DiscretePair(log_p, log_q, name=f"bounded-range(eps={eps!r},t={t!r})", log_err=(16 * _U * size,) * 2,
                        tight=True)
