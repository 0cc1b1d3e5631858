"""One memory budget for every composed grid: a least-recently-used cache.

Composed grids are the expensive, large objects of the library (a DP-SGD grid
is ~150k points, a fine one up to ``compose.MAX_GRID``); everything else a
mechanism caches is small. They are kept here, keyed by *what* they are (the
``PairComposition``, direction, step, window tail, rounding and tilt), so equal
mechanisms share them and a mechanism that is pickled carries none.

The budget (default 256 MB, ``set_cache_limit``) counts each grid's arrays,
including the prefix sums its queries build; beyond it the least recently
used grids are dropped (they are rebuilt if asked for again). A grid larger
than the whole budget is returned but not kept. One query's own grids are
also kept, within a budget of their own, until it returns (``query_cache``).
"""
import threading
import weakref
from collections import OrderedDict

from ... import validation as v

DEFAULT_LIMIT = 256 * 2 ** 20
QUERY_LIMIT = 512 * 2 ** 20  # what one query keeps of its own grids until it returns (``query_cache``)


def grid_bytes(grid):
    """Bytes a grid holds once queried: its masses, per-bin noise and two prefix sums."""
    n = len(grid.probs)
    return 8 * n * (3 + (grid.noise_bins is not None))


class GridCache:
    """A thread-safe LRU map with a byte budget; values are built on a miss."""

    instances: "weakref.WeakSet[GridCache]" = weakref.WeakSet()  # every cache, for ``clear_cache``

    def __init__(self, limit=DEFAULT_LIMIT, size_of=grid_bytes):
        GridCache.instances.add(self)
        self._items = OrderedDict()
        self._bytes = 0
        self._size_of = size_of
        self._lock = threading.RLock()
        self.limit = limit

    @property
    def nbytes(self):
        """Bytes held now."""
        return self._bytes

    def __len__(self):
        return len(self._items)

    def get(self, key, build):
        """The value for ``key``, built by ``build()`` (and kept, within the budget) on a miss."""
        found = self._kept((key,))
        if found:
            return found[key]
        value = build()  # outside the lock: a build may itself ask the cache (tilted → base)
        self.put(key, value, replace=False)
        return value

    def peek(self, key):
        """The value for ``key`` if kept, else None (nothing is built)."""
        return self._kept((key,)).get(key)

    def get_many(self, keys, build_many):
        """The values for ``keys``; those missing are built together, by
        ``build_many(missing keys)`` (a list of values in that order)."""
        found = self._kept(keys)
        missing = [key for key in dict.fromkeys(keys) if key not in found]
        if missing:
            built = build_many(missing)  # outside the lock: a build may itself ask the cache (tilted → base)
            for key, value in zip(missing, built):
                found[key] = value
                self.put(key, value, replace=False)
        return [found[key] for key in keys]

    def _kept(self, keys):
        """{key: value} of the ``keys`` kept, each made the most recently used."""
        found = {}
        with self._lock:
            for key in keys:
                held = self._items.get(key)
                if held is not None:
                    self._items.move_to_end(key)
                    found[key] = held[0]
        return found

    def put(self, key, value, replace=True):
        """Keep ``value`` for ``key`` (within the budget; ``replace``: over a kept one)."""
        with self._lock:
            if key in self._items:
                if not replace:
                    return
                self._bytes -= self._items.pop(key)[1]
            size = self._size_of(value)
            if size <= self.limit:
                self._items[key] = (value, size)
                self._bytes += size
                self._evict()

    def set_limit(self, nbytes):
        with self._lock:
            self.limit = nbytes
            self._evict()

    def clear(self):
        with self._lock:
            self._items.clear()
            self._bytes = 0

    def _evict(self):
        while self._bytes > self.limit and self._items:
            _, (_, size) = self._items.popitem(last=False)
            self._bytes -= size


GRIDS = GridCache()


def query_cache() -> GridCache:
    """A cache for the grids of one query (``StepProfile.holding``), dropped when it
    returns, of budget ``QUERY_LIMIT``: the few grids a query asks for again and again,
    each up to a few hundred MB, are built once where the shared cache (which keeps grids
    across queries, within its own budget) cannot hold them together."""
    return GridCache(limit=QUERY_LIMIT)


def set_cache_limit(nbytes: float) -> None:
    """Set the memory budget of the composed-grid cache, in bytes (0 keeps
    nothing; the default is 256 MB). Grids beyond it are dropped, least
    recently used first. (A query also keeps the grids it asks for, up to
    512 MB, until it returns: those it asks for again are built once.)"""
    GRIDS.set_limit(int(v.nonnegative("nbytes", nbytes)))


def clear_cache() -> None:
    """Drop every cached composed grid and grid plan (they are rebuilt when asked for)."""
    for cache in list(GridCache.instances):
        cache.clear()
