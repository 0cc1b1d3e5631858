"""The numbers of a privacy report card: ``report(m)`` → ``PrivacyReport``.

One mechanism, read the ways its readers ask (docs/theory.rst):

* ε(δ) at the usual δ, each with its certified interval (``get_approxDP_bounds``);
* the trade-off curve β(α), its certified lower and upper ends (``get_fDP_bounds``), beside
  G_μ of the certified μ (``mu_GDP`` at an additive ``tail``: β ≥ G_μ − tail) and, for
  compositions of Poisson-subsampled Gaussians, G_μ of the CLT's μ (an approximation);
* attack risk (``queries/risk.py``): the TPR at a few FPRs, the advantage, and the Bayes risk
  at a few priors, each with its certified interval;
* the method and the accuracy the answers come from, and what, if anything, is approximate.

Every section is computed here once; ``to_html`` (``cards/html.py``) only lays it out. A
section the mechanism cannot answer (no dominating pairs: no f-DP) keeps the reason instead.
"""
import json
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple, Optional, Sequence

import numpy as np

from .. import validation as v
from ..errors import AccuracyNotReached, ApproximationWarning, DPAccountError, RDPFallbackWarning
from ..mechanism import Mechanism
from ..queries import DEFAULT_ACCURACY
from .describe import title_of

DELTAS = (1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9)
FPRS = (1e-5, 1e-4, 1e-3, 1e-2, 0.05, 0.1, 0.2)
PRIORS = (0.001, 0.01, 0.1, 0.25, 0.5)
GDP_TAIL = 1e-6  # the additive slack of the certified μ drawn (mu_GDP's tail)


class Row(NamedTuple):
    """One answer: at ``at`` (a δ, an FPR, a prior; None for the advantage), the interval
    [lower, upper] (``lower`` None where no certified lower end is known), the ``method`` and
    grid ``step`` it came from, and, where it is not a certified interval at the accuracy
    asked for, a ``note`` saying why."""

    at: Optional[float]
    lower: Optional[float]
    upper: float
    certified: bool
    method: str
    step: Optional[float] = None
    note: Optional[str] = None


@dataclass(frozen=True)
class PrivacyReport:
    """A mechanism's report card (module docstring). ``to_html(path)`` writes it as one
    standalone HTML file; ``html()`` returns the text."""

    title: str
    name: str
    spec: Optional[str]
    relation: str
    accuracy: float
    epsilon: tuple
    tpr: tuple
    advantage: Optional[Row]
    bayes_risk: tuple
    alphas: Optional[np.ndarray] = field(repr=False)
    beta_lower: Optional[np.ndarray] = field(repr=False)
    beta_upper: Optional[np.ndarray] = field(repr=False)
    mu: Optional[float]
    clt_mu: Optional[float]
    approximate: tuple
    unavailable: tuple

    @property
    def rows(self) -> tuple:
        """Every answer of the tables."""
        return self.epsilon + self.tpr + ((self.advantage,) if self.advantage else ()) + self.bayes_risk

    @property
    def methods(self) -> tuple:
        """The methods the answers came from, in order of appearance."""
        return tuple(dict.fromkeys(r.method for r in self.rows))

    @property
    def steps(self) -> tuple:
        """The grid steps the answers came from (none for closed forms)."""
        return tuple(sorted({r.step for r in self.rows if r.step is not None}))

    def html(self, figures: Optional[bool] = None) -> str:
        """The report as one standalone HTML document (``cards/html.py``); ``figures``: None draws
        them where matplotlib is installed, False never (tables only, said so)."""
        from .html import render
        return render(self, figures)

    def to_html(self, path: str, figures: Optional[bool] = None) -> str:
        """Write ``html(figures)`` to ``path`` (UTF-8); returns the path."""
        with open(path, "w", encoding="utf-8") as out:
            out.write(self.html(figures))
        return path


def _rows(at: Sequence[Optional[float]], ask: Callable[[Any], Any]) -> tuple:
    """``ask(values)``'s ``Bounds`` (one vectorised query) as Rows: an interval too wide for the
    accuracy is kept with a note; ``at = (None,)`` asks once without an argument (the advantage)."""
    try:
        b, note = ask(None if at == (None,) else np.asarray(at, dtype=float)), None
    except AccuracyNotReached as err:
        if err.bounds is None:
            raise
        b, note = err.bounds, "wider than the accuracy asked for"
    certified = bool(b.certified and b.lower is not None)
    if not certified:
        note = "; ".join(x for x in (note, b.reason or "no certified lower end") if x)
    lower = [None] * len(at) if b.lower is None else np.ravel(b.lower).tolist()
    step = None if b.step is None else float(b.step)
    return tuple(Row(x, lo, up, certified, b.method, step, note)
                 for x, lo, up in zip(at, lower, np.ravel(b.upper).tolist()))


