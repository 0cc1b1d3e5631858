"""The coefficient table of ``dpaccount/ndtr.py`` (``COEFFS``), from mpmath.

    python tests/ndtr_fit.py      # prints the table's block, as it stands in ndtr.py

Piece i (i = 0 … PIECES − 1) covers t = −x in [i/4, (i + 1)/4); on it log Φ(−t)
is interpolated at the DEGREE + 1 Chebyshev points of the piece, at 40 digits
(mpmath's erfc), and the interpolant is written as a polynomial in
y = 4t − (i + ½) ∈ [−½, ½), its coefficients rounded to the nearest double.
``approximation_error`` measures what the rounded table errs by against mpmath
(exact arithmetic on the doubles), ``horner_bound`` bounds the rounding of its
evaluation in float64; tests/test_ndtr.py checks both.
"""
import mpmath as mp

DEGREE = 8
PER_UNIT = 4            # pieces per unit of t
PIECES = 64             # [0, 16)
DPS = 40


def exact_log_ndtr_neg(t):
    """log Φ(−t) at ``DPS`` digits."""
    with mp.workdps(DPS):
        return mp.log(mp.erfc(mp.mpf(t) / mp.sqrt(2)) / 2)


def _at(i, y):
    """t at y on piece i (exact: mpmath)."""
    return (i + mp.mpf(1) / 2 + y) / PER_UNIT


def _monomial(coeffs):
    """Σ c_k T_k(z) as the coefficients of 1, z, z², … (mpmath)."""
    out = [mp.mpf(0)] * len(coeffs)
    prev, cur = [mp.mpf(1)], [mp.mpf(0), mp.mpf(1)]   # T_0, T_1
    for k, c in enumerate(coeffs):
        if k >= 2:
            nxt = [mp.mpf(0)] + [2 * v for v in cur]
            for j, v in enumerate(prev):
                nxt[j] -= v
            prev, cur = cur, nxt
        for j, v in enumerate(prev if k == 0 else cur):
            out[j] += c * v
    return out


def piece_coefficients(i, degree=DEGREE):
    """The interpolant's coefficients in y (b_0, b_1, …), as floats."""
    with mp.workdps(DPS):
        n = degree + 1
        nodes = [mp.cos(mp.pi * (j + mp.mpf(1) / 2) / n) for j in range(n)]   # z = 2y in [−1, 1]
        values = [exact_log_ndtr_neg(_at(i, z / 2)) for z in nodes]
        cheb = [(1 if k else mp.mpf(1) / 2) * 2 * mp.fsum(values[j] * mp.cos(mp.pi * k * (j + mp.mpf(1) / 2) / n)
                                                          for j in range(n)) / n for k in range(n)]
        return tuple(float(a * 2 ** k) for k, a in enumerate(_monomial(cheb)))


def table():
    return tuple(piece_coefficients(i) for i in range(PIECES))


def approximation_error(coeffs, i, points=201):
    """max over ``points`` equispaced y in [−½, ½] of |poly(y) − log Φ(−t)| / |log Φ(−t)|,
    the polynomial with the table's float coefficients evaluated exactly (mpmath)."""
    worst = mp.mpf(0)
    with mp.workdps(DPS):
        for j in range(points):
            y = mp.mpf(j) / (points - 1) - mp.mpf(1) / 2
            exact = exact_log_ndtr_neg(_at(i, y))
            worst = max(worst, abs(mp.fsum(mp.mpf(b) * y ** k for k, b in enumerate(coeffs)) - exact) / abs(exact))
    return float(worst)


def horner_bound(coeffs):
    """A bound, relative to the least |log Φ(−t)| on the piece, on the rounding of Horner's
    rule q_n = b_n, q_k = fl(fl(q_{k+1}·y) + b_k) for |y| ≤ ½, in units of 2^−53: each
    step's product and sum err by ≤ 2^−53 of themselves, and an error made at step k
    reaches the result times |y|^k, so the sum is ≤ 2^−53 Σ_k |y|^k (|y|·Q_{k+1} + Q_k)
    to first order, Q_k = Σ_{j ≥ k} |b_j| 2^{k−j} ≥ |q_k| (the second-order terms are
    below 1e-13 of it). The least |log Φ| is |b_0| − Σ_{k≥1} |b_k| 2^{−k}."""
    b = [abs(v) for v in coeffs]
    h = 0.5
    q = [sum(b[j] * h ** (j - k) for j in range(k, len(b))) for k in range(len(b))]
    total = sum(h ** k * ((h * q[k + 1] if k + 1 < len(b) else 0.0) + q[k]) for k in range(len(b) - 1))
    return total / (b[0] - sum(b[k] * h ** k for k in range(1, len(b))))


def table_source():
    """The block that defines ``COEFFS`` in ``dpaccount/ndtr.py``."""
    out = ["COEFFS = ("]
    for i, row in enumerate(table()):
        lines = [" ".join(f"{v!r}," for v in row[k:k + 3]) for k in range(0, len(row), 3)]
        out.append(f"    ({lines[0]}")
        out.extend(f"     {line}" for line in lines[1:-1])
        out.append(f"     {lines[-1][:-1]}),  # [{i / PER_UNIT:g}, {(i + 1) / PER_UNIT:g})")
    out.append(")")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    print(table_source(), end="")
