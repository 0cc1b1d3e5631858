"""Every script in examples/ runs, as a reader would run it
(``python examples/NAME.py``), in seconds, without a warning; a few words
of each output are checked. ``fdp_figure3.py`` needs matplotlib (the extra
``[plot]``; it selects the Agg backend itself) and writes its figure to a
scratch file here."""
import importlib.util
import os
import pathlib
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"
EXPECT = {  # example -> words its output must contain
    "dpsgd": ["epsilon   : 2.38"],
    "decaying_sigma": ["   10  0.900  4.2", "a constant sigma = 1.24"],
    "federated_binomial": ["   16                inf", " 4096 "],
    "subset_sampling": ["the least sigma for epsilon <= 3 (replace-one)"],
    "online_odometer": ["budget epsilon = 2.0 spent", "restored from the last checkpoint"],
    "batch_schemes": ["Poisson (add/remove)                        0.3071     0.41",
                      "truncated Poisson, cap 300 (add/remove)     1.08",
                      "random allocation (add/remove)              0.27"],
    "fdp_figure3": ["σ = 0.5, 100 epochs: β(0.01) = 0.10", "wrote "],
    "matrix_mechanisms": ["DP-SGD, 10 fixed epochs                          3.1623",
                          "BandMF 16 bands, cyclic Poisson", "DP-SGD, balls-in-bins"],
    "banded_mf": ["cyclic Poisson sampling, 8 groups of 7500", "(worst group) : 1.68", "(the reduction)    : 1.68"],
}


def test_every_example_is_listed_here_in_the_readme_and_on_the_site():
    names = {p.stem for p in EXAMPLES.glob("*.py")}
    assert names == set(EXPECT)
    readme = (EXAMPLES.parent / "README.md").read_text(encoding="utf-8")
    site = (EXAMPLES.parent / "docs" / "examples.rst").read_text(encoding="utf-8")
    assert all(f"examples/{name}.py" in readme and f"../examples/{name}.py" in site for name in names)


@pytest.mark.parametrize("name", sorted(EXPECT))
def test_the_example_runs(name, tmp_path):
    argv = []
    if name == "fdp_figure3":
        if importlib.util.find_spec("matplotlib") is None:
            pytest.skip("fdp_figure3 needs matplotlib (pip install -e '.[plot]')")
        argv = [str(tmp_path / "figure3.png")]
    env = {**os.environ, "PYTHONPATH": str(EXAMPLES.parent)}
    out = subprocess.run([sys.executable, str(EXAMPLES / f"{name}.py"), *argv], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stderr == "", out.stderr
    for words in EXPECT[name]:
        assert words in out.stdout, out.stdout
    if argv:
        assert (tmp_path / "figure3.png").stat().st_size > 10_000
