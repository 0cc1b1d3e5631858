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
