"""A finite pair's masses at ±∞ and its atoms, as its uses take them, against the exact pair.

``DiscretePair`` computes P(L = +∞), Q(L = −∞) and each atom's mass from logs
that err by their stated ``log_err`` (a binomial pair's ``binom.logpmf``: ulps of
n log n, 2e5 ulp at n = 2000). Here a pair states ``log_err`` = 1e-6 and its logs
are off by that much the wrong way on purpose (as a libm erring its worst would
have them; unperturbed, binom.logpmf errs far less): every upper bound must stay
at or above the exact pair's δ (mpmath, from the exact probabilities), every lower
bound at or below it. The old code padded P(L = +∞) by ulps only, took Q(L = −∞)
and the atoms' masses in the lattice grid as exact.

The pair: P = (0.5, 0.3, 0.2, 0), Q = (0.3, 0.5, 0, 0.2): losses ±log(5/3) and
±∞, symmetric (subset sampling accepts it).
"""
import math

import mpmath as mp
import numpy as np
import pytest

from dpaccount.cf import characteristic
from dpaccount.pld.grids.discretise import pair_to_grid
from dpaccount.pld.profiles.exact_sum import exact_direction
from dpaccount.pld.pairs.discrete_pair import DiscretePair
from dpaccount.pld.pairs.poisson_sampling import PoissonAddPair, PoissonRemovePair
from dpaccount.pld.pairs.subset_sampling import SubsetSampledPair

ERR = 1e-6       # the logs' stated error (large, so that a short pad shows above every margin)
PREC = 200
P = ("0.5", "0.3", "0.2", "0")
Q = ("0.3", "0.5", "0", "0.2")


def _pair(moves, only=None):
    """The pair with log p_i moved by moves[0][i]·ERR and log q_i by moves[1][i]·ERR (each
    within the stated ``log_err``: ERR for every log, or only for the logs ``only`` names,
    (law, index) pairs, the others the default 4 ulp, rounded to nearest), and the exact
    (P, Q) as mpmath numbers."""
    with mp.workprec(PREC):
        p, q = [mp.mpf(x) for x in P], [mp.mpf(x) for x in Q]
        logs = [np.array([float(mp.log(x)) + m * ERR if x > 0 else -np.inf for x, m in zip(law, move)])
                for law, move in zip((p, q), moves)]
    err = [np.full(4, ERR), np.full(4, ERR)]
    if only is not None:
        err = [4 * np.finfo(float).eps * np.abs(np.where(np.isfinite(x), x, 0.0)) for x in logs]
        for law, i in only:
            err[law][i] = ERR
    pair = DiscretePair(*logs, name="moved", log_err=tuple(err))
    return pair, (p, q)


def _exact_delta(outcomes, eps):
    """δ(ε) = Σ (p − e^ε q)_+ over the outcomes (p, q) of a pair (mpmath)."""
    with mp.workprec(PREC):
        x = mp.exp(mp.mpf(float(eps)))
        return sum(max(a - x * b, mp.mpf(0)) for a, b in outcomes)


def _composed(outcomes, k):
    out = [(mp.mpf(1), mp.mpf(1))]
    for _ in range(k):
        out = [(a * c, b * d) for a, b in out for c, d in outcomes]
    return out


def _poisson_remove(exact, q):
    p, qq = exact
    with mp.workprec(PREC):
        return [((1 - mp.mpf(q)) * b + mp.mpf(q) * a, b) for a, b in zip(p, qq)]


def _poisson_add(exact, q):
    p, qq = exact
    with mp.workprec(PREC):
        return [(a, (1 - mp.mpf(q)) * a + mp.mpf(q) * b) for a, b in zip(p, qq)]


_L = math.log(5 / 3)
EPS = np.concatenate((np.linspace(-3.0, 3.0, 61), [5.0, 30.0],
                      np.ravel([[x - 1e-6, x - 3e-7, x - 1e-14, x + 1e-6] for x in (_L, -_L)])))


def _check(upper_curve, lower_curve, outcomes, eps=EPS):
    """Upper ≥ exact ≥ lower at every ε (strictly, no tolerance)."""
    for e in eps:
        exact = _exact_delta(outcomes, e)
        if upper_curve is not None:
            assert mp.mpf(float(upper_curve(e))) >= exact, (e, float(upper_curve(e)), float(exact))
        if lower_curve is not None:
            assert mp.mpf(float(lower_curve(e))) <= exact, (e, float(lower_curve(e)), float(exact))


