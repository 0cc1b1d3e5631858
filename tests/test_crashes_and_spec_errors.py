"""Issue 28 items 4 and 9: inputs that crashed, and errors that one
``except DPAccountError`` must catch.

* Perfectly distinguishable laws (P ⟂ Q) composed: every loss is +∞ under P,
  so δ(ε) = 1 for every ε, ε(δ) = ∞ for every δ < 1, and the trade-off curve
  is β ≡ 0 (a test with no error of either type). These are exact values.
* The command line: a closed pipe stops it quietly, a negative μ is a usage
  error.
* A law with a negative scale is refused naming the parameter and its value.
* Spec errors are ``SpecError`` / ``SpecTypeError``: library errors
  (``DPAccountError``) that are still ``ValueError`` / ``TypeError``.
"""
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import ulp_noise
from scipy import stats

import dpaccount as dpa
from dpaccount.cli import main

ROOT = pathlib.Path(dpa.__file__).parent.parent
DISJOINT = dpa.DiscreteMechanism([1, 0], [0, 1])


@pytest.mark.parametrize("parts", [
    ([DISJOINT], [3]),
    ([DISJOINT, dpa.LaplaceMechanism(1.0)], [3, 2]),                      # with a grid's pair
    ([DISJOINT, dpa.GaussianMechanism(1.0), dpa.RandomizedResponse(0.6)], [2, 5, 4]),
])
def test_a_composition_of_disjoint_laws_is_answered_exactly(parts):
    m = dpa.Composition()(*parts)
    assert m.get_approxDP(1e-5) == np.inf
    assert np.all(m.get_approxDP(np.array([1e-12, 0.5, 0.999])) == np.inf)
    assert m.get_approx_delta(3.0) == 1.0
    assert np.all(m.get_fDP(np.array([0.0, 0.1, 1.0])) == 0.0)
    b = m.get_approxDP_bounds(1e-5)
    assert b.lower == b.upper == np.inf


def test_the_cli_answers_disjoint_laws_and_stops_quietly_on_a_closed_pipe(tmp_path):
    spec = tmp_path / "disjoint.json"
    dpa.dump(dpa.Composition()([DISJOINT], [3]), spec)
    code = main(["epsilon", "--spec", str(spec), "--delta", "1e-5", "--json"])
    assert code == 0
    # the reader of the output goes away after one line: exit 141 (128 + SIGPIPE), nothing on stderr
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [*ulp_noise.python_command("dpaccount"), "fdp", "--mechanism", "gaussian", "--sigma", "2",
           "--points", "20000"]
    writer = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    writer.stdout.readline()
    writer.stdout.close()  # as `| head -1` does
    err = writer.stderr.read().decode()
    assert writer.wait(timeout=120) == 141 and err == ""


@pytest.mark.parametrize("mu", ["-1", "nan", "inf"])
def test_a_negative_gdp_mu_is_a_usage_error(tmp_path, capsys, mu):
    pytest.importorskip("matplotlib")
    out = tmp_path / "f.png"
    code = main(["plot", "--mechanism", "gaussian", "--sigma", "2", "--output", str(out), "--gdp-mu", "0.5", mu])
    assert code == 2 and "gdp_mu" in capsys.readouterr().err and not out.exists()
    with pytest.raises(ValueError, match="gdp_mu"):
        dpa.plot_fDP(dpa.GaussianMechanism(2.0), gdp_mu=[0.5, float(mu)])


def test_a_law_with_a_negative_scale_names_it():
    with pytest.raises(ValueError, match=r"p_dist has invalid parameters \(scale=-1.0 must be > 0"):
        dpa.ContinuousMechanism(stats.norm(0.0, -1.0), stats.norm(1.0, 1.0))
    with pytest.raises(ValueError, match=r"q_dist .*scale=-2.0 must be > 0"):
        dpa.ContinuousMechanism(stats.logistic(0.0, 1.0), stats.logistic(loc=1.0, scale=-2.0))
    spec = {"dpaccount_spec": 1, "type": "ContinuousMechanism", "p_dist": {"law": "norm", "args": [0, 1]},
            "q_dist": {"law": "norm", "kwds": {"loc": 1.0, "scale": -2.0}}}
    with pytest.raises(dpa.SpecError, match=r"^spec\.q_dist\.kwds\.scale: .*> 0, got -2\.0"):
        dpa.from_spec(spec)


HOSTILE = [
    ({"dpaccount_spec": 1, "type": "GaussianMechanism", "sigma": "x"}, TypeError, r"^spec\.sigma: "),
    ({"dpaccount_spec": 1, "type": "GaussianMechanism", "sigma": -1.0}, ValueError, r"^spec\.sigma: "),
    ({"dpaccount_spec": 1, "type": "os.system"}, ValueError, r"^spec\.type: "),
    ({"dpaccount_spec": 2, "type": "GaussianMechanism"}, ValueError, r"^spec\.dpaccount_spec: "),
    ({"dpaccount_spec": 1, "type": "Composition", "parts": [5]}, TypeError, r"^spec\.parts\[0\]: "),
    ("not a dict", TypeError, r"^spec must be a dict"),
]


@pytest.mark.parametrize("spec, builtin, where", HOSTILE)
def test_spec_errors_are_library_errors_and_keep_their_builtin_kind(spec, builtin, where):
    with pytest.raises(dpa.DPAccountError, match=where) as caught:
        dpa.from_spec(spec)
    assert isinstance(caught.value, dpa.SpecError) and isinstance(caught.value, builtin)
    assert isinstance(caught.value, TypeError) == (builtin is TypeError)
    assert issubclass(dpa.SpecTypeError, dpa.SpecError)


def test_spec_text_errors_are_library_errors_and_the_cli_calls_them_usage(tmp_path, capsys):
    for text in ("{", '{"dpaccount_spec": 1, "type": "GaussianMechanism", "sigma": NaN}'):
        with pytest.raises(dpa.SpecError, match="^spec: "):
            dpa.specs.loads(text)
    bad = tmp_path / "bad.json"
    bad.write_text('{"dpaccount_spec": 1, "type": "GaussianMechanism", "sigma": -1}')
    assert main(["epsilon", "--spec", str(bad), "--delta", "1e-5"]) == 2
    assert "spec.sigma" in capsys.readouterr().err
