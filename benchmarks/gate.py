#!/usr/bin/env python
"""The speed gate: dpaccount against its peers on the standard tasks, with floors.

    python benchmarks/gate.py            # every task (~1-2 min on 2 shared cores)
    python benchmarks/gate.py --quick    # a subset, < 30 s
    python benchmarks/gate.py --fft      # also: the time of our transforms alone (the FFT limit)
    python benchmarks/gate.py --heavy    # also the heavy paired tasks (hetero-11 at 1e-5, hetero-200): minutes

Every task runs in this one process, dpaccount beside its peer:
each dpaccount run builds a fresh mechanism after every dpaccount cache is
cleared (cold); imports are timed apart, first, with the scipy modules a first
query loads lazily. A task's time is the least over its runs (the run the
shared machine disturbed least); its ratio is the peer's time over ours.

The gate fails (exit 1) when a ratio falls below the task's ``floor`` (about
half of what was measured on the shared 2-core machine, 2026-11-29: see
benchmarks/README.md) or when, at the paired settings (``paired``), our
certified answer is less tight than the peer's: accuracy 1e-4 against
dp_accounting's value_discretization_interval=1e-4, accuracy 1e-5 against 2e-5.
"""
import argparse
import os
import statistics
import sys
import time
import warnings
from typing import Callable, NamedTuple

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(_HERE), _HERE]  # this working tree's dpaccount, and peers.py


class Task(NamedTuple):
    name: str
    ours: Callable      # () -> the answer (built from scratch)
    peer: Callable      # () -> the peer's answer
    peer_name: str
    floor: float        # the least peer/ours time ratio that passes
    paired: bool        # our answer must be at most the peer's (both upper bounds)
    quick: bool         # in --quick
    heavy: bool = False  # only with --heavy (a peer's run takes 10 s or more)


SIGMA, Q, T = 1.1, 256 / 60000, 14063
HETERO = (np.linspace(3.0, 2.0, 11), 0.02, 500)  # σ's, q, steps each: δ(ε = 1)
HETERO200 = (np.linspace(2.0, 4.0, 200), 0.01, 50)  # σ's, q, steps each: ε(δ = 1e-5)
BLOG = (0.5, 2e-5)                               # σ, q: ε(δ = 1e-8)
EPS_1000 = np.linspace(0.0, 20.0, 1000)
ALLOCATION = (1.1, 234, 1e-5)                    # σ, steps of an epoch, δ


def _dpa():
    import dpaccount
    return dpaccount


def _poisson_gaussians(sigmas, q, counts):
    dpa = _dpa()
    parts = [dpa.PoissonSampling()(dpa.GaussianMechanism(sigma=float(s)), q) for s in sigmas]
    return dpa.Composition()(parts, list(counts))


def _dpl(sigmas, q, counts, interval):
    from dp_accounting import ComposedDpEvent, GaussianDpEvent, PoissonSampledDpEvent, SelfComposedDpEvent
    from dp_accounting.pld import PLDAccountant
    events = [SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(float(s))), k)
              for s, k in zip(sigmas, counts)]
    acc = PLDAccountant(value_discretization_interval=interval)
    acc.compose(events[0] if len(events) == 1 else ComposedDpEvent(events))
    return acc


def _dpsgd(accuracy):
    def run():
        return _poisson_gaussians([SIGMA], Q, [T]).get_approxDP(1e-5, accuracy=accuracy)
    return run


def _dpsgd_peer(interval):
    def run():
        return _dpl([SIGMA], Q, [T], interval).get_epsilon(1e-5)
    return run


def _hetero(accuracy):
    sigmas, q, k = HETERO
    return lambda: _poisson_gaussians(sigmas, q, [k] * len(sigmas)).get_approx_delta(1.0, accuracy=accuracy)


def _hetero_peer(interval):
    sigmas, q, k = HETERO
    return lambda: _dpl(sigmas, q, [k] * len(sigmas), interval).get_delta(1.0)


def _hetero200(accuracy):
    sigmas, q, k = HETERO200
    return lambda: _poisson_gaussians(sigmas, q, [k] * len(sigmas)).get_approxDP(1e-5, accuracy=accuracy)


def _hetero200_peer(interval):
    sigmas, q, k = HETERO200
    return lambda: _dpl(sigmas, q, [k] * len(sigmas), interval).get_epsilon(1e-5)


def _blog(steps):
    return lambda: _poisson_gaussians([BLOG[0]], BLOG[1], [steps]).get_approxDP(1e-8)


