"""The characteristic-function accountant (method="cf") beside the certified PLD.

Same tasks as ``bench_peers.py`` (DP-SGD, hetero11, hetero200). For each task:
the default (pld) answer with its certified interval, the cf answer (value +
its error *estimate*) with its estimated interval, the wall time of each
(end-to-end from a fresh mechanism, caches cleared), and whether cf's value
lies inside the certified interval.

    python benchmarks/bench_cf.py                 # dpsgd, hetero11
    python benchmarks/bench_cf.py --tasks dpsgd,hetero11,hetero200 --repeat 3
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_peers import TASKS, _clear_dpaccount_caches, build_dpaccount, measure  # noqa: E402


def _query(task, method, bounds):
    _clear_dpaccount_caches()
    m = build_dpaccount(task)
    stem = "get_approxDP" if task.query == "eps" else "get_approx_delta"
    return getattr(m, stem + ("_bounds" if bounds else ""))(task.target, method=method)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", default="dpsgd,hetero11")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--budget", type=float, default=60.0)
    args = ap.parse_args(argv)
    print(f"{'task':10} {'method':6} {'value':>14} {'interval':>32} {'seconds':>9}")
    for name in args.tasks.split(","):
        task = TASKS[name]
        rows = {}
        for method in ("pld", "cf"):
            value, secs, _ = measure(lambda t: _query(t, method, False), task, args.repeat, args.budget)
            t0 = time.perf_counter()
            b = _query(task, method, True)
            rows[method] = (value, b, secs, time.perf_counter() - t0)
        for method, (value, b, secs, bsecs) in rows.items():
            interval = f"[{b.lower:.8g}, {b.upper:.8g}]"
            print(f"{name:10} {method:6} {value:14.8g} {interval:>32} {secs:9.3f}  (bounds {bsecs:.3f} s)")
        pld, cf = rows["pld"][1], rows["cf"][0]
        inside = pld.lower <= cf <= pld.upper
        print(f"{name:10} cf value {'inside' if inside else 'OUTSIDE'} the certified pld interval; "
              f"cf/pld time {rows['cf'][2] / rows['pld'][2]:.2f}")


if __name__ == "__main__":
    main()
