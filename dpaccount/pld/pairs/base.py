"""Dominating pairs: the object every tight accountant starts from (the
protocol, the Gaussian and Laplace pairs; finite pairs: ``discrete_pair.py``).

A pair (P, Q) dominates a mechanism M in one neighbouring direction when
H_α(M(D) || M(D')) ≤ H_α(P || Q) for every α = e^ε > 0 and every neighbours
D, D' in that direction (Zhu, Dong & Wang 2022, Def. 7). Everything here is
described through the privacy loss L = log(dP/dQ):

* ``masses(edges)`` — the P- and Q-probabilities of L in the cells
  (−∞, e₀], (e₀, e₁], …, (e_{n−1}, ∞) (finite L only). This is all the
  discretisers (``pld/grids/discretise.py``) need, and each cell is computed directly,
  never as a difference of two numbers close to 1. ``masses_of(…, errors=True)``
  also bounds each cell's error: a few ulps of itself by default, more where a
  cell is a difference of two computed values (the Gaussian's and a
  monotone-loss pair's, from log F: ``pld/pairs/log_cells.py``) or sums atoms whose
  logs err (``DiscretePair``); each pair states its own. ``stacked_masses(pairs,
  edges, sizes)`` does it for many pairs at once (each on its own run of the edges): a
  heterogeneous composition asks hundreds of distinct pairs for a few hundred
  cells each, where per-call overhead outweighs the arithmetic; pairs of one
  class are vectorised together, same values.
* ``p_inf`` — P(L = +∞), the mass where Q vanishes; ``q_ninf`` — Q(L = −∞),
  the mass where P vanishes (it matters once the pair is subsampled);
  ``end_errors()`` bounds their errors (for the cell a subsampled pair lands
  them in).
* ``atom_masses(points)`` — the P- and Q-mass of L exactly at the given
  loss values (the atoms; zero for a continuous loss).
* ``delta(eps)`` — the hockey-stick curve H_{e^ε}(P||Q) for every real ε.
* ``reverse()`` — the pair (Q, P), whose loss is −L; where the loss has no
  atom at a finite value (``atomless``) its cells are the pair's own, mirrored.
* ``lattice`` — g > 0 if every finite loss value is an integer multiple of g
  (so a grid of step g/m represents the pair exactly), else None;
  ``anchor`` — a spacing whose divisors make good grid steps (the atoms of a
  pair that also has a continuous part), else None.
* ``gaussian_mu`` — μ if the pair *is* (N(μ,1), N(0,1)); compositions of such
  pairs are again Gaussian (``converters/gdp.py``).
* ``tight`` — True only where the pair is *attained*: P and Q are the output
  laws of the mechanism (or of a member of the class it stands for) on some
  neighbours D, D' of the direction the pair is used for (its ``reverse()``
  on (D', D), the other direction). Then a lower bound on the pair's
  hockey-stick curve bounds the mechanism's, and so do products of tight
  pairs (every step sees the same D, D'). The default is the safe False: a
  pair that merely dominates (a hull, an envelope, a pessimistic grid) says
  nothing from below; each True states its reason. ``witnesses`` — for a pair
  that is not tight, attained alternatives one of which the adversary may
  pick at each use (``pld/profiles/attained.py``: where the lower end of a certified
  interval comes from then).

Hockey-stick identities used throughout (all exact):
  H_α(P||Q) = P(L > log α) − α Q(L > log α),
  H_α(P||Q) = 1 − α + α H_{1/α}(Q||P)      (swap, for any α > 0).
"""
import math
from abc import ABC, abstractmethod

import numpy as np

from ...converters.gdp import delta_gdp
from ...errors import GridTooLarge
from .log_cells import normal_cells, stacks
from ...numerics import ULP_OF_ONE as _U

_SUBNORMAL = math.ulp(0.0)  # the subnormal spacing: a result that underflows errs by spacings, not ulps
_NORMAL = np.finfo(float).tiny  # the least normal float


def underflow_slack(values, live):
    """16 subnormal spacings where a computed mass is below the normal range and not an
    exact 0 (``live``): a result that underflows errs by spacings, not by ulps of itself."""
    return np.where(live & (values < _NORMAL), 16 * _SUBNORMAL, 0.0)
CELL_ULPS = 8  # a cell computed directly is accurate to that many ulps of itself (``DominatingPair._masses``)
MAX_ATOMS = 1 << 23  # outcomes of a finite pair: as many as the grid cap (``pld/compose.MAX_GRID``)


