"""The cell masses of many pairs on their grid points, and mirror twins.

A grid of pair i on the points lo_i·h, …, hi_i·h needs the P- and Q-masses
(A, B) of its cells (−∞, e₀], (e₀, e₁], …, (e_last, ∞); ``grid_cells``
gives them for many pairs at once, concatenated (n_i + 1 cells per pair),
from one ``stacked_masses`` call.

Mirror twins. A pair Y = X.reverse() = (Q, P) has loss −L, so where X has no
atom at a finite loss (``atomless``) Y's cell (e_{j−1}, e_j] holds X's
Q- and P-mass of the cell [−e_j, −e_{j−1}), which is X's cell (−e_j, −e_{j−1}]
up to a boundary of mass 0. The two directions of a subsampled Gaussian are
such twins (remove pair and add pair), on grids of one step: the cells of
the first direction computed are kept (``_CELLS``, per pair and step, 64 MB) and
the second direction's inner cells are read from them, mirrored, where they
cover its points. Its two end cells are computed (they would be sums of
X's cells otherwise). For the Gaussian family the mirrored cells are
bit-identical to computed ones (the formulas of a cell below 0 and of one
above 0 are mirror images, and the mixtures of the two Poisson directions
are), for any atomless pair equal up to the rounding of a cell.
"""
import numpy as np

from .cache import GridCache
from ..pairs.base import own, stacked_masses

# (pair, step) → (lo, hi, cells): the cells (rows A, B, err_A, err_B, read-only) of the pair's last
# grid at that step, for its twin
_CELLS = GridCache(limit=64 * 2 ** 20, size_of=lambda kept: sum(row.nbytes for row in kept[2]))


def grid_cells(pairs, step, ranges, twins=None):
    """(A, B, err_A, err_B): the cells of pair i on the points ranges[i] = (lo_i, hi_i)
    (·step) and bounds on their errors (``stacked_masses``), concatenated in order;
    the points' losses ``edges`` and run ``sizes`` too. ``twins``: each pair's kept twin
    cells (``twin``) as looked up before (a pass over many pairs looks them all up first,
    before its own cells, kept as it goes, push them out), else looked up here. A pair's
    cells kept for its twin are returned as they are kept (read-only, not copied) where
    they are the whole rows: the caller writes into the rows only where they are writeable."""
    sizes = np.array([hi - lo + 1 for lo, hi in ranges], dtype=np.int64)
    first = sizes.cumsum() - sizes
    # point indices lo_i, …, hi_i of every run, concatenated
    lows = np.array([lo for lo, _ in ranges], dtype=np.int64)
    if len(ranges) == 1:
        edges = np.arange(ranges[0][0], ranges[0][1] + 1, dtype=np.int64) * step
    else:
        edges = (np.arange(int(sizes.sum())) + np.repeat(lows - first, sizes)) * step
    twins = [twin(p, step, r) for p, r in zip(pairs, ranges)] if twins is None else twins
    computed = [i for i, t in enumerate(twins) if t is None]
    cell_first = first + np.arange(len(sizes))
    if len(computed) == len(pairs):
        out = own(stacked_masses(pairs, edges, sizes, errors=True))
    else:
        out = np.empty((4, int(np.sum(sizes + 1))))
        if computed:
            put = np.concatenate([np.arange(cell_first[i], cell_first[i] + sizes[i] + 1) for i in computed])
            take = np.concatenate([np.arange(first[i], first[i] + sizes[i]) for i in computed])
            out[:, put] = stacked_masses([pairs[i] for i in computed], edges[take], sizes[computed], errors=True)
    for i in computed:
        if pairs[i].atomless and pairs[i].reverse() != pairs[i]:  # kept for its twin
            _CELLS.put((pairs[i], step), (*ranges[i], tuple(_kept(row, cell_first[i], sizes[i] + 1) for row in out)))
    mirrored = [i for i, t in enumerate(twins) if t is not None]
    if mirrored:  # the end cells computed: (−∞, e₀], (e₀, e_last] (unused), (e_last, ∞)
        ends = np.array([edges[[first[i], first[i] + sizes[i] - 1]] for i in mirrored]).ravel()
        end = np.array(stacked_masses([pairs[i] for i in mirrored], ends, np.full(len(mirrored), 2), errors=True))
        for k, i in enumerate(mirrored):
            lo, hi, twin = twins[i]
            own_lo, own_hi = ranges[i]
            # inner cell m = 1 … n−1 of Y is X's cell −own_lo − m − lo + 1 (counted from X's first cell)
            inner = slice(-own_lo - lo, -own_hi - lo, -1)
            at, top = cell_first[i], cell_first[i] + sizes[i]
            for row, mirror in zip(out, (1, 0, 3, 2)):  # P of Y is Q of X, and their errors
                row[at + 1:top] = twin[mirror][inner]
            out[:, at], out[:, top] = end[:, 3 * k], end[:, 3 * k + 2]
    return (*out, edges, sizes)


def _kept(row, at, n):
    """``row[at:at + n]`` read-only: the row itself where that is all of it (a 1-d array of
    its own), else a copy (a view would keep the whole row alive)."""
    kept = row if at == 0 and len(row) == n and row.base is None else row[at:at + n].copy()
    kept.flags.writeable = False
    return kept


def twin(pair, step, own):
    """The kept cells (lo, hi, rows A, B, err_A, err_B) of pair.reverse() at ``step`` if they hold every
    inner cell of ``pair`` on the points ``own`` mirrored, else None."""
    if not pair.atomless:
        return None
    twin = pair.reverse()
    if twin == pair:
        return None
    kept = _CELLS.peek((twin, step))
    if kept is None:
        return None
    lo, hi = kept[:2]
    return kept if lo <= -own[1] and -own[0] <= hi else None
