"""Time of one online step plus one δ(ε) query of ``PrivacyOdometer``.

DP-SGD steps (σ = 1, q = 0.01) on a grid of ~1e6 points per direction
(accuracy 4e-6, horizon 2000 steps). Early on every frequency is live and
a step costs O(n); once the composition has spread, most frequencies are
dead (their bound is below e^-745) and a step touches only the live ones.

    python benchmarks/bench_odometer.py
"""
import time

import dpaccount as dpa


def main():
    step = dpa.PoissonSampling()(dpa.GaussianMechanism(sigma=1.0), 0.01)
    odo = dpa.PrivacyOdometer(dpa.Composition()([step], [2000]), accuracy=4e-6)
    sizes = {d: s.size for d, s in odo._dirs.items()}
    print(f"grid points per direction: {sizes}")
    odo.step(step)
    odo.get_approx_delta(1.0)  # caches the weights' transform for ε = 1
    for phase, steps in (("steps 2-21", 20), ("steps 22-221 (untimed)", 200), ("steps 222-241", 20)):
        start = time.perf_counter()
        for _ in range(steps):
            odo.step(step)
            delta = odo.get_approx_delta(1.0)
        if "untimed" not in phase:
            print(f"{phase}: {1e3 * (time.perf_counter() - start) / steps:7.2f} ms per step + query"
                  f"  (δ(1) = {delta:.6g})")


if __name__ == "__main__":
    main()