def check_atoms(what, count):
    """Refuse up front a finite pair of more than ``MAX_ATOMS`` outcomes (its
    arrays alone would take ~16·count bytes, and every grid built from it more)."""
    if count > MAX_ATOMS:
        raise GridTooLarge(f"{what} has {count} outcomes; the cap is {MAX_ATOMS}")
    return count


class DominatingPair(ABC):
    """(P, Q) seen through its privacy loss L = log(dP/dQ); immutable."""

    lattice = None
    anchor = None
    gaussian_mu = None
    atomless = False  # True: no atom at a finite loss, so reverse()'s cells are these, mirrored
    tight = False  # attained by some neighbours (module docstring); False unless a reason is stated
    refinable = False  # built at a lattice precision ρ that a finer one narrows (``dpaccount/precision.py``)
    cuts_to_infinity = False  # P(L = +∞) holds mass of finite losses its construction cut off (a heavy tail)
    witnesses = ()  # compositions ((pair, count), ...) the adversary may pick per use (``pld/profiles/attained.py``)
    # losses an optimistic grid should hold as grid points: atoms or near-atoms at the edges of
    # the support, the heaviest first (``discretise_optimistic.py``); () for none
    edges = ()

    @property
    def atomless_off_zero(self) -> bool:
        """No atom at a finite loss other than 0 (a composition of such pairs has at most
        one atom, at 0: its density elsewhere is a density, ``profiles/bulk.py``)."""
        return self.atomless

    @property
    @abstractmethod
    def p_inf(self):
        """P(L = +∞)."""

    q_ninf = 0.0

    @abstractmethod
    def masses(self, edges):
        """(A, B): P- and Q-masses of finite L in the len(edges)+1 cells
        (edges non-decreasing)."""

    def _masses(self, edges, errors):
        """``masses``, and with ``errors`` bounds on each cell's absolute error:
        ``CELL_ULPS`` ulps of the cell unless a subclass knows more (a cell that is
        a difference of two computed values, ``pld/pairs/log_cells.py``)."""
        a, b = self.masses(edges)
        return (a, b, CELL_ULPS * _U * a, CELL_ULPS * _U * b) if errors else (a, b)

    @classmethod
    def masses_of(cls, pairs, edges, sizes, errors=False):
        """``masses`` of several pairs of this class: pair i on the i-th run of
        ``sizes[i]`` edges, its sizes[i] + 1 cells concatenated in order; with
        ``errors``, (A, B, err_A, err_B), bounds on each cell's absolute error too.
        Subclasses vectorise it (elementwise the same operations)."""
        runs = np.split(np.asarray(edges, dtype=float), np.cumsum(sizes)[:-1])
        cells = [p._masses(e, errors) for p, e in zip(pairs, runs)]
        return tuple(np.concatenate(parts) for parts in zip(*cells))

    def end_errors(self):
        """Bounds on the absolute errors of (``p_inf``, ``q_ninf``) as computed: 16u(1 +
        |log m|) of each mass m by default (a logsumexp and an exp, or a product), more
        where a pair's logs err more (``DiscretePair``)."""
        return tuple(16 * _U * (1 + abs(math.log(m))) * m if m > 0 else 0.0 for m in (self.p_inf, self.q_ninf))

    def end_bounds(self):
        """((low, high) of P(L = +∞), (low, high) of Q(L = −∞)): ``p_inf`` is rounded up
        already (its high end); ``q_ninf`` is the value as computed; each moved by its
        ``end_errors()`` (the difference rounded by ≤ ½ ulp: moved by 2u more). Each use
        takes the end that errs its safe way (docs/portability.md)."""
        e_p, e_q = self.end_errors()
        p, q = self.p_inf, self.q_ninf
        return ((max((p - e_p) * (1 - 2 * _U), 0.0), p),
                (max((q - e_q) * (1 - 2 * _U), 0.0), min((q + e_q) * (1 + 2 * _U), 1.0) if q > 0 else 0.0))

    def pure_epsilon(self):
        """A certified upper bound on the essential supremum of L under P: the
        pure ε (δ(ε) = 0 for every ε at least it); +∞ (the default) where L is
        unbounded above or P(L = +∞) > 0."""
        return math.inf

    def bound(self, pessimistic):
        """The pair to discretise for an upper (``pessimistic``) or a lower bound: this one,
        unless the pair is known through two (``random_allocation.AllocationPair``)."""
        return self

    def atom_masses(self, points):
        """(P(L = ℓ), Q(L = ℓ)) for each ℓ in ``points`` (default: no atoms)."""
        zeros = np.zeros(len(points))
        return zeros, zeros.copy()

    @abstractmethod
    def delta(self, eps, upper=True):
        """H_{e^ε}(P || Q) for real ε (vectorised), rounded up: an upper bound
        within ~1e-12 of the exact value (upper=False: rounded down)."""

    @abstractmethod
    def reverse(self):
        """The pair (Q, P)."""

    @abstractmethod
    def key(self):
        """A hashable description (equal keys ⇔ equal pairs)."""

    def __eq__(self, other):
        return isinstance(other, DominatingPair) and self.key() == other.key()

    def __hash__(self):  # kept: a pair is immutable, and a nested key is rebuilt per call
        if "_hash" not in self.__dict__:
            self.__dict__["_hash"] = hash(self.key())
        return self.__dict__["_hash"]

    def __getstate__(self):  # string hashes differ between processes: a pickle carries no hash
        return {k: v for k, v in self.__dict__.items() if k != "_hash"}

    def __repr__(self):
        return f"{type(self).__name__}{self.key()[1:]}"