def _blog_peer(steps):
    return lambda: _dpl([BLOG[0]], BLOG[1], [steps], 1e-4).get_epsilon(1e-8)


def _eps_1000():
    return float(np.max(_poisson_gaussians([SIGMA], Q, [T]).get_approx_delta(EPS_1000)))


def _eps_1000_peer():
    acc = _dpl([SIGMA], Q, [T], 1e-4)
    return max(acc.get_delta(float(e)) for e in EPS_1000)


def _allocation():
    dpa = _dpa()
    sigma, steps, delta = ALLOCATION
    epoch = dpa.RandomAllocation()(dpa.GaussianMechanism(sigma=sigma), steps)
    return dpa.Composition()([epoch], [1]).get_approxDP_bounds(delta).upper


def _allocation_peer():
    from PLD_accounting.random_allocation_api import gaussian_allocation_epsilon_range
    sigma, steps, delta = ALLOCATION
    upper, _ = gaussian_allocation_epsilon_range(delta=delta, sigma=sigma, num_steps=steps, num_epochs=1)
    return upper


# floors: about half the least ratio of three full runs on the shared 2-core machine (load
# average ~10), 2026-11-29 (benchmarks/README.md, "The speed gate")
DPL = "dp_accounting"
_DPSGD_PEER = _dpsgd_peer(1e-4)  # dp_accounting's default: timed once for both tasks
TASKS = [
    Task("dpsgd, accuracy 1e-3 (default) / h=1e-4 (default)", _dpsgd(1e-3), _DPSGD_PEER, DPL, 8.0, False, True),
    Task("dpsgd, accuracy 1e-4 / h=1e-4", _dpsgd(1e-4), _DPSGD_PEER, DPL, 1.7, True, True),
    Task("dpsgd, accuracy 1e-5 / h=2e-5", _dpsgd(1e-5), _dpsgd_peer(2e-5), DPL, 3.0, True, False),
    Task("hetero-11 δ(1), accuracy 1e-4 / h=1e-4", _hetero(1e-4), _hetero_peer(1e-4), DPL, 4.0, True, False),
    # --heavy: measured once each, quiet and loaded, 2026-11-29 (benchmarks/README.md)
    Task("hetero-11 δ(1), accuracy 1e-5 / h=2e-5", _hetero(1e-5), _hetero_peer(2e-5), DPL, 4.5, True, False, True),
    Task("hetero-200 ε(1e-5), accuracy 1e-4 / h=1e-4", _hetero200(1e-4), _hetero200_peer(1e-4), DPL, 3.5, True,
         False, True),
    Task("hetero-200 ε(1e-5), accuracy 1e-5 / h=2e-5", _hetero200(1e-5), _hetero200_peer(2e-5), DPL, 3.0, True,
         False, True),
    Task("blog T=1e3 ε(1e-8), default / default", _blog(1000), _blog_peer(1000), DPL, 12.0, False, True),
    Task("blog T=1e5 ε(1e-8), default / default", _blog(100_000), _blog_peer(100_000), DPL, 5.0, False, False),
    Task("1,000 δ(ε), ε in [0, 20], default / h=1e-4", _eps_1000, _eps_1000_peer, DPL, 1.3, False, False),
    Task("random allocation, one epoch ε(1e-5) upper end", _allocation, _allocation_peer, "PLD_accounting",
         5.0, False, False),
]


def _clear():
    from peers import clear_dpaccount_caches
    clear_dpaccount_caches()


def _timed(fn, before=None):
    if before:
        before()
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def _imports(peers):
    """Seconds: dpaccount's import, its first query's lazy imports (none of scipy's under numpy ≥ 2:
    the count of scipy modules loaded by then is shown), the import of each peer named in ``peers``."""
    out = {}
    out["import dpaccount"], _ = _timed(_dpa)
    out["dpaccount's first query (lazy imports)"], _ = _timed(_dpsgd(1e-3))
    out["scipy modules it loaded (none, numpy >= 2)"] = sum(name.split(".")[0] == "scipy" for name in sys.modules)
    out["its second query"], _ = _timed(_dpsgd(1e-3), _clear)
    for name, module in ((DPL, "dp_accounting.pld"), ("PLD_accounting", "PLD_accounting.random_allocation_api")):
        if name not in peers:
            continue
        try:
            out[f"import {name}"], _ = _timed(lambda m=module: __import__(m))
        except ImportError:
            out[f"import {name}"] = None
    return out


