"""Sweeps: one query over a grid of parameters, in parallel.

    >>> def dpsgd(sigma, q, steps):   # module level: a process pool pickles it
    ...     return Composition()([PoissonSampling()(GaussianMechanism(sigma), q)], [steps])
    >>> table = sweep(dpsgd, {"sigma": [0.8, 1.0], "q": [0.01], "steps": [100, 1000]},
    ...               ("epsilon", 1e-5))                                  # doctest: +SKIP
    >>> table.rows[0]                                                     # doctest: +SKIP
    {'sigma': 0.8, 'q': 0.01, 'steps': 100, 'epsilon': 1.37...}

``sweep(make, grid, query, executor=None)`` builds ``make(**point)`` for every
point of the cartesian product of ``grid`` (a dict of lists, in its order:
the last key varies fastest) and answers ``query`` there:

* ``("epsilon", delta)``, ``("delta", eps)``, ``("rdp", alpha)`` — the
  mechanism's ``get_approxDP`` / ``get_approx_delta`` / ``get_RDP`` (column
  ``epsilon``, ``delta``, ``rdp``); ``("epsilon_bounds", delta)`` and
  ``("delta_bounds", eps)`` add the certified lower bound (``…_lower``;
  empty, with ``lower_reason``, where the mechanism's pairs are not attained);
* a callable ``query(mechanism)`` returning a number (column ``value``) or a
  dict of columns.

The work runs on ``executor``: a ``concurrent.futures.ProcessPoolExecutor``
with ``max_workers`` by default (shut down afterwards), or any
``concurrent.futures.Executor`` given (left open; a Dask or Ray executor
spreads it over machines, ``SerialExecutor`` runs it in this process). With
a process pool ``make`` and a callable ``query`` travel by pickle: they must
be module-level functions (or ``functools.partial`` of them), not lambdas
or closures — a TypeError says so before any work starts. Mechanisms
themselves pickle (``mechanism.py``).

The result is a ``SweepResult``: ``rows`` (a list of dicts: the point's
parameters, then the answer), ``to_csv``, ``to_json``, ``to_dataframe``
(pandas, when installed). With ``errors="record"`` a point that has no
certified answer (``DPAccountError``) or whose parameters are refused
(``ValueError``) gets empty answers and its message in an ``error`` column
instead of stopping the sweep.
"""
from __future__ import annotations

import io
import itertools
import os
import pickle
from concurrent.futures import Executor, Future, as_completed
from typing import (IO, TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Literal, Mapping, Optional, Sequence,
                    Tuple, TypeVar, Union)

from . import validation as v
from .errors import DPAccountError
from .mechanism import Mechanism
from .queries import DEFAULT_ACCURACY

if TYPE_CHECKING:
    from .queries.intervals import Method

T = TypeVar("T")

QUERIES = {  # name: (method of Mechanism, answer column)
    "epsilon": ("get_approxDP", "epsilon"), "delta": ("get_approx_delta", "delta"), "rdp": ("get_RDP", "rdp"),
    "epsilon_bounds": ("get_approxDP_bounds", "epsilon"), "delta_bounds": ("get_approx_delta_bounds", "delta"),
}
MAX_POINTS = 10 ** 6


class SerialExecutor(Executor):
    """An Executor that runs each task at once, in this process (no pickling)."""

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        future: Future[T] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # handed to the caller through the future, as a pool would
            future.set_exception(exc)
        return future


class SweepResult:
    """The table of a sweep: ``rows`` (dicts) with ``columns`` in order."""

    def __init__(self, rows: List[Dict[str, Any]], columns: List[str]) -> None:
        self.rows, self.columns = rows, columns

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        return iter(self.rows)

    def __repr__(self) -> str:
        return f"<SweepResult: {len(self.rows)} rows × {self.columns}>"

    def to_csv(self, path_or_file: Union[str, os.PathLike[str], IO[str], None] = None) -> Optional[str]:
        """CSV text (full precision; empty cells for no answer, ``inf`` for an
        infinite ε); written to
        ``path_or_file`` when given, else returned."""
        import csv  # here, as json in to_json: neither at import dpaccount
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=self.columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(self.rows)
        return _emit(buf.getvalue(), path_or_file)

    def to_json(self, path_or_file: Union[str, os.PathLike[str], IO[str], None] = None) -> Optional[str]:
        """``{"columns": [...], "rows": [...]}`` as JSON text; written or returned as
        ``to_csv``. No answer is ``null``; an infinite ε (no finite ε at that δ) is the
        string ``"inf"`` (NaN ``"nan"``), as in ``to_csv`` and the command line's ``--json``."""
        from . import jsontext
        text = jsontext.dumps({"columns": self.columns, "rows": self.rows})
        return _emit(text + "\n", path_or_file)

    def to_dataframe(self) -> Any:
        """A pandas DataFrame of the rows (ImportError when pandas is not installed)."""
        try:
            import pandas
        except ImportError:
            raise ImportError("to_dataframe needs pandas (pip install pandas); "
                              "to_csv and to_json need nothing") from None
        return pandas.DataFrame(self.rows, columns=self.columns)


def _emit(text, path_or_file):
    if path_or_file is None:
        return text
    if hasattr(path_or_file, "write"):
        path_or_file.write(text)
    else:
        with open(os.fspath(path_or_file), "w", encoding="utf-8", newline="") as f:
            f.write(text)
    return None


