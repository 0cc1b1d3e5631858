"""The measured error of the grid plan, per query type, against the accuracy asked.

The plan (dpaccount/pld/plan.py) sizes the grid step so that each answer lands
within SHARE = 1/2 of the accuracy above the exact value: ε(δ) queries from
λKh²/8 ≤ a·ε/2, δ(ε) queries from the saddle-point density ratio. Here, for
each mechanism, the default answer (accuracy 1e-3) is compared with a reference
from a grid planned for accuracy 1e-6 (an upper bound too, ~1000× tighter):
the excess should sit below 1e-3, ideally near half of it or below. Every row is
a rigorous upper bound: the plan only moves how far above the exact value it lands.

    python benchmarks/rho_calibration.py
"""
import time

import numpy as np

import dpaccount as dpa

P, C, G = dpa.PoissonSampling(), dpa.Composition(), dpa.GaussianMechanism
CASES = {
    "dpsgd": C([P(G(sigma=1.1), 256 / 60000)], [14063]),
    "hetero200": C([P(G(sigma=s), 0.01) for s in np.linspace(2.0, 4.0, 200)], [50] * 200),
    "short": C([P(G(sigma=0.8), 0.1)], [20]),
    "laplace": C([P(dpa.LaplaceMechanism(b=2.0), 0.05)], [300]),
    "blog1e3": C([P(G(sigma=0.5), 2e-5)], [1000]),
}
DELTAS = (1e-3, 1e-6, 1e-10)
EPSILONS = (0.5, 1.0, 2.0)


def main():
    print(f"{'case':10s} {'query':14s} {'default':>14s} {'reference':>14s} {'excess':>10s} {'time[s]':>8s}")
    for name, mech in CASES.items():
        for what, values, ask in (("eps at delta", DELTAS, mech.get_approxDP),
                                  ("delta at eps", EPSILONS, mech.get_approx_delta)):
            start = time.perf_counter()
            got = np.atleast_1d(ask(np.array(values)))
            elapsed = time.perf_counter() - start
            try:
                ref = np.atleast_1d(ask(np.array(values), accuracy=1e-6))
            except dpa.GridTooLarge:
                ref = np.atleast_1d(ask(np.array(values), accuracy=1e-5))
            for x, a, r in zip(values, got, ref):
                excess = a / r - 1 if r > 0 else 0.0
                print(f"{name:10s} {what[:5]} {x:<8.0e} {a:14.8g} {r:14.8g} {excess:10.2e} {elapsed:8.2f}")


if __name__ == "__main__":
    main()
