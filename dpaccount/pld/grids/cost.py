"""An up-front estimate of a query's work, said before the work starts.

The accountant discretises and transforms each *distinct* pair of a
composition on its own (``pld/profiles/step_profile.py``): equal pairs are composed
at once (powered), Gaussians merge exactly, but every other distinct pair
costs its own grid and transform at each step size the query needs. So the
work of a first query grows with the number of distinct pairs, about
``SECONDS_PER_PAIR`` each (fitted to the timings in benchmarks/README.md,
"Measurements behind constants in the code"). Past ``DISTINCT_WARN``
distinct pairs a ``CostWarning`` says so before the work starts, with the
estimate and what would be cheaper.
"""
import warnings

from ...errors import CostWarning
from ..pairs.composition import DIRECTIONS, merge_gaussians

DISTINCT_WARN = 2_000   # distinct pairs in one direction: ~5 s of work and more
SECONDS_PER_PAIR = 2.5e-3


def distinct_pairs(composition):
    """The number of distinct pairs the grids of a ``PairComposition`` are built from
    (the larger direction; Gaussians merged)."""
    return max(len(merge_gaussians(composition.direction(d))) for d in DIRECTIONS)


def warn_if_costly(composition, stacklevel=3):
    """A ``CostWarning`` up front where the composition's first grid query is far
    beyond the usual work (more than ``DISTINCT_WARN`` distinct pairs)."""
    n = distinct_pairs(composition)
    if n > DISTINCT_WARN:
        warnings.warn(f"this composition has {n} distinct parts, each discretised and transformed on its own: "
                      f"expect roughly {n * SECONDS_PER_PAIR:.0f} s for its first query (~{1e3 * SECONDS_PER_PAIR:g} "
                      f"ms per part; more at fine accuracy). Equal parts are composed at once: group equal steps "
                      f"(Composition()([m], [k])), or use method='rdp' (fast, looser)",
                      CostWarning, stacklevel=stacklevel + 1)
