"""Converters from an exact hockey-stick curve δ(ε) to ε(δ).

``hockey_stick_to_epsilon(curve, delta)``: the smallest ε ≥ 0 with
curve(ε) ≤ δ, for a non-increasing curve (every hockey-stick curve is:
H_{e^ε}(P||Q) falls as ε grows). Bisection keeps the invariant
curve(hi) ≤ δ, so the answer errs upwards; ∞ when the mass at +∞ alone
exceeds δ (or no ε up to 1e6 meets δ) (curve(ε) ≥ P(L = ∞) for all ε).
"""
import math


def hockey_stick_to_epsilon(curve, delta, p_inf=0.0, upper=True, iterations=200):
    """Smallest ε ≥ 0 with curve(ε) ≤ delta: the upper end of the final
    bisection bracket (upper=False: its lower end)."""
    if p_inf > delta:
        return math.inf  # no finite ε: the exact answer is ∞ too (at p_inf = δ the search below decides)
    if curve(0.0) <= delta:
        return 0.0
    lo, hi = 0.0, 1.0
    while curve(hi) > delta:
        lo, hi = hi, 2.0 * hi
        if hi > 1e6:
            return math.inf if upper else lo
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        if curve(mid) > delta:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 4e-16 * hi:
            break
    return hi if upper else lo

