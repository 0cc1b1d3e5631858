"""Whether a band's tilted grid would resolve a query, before it is composed.

A query that the base grid leaves noisy is read from the tilted grid of its
band (``step_profile.py``), and from a grid tilted at its own answer where
that one is still too noisy. At fine accuracies the band's grid often is:
its transform runs at a tilt θ below the band centre's saddle point
(``compose._read_tilt``: narrower windows), so the bins near the top of a
wide band keep nearly the untilted noise. Building it then only costs a
composition. ``band_noise`` predicts its noise bound at the query, and a
query predicted to stay noisy goes to its own tilt at once.

The model (``compose.compose``, ``transform.untilt``): bin j of a grid
tilted at θ carries the noise bound B·e^{C − θhj}, C = K(θ) the composed
log-MGF at θ and B the transform's per-bin bound (the untilted grid's B
taken for it), capped at the untilted grid's B where the two overlap; so
the noise above ε (``PLDGrid.noise_effect``) is about

    N(ε) = B·(j_c − j₀)₊ + B·e^{min(K(θ) − θhj₀, 0)}/(1 − e^{−θh}),

j₀ the first bin above ε and j_c = K(θ)/(θh) where the cap ends. The
prediction only chooses which grids are composed: every grid consulted is
certified on its own, so no answer depends on it being right.
"""
import math

import numpy as np

from ..grids.chernoff import log_mgf
from ..grids.compose import _read_tilt, saddle_tilt


def band_noise(items, proxy, base, tilt, eps):
    """The predicted noise bound at each ε (an array) of the grid of ``items``
    (its single-step grids; ``proxy``: coarser ones the searches start on, or
    None) tilted at grid index ``tilt``, combined with ``base`` (the untilted
    grid at the first tail). The searches are those the tilted grid's
    composition makes (``accountant._composed``, ``compose._tilted``), whose
    λ and moments the log-MGFs keep: where the grid is then composed, they
    cost nothing twice."""
    step = base.step
    lam = saddle_tilt(items, tilt * step, proxy)
    rough = log_mgf(proxy) if proxy else log_mgf(items)
    theta = _read_tilt(rough, lam, (base.offset + len(base.probs) - 1) * step)
    if not theta > 0:
        return np.full(np.shape(eps), base.noise * len(base.probs))
    cgf = rough(theta)
    first = np.floor(np.asarray(eps, dtype=float) / step) + 1
    capped = np.maximum(cgf / (theta * step) - first, 0.0)
    with np.errstate(over="ignore"):
        decay = np.exp(np.minimum(cgf - theta * step * first, 0.0))
    return base.noise * (capped + decay / -math.expm1(-theta * step))
