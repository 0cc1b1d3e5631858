"""``sweep``: one query over a grid, the same table on a process pool (2
workers), a thread pool and in this process; table output; the CLI."""
import csv
import functools
import io
import json
from concurrent.futures import ThreadPoolExecutor

import pytest

import dpaccount as dpa
from dpaccount import (BinomialMechanism, Composition, GaussianMechanism, LaplaceMechanism, PoissonSampling,
                       SweepResult, sweep)
from dpaccount.cli import main
from dpaccount.sweep import SerialExecutor

GRID = {"sigma": [0.9, 1.3], "q": [0.01], "steps": [50, 200]}


def dpsgd(sigma, q, steps):
    return Composition()([PoissonSampling()(GaussianMechanism(sigma), q)], [steps])


def laplace(b, steps=1):
    return Composition()([LaplaceMechanism(b)], [steps])


def subsampled_binomial(steps):
    """Binomial(16, 1/2) has mass p^16 at an infinite loss; sampled at q = 0.1 and
    composed 20 times that mass (≈ 3e-5) exceeds δ = 1e-5: no finite ε there."""
    return Composition()([PoissonSampling()(BinomialMechanism(n=16, p=0.5), 0.1)], [steps])


def both_deltas(m, eps=(0.5, 1.0)):
    return {f"delta@{e}": m.get_approx_delta(e) for e in eps}


def test_the_same_table_on_a_process_pool_a_thread_pool_and_serially():
    pooled = sweep(dpsgd, GRID, ("epsilon", 1e-5), max_workers=2)
    serial = sweep(dpsgd, GRID, ("epsilon", 1e-5), SerialExecutor())
    with ThreadPoolExecutor(2) as threads:
        threaded = sweep(dpsgd, GRID, ("epsilon", 1e-5), threads)
    assert isinstance(pooled, SweepResult) and pooled.columns == ["sigma", "q", "steps", "epsilon"]
    assert pooled.rows == serial.rows == threaded.rows
    assert [(r["sigma"], r["steps"]) for r in serial] == [(0.9, 50), (0.9, 200), (1.3, 50), (1.3, 200)]
    for row in serial:
        assert row["epsilon"] == dpsgd(row["sigma"], row["q"], row["steps"]).get_approxDP(1e-5)


def test_queries_by_name_and_by_callable():
    grid = {"b": [1.0, 2.0], "steps": [3]}
    run = functools.partial(sweep, laplace, grid, executor=SerialExecutor())
    rows = run(("delta", 1.0)).rows
    assert [r["delta"] for r in rows] == [laplace(b, 3).get_approx_delta(1.0) for b in (1.0, 2.0)]
    rows = run(("epsilon_bounds", 1e-5)).rows
    for r in rows:
        b = laplace(r["b"], 3).get_approxDP_bounds(1e-5)
        assert (r["epsilon_lower"], r["epsilon"], r["method"]) == (b.lower, b.upper, b.method)
    assert [r["rdp"] for r in run(("rdp", 2.0)).rows] == [laplace(b, 3).get_RDP(2.0) for b in (1.0, 2.0)]
    table = sweep(laplace, grid, functools.partial(both_deltas, eps=(0.5, 1.0)), max_workers=2)
    assert table.columns == ["b", "steps", "delta@0.5", "delta@1.0"]
    assert table.rows[1]["delta@1.0"] == laplace(2.0, 3).get_approx_delta(1.0)
    assert run(lambda m: m.get_approxDP(1e-3)).columns[-1] == "value"


def test_a_point_without_an_answer_raises_or_is_recorded():
    grid = {"n": [10], "p": [0.5, 0.3]}
    with pytest.raises(dpa.RepresentationUnavailable):
        sweep(BinomialMechanism, grid, ("epsilon", 1e-5), SerialExecutor(), method="rdp")
    table = sweep(BinomialMechanism, grid, ("epsilon", 1e-5), SerialExecutor(), method="rdp", errors="record")
    assert all(r["epsilon"] is None and "rdp" in r["error"] for r in table.rows)


def test_a_point_whose_parameters_are_refused_is_recorded_too():
    table = sweep(GaussianMechanism, {"sigma": [1.0, -1.0]}, ("epsilon", 1e-5), dpa.SerialExecutor(),
                  errors="record")
    good, bad = table.rows
    assert good["epsilon"] == GaussianMechanism(1.0).get_approxDP(1e-5) and good["error"] is None
    assert bad["epsilon"] is None and "sigma" in bad["error"] and "-1.0" in bad["error"]
    with pytest.raises(ValueError, match="sigma"):
        sweep(GaussianMechanism, {"sigma": [1.0, -1.0]}, ("epsilon", 1e-5), dpa.SerialExecutor())


