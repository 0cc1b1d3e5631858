"""The batch schemes on the command line (issue 29): ``--batch-scheme`` with the
flags each takes, and ``dpaccount dpsgd --sampling``; each answer is the Python
construction's, and a missing or stray flag is a usage error naming it."""
import json

import pytest

import dpaccount as dp
from dpaccount import (Composition, GaussianMechanism, PoissonSampling, SamplingWithReplacement, SubsetSampling,
                       TruncatedPoissonSampling)
from dpaccount.cli import main
from dpaccount.transformers.random_allocation import RandomAllocation

GAUSS = ["--mechanism", "gaussian", "--sigma", "1.1"]
REPLACE = GAUSS + ["--relation", "replace-one"]
SCHEMES = [  # (flags, the step in Python)
    (GAUSS + ["--batch-scheme", "poisson", "--q", "0.05"], PoissonSampling()(GaussianMechanism(1.1), 0.05)),
    (GAUSS + ["--batch-scheme", "truncated-poisson", "--q", "0.05", "--dataset-size", "1000",
              "--max-batch-size", "55"],
     TruncatedPoissonSampling()(GaussianMechanism(1.1), 0.05, 1000, 55)),
    (REPLACE + ["--batch-scheme", "without-replacement", "--batch-size", "50", "--dataset-size", "1000"],
     SubsetSampling()(GaussianMechanism(1.1, relation="replace-one"), 0.05)),
    (REPLACE + ["--batch-scheme", "with-replacement", "--batch-size", "50", "--dataset-size", "1000"],
     SamplingWithReplacement()(GaussianMechanism(1.1, relation="replace-one"), 1000, 50)),
    (GAUSS + ["--batch-scheme", "random-allocation", "--batch-size", "50", "--dataset-size", "990"],
     RandomAllocation()(GaussianMechanism(1.1), 20)),   # one pass of ceil(990 / 50) = 20 steps
]


