"""benchmarks/report.py: the table of the benchmark report is well formed, puts each
value where it lies against the certified interval (below it = under-reports),
and says why a cell has no value. No timing is asserted (timings belong in the
benchmarks); one real run of dpaccount on a tiny task checks the wiring."""
import importlib.util
import pathlib
import re
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _load_report():
    path = ROOT / "benchmarks" / "report.py"
    spec = importlib.util.spec_from_file_location("benchmark_report", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # puts benchmarks/ on sys.path for its `peers`
    return module


report = _load_report()
peers = sys.modules["peers"]
M, Interval = report.Measurement, report.Interval


def _cells(line):
    assert line.startswith("|") and line.endswith("|"), line
    return [c.strip() for c in line[1:-1].split("|")]


def _fake():
    tasks = [peers.Task("t1", "one", [1.0], 0.1, [10], "eps", 1e-5, None),
             peers.Task("t2", "two", [1.0, 2.0], 0.1, [5, 5], "delta", 1.0, None)]
    tools = [peers.Tool(name, None, f"{name} settings", name) for name in ("dpaccount", "peer_a", "peer_b")]
    intervals = {"t1": Interval(2.0, 2.002, 1.5),
                 "t2": Interval(None, None, 3.0, "AccuracyNotReached: no interval")}
    results = {"t1": {"dpaccount": M(2.001, 0.5, 3), "peer_a": M(1.99, 2.0, 3, estimate=1.98),
                      "peer_b": M(2.1, 0.25, 3)},
               "t2": {"dpaccount": M(None, 61.0, 1, note="stopped after 60 s", kind="limit"),
                      "peer_a": M(None, None, note="peer_a fails: ValueError: out of [-L, L]", kind="error"),
                      "peer_b": M(0.03, 4.0, 2)}}
    return tasks, tools, intervals, results


def test_the_table_is_well_formed_and_flags_an_under_report():
    tasks, tools, intervals, results = _fake()
    lines, notes = report.build_table(tasks, intervals, results, tools)
    rows = [_cells(line) for line in lines]
    assert all(len(r) == len(rows[0]) for r in rows)
    assert set("".join(rows[1])) <= set("-:")  # the separator row
    assert len(rows) == 2 + len(tasks) * (1 + len(tools))
    by = {(r[0].split(":")[0].strip("`"), r[1]): r for r in rows[2:]}
    interval_row = by[("t1", "**certified interval** (dpaccount, pld)")]
    assert interval_row[2] == "[2, 2.002]"
    assert by[("t1", "dpaccount")][3:5] == ["inside", "0"] and by[("t1", "dpaccount")][6] == "1×"
    below = by[("t1", "peer_a")]
    assert "under-reports" in below[3] and below[4] == "-0.5 %" and "estimate 1.98" in below[2]
    assert by[("t1", "peer_a")][6] == "4×"
    above = by[("t1", "peer_b")]
    assert above[3] == "above" and above[4].startswith("+4.9") and above[6] == "0.5×"
    # no interval, a stopped run, a failing peer: said in the cell and a footnote, never a blank
    assert by[("t2", "**certified interval** (dpaccount, pld)")][2].startswith("— [")
    assert by[("t2", "dpaccount")][5].startswith("> 61 [")
    assert by[("t2", "peer_a")][2].startswith("error [")
    assert by[("t2", "peer_b")][3] == "—" and by[("t2", "peer_b")][6] == "—"  # no interval; no dpaccount time
    marks = set(re.findall(r"\[[a-z]\]", "\n".join(lines[2:])))  # the header has "[s]"
    assert marks == {m.split()[1] for m in notes.lines()} and len(marks) == 3


def test_the_document_states_the_settings_and_renders_in_the_docs():
    tasks, tools, intervals, results = _fake()
    context = {"started": "2026-01-01 00:00", "load_start": "1.00/1.00/1.00", "load_end": "1.00/1.00/1.00",
               "repeat": 3, "limit": 60.0}
    text = report.document(tasks, tools, intervals, results, context)
    assert text.startswith("# Benchmark report") and "cores" in text and "load average" in text
    for tool in tools:
        assert f"- {tool.name}: {tool.setting}" in text
    assert "- [a] AccuracyNotReached: no interval" in text
    assert "(under-reports): peer_a on `t1` (-0.5 %)." in text
    assert "Faster than dpaccount's default query: peer_b on `t1` (0.5×)." in text
    docutils_core = pytest.importorskip("docutils.core")
    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    try:
        from dpaccount_docs import markdown_to_rst
    finally:
        sys.path.remove(str(ROOT / "docs" / "_ext"))
    rst = "Page\n====\n\n" + markdown_to_rst(text)
    tree = docutils_core.publish_doctree(rst, settings_overrides={"report_level": 1, "halt_level": 1})
    assert "under-reports" in tree.astext()


def test_a_real_run_of_dpaccount_on_a_tiny_task():
    task = peers.Task("tiny", "sigma=2, q=0.1, T=10", [2.0], 0.1, [10], "eps", 1e-5, None)
    tools = [t for t in peers.TOOLS if t.name == "dpaccount"]
    intervals, results = report.run([task], tools, repeat=1, log=lambda *a: None)
    iv, m = intervals["tiny"], results["tiny"]["dpaccount"]
    assert iv.note == "" and 0 < iv.lower <= iv.upper <= iv.lower * 1.001
    assert m.kind == "ok" and m.runs == 1
    where, rel = report.placement(m.value, iv)
    assert where in ("inside", "above") and rel <= 1e-3  # an upper bound, within the default accuracy
    assert report.placement(iv.lower * 0.99, iv) == ("below", pytest.approx(-0.01))
