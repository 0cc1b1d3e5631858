"""The line integral of the inversion: samples of M on Re s = c and the windowed
trapezoid sums over them, with their error terms.

The samples log M_ν(c + imh), m = 0, 1, …, do not depend on ε: δ(ε) at another ε
costs one weighted sum (the root search of ε(δ) reuses them). M_ν is all of M
(``part="whole"``) or the remainder R = M − A beside an exact lattice part
(``"remainder"``, telescoped without cancellation:
R = Σ_j Π_{i<j} A_i^{k_i} (M_j^{k_j} − A_j^{k_j}) Π_{i>j} M_i^{k_i}).

Per sample we also keep a bound on |M̃_ν − M_ν|: from the factors' bounds Δ_j
(``characteristic.log_mgf_error``), |ΠM̃_j^{k_j} − ΠM_j^{k_j}| ≤
Π(|M_j| + Δ_j)^{k_j} − Π|M_j|^{k_j}, plus the rounding of Σ k_j log M_j. Atoms
whose tilted weight p_i e^{cℓ_i} is below e^{−50} of the largest are dropped
and their tilted mass added to Δ_j.

The window error ∫(F*k − F) dν (``cf/window.py``) is
* bounded in the t-domain by (1/π)∫(1 − W)|F̂| B e^{−cε} dt with the envelope B
  (``log_envelope``), an upper Riemann sum on a geometric grid (1 − W rises,
  |F̂| and B fall): rigorous where B is;
* estimated by the change of the windowed sum V(τ) as the reach τ grows
  (``cf/inversion.py``).

Where some factor is purely atomic on no lattice (the binomial's losses
log(k/(n+1−k)) lie close to a lattice of step 4/n, so |M| returns to 0.8 M(c)
at t ≈ 2π/(4/n) and again at its multiples, with slowly falling peaks) the
window starts at eight periods 2π/g (g the median gap between the atoms within
1e-6 of the heaviest tilted weight): a window that had not reached the first
return would look converged. Its taper is then short against the period
(s ≤ 2π/(24g)) so that its flat band takes in whole returns, and it grows to
at most 512 periods.
"""
import math

import numpy as np

from ..lazy import lazy
from ..numerics import ULP_OF_ONE as U
from .basic import clogsumexp, log_error_atoms, log_sub
from .characteristic import (log_atoms_of, log_decay, log_error_continuous, log_mass_errors, log_masses,
                             log_mgf_continuous, quadrature_size)
from .window import one_minus_window, window

special = lazy("scipy.special")

_DROP = 50.0
_PERIODS = 512  # a window whose transform recurs grows to at most this many periods 2π/gap


def times(k, z):
    """k·z for a count k and complex z, keeping −inf + 0j (k·z as complex
    multiplication would turn the imaginary part into NaN)."""
    return k * z.real + 1j * (k * np.where(np.isfinite(z.real), z.imag, 0.0))



class Factor:
    """One (pair, count) on the line Re s = c: pruned atoms, M_j(c), A_j(c), C_j(c), κ_j."""

    def __init__(self, pair, count, c):
        self.pair, self.count, self.c = pair, count, c
        loss, log_mass = log_masses(pair)
        w = log_mass + c * loss
        keep = w >= (np.max(w) - _DROP if len(w) else 0.0)
        self.loss, self.log_mass = loss[keep], log_mass[keep]
        log_err = log_mass_errors(pair)  # the masses' own errors (a finite pair's logs')
        self.log_mass_err = None if log_err is None else log_err[keep]
        self.log_dropped = float(special.logsumexp(w[~keep])) if np.any(~keep) else -math.inf
        if log_err is not None and np.any(~keep):  # a dropped atom's error, beside its mass
            self.log_dropped = float(np.logaddexp(self.log_dropped, special.logsumexp(log_err[~keep] + c * loss[~keep])))
        self.log_a = float(special.logsumexp(w)) if len(w) else -math.inf
        cont = log_mgf_continuous(pair, np.array([c + 0j]))
        self.atoms_only = cont is None
        self.log_c = -math.inf if cont is None else float(cont.real[0])
        self.log_m = float(np.logaddexp(self.log_a, self.log_c))
        self.log_kappa = None if cont is None else log_decay(pair, c)
        heavy = self.loss[w[keep] >= np.max(w) - 14.0] if len(w) else self.loss  # within 1e-6 of the top
        self.gap = float(np.median(np.diff(heavy))) if len(heavy) > 1 else math.inf

    def evaluate(self, s):
        """(log A_j(s), log C_j(s) or None, log Δ_j(s))."""
        la = log_atoms_of(self.loss, self.log_mass, s)
        lc = log_mgf_continuous(self.pair, s)
        err = np.logaddexp(log_error_atoms(self.loss, self.log_mass, s, self.log_mass_err), self.log_dropped)
        return la, lc, np.logaddexp(err, log_error_continuous(self.pair, s, lc))

    def log_cont_bound(self, t):
        """log of a bound on |C_j(c+it')|, |t'| ≥ t (exact decay for a Gaussian)."""
        if self.log_kappa is None:
            return np.full(np.shape(t), -np.inf)
        mu = self.pair.gaussian_mu
        with np.errstate(divide="ignore"):  # t = 0: no decay yet, the bound is C_j(c)
            decay = 0.5 * mu * mu * (self.c * self.c + self.c - t * t) if mu is not None else self.log_kappa - np.log(t)
        return np.minimum(self.log_c, decay)

    def cost(self, t_max):
        """Work of one evaluation at |t| ≤ t_max: atoms and quadrature nodes."""
        return len(self.loss) + quadrature_size(self.pair, self.c, t_max)


