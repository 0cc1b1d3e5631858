"""Calibration: the parameter of a monotone family that meets a privacy budget, never over it.

``calibrate(make, eps=, delta=, bounds=(lo, hi))`` returns x in [lo, hi] such
that the **certified upper bound** of ``make(x)`` (the default query, as
``get_approxDP`` answers it) meets the budget, and x lies within ``tol``
(relative) of the boundary x* on the safe side: the least noise, the most
steps, the largest sampling rate. Every x returned has itself been evaluated
and found to meet the budget.

"Could not compute" is never read as "over budget". Where the query asked
cannot answer at a point (``DPAccountError``: its grid too large, say: a
very private point's tiny ε needs a tiny step at a relative accuracy), the
point is decided by the least of the other certified upper bounds that fit
(``_other_routes``): the RDP conversion (default method only), and the same
method at the finest accuracy whose grid fits (or a coarser one,
``_FALLBACKS``). Where such a point places the boundary, an ``AccuracyWarning``
says so: the answer meets the budget, but the boundary of the bound asked for
may lie further. A point where nothing answers stays *undecided*: it bounds
the search like a point over budget, but if the answer's bracket ends at one
(the boundary may lie beyond it), ``calibrate`` raises that point's error,
with the point and the reason, instead of returning an answer short of the
boundary.

Targets (exactly one):

* ``eps`` and ``delta`` — (ε, δ)-DP: ε(δ) ≤ eps (by the profile's consistency
  this also gives δ(eps) ≤ delta); ``query="delta"`` checks δ(eps) ≤ delta instead;
  ``delta=0`` asks for pure ε-DP (``Mechanism.pure_epsilon``);
* ``mu`` — μ-GDP by the certified ``Mechanism.mu_GDP``;
* ``fpr`` and ``fnr`` — the point (α, β) of the trade-off curve: the certified
  lower bound ``Mechanism.get_fDP(fpr)`` is at least fnr.

Monotonicity is the caller's promise (the budget is met on one side of x*
only); its direction is detected from the two ends of ``bounds`` or declared
with ``increasing=`` (True: the privacy loss grows with x, as with steps or
sampling rate; False: it falls, as with noise). Search: the ends, then a
safeguarded Illinois (regula falsi) iteration on log ε against log x, which
keeps a bracket [feasible, infeasible] and halves it whenever interpolation
stalls. The DP-SGD helpers (``recipes.py``) start from a bracket of closed
forms (the RDP bound, an upper bound on ε, and the central-limit μ of Bu,
Dong, Long & Su 2019, an approximation used only as a first guess), so a
noise calibration to tol = 1e-3 takes ~5–8 certified evaluations.
"""
from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING, Any, Callable, Literal, Optional, Sequence, Tuple


from . import progress as report
from . import validation as v
from .errors import AccuracyNotReached, AccuracyWarning, DPAccountError
from .mechanism import Mechanism
from .queries import DEFAULT_ACCURACY

if TYPE_CHECKING:
    from .progress import ProgressArg
    from .queries.intervals import Method



class _Budget:
    """The budget as g(m) = log(value/limit) ≤ 0 where it is met."""

    def __init__(self, eps, delta, mu, fpr, fnr, query, accuracy, method=None):
        given = {k for k, val in dict(eps=eps, delta=delta, mu=mu, fpr=fpr, fnr=fnr).items() if val is not None}
        if given == {"eps", "delta"}:
            self.eps = v.in_interval("eps", eps, 0.0, math.inf, lo_open=False)  # ε = 0: (0, δ)-DP
            self.delta = v.in_interval("delta", delta, 0.0, 1.0, lo_open=False)  # δ = 0: pure ε-DP
            if query not in ("epsilon", "delta"):
                raise ValueError(f"query must be 'epsilon' or 'delta', got {query!r}")
            self.kind = query
        elif given == {"mu"}:
            self.mu, self.kind = v.in_interval("mu", mu, 0.0, math.inf), "mu"
        elif given == {"fpr", "fnr"}:
            self.fpr, self.fnr = v.probability("fpr", fpr), v.probability("fnr", fnr)
            self.kind = "fdp"
        else:
            raise ValueError(f"give one target: eps and delta, mu, or fpr and fnr; got {sorted(given)}")
        self.accuracy, self.method = accuracy, method

    def gap(self, m, method=None, accuracy=None):
        """log(certified value / limit) by one route (default: the one asked for):
        ≤ 0 where the budget is met; raises ``DPAccountError`` where it cannot answer."""
        method, accuracy = (self.method, self.accuracy) if accuracy is None else (method, accuracy)
        if self.kind == "epsilon":
            return _log_ratio(m.get_approxDP(self.delta, method=method, accuracy=accuracy), self.eps)
        if self.kind == "delta":
            return _log_ratio(m.get_approx_delta(self.eps, method=method, accuracy=accuracy), self.delta)
        if self.kind == "mu":
            return _log_ratio(m.mu_GDP(method=method, accuracy=accuracy), self.mu)
        # β(α) ≥ fnr ⇔ fnr/β ≤ 1 (get_fDP errs low: a certified lower bound on β)
        return _log_ratio(self.fnr, m.get_fDP(self.fpr, method=method, accuracy=accuracy))

    def decide(self, m):
        """(gap, how) by ``_certified``: the asked route, else the best of the others."""
        rdp = self.kind == "epsilon" and self.delta > 0 or self.kind == "delta"
        return _certified(lambda method, accuracy: self.gap(m, method, accuracy), self.method, self.accuracy,
                          rdp, enough=lambda gap: gap <= 0)

    def describe(self, gap):
        if self.kind == "epsilon":
            what, limit = f"ε at δ={self.delta:g}", self.eps
        elif self.kind == "delta":
            what, limit = f"δ at ε={self.eps:g}", self.delta
        elif self.kind == "mu":
            what, limit = "μ", self.mu
        else:
            what, limit = f"fnr/β({self.fpr:g})", 1.0
        if not math.isfinite(gap):
            return f"{what} could not be certified finite"
        return f"{what} = {limit * math.exp(gap):.6g} (budget {limit:g})"


