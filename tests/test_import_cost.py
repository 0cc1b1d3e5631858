"""``import dpaccount`` stays quick (issue 32): scipy's submodules, mpmath and
matplotlib load on first use, not at import (their import is most of a cold
start: scipy.stats alone takes ~10× numpy). Timing belongs to benchmarks; this
checks the cause, what is imported."""
import subprocess
import sys

HEAVY = ("scipy", "mpmath", "matplotlib", "dp_accounting", "torch", "opacus")


def _imported_after(code):
    run = subprocess.run([sys.executable, "-c", f"{code}; import sys; print(' '.join(sorted(sys.modules)))"],
                         capture_output=True, text=True, check=True)
    return set(run.stdout.split())


def test_import_dpaccount_loads_no_scipy_mpmath_or_matplotlib():
    loaded = _imported_after("import dpaccount")
    assert not [m for m in loaded if m.split(".")[0] in HEAVY]


def test_a_query_loads_what_it_needs():
    loaded = _imported_after("import dpaccount; dpaccount.GaussianMechanism(1.0).get_approxDP(1e-5)")
    assert "scipy.special" in loaded
