#!/usr/bin/env python
"""The benchmark report: one markdown table of dpaccount and its peers on the
standard tasks, written to ``benchmarks/report.md`` (embedded in the docs).

    python benchmarks/report.py                     # every task and tool (~8 min on 2 cores)
    python benchmarks/report.py --tasks dpsgd --tools dpaccount,dp_accounting --output /tmp/report.md

Everything runs in one process. For each task (``peers.py``) dpaccount's
certified interval comes first (``get_approxDP_bounds`` /
``get_approx_delta_bounds``, method="pld"), then each tool's answer (with
its documented default settings, listed under the table), where it lies
against that interval (*below* the certified lower bound under-reports the
privacy loss), its relative distance to the interval, the median wall time
of ``--repeat`` runs from scratch and the ratio to dpaccount's time. A run is
stopped after ``--limit`` seconds (SIGALRM) and not repeated.
"""
import argparse
import datetime
import os
import platform
import subprocess
import sys
import time
from typing import NamedTuple, Optional

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers import TASKS, TOOLS, NotInstalled, TimeLimit, dpaccount_bounds, measure, time_limit, version  # noqa: E402

import dpaccount  # noqa: E402  (peers put the working tree first on the path)

HERE = os.path.dirname(os.path.abspath(__file__))
LIMIT = 60.0
ACCURACIES = (1e-5, 1e-4, 1e-3)  # of the certified interval the tools are placed against: the finest that fits


class Interval(NamedTuple):
    """dpaccount's certified interval of a task (None where there is none) and what happened."""
    lower: Optional[float]
    upper: Optional[float]
    seconds: float
    note: str = ""        # empty when certified at the accuracy asked for


class Measurement(NamedTuple):
    """One tool on one task: its answer (prv: its upper bound) or why there is none."""
    value: Optional[float]
    seconds: Optional[float]  # median of `runs` runs; the elapsed time when stopped
    runs: int = 0
    estimate: Optional[float] = None  # prv's point estimate
    note: str = ""                    # error, time limit or not applicable
    kind: str = "ok"                  # ok, error, limit, n/a


# ----------------------------------------------------------------------------- measuring
def certified_interval(task, limit=LIMIT, accuracies=ACCURACIES):
    """dpaccount's certified interval (method="pld"), from a cold start, at the finest
    of ``accuracies`` whose grids fit the cap (tighter than the default answers', to
    place every tool). Where it misses that accuracy (``AccuracyNotReached``) the rows
    compare with the certified interval it reached (``AccuracyNotReached.bounds``)."""
    t0 = time.perf_counter()
    note = ""
    for accuracy in accuracies:
        try:
            with time_limit(limit):
                b = dpaccount_bounds(task, method="pld", accuracy=accuracy)
            return Interval(b.lower, b.upper, time.perf_counter() - t0,
                            "" if accuracy == accuracies[0] else f"at accuracy {accuracy:g}: {note}")
        except dpaccount.GridTooLarge as exc:
            note = f"accuracy {accuracy:g} is beyond the grid cap ({str(exc).split(';')[0]})"
            continue
        except dpaccount.AccuracyNotReached as exc:
            secs = time.perf_counter() - t0
            note = f"AccuracyNotReached: {str(exc).split(' (')[0]}"
            if exc.bounds is None:
                return Interval(None, None, secs, note)
            return Interval(float(np.min(exc.bounds.lower)), float(np.max(exc.bounds.upper)), secs,
                            note + "; the rows compare with that (certified) interval")
        except TimeLimit:
            return Interval(None, None, time.perf_counter() - t0, f"the bounds call was stopped after {limit:g} s")
        except Exception as exc:  # the report says what failed and goes on
            return Interval(None, None, time.perf_counter() - t0, f"{type(exc).__name__}: {exc}")
    return Interval(None, None, time.perf_counter() - t0, note)


def measure_tool(tool, task, repeat, limit=LIMIT):
    t0 = time.perf_counter()
    try:
        value, secs, runs = measure(tool.run, task, repeat, limit, limit=limit)
    except TimeLimit:
        return Measurement(None, time.perf_counter() - t0, 1, note=f"stopped after {limit:g} s", kind="limit")
    except (NotInstalled, NotImplementedError) as exc:
        return Measurement(None, None, note=f"{tool.name}: {exc}", kind="n/a")
    except Exception as exc:  # a peer that fails: its error in a footnote
        first = str(exc).splitlines()[0] if str(exc) else ""
        return Measurement(None, None, note=f"{tool.name} fails: {type(exc).__name__}: {first}", kind="error")
    if isinstance(value, tuple):  # prv: (lower, estimate, upper)
        return Measurement(float(value[2]), secs, runs, estimate=float(value[1]))
    return Measurement(float(value), secs, runs)