def atoms_at(points, where, p_mass, q_mass):
    """Atom masses at ``where`` (arrays) picked out at ``points`` (within 1e-12): each
    atom's candidate points found by bisection in the sorted points (a bracket one ulp
    wider than the test, which then decides), not by a pass over all points per atom
    (a finite pair of 10⁵ atoms asked at 10⁴ points)."""
    points = np.asarray(points, dtype=float)
    where, p_mass, q_mass = (np.atleast_1d(np.asarray(x, dtype=float)) for x in (where, p_mass, q_mass))
    p_out, q_out = np.zeros(len(points)), np.zeros(len(points))
    order = np.argsort(points, kind="stable")
    ordered = points[order]
    tol = 1e-12 * np.maximum(1.0, np.abs(where))
    lo = np.searchsorted(ordered, np.nextafter(where - tol, -np.inf), side="left")
    hi = np.searchsorted(ordered, np.nextafter(where + tol, np.inf), side="right")
    for shift in range(int(np.max(hi - lo, initial=0))):
        idx = lo + shift
        live = np.flatnonzero(idx < hi)
        live = live[np.abs(ordered[idx[live]] - where[live]) <= tol[live]]
        np.add.at(p_out, order[idx[live]], p_mass[live])
        np.add.at(q_out, order[idx[live]], q_mass[live])
    return p_out, q_out


def per_point(values, sizes):
    """A parameter of pairs (``values[i]`` of pair i) at each of their ``sizes[i]`` points:
    one number where all pairs share it (the same floats in every elementwise operation,
    without the array), else each repeated."""
    first = values[0]
    return float(first) if all(v == first for v in values) else np.repeat(values, sizes)


def own(arrays):
    """``arrays`` as contiguous float arrays the caller may write in place: each as it is
    where it is one (``masses_of`` builds new arrays), a copy where it is not or where
    two of them may share memory."""
    out = [np.ascontiguousarray(x, dtype=float) for x in arrays]
    for i, x in enumerate(out):
        if not x.flags.writeable or any(_may_share(x, y) for y in out[:i]):
            out[i] = x.copy()
    return out


def _may_share(x, y):
    """``np.may_share_memory``, False at once for two distinct arrays that own their memory."""
    return (x is y or x.base is not None or y.base is not None) and np.may_share_memory(x, y)


def _z_error(z, mu):
    """u(|z| + μ): the bound on z's error of ``GaussianPair.masses_of``."""
    out = np.abs(z)
    out += mu
    out *= _U
    return out


