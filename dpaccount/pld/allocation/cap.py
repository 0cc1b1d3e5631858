"""One step of the base caps an epoch of random allocation.

Let (P, Q) dominate one step in the remove direction. The epoch's pair is
P_t = (1/t) Σ_i P⁽ⁱ⁾ against Q^t, P⁽ⁱ⁾ = Q ⊗ … ⊗ P (step i) ⊗ … ⊗ Q
(``epoch.py``). Appending t − 1 independent draws of Q is one Markov kernel
applied to both laws, and dropping them undoes it, so H_α(P⁽ⁱ⁾ ‖ Q^t) =
H_α(P ‖ Q) and H_α(Q^t ‖ P⁽ⁱ⁾) = H_α(Q ‖ P) for every α ≥ 0. The hockey-stick
divergence is jointly convex, so

    H_α(P_t ‖ Q^t) ≤ (1/t) Σ_i H_α(P⁽ⁱ⁾ ‖ Q^t) = H_α(P ‖ Q),

and likewise in the other order: (P, Q) itself dominates the epoch in both
orders, for every α (a record that takes part in exactly one step is never
worse off than one that takes part in that step for sure). A dominating pair
per epoch composes (Zhu, Dong & Wang 2022, Thm 10), so each epoch may carry
either pair soundly, also inside a composition. Their pointwise minimum is in
general no pair's curve (not convex in e^ε), so it is not taken; the epoch
carries the base pair as its upper pair where that is at most the epoch's
discretised upper pair at every checked ε in both orders. That happens where
the lattice's error exceeds what the allocation gains: a base whose loss is tiny
(a Gaussian with σ = 10⁶ over 10³ steps: the epoch's δ(0) was 4.6e-5, the one
step's 4.0e-7). The choice moves tightness only, never soundness; the epoch's
lower pair (a lower bound on the epoch) stays as it is.
"""
import numpy as np

from ..grids.discretise import loss_range
from .sum_law import TAIL

_CHECKS = 64  # ε points per order at which the two curves are compared


def _checked_eps(pair):
    """0 and ``_CHECKS`` points up to the base pair's loss at its 1 − ``TAIL`` quantile
    (beyond, its δ is below ``TAIL``), and one beyond."""
    top = min(loss_range(pair, TAIL)[1], 700.0)
    if not top > 0.0:
        return np.array([0.0])
    return np.append(np.linspace(0.0, top, _CHECKS), 2.0 * top)


def one_step_is_lower(pair, upper):
    """True where ``pair``'s δ(ε) is at most ``upper``'s at each checked ε (``_checked_eps``),
    in both orders: ``pair`` then replaces ``upper`` as the epoch's upper pair (module
    docstring). Both curves as bounds from above (each pair's ``delta``)."""
    for mine, theirs in ((pair, upper), (pair.reverse(), upper.reverse())):
        eps = _checked_eps(mine)
        if not np.all(np.asarray(mine.delta(eps)) <= np.asarray(theirs.delta(eps))):
            return False
    return True