def _log_ratio(value, limit):
    if value <= 0:
        return -math.inf
    if not math.isfinite(value) or limit <= 0:
        return math.inf
    return math.log(value) - math.log(limit)


_FALLBACKS = (1e-2, 1e-1)  # coarser accuracies tried where the asked one cannot answer


def _other_routes(method, accuracy, rdp, fits=None):
    """The other certified routes, in the order tried where (method, accuracy)
    cannot answer: RDP (for the default method, where ``rdp`` says it answers
    the target; fast), then ``method`` at ``fits`` (the finest accuracy whose
    grid fits, ``GridTooLarge.accuracy``) and each coarser one of ``_FALLBACKS``."""
    if method is None and rdp:
        yield "rdp", accuracy
    for coarser in sorted({fits or accuracy, *_FALLBACKS}):
        if coarser > accuracy:
            yield method, coarser


def _certified(ask, method, accuracy, rdp, enough=lambda value: False):
    """(value, how): ``ask(method, accuracy)`` (how None); where that raises
    ``DPAccountError``, the least value of the ``_other_routes`` that answer:
    RDP, then the first grid that answers (coarser ones are looser), or RDP's
    alone where it is ``enough`` (how: "method='rdp'", "accuracy=0.004"). Each
    is a certified upper bound, so the least is. (+∞, the first error) where
    none answers."""
    try:
        return ask(method, accuracy), None
    except DPAccountError as err:
        failure = err
    best = (math.inf, failure)
    for other, coarser in _other_routes(method, accuracy, rdp, getattr(failure, "accuracy", None)):
        try:
            value = ask(other, coarser)
        except (DPAccountError, ValueError):  # this route cannot answer either (e.g. no RDP curve)
            continue
        if value <= best[0]:
            best = (value, f"method={other!r}" if other == "rdp" else f"accuracy={coarser:g}")
        if other != "rdp" or enough(best[0]):
            break
    return best


def certified_epsilon(mechanism, delta, accuracy=DEFAULT_ACCURACY):
    """(ε(δ), route) as calibration decides points (``_certified``): the default
    query at ``accuracy`` (route None), else the best other certified bound (route
    e.g. "method='rdp'"); the default's error where nothing answers."""
    value, how = _certified(lambda method, acc: mechanism.get_approxDP(delta, method=method, accuracy=acc),
                            None, accuracy, delta > 0)
    if isinstance(how, DPAccountError):
        raise how
    return value, how


