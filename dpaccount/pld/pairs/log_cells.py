"""Cell masses of continuous laws from their log distribution functions, with error bounds.

A cell (x_i, x_{i+1}] of a law with distribution function F has mass
F(x_{i+1}) − F(x_i). Below the median it is computed from l = log F at
both ends as e^{l_{i+1}}·(1 − e^{l_i − l_{i+1}}) (``expm1``), above it the
same from log(1 − F), mirrored: never a difference of two numbers close to
1. That does not make a cell accurate to a few ulps of itself, though: each
l is a special function's result (``log_ndtr``; a scipy law's ``logcdf`` for
``monotone_loss.MonotoneLossPair``) and errs by some η_i *absolute*, a few ulps
of |l| (up to 745), so each end's value e^l errs by η_i·F(x_i), and a narrow
cell inherits both ends' errors in full:

    |computed − exact| ≤ η_i F(x_i) + η_{i+1} F(x_{i+1}) + 16u·cell (+ 8 subnormal
    spacings per end below the normal range: it errs by spacings, not ulps of itself),

(computed cell = e^{l̃_{i+1}} − e^{l̃_i} up to its own rounding: the last
term, exp and expm1 ≤ 4 ulp each (docs/portability.md), the difference of
the logs ≤ ½ ulp of itself, which moves 1 − e^d by ≤ ½ ulp of it since
|d|e^d ≤ 1 − e^d, and the product ½ ulp: 9u, taken as 16u). Relative to
the cell that is (η_i + η_{i+1})·F/cell: a cell of width w at a tail of
slope λ = F'/F carries ≈ 2η/(λw) of itself, far above the few ulps the
grids would otherwise assume, and the pessimistic and optimistic grids pad
by these bounds (``pld/grids/discretise.py``, ``pld/grids/discretise_optimistic.py``).
"""
import math

import numpy as np

from ...ndtr import log_ndtr
from ...numerics import ULP_OF_ONE as _U

_SUBNORMAL = math.ulp(0.0)  # the subnormal spacing
_NORMAL = np.finfo(float).tiny  # the least normal float
_LARGEST = np.finfo(float).max  # the largest float (``_nan_to_zero``: nan_to_num's ±∞)
# log_ndtr(x), x ≤ 0 (``dpaccount/ndtr.py``): ≤ 4u·|log Φ| on any IEEE machine, taken as 16
# (4x room; the rest covers the second-order terms:
# η < 16·745u < 3e-12, so e^η − 1 ≤ η(1 + 3e-12), and the rounding of the bounds themselves)
LOG_NDTR_ULPS = 16


def log_cells(logs, eta=None, out=None, descending=False):
    """Masses between consecutive points of a non-decreasing F given as ``logs``
    = log F at the points (non-decreasing; −inf where F = 0), as in the module
    docstring. ``descending``: the points in the other order (``logs`` non-increasing),
    cell i still the mass between points i and i + 1, taken from its larger end: the
    same floats as the cells of the reversed ``logs``, without reversed strides. With
    ``eta`` (bounds on each log's absolute error, any value where
    F = 0), also (bounds on each cell's error, η·F at each point). (A contiguous
    ``logs``: numpy's exp may round a strided array otherwise, and the mirrored
    cells of ``pld/grids/cells.py`` rely on equal inputs giving equal cells.)
    ``out``: the array (with ``eta``, the two arrays) to write the cells (and their
    bounds) into, of any stride."""
    f = np.exp(logs)
    n = len(f) - 1
    cells, err = (np.empty(n), None if eta is None else np.empty(n)) if out is None else \
        ((out, None) if eta is None else out)
    # each cell's ends: the larger F (``big``) and the smaller; ``edge``: the point that is only ever a smaller end
    big, small, edge = (slice(None, -1), slice(1, None), -1) if descending else (slice(1, None), slice(None, -1), 0)
    with np.errstate(invalid="ignore"):
        work = np.subtract(logs[small], logs[big])  # contiguous, for expm1
        np.negative(np.expm1(work, out=work), out=work)
        np.multiply(f[big], work, out=cells)
        if eta is None:
            return cells
        # η·F, + 8 subnormal spacings for an e^l below the normal range (exp ≤ 4 ulp, its
        # product with 1 − e^{l_i − l_{i+1}} ½); F = 0 exactly at −inf (η = ∞ there). Where every
        # F but the edge's is normal (the runs of ``normal_cells`` end at −∞), only the edge is
        # looked at: the same floats, without the masks' passes
        if n and f[big].min() >= _NORMAL:  # (NaN fails the test)
            first, at_first = float(f[edge]), float(logs[edge])
            ends = np.multiply(eta, f, out=f)
            if not first > 0:
                ends[edge] = 0.0
            if first < _NORMAL and at_first > -np.inf:
                ends[edge] += 8 * _SUBNORMAL
        else:
            unresolved = np.logical_not(f > 0)
            subnormal = (f < _NORMAL) & (logs > -np.inf)
            ends = np.multiply(eta, f, out=f)
            ends[unresolved] = 0.0
            np.add(ends, 8 * _SUBNORMAL, out=ends, where=subnormal)
    np.add(ends[:-1], ends[1:], out=err)
    err += np.multiply(np.abs(cells, out=work), 16 * _U, out=work)
    return cells, err, ends