def test_p_inf_bounds_carry_the_logs_error():
    """P(L = +∞) from a log ERR too low (rounded up by ulps only before: 2e-7 short) and
    from one ERR too high (``_p_inf_low`` above the exact 0.2 before)."""
    low, _ = _pair(((0, 0, -1, 0), (0, 0, 0, 0)))
    high, _ = _pair(((0, 0, 1, 0), (0, 0, 0, 0)))
    assert low.p_inf >= 0.2 and low.end_bounds()[0][1] >= 0.2
    assert high._p_inf_low <= 0.2 and high.end_bounds()[0][0] <= 0.2
    for pair in (low, high):
        (p_lo, p_hi), _ = pair.end_bounds()
        assert p_lo <= 0.2 <= p_hi and abs(pair.p_inf - 0.2) <= pair.end_errors()[0]


def test_q_ninf_bounds_carry_the_logs_error():
    for move in (-1, 1):
        pair, _ = _pair(((0, 0, 0, 0), (0, 0, 0, move)))
        (_, _), (q_lo, q_hi) = pair.end_bounds()
        assert q_lo <= 0.2 <= q_hi and abs(pair.q_ninf - 0.2) <= pair.end_errors()[1]


@pytest.mark.parametrize("what", ["masses", "losses"])
@pytest.mark.parametrize("step", [_L / 4, 0.05])  # on the pair's lattice log(5/3), and off it
def test_lattice_and_atom_grids_bracket_the_exact_curve(step, what):
    """The grids of a finite pair (``_atoms_to_grid``; the optimistic one off the lattice by
    ``pair_to_lower_grid``) with the logs moved the wrong way: both logs of an outcome the same
    way (its masses off, its loss not: the pessimistic grid's masses too low, the optimistic
    one's too high; P(L = ∞) likewise, Q(L = −∞) too high for the optimistic one's tangent
    at 0), or the two opposite ways (its loss off by 2·ERR: too low for the pessimistic grid,
    too high for the optimistic one). The old lattice grid took the masses and the losses
    as exact."""
    if what == "masses":
        short, exact = _pair(((-1, -1, -1, 0), (-1, -1, 0, -1)))
        long, _ = _pair(((1, 1, 1, 0), (1, 1, 0, 1)))
    else:
        short, exact = _pair(((-1, 1, 0, 0), (1, -1, 0, 0)))
        long, _ = _pair(((1, -1, 0, 0), (-1, 1, 0, 0)))
    outcomes = list(zip(*exact))
    short.lattice = long.lattice = _L
    lo, hi = -int(round(2 * _L / step)) - 2, int(round(2 * _L / step)) + 2
    upper = pair_to_grid(short, step, lo, hi, pessimistic=True)
    lower = pair_to_grid(long, step, lo, hi, pessimistic=False)
    _check(lambda e: upper.delta(e), lambda e: lower.delta(e), outcomes)


@pytest.mark.parametrize("step", [_L / 2, _L / 4, _L / 8])
def test_optimistic_tangent_at_zero_takes_q_ninf_down(step):
    """The optimistic grid off a lattice (``pair_to_lower_grid``; the atoms on grid points, so
    that it is tight at the bottom) of a pair whose Q(L = −∞) alone comes out ERR too high:
    its tangent at x = 0, 1 − (1 − Q(L = −∞))x, and its excess rose above the exact curve
    (δ(ε) = 1 − e^ε(1 − Q(L = −∞)) below the smallest loss): the grid 1.2e-7 above it."""
    pair, exact = _pair(((0, 0, 0, 0), (0, 0, 0, 1)), only=[(1, 3)])
    pair.lattice = None
    reach = int(round(2 * _L / step)) + 2
    grid = pair_to_grid(pair, step, -reach, reach, pessimistic=False)
    _check(None, lambda e: grid.delta(e), list(zip(*exact)), np.concatenate((EPS, np.linspace(-12, -0.4, 40))))


