"""Shared test set-up: the mpmath precision of each test. (The ``slow`` marker is
registered in pyproject.toml; the default run leaves those cases out, ``-m slow`` runs them.)

Oracles (oracles.py) and the API fixtures (api_fixtures.py) live beside this
file; ``pythonpath = ["tests"]`` in pyproject.toml makes them importable from
every folder of the suite.
"""
import mpmath as mp
import pytest

DEFAULT_DPS = 50


@pytest.fixture(autouse=True)
def mp_precision(request):
    """Run each test at ``DEFAULT_DPS`` decimal digits, or at n for a test marked
    ``@pytest.mark.mp_dps(n)``; the precision is restored afterwards, so no
    test (and no import) changes another's."""
    marker = request.node.get_closest_marker("mp_dps")
    with mp.workdps(marker.args[0] if marker else DEFAULT_DPS):
        yield
