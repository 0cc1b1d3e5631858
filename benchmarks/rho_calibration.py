"""The measured error of the grid plan, per query type, against the accuracy asked.

The plan (dpaccount/pld/profiles/plan.py) sizes the grid step so that each answer lands
within SHARE = 1/2 of the accuracy above the exact value: ε(δ) queries from
λKh²/8 ≤ a·ε/2, δ(ε) queries from the saddle-point density ratio. Here, for
each mechanism, the default answer (accuracy 1e-3) is compared with the
certified lower bound of a finer interval (accuracy 1e-5, or 1e-4 where that is
beyond the grid cap, or the interval reached): "excess" = default/lower − 1 is a
certified upper bound on how far above the exact value the default answer lies
(the interval's own width is in it); it should sit below 1e-3. Every row is a
rigorous upper bound: the plan only moves how far above the exact value it lands.

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


def _certified_lower(bounds, values):
    """The certified lower bounds at the finest accuracy that fits (or the interval reached)."""
    for accuracy in (1e-5, 1e-4, 1e-3):
        try:
            return np.atleast_1d(bounds(values, accuracy=accuracy).lower)
        except dpa.GridTooLarge:
            continue
        except dpa.AccuracyNotReached as err:
            return np.atleast_1d(err.bounds.lower)
    raise RuntimeError("no certified interval fits the grid cap")


def main():
    print(f"{'case':10s} {'query':14s} {'default':>14s} {'reference':>14s} {'excess':>10s} {'time[s]':>8s}")
    for name, mech in CASES.items():
        for what, values, ask in (("eps at delta", DELTAS, mech.get_approxDP),
                                  ("delta at eps", EPSILONS, mech.get_approx_delta)):
            start = time.perf_counter()
            got = np.atleast_1d(ask(np.array(values)))
            elapsed = time.perf_counter() - start
            ref = _certified_lower(getattr(mech, ask.__name__ + "_bounds"), np.array(values))
            for x, a, r in zip(values, got, ref):
                excess = a / r - 1 if r > 0 else 0.0
                print(f"{name:10s} {what[:5]} {x:<8.0e} {a:14.8g} {r:14.8g} {excess:10.2e} {elapsed:8.2f}")


if __name__ == "__main__":
    main()
