"""The purely atomic part of M when its atoms lie on a lattice: exact over one period.

Where every pair has atoms (randomized response, finite pairs, Laplace) the
atomic part A = Π A_j^{k_j} of M does not decay in t. When its atoms lie on a
lattice O + gℤ its contribution to δ(ε) is an integral over one period
(Zhu, Dong & Wang 2022, Lévy's formula summed over the lattice):

    I_A = (g/2π) ∫_{−π/g}^{π/g} A(c+it) K(c+it) dt,  K(s) = Σ_{y ∈ gℤ} u_c(y − ε) e^{−sy},

u_c = (1 − e^{−y})_+ (c > 0) or −min(1, e^{−y}) (c < 0), geometric series
summed in closed form. The n-point trapezoid rule over the period returns the
Fourier coefficients of A·K at multiples of n, i.e. the lattice sums shifted by
multiples of Y = n·g: the aliasing bound of ``cf/contour.py`` with the sharp
window (K = 1) and the atoms' M_A(b) bounds it rigorously; n doubles until that
bound is below the tolerance. Float rounding is bounded per point from the
atoms' error bound (``basic.log_error_atoms``) and the closed form's exponents.
Atoms count as on the lattice within 1e-11 (relative); their distance d from it
adds Z_A (π/g + 1 + |c|) d, a bound to first order in d (d is ~1e-16 for the
randomized response and Laplace).
"""
import math

import numpy as np

from ..numerics import ULP_OF_ONE as U, sum_roundings
from .basic import log_error_atoms, log_sub
from .characteristic import atoms, lattice, log_mass_errors, log_masses, log_mgf_atoms
from .contour import RealMGF, log_alias

_MAX_POINTS = 2 ** 22


def common_lattice(terms):
    """How the purely atomic part A = Π A_j^{k_j} is inverted: (O, g) when every
    composed atom is O + n·g (exactly, over one period; g = 0.0: a single atom
    at O), ``False`` when some pair has no atoms (A = 0), None when the atoms
    lie on no common lattice (they stay in the line integral)."""
    if any(len(atoms(p)[0]) == 0 for p, _ in terms):
        return False
    lats = [lattice(p) for p, _ in terms]
    if any(lat is None for lat in lats):
        return None
    offset = sum(k * o for (_, k), (o, _) in zip(terms, lats))
    steps = [g for _, g in lats if g > 0]
    if not steps:
        return offset, 0.0
    g = min(steps)
    if any(abs(other / g - round(other / g)) > 1e-11 for other in steps):
        return None
    return offset, g


def snap_error(terms, lat):
    """d = Σ_j k_j max_i |ℓ_i − (o_j + n_i g)|: how far the composed atoms may lie from the
    lattice O + gℤ they are inverted on (0 without a lattice)."""
    if lat is False or lat is None or lat[1] == 0.0:
        return 0.0
    g, total = lat[1], 0.0
    for p, k in terms:
        loss = atoms(p)[0]
        o = lattice(p)[0]
        total += k * float(np.max(np.abs(loss - o - np.round((loss - o) / g) * g)))
    return total


def _mass_error_share(pair):
    """The atoms' own mass errors relative to their total mass (0 where exact)."""
    log_err = log_mass_errors(pair)
    if log_err is None or not len(log_err):
        return 0.0
    _, log_mass = log_masses(pair)
    return float(math.exp(np.logaddexp.reduce(log_err) - np.logaddexp.reduce(log_mass))) * (1 + 8 * U)


def _log_atoms_and_error(terms, s):
    """log A(s) and log of a bound on |Ã(s) − A(s)| (product of perturbed factors)."""
    log_a, grown, exact_part, size = 0j, 0.0, 0.0, 8.0
    for p, k in terms:
        la = log_mgf_atoms(p, s)
        log_a = log_a + k * la
        grown = grown + k * np.logaddexp(la.real, log_error_atoms(*log_masses(p), s, log_mass_errors(p)))
        exact_part = exact_part + k * la.real
        size = size + 2.0 * k * np.abs(la)
    # |ΠÃ − ΠA| ≤ Π(|A_j| + Δ_j)^k − Π|A_j|^k; plus the rounding of Σ k log A_j
    return log_a, np.logaddexp(log_sub(grown, exact_part), exact_part + np.log(U * size))


