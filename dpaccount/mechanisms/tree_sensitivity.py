"""The L2 sensitivity of one binary tree under repeated, separated participation.

DP-FTRL's tree aggregation (Kairouz, McMahan, Song, Thakkar, Thakurta & Xu
2021, §4 and App. D) releases, over steps 1..T, every *completed* dyadic node
[k2ʲ + 1, (k + 1)2ʲ] ⊆ [1, T] — the sum of the gradients of its steps plus
N(0, z²) noise per coordinate. One record that takes part in the steps S
(|S| ≤ k, any two at least b apart: (k, b)-participation, Choquette-Choo,
McMahan, Rush & Thakurta 2023, "Multi-epoch matrix factorization", §2) moves
node v by a sum of |S ∩ v| clipped vectors of norm ≤ 1, so the vector of node
sums moves by at most

    Δ² = max_S Σ_v |S ∩ v|²,

and the bound is attained: the record's vectors all equal one unit vector
(the neighbouring dataset without it, the others' contributions fixed). The
release is then a Gaussian mechanism of sensitivity Δ exactly — its output
given the shift is N(shift, z²I), and every shift has norm ≤ Δ with one of
norm Δ (attained by that record in the steps of the worst S).

Δ² is computed exactly by dynamic programming over the tree: a node of s
steps holds a table g[c, a, a′], the largest Σ |S ∩ v|² over the completed
nodes v inside it with c participations whose first is at least a steps from
its left end and last at least a′ from its right end (−∞ where no such S
exists; the empty S satisfies every demand). A parent joins its halves:
c participations split c₁ + c₂, and when both are non-empty the last of
the left is r or more from the middle and the first of the right b − 1 − r or
more (their distance r + l + 1 ≥ b; since g falls in a and a′, the best pair
has r + l = b − 1 exactly, so a max over r alone is exact), plus c² when the
parent is completed. Demands beyond b − 1 never arise, and a node of s < b
steps needs them only below s, so its table has min(b, s)² cells per c. The
full subtrees of one level are equal, so the work is one join per level plus
the partial nodes on the path to T. A node of s steps holds at most
⌊(s − 1)/b⌋ + 1 participations, so the splits are joined only where both
halves fit them: below size b nothing is joined but single steps, and the
work is Σ_j (feasible splits)·min(b, 2ʲ)³ additions (``_join_work``; 2.3·10⁹
for T = 2052, k = 6, b = 342).
"""
import math

import numpy as np

_WORK_CAP = 3e9  # additions (``_join_work``); beyond it the call refuses: a clear cap, not a slow hang
_BLOCK = 2 ** 22  # floats per block of the max-plus product (32 MB)


def _shift(table, demand):
    """table[c, d, :] for the demands d in ``demand`` (an int array): −∞ where d is
    beyond the table's range (a node of s < b steps: no offset reaches s), 0 for c = 0."""
    g = table.shape[1]
    out = np.where((demand < g)[None, :, None], table[:, np.minimum(demand, g - 1)], -np.inf)
    out[0] = 0.0
    return out


