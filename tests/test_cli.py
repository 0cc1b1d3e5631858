"""The ``dpaccount`` command: through ``subprocess`` (``python -m dpaccount``,
and the installed console script when there is one) for the exact forms
scripts rely on, and in-process (``cli.main``) for the rest."""
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest
import ulp_noise

import dpaccount as dpa
from dpaccount import Composition, GaussianMechanism, LaplaceMechanism, PoissonSampling
from dpaccount.cli import fmt, main

ROOT = pathlib.Path(dpa.__file__).parent.parent
HEADLINE = ["epsilon", "--mechanism", "subsampled-gaussian", "--sigma", "1.1", "--q", "0.0042667",
            "--steps", "14063", "--delta", "1e-5"]


def run(*argv, command=None, stdin=None):
    command = command or ulp_noise.python_command("dpaccount")  # perturbed as this process, if it is
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([*command, *argv], capture_output=True, text=True, env=env, input=stdin, timeout=120)


def dpsgd(q=0.0042667, steps=14063):
    return Composition()([PoissonSampling()(GaussianMechanism(1.1), q)], [steps])


def test_the_headline_command_prints_the_certified_upper_bound():
    out = run(*HEADLINE)
    assert out.returncode == 0 and out.stderr == ""
    eps = dpsgd().get_approxDP(1e-5)
    assert out.stdout.startswith("epsilon = ") and "at delta = 1e-05" in out.stdout and "upper bound" in out.stdout
    printed = float(out.stdout.split()[2])
    assert eps <= printed <= eps * (1 + 1e-5)  # rounded up, never down


def test_json_output_is_exact_and_carries_the_spec():
    out = run(*HEADLINE, "--json")
    assert out.returncode == 0
    doc = json.loads(out.stdout)
    assert doc["results"][0]["epsilon"] == dpsgd().get_approxDP(1e-5)
    assert doc["results"][0]["delta"] == 1e-5 and doc["query"] == "epsilon"
    assert dpa.from_spec(doc["spec"]) == dpsgd()


@pytest.mark.parametrize("argv,code,words", [
    (["epsilon", "--mechanism", "gaussian", "--sigma", "-1", "--delta", "1e-5"], 2, "sigma must lie in"),
    (["epsilon", "--mechanism", "gausian", "--sigma", "1", "--delta", "1e-5"], 2, "invalid choice: 'gausian'"),
    (["epsilon", "--mechanism", "gaussian", "--delta", "1e-5"], 2, "needs --sigma"),
    (["epsilon", "--mechanism", "gaussian", "--sigma", "1"], 2, "--delta"),
    (["epsilon", "--spec", "/no/such/file.json", "--delta", "1e-5"], 2, "cannot read spec"),
    (["epsilon", "--mechanism", "binomial", "--n", "5", "--p", "0.5", "--delta", "1e-5", "--method", "rdp"],
     3, "no certified answer"),
])
def test_bad_input_is_one_line_and_a_meaningful_exit_code(argv, code, words, capsys):
    assert main(argv) == code
    out = capsys.readouterr()
    assert out.out == "" and "Traceback" not in out.err
    lines = out.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dpaccount") and words in lines[0], out.err


def test_bad_input_through_a_real_process():
    for argv, code in ((["epsilon", "--mechanism", "gaussian", "--sigma", "nan?", "--delta", "1e-5"], 2),
                       (["delta", "--mechanism", "binomial", "--n", "5", "--p", "0.5", "--eps", "1",
                         "--method", "rdp"], 3)):
        out = run(*argv)
        assert out.returncode == code and out.stdout == ""
        assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr, out.stderr


def test_help_lists_the_commands_and_the_exit_codes(capsys):
    assert main(["--help"]) == 0
    text = capsys.readouterr().out
    for word in ("epsilon", "delta", "rdp", "report", "fdp", "plot", "calibrate", "exit codes",
                 "accuracy not reached", "optional dependency"):
        assert word in text
    assert main(["epsilon", "--help"]) == 0
    text = capsys.readouterr().out
    assert "--delta" in text and "--spec" in text and "--bounds" in text and "exit codes" in text