def stacked_masses(pairs, edges, sizes, errors=False):
    """(A, B) of every pair on its own run of the edges (``masses_of``),
    concatenated in order: the pairs of each class together; with ``errors``,
    (A, B, err_A, err_B)."""
    sizes = np.asarray(sizes, dtype=np.int64)
    edges = np.asarray(edges, dtype=float)
    kinds = [type(p) for p in pairs]
    if len(set(kinds)) <= 1:
        return (kinds[0].masses_of(pairs, edges, sizes, errors) if pairs else (np.zeros(0),) * (4 if errors else 2))
    run = np.repeat(np.arange(len(pairs)), sizes)          # the pair of each edge
    cell_run = np.repeat(np.arange(len(pairs)), sizes + 1)  # the pair of each cell
    out = np.empty((4 if errors else 2, len(cell_run)))
    for cls in dict.fromkeys(kinds):
        mine = np.array([k is cls for k in kinds])
        out[:, mine[cell_run]] = cls.masses_of([p for p, m in zip(pairs, mine) if m], edges[mine[run]],
                                               sizes[mine], errors)
    return tuple(out)


class GaussianPair(DominatingPair):
    """(N(μ, 1), N(0, 1)): L ~ N(μ²/2, μ²) under P and N(−μ²/2, μ²) under Q."""

    def __init__(self, mu):
        self._mu = float(mu)

    gaussian_mu = property(lambda self: self._mu)
    p_inf = 0.0
    atomless = True
    tight = True  # the outputs N(Δ, σ²), N(0, σ²) of a query that moves by its sensitivity Δ (μ = Δ/σ)

    def masses(self, edges):
        return self.masses_of([self], edges, [len(edges)])

    @classmethod
    def masses_of(cls, pairs, edges, sizes, errors=False):
        """P's cells from z = (e − μ²/2)/μ, Q's from (e + μ²/2)/μ (``normal_cells``): short
        runs of both in one call (their cells stacked: the same floats as a call each)."""
        mu = per_point([p._mu for p in pairs], sizes)
        e = np.asarray(edges, dtype=float)
        n, runs = len(e), len(sizes)
        both = stacks(2 * n, 2 * runs)
        z = np.empty(2 * n) if both else None
        # z = (e ∓ μ²/2)/μ: μ², the sum and the quotient each round by ≤ ½ ulp, so z errs by ≤ u(|z| + μ)
        z_p = np.subtract(e, mu * mu / 2, out=None if z is None else z[:n])
        z_q = np.add(e, mu * mu / 2, out=None if z is None else z[n:])
        z_p /= mu
        z_q /= mu
        if both:
            mu = mu if np.ndim(mu) == 0 else np.concatenate((mu, mu))
            got = normal_cells(z, np.concatenate((sizes, sizes)), _z_error(z, mu) if errors else None)
            # (A, B), then (err_A, err_B): each array's first n + runs cells are P's
            return tuple(part for x in (got if errors else (got,)) for part in (x[:n + runs], x[n + runs:]))
        a, b = (normal_cells(z, sizes, _z_error(z, mu) if errors else None) for z in (z_p, z_q))
        return (a[0], b[0], a[1], b[1]) if errors else (a, b)

    def delta(self, eps, upper=True):
        return delta_gdp(eps, self._mu, upper)

    def reverse(self):
        return self  # symmetric up to the reflection x ↦ μ − x

    def key(self):
        return ("gaussian", self._mu)


class DominatingGaussianPair(GaussianPair):
    """(N(μ, 1), N(0, 1)) as a dominating pair only, attained by no neighbours: a release whose
    shift has norm at most μ (an upper bound on a sensitivity, or the largest of several
    shifts standing for each). Its curves are the Gaussian's; ``tight`` is False, so no lower
    end is read from it."""

    tight = False

    def key(self):
        return ("gaussian", self._mu, "dominating")


