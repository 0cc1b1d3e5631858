#!/usr/bin/env python
"""Benchmark dpaccount against its peers (dp_accounting PLD, prv_accountant).

    python benchmarks/bench_peers.py                       # all tasks, 3 repeats
    python benchmarks/bench_peers.py --tasks dpsgd --repeat 5
    python benchmarks/bench_peers.py --quick               # smoke test: dpsgd, once

Everything runs in ONE process. For every task and tool we print the answer
(ε at a given δ, or δ at a given ε), the wall time (median over the runs) and
the time ratio peer / dpaccount. Every run builds its objects from scratch:
a fresh dpaccount mechanism, and dpaccount's module-level ``lru_cache``s are
cleared, so no cached work is carried from one run to the next.

A tool whose first run takes longer than ``--budget`` seconds is not repeated
(the ``n`` column says how many runs the median is over).

Peer settings
-------------
* dp_accounting: ``dp_accounting.pld.PLDAccountant()`` with its defaults
  (add-or-remove-one, value_discretization_interval=1e-4, pessimistic
  estimate), fed DpEvents: ``PoissonSampledDpEvent(q, GaussianDpEvent(σ))``,
  ``SelfComposedDpEvent``, ``ComposedDpEvent``.
* prv_accountant: eps_error=0.01. Homogeneous tasks use
  ``prv_accountant.Accountant`` (which sets delta_error=δ/1000); heterogeneous
  tasks use ``PRVAccountant`` with a list of ``PoissonSubsampledGaussianMechanism``
  and delta_error as listed per task. prv returns (lower, estimate, upper);
  the estimate is compared with dpaccount.
"""
import argparse
import importlib
import os
import statistics
import sys
import time
import traceback
import warnings

import numpy as np

# Benchmark the working tree, whether or not dpaccount is installed.
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

import dpaccount  # noqa: E402
from dpaccount import Composition, GaussianMechanism, PoissonSampling  # noqa: E402

PRV_EPS_ERROR = 0.01
DISAGREE_TOL = 1e-3  # flag peers whose value differs from dpaccount's by more than 0.1 %


# ----------------------------------------------------------------------------- tasks
class Task:
    def __init__(self, name, descr, sigmas, q, counts, query, target, prv_delta_error):
        self.name, self.descr = name, descr
        self.sigmas = [float(s) for s in sigmas]
        self.q = float(q)
        self.counts = [int(c) for c in counts]
        self.query = query            # "eps" (ε at δ=target) or "delta" (δ at ε=target)
        self.target = float(target)
        self.prv_delta_error = prv_delta_error

    @property
    def homogeneous(self):
        return len(self.sigmas) == 1

    @property
    def what(self):
        return f"eps(delta={self.target:g})" if self.query == "eps" else f"delta(eps={self.target:g})"


TASKS = {
    "dpsgd": Task("dpsgd", "DP-SGD: sigma=1.1, q=256/60000, T=14063",
                  [1.1], 256 / 60000, [14063], "eps", 1e-5, prv_delta_error=1e-5 / 1000),
    "hetero11": Task("hetero11", "11 subsampled Gaussians, q=0.02, sigma=linspace(3,2,11), 500 steps each",
                     np.linspace(3.0, 2.0, 11), 0.02, [500] * 11, "delta", 1.0, prv_delta_error=1e-5),
    "hetero200": Task("hetero200", "200 subsampled Gaussians, q=0.01, sigma=linspace(2,4,200), 50 steps each",
                      np.linspace(2.0, 4.0, 200), 0.01, [50] * 200, "eps", 1e-5, prv_delta_error=1e-5 / 1000),
}
for _t in (1000, 10000, 100000):  # Connect-the-Dots blog: ε far out in the tail of rare large losses
    TASKS[f"blog{_t:.0e}".replace("+0", "")] = Task(
        f"blog{_t:.0e}".replace("+0", ""), f"Connect-the-Dots blog: sigma=0.5, q=2e-5, T={_t}",
        [0.5], 2e-5, [_t], "eps", 1e-8, prv_delta_error=1e-8 / 1000)


# ----------------------------------------------------------------------------- tools
class NotInstalled(Exception):
    pass


def _clear_dpaccount_caches():
    """Clear every module-level functools cache in dpaccount.* and the grid caches
    (pairs hash by value, so a fresh mechanism could otherwise hit caches filled
    by the previous run)."""
    for name, mod in list(sys.modules.items()):
        if not (name == "dpaccount" or name.startswith("dpaccount.")) or mod is None:
            continue
        for obj in list(vars(mod).values()):
            if callable(getattr(obj, "cache_clear", None)) and callable(getattr(obj, "cache_info", None)):
                obj.cache_clear()
    dpaccount.clear_cache()  # the composed grids and plans, shared by equal mechanisms


def build_dpaccount(task):
    parts = [PoissonSampling()(GaussianMechanism(sigma=s), task.q) for s in task.sigmas]
    return Composition()(parts, task.counts)


