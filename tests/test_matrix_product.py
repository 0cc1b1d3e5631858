"""Matrix mechanisms through the product surface: specs and the command line."""
import json
import subprocess
import sys

import pytest

import dpaccount
from dpaccount import MatrixMechanism, Participation, from_spec
from dpaccount import strategies as S


@pytest.mark.parametrize("strategy", [S.toeplitz([1.0, 0.5], 20), S.blt([0.9], [0.2], 20), S.tree(16),
                                      S.prefix(8), S.identity(8), S.dense([[1.0, 0], [0.5, 1]])])
@pytest.mark.parametrize("part", [Participation.single(), Participation.min_separation(1, 2),
                                  Participation.fixed_epochs(2)])
def test_spec_round_trip(strategy, part):
    m = MatrixMechanism(strategy, 1.5, part)
    back = from_spec(json.loads(json.dumps(m.to_spec())))
    assert back == m and back.sensitivity == m.sensitivity


def test_spec_round_trip_restarted_tree():
    m = MatrixMechanism(S.tree(16, restart_every=8), 1.5, Participation.fixed_epochs(2))
    back = from_spec(json.loads(json.dumps(m.to_spec())))
    assert back == m and back.to_spec()["strategy"]["restart_every"] == 8


@pytest.mark.parametrize("strategy,match", [
    ({"kind": "dense", "matrix": [[1, 1], [0, 1]]}, "spec.strategy: strategy must be lower triangular"),
    ({"kind": "nope"}, "spec.strategy: strategy kind"), ([1, 2], "spec.strategy: must be an object"),
    ({"kind": "toeplitz", "coeffs": [1.0], "n": 4, "x": 1}, "spec.strategy: strategy 'toeplitz' got arguments"),
])
def test_spec_errors(strategy, match):
    with pytest.raises((dpaccount.SpecError, dpaccount.SpecTypeError), match=match):
        from_spec({"dpaccount_spec": 1, "type": "MatrixMechanism", "strategy": strategy, "noise_multiplier": 1})


def _cli(*args):
    out = subprocess.run([sys.executable, "-m", "dpaccount", "epsilon", *args, "--delta", "1e-5"],
                         capture_output=True, text=True)
    return out.returncode, out.stdout + out.stderr


def _printed_matches(code, text, eps):
    """The CLI printed ε: the upper bound ``eps`` rounded up to 6 significant digits."""
    return code == 0 and eps <= float(text.split("epsilon = ")[1].split()[0]) <= eps * (1 + 1e-5)


def test_cli_matrix_equals_library():
    code, text = _cli("--mechanism", "matrix", "--strategy", "toeplitz:1,0.5,0.25", "--n", "1000", "--sigma", "5",
                      "--min-separation", "10")
    m = MatrixMechanism(S.toeplitz([1, 0.5, 0.25], 1000), 5.0, Participation.min_separation(10))
    assert _printed_matches(code, text, m.get_approxDP(1e-5)), text
    code, text = _cli("--mechanism", "matrix", "--strategy", "identity", "--n", "100", "--sigma", "1",
                      "--min-separation", "10", "--q", "0.1")
    want = dpaccount.CyclicPoissonSampling()(MatrixMechanism(S.identity(100), 1.0,
                                                              Participation.min_separation(10)), 0.1)
    assert _printed_matches(code, text, want.get_approxDP(1e-5)), text
    code, text = _cli("--mechanism", "matrix", "--strategy", "identity", "--n", "100", "--sigma", "1",
                      "--min-separation", "10", "--batch-scheme", "balls-in-bins")
    want = dpaccount.BallsInBinsSampling()(MatrixMechanism(S.identity(100), 1.0, Participation.min_separation(10)))
    assert _printed_matches(code, text, want.get_approxDP(1e-5)), text


@pytest.mark.parametrize("args,match", [
    (("--mechanism", "gaussian", "--sigma", "5", "--batch-scheme", "balls-in-bins"), "applies to --mechanism matrix"),
    (("--mechanism", "matrix", "--strategy", "toeplitz:1,0.5", "--n", "100", "--sigma", "5", "--min-separation",
      "10", "--batch-scheme", "balls-in-bins"), "diagonal strategy"),
    (("--mechanism", "matrix", "--strategy", "identity", "--n", "100", "--sigma", "5", "--min-separation", "10",
      "--batch-scheme", "balls-in-bins", "--q", "0.1"), "--q does not apply to --batch-scheme balls-in-bins"),
    (("--mechanism", "gaussian", "--sigma", "5", "--batch-scheme", "cyclic-poisson", "--q", "0.1"),
     "applies to --mechanism matrix only"),
    (("--mechanism", "matrix", "--strategy", "prefix", "--n", "100", "--sigma", "5", "--epochs", "10", "--q", "0.1"),
     "bands"),
    (("--mechanism", "matrix", "--strategy", "what", "--n", "100", "--sigma", "1"), "strategy must be"),
    (("--mechanism", "matrix", "--strategy", "identity", "--n", "100", "--sigma", "1", "--epochs", "3"),
     "fixed_epochs"),
])
def test_cli_errors(args, match):
    code, text = _cli(*args)
    assert code != 0 and match in text


def test_a_sensitivity_bound_claims_no_attained_lower_end():
    """Where Δ is only an upper bound (a dense strategy under min-separation: the |CᵀC| bound),
    no pattern is known to move C·G by Δ, so the Gaussian of Δ is a dominating pair only: the
    intervals give no certified lower end, alone or composed with an attained Gaussian (whose
    merge keeps the non-attainment). The upper end is the Gaussian's exact ε at μ = Δ/z."""
    import mpmath as mp
    import numpy as np

    c = np.tril(np.random.default_rng(0).normal(size=(8, 8)))
    m = MatrixMechanism(S.dense(c), 3.0, Participation.min_separation(2))
    assert not m.sensitivity_exact and not m.pairs.tight
    b = m.get_approxDP_bounds(1e-5)
    assert b.lower is None and not b.certified
    with mp.workdps(40):  # the Gaussian's δ at the upper end is at most 1e-5 (and only just)
        mu, eps = mp.mpf(m.sensitivity) / 3, mp.mpf(b.upper)
        delta = mp.ncdf(-eps / mu + mu / 2) - mp.exp(eps) * mp.ncdf(-eps / mu - mu / 2)
        assert 1e-5 * (1 - 1e-6) <= delta <= 1e-5
    both = dpaccount.Composition()([m, dpaccount.GaussianMechanism(2.0)], [2, 1])
    assert not both.pairs.tight and both.get_approx_delta_bounds(1.0).lower is None
    exact = MatrixMechanism(S.toeplitz([1, 0.5], 16), 3.0, Participation.min_separation(4))
    assert exact.sensitivity_exact and exact.get_approxDP_bounds(1e-5).certified