class _Search:
    """Evaluations of g(make(x)), counted and reported; an undecided point
    (``_Budget.decide``) as +∞ for the bracket, its error kept in ``undecided``,
    the route of a point the asked one could not answer in ``via``."""

    def __init__(self, make, budget, integer):
        self.make, self.budget, self.integer = make, budget, integer
        self.evaluations = 0
        self.memo, self.undecided, self.via = {}, {}, {}

    def __call__(self, x):
        x = int(round(x)) if self.integer else float(x)
        if x in self.memo:
            return self.memo[x]
        m = self.make(x)
        if not isinstance(m, Mechanism):
            raise TypeError(f"make_mechanism({x!r}) must return a dpaccount Mechanism, got {m!r}")
        gap, how = self.budget.decide(m)
        if isinstance(how, DPAccountError):
            self.undecided[x] = how
        elif how is not None:
            self.via[x] = how
        self.evaluations += 1
        self.memo[x] = gap
        report.expect(name=f"calibrate: evaluation {self.evaluations}: x = {x:.6g} {'meets' if gap <= 0 else 'misses'} the budget")
        return gap

    def refuse(self, x, what):
        """Raise the error of the undecided point ``x``, saying what it left open."""
        err = self.undecided[x]
        raise type(err)(f"calibrate: {what}: at x={x!r} no certified route could decide the budget "
                        f"({err})") from err


@report.reports("calibrate")
def calibrate(make_mechanism: Callable[[Any], Mechanism], *, eps: Optional[float] = None,
              delta: Optional[float] = None, mu: Optional[float] = None, fpr: Optional[float] = None,
              fnr: Optional[float] = None, bounds: Tuple[float, float], tol: float = 1e-3,
              increasing: Optional[bool] = None, integer: bool = False, query: Literal["epsilon", "delta"] = "epsilon",
              method: Optional[Method] = None, accuracy: float = DEFAULT_ACCURACY,
              guess: Optional[Sequence[float]] = None, progress: ProgressArg = None,
              max_evaluations: int = 64) -> float:
    """The x in ``bounds`` closest to the budget's boundary on the safe side.

    ``make_mechanism(x)`` builds the mechanism for parameter x (a σ, a number of
    steps, a sampling rate, or anything a schedule is built from); the budget
    (module docstring) is met by the certified upper bound of the returned x
    (``method``: default the mechanism's default query), and the boundary lies
    within ``tol``·x of it (``integer=True``: within max(1, tol·x)). ``guess``,
    optional: points to try first (each is checked; with ``increasing`` given
    and a guess on each side, the ends of ``bounds`` are never evaluated).
    ``progress``: True draws a bar on stderr, a callable receives a
    ``progress.Progress`` as each evaluation (a nested query) goes, its stage
    naming the last x evaluated and whether it met the budget; the expected
    count is that of a bisection (regula falsi usually needs fewer).

    Raises ValueError, saying what the best end of ``bounds`` achieves, when
    no x in ``bounds`` meets the budget; the ``DPAccountError`` of an undecided
    point (module docstring) where the answer would hinge on it; and
    ``AccuracyNotReached`` where ``max_evaluations`` leave the bracket wider
    than ``tol``."""
    if not callable(make_mechanism):
        raise TypeError(f"make_mechanism must be callable, got {make_mechanism!r}")
    lo, hi = _bounds(bounds, integer)
    tol = v.in_interval("tol", tol, 0.0, 1.0)
    if increasing is not None and not isinstance(increasing, bool):
        raise TypeError(f"increasing must be True, False or None, got {increasing!r}")
    accuracy = v.in_interval("accuracy", accuracy, 0.0, 1.0)
    g = _Search(make_mechanism, _Budget(eps, delta, mu, fpr, fnr, query, accuracy, method), integer)
    report.expect(min(max_evaluations, 2 * (increasing is None) + len(guess or ()) + 2 + math.ceil(math.log2(
        max(math.log(hi / lo) if lo > 0 else (hi - lo) / max(abs(hi), 1e-300), tol) / tol))))
    if increasing is None:
        at_lo, at_hi = g(lo), g(hi)
        for x in (lo, hi):
            if x in g.undecided:
                g.refuse(x, f"which way the privacy changes on bounds={bounds!r} is unknown (declare increasing=)")
        if at_lo == at_hi:
            raise ValueError(f"the privacy of make_mechanism does not change between bounds={bounds!r} "
                             f"(or cannot be certified at either end); declare increasing= or widen them")
        increasing = at_lo < at_hi
    best, worst = (lo, hi) if increasing else (hi, lo)
    points = [min(max(x, lo), hi) for x in (guess or ())]
    met = [x for x in points if g(x) <= 0]
    not_met = [x for x in points if g(x) > 0]
    if not met:
        x = _certifiable(g, best, min(not_met, key=lambda y: abs(y - best)) if not_met else worst, integer)
        if x in g.undecided:
            g.refuse(x, f"no value in bounds={bounds!r} was found to meet the budget")
        if g(x) > 0:
            raise ValueError(f"no value in bounds={bounds!r} meets the budget: at the best end "
                             f"x={x!r}, {g.budget.describe(g(x))}")
        met = [x]
    if not not_met:
        if g(worst) <= 0:
            return worst  # the whole range meets the budget
        not_met = [worst]
    # the bracket: the met point nearest the boundary, then the nearest not-met point beyond it
    a = max(met) if increasing else min(met)
    beyond = [x for x in not_met if (x > a) == increasing]
    if not beyond:  # the caller's promise of monotonicity is broken by these points
        raise ValueError(f"make_mechanism is not monotone in x on bounds={bounds!r}: the budget is met "
                         f"at {a!r} and missed at {sorted(not_met)!r} on the side it should hold")
    b = min(beyond) if increasing else max(beyond)
    met, not_met = _secant(g, a, b, tol, integer, max_evaluations)
    if not_met in g.undecided:  # the boundary may lie beyond it: no answer short of it
        g.refuse(not_met, f"the budget is met at x={met!r}, and the boundary may lie beyond")
    if not_met in g.via and g(not_met) > 0:
        warnings.warn(f"calibrate: the boundary beyond x={met!r} was placed by another certified bound than the one "
                      f"asked for (at x={not_met!r}, by {g.via[not_met]}: the grid asked for is too large "
                      f"there): {met!r} meets the budget, but a finer grid might place the boundary further",
                      AccuracyWarning, stacklevel=2)
    if not _closed(met, not_met, tol, integer):
        raise AccuracyNotReached(f"calibrate: max_evaluations={max_evaluations} left the bracket "
                                 f"[{met!r}, {not_met!r}] wider than tol={tol!r}; the budget is met at {met!r}")
    return met