def test_inputs_are_checked_before_any_work():
    with pytest.raises(TypeError, match="picklable.*lambda"):
        sweep(lambda sigma: GaussianMechanism(sigma), {"sigma": [1.0]}, ("epsilon", 1e-5))
    with pytest.raises(TypeError, match="query must be"):
        sweep(dpsgd, GRID, ("epsilons", 1e-5), SerialExecutor())
    with pytest.raises(ValueError, match=r"grid\['sigma'\] must not be empty"):
        sweep(dpsgd, {"sigma": []}, ("epsilon", 1e-5), SerialExecutor())
    with pytest.raises(TypeError, match="grid must be"):
        sweep(dpsgd, [("sigma", [1.0])], ("epsilon", 1e-5), SerialExecutor())
    with pytest.raises(TypeError, match="executor must be"):
        sweep(dpsgd, GRID, ("epsilon", 1e-5), executor="processes")
    with pytest.raises(TypeError, match="must return a dpaccount Mechanism"):
        sweep(dict, {"a": [1]}, ("epsilon", 1e-5), SerialExecutor())


def test_csv_json_and_dataframe(tmp_path):
    table = sweep(laplace, {"b": [1.0, 2.0]}, ("epsilon", 1e-5), SerialExecutor())
    rows = list(csv.DictReader(io.StringIO(table.to_csv())))
    assert [float(r["epsilon"]) for r in rows] == [r["epsilon"] for r in table.rows]  # full precision
    path = tmp_path / "t.json"
    table.to_json(path)
    assert json.loads(path.read_text()) == {"columns": table.columns, "rows": table.rows}
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="pip install pandas"):
            table.to_dataframe()
    else:
        frame = table.to_dataframe()
        assert list(frame.columns) == table.columns and list(frame["epsilon"]) == [r["epsilon"] for r in table]


def test_an_infinite_epsilon_is_inf_in_json_and_csv(capsys):
    table = sweep(subsampled_binomial, {"steps": [1, 20]}, ("epsilon", 1e-5), SerialExecutor())
    finite, infinite = (r["epsilon"] for r in table.rows)
    assert 0 < finite < float("inf") and infinite == float("inf")
    doc = json.loads(table.to_json())  # allow_nan=False: an infinity would raise, not write Infinity
    assert doc["columns"] == ["steps", "epsilon"]
    assert doc["rows"] == [{"steps": 1, "epsilon": finite}, {"steps": 20, "epsilon": "inf"}]
    assert "Infinity" not in table.to_json()
    rows = list(csv.DictReader(io.StringIO(table.to_csv())))
    assert [r["epsilon"] for r in rows] == [repr(finite), "inf"]  # the same text as the JSON
    assert [float(r["epsilon"]) for r in rows] == [float(r["epsilon"]) for r in doc["rows"]] == [finite, infinite]
    recorded = sweep(BinomialMechanism, {"n": [10], "p": [0.5]}, ("epsilon", 1e-5), SerialExecutor(),
                     method="rdp", errors="record")  # no answer: null in JSON, an empty cell in CSV
    assert json.loads(recorded.to_json())["rows"][0]["epsilon"] is None
    assert next(csv.DictReader(io.StringIO(recorded.to_csv())))["epsilon"] == ""
    assert main(["sweep", "--mechanism", "binomial", "--n", "16", "--p", "0.5", "--q", "0.1", "--grid", "steps=1,20",
                 "--delta", "1e-5", "--format", "json", "--workers", "1"]) == 0  # was: exit 2, not JSON compliant
    assert json.loads(capsys.readouterr().out)["rows"] == doc["rows"]


def test_the_sweep_command(capsys):
    assert main(["sweep", "--mechanism", "subsampled-gaussian", "--grid", "sigma=0.9,1.3", "--q", "0.01",
                 "--grid", "steps=50,200", "--delta", "1e-5", "--format", "csv", "--workers", "1"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [float(r["epsilon"]) for r in rows] == [r["epsilon"] for r in
                                                   sweep(dpsgd, GRID, ("epsilon", 1e-5), SerialExecutor())]
    assert main(["sweep", "--mechanism", "laplace", "--grid", "b=1,2", "--eps", "1", "--workers", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["b", "delta"] and len(out) == 3
    for argv, words in ((["--grid", "sigma=1,x"], "not a number"), (["--grid", "bogus=1"], "NAME=V1"),
                        (["--grid", "b=1", "--b", "2"], "both fixed and swept"), (["--grid", "b=1"], "exactly one")):
        extra = [] if "exactly one" in words else ["--delta", "1e-5"]
        assert main(["sweep", "--mechanism", "laplace", *argv, *extra]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and words in err, err
    assert main(["sweep", "--mechanism", "randomized-response", "--grid", "p=0.7,1.5", "--eps", "1",
                 "--workers", "1"]) == 2
    assert "at {'p': 1.5}: p must lie in (0.5, 1.0), got 1.5" in capsys.readouterr().err