def normal_cells(z, sizes=None, z_err=None):
    """Φ-masses of the cells (−∞, z₀], (z₀, z₁], …, (z_{n−1}, ∞) of a
    non-decreasing z (``log_cells``): cells below 0 from log Φ(z), cells above 0
    from log Φ(−z), one special-function call per point; a cell straddling 0 is
    1 − Φ(lo) − Φ(−hi). With ``sizes``, z is several runs (each non-decreasing)
    and their cells come concatenated: long runs one by one, on slices
    (``_run_cells``), many short ones together (``_stacked_cells``); the cells are
    the same floats either way.

    With ``z_err`` (bounds on each z's absolute error), also bounds on each
    cell's absolute error (module docstring): log Φ errs by ``LOG_NDTR_ULPS``
    ulps of itself, and by its slope φ/Φ times z's error; that slope is ≤ |z| + 1
    for z ≤ 0 (Birnbaum 1942: (1 − Φ(t))/φ(t) > 2/(t + √(t² + 4)) ≥ 1/(t + 1), t ≥ 0),
    taken as |z| + 2 for the distance moved."""
    z = np.asarray(z, dtype=float)
    sizes = np.array([len(z)] if sizes is None else sizes, dtype=np.int64)
    slack = None
    if z_err is not None:
        slack = np.abs(z)
        slack += 2
        slack *= z_err
    if stacks(len(z), len(sizes)):
        out, err = _stacked_cells(z, sizes, slack)
    elif len(sizes) == 1:
        out, err = _run_cells(z, slack)
    else:
        cuts = np.concatenate(([0], sizes.cumsum()))
        out, err = np.empty(len(z) + len(sizes)), None if slack is None else np.empty(len(z) + len(sizes))
        for i, (a, b) in enumerate(zip(cuts[:-1], cuts[1:])):  # run i's cells: a + i … b + i
            _run_cells(z[a:b], None if slack is None else slack[a:b],
                       out[a + i:b + i + 1], None if err is None else err[a + i:b + i + 1])
    _nan_to_zero(out)
    return out if err is None else (out, _nan_to_zero(err))


def _nan_to_zero(x):
    """``np.nan_to_num(x, nan=0.0)`` in place: NaN to 0 (and ±∞ to ±the largest float), its
    passes over the values that are not finite only."""
    finite = np.isfinite(x)
    bad = np.logical_not(finite, out=finite).nonzero()[0]  # (x is 1-d)
    if len(bad):  # each one NaN or ±∞ (nan_to_num's own checks cost more than these few values)
        v = x[bad]
        x[bad] = np.where(np.isnan(v), 0.0, np.copysign(_LARGEST, v))
    return x


_LONG = 1024  # runs this long on average go one by one: the per-run calls are then a small cost


def stacks(points, runs):
    """Whether ``normal_cells`` takes ``runs`` runs of ``points`` in all together (short runs)."""
    return runs > 1 and points < _LONG * runs