def _join(left, right, size, b, counted):
    """The table of a node of 2·``size`` steps from its halves' tables."""
    kmax = left.shape[0] - 1
    g = min(b, 2 * size)
    idx = np.arange(g)
    # one side empty: the other's demand on the far side shrinks by the empty half's size
    only_left = _shift(left.transpose(0, 2, 1), np.maximum(idx - size, 0)).transpose(0, 2, 1)
    only_left = _shift(only_left, idx)  # the left end's demand as it is
    only_right = _shift(right, np.maximum(idx - size, 0))
    only_right = _shift(only_right.transpose(0, 2, 1), idx).transpose(0, 2, 1)
    out = np.maximum(only_left, only_right)
    out[0] = 0.0
    # both non-empty: L[c1, a, r] + R[c2, b − 1 − r, a′], maximised over r
    r = np.arange(min(b, size))
    lt = _shift(left, idx)[:, :, :len(r)]                             # (c, a, r)
    rt = _shift(right.transpose(0, 2, 1), idx).transpose(0, 2, 1)     # (c, l, a′)
    rt = _shift(rt, b - 1 - r)                                        # (c, r, a′)
    fit = (size - 1) // b + 1  # the most participations a half holds (others are −∞ rows)
    for c in range(2, min(kmax, 2 * fit) + 1):  # the splits c1 + c2 = c at once: (c1, a, r) + (c1, r, a′)
        c1 = np.arange(max(1, c - fit), min(c - 1, fit) + 1)
        a_r, r_b = lt[c1], rt[c - c1]
        rows = max(1, _BLOCK // (len(c1) * len(r) * g))  # rows of a per block: memory ≤ _BLOCK floats
        for lo in range(0, g, rows):
            best = np.max(a_r[:, lo:lo + rows, :, None] + r_b[:, None, :, :], axis=(0, 2))
            out[c, lo:lo + rows] = np.maximum(out[c, lo:lo + rows], best)
    if counted:
        out += (np.arange(kmax + 1, dtype=float) ** 2)[:, None, None]
    return out


def _join_work(size, kmax, b):
    """The additions of ``_join`` of two halves of ``size`` steps (its loops' sizes)."""
    fit, g, r = (size - 1) // b + 1, min(b, 2 * size), min(b, size)
    return sum(min(c - 1, fit) - max(1, c - fit) + 1 for c in range(2, min(kmax, 2 * fit) + 1)) * g * g * r


def tree_sensitivity_squared(steps, participations, min_separation=1):
    """Δ² = max over S ⊆ [1, T], |S| ≤ k, gaps ≥ b of Σ_v |S ∩ v|² over the completed
    dyadic nodes v of a T-step tree (module docstring). An integer, exact."""
    T, b = int(steps), int(min_separation)
    k = min(int(participations), (T - 1) // b + 1)  # more than this many never fit
    levels = max(T - 1, 0).bit_length()
    work = 2 * sum(_join_work(2 ** j, k, b) for j in range(levels))  # the full and the partial joins
    if work > _WORK_CAP:
        raise ValueError(f"the tree's sensitivity for steps={steps!r}, participations={participations!r}, "
                         f"min_separation={min_separation!r} needs ~{work:.1e} operations (cap {_WORK_CAP:.0e}): "
                         f"a smaller min_separation gives a looser bound that is still valid")
    leaf = np.full((k + 1, 1, 1), -np.inf)
    leaf[0] = 0.0
    if k >= 1:
        leaf[1] = 1.0  # the leaf's own node
    full = [leaf]  # full[j]: a complete subtree of 2ʲ steps
    for j in range(levels):
        full.append(_join(full[j], full[j], 2 ** j, b, counted=True))

    def node(j, valid):
        """The table of a node of 2ʲ steps whose first ``valid`` steps are ≤ T."""
        if valid >= 2 ** j:
            return full[j]
        if valid == 0:  # no step of it is in [1, T]: only the empty S, whatever the demand
            out = np.full((k + 1,) + full[j].shape[1:], -np.inf)
            out[0] = 0.0
            return out
        half = 2 ** (j - 1)
        return _join(node(j - 1, min(valid, half)), node(j - 1, max(valid - half, 0)), half, b,
                     counted=False)  # a partial node is never released

    root = node(levels, T)
    return int(round(float(np.max(root[:, 0, 0]))))


def tree_sensitivity(steps, participations, min_separation=1):
    """Δ = √Δ² (``tree_sensitivity_squared``), rounded up."""
    return sqrt_up(tree_sensitivity_squared(steps, participations, min_separation))


def sqrt_up(n):
    """√n for a whole number n, rounded up: exact where n is a square, else one ulp above the
    nearest float (a sensitivity must not round down)."""
    root = math.isqrt(n)
    return float(root) if root * root == n else math.nextafter(math.sqrt(n), math.inf)
