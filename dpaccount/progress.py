"""Progress of long queries: opt-in, context-local, nothing shown by default.

A public query given ``progress=True`` draws a bar on stderr; given a
callable, it calls it with a ``Progress`` (stage, done, total, fraction,
elapsed, eta) at every stage boundary and step. Without either, nothing is
shown and nothing but one context-variable read per hook is spent. A callback
may raise to stop the query (the exception propagates; cached grids stay valid).

The numerical code marks its stages without taking a parameter: a function
decorated ``@stage("name")`` is one stage while it runs; inside it
``expect(total)`` says how many steps it has (and may rename it) and
``advance()`` counts one done. A stage that ends counts as one step of the
stage that called it, so a loop either calls staged functions or advances,
never both. The reporter lives in a ``contextvars.ContextVar``: a query
called inside another's reporting (a calibration's evaluations, a plot's
queries) reports as a stage of it.

The fraction is an estimate: each stage splits its parent's share evenly
among its expected steps and one more, kept for steps beyond the expected
(``_share``; a stage whose total is unknown gives step i the share between
i/(i+1) and (i+1)/(i+2)); it never decreases, stays at most
0.99 while the query runs and is 1 once it has returned. The ETA, elapsed·(1 − f)/f, is as rough
as f: stages that end early (a refinement that converges) make it fall.
"""
import contextvars
import functools
import inspect
import shutil
import sys
import time
from typing import Any, Callable, NamedTuple, Optional, TypeVar, Union

_REPORTER = contextvars.ContextVar("dpaccount_progress", default=None)
_BEFORE_THE_END = 0.99  # the fraction shown until the query returns: 1 means done


class Progress(NamedTuple):
    """One report: the innermost ``stage`` running, its steps ``done`` of
    ``total`` (None: not known), the estimated ``fraction`` of the whole query
    done (non-decreasing, 1 at the end), seconds ``elapsed`` and the estimated
    seconds left (``eta``; None until 1% is done)."""

    stage: str
    done: int
    total: Optional[int]
    fraction: float
    elapsed: float
    eta: Optional[float]


ProgressArg = Union[bool, Callable[[Progress], object], None]
"""What a query's ``progress=`` accepts: None or False (nothing), True (a bar on stderr), a callback."""
F = TypeVar("F", bound=Callable[..., Any])  # a decorated function, its signature kept


def _share(done, total):
    """The fraction of a stage that ``done`` of its steps stand for: of an expected
    total T, step i stands for i/(T + 1), the last share kept for steps beyond T (a
    stage whose count was a guess), x of which stand for x/(x + 1) of it; of an
    unknown total, i/(i + 1). Below 1 while the stage runs (a stage whose expected
    steps were done early showed 99 % for the rest of its run)."""
    if not total:
        return done / (done + 1.0)
    over = max(done - total, 0)
    return (min(done, total) + over / (over + 1.0)) / (total + 1.0)


class _Stage:
    __slots__ = ("name", "done", "total", "counts")

    def __init__(self, name, counts, total):
        self.name, self.done, self.total, self.counts = name, 0, total, counts


class _Reporter:
    """A stack of running stages and the callback that hears of them."""

    def __init__(self, callback):
        self.callback, self.start, self.stack, self.best = callback, time.perf_counter(), [], 0.0

    def fraction(self):
        low, width = 0.0, 1.0
        for s in self.stack:
            if not s.counts:
                break  # a stage that takes no share: its steps move nothing
            a, b = _share(s.done, s.total), _share(s.done + 1, s.total)
            low, width = low + width * a, width * (b - a)
        return low

    def emit(self, final=False):
        self.best = 1.0 if final else max(self.best, min(self.fraction(), _BEFORE_THE_END))
        elapsed = time.perf_counter() - self.start
        eta = 0.0 if final else (elapsed * (1.0 - self.best) / self.best if self.best >= 0.01 else None)
        s = self.stack[-1]
        self.callback(Progress(s.name, s.total if final and s.total else s.done, s.total, self.best, elapsed, eta))

    def push(self, name, counts=True, steps=None):
        self.stack.append(_Stage(name, counts, steps))
        self.emit()

    def pop(self):
        if self.stack.pop().counts and self.stack:
            self.stack[-1].done += 1
            self.emit()


def expect(total=..., name=None):
    """The running stage has ``total`` steps (None: not known; left out: as it was);
    ``name`` renames it."""
    r = _REPORTER.get()
    if r is not None and r.stack:
        s = r.stack[-1]
        if total is not ...:
            s.total = int(total) if total else None
        if name is not None:
            s.name = name
        r.emit()


def advance(steps=1):
    """``steps`` steps of the running stage are done."""
    r = _REPORTER.get()
    if r is not None and r.stack:
        r.stack[-1].done += steps
        r.emit()