def lattice_part(terms, eps, c, tol, lat):
    """(I_A, error bound) of the purely atomic part on its lattice O + gℤ (atoms
    shifted to gℤ, threshold ε − O); (0, 0) without one."""
    if lat is False or lat is None:
        return 0.0, 0.0
    offset, g = lat
    shifted = eps - offset
    if g == 0.0:  # a single atom at O with mass A(0): u_c(O − ε) times the mass
        mass = math.exp(sum(k * float(log_mgf_atoms(p, np.array([0j])).real[0]) for p, k in terms))
        value = mass * max(-math.expm1(shifted), 0.0) if c > 0 else -mass * min(1.0, math.exp(shifted))
        # the masses' own errors (a finite pair's logs', ``log_mass_errors``): relative to each
        # factor's mass, compounded over the k uses
        rel = sum(k * _mass_error_share(p) for p, k in terms)
        return value, 8 * U * abs(value) * (1.0 + sum(k for _, k in terms)) + abs(value) * math.expm1(rel) * (1 + 8 * U)
    m = math.floor(shifted / g) + 1  # first lattice point above ε (ε < y_m)
    y_m, y_below = m * g, (m - 1) * g

    def fun(t):
        """A(s)K(s) and a bound on its rounding error, at s = c + it."""
        s = c + 1j * t
        log_a, log_err = _log_atoms_and_error(terms, s)
        log_a = log_a - s * offset
        logs = [shifted - (1.0 + s) * y_m - np.log(-np.expm1(-(1.0 + s) * g))]
        if c > 0:   # Σ_{y>ε} (1 − e^{ε−y}) e^{−sy}
            logs.insert(0, -s * y_m - np.log(-np.expm1(-s * g)))
            signs = (1.0, -1.0)
        else:       # Σ_{y>ε} −e^{ε−y}e^{−sy} + Σ_{y≤ε} −e^{−sy}
            logs.append(-s * y_below - np.log(-np.expm1(s * g)))
            signs = (-1.0, -1.0)
        value = sum(sign * np.exp(log_a + lk) for sign, lk in zip(signs, logs))
        rel = U * (16.0 + 2.0 * np.abs(log_a) + 2.0 * np.abs(s) * (abs(y_m) + abs(shifted) + abs(offset) + g))
        err = sum(np.exp(log_a.real + lk.real) * rel + np.exp(log_err - c * offset + lk.real) for lk in logs)
        return value, err

    mgf = RealMGF(terms, "atoms")
    n, total, rounding = 64, None, 0.0
    while True:
        t = -math.pi / g + 2 * math.pi * np.arange(n) / (g * n)
        value, err = fun(t)
        total = float(np.mean(value).real)
        rounding = float(np.mean(err)) + U * max(math.log2(n), 0.5 * (sum_roundings(n) + 1)) * float(np.mean(np.abs(value)))
        alias = math.exp(min(log_alias(mgf, c, eps, n * g, 0.0, sharp=True), 700.0))
        if alias <= 0.25 * tol or 2 * n > _MAX_POINTS:
            # atoms off the lattice by d: the period's sums are orthogonal only to first order in
            # d (the phase t·d ≤ πd/g, the tilt e^{cd}, f 1-Lipschitz): Z_A (π/g + 1 + |c|) d
            d = snap_error(terms, lat)
            snap = math.exp(min(mgf(c) - c * eps, 700.0)) * (math.pi / g + 1.0 + abs(c)) * d
            return total, alias + rounding + snap
        n *= 2
