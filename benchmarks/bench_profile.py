"""Many questions of one mechanism: arrays of ε and δ on DP-SGD, and the odometer.

DP-SGD (σ = 1.1, q = 256/60000, T = 14063). Each dpaccount case runs in a
fresh child process (so its peak RSS is its own, and no grid is cached from
an earlier case); dp_accounting answers the same 1,000 ε after composing
once (its PLD accountant, value_discretization_interval 1e-4), also in a
fresh child process: its first run there (cold, as dpaccount's) and a second
one in the same process (warm: its first queries pay one-off costs, 2-4×).

    python benchmarks/bench_profile.py            # all cases
    python benchmarks/bench_profile.py --quick    # skip the odometer
"""
import argparse
import multiprocessing as mp
import os
import resource
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import dpaccount as dpa  # noqa: E402

SIGMA, Q, T = 1.1, 256 / 60000, 14063
EPS = np.linspace(0.0, 20.0, 1000)
DELTAS = np.logspace(-14, -2, 100)


def dpsgd():
    return dpa.Composition()([dpa.PoissonSampling()(dpa.GaussianMechanism(sigma=SIGMA), Q)], [T])


def _case(name):
    m = dpsgd()
    start = time.perf_counter()
    if name == "one ε at δ=1e-5":
        out = m.get_approxDP(1e-5)
    elif name.startswith("one δ(ε) at ε="):
        out = m.get_approx_delta(float(name.rsplit("=", 1)[1]))
    elif name == "1,000 δ(ε), ε in [0, 20]":
        out = m.get_approx_delta(EPS)
    else:
        out = m.get_approxDP(DELTAS)
    seconds = time.perf_counter() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # MB (Linux: kB)
    return seconds, rss, out


def _run_child(name):
    with mp.get_context("spawn").Pool(1) as pool:
        return pool.apply(_case, (name,))


def _dp_accounting_1000_eps():
    """(cold seconds, warm seconds, answers) in this process, or None."""
    try:
        from dp_accounting import dp_event, pld  # noqa: F401
    except ImportError:
        return None
    cold, _ = _dp_accounting_run()
    warm, out = _dp_accounting_run()
    return cold, warm, out


def _dp_accounting_run():
    from dp_accounting import dp_event, pld
    start = time.perf_counter()
    acc = pld.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(dp_event.PoissonSampledDpEvent(Q, dp_event.GaussianDpEvent(SIGMA)), T)
    out = [acc.get_delta(float(e)) for e in EPS]
    return time.perf_counter() - start, np.array(out)


def _odometer(steps=T - 1):
    step = dpa.PoissonSampling()(dpa.GaussianMechanism(sigma=SIGMA), Q)
    odo = dpa.PrivacyOdometer(dpsgd())
    odo.step(step, steps)
    times = []
    for d in (1e-5, 1e-6, 1e-7):
        start = time.perf_counter()
        eps = odo.get_approxDP(d)
        times.append(time.perf_counter() - start)
    return steps, times, eps


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    print(f"DP-SGD σ={SIGMA}, q={Q:.6g}, T={T}; each dpaccount case in a fresh process\n")
    print(f"{'case':32s} {'time':>9s} {'peak RSS':>10s}  answer")
    rows = {}
    for name in ("one ε at δ=1e-5", "one δ(ε) at ε=1", "one δ(ε) at ε=20", "1,000 δ(ε), ε in [0, 20]",
                 "100 ε(δ), δ in [1e-14, 1e-2]"):
        seconds, rss, out = _run_child(name)
        rows[name] = seconds
        shown = f"{out:.6g}" if np.ndim(out) == 0 else f"[{out[0]:.4g} … {out[-1]:.4g}]"
        print(f"{name:32s} {seconds:8.3f}s {rss:8.0f}MB  {shown}")
    one = rows["one ε at δ=1e-5"]
    many = rows["1,000 δ(ε), ε in [0, 20]"]
    print(f"\n1,000 δ(ε) cost {many / one:.1f}× one ε query, {many / rows['one δ(ε) at ε=20']:.1f}× its "
          f"costliest element asked alone (ε=20: δ ≈ 1e-91 needs tilted grids the others share); "
          f"100 ε(δ) {rows['100 ε(δ), δ in [1e-14, 1e-2]'] / one:.1f}× one ε query")
    with mp.get_context("spawn").Pool(1) as pool:
        peer = pool.apply(_dp_accounting_1000_eps)
    if peer is None:
        print("dp_accounting: not installed (pip install -e .[peers])")
    else:
        cold, warm, out = peer
        print(f"dp_accounting, the same 1,000 ε (compose once, then query; fresh process): {cold:.3f}s cold, "
              f"{warm:.3f}s warm (its δ at ε=20: {out[-1]:.3g}; below ~1e-15 its float grid cannot resolve δ); "
              f"dpaccount {min(cold, warm) / many:.2f}× faster than its faster run")
    if not args.quick:
        steps, times, eps = _odometer()
        print(f"\nodometer after {steps} steps: ε(δ) query {1e3 * np.median(times):.1f} ms (median of 3), "
              f"ε(1e-7) = {eps:.6g}")


if __name__ == "__main__":
    main()