def run_dpaccount(task):
    _clear_dpaccount_caches()
    m = build_dpaccount(task)
    if task.query == "eps":
        return m.get_approxDP(task.target)
    return m.get_approx_delta(task.target)


def dpaccount_bounds(task):
    """dpaccount's certified interval, if the API offers one (else None)."""
    m = build_dpaccount(task)
    name = "get_approxDP_bounds" if task.query == "eps" else "get_approx_delta_bounds"
    if not hasattr(m, name):
        return None, f"{name} not available"
    t0 = time.perf_counter()
    out = getattr(m, name)(task.target)
    return out, time.perf_counter() - t0


def run_dp_accounting(task):
    try:
        import dp_accounting
        from dp_accounting import pld
    except ImportError as e:
        raise NotInstalled(str(e))
    events = [dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(task.q, dp_accounting.GaussianDpEvent(s)), k)
        for s, k in zip(task.sigmas, task.counts)]
    event = events[0] if len(events) == 1 else dp_accounting.ComposedDpEvent(events)
    acc = pld.PLDAccountant()  # value_discretization_interval=1e-4 (default)
    acc.compose(event)
    if task.query == "eps":
        return acc.get_epsilon(task.target)
    return acc.get_delta(task.target)


def run_prv(task):
    try:
        import prv_accountant
        from prv_accountant.privacy_random_variables import PoissonSubsampledGaussianMechanism
    except ImportError as e:
        raise NotInstalled(str(e))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Accountant's DeprecationWarning, eps_max notes
        if task.homogeneous and task.query == "eps":
            acc = prv_accountant.Accountant(noise_multiplier=task.sigmas[0], sampling_probability=task.q,
                                            delta=task.target, max_compositions=task.counts[0],
                                            eps_error=PRV_EPS_ERROR)
            return tuple(acc.compute_epsilon(num_compositions=task.counts[0]))
        prvs = [PoissonSubsampledGaussianMechanism(sampling_probability=task.q, noise_multiplier=s)
                for s in task.sigmas]
        acc = prv_accountant.PRVAccountant(prvs=prvs, eps_error=PRV_EPS_ERROR,
                                           delta_error=task.prv_delta_error,
                                           max_self_compositions=task.counts)
        if task.query == "eps":
            return tuple(acc.compute_epsilon(task.target, num_self_compositions=task.counts))
        if not hasattr(acc, "compute_delta"):
            raise NotImplementedError("prv_accountant has no delta query (compute_delta)")
        return tuple(acc.compute_delta(task.target, num_self_compositions=task.counts))


def _version(mod):
    try:
        return importlib.import_module(mod).__version__
    except Exception:
        try:
            from importlib.metadata import version
            return version({"dp_accounting": "dp-accounting", "prv_accountant": "prv-accountant"}.get(mod, mod))
        except Exception:
            return "not installed"


TOOLS = [
    ("dpaccount", run_dpaccount, f"default method, accuracy={dpaccount.queries.DEFAULT_ACCURACY:g}"),
    ("dp_accounting", run_dp_accounting, "PLDAccountant, value_discretization_interval=1e-4 (default)"),
    ("prv_accountant", run_prv, f"eps_error={PRV_EPS_ERROR}"),
]


# ----------------------------------------------------------------------------- timing
def measure(fn, task, repeat, budget):
    """Run fn(task) up to `repeat` times; return (value, median seconds, runs)."""
    times, value = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        value = fn(task)
        times.append(time.perf_counter() - t0)
        if times[-1] > budget:
            break
    return value, statistics.median(times), len(times)


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
    ap.add_argument("--tools", default=",".join(t for t, _, _ in TOOLS),
                    help="comma-separated subset of: " + ",".join(t for t, _, _ in TOOLS))
    args = ap.parse_args(argv)
    tools = [t for t in TOOLS if t[0] in args.tools.split(",")]
    if args.quick:
        names, repeat = ["dpsgd"], 1
    else:
        names, repeat = [t.strip() for t in args.tasks.split(",") if t.strip()], max(1, args.repeat)
    unknown = [n for n in names if n not in TASKS]
    if unknown:
        ap.error(f"unknown task(s) {unknown}; choose from {list(TASKS)}")

    print(f"python {sys.version.split()[0]}, numpy {np.__version__}")
    print(f"dpaccount {dpaccount.__version__} (from {os.path.dirname(dpaccount.__file__)}), "
          f"dp_accounting {_version('dp_accounting')}, prv_accountant {_version('prv_accountant')}")
    print(f"repeat={repeat}, budget={args.budget:g}s")
    for tool, _, setting in TOOLS:
        print(f"  {tool}: {setting}")

    rows = []
    for name in names:
        task = TASKS[name]
        print(f"\n=== {name}: {task.descr}; query {task.what}")
        base_time = base_val = None
        for tool, fn, _ in tools:
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
                    bounds, info = dpaccount_bounds(task)
                    if bounds is None:
                        print(f"  {'':15s} certified interval: {info}")
                    else:
                        print(f"  {'':15s} certified interval: {bounds!r} ({info:.3f}s)")
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
