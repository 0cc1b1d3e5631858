"""The window-tail tiers of a profile's composed grids.

A composed grid keeps the composition's law inside a window whose tails (the mass
it moves to +∞) is one of ``TIERS``; a δ query reads the first tier ≤ 1e-6·δ, so
what the window drops changes δ by at most a millionth of it, and one grid serves
every δ of its tier (``step_profile.py``).
"""
import numpy as np

TIERS = (1e-30, 1e-100, 1e-200, 1e-306)


def tier_of(delta):
    """Index of the first window tail ≤ 1e-6·δ (the last tier below that)."""
    delta = np.asarray(delta, dtype=float)
    out = np.full(delta.shape, len(TIERS) - 1)
    for i in range(len(TIERS) - 1, -1, -1):
        out = np.where(TIERS[i] <= 1e-6 * delta, i, out)
    return out
