"""Floating-point constants shared by the error bounds of the numerics.

Every rounding-error bound in dpaccount is written in units of ``ULP_OF_ONE``:
a correctly rounded operation on doubles errs by at most half of it relative to
its result, a library routine (log, exp, log1p, ndtr, …) by a few of it, and a
bound written as ``(1 + c·ULP_OF_ONE)`` carries that slack. One constant, so
that every module counts in the same unit.
"""

#: 2⁻⁵², the gap between 1.0 and the next double (numpy's ``np.finfo(float).eps``,
#: Python's ``sys.float_info.epsilon``): twice the unit roundoff 2⁻⁵³ of
#: round-to-nearest. A plain Python float.
ULP_OF_ONE = 2.0 ** -52

#: 2⁻⁵³, the unit roundoff of round-to-nearest doubles: a correctly rounded operation errs by at
#: most this much relative to its result (half of ``ULP_OF_ONE``).
UNIT_ROUNDOFF = 2.0 ** -53

#: numpy's ``np.sum`` (and ``np.add.reduce``/``reduceat``, ``np.mean``) of contiguous doubles
#: sums pairwise within blocks of this many terms and adds the blocks' sums in sequence.
SUM_BLOCK = 8192


def sum_roundings(n: int) -> int:
    """The most roundings a term of numpy's sum of ``n`` contiguous doubles goes through.

    numpy adds fewer than 8 terms in sequence (n − 1). A piece of 8 ≤ m ≤ 128 terms goes
    into 8 accumulators (⌊m/8⌋ − 1 additions each), a tree over them (3) and the m mod 8
    terms left over in sequence: ⌊m/8⌋ + 2 + m mod 8 ≤ 25. A longer piece is halved until
    its parts are ≤ 128 terms, one rounding per halving (≤ 7 up to 8,192);
    the ⌈n/8192⌉ sums of blocks of 8,192 are then added in sequence. The computed sum
    errs by at most γ_d·Σ|x_i| ≤ (d + 1)u·Σ|x_i| for d = ``sum_roundings(n)`` (Higham,
    *Accuracy and Stability of Numerical Algorithms*, §4.2): a log₂n count is not enough
    beyond 128 terms, and grows linearly beyond 8,192.
    """
    n = max(int(n), 1)
    if n < 8:
        return n - 1
    block, halvings = min(n, SUM_BLOCK), 0
    while block > 128:  # numpy's split: the first part n/2 rounded down to a multiple of 8
        block, halvings = block - (block // 2 - block // 2 % 8), halvings + 1
    leaf = 25 if halvings else block // 8 + 2 + block % 8
    return leaf + halvings + -(-n // SUM_BLOCK) - 1
