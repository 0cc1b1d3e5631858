"""Long sweeps split between CI's slow step and the exhaustive run.

``sweep(cases, kept)``: the cases of a parametrised sweep, those in ``kept`` marked
``slow`` (CI runs them: ``pytest -m slow``) and the rest ``exhaustive`` (run before a
release or after a change to the numerics they cover: ``pytest -m exhaustive``). The
kept cases span the sweep's range (its ends and its hardest points, by the timings of
the full run); the exhaustive ones are the same test at the other points, so the two
runs together are the whole sweep.
"""
import pytest


def sweep(cases, kept):
    """pytest.param for each case (a tuple of arguments, or one argument): ``slow`` where
    it is in ``kept``, ``exhaustive`` elsewhere. Every kept case must be a case."""
    cases, kept = list(cases), list(kept)
    missing = [k for k in kept if k not in cases]
    if missing:
        raise ValueError(f"kept cases not in the sweep: {missing!r}")
    return [pytest.param(*(case if isinstance(case, tuple) else (case,)),
                         marks=pytest.mark.slow if case in kept else pytest.mark.exhaustive)
            for case in cases]
