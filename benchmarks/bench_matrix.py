#!/usr/bin/env python
"""Matrix mechanisms beside jax_privacy's sensitivity functions and dp_accounting (issue 42).

    python benchmarks/bench_matrix.py [--repeat 3] [--large-only | --amplified-only]

Part 1, sensitivity: for dense strategies of n rounds (BandMF-like banded, BLT,
prefix, a random lower triangle), dpaccount's certified Δ and its exactness
beside jax_privacy's (``get_min_sep_sensitivity_upper_bound``,
``get_sensitivity_banded`` where banded, ``fixed_epoch_sensitivity``), and the
median wall time of each. Part 2, structured strategies at n = 10⁵ rounds and
k = 100 participations (Toeplitz and BLT; jax_privacy needs the dense n × n
Gram there). Part 3, amplified BandMF: the recipe's ε (planned to an absolute
10⁻⁶) and its plain composition's at the default accuracy against dp_accounting's
PLD accountant on jax_privacy's ``amplified_bandmf_event``, beside a certified
bracket 10⁻⁷ wide of the exact value, at δ = 10⁻⁶ and 10⁻¹⁰.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import dpaccount as dpa  # noqa: E402
from dpaccount import strategies as S  # noqa: E402


def timed(fn, repeat):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return out, statistics.median(times)


def jax_sensitivity():
    try:
        import jax
        jax.config.update("jax_enable_x64", True)
        from jax_privacy.matrix_factorization import sensitivity
        return sensitivity
    except ImportError:
        return None


def part_sensitivity(repeat):
    jp = jax_sensitivity()
    rng = np.random.default_rng(0)
    print("== sensitivity: dpaccount (certified) vs jax_privacy ==")
    print(f"{'strategy':22s} {'n':>5s} {'participation':22s} {'dpaccount':>11s} {'exact':>5s} {'t(s)':>7s} "
          f"{'jax_privacy':>11s} {'t(s)':>7s}  jax function")
    for n in (256, 1024, 2048):
        strategies = [("toeplitz 8 bands", S.toeplitz(1 / np.sqrt(np.arange(1, 9)), n)),
                      ("blt 2 buffers", S.blt([0.99, 0.8], [0.1, 0.3], n)),
                      ("prefix", S.prefix(n)),
                      ("random lower", S.dense(np.tril(rng.normal(size=(n, n)))))]
        for label, strat in strategies:
            dense_c = strat.to_dense()
            for part, jax_fn in ((dpa.Participation.min_separation(n // 16, 16), "min_sep"),
                                 (dpa.Participation.fixed_epochs(16), "fixed")):
                # a dense copy: dpaccount's dense route, as jax_privacy sees the strategy
                ours, t_ours = timed(lambda: dpa.MatrixMechanism(strat, 1.0, part), repeat)
                k, b, _ = part.resolve(n)
                if jp is None:
                    theirs, t_theirs, name = float("nan"), float("nan"), "not installed"
                elif jax_fn == "fixed":
                    theirs, t_theirs = timed(lambda: float(jp.fixed_epoch_sensitivity(dense_c, k)), repeat)
                    name = "fixed_epoch_sensitivity"
                elif strat.bands <= b:
                    theirs, t_theirs = timed(lambda: float(jp.get_sensitivity_banded(dense_c, b, k)), repeat)
                    name = "get_sensitivity_banded"
                else:
                    theirs, t_theirs = timed(lambda: float(jp.get_min_sep_sensitivity_upper_bound(dense_c, b, k)),
                                             repeat)
                    name = "get_min_sep_sensitivity_upper_bound"
                desc = f"{part.kind}(b={b},k={k})"
                print(f"{label:22s} {n:5d} {desc:22s} {ours.sensitivity:11.5f} {str(ours.sensitivity_exact):>5s} "
                      f"{t_ours:7.3f} {theirs:11.5f} {t_theirs:7.3f}  {name}")


def part_large(repeat):
    n, k = 100_000, 100
    print(f"\n== structured strategies, n = {n}, k = {k} ==")
    for label, strat in (("blt 2 buffers", S.blt([0.999, 0.9], [0.05, 0.3], n)),
                         ("toeplitz 1/sqrt(t+1)", S.toeplitz(1 / np.sqrt(np.arange(1, n + 1)), n)),
                         ("toeplitz signed", S.toeplitz(np.cos(np.arange(n)) * 0.99 ** np.arange(n), n))):
        for part in (dpa.Participation.min_separation(n // k, k), dpa.Participation.fixed_epochs(k)):
            m, t = timed(lambda: dpa.MatrixMechanism(strat, 10.0, part), repeat)
            print(f"{label:22s} {part.kind:15s} Δ = {m.sensitivity:10.4f} exact={m.sensitivity_exact!s:5s} "
                  f"{t:7.3f} s  ({m.sensitivity_method})")


def part_amplified(repeat):
    print("\n== amplified BandMF: dpaccount vs dp_accounting PLD on jax_privacy's event ==")
    try:
        from dp_accounting.pld import pld_privacy_accountant
        from jax_privacy.experimental import accounting
    except ImportError as exc:
        print(f"skipped: {exc}")
        return
    print("recipe: amplified_bandmf (eps planned to an absolute 1e-6); default: its .base at the default relative "
          "accuracy 1e-3; exact: a certified bracket at accuracy 1e-7 (not timed)")
    print(f"{'z':>5s} {'iters':>6s} {'bands':>5s} {'q':>6s} {'delta':>6s} {'recipe':>12s} {'t(s)':>6s} "
          f"{'default':>12s} {'t(s)':>6s} {'dp_accounting':>13s} {'t(s)':>6s} {'exact in [lower, upper]':>28s}")
    for z, iters, bands, q in ((1.0, 2000, 8, 0.01), (0.8, 1000, 3, 0.05), (2.0, 500, 1, 0.1),
                               (0.6, 10000, 16, 0.02)):
        recipe = dpa.amplified_bandmf(z, iters, bands, q)
        acc = pld_privacy_accountant.PLDAccountant()
        e, t_theirs = timed(lambda: acc.compose(accounting.amplified_bandmf_event(
            z, iters, num_bands=bands, sampling_prob=q)) or acc.get_epsilon(1e-6), 1)
        for delta in (1e-6, 1e-10):
            def ours(mech):
                dpa.clear_cache()
                return mech.get_approxDP(delta)
            r, t_recipe = timed(lambda: ours(recipe), repeat)
            d, t_default = timed(lambda: ours(recipe.base), repeat)
            theirs = acc.get_epsilon(delta)
            exact = recipe.base.get_approxDP_bounds(delta, accuracy=1e-7)
            print(f"{z:5.2f} {iters:6d} {bands:5d} {q:6.3f} {delta:6.0e} {r:12.7f} {t_recipe:6.2f} {d:12.7f} "
                  f"{t_default:6.2f} {theirs:13.7f} {t_theirs if delta == 1e-6 else float('nan'):6.2f} "
                  f"[{exact.lower:12.8f}, {exact.upper:12.8f}]")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--large-only", action="store_true")
    parser.add_argument("--amplified-only", action="store_true")
    args = parser.parse_args()
    if not (args.large_only or args.amplified_only):
        part_sensitivity(args.repeat)
    if not args.amplified_only:
        part_large(args.repeat)
    if not args.large_only:
        part_amplified(args.repeat)


if __name__ == "__main__":
    main()
