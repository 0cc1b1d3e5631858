"""How the PLD grid step (through ρ) trades tightness for time.

For each mechanism, ε(δ) is computed with ρ from 3e-7 to 1e-3 (the grid step
is h = 2·sqrt(ρ V / K), see dpaccount/pld_accountant.py); the smallest ρ
serves as the reference. Every row is a rigorous upper bound: ρ only moves
how far above the exact value it lands. This is where the library's choice
ρ = 0.1 × accuracy comes from (measured excess ≈ 0.35·ρ in ε, ~10× that in δ).

    python benchmarks/rho_calibration.py
"""
import time

import numpy as np

import dpaccount as dpa
from dpaccount.pld.accountant import DIRECTIONS, composed_grid

CASES = {
    "dpsgd": (dpa.Composition()([dpa.PoissonSampling()(dpa.GaussianMechanism(sigma=1.1), 256 / 60000)], [14063]), 1e-5),
    "hetero200": (dpa.Composition()([dpa.PoissonSampling()(dpa.GaussianMechanism(sigma=s), 0.01)
                                     for s in np.linspace(2.0, 4.0, 200)], [50] * 200), 1e-5),
    "short": (dpa.Composition()([dpa.PoissonSampling()(dpa.GaussianMechanism(sigma=0.8), 0.1)], [20]), 1e-6),
    "laplace": (dpa.Composition()([dpa.PoissonSampling()(dpa.LaplaceMechanism(b=2.0), 0.05)], [300]), 1e-6),
}


def main():
    print(f"{'case':10s} {'rho':>8s} {'epsilon':>12s} {'excess':>10s} {'time[s]':>8s}")
    for name, (mech, delta) in CASES.items():
        ref = None
        for rho in [3e-7, 3e-6, 3e-5, 1e-4, 3e-4, 1e-3]:
            start = time.perf_counter()
            eps = max(composed_grid(mech.pairs.direction(d), rho=rho, tail=1e-6 * delta).epsilon(delta)
                      for d in DIRECTIONS)
            elapsed = time.perf_counter() - start
            ref = eps if ref is None else ref
            print(f"{name:10s} {rho:8.0e} {eps:12.8f} {eps / ref - 1:10.2e} {elapsed:8.2f}")


if __name__ == "__main__":
    main()
