"""The characteristic-function accountant: compose by adding log φ, invert once.

A direction of a composition is a tuple of (pair, count) (``PairComposition``); its privacy loss
under P has the finite-part moment generating function
M(s) = Π_j M_j(s)^{k_j} (``cf/characteristic.py``; the integer powers make any
branch of log M_j valid) and P(L = +∞) = 1 − Π_j (1 − p_inf_j)^{k_j}.

Inversion (Zhu, Dong & Wang, AISTATS 2022, Lévy's formula; here in the
Laplace-transform form of the hockey-stick function). With
f(x) = (1 − e^{ε−x})_+, δ(ε) = P(L = ∞) + E_P[f(L); L finite], and on any line
Re s = c ≠ 0, −1 < c,

    δ(ε) = P(L=∞) + I(c)   (c > 0),        δ(ε) = 1 + I(c)   (−1 < c < 0),
    I(c) = (1/π) Re ∫_0^∞ M(c+it) e^{−(c+it)ε} / ((c+it)(c+1+it)) dt

(moving the line across the pole at s = 0 adds its residue 1). Four pieces:

* the line Re s = c and the trapezoid step h (``cf/contour.py``: the c that
  needs the fewest nodes for a rigorous aliasing bound, not the saddle point);
* atoms on a common lattice (randomized response, Laplace): exact over one
  period (``cf/lattice.py``), the rest R = M − A on the line;
* the line integral with a smooth window (``cf/window.py``, ``cf/line.py``),
  whose reach τ grows by half until the window error is below the tolerance;
* the tolerance: rtol × δ. δ is not known in advance; the first pass takes the
  Chernoff bound min_c M(c)e^{−cε}/(1+c) ≥ δ − P(L=∞) for it, and where the
  answer comes out far below (Poisson subsampling with small q·T: 1e4 times
  below) the pass is repeated with rtol × the answer; the answer is the pass
  with the least error.

A query's line samples (``_Run``) serve its root search and end with it: the
cached ``Direction`` keeps only what its terms determine, so that no answer
depends on the queries asked before it.

The error returned is the sum of the aliasing bound, the window error (the
rigorous t-domain bound where it is small enough, else the estimate), the
bound on float and evaluation error of M, the lattice part's bounds and the
rounding of P(L = ∞). ``certified`` is True when every term is a rigorous bound:
every pair's M is a closed form or finite sum and the window error is the
t-domain bound. The error analysis is written out in docs/cf_error_analysis.md.
"""
import functools
import math
import threading
from typing import NamedTuple

import numpy as np

from ..lazy import lazy
from .. import validation as v
from ..errors import RepresentationUnavailable
from ..numerics import ULP_OF_ONE as U
from .characteristic import atoms, exact, log_mgf, log_mgf_continuous, log_mgf_error, loss_sup, quadrature_size
from .contour import C_MAX, GRID, RealMGF, log_alias, plan
from .lattice import common_lattice, lattice_part
from .line import Line, times

optimize = lazy("scipy.optimize")

_RTOL = 1e-6
_MAX_SAMPLES = 2 ** 20
_WORK = 3e7             # quadrature-node (or atom) × sample evaluations for one line
_PASSES = 8             # passes that tighten the tolerance towards rtol × δ
_GROW = 1.5             # the window's reach grows by this factor per round
_HEADROOM = 1e-3        # the first pass aims at rtol × the Chernoff bound × this
_CERT_RTOL = 1e-5       # a certified window error may be this large relative to δ
_CERT_SAMPLES = 2 ** 17  # samples the pursuit of that bound may take


class Answer(NamedTuple):
    """δ(ε) of one direction: the value, its error (bound or estimate), and whether
    the error is a rigorous bound."""

    delta: float
    error: float
    certified: bool


def composed_log_mgf(terms, s):
    """Σ_j k_j log M_j(s) for a tuple of (pair, count)."""
    s = np.asarray(s, dtype=complex)
    return sum((times(k, log_mgf(p, s)) for p, k in terms), np.zeros(s.shape, dtype=complex))


def composed_log_phi(terms, t):
    """log φ(t) = Σ_j k_j log φ_j(t) of one direction: compositions add log φ."""
    return composed_log_mgf(terms, 1j * np.asarray(t, dtype=float))


class _Run:
    """The line samples of one query: a root search of ε(δ) evaluates δ at a dozen ε on
    them for the price of about one. Never kept beyond its query: which line a query
    reuses, and how far its samples reach, would make its answer depend on the
    queries asked before it."""

    __slots__ = ("line", "tau")

    def __init__(self):
        self.line, self.tau = None, 0.0