def sweep(make: Callable[..., Mechanism], grid: Mapping[str, Sequence[Any]],
          query: Union[Tuple[str, float], Callable[[Mechanism], Any]], executor: Optional[Executor] = None, *,
          max_workers: Optional[int] = None, method: Optional[Method] = None, accuracy: float = DEFAULT_ACCURACY,
          errors: Literal["raise", "record"] = "raise",
          progress: Optional[Callable[[int, int], object]] = None) -> SweepResult:
    """``query`` at every point of ``grid`` (module docstring); ``progress(done, total)``
    is called in this process as points finish."""
    if not callable(make):
        raise TypeError(f"make must be callable (point's parameters -> Mechanism), got {make!r}")
    names, points = _points(grid)
    query = _check_query(query)
    accuracy = v.in_interval("accuracy", accuracy, 0.0, 1.0)
    if errors not in ("raise", "record"):
        raise ValueError(f"errors must be 'raise' or 'record', got {errors!r}")
    if executor is not None and not isinstance(executor, Executor):
        raise TypeError(f"executor must be a concurrent.futures.Executor, got {executor!r}")
    from concurrent.futures import ProcessPoolExecutor  # here: multiprocessing stays out of import dpaccount
    own = executor is None
    if own:
        max_workers = None if max_workers is None else v.count("max_workers", max_workers)
    if own or isinstance(executor, ProcessPoolExecutor):
        _check_picklable(make, query)
    pool = ProcessPoolExecutor(max_workers=max_workers) if executor is None else executor
    try:
        futures = {pool.submit(_evaluate, make, query, point, method, accuracy, errors): i
                   for i, point in enumerate(points)}
        answers: List[Any] = [None] * len(points)
        for done, future in enumerate(as_completed(futures), 1):
            answers[futures[future]] = future.result()
            if progress is not None:
                progress(done, len(points))
    finally:
        if own:
            pool.shutdown(cancel_futures=True)
    rows = [{**point, **answer} for point, answer in zip(points, answers)]
    columns = list(names)
    for row in rows:
        columns.extend(key for key in row if key not in columns)
    return SweepResult([{c: row.get(c) for c in columns} for row in rows], columns)


def _points(grid):
    if not isinstance(grid, dict) or not grid:
        raise TypeError(f"grid must be a non-empty dict of parameter -> list of values, got {grid!r}")
    values = []
    for name, vals in grid.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"grid keys must be parameter names (identifiers), got {name!r}")
        if isinstance(vals, (str, bytes, dict)) or not hasattr(vals, "__iter__"):
            raise TypeError(f"grid[{name!r}] must be a list of values, got {vals!r}")
        vals = list(vals)
        if not vals:
            raise ValueError(f"grid[{name!r}] must not be empty")
        values.append(vals)
    total = 1
    for vals in values:
        total *= len(vals)
    if total > MAX_POINTS:
        raise ValueError(f"grid has {total} points, more than {MAX_POINTS}; split the sweep")
    names = list(grid)
    return names, [dict(zip(names, combo)) for combo in itertools.product(*values)]


def _check_query(query):
    if callable(query):
        return query
    if (isinstance(query, tuple) and len(query) == 2 and query[0] in QUERIES):
        return query
    raise TypeError(f"query must be a callable(mechanism) or a pair (name, value) with name in "
                    f"{sorted(QUERIES)}, e.g. ('epsilon', 1e-5); got {query!r}")


def _check_picklable(make, query):
    for name, obj in (("make", make), ("query", query)):
        try:
            pickle.dumps(obj)
        except Exception as exc:  # pickling raises PicklingError, AttributeError, TypeError...
            raise TypeError(f"{name} must be picklable to run on a process pool (a module-level function "
                            f"or functools.partial, not a lambda or closure), got {obj!r}: {exc}; or pass "
                            f"executor=SerialExecutor() / a ThreadPoolExecutor") from None


def _evaluate(make, query, point, method, accuracy, errors):
    """The answer columns at one point (runs in a worker). With ``errors="record"`` a point
    whose parameters are refused (ValueError) or that has no certified answer
    (``DPAccountError``) is recorded, its message in the ``error`` column."""
    try:
        try:
            m = make(**point)
        except (TypeError, ValueError) as exc:  # bad parameters: say at which point
            raise type(exc)(f"at {point}: {exc}") from None
        if not isinstance(m, Mechanism):
            raise TypeError(f"make(**{point!r}) must return a dpaccount Mechanism, got {m!r}")
        if callable(query):
            out = query(m)
            return dict(out) if isinstance(out, dict) else {"value": out}
        name, x = query
        fn, column = QUERIES[name]
        if name == "rdp":
            return {column: getattr(m, fn)(x)}
        answer = getattr(m, fn)(x, method=method, accuracy=accuracy)
        if name.endswith("_bounds"):  # no lower end (pairs not attained): empty, with the reason
            return {column: answer.upper, f"{column}_lower": answer.lower, "method": answer.method,
                    **({"lower_reason": answer.reason} if answer.lower is None else {})}
        return {column: answer}
    except (DPAccountError, ValueError) as exc:
        if errors == "raise":
            raise
        empty = {} if callable(query) else {QUERIES[query[0]][1]: None}
        return {**empty, "error": f"{type(exc).__name__}: {exc}"}