class LaplacePair(DominatingPair):
    """(Lap(1, b), Lap(0, b)): the Laplace mechanism with sensitivity/scale 1/b.

    With ε₀ = 1/b the loss is −ε₀ on x ≤ 0, (2x − 1)/b on (0, 1), +ε₀ on x ≥ 1:
    atoms P(L=ε₀) = ½, P(L=−ε₀) = ½e^{−ε₀} and a continuous part between.
    δ(ε) = 1 − e^{(ε−ε₀)/2} on |ε| < ε₀ (Balle & Wang 2018 / the talk's table).
    """

    def __init__(self, eps0):
        self._e0 = float(eps0)
        self.anchor = self._e0  # atoms at ±ε₀ sit on grids of step ε₀/m

    p_inf = 0.0
    tight = True  # the outputs Lap(Δ, b), Lap(0, b) of a query that moves by its sensitivity Δ (ε₀ = Δ/b)

    def pure_epsilon(self):
        return self._e0  # L ≤ ε₀, the pair's own parameter (exact)

    def atom_masses(self, points):
        e0, half = self._e0, 0.5
        return atoms_at(points, (-e0, e0), (half * math.exp(-e0), half), (half, half * math.exp(-e0)))

    def masses(self, edges):
        return self._masses(edges, False)

    def _masses(self, edges, errors):
        """Each cell (lo, hi] as its continuous part on (lo, hi] ∩ (−ε₀, ε₀) plus the
        atoms at ±ε₀ it holds, the continuous part computed directly, never as a
        difference of distribution functions (P(L ≤ ε) = ½e^{(ε−ε₀)/2},
        Q(L ≤ ε) = 1 − ½e^{−(ε+ε₀)/2} on [−ε₀, ε₀)):

            P: ½e^{(hi−ε₀)/2}·(1 − e^{−(hi−lo)/2}),   Q: ½e^{−(lo+ε₀)/2}·(1 − e^{−(hi−lo)/2}).

        With ``errors``, bounds on each cell's absolute error, (16 + ε₀)u of the cell:
        exp and expm1 ≤ 4 ulp each (docs/portability.md); the exponent (hi − ε₀)/2 (or
        −(lo + ε₀)/2, of size ≤ ε₀ after clipping) rounds by ≤ ½u·ε₀, which moves exp by
        as much relative; lo − hi rounds by ½ ulp, which moves 1 − e^{(lo−hi)/2} by ≤ ½ ulp
        of it (|y|e^y ≤ 1 − e^y for y ≤ 0); the product ½ ulp; an atom ½e^{−ε₀} (exp, 4
        ulp) and its sum with the continuous part ½ ulp: ≤ 9.5u + ½u·ε₀ of the cell, taken
        as (16 + ε₀)u (second-order terms, and a simulated machine erring 5 ulp per call);
        + 16 subnormal spacings for results that underflow (``underflow_slack``). The
        distribution functions' difference (``np.diff``, before) erred by ulps of the
        functions, not of the cell: 7.5e3 ulp of a Q-cell at ε₀ = 1.3 and step 1e-3, all of
        it at ε₀ = 30, where Q(L ≤ ε) is within e^{−30} of 1."""
        e0 = self._e0
        e = np.asarray(edges, dtype=float)
        lo = np.clip(np.concatenate(([-np.inf], e)), -e0, e0)
        hi = np.clip(np.concatenate((e, [np.inf])), -e0, e0)
        width = -np.expm1((lo - hi) / 2)  # 1 − e^{−(hi−lo)/2}
        a = 0.5 * np.exp((hi - e0) / 2) * width
        b = 0.5 * np.exp(-(lo + e0) / 2) * width
        # the atoms: −ε₀ in the cell (e_{j−1}, e_j] with e_{j−1} < −ε₀ ≤ e_j, ε₀ likewise
        low, top = np.searchsorted(e, -e0, side="left"), np.searchsorted(e, e0, side="left")
        small = 0.5 * math.exp(-e0)
        a[low] += small
        b[low] += 0.5
        a[top] += 0.5
        b[top] += small
        if not errors:
            return a, b
        slack = (16 + e0) * _U
        live = hi > lo  # else a cell without continuous part: its atoms' (½, and ½e^{−ε₀} ≥ 0)
        live[[low, top]] = True
        return a, b, slack * a + underflow_slack(a, live), slack * b + underflow_slack(b, live)

    def delta(self, eps, upper=True):
        eps = np.asarray(eps, dtype=float)
        e0 = self._e0
        with np.errstate(over="ignore"):  # each expm1 overflows only outside its branch
            out = np.where(eps >= e0, 0.0,
                           np.where(eps <= -e0, -np.expm1(eps), -np.expm1((eps - e0) / 2)))
        # expm1 (≤ 4 ulp, the documented worst case assumed), the rounded argument
        # (ε − ε₀)/2 (≤ 1 ulp of the result) and the product: 8 ulp
        out = out * (1 + 8 * _U if upper else 1 - 8 * _U)
        if upper:  # δ > 0 below ε₀ even where it underflows (ε₀ subnormal): the smallest float
            out = np.where((out == 0) & (eps < e0), math.ulp(0.0), out)
        return float(out) if out.ndim == 0 else out

    def reverse(self):
        return self

    def key(self):
        return ("laplace", self._e0)