class Direction:
    """One direction's inversion. Shared through the cache ``direction``, it keeps only
    what is a function of its terms alone (M on the real axis, evaluation errors, work,
    Chernoff bounds, and the answers of ``delta``, each from a fresh ``_Run``), so that
    no answer depends on the queries asked before; its queries hold a lock."""

    def __init__(self, terms):
        self.terms = terms
        self.log_fin = sum(k * math.log1p(-p.p_inf) if p.p_inf < 1 else -math.inf for p, k in terms)
        self.p_inf = max(-math.expm1(self.log_fin), 0.0)
        # each pair's P(L = +∞) as computed errs by its ``end_errors()`` (a finite pair's, from
        # logs that err by their ``log_err``); 1 − Π(1 − p_j)^{k_j} has slopes ≤ k_j in p_j
        self.p_inf_err = sum(k * p.end_errors()[0] for p, k in terms) * (1 + 8 * U)
        self.top = sum(k * loss_sup(p) for p, k in terms)
        self.lat = common_lattice(terms)
        self.part = "remainder" if self.lat not in (None, False) else "whole"
        zero = np.zeros(1, dtype=complex)
        self.has_line = self.part == "whole" or any(log_mgf_continuous(p, zero) is not None for p, _ in terms)
        self.mgf = RealMGF(terms, self.part if self.has_line else "atoms")
        self.chernoff = self.mgf if self.mgf.part == "whole" else RealMGF(terms, "whole")
        self.exact = all(exact(p) for p, _ in terms)
        self._eta, self._works, self._guesses, self._answers = {}, {}, {}, {}
        self._lock = threading.RLock()

    def _log_eta(self, c):
        """log Σ_j k_j |ΔM_j(c)|/M_j(c): the relative evaluation error at t = 0."""
        if c not in self._eta:
            s = np.array([c + 0j])
            self._eta[c] = float(np.logaddexp.reduce(
                [math.log(k) + float(log_mgf_error(p, s)[0]) - float(log_mgf(p, s).real[0]) for p, k in self.terms]))
        return self._eta[c]

    def _log_guess(self, eps):
        """log of the Chernoff bound min_c M(c)e^{−cε}/(1+c) ≥ δ − P(L=∞), and its c."""
        if eps not in self._guesses:
            grid = GRID[GRID > 0]
            self.chernoff.fill(grid)
            vals = np.array([self.chernoff(c) for c in grid]) - grid * eps - np.log1p(grid)
            self._guesses[eps] = (float(np.min(vals)), float(grid[np.argmin(vals)]))
        return self._guesses[eps]

    def _plan(self, eps, log_tol):
        return plan(self.mgf, eps, log_tol, self._log_eta, self._work, allow_negative=eps < self._mean())

    def _work(self, c):
        """Work of one sample on the line Re s = c at |t| ≈ 256 (atoms and quadrature nodes)."""
        if c not in self._works:
            self._works[c] = 1 + sum(len(atoms(p)[0]) + quadrature_size(p, c, 256.0) for p, _ in self.terms)
        return self._works[c]

    def chernoff_bound(self, eps):
        """P(L=∞) + min_c M(c)e^{−cε}/(1+c): an upper bound on δ(ε) from M on the real
        axis alone (no inversion; rigorous where M is); P(L=∞) above the largest loss."""
        if self.log_fin == -math.inf:
            return 1.0
        if eps > self.top + 1e-9 * (1.0 + abs(self.top)):
            return self.p_inf
        with self._lock:
            return min(1.0, self.p_inf + math.exp(self._log_guess(eps)[0]))

    def _line_for(self, run, eps, log_tol):
        c, y = self._plan(eps, log_tol)
        line = run.line  # kept for a nearby line no more than twice too coarse (one halving)
        if line is None or c * line.c <= 0 or not 0.5 <= c / line.c <= 2.0 or line.h > 4 * math.pi / y:
            line, run.tau = Line(self.terms, c, 2 * math.pi / y, self.part), 0.0
        run.line = line
        return line

    def _mean(self):
        eta = 1e-6
        return (self.chernoff(eta) - self.chernoff(-eta)) / (2 * eta)

    def _line_part(self, run, eps, tol, rtol, offset):
        """(I, error, certified) of the line integral (module docstring). The window's reach
        grows until its estimated error is below tol or rtol × the answer so far
        (offset + I) and, where every M is exact and the envelope decays, on (within a
        smaller budget) until the t-domain bound is below the goal or 1e-5 × the answer;
        where it ends so, the bound is the error and the answer is certified."""
        line = run.line
        c, spent = line.c, line.work  # the work budget is per pass: the run keeps the samples
        certify = self.exact and line.decays()
        tau = max(run.tau, line.first_reach())  # grows by half until the window error is small
        while True:
            line.extend(tau)
            value, rounding = line.sums(eps, tau)
            goal = max(tol, 0.5 * rtol * abs(offset + value))
            # the last change of V and 1/8 of the one before (a change may cancel by chance);
            # where |M| recurs (atoms on no lattice: returns enter one by one) the larger of the two
            before = line.sums(eps, tau / _GROW)[0]
            last, previous = abs(value - before), abs(before - line.sums(eps, tau / _GROW ** 2)[0])
            est = max(last, previous if line.period > 0 else previous / 8)
            bound = line.window_bound(eps, tau) if certify else math.inf
            bound_goal = max(goal, _CERT_RTOL * abs(offset + value))
            alias = math.exp(min(log_alias(self.mgf, c, eps, 2 * math.pi / line.h, tau, line.taper), 700.0))
            room = 2 * len(line.t) < _MAX_SAMPLES and line.work - spent + line.cost(tau) * len(line.t) < _WORK
            if alias > 0.25 * tol and room:
                line.halve()
                continue
            grown = (_GROW - 1.0) * tau / line.h
            pursue = certify and bound > 0.5 * bound_goal and len(line.t) + grown <= _CERT_SAMPLES
            if (est <= 0.5 * goal and not pursue) or len(line.t) + grown > _MAX_SAMPLES or \
                    line.work - spent + line.cost(_GROW * tau) * grown > _WORK or tau > line.reach_cap():
                break
            tau *= _GROW
        run.tau = tau
        certified = bound <= bound_goal
        return value, 1.01 * alias + rounding + (bound if certified else est), certified

    def delta(self, eps, rtol=_RTOL):
        """δ(ε) of this direction with its error (an ``Answer``), from a fresh ``_Run``: a
        function of (terms, ε, rtol) alone, and so remembered."""
        with self._lock:
            if (eps, rtol) not in self._answers:
                if len(self._answers) > 4096:
                    self._answers.clear()
                self._answers[eps, rtol] = self._delta(_Run(), eps, rtol)
            return self._answers[eps, rtol]

    def _delta(self, run, eps, rtol):
        """δ(ε) on the run's samples; passes tighten the tolerance. The answer is the pass
        with the least error (every pass's error holds for its own value): a tighter
        tolerance may move the line where its samples resolve less (c near 0, where the
        tilted mass is ~1 and δ a small difference), and once a resolved answer is in
        hand a pass that came out worse ends the tightening."""
        if self.log_fin == -math.inf:
            return Answer(1.0, 0.0, True)
        if eps > self.top + 1e-9 * (1.0 + abs(self.top)):  # no finite loss above ε
            return Answer(self.p_inf, 4 * U * self.p_inf + self.p_inf_err, True)
        log_guess, c_guess = self._log_guess(eps)
        if c_guess > 0.99 * C_MAX and any(quadrature_size(p, c_guess, 1.0) for p, _ in self.terms):
            # the saddle point pins at the cap with a part needing quadrature: δ far below what
            # the line integral resolves (Poisson q ≈ 1e-130 took minutes and tens of GB): refuse
            raise RepresentationUnavailable(f"method='cf' cannot resolve δ at eps={eps!r}: its saddle point "
                                            f"reaches the cap c = {C_MAX}; use method='pld' or 'analytic'")
        tol = _HEADROOM * rtol * math.exp(log_guess) + 1e-300
        best = None
        for _ in range(_PASSES):
            ans = self._once(run, eps, tol, rtol)
            if best is not None and ans.error >= best.error:
                if best.delta > 2 * best.error:
                    return best
            else:
                best = ans
            if ans.delta > 2 * ans.error:
                if ans.error <= 2 * rtol * ans.delta or tol <= rtol * ans.delta:
                    return best
                tol = max(0.5 * rtol * ans.delta, 1e-300)
            elif tol <= 1e-290:
                return best
            else:
                tol = max(tol * 1e-3, 1e-300)
        return best

    def _once(self, run, eps, tol, rtol):
        line = self._line_for(run, eps, math.log(tol)) if self.has_line else None
        c = line.c if line else self._plan(eps, math.log(tol))[0]
        i_a, e_a = lattice_part(self.terms, eps, c, tol, self.lat)
        base = self.p_inf if c > 0 else 1.0
        i_r, e_r, certified = self._line_part(run, eps, tol, rtol, base + i_a) if line else (0.0, 0.0, True)
        delta = base + i_a + i_r
        err = e_a + e_r + 8 * U * (abs(base) * (1.0 + sum(k for _, k in self.terms)) + abs(delta)) \
            + (self.p_inf_err if c > 0 else 0.0)
        return Answer(min(max(delta, 0.0), 1.0), err, certified and self.exact)

    def epsilon(self, delta, side=1.0, rtol=_RTOL):
        """The ε ≥ 0 where δ(ε) + side·err(ε) = ``delta`` (side = 1: the pessimistic root,
        −1 the optimistic one), by Brent's method on the logarithm; ∞ when
        P(L = ∞) ≥ delta or no root lies below 1e6. Returns (ε, certified).

        Where the Chernoff bound is at most ``delta``/2 the root lies to the right and the
        bound stands in for δ (no inversion); the bracket starts at the ε where the bound
        meets ``delta`` and halves down from there."""
        with self._lock:
            return self._epsilon(delta, side, rtol)

    def _epsilon(self, delta, side, rtol):
        # (the optimistic root: P(L = ∞) at the lower end of its error)
        if self.p_inf - (self.p_inf_err if side < 0 else 0.0) >= delta:
            return math.inf, True
        seen = {}  # ε → (f, certified), remembered: the samples may grow between calls, the
        #            bracket's signs may not change
        run = _Run()  # this search's samples, shared by its ε

        def f(e):
            if e not in seen:
                bound = self.chernoff_bound(e)
                if bound <= 0.5 * delta:
                    seen[e] = (math.log(max(bound, 1e-300)) - math.log(delta), self.exact)
                else:
                    ans = self._delta(run, e, rtol)
                    seen[e] = (math.log(max(ans.delta + side * ans.error, 1e-300)) - math.log(delta), ans.certified)
            return seen[e][0]

        hi = self._chernoff_epsilon(delta)
        while f(hi) > 0:
            hi *= 2.0
            if hi > 1e6:
                return math.inf, False
        lo = 0.5 * hi
        while f(lo) <= 0:
            hi, lo = lo, 0.5 * lo
            if lo < 1e-9:
                if f(0.0) <= 0:
                    return 0.0, seen[0.0][1]
                lo = 0.0
                break
        root = optimize.brentq(f, lo, hi, xtol=1e-12, rtol=1e-12)
        # Brent's root lies within its tolerance on either side: step to the side of ``side``
        # (f falls in ε: f(root) ≤ 0 on the pessimistic side, ≥ 0 on the optimistic one)
        step = 4e-12 * (1.0 + root)
        for _ in range(8):
            if side * f(root) <= 0 or side == 0:
                break
            root = max(root + (step if side > 0 else -step), 0.0)
        return root, seen[root][1]

    def _chernoff_epsilon(self, delta):
        """The ε > 0 where the Chernoff bound falls to ``delta`` (bisection on its log; 1 if
        it is below already at ε = 1e-6, 1e6 if never)."""
        lo, hi = 1e-6, 1.0
        if self.chernoff_bound(lo) <= delta:
            return 1.0
        while self.chernoff_bound(hi) > delta:
            lo, hi = hi, 2.0 * hi
            if hi > 1e6:
                return 1e6
        for _ in range(40):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if self.chernoff_bound(mid) > delta else (lo, mid)
        return hi


