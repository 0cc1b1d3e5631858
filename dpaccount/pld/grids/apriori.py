"""A priori grid choice from the error analysis of Koskela & Honkela (2021).

Before any transform is computed, the window and the step of a PLD grid can
be chosen so that the error of δ(ε) is provably below a target η:

* **Window** (their Thm 7/8 and Remark 12). The composed loss S leaves
  [a, b] with probability ≤ η when, for some λ > 0,
  b ≥ (α⁺(λ) + log 1/η)/λ and a ≤ −(α⁻(λ) + log 1/η)/λ, with the cumulant
  generating functions α⁺(λ) = log E e^{λS}, α⁻(λ) = log E e^{−λS}. Our
  compositions never wrap that mass around: it is counted at +∞ (a grid
  that adds ≤ η to every δ), so this is the whole "periodisation" term.
* **Step** (Thm 9 and Remark 10, eq. 5.8). Rounding each of the K losses
  up to a grid of step h raises δ(ε) by at most
  K·h·P(S ≥ ε) ≤ K·h·min_λ exp(α⁺(λ) − λε), so
  h = η / (K·min_λ exp(α⁺(λ) − λε)) keeps it below η. Pairs on a lattice
  (randomized response) are not rounded and do not count in K; the
  Gaussian pairs merge into one exact pair first (one rounding).

The cumulant generating functions come from a coarse pessimistic pilot grid
(``pld/grids/discretise.py``). That is sound: the pilot's pair dominates every finer
Connect-the-Dots grid and the exact pair, and α⁺(λ) = log E_Q[(dP/dQ)^{1+λ}]
and α⁻(λ) = log E_Q[(dP/dQ)^{1−λ}] (λ ≥ 1) are f-divergences with convex f,
which can only grow under domination (data processing). The Connect-the-Dots
grid is the smallest pessimistic grid on its points, so Thm 9, proved for
rounding up, bounds it too.

The bounds are first order in h, the true error of Connect-the-Dots second
order: the step they ask for is typically 10²–10⁴ times finer than the one
``plan_step`` takes for the same accuracy (whose answer is certified a
posteriori instead). The default accountant therefore does not use them;
``Mechanism.apriori_plan`` reports them.
"""
import math
from typing import NamedTuple

from ...errors import GridTooLarge
from .accountant import plan_step
from ..pairs.composition import merge_gaussians
from .chernoff import minimise_over_lambda, quantile
from .log_mgf import log_mgf
from .discretise import loss_range, pair_to_grid


class GridPlan(NamedTuple):
    """A grid chosen a priori: step h, window [lo, hi], its number of points,
    and the two error terms it guarantees for δ(ε) (each ≤ η)."""

    step: float
    lo: float
    hi: float
    points: int
    window_error: float
    discretisation_error: float


def apriori_plan(pairs, eps, eta, pilot_rho=0.1):
    """The grid of Koskela & Honkela (Remark 10 and 12) for one direction
    (a tuple of (pair, count)) such that the pessimistic δ(ε) on it exceeds
    the exact value by at most 2η (η from the window, η from the step)."""
    pairs = merge_gaussians(pairs)
    total_k = sum(k for _, k in pairs)
    lattices = {p.lattice for p, _ in pairs if p.lattice is not None}
    # pairs on the one common lattice stay exact; with several lattices all are rounded
    rounded_k = sum(k for p, k in pairs if p.lattice is None or len(lattices) > 1)
    pilot = plan_step(pairs, pilot_rho, eta)
    items = []
    for p, k in pairs:
        lo, hi = loss_range(p, eta / total_k)
        items.append((pair_to_grid(p, pilot, math.floor(lo / pilot), math.ceil(hi / pilot)), k))
    mgf, log_eta = log_mgf(items), math.log(eta)
    hi = quantile(mgf, log_eta, 1.0)[0]
    lo = -quantile(mgf, log_eta, -1.0)[0]
    if rounded_k == 0:  # every pair sits on its lattice: nothing is rounded
        step, disc = pilot, 0.0
    else:
        tail = math.exp(min(minimise_over_lambda(lambda lam: mgf(lam) - lam * eps), 0.0))  # ≥ P(S ≥ ε)
        # (1 − 1e-12): the division's rounding must not lift the error term above η
        step = min(pilot, eta / (rounded_k * tail) * (1 - 1e-12)) if tail > 0 else pilot
        if len(lattices) == 1:  # a divisor of the lattice, so its pairs stay exact
            g = lattices.pop()
            step = g / math.ceil(g / step)
        disc = rounded_k * step * tail
    points = float(hi - lo) / step + 1  # a Python float: inf on overflow, no warning
    if not math.isfinite(points):  # η so small that the step underflows
        raise GridTooLarge(f"the a priori grid for eta={eta!r} needs step {step!r} over a window of width "
                           f"{hi - lo:.3g}: more points than the float range counts")
    points = int(math.ceil(points))
    return GridPlan(step, lo, hi, points, eta, disc)
