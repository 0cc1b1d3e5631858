"""How far an optimistic grid's points may be lowered, and how a cell's two ends
share the lowering (``discretise_optimistic.py``: the lower grid's chords; the
least-lowering split is also random allocation's minorant,
``pld/allocation/minorant.py``). Policies of tightness: every split that keeps
c_L/ℓ + c_R/r ≥ 1 gives a certified lower grid.
"""
import numpy as np

from ...numerics import ULP_OF_ONE as _U

_KEEP = 0.875  # of the next point's δ, a point keeps above it when short of room (``point_room``)


def point_room(eps, x, e0, g0, q_ninf, low, top):
    """How far each point may be lowered before it passes below the tangent
    T at 0 (where it would leave the hull off the grid: a crossing whose kink
    moves down a whole step), or, above 0, below ``_KEEP`` of the next
    point's δ (``top``: P(L = ∞) after the last). A point lowered to 0 takes
    the convex curve to 0 for good, every loss above it lost (an atom off
    the grid in the cell below, with rarer ones above: a discrete
    Gaussian's); kept this way the other end of the cell takes the lowering
    (it has room: its δ exceeds the next one's by the cell's ℓ). Only a
    policy: nothing rests on it."""
    to_t = np.where(low, e0, g0 + np.expm1(eps)) - q_ninf * x
    to_zero = np.where(low, e0 - np.expm1(eps), g0 - _KEEP * np.append(g0[1:], top))
    return np.maximum(np.minimum(to_t, to_zero), 0.0)


def end_requests(low_part, high_part, tri, pad, room_l, room_r, least=False):
    """Each segment's lowering of its left and right end, (c_L, c_R), with
    c_L/ℓ + c_R/r ≥ 1 for the cell's ℓ = A − x_j B and r = x_{j+1}B − A
    (the line through the lowered ends then passes below the apex of the
    triangle under δ): the padded triangle height ``tri`` at both ends
    (tri/ℓ + tri/r = 1 exactly, padded up) where both ends have that room;
    else the end short of room is lowered by its room only and the other
    takes c = (its part + pad)·(1 − room/(the other part + pad)), rounded
    up: ℓ and r are inflated by their rounding (``pad``), which can only
    raise c. Where neither way fits, the triangle height at both ends.

    ``least``: each segment takes the way that lowers its ends least beyond
    their rooms instead, an end pinned at min(room, its part + pad) whether
    or not that is below the triangle height; on ties (no end beyond its room)
    the triangle height at both ends, the least lowering (pinning there
    lowered a pinned end by its whole room: DP-SGD's σ = 1.1 lost 0.11 % of
    its loss variance, its interval a refinement round), then the left end.
    Lowering beyond a room is what costs first order (a mean-loss bias of
    that much); within, the cost is second order. The case it is for: an
    edge cell holding a whole near-atom (a Poisson pair's log(1 − q), q
    small), where an end's room equals the other end's part up to the
    margins, so the rest overshoots it by a hair, and the triangle height at
    both ends drags the curve a whole step's worth below T (or 0)."""
    if least:
        return least_over(low_part, high_part, tri, pad, room_l, room_r)
    with np.errstate(divide="ignore", invalid="ignore"):
        right_rest = (high_part + pad) * np.maximum(1.0 - room_l / (low_part + pad), 0.0) * (1 + 8 * _U)
        left_rest = (low_part + pad) * np.maximum(1.0 - room_r / (high_part + pad), 0.0) * (1 + 8 * _U)
    right_rest = np.nan_to_num(right_rest, nan=0.0)
    left_rest = np.nan_to_num(left_rest, nan=0.0)
    fits = (room_l >= tri) & (room_r >= tri)
    pin_left = ~fits & (room_l < tri) & (right_rest <= room_r)
    pin_right = ~fits & ~pin_left & (room_r < tri) & (left_rest <= room_l)
    left = np.where(pin_left, np.minimum(room_l, tri), np.where(pin_right, left_rest, tri))
    right = np.where(pin_left, right_rest, np.where(pin_right, np.minimum(room_r, tri), tri))
    return left, right


def least_over(low_part, high_part, tri, pad, room_l, room_r):
    """``end_requests(…, least=True)``: of the three ways (the triangle height at
    both ends; the left end pinned at c_L = min(room_l, ℓ + pad) and the right
    end at the rest; the mirror image), the one that exceeds the rooms least.
    A pinned end's rest (r + pad)·(1 − c_L/(ℓ + pad)), rounded up, keeps
    c_L/ℓ + c_R/r ≥ 1 whatever c_L ≥ 0 (ℓ ≤ ℓ + pad, r ≤ r + pad)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        pin_l = np.minimum(room_l, low_part + pad)
        pin_r = np.minimum(room_r, high_part + pad)
        right_rest = np.nan_to_num((high_part + pad) * np.maximum(1.0 - pin_l / (low_part + pad), 0.0),
                                   nan=0.0) * (1 + 8 * _U)
        left_rest = np.nan_to_num((low_part + pad) * np.maximum(1.0 - pin_r / (high_part + pad), 0.0),
                                  nan=0.0) * (1 + 8 * _U)
    over = np.stack([np.maximum(tri - room_l, 0.0) + np.maximum(tri - room_r, 0.0),    # both
                     np.maximum(right_rest - room_r, 0.0),                              # pin left
                     np.maximum(left_rest - room_l, 0.0)])                              # pin right
    way = np.argmin(over, axis=0)  # ties: both (where it fits, the least lowering), then left
    left = np.choose(way, [tri, pin_l, left_rest])
    right = np.choose(way, [tri, right_rest, pin_r])
    return left, right