def _certifiable(g, best, other, integer, tries=12):
    """``best``, or where the best end is undecided (no certified route answers
    there, ``_Budget.decide``), the first point from it towards ``other``
    (halving the distance, in log x where x > 0) that is decided."""
    x = best
    for _ in range(tries):
        if g(x) <= 0 or x not in g.undecided:
            return x
        x = math.sqrt(x * other) if x > 0 and other > 0 else 0.5 * (x + other)
        x = int(round(x)) if integer else x
    return best


def _bounds(bounds, integer):
    if not (isinstance(bounds, (tuple, list)) and len(bounds) == 2):
        raise TypeError(f"bounds must be a pair (lo, hi), got {bounds!r}")
    lo, hi = (v.real(f"bounds[{i}]", b) for i, b in enumerate(bounds))
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"bounds must be finite with lo < hi, got {bounds!r}")
    if integer:
        lo, hi = math.ceil(lo), math.floor(hi)
        if lo >= hi:
            raise ValueError(f"bounds must hold two whole numbers, got {bounds!r}")
    return lo, hi


def _closed(met, not_met, tol, integer):
    """|not_met − met| ≤ tol·|met| (integers: ≤ max(1, tol·met))."""
    return abs(not_met - met) <= (max(1.0, tol * abs(met)) if integer else tol * abs(met))


def _secant(g, met, not_met, tol, integer, max_evaluations):
    """Shrink the bracket [met, not_met] (g ≤ 0 at met, > 0 at not_met) until
    it is closed (``_closed``) or ``max_evaluations`` are spent; return it.

    Each round estimates the root y by regula falsi on (log x, g) (g is a log
    ratio: nearly linear there) and evaluates just inside each side of it,
    y ∓ 0.4·tol·y, so that a good estimate closes the bracket in two
    evaluations; a round that fails to halve the bracket is followed by a
    bisection, so the bracket at least halves every other round."""
    logs = met > 0 and not_met > 0
    t = math.log if logs else (lambda x: x)
    t_inv = math.exp if logs else (lambda y: y)

    def done():
        return _closed(met, not_met, tol, integer)

    bisect = False
    while not done() and g.evaluations < max_evaluations:
        a, b, ga, gb = t(met), t(not_met), g(met), g(not_met)
        if bisect or not (math.isfinite(ga) and math.isfinite(gb)) or gb == ga:
            targets = [t_inv(0.5 * (a + b))]
        else:
            y = t_inv(a - ga * (b - a) / (gb - ga))
            toward = 1.0 if not_met > met else -1.0
            targets = [y * (1 - 0.4 * tol * toward), y * (1 + 0.4 * tol * toward)]
        before = abs(not_met - met)
        for x in targets:
            if integer:
                x = int(round(x))
                if x in (met, not_met) and abs(not_met - met) > 1:
                    x = (met + not_met) // 2
            if not min(met, not_met) < x < max(met, not_met):
                continue
            if g(x) <= 0:
                met = x
            else:
                not_met = x
            if done():
                break
        bisect = abs(not_met - met) > 0.5 * before and not bisect
    return met, not_met