@pytest.mark.parametrize("flags, step", SCHEMES, ids=[f[f.index("--batch-scheme") + 1] for f, _ in SCHEMES])
def test_each_scheme_is_the_python_construction(flags, step, capsys):
    assert main(["epsilon", *flags, "--steps", "20", "--delta", "1e-5", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    m = Composition()([step], [20])
    assert doc["spec"] == m.to_spec()
    assert doc["results"][0]["epsilon"] == m.get_approxDP(1e-5)


def test_q_alone_is_still_poisson_sampling(capsys):
    assert main(["epsilon", *GAUSS, "--q", "0.05", "--steps", "20", "--delta", "1e-5", "--json"]) == 0
    implicit = json.loads(capsys.readouterr().out)
    assert main(["epsilon", *SCHEMES[0][0], "--steps", "20", "--delta", "1e-5", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == implicit


@pytest.mark.parametrize("flags, words", [
    (GAUSS + ["--batch-scheme", "poisson"], "--batch-scheme poisson needs --q"),
    (GAUSS + ["--batch-scheme", "truncated-poisson", "--q", "0.05"],
     "--batch-scheme truncated-poisson needs --dataset-size and --max-batch-size"),
    (REPLACE + ["--batch-scheme", "without-replacement", "--dataset-size", "1000"],
     "--batch-scheme without-replacement needs --batch-size"),
    (REPLACE + ["--batch-scheme", "with-replacement", "--batch-size", "50"],
     "--batch-scheme with-replacement needs --dataset-size"),
    (REPLACE + ["--batch-scheme", "with-replacement", "--batch-size", "50", "--dataset-size", "1000", "--q", "0.1"],
     "--q does not apply to --batch-scheme with-replacement"),
    (GAUSS + ["--batch-size", "50"], "--batch-size needs --batch-scheme"),
    (GAUSS + ["--batch-scheme", "random-allocation", "--batch-size", "50"],
     "--batch-scheme random-allocation needs --dataset-size"),
    (REPLACE + ["--batch-scheme", "random-allocation", "--batch-size", "50", "--dataset-size", "1000"],
     "--batch-scheme random-allocation amplifies add/remove"),
    (GAUSS + ["--batch-scheme", "with-replacement", "--batch-size", "50", "--dataset-size", "1000"],
     "--relation replace-one"),
    (REPLACE + ["--batch-scheme", "truncated-poisson", "--q", "0.05", "--dataset-size", "1000",
                "--max-batch-size", "55"], "--batch-scheme truncated-poisson amplifies add/remove"),
    (REPLACE + ["--batch-scheme", "without-replacement", "--batch-size", "2000", "--dataset-size", "1000"],
     "--batch-size must be a whole number in [1, --dataset-size = 1000]"),
    (GAUSS + ["--batch-scheme", "truncated-poisson", "--q", "0.05", "--dataset-size", "1000",
              "--max-batch-size", "0"], "--max-batch-size must be"),
    (["--mechanism", "subsampled-gaussian", "--sigma", "1.1", "--q", "0.05", "--batch-scheme", "truncated-poisson",
      "--dataset-size", "1000", "--max-batch-size", "55"], "take --mechanism gaussian"),
])
def test_a_missing_or_stray_flag_is_a_usage_error_naming_it(flags, words, capsys):
    assert main(["epsilon", *flags, "--delta", "1e-5"]) == 2
    err = capsys.readouterr().err
    assert words in err and "_size" not in err and "Sampling" not in err


def test_a_sweep_over_a_scheme_flag(capsys):
    flags = GAUSS + ["--batch-scheme", "truncated-poisson", "--q", "0.05", "--dataset-size", "1000"]
    assert main(["sweep", *flags, "--grid", "max-batch-size=50,60", "--delta", "1e-5", "--workers", "1",
                 "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    exact = [Composition()([TruncatedPoissonSampling()(GaussianMechanism(1.1), 0.05, 1000, b)], [1])
             for b in (50, 60)]
    assert [r["epsilon"] for r in rows] == [m.get_approxDP(1e-5) for m in exact]


@pytest.mark.parametrize("sampling, step", [
    ("truncated-poisson", TruncatedPoissonSampling()(GaussianMechanism(1.1), 0.05, 1000, 55)),
    ("with-replacement", SamplingWithReplacement()(GaussianMechanism(1.1, relation="replace-one"), 1000, 50)),
])
def test_dpsgd_takes_the_new_schemes(sampling, step, capsys):
    cap = 55 if sampling == "truncated-poisson" else None
    m = dp.dpsgd(1.1, 50, 1000, 1, sampling=sampling, max_batch_size=cap)
    assert m == Composition()([step], [20])
    argv = ["dpsgd", "-s", "1.1", "-b", "50", "-n", "1000", "-E", "1", "--sampling", sampling, "-d", "1e-5", "--json"]
    assert main(argv + (["--max-batch-size", "55"] if cap else [])) == 0
    assert json.loads(capsys.readouterr().out)["results"][0]["epsilon"] == m.get_approxDP(1e-5)


def test_dpsgd_random_allocation_composes_whole_passes(capsys):
    m = dp.dpsgd(1.1, 50, 990, 2, sampling="random-allocation")
    assert m == Composition()([RandomAllocation()(GaussianMechanism(1.1), 20)], [2])
    assert main(["dpsgd", "-s", "1.1", "-b", "50", "-n", "990", "-E", "2", "--sampling", "random-allocation",
                 "-d", "1e-5", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["results"][0]["epsilon"] == m.get_approxDP(1e-5)
    with pytest.raises(ValueError, match="epochs must be a whole number"):
        dp.dpsgd(1.1, 50, 990, 1.5, sampling="random-allocation")


def test_dpsgd_refuses_a_cap_it_cannot_use(capsys):
    with pytest.raises(ValueError, match="max_batch_size is required"):
        dp.dpsgd(1.1, 50, 1000, 1, sampling="truncated-poisson")
    with pytest.raises(ValueError, match="max_batch_size applies to sampling='truncated-poisson' only"):
        dp.dpsgd(1.1, 50, 1000, 1, max_batch_size=55)
    assert main(["dpsgd", "-s", "1.1", "-b", "50", "-n", "1000", "-E", "1", "--sampling", "truncated-poisson",
                 "-d", "1e-5"]) == 2
    assert "--max-batch-size is required for --sampling truncated-poisson" in capsys.readouterr().err
    assert main(["dpsgd", "-s", "1.1", "-b", "50", "-n", "1000", "-E", "1", "--max-batch-size", "55",
                 "-d", "1e-5"]) == 2
    assert "--max-batch-size applies to --sampling truncated-poisson only" in capsys.readouterr().err