def _run_cells(z, slack, out=None, err=None):
    """(cells, errors or None) of one non-decreasing run, written into ``out`` and ``err``
    where given (the errors where ``slack`` is given): with p = (−∞, z, +∞), the cell (p_i, p_{i+1}] from
    log Φ at both ends where p_{i+1} ≤ 0, from log Φ(−·) at both ends where p_i ≥ 0 (that
    one where both hold: z has a 0), else (p_i < 0 < p_{i+1}, one such cell at most)
    1 − Φ(p_i) − Φ(−p_{i+1}). ``slack``: z's error times the slope bound."""
    n = len(z)
    out = np.empty(n + 1) if out is None else out
    err = np.empty(n + 1) if err is None and slack is not None else err
    k, j = int(np.searchsorted(z, 0.0, side="right")), int(np.searchsorted(z, 0.0, side="left"))
    # log Φ(p) at p_0 … p_k (≤ 0, non-decreasing); log Φ(−p) at p_{j+1} … p_{n+1} (p ≥ 0, non-increasing)
    points = np.empty(n + 2 + k - j)  # (−∞, z_0 … z_{k−1}, −z_j … −z_{n−1}, −∞)
    points[0] = points[-1] = -np.inf
    points[1:k + 1] = z[:k]
    np.negative(z[j:], out=points[k + 1:-1])
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        logs = log_ndtr(points)
        lp, lm = logs[:k + 1], logs[k + 1:]
        if slack is None:
            log_cells(lp, out=out[:k])
            log_cells(lm, out=out[j + 1:], descending=True)
        else:
            eta = np.abs(logs, out=points)
            eta *= LOG_NDTR_ULPS * _U  # ``_eta``
            eta[1:k + 1] += slack[:k]
            eta[k + 1:-1] += slack[j:]
            _, _, end_p = log_cells(lp, eta[:k + 1], (out[:k], err[:k]))
            _, _, end_m = log_cells(lm, eta[k + 1:], (out[j + 1:], err[j + 1:]), descending=True)
        if j == k:  # p_k < 0 < p_{k+1}
            straddle, straddle_err = _straddle(lp[-1:], lm[:1], None if err is None else (end_p[-1:], end_m[:1]))
            out[k] = straddle[0]
            if err is not None:
                err[k] = straddle_err[0]
    return out, err


def _stacked_cells(z, sizes, slack):
    """(cells, errors or None) of many runs at once (``_run_cells`` of each, concatenated)."""
    # each run between −∞ and +∞: cells of consecutive entries, then the cells across runs dropped
    ends = (sizes + 2).cumsum() - 1
    padded = np.full(len(z) + 2 * len(sizes), -np.inf)
    padded[ends] = np.inf
    at = np.arange(len(z)) + 2 * np.repeat(np.arange(len(sizes)), sizes) + 1
    padded[at] = z
    neg, pos = (padded <= 0).nonzero()[0], (padded >= 0).nonzero()[0]
    out = np.empty(len(padded) - 1)
    err = np.empty(len(padded) - 1) if slack is not None else None
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # consecutive z ≤ 0 (z ≥ 0) of one run are adjacent: those cells lie left (right) of 0;
        # a pair that is not adjacent spans a cell written below (straddling, or across runs)
        # log Φ(z), then log Φ(−z) (non-increasing): one call for both
        lp = log_ndtr(np.concatenate((padded[neg], -padded[pos])))
        lp, lm = lp[:len(neg)], lp[len(neg):]
        mid = ((padded[:-1] < 0) & (padded[1:] > 0)).nonzero()[0]  # lo < 0 < hi
        lo, hi = neg.searchsorted(mid), pos.searchsorted(mid + 1)
        if err is None:
            out[neg[:-1]] = log_cells(lp)
            out[pos[:-1]] = log_cells(lm, descending=True)
            straddle, _ = _straddle(lp[lo], lm[hi], None)
        else:
            padded_slack = np.zeros(len(padded))
            padded_slack[at] = slack
            out[neg[:-1]], err[neg[:-1]], end_p = log_cells(lp, _eta(lp, padded_slack[neg]))
            out[pos[:-1]], err[pos[:-1]], end_m = log_cells(lm, _eta(lm, padded_slack[pos]), descending=True)
            straddle, err[mid] = _straddle(lp[lo], lm[hi], (end_p[lo], end_m[hi]))
        out[mid] = straddle  # last: the neg and pos runs wrote across these cells
    inside = np.ones(len(out), dtype=bool)  # the cells within a run
    inside[ends[:-1]] = False
    return out[inside], None if err is None else err[inside]


def _eta(logs, slack):
    """Bounds on the absolute errors of computed log Φ's: ``LOG_NDTR_ULPS`` ulps, and the slack."""
    return LOG_NDTR_ULPS * _U * np.abs(logs) + slack


def _straddle(lp, lm, ends):
    """(1 − e^{log(Φ(lo) + Φ(−hi))} from arrays lp = log Φ(lo), lm = log Φ(−hi), and with
    ``ends`` (the ends' error terms, ``log_cells``) bounds on its errors, else None)."""
    straddle = -np.expm1(np.logaddexp(lp, lm))
    if ends is None:
        return straddle, None
    # the ends' errors pass on as they are; logaddexp (numpy: the larger argument + log1p(exp(−|x − y|)),
    # ≤ 4 ulp per call) errs by ≤ 8u(|x| + |y|) absolute (the finite ones: at x = −∞ it is y),
    # which 1 − e^{la} passes on times e^{la} ≤ 1; expm1 ≤ 4 ulp of the cell
    size = np.where(np.isfinite(lp), np.abs(lp), 0.0) + np.where(np.isfinite(lm), np.abs(lm), 0.0)
    return straddle, ends[0] + ends[1] + 8 * _U * size + 4 * _U * straddle
