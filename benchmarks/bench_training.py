#!/usr/bin/env python
"""Mixtures of Gaussians, zCDP, repeat-and-select and tree aggregation beside
dp_accounting (issue 30), in one process, cold.

    python benchmarks/bench_training.py [--repeat 3]

For each task: dpaccount's ε (its default: a certified upper bound where a
privacy-loss grid applies, the RDP conversion otherwise) and dp_accounting's
(its PLD accountant at 1e-4 discretisation where it has one, else RDP), the
median wall time of fresh objects (dpaccount's caches cleared), and the ratio.
"""
import argparse
import math
import os
import statistics
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import dpaccount as dpa  # noqa: E402

Q = 256 / 60000


def dpsgd(sigma, q, steps):
    return dpa.Composition()([dpa.PoissonSampling()(dpa.GaussianMechanism(sigma), q)], [steps])


TASKS = {  # name: (δ, dpaccount mechanism, dp_accounting event builder, dp_accounting accountant)
    "mog-dpsgd": (1e-5, lambda: dpa.Composition()([dpa.MixtureOfGaussiansMechanism(1.1, [0, 1], [1 - Q, Q])], [14063]),
                  lambda e: e.SelfComposedDpEvent(e.MixtureOfGaussiansDpEvent(1.1, [0, 1], [1 - Q, Q]), 14063), "pld"),
    "mog-4": (1e-6, lambda: dpa.Composition()([dpa.MixtureOfGaussiansMechanism(2, [0, 1, 2, 3], [.97, .02, .007, .003])], [2000]),
              lambda e: e.SelfComposedDpEvent(e.MixtureOfGaussiansDpEvent(2, [0, 1, 2, 3], [.97, .02, .007, .003]), 2000), "pld"),
    "zcdp": (1e-5, lambda: dpa.ZCDPMechanism(0.5), lambda e: e.ZCDpEvent(0.5), "rdp"),
    "zcdp-x30": (1e-6, lambda: dpa.Composition()([dpa.ZCDPMechanism(0.05)], [30]),
                 lambda e: e.SelfComposedDpEvent(e.ZCDpEvent(0.05), 30), "rdp"),
    "select-geometric": (1e-5, lambda: dpa.RepeatAndSelect()(dpsgd(1.0, 0.01, 1000), 10, 1),
                         lambda e: e.RepeatAndSelectDpEvent(e.SelfComposedDpEvent(
                             e.PoissonSampledDpEvent(0.01, e.GaussianDpEvent(1.0)), 1000), 10, 1), "rdp"),
    "select-poisson": (1e-5, lambda: dpa.RepeatAndSelect()(dpsgd(1.0, 0.01, 1000), 10, math.inf),
                       lambda e: e.RepeatAndSelectDpEvent(e.SelfComposedDpEvent(
                           e.PoissonSampledDpEvent(0.01, e.GaussianDpEvent(1.0)), 1000), 10, math.inf), "rdp"),
    "tree": (1e-5, lambda: dpa.TreeAggregation(5.0, 1000), lambda e: e.SingleEpochTreeAggregationDpEvent(5.0, 1000),
             "rdp-replace-special"),
}


def dp_accounting_epsilon(build, kind, delta):
    import dp_accounting
    from dp_accounting import dp_event
    if kind == "pld":
        acc = dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-4)
    elif kind == "rdp":
        acc = dp_accounting.rdp.RdpAccountant()
    else:
        acc = dp_accounting.rdp.RdpAccountant(
            neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_SPECIAL)
    acc.compose(build(dp_event))
    return acc.get_epsilon(delta)


def timed(fn, repeat):
    values, times = [], []
    for _ in range(repeat):
        start = time.perf_counter()
        values.append(fn())
        times.append(time.perf_counter() - start)
    return values[-1], statistics.median(times)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore", dpa.RDPFallbackWarning)
    print(f"{'task':18} {'dpaccount ε':>12} {'time s':>8} {'dp_accounting ε':>16} {'time s':>8} {'ratio':>7}")
    for name, (delta, make, build, kind) in TASKS.items():
        def ours():
            dpa.clear_cache()
            return make().get_approxDP(delta)
        eps, t = timed(ours, args.repeat)
        try:
            peer, tp = timed(lambda: dp_accounting_epsilon(build, kind, delta), args.repeat)
            tail = f"{peer:16.6f} {tp:8.3f} {tp / t:6.1f}×"
        except ImportError:
            tail = f"{'(not installed)':>16}"
        print(f"{name:18} {eps:12.6f} {t:8.3f} {tail}")


if __name__ == "__main__":
    main()