def report(mechanism: Mechanism, *, accuracy: float = DEFAULT_ACCURACY, deltas: Sequence[float] = DELTAS,
           fprs: Sequence[float] = FPRS, priors: Sequence[float] = PRIORS, points: int = 201) -> PrivacyReport:
    """The report card of ``mechanism`` (module docstring) at ``accuracy``; ``deltas``, ``fprs``
    and ``priors`` choose the rows of its tables, ``points`` the α of its trade-off curve."""
    if not isinstance(mechanism, Mechanism):
        raise TypeError(f"mechanism must be a dpaccount Mechanism, got {mechanism!r}")
    accuracy = v.in_interval("accuracy", accuracy, 0.0, 1.0)
    deltas = tuple(v.in_interval("deltas", d, 0.0, 1.0) for d in deltas)
    fprs = tuple(v.in_interval("fprs", a, 0.0, 1.0, False, False) for a in fprs)
    priors = tuple(v.in_interval("priors", p, 0.0, 1.0, False, False) for p in priors)
    points = v.count("points", points, minimum=3)
    try:
        spec = json.dumps(mechanism.to_spec(), indent=1)
    except TypeError:
        spec = None
    unavailable = []

    def section(label, compute, empty):
        try:
            return compute()
        except DPAccountError as err:
            unavailable.append(f"{label}: {err}")
            return empty

    m, acc = mechanism, accuracy
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        eps = section("ε(δ) intervals", lambda: _rows(deltas, lambda d: m.get_approxDP_bounds(d, accuracy=acc)), ())
        if not eps:  # no certified interval (no dominating pairs): the plain upper bound
            eps = section("ε(δ)", lambda: tuple(Row(d, None, float(m.get_approxDP(d, accuracy=acc)), False,
                                                    m.available_methods()[0], None, "upper bound only")
                                                for d in deltas), ())
        tpr = section("TPR at FPR", lambda: _rows(fprs, lambda a: m.get_tpr_bounds(a, accuracy=acc)), ())
        adv = section("advantage", lambda: _rows((None,), lambda _: m.get_advantage_bounds(accuracy=acc))[0], None)
        bayes = section("Bayes risk", lambda: _rows(priors, lambda p: m.get_bayes_risk_bounds(p, accuracy=acc)), ())
        curve = section("trade-off curve", lambda: _curve(m, points, acc), (None, None, None))
        mu = section("μ-GDP", lambda: float(m.mu_GDP(accuracy=acc, tail=GDP_TAIL)), None)
        clt = None
        pairs = m.optional("pairs")
        if pairs is None or pairs.gaussian_mu is None:  # (a Gaussian composition is exactly μ-GDP: no CLT)
            try:
                clt = float(m.mu_GDP(method="clt", accuracy=acc))
            except DPAccountError:
                pass
    approximate = [f"the dotted curve G_μ at μ = {clt:.4g} is the central limit approximation of Bu, Dong, Long "
                   f"& Su (2020): an approximation, not a bound; the tables are certified"] if clt is not None else []
    approximate += sorted({str(w.message) for w in seen if issubclass(w.category, (ApproximationWarning,
                                                                                   RDPFallbackWarning))})
    return PrivacyReport(title=title_of(m), name=m.name, spec=spec, relation=str(m.relation), accuracy=acc,
                         epsilon=eps, tpr=tpr, advantage=adv, bayes_risk=bayes, alphas=curve[0],
                         beta_lower=curve[1], beta_upper=curve[2], mu=mu, clt_mu=clt,
                         approximate=tuple(approximate), unavailable=tuple(unavailable))


def _curve(mechanism: Mechanism, points: int, accuracy: float) -> tuple:
    """(α, certified lower β, upper β or None where the upper end is not the mechanism's)."""
    alphas = np.unique(np.concatenate((np.linspace(0.0, 1.0, points), np.geomspace(1e-6, 1e-2, 41))))
    b = mechanism.get_fDP_bounds(alphas, accuracy=accuracy)
    return alphas, np.asarray(b.lower, dtype=float), (np.asarray(b.upper, dtype=float) if b.certified else None)