def reached(done, total):
    """The running stage has ``done`` of its ``total`` steps done: a count kept
    elsewhere (``sweep``'s ``progress(done, total)``, whose points may run in
    other processes)."""
    r = _REPORTER.get()
    if r is not None and r.stack:
        s = r.stack[-1]
        s.done, s.total = done, total
        r.emit()


def stage(name: str, counts: bool = True, steps: Optional[int] = None) -> Callable[[F], F]:
    """Decorator: the function is a stage called ``name`` while it runs, of
    ``steps`` steps (None: not known, or set by ``expect``); ``counts=False``:
    a quick one (planning) that takes no share of its caller's."""
    def wrap(f):
        @functools.wraps(f)
        def staged(*args, **kwargs):
            r = _REPORTER.get()
            if r is None:
                return f(*args, **kwargs)
            r.push(name, counts, steps)
            try:
                return f(*args, **kwargs)
            finally:
                r.pop()
        return staged
    return wrap


def reporter_of(progress):
    """The callback ``progress`` asks for: None (None or False), a bar on
    stderr (True) or the callable itself; TypeError for anything else."""
    if progress is None or progress is False:
        return None
    if progress is True:
        return StderrBar()
    if callable(progress):
        return progress
    raise TypeError(f"progress must be None, True or a callable taking a dpaccount.Progress, got {progress!r}")


def run(name, progress, f, /, *args, counts=True, steps=None, **kwargs):
    """``f(*args, **kwargs)`` as the stage ``name``: reported to ``progress``
    (``reporter_of``) with a last report at fraction 1 when it returns, or,
    without it, to the reporter already running (if any)."""
    callback = reporter_of(progress)
    if callback is None:
        return stage(name, counts, steps)(f)(*args, **kwargs)
    r = _Reporter(callback)
    token = _REPORTER.set(r)
    r.push(name, True, steps)
    try:
        out = f(*args, **kwargs)
        r.emit(final=True)
        return out
    finally:
        _REPORTER.reset(token)
        getattr(callback, "close", lambda: None)()


def reports(name: str, counts: bool = True, steps: Optional[int] = None) -> Callable[[F], F]:
    """Decorator of a public query with a ``progress`` parameter: the call is
    the stage ``name`` (``run``; ``counts``: as ``stage``'s, where another
    query calls it); the function itself never reads ``progress``."""
    def wrap(f):
        position = list(inspect.signature(f).parameters).index("progress")

        @functools.wraps(f)
        def query(*args, **kwargs):
            progress = args[position] if len(args) > position else kwargs.get("progress")
            if progress is None and _REPORTER.get() is None:
                return f(*args, **kwargs)
            return run(name, progress, f, *args, counts=counts, steps=steps, **kwargs)
        return query
    return wrap


class StderrBar:
    """A ``Progress`` callback drawing ``name: [####----]  45%  ETA 12s  stage``
    on stderr: redrawn in place on a terminal (at most 10 times a second),
    else one line at most every ``every`` seconds; the last report always."""

    def __init__(self, width=24, every=2.0, stream=None):
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.width, self.every = width, (0.1 if self.tty else every)
        self.last, self.open, self.head = -1e9, False, None
        self.columns = shutil.get_terminal_size((80, 24)).columns - 1  # a line that never wraps

    def __call__(self, p):
        self.head = self.head or p.stage  # the outermost stage: the first reported
        now = time.perf_counter()
        if now - self.last < self.every and p.fraction < 1.0:
            return
        self.last = now
        eta = "" if p.eta is None else f"  ETA {_seconds(p.eta)}"
        stage = "" if p.stage == self.head else f"  {p.stage}" + (f" {p.done}/{p.total}" if p.total else "")
        if self.tty:
            filled = int(self.width * p.fraction)
            line = f"{self.head}: [{'#' * filled}{'-' * (self.width - filled)}] {p.fraction:4.0%}{eta}{stage}"
            self.stream.write(f"\r{line[:self.columns]:<{self.columns}}")
            self.open = True
        else:
            self.stream.write(f"{self.head}: {p.fraction:4.0%}{eta}{stage}\n")
        self.stream.flush()

    def clear(self):
        """Erase the bar drawn on a terminal (before other output on it; the next report redraws it)."""
        if self.open:
            self.stream.write(f"\r{'':{self.columns}}\r")
            self.stream.flush()
            self.open = False

    def close(self):
        """End the bar's line (after the last report, an error or an interruption)."""
        if self.open:
            self.stream.write("\n")
            self.stream.flush()
            self.open = False


def _seconds(s):
    return f"{s:.0f}s" if s < 60 else f"{int(s // 60)}m{int(s % 60):02d}s"
