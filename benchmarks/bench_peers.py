#!/usr/bin/env python
"""Benchmark dpaccount against its peers on the standard tasks, on the console.

    python benchmarks/bench_peers.py                       # all tasks, 3 repeats
    python benchmarks/bench_peers.py --tasks dpsgd --repeat 5
    python benchmarks/bench_peers.py --quick               # smoke test: dpsgd, once

Everything runs in ONE process. For every task and tool we print the answer
(ε at a given δ, or δ at a given ε), the wall time (median over the runs) and
the time ratio peer / dpaccount. Every run builds its objects from scratch:
a fresh dpaccount mechanism, and every dpaccount cache cleared, so no cached
work is carried from one run to the next. The tasks and each tool's
settings: ``peers.py``. The markdown report of the docs: ``report.py``.

A tool whose first run takes longer than ``--budget`` seconds is not repeated
(the ``n`` column says how many runs the median is over).
"""
import argparse
import os
import sys
import time
import traceback

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers import TASKS, TOOLS, NotInstalled, dpaccount_bounds, measure, version  # noqa: E402

import dpaccount  # noqa: E402  (peers put the working tree first on the path)

DISAGREE_TOL = 1e-3  # flag peers whose value differs from dpaccount's by more than 0.1 %


def point(value):
    """The comparable number: the value itself, or prv's estimate."""
    return value[1] if isinstance(value, tuple) else value


def fmt_value(value):
    if value is None:
        return "-"
    if isinstance(value, tuple):
        return "(" + ", ".join(f"{x:.6g}" for x in value) + ")"
    return f"{value:.6g}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", default="dpsgd,hetero11,hetero200",
                    help="comma-separated subset of: " + ",".join(TASKS))
    ap.add_argument("--repeat", type=int, default=3, help="runs per tool (median reported)")
    ap.add_argument("--budget", type=float, default=60.0,
                    help="do not repeat a tool whose run took longer than this many seconds")
    ap.add_argument("--quick", action="store_true", help="smoke test: task dpsgd only, one run")
    ap.add_argument("--tools", default=",".join(t.name for t in TOOLS),
                    help="comma-separated subset of: " + ",".join(t.name for t in TOOLS))
    args = ap.parse_args(argv)
    tools = [t for t in TOOLS if t.name in args.tools.split(",")]
    if args.quick:
        names, repeat = ["dpsgd"], 1
    else:
        names, repeat = [t.strip() for t in args.tasks.split(",") if t.strip()], max(1, args.repeat)
    unknown = [n for n in names if n not in TASKS]
    if unknown:
        ap.error(f"unknown task(s) {unknown}; choose from {list(TASKS)}")

    print(f"python {sys.version.split()[0]}, numpy {np.__version__}")
    print(f"dpaccount {dpaccount.__version__} (from {os.path.dirname(dpaccount.__file__)})")
    print(f"repeat={repeat}, budget={args.budget:g}s")
    for tool in tools:
        print(f"  {tool.name} {version(tool.package)}: {tool.setting}")

    rows = []
    for name in names:
        task = TASKS[name]
        print(f"\n=== {name}: {task.descr}; query {task.what}")
        base_time = base_val = None
        for tool, fn, _, _ in tools:
            try:
                value, secs, runs = measure(fn, task, repeat, args.budget)
            except NotInstalled as e:
                print(f"  {tool:15s} not installed ({e})")
                rows.append((name, tool, "not installed", None, None, None, None))
                continue
            except Exception as e:
                print(f"  {tool:15s} FAILED: {type(e).__name__}: {e}")
                traceback.print_exc(limit=3)
                rows.append((name, tool, f"ERROR {type(e).__name__}", None, None, None, None))
                continue
            if tool == "dpaccount":
                base_time, base_val = secs, point(value)
                ratio = rel = None
            else:
                ratio = secs / base_time if base_time else None
                rel = (point(value) - base_val) / base_val if base_val else None
            extra = ""
            if ratio is not None:
                extra += f"  ratio peer/dpaccount={ratio:.2f}"
            if rel is not None:
                extra += f"  rel.diff vs dpaccount={rel:+.3%}"
                if abs(rel) > DISAGREE_TOL:
                    extra += "  <-- differs by more than 0.1%"
            print(f"  {tool:15s} {task.what} = {fmt_value(value)}   time {secs:.3f}s (median of {runs}){extra}")
            if isinstance(value, tuple) and base_val is not None and not (value[0] <= base_val <= value[2]):
                print(f"  {'':15s} note: dpaccount's {base_val:.6g} lies outside prv's interval")
            rows.append((name, tool, fmt_value(value), secs, runs, ratio, rel))
            if tool == "dpaccount":
                try:
                    t0 = time.perf_counter()
                    bounds = dpaccount_bounds(task)
                    print(f"  {'':15s} certified interval: {bounds!r} ({time.perf_counter() - t0:.3f}s)")
                except Exception as e:
                    print(f"  {'':15s} certified interval FAILED: {type(e).__name__}: {e}")

    print("\n" + "=" * 100)
    hdr = f"{'task':10s} {'tool':15s} {'value':44s} {'time[s]':>9s} {'n':>2s} {'ratio':>7s} {'rel.diff':>9s}"
    print(hdr)
    print("-" * len(hdr))
    for name, tool, val, secs, runs, ratio, rel in rows:
        print(f"{name:10s} {tool:15s} {val:44s} "
              f"{'-' if secs is None else f'{secs:.3f}':>9s} {'-' if runs is None else runs:>2} "
              f"{'-' if ratio is None else f'{ratio:.2f}':>7s} {'-' if rel is None else f'{rel:+.3%}':>9s}")
    print("ratio = peer time / dpaccount time; rel.diff = (peer - dpaccount) / dpaccount "
          "(prv: its estimate); n = runs in the median")
    return 0


if __name__ == "__main__":
    sys.exit(main())