def _peer_runs(fn, runs, budget):
    """([seconds of each run], the answer): up to ``runs`` runs, fewer once they have
    taken ``budget`` seconds (a peer's run of several seconds is timed once)."""
    times, value = [], None
    while len(times) < runs and sum(times) < budget:
        secs, value = _timed(fn)
        times.append(secs)
    return times, value


def _fft_seconds(fn):
    """Seconds our transforms take in one cold run of ``fn`` (``dpaccount.fourier``'s rfft/irfft, by wrapping)."""
    from dpaccount import fourier
    from dpaccount.pld.grids import transform
    spent = [0.0]

    def wrap(f):
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return f(*args, **kwargs)
            finally:
                spent[0] += time.perf_counter() - start
        return timed

    class Shim:
        rfft, irfft, next_fast_len = wrap(fourier.rfft), wrap(fourier.irfft), staticmethod(fourier.next_fast_len)

    saved = transform.fourier
    transform.fourier = Shim
    try:
        _timed(fn, _clear)
    finally:
        transform.fourier = saved
    return spent[0]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="a subset of the tasks, fewer runs (< 30 s)")
    ap.add_argument("--runs", type=int, default=None, help="runs of each tool per task (default 3, quick 2)")
    ap.add_argument("--fft", action="store_true", help="also time our transforms alone in each task")
    ap.add_argument("--heavy", action="store_true",
                    help="also the heavy paired tasks: hetero-11 at accuracy 1e-5, hetero-200 (minutes)")
    ap.add_argument("--budget", type=float, default=2.0,
                    help="seconds after which a peer's runs of a task stop (default 2)")
    args = ap.parse_args(argv)
    runs = args.runs or (2 if args.quick else 3)
    tasks = [t for t in TASKS if (t.quick or not args.quick) and (args.heavy or not t.heavy)]
    warnings.simplefilter("ignore")  # peers' deprecation notes; ours are not timed differently

    began = time.perf_counter()
    for name, secs in _imports({t.peer_name for t in tasks}).items():
        shown = "not installed" if secs is None else str(secs) if isinstance(secs, int) else f"{secs:.3f} s"
        print(f"{name:45s} {shown}")
    dpa = _dpa()
    print(f"dpaccount {dpa.__version__} from {os.path.dirname(dpa.__file__)}; {runs} runs a task\n")

    rows, failed, peers = [], [], {}
    for task in tasks:
        ours, ours_value = [], None
        for _ in range(runs):
            secs, ours_value = _timed(task.ours, _clear)
            ours.append(secs)
        if task.peer not in peers:
            try:
                peers[task.peer] = _peer_runs(task.peer, runs, args.budget)
            except ImportError:
                peers[task.peer] = None
        if peers[task.peer] is None:
            print(f"{task.name}: {task.peer_name} not installed, skipped")
            continue
        peer, peer_value = peers[task.peer]
        ratio = min(peer) / min(ours)
        tight = bool(ours_value <= peer_value) if task.paired else None  # a numpy bool is never `False`
        fft = _fft_seconds(task.ours) if args.fft else None
        ok = ratio >= task.floor and tight is not False
        rows.append((task, ours, peer, ratio, ours_value, peer_value, tight, fft, ok))
        if not ok:
            failed.append(task.name)

    head = (f"{'task':50s} {'ours [s]':>15s} {'peer [s]':>15s} {'ratio':>6s} {'floor':>5s} "
            f"{'ours':>13s} {'peer':>13s} {'tight':>5s}" + (f" {'FFT [s]':>8s}" if args.fft else "") + "  ")
    print(head)
    print("-" * len(head))
    for task, ours, peer, ratio, ov, pv, tight, fft, ok in rows:
        spread = lambda xs: f"{min(xs):.3f}-{max(xs):.3f}"  # noqa: E731
        print(f"{task.name:50s} {spread(ours):>15s} {spread(peer):>15s} {ratio:6.1f} {task.floor:5.1f} "
              f"{ov:13.8g} {pv:13.8g} {'-' if tight is None else 'yes' if tight else 'NO':>5s}"
              + (f" {fft:8.3f}" if args.fft else "") + ("  ok" if ok else "  FAIL"))
    print(f"\nratio = the peer's least time / ours (the least of {runs} cold runs of ours, of up to {runs} "
          f"of the peer's within {args.budget:g} s; spread shown); "
          f"tight: our certified answer ≤ the peer's at the paired settings. "
          f"Median ratio {statistics.median(r[3] for r in rows):.1f}; {time.perf_counter() - began:.0f} s in all.")
    if failed:
        print(f"GATE FAILED: {', '.join(failed)}")
        return 1
    print("gate passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