@functools.lru_cache(maxsize=16)
def direction(terms):
    """The (cached) ``Direction`` of a tuple of (pair, count)."""
    return Direction(terms)


def _terms(terms):
    return tuple((p, v.count("count", k)) for p, k in terms)


def cf_to_delta(terms, eps, rtol=_RTOL):
    """(δ(ε), error) of one direction (a tuple of (pair, count)); the error is a
    rigorous bound where ``direction(terms).delta(eps).certified``, else an estimate."""
    eps = v.real("eps", eps)
    if not math.isfinite(eps):
        raise ValueError(f"eps must be finite, got {eps!r}")
    ans = direction(_terms(terms)).delta(eps, rtol)
    return ans.delta, ans.error


def epsilon_root(terms, delta, side=1.0, rtol=_RTOL):
    """The ε where δ(ε) + side·err(ε) = ``delta`` (``Direction.epsilon``)."""
    delta = v.probability("delta", delta, lo_open=True, hi_open=True)
    return direction(_terms(terms)).epsilon(delta, side, rtol)[0]


def cf_to_epsilon(terms, delta, rtol=_RTOL):
    """(ε, error) of one direction: ε is the root of the inverted δ(ε) = ``delta``,
    the error the distance to the root of δ + err."""
    eps = epsilon_root(terms, delta, 0.0, rtol)
    return eps, (epsilon_root(terms, delta, 1.0, rtol) - eps if math.isfinite(eps) else 0.0)