@pytest.mark.parametrize("k", [1, 3])
def test_exact_sums_of_poisson_pairs_bracket_the_exact_curve(k):
    """``pld/profiles/exact_sum.py`` of Poisson-sampled finite pairs: the base's Q(L = −∞) (remove)
    and P(L = +∞) (add) land at ∓log(1 − q) as a finite atom: its mass errs by the base's
    ``end_errors()`` (taken as ulps of itself before)."""
    q = 0.3
    for moves, side in ((((0, 0, -1, 0), (0, 0, 0, -1)), True), (((0, 0, 1, 0), (0, 0, 0, 1)), False)):
        pair, exact = _pair(moves)
        for sampled, outcomes in ((PoissonRemovePair(pair, q), _poisson_remove(exact, q)),
                                  (PoissonAddPair(pair, q), _poisson_add(exact, q))):
            direction = exact_direction([(sampled, k)])
            assert direction is not None
            curve = lambda e, up: float(direction.delta(np.array([e]), up)[0])
            _check((lambda e: curve(e, True)) if side else None, None if side else (lambda e: curve(e, False)),
                   _composed(outcomes, k))


def test_subset_sampling_zero_atom_takes_the_ends_their_safe_way():
    """Subset sampling's atom at 0, z = Q_A(L ≤ 0) − P_A(L > 0) (A = PoissonRemovePair(base, γ)),
    rounded up: P_A(L = +∞) = γ·P(L = +∞) enters with a minus sign, so it must be taken at
    its lower end (the rounded-up p_inf made z too small: below the exact 0.4(1 − γ)); its
    lower bound (the exact sum's, the optimistic cell at 0) takes z down by its error."""
    gamma = 0.25
    pair, _ = _pair(((0, 0, 1, 0), (0, 0, 0, 0)), only=[(0, 2)])
    sub = SubsetSampledPair(pair, gamma)
    with mp.workprec(PREC):
        exact_z = mp.mpf("0.4") * (1 - mp.mpf(gamma))
        assert mp.mpf(sub.zero_mass) >= exact_z
        assert mp.mpf(sub.zero_mass) - mp.mpf(sub.zero_mass_error) <= exact_z
    # the cell holding the atom at 0 states its error
    a, b, err_a, err_b = sub.masses_of([sub], np.array([-0.1, 0.1]), [2], errors=True)
    with mp.workprec(PREC):
        assert mp.mpf(a[1]) - mp.mpf(err_a[1]) <= exact_z and mp.mpf(b[1]) - mp.mpf(err_b[1]) <= exact_z


@pytest.mark.parametrize("sampler", [PoissonRemovePair, PoissonAddPair])
def test_cf_poisson_atoms_carry_the_end_mass_error(sampler):
    """cf's M(s) of a Poisson-sampled finite pair: the base's end mass lands at ∓log(1 − q)
    (``cf/poisson.poisson_atoms``), and every mass comes from logs that err: the error bound
    ``log_mgf_error`` must cover M as computed against the exact pair's M (it counted the
    rounding of the sum only)."""
    q = 0.3
    # the end mass's log off (P(L = +∞)'s for the add direction, Q(L = −∞)'s for remove), and
    # the finite atoms' (a finite pair's masses, mixed)
    end = (0, 2) if sampler is PoissonAddPair else (1, 3)
    moves = [[0, 0, 0, 0], [0, 0, 0, 0]]
    moves[end[0]][end[1]] = -1
    pair, exact = _pair(moves, only=[end])
    check_cf_mgf(sampler(pair, q), (_poisson_remove if sampler is PoissonRemovePair else _poisson_add)(exact, q))
    pair, exact = _pair(((-1, -1, 0, 0), (-1, -1, 0, 0)), only=[(0, 0), (0, 1), (1, 0), (1, 1)])
    check_cf_mgf(sampler(pair, q), (_poisson_remove if sampler is PoissonRemovePair else _poisson_add)(exact, q))
    check_cf_mgf(pair, list(zip(*exact)))


def check_cf_mgf(sampled, outcomes):
    s = np.array([0.0 + 0j, 0.5 + 0j, 1.0 + 3j, -0.5 + 10j, 2.0 + 0j])
    got = np.exp(characteristic.log_mgf(sampled, s))
    bound = np.exp(characteristic.log_mgf_error(sampled, s))
    with mp.workprec(PREC):
        for si, g, b in zip(s, got, bound):
            m = sum(a * mp.exp(mp.mpc(si.real, si.imag) * mp.log(a / c)) for a, c in outcomes if a > 0 and c > 0)
            assert abs(mp.mpc(g.real, g.imag) - m) <= b, (si, abs(mp.mpc(g.real, g.imag) - m), b)