@pytest.mark.skipif(shutil.which("dpaccount") is None, reason="the console script is not installed")
def test_the_installed_console_script():
    out = run(*HEADLINE, command=("dpaccount",))
    assert out.returncode == 0 and out.stdout.startswith("epsilon = ")


def test_a_spec_file_and_stdin(tmp_path, capsys):
    m = Composition()([GaussianMechanism(2.0), LaplaceMechanism(4.0)], [3, 2])
    path = tmp_path / "m.json"
    dpa.dump(m, path)
    assert main(["delta", "--spec", str(path), "--eps", "1", "2", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["results"]
    assert [r["delta"] for r in rows] == list(m.get_approx_delta([1.0, 2.0]))
    out = run("epsilon", "--spec", "-", "--delta", "1e-5", "--steps", "2", stdin=path.read_text())
    assert out.returncode == 0, out.stderr
    assert float(out.stdout.split()[2]) >= Composition()([m], [2]).get_approxDP(1e-5)
    bad = tmp_path / "bad.json"
    bad.write_text('{"dpaccount_spec": 1, "type": "os.system"}')
    assert main(["epsilon", "--spec", str(bad), "--delta", "1e-5"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "spec.type: unknown mechanism type 'os.system'" in err


def test_bounds_print_a_certified_interval_rounded_outwards(capsys):
    assert main(["epsilon", "--mechanism", "laplace", "--b", "2", "--steps", "20", "--delta", "1e-5",
                 "--bounds"]) == 0
    text = capsys.readouterr().out
    b = Composition()([LaplaceMechanism(2.0)], [20]).get_approxDP_bounds(1e-5)
    lo, hi = (float(x) for x in text.split("[")[1].split("]")[0].split(","))
    assert lo <= b.lower and b.upper <= hi and "certified interval" in text


def test_json_says_inf_where_no_finite_epsilon_exists(capsys):
    argv = ["epsilon", "--mechanism", "binomial", "--n", "16", "--p", "0.5", "--q", "0.1", "--steps", "200",
            "--delta", "1e-5"]
    assert main(argv + ["--json"]) == 0
    assert json.loads(capsys.readouterr().out)["results"][0]["epsilon"] == "inf"
    assert main(argv) == 0 and capsys.readouterr().out.startswith("epsilon = inf at delta = 1e-05")


def test_rdp_and_report(capsys):
    assert main(["rdp", "--mechanism", "gaussian", "--sigma", "2", "--alpha", "2", "8", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["results"]
    assert [r["epsilon"] for r in rows] == [2 / 8, 8 / 8]  # α/(2σ²)
    assert main(["report", "--mechanism", "subsampled-gaussian", "--sigma", "1.5", "--q", "0.01",
                 "--steps", "100"]) == 0
    text = capsys.readouterr().out
    assert "epsilon (certified, pld)" in text and "epsilon (RDP)" in text and "1e-09" in text
    assert main(["report", "--mechanism", "binomial", "--n", "30", "--p", "0.5", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["results"]
    assert len(rows) == 7 and all(r["rdp"] is None and r["epsilon"] > 0 for r in rows)  # no RDP: n/a


def test_calibrate_meets_the_budget_on_the_safe_side(capsys):
    assert main(["calibrate", "--solve", "sigma", "--mechanism", "subsampled-gaussian", "--q", "0.01",
                 "--steps", "200", "--eps", "2", "--delta", "1e-5", "--json", "--progress"]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert doc["certified_epsilon"] <= 2 and captured.err.splitlines()[-1] == "calibrate: 100%  ETA 0s"
    assert Composition()([PoissonSampling()(GaussianMechanism(doc["value"]), 0.01)], [200]).get_approxDP(1e-5) <= 2
    assert main(["calibrate", "--solve", "steps", "--mechanism", "laplace", "--b", "10", "--eps", "1",
                 "--delta", "1e-5"]) == 0
    steps = int(capsys.readouterr().out.split()[2])
    assert Composition()([LaplaceMechanism(10.0)], [steps]).get_approxDP(1e-5) <= 1
    assert Composition()([LaplaceMechanism(10.0)], [steps + max(1, steps // 100)]).get_approxDP(1e-5) > 1
    assert main(["calibrate", "--solve", "sigma", "--mechanism", "gaussian", "--eps", "1", "--delta", "1e-5",
                 "--range", "0.01", "0.02"]) == 3
    assert "no value in --range" in capsys.readouterr().err


def test_fmt_rounds_towards_the_safe_side():
    x = 2.3817843
    assert fmt(x) == "2.38179" and fmt(x, up=False) == "2.38178"
    assert fmt(1e-12 * 1.0000001) == "1.00001e-12" and fmt(0.0) == "0" and fmt(None) == "n/a"
    for y in (0.1, 1 / 3, 12345678.9, 7e-300):
        assert float(fmt(y)) >= y and float(fmt(y, up=False)) <= y


# -- f-DP: fdp, plot, and the CLT column of report ---------------------------------

def test_fdp_prints_the_certified_curve_rounded_down_and_json_exactly():
    argv = ["fdp", "--mechanism", "subsampled-gaussian", "--sigma", "1.1", "--q", "0.0042667", "--steps", "14063",
            "--alpha", "0.01", "0.1"]
    out = run(*argv)
    assert out.returncode == 0 and out.stderr == "", out.stderr
    lines = out.stdout.splitlines()
    assert lines[1].split() == ["alpha", "beta", "(certified", "lower", "bound,", "pld)"]
    beta = dpsgd().get_fDP([0.01, 0.1])
    printed = [float(line.split()[1]) for line in lines[2:4]]
    assert all(b * (1 - 1e-5) <= p <= b for p, b in zip(printed, beta))  # rounded down: still a lower bound
    doc = json.loads(run(*argv, "--json").stdout)
    assert [r["beta"] for r in doc["results"]] == list(beta) and doc["method"] == "pld" and doc["query"] == "fdp"


def test_fdp_bounds_method_and_gdp(capsys):
    assert main(["fdp", "--mechanism", "gaussian", "--sigma", "2", "--steps", "4", "--points", "5", "--bounds",
                 "--gdp", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["method"] == "analytic" and doc["mu_gdp"] == pytest.approx(1.0)  # sqrt(4)/2
    assert [r["alpha"] for r in doc["results"]] == [0, 0.25, 0.5, 0.75, 1]
    assert all(r["beta"] <= r["upper"] for r in doc["results"])
    assert main(["fdp", "--mechanism", "laplace", "--b", "2", "--steps", "3", "--alpha", "0.1"]) == 0
    assert "certified lower bound, pld" in capsys.readouterr().out  # no closed form: the grids


def test_fdp_gdp_tail_is_a_flag_and_the_output_says_what_it_does(capsys):
    """``--tail`` (issue 27 §3): the certified μ up to that additive slack, as ``mu_GDP(tail=)``;
    a larger tail never gives a larger μ, and the text says why the default can be large."""
    argv = ["fdp", "--mechanism", "laplace", "--b", "1", "--steps", "3", "--alpha", "0.1", "--gdp"]
    assert main(argv + ["--json"]) == 0
    small = json.loads(capsys.readouterr().out)
    assert main(argv + ["--tail", "1e-6", "--json"]) == 0
    large = json.loads(capsys.readouterr().out)
    m = Composition()([LaplaceMechanism(1.0)], [3])
    assert small["mu_gdp"] == m.mu_GDP() and small["mu_gdp_tail"] == 1e-30
    assert large["mu_gdp"] == m.mu_GDP(tail=1e-6) <= small["mu_gdp"] and large["mu_gdp_tail"] == 1e-6
    assert main(argv + ["--tail", "1e-6"]) == 0
    text = capsys.readouterr().out
    assert "above G_mu - 1e-06" in text and "heavier far tail" in text


def test_fdp_clt_is_labelled_and_warns_in_one_line():
    out = run("fdp", "--mechanism", "subsampled-gaussian", "--sigma", "1.1", "--q", "0.0042667", "--steps",
              "14063", "--alpha", "0.1", "--method", "clt")
    assert out.returncode == 0 and "beta (CLT, approximate)" in out.stdout and "not a bound" in out.stdout
    warning, = out.stderr.splitlines()
    assert warning.startswith("dpaccount: warning: ") and "under-report" in warning


@pytest.mark.parametrize("argv,code,words", [
    (["fdp", "--mechanism", "gaussian", "--sigma", "1", "--alpha", "1.5"], 2, "--alpha must lie in [0, 1]"),
    (["fdp", "--mechanism", "gaussian", "--sigma", "1", "--points", "1"], 2, "--points must lie in"),
    (["fdp", "--mechanism", "gaussian", "--sigma", "1", "--alpha", "0.1", "--points", "3"], 2, "not allowed"),
    (["fdp", "--mechanism", "laplace", "--b", "1", "--alpha", "0.1", "--method", "clt"], 3, "CLT"),
    (["plot", "--mechanism", "gaussian", "--sigma", "1", "--output", "x.png", "--kind", "rdp", "--gdp-mu", "1"],
     2, "--kind fdp only"),
    (["plot", "--mechanism", "gaussian", "--sigma", "1"], 2, "--output"),
    (["fdp", "--mechanism", "gaussian", "--sigma", "1", "--alpha", "0.1", "--tail", "1e-6"], 2, "--gdp only"),
    (["fdp", "--mechanism", "gaussian", "--sigma", "1", "--alpha", "0.1", "--gdp", "--tail", "0.5"], 2, "tail"),
])
def test_fdp_and_plot_bad_input(argv, code, words, capsys):
    assert main(argv) == code
    out = capsys.readouterr()
    assert out.out == "" and len(out.err.strip().splitlines()) == 1 and words in out.err, out.err


def test_plot_writes_the_figure(tmp_path):
    pytest.importorskip("matplotlib")
    path = tmp_path / "curve.png"
    out = run("plot", "--mechanism", "gaussian", "--sigma", "2", "--steps", "3", "--output", str(path),
              "--gdp-mu", "1")
    assert out.returncode == 0, out.stderr
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stdout.startswith(f"wrote {path}")
    out = run("plot", "--mechanism", "gaussian", "--sigma", "2", "--output", str(tmp_path / "no" / "x.png"))
    assert out.returncode == 2 and "cannot write" in out.stderr and "Traceback" not in out.stderr


def test_plot_without_matplotlib_is_one_line_and_exit_code_4(tmp_path):
    shadow = tmp_path / "matplotlib"  # an unimportable matplotlib ahead of the real one
    shadow.mkdir()
    (shadow / "__init__.py").write_text("raise ImportError('No module named matplotlib')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    out = subprocess.run([sys.executable, "-m", "dpaccount", "plot", "--mechanism", "gaussian", "--sigma", "2",
                          "--output", str(tmp_path / "x.png")], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 4 and out.stdout == ""
    line, = out.stderr.splitlines()
    assert line.startswith("dpaccount: error: ") and "pip install 'dpaccount[plot]'" in line


def test_report_has_a_labelled_clt_column_and_says_where_it_under_reports(capsys):
    argv = ["report", "--mechanism", "subsampled-gaussian", "--sigma", "1.1", "--q", "0.01", "--steps", "100",
            "--deltas", "1e-3", "1e-6", "--progress"]
    assert main(argv) == 0
    out = capsys.readouterr()
    assert "epsilon (CLT, approximate)" in out.out and "not a bound" in out.out
    assert "warning (!): the CLT approximation is below the certified epsilon at delta = 0.001, 1e-06" in out.out
    assert out.err.splitlines()[-1] == "report: 100%  ETA 0s"  # progress, not a terminal: lines
    assert main(argv + ["--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["results"]
    m = Composition()([PoissonSampling()(GaussianMechanism(1.1), 0.01)], [100])
    assert [r["clt_under_reports"] for r in rows] == [True, True]
    assert all(r["clt"] < r["epsilon"] == m.get_approxDP(r["delta"]) for r in rows)
    assert main(["report", "--mechanism", "laplace", "--b", "3", "--deltas", "1e-5"]) == 0
    assert "CLT" not in capsys.readouterr().out  # the CLT covers subsampled Gaussians only


def test_the_cli_speaks_in_flags_not_python_names(capsys):
    """Issue 32: messages name the flags; a certified interval of an uncertified method is a
    usage error; dp_accounting's relation spellings; an image format checked before any work."""
    assert main(["epsilon", "--mechanism", "gaussian", "--sigma", "1", "--steps", "0", "--delta", "1e-5"]) == 2
    assert "--steps must be at least 1" in capsys.readouterr().err
    assert main(["epsilon", "--mechanism", "gaussian", "--sigma", "1", "--delta", "1e-5",
                 "--method", "rdp", "--bounds"]) == 2
    assert "--method rdp" in capsys.readouterr().err
    for spelling in ("add_or_remove_one", "ADD_OR_REMOVE_ONE", "replace_one"):
        assert main(["epsilon", "--mechanism", "gaussian", "--sigma", "1", "--relation", spelling,
                     "--delta", "1e-5"]) == 0
    capsys.readouterr()
    assert main(["epsilon", "--mechanism", "gaussian", "--sigma", "1", "--q", "0.1", "--relation", "replace-one",
                 "--delta", "1e-5"]) == 2
    err = capsys.readouterr().err
    assert "--q" in err and "mechanism must be" not in err and "SubsetSampling for" not in err


def test_json_keys_agree_across_commands(capsys):
    import json
    docs = {}
    for argv in (["epsilon", "--delta", "1e-5", "--bounds"], ["delta", "--eps", "1", "--bounds"],
                 ["report", "--deltas", "1e-5", "--bounds"], ["fdp", "--alpha", "0.1", "--bounds"],
                 ["sweep", "--grid", "steps=1,2", "--delta", "1e-5", "--workers", "1"]):
        assert main([*argv, "--mechanism", "gaussian", "--sigma", "2", "--json"]) == 0
        docs[argv[0]] = json.loads(capsys.readouterr().out)
    assert all({"mechanism", "spec", "query"} <= set(doc) for doc in docs.values())
    assert {"delta", "epsilon", "lower", "upper"} <= set(docs["epsilon"]["results"][0])
    assert {"epsilon", "delta", "lower", "upper"} <= set(docs["delta"]["results"][0])
    assert {"lower", "upper"} <= set(docs["report"]["results"][0]) and {"lower", "upper"} <= set(docs["fdp"]["results"][0])
    assert docs["sweep"]["query"] == "sweep" and docs["sweep"]["delta"] == 1e-5 and len(docs["sweep"]["rows"]) == 2


def test_a_plot_to_an_unknown_format_fails_before_any_work(capsys, monkeypatch):
    pytest.importorskip("matplotlib")
    import dpaccount.cli.fdp as fdp_command
    failing = (lambda *a, **k: pytest.fail("drew before checking -o"), "", "")
    monkeypatch.setattr(fdp_command, "PLOTS", {kind: failing for kind in fdp_command.PLOTS})
    assert main(["plot", "--mechanism", "gaussian", "--sigma", "1", "-o", "curve.xyz"]) == 2
    assert "unknown image format 'xyz'" in capsys.readouterr().err