def placement(value, interval):
    """('inside' | 'above' | 'below', relative distance to the interval) or (None, None)."""
    if value is None or interval.lower is None:
        return None, None
    if value < interval.lower:
        return "below", (value - interval.lower) / interval.lower
    if value > interval.upper:
        return "above", (value - interval.upper) / interval.upper if interval.upper else float("inf")
    return "inside", 0.0


# ----------------------------------------------------------------------------- the table
class Notes:
    """Footnotes [a], [b], ... numbered in order of first use; equal texts share a mark."""

    def __init__(self):
        self.texts = []

    def mark(self, text):
        if text not in self.texts:
            self.texts.append(text)
        i = self.texts.index(text)
        return f"[{chr(ord('a') + i) if i < 26 else i + 1}]"

    def lines(self):
        return [f"- {self.mark(t)} {' '.join(t.split())}" for t in self.texts]


def _num(x):
    return f"{x:.8g}"


def _placement_cell(m, interval):
    where, rel = placement(m.value, interval)
    if where is None:
        return "—", "—"
    cell = "**below: under-reports**" if where == "below" else where
    est_where, _ = placement(m.estimate, interval)
    if est_where == "below" and where != "below":
        cell += " (estimate below)"
    return cell, ("0" if rel == 0 else f"{100 * rel:+.3g} %")


def build_table(tasks, intervals, results, tools, notes=None):
    """The markdown table: for each task its certified interval row, then one row per
    tool. ``intervals[task.name]`` is an Interval, ``results[task.name][tool.name]`` a
    Measurement. Returns (lines, notes)."""
    notes = Notes() if notes is None else notes
    lines = ["| task | tool | value | vs certified interval | distance | time [s] (runs) | time / dpaccount |",
             "|---|---|---:|---|---:|---:|---:|"]
    for task in tasks:
        iv = intervals[task.name]
        span = "—" if iv.lower is None else f"[{_num(iv.lower)}, {_num(iv.upper)}]"
        if iv.note:
            span += " " + notes.mark(iv.note)
        lines.append(f"| `{task.name}`: {task.what} | **certified interval** (dpaccount, pld) | {span} | — | — | "
                     f"{iv.seconds:.3g} (1) | — |")
        base = results[task.name].get("dpaccount")
        for tool in tools:
            m = results[task.name][tool.name]
            if m.kind in ("error", "n/a"):
                label = "error" if m.kind == "error" else "n/a"
                lines.append(f"| `{task.name}` | {tool.name} | {label} {notes.mark(m.note)} | — | — | — | — |")
                continue
            if m.kind == "limit":
                lines.append(f"| `{task.name}` | {tool.name} | — | — | — | > {m.seconds:.0f} {notes.mark(m.note)} "
                             f"| — |")
                continue
            value = _num(m.value) + ("" if m.estimate is None else f" (estimate {_num(m.estimate)})")
            where, dist = _placement_cell(m, iv)
            ratio = "—" if base is None or base.kind != "ok" else f"{m.seconds / base.seconds:.3g}×"
            lines.append(f"| `{task.name}` | {tool.name} | {value} | {where} | {dist} | "
                         f"{m.seconds:.3g} ({m.runs}) | {ratio} |")
    return lines, notes


def summary(tasks, intervals, results, tools):
    """Two sentences: which values under-report, and where a tool is faster than dpaccount."""
    below, faster = [], []
    for task in tasks:
        base = results[task.name].get("dpaccount")
        for tool in tools:
            m = results[task.name][tool.name]
            where, rel = placement(m.value, intervals[task.name])
            if where == "below":
                below.append(f"{tool.name} on `{task.name}` ({100 * rel:+.3g} %)")
            if tool.name != "dpaccount" and m.kind == "ok" and base is not None and base.kind == "ok" \
                    and m.seconds < base.seconds:
                faster.append(f"{tool.name} on `{task.name}` ({m.seconds / base.seconds:.3g}×)")
    return [("Below the certified lower bound (under-reports): " + ", ".join(below) + ".") if below else
            "No value lies below the certified lower bound.",
            ("Faster than dpaccount's default query: " + ", ".join(faster) + ".") if faster else
            "No tool is faster than dpaccount's default query."]


def machine():
    """One line: CPU, cores, memory, load average, OS."""
    cpu = "unknown CPU"
    mem = ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), cpu)
        with open("/proc/meminfo") as f:
            kb = int(next(line.split()[1] for line in f if line.startswith("MemTotal")))
        mem = f", {kb / 2 ** 20:.0f} GiB"
    except (OSError, StopIteration, ValueError):
        pass
    return f"{cpu}, {os.cpu_count()} cores{mem}, {platform.system()} {platform.release()}"


