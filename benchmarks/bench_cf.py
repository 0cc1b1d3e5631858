"""The characteristic-function accountant (method="cf") beside the certified PLD.

Tasks: those of ``peers.py`` (dpsgd, hetero11, hetero200) and, local to
this script, the cases of issue 19:

* ``dpsgd-small`` — σ = 0.9, q = 1e-3, T = 1000, ε at δ = 1e-7 (cf said 0.7462; 0.3720);
* ``blog1e3`` / ``blog1e4`` / ``blog1e5`` — σ = 0.5, q = 2e-5 (Google's Connect-the-Dots
  blog), T = 1e3 / 1e4 / 1e5, ε at δ = 1e-8 (issue: 0.9493, 1.5795, 2.2850; prv's estimate
  0.949324, 1.579393, 2.284073);
* ``binomial`` — BinomialMechanism(n=1000, p=0.5) composed 20 times, δ at ε = 1.1.

For each task: the default (pld) answer with its certified interval and the cf
answer (value + its error) with its interval, the wall time of each
(end-to-end from a fresh mechanism, every cache cleared, the pld grid cache
too; the median of ``--repeat`` runs) and the relative difference cf/pld − 1, and whether cf's value lies in
the certified interval. Where pld cannot answer (its grid would exceed the
size cap) the reason is printed instead.

    python benchmarks/bench_cf.py                         # dpsgd, hetero11 and the issue's tasks
    python benchmarks/bench_cf.py --tasks blog1e3,blog1e5 --repeat 3
"""
import argparse
import os
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers import TASKS, Task, build_dpaccount, clear_dpaccount_caches, measure  # noqa: E402

import dpaccount  # noqa: E402  (peers put the working tree first on the path)


class _Binomial:
    """A task outside peers.py's family (Poisson-subsampled Gaussians)."""

    name, descr, query, target = "binomial", "Binomial(n=1000, p=0.5) × 20", "delta", 1.1

    @staticmethod
    def build():
        return dpaccount.Composition()([dpaccount.BinomialMechanism(n=1000, p=0.5)], [20])


LOCAL = {
    "dpsgd-small": Task("dpsgd-small", "σ=0.9, q=1e-3, T=1000", [0.9], 1e-3, [1000], "eps", 1e-7, None),
    "blog1e3": Task("blog1e3", "σ=0.5, q=2e-5, T=1e3", [0.5], 2e-5, [1000], "eps", 1e-8, None),
    "blog1e4": Task("blog1e4", "σ=0.5, q=2e-5, T=1e4", [0.5], 2e-5, [10000], "eps", 1e-8, None),
    "blog1e5": Task("blog1e5", "σ=0.5, q=2e-5, T=1e5", [0.5], 2e-5, [100000], "eps", 1e-8, None),
    "binomial": _Binomial(),
}
ALL = {**TASKS, **LOCAL}
DEFAULT = "dpsgd,hetero11,dpsgd-small,blog1e3,blog1e4,blog1e5,binomial"


def _fresh():
    """Clear dpaccount's caches: the lru_caches and the pld grid cache (peers.py; without
    this the pld times after the first run are cache hits)."""
    clear_dpaccount_caches()


def _query(task, method, bounds):
    _fresh()
    m = task.build() if hasattr(task, "build") else build_dpaccount(task)
    stem = "get_approxDP" if task.query == "eps" else "get_approx_delta"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpaccount.ApproximationWarning)  # cf's estimates, labelled below
        return getattr(m, stem + ("_bounds" if bounds else ""))(task.target, method=method)


def _run(task, method, repeat, budget):
    """(value, median seconds, bounds, certified) or the error's text."""
    try:
        value, secs, _ = measure(lambda t: _query(t, method, False), task, repeat, budget)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", dpaccount.ApproximationWarning)
            b = _query(task, method, True) if method == "pld" else None
            if method == "cf":
                _fresh()
                m = task.build() if hasattr(task, "build") else build_dpaccount(task)
                stem = "get_approxDP_bounds" if task.query == "eps" else "get_approx_delta_bounds"
                b = getattr(m, stem)(task.target, method="cf")
        certified = not any(issubclass(w.category, dpaccount.ApproximationWarning) for w in caught)
        return value, secs, b, certified
    except (dpaccount.GridTooLarge, dpaccount.AccuracyNotReached, dpaccount.RepresentationUnavailable) as exc:
        return f"{type(exc).__name__}: {exc}"[:90]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", default=DEFAULT, help="comma-separated subset of: " + ",".join(ALL))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--budget", type=float, default=60.0)
    args = ap.parse_args(argv)
    print(f"{'task':12} {'method':6} {'value':>14} {'interval':>34} {'seconds':>8}  note")
    for name in args.tasks.split(","):
        task = ALL[name]
        rows = {method: _run(task, method, args.repeat, args.budget) for method in ("pld", "cf")}
        for method, row in rows.items():
            if isinstance(row, str):
                print(f"{name:12} {method:6} {'n/a':>14} {'':>34} {'':>8}  {row}")
                continue
            value, secs, b, certified = row
            label = "certified" if certified else "estimate"
            print(f"{name:12} {method:6} {value:14.8g} {f'[{b.lower:.8g}, {b.upper:.8g}]':>34} {secs:8.3f}  {label}")
        if all(not isinstance(r, str) for r in rows.values()):
            pld, cf = rows["pld"], rows["cf"]
            inside = pld[2].lower <= cf[0] <= pld[2].upper
            print(f"{name:12} cf/pld − 1 = {cf[0] / pld[0] - 1:+.2e}, cf value {'inside' if inside else 'OUTSIDE'} "
                  f"the certified interval; time cf/pld = {cf[1] / pld[1]:.3f}")


if __name__ == "__main__":
    main()