def log_envelope(factors, t, part):
    """log B(t) ≥ |M_ν(c+it')| for |t'| ≥ t, vectorised over t > 0: each factor by
    min(M_j(c), A_j(c) + Ĉ_j(t))^{k_j} (atoms by their sup, the continuous part by
    ``Factor.log_cont_bound``); the remainder by Π(A_j(c) + Ĉ_j(t))^{k_j} − Π A_j(c)^{k_j}
    (every term of R has a continuous factor). Rigorous where every κ_j is."""
    t = np.asarray(t, dtype=float)
    total_m, total_r, total_a = 0.0, 0.0, 0.0
    for f in factors:
        split = np.logaddexp(f.log_a, f.log_cont_bound(t))
        total_m = total_m + f.count * np.minimum(f.log_m, split)
        total_r = total_r + f.count * split
        total_a = total_a + f.count * f.log_a
    return log_sub(total_r, total_a) if part == "remainder" else total_m


class Line:
    """Samples of log M_ν on t = 0, h, 2h, … and their error bounds (module docstring)."""

    def __init__(self, terms, c, h, part):
        self.c, self.h, self.part = float(c), float(h), part
        self.factors = [Factor(p, k, c) for p, k in terms]
        self.t = np.zeros(0)
        self.log_m = np.zeros(0, dtype=complex)
        self.log_err = np.zeros(0)
        self.work = 0.0
        # atoms whose transform recurs with period 2π/gap: a taper short against the period
        atomic = [f.gap for f in self.factors if f.atoms_only] if part == "whole" else []
        self.period = 2 * math.pi / min(atomic) if atomic else 0.0
        self.taper = self.period / 24 if self.period > 0 else None

    def cost(self, t_max):
        """Work of one sample at |t| ≤ t_max."""
        return 1 + sum(f.cost(t_max) for f in self.factors)

    def _compose(self, t):
        s = self.c + 1j * np.asarray(t, dtype=float)
        parts = [f.evaluate(s) for f in self.factors]
        one = [la if lc is None else clogsumexp(np.stack([la, lc]), axis=0) for la, lc, _ in parts]
        counts = [f.count for f in self.factors]
        logm = [times(k, lm) for k, lm in zip(counts, one)]
        grown = sum(k * np.logaddexp(lm.real, err) for k, lm, (_, _, err) in zip(counts, one, parts))
        exact = sum(lm.real for lm in logm)
        size = 8.0 + 2.0 * sum(np.abs(lm) for lm in logm)
        err = np.logaddexp(log_sub(grown, exact), exact + np.log(U * size))
        if self.part == "whole":
            self.work += len(t) * self.cost(float(np.max(t, initial=0.0)))
            return sum(logm), err
        # remainder: telescoped; its error adds the atoms' own product bound and the rounding
        loga = [times(k, la) for k, (la, _, _) in zip(counts, parts)]
        pieces = []
        for j, (k, (la, lc, _)) in enumerate(zip(counts, parts)):
            if lc is None:
                continue
            z = k * np.log1p(-np.exp(lc - one[j]))  # log (A_j/M_j)^k
            big = z.real > 0  # log(1 − e^z) as log(−expm1(z)), or z + log(expm1(−z)) above
            with np.errstate(divide="ignore"):
                bracket = logm[j] + np.where(big, z + np.log(np.expm1(-np.where(big, z, 0))),
                                             np.log(-np.expm1(np.where(big, 0, z))))
            pieces.append(sum(loga[:j]) + bracket + sum(logm[j + 1:]))
        grown_a = sum(k * np.logaddexp(la.real, log_error_atoms(f.loss, f.log_mass, s, f.log_mass_err))
                      for k, f, (la, _, _) in zip(counts, self.factors, parts))
        exact_a = sum(la.real for la in loga)
        total = sum(k * np.logaddexp(la.real, lc.real) if lc is not None else k * la.real
                    for k, (la, lc, _) in zip(counts, parts))
        err = np.logaddexp.reduce([err, log_sub(grown_a, exact_a),
                                   total + np.log(U * (size + 2.0 * sum(np.abs(la) for la in loga)) * len(pieces))])
        self.work += len(t) * self.cost(float(np.max(t, initial=0.0)))
        return clogsumexp(np.stack(pieces), axis=0), err

    def extend(self, tau):
        """Samples up to at least τ."""
        have = len(self.t)
        want = int(math.ceil(tau / self.h)) + 1
        if want <= have:
            return
        t = np.arange(have, want) * self.h
        log_m, err = self._compose(t)
        self.t, self.log_m, self.log_err = (np.concatenate([self.t, t]), np.concatenate([self.log_m, log_m]),
                                            np.concatenate([self.log_err, err]))

    def halve(self):
        """Halve the step: add the midpoints of the samples so far."""
        mids = self.t[:-1] + 0.5 * self.h
        log_m, err = self._compose(mids)
        order = np.argsort(np.concatenate([self.t, mids]), kind="stable")
        self.t = np.concatenate([self.t, mids])[order]
        self.log_m = np.concatenate([self.log_m, log_m])[order]
        self.log_err = np.concatenate([self.log_err, err])[order]
        self.h *= 0.5

    def log_z(self, eps):
        """log Z = log M_ν(c) − cε: the mass of the tilted measure ν."""
        return float(self.log_m[0].real) - self.c * eps

    def sums(self, eps, tau):
        """(V(τ), bound on its float and evaluation error plus the part beyond the samples)."""
        sel = self.t <= tau * (1.0 + 1e-12) + 0.5 * self.h
        t = self.t[sel]
        s = self.c + 1j * t
        kernel = np.log(s * (s + 1.0))
        log_g = self.log_m[sel] - s * eps - kernel
        weight = self.h * window(t, tau, self.taper)
        weight[0] *= 0.5
        g = np.exp(log_g)
        mod = np.exp(log_g.real)
        value = float(np.sum(weight * g.real)) / math.pi
        rel = U * (16.0 + 2.0 * np.abs(s) * abs(eps) + 2.0 * np.abs(kernel) + 2.0 * np.abs(log_g))
        err_g = np.exp(self.log_err[sel] - self.c * eps - kernel.real) + mod * rel
        rounding = (float(np.sum(weight * err_g)) + U * (8 + math.log2(len(t))) * float(np.sum(weight * mod))) / math.pi
        last = float(window(t[-1:], tau, self.taper)[0])  # W falls beyond τ
        beyond = 2.0 * last * math.exp(self.log_z(eps)) / (math.pi * max(t[-1], self.h))
        return value, rounding + beyond

    def window_bound(self, eps, tau):
        """The t-domain bound of the window error (module docstring)."""
        grid = np.geomspace(1e-3 * tau, 1e4 * tau, 241)
        s = self.c + 1j * grid
        log_b = log_envelope(self.factors, grid, self.part)
        log_f = -np.log(np.abs(s * (s + 1.0)))
        with np.errstate(divide="ignore"):
            log_w = np.log(one_minus_window(grid, tau, self.taper))
        cells = np.diff(grid) * np.exp(log_w[1:] + log_f[:-1] + log_b[:-1] - self.c * eps)
        head = grid[0] * np.exp(log_w[0] - math.log(abs(self.c * (1.0 + self.c))) + self.log_z(eps))
        tail = np.exp(log_b[-1] - self.c * eps) / grid[-1]
        return float((np.sum(cells) + head + tail) / math.pi)

    def decays(self):
        """True if the envelope B(t) tends to 0 (the remainder, or a factor without atoms)."""
        return self.part == "remainder" or any(f.log_a == -math.inf for f in self.factors)

    def first_reach(self):
        """The smallest reach of a window: 64 steps, and 8 recurrence periods where |M| recurs."""
        return max(64 * self.h, 8 * self.period)

    def reach_cap(self):
        """The reach beyond which a window does not grow: 512 recurrence periods (∞ without)."""
        return _PERIODS * self.period if self.period > 0 else math.inf
