"""``import dpaccount`` stays quick (issue 32): scipy's submodules, mpmath and
matplotlib load on first use, not at import (their import is most of a cold
start: scipy.stats alone takes ~10× numpy), and so do the standard library's
slower modules the package needs only for some calls. A default query loads
only the scipy it computes with: scipy.signal (0.3–0.6 s, with scipy.stats and
scipy.optimize behind it) was most of a first query's time, for one filter
(now ``pld/grids/discounted.py``, in numpy). Timing belongs to benchmarks
(``benchmarks/bench_import.py``); this checks the cause, what is imported."""
import subprocess
import sys

HEAVY = ("scipy", "mpmath", "matplotlib", "dp_accounting", "torch", "opacus", "pandas")
STDLIB_ON_FIRST_USE = ("argparse", "fractions", "decimal", "json", "csv", "hashlib", "multiprocessing",
                       "concurrent.futures.process", "unittest")
DPACCOUNT_ON_FIRST_USE = ("cf", "fdp", "specs", "dp_events", "plots", "recipes", "odometer", "integrations",
                          "cli", "jsontext", "mechanisms.training", "transformers.random_allocation")
DPSGD = "import dpaccount as d; d.Composition()([d.PoissonSampling()(d.GaussianMechanism(1.1), 256 / 60000)], [14063])"


def _imported_after(code):
    run = subprocess.run([sys.executable, "-c", f"import sys; {code}; print(' '.join(sorted(sys.modules)))"],
                         capture_output=True, text=True, check=True)
    return set(run.stdout.split())


def _loaded(loaded, names):
    return sorted(m for m in loaded if any(m == n or m.startswith(n + ".") for n in names))


def test_import_dpaccount_loads_no_heavy_module():
    loaded = _imported_after("import dpaccount")
    assert not _loaded(loaded, HEAVY)
    # numpy < 1.25 loads json and hashlib itself: count only what dpaccount adds
    assert not _loaded(loaded - _imported_after("import numpy"), STDLIB_ON_FIRST_USE)
    assert not _loaded(loaded, [f"dpaccount.{unit}" for unit in DPACCOUNT_ON_FIRST_USE])


def test_names_imported_on_first_use_are_there():
    """Each public name is its module's object however it is reached first (a name
    that is also a top-level module's would be rebound to the module by its import)."""
    loaded = _imported_after(
        "import dpaccount, dpaccount.specs, dpaccount.recipes, inspect; "
        "assert not [n for n in dpaccount.__all__ if inspect.ismodule(getattr(dpaccount, n))]; "
        "assert all(getattr(dpaccount, n) is getattr(sys.modules[f'dpaccount.{m}'], n) "
        "for m, names in dpaccount._ON_FIRST_USE.items() for n in names); "
        "assert sorted(dir(dpaccount)) == sorted(dpaccount.__all__ + ['__version__']); "
        "from dpaccount import *; from dpaccount import RandomAllocation")
    assert {"dpaccount.recipes", "dpaccount.specs", "dpaccount.odometer", "dpaccount.plots"} <= loaded
    assert not _loaded(loaded, ["matplotlib", "scipy.stats", "scipy.signal"])


def test_a_query_loads_what_it_needs():
    loaded = _imported_after("import dpaccount; dpaccount.GaussianMechanism(1.0).get_approxDP(1e-5)")
    assert "scipy.special" in loaded


def test_the_default_dpsgd_and_blog_queries_load_no_scipy():
    """Their Gaussian cells take log Φ from ``dpaccount/ndtr.py`` and their transforms run
    on numpy.fft (``dpaccount/fourier.py``; scipy.fft only under numpy 1.x)."""
    import numpy as np
    blog = DPSGD.replace("1.1", "0.5").replace("256 / 60000", "2e-5").replace("14063", "1000")
    for query in (f"{DPSGD}.get_approxDP(1e-5)", f"{blog}.get_approxDP(1e-8)"):
        loaded = _imported_after(query)
        assert "dpaccount.pld.grids.grid" in loaded
        assert not _loaded(loaded, ["scipy.signal", "scipy.stats", "scipy.optimize", "mpmath", "matplotlib",
                                    "dpaccount.cf", "dpaccount.fdp"])
        if np.lib.NumpyVersion(np.__version__) >= "2.0.0":   # (scipy 1.12's scipy.fft loads scipy.special)
            assert not _loaded(loaded, ["scipy"])


def test_type_checkers_see_the_names_imported_on_first_use():
    """``__init__``'s ``if TYPE_CHECKING:`` imports are exactly ``_ON_FIRST_USE``."""
    import ast
    import pathlib

    import dpaccount
    tree = ast.parse(pathlib.Path(dpaccount.__file__).read_text())
    block = next(node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING")
    seen = {node.module: tuple(sorted(a.name for a in node.names)) for node in block.body}
    assert seen == {module: tuple(sorted(names)) for module, names in dpaccount._ON_FIRST_USE.items()}