def _load():
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def _commit():
    try:
        out = subprocess.run(["git", "-C", HERE, "log", "-1", "--format=%h %cs"], capture_output=True, text=True)
        return out.stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def document(tasks, tools, intervals, results, context):
    """The whole report (markdown text); ``context``: started, load_start, load_end, repeat, limit."""
    import scipy
    lines, notes = build_table(tasks, intervals, results, tools)
    packages = dict.fromkeys(t.package for t in tools if t.name != "dpaccount")
    versions = ", ".join(f"{p} {version(p)}" for p in packages)
    out = [
        "# Benchmark report: dpaccount and its peers",
        "",
        f"Generated by `python benchmarks/report.py` on {context['started']} (UTC), in one process, "
        f"on {machine()}; load average (1/5/15 min) {context['load_start']} at the start and "
        f"{context['load_end']} at the end (the machine was shared: compare ratios from the same run). "
        f"dpaccount {dpaccount.__version__} at commit {_commit()}, Python {platform.python_version()}, "
        f"numpy {np.__version__}, scipy {scipy.__version__}; {versions or 'no peers'}.",
        "",
        "Every run builds its objects from scratch (dpaccount's caches cleared); times are the median "
        f"of {context['repeat']} runs (fewer when a run took over {context['limit']:g} s; a run is stopped at "
        f"{context['limit']:g} s). The certified interval is dpaccount's `get_approxDP_bounds` / "
        "`get_approx_delta_bounds` (method `pld`, at accuracy 1e-5 or, where that is beyond the grid cap, 1e-4 or 1e-3; or the interval it reached): the exact value lies in it. *below* "
        "means under the certified lower bound: that tool under-reports the privacy loss. distance = "
        "relative distance to the nearest end of the interval. dpaccount's default answer is an upper "
        "bound from a grid sized for the default accuracy (within 0.1 % above the exact value), so it may "
        "lie a little *above* the interval, which comes from a finer grid.",
        "",
        *lines,
        "",
        " ".join(summary(tasks, intervals, results, tools)),
        "",
        "Tasks (Poisson-subsampled Gaussian mechanisms, add/remove neighbours):",
        "",
        *[f"- `{t.name}`: {t.descr}; {t.what}" for t in tasks],
        "",
        "Settings (each tool's documented defaults):",
        "",
        *[f"- {t.name}: {t.setting}" for t in tools],
    ]
    if notes.texts:
        out += ["", "Notes:", "", *notes.lines()]
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------------- running
def run(tasks, tools, repeat, limit=LIMIT, log=print):
    """(intervals, results) of every task and tool, in this process."""
    intervals, results = {}, {}
    for task in tasks:
        log(f"=== {task.name}: {task.descr}; {task.what}")
        intervals[task.name] = certified_interval(task, limit)
        log(f"  certified interval {intervals[task.name]}")
        results[task.name] = {}
        for tool in tools:
            results[task.name][tool.name] = measure_tool(tool, task, repeat, limit)
            log(f"  {tool.name}: {results[task.name][tool.name]}")
    return intervals, results


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", default=",".join(TASKS), help="comma-separated subset of: " + ",".join(TASKS))
    ap.add_argument("--tools", default=",".join(t.name for t in TOOLS),
                    help="comma-separated subset of: " + ",".join(t.name for t in TOOLS))
    ap.add_argument("--repeat", type=int, default=3, help="runs per tool (the median is reported)")
    ap.add_argument("--limit", type=float, default=LIMIT, help="stop a run after this many seconds")
    ap.add_argument("--output", default=os.path.join(HERE, "report.md"), help="the markdown file to write")
    args = ap.parse_args(argv)
    names = [n for n in args.tasks.split(",") if n]
    unknown = [n for n in names if n not in TASKS] + [t for t in args.tools.split(",") if t not in
                                                      {tool.name for tool in TOOLS}]
    if unknown:
        ap.error(f"unknown task(s) or tool(s): {unknown}")
    tasks = [TASKS[n] for n in names]
    tools = [t for t in TOOLS if t.name in args.tools.split(",")]
    context = {"started": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"),
               "load_start": _load(), "repeat": max(1, args.repeat), "limit": args.limit}
    intervals, results = run(tasks, tools, context["repeat"], args.limit)
    context["load_end"] = _load()
    text = document(tasks, tools, intervals, results, context)
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(text)
    print(text)
    print(f"written to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
