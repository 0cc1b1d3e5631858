"""DP-SGD's full trade-off curve (1,000 α) in dpaccount and in riskcal, one process.

DP-SGD (σ = 1.1, q = 256/60000, T = 14063). dpaccount: ``get_fDP`` from a
cold cache (composition of the grids included) at the default accuracy 1e-3,
then the same 1,000 α again (grids cached). riskcal: ``get_beta_from_pld``
on dp_accounting's PLD (Connect-the-Dots, value_discretization_interval
1e-4), composition included. Prints both times, their ratio and the largest
difference in β; riskcal certifies nothing, so a difference where riskcal is
higher is riskcal's discretisation, not an error of the certified curve.

    python benchmarks/bench_fdp.py      (needs pip install -e .[peers])
"""
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import dpaccount as dpa  # noqa: E402

SIGMA, Q, T = 1.1, 256 / 60000, 14063
ALPHAS = np.linspace(0.0, 1.0, 1000)


def main():
    start = time.perf_counter()
    m = dpa.Composition()([dpa.PoissonSampling()(dpa.GaussianMechanism(sigma=SIGMA), Q)], [T])
    ours = m.get_fDP(ALPHAS)
    cold = time.perf_counter() - start
    start = time.perf_counter()
    m.get_fDP(ALPHAS)
    warm = time.perf_counter() - start
    print(f"dpaccount get_fDP, 1,000 α: {cold:.3f} s cold, {warm:.3f} s warm; β(0.01) = {m.get_fDP(0.01):.6f}")
    try:
        from dp_accounting.pld import privacy_loss_distribution as plm
        from riskcal import analysis
    except ImportError:
        print("riskcal / dp_accounting not installed: pip install -e .[peers]")
        return
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pld = plm.from_gaussian_mechanism(SIGMA, sampling_prob=Q, use_connect_dots=True,
                                          value_discretization_interval=1e-4).self_compose(T)
        theirs = np.asarray(analysis.get_beta_from_pld(pld, alpha=ALPHAS), dtype=float)
    peer = time.perf_counter() - start
    diff = theirs - ours
    i = int(np.argmax(np.abs(diff)))
    print(f"riskcal get_beta_from_pld, 1,000 α: {peer:.3f} s (composition included)")
    print(f"time ratio riskcal / dpaccount (cold): {peer / cold:.2f}")
    print(f"largest |Δβ| = {abs(diff[i]):.3g} at α = {ALPHAS[i]:.4f} (riskcal {theirs[i]:.6f}, dpaccount "
          f"{ours[i]:.6f}); riskcal above dpaccount at {int(np.sum(diff > 0))} of {len(ALPHAS)} α")


if __name__ == "__main__":
    main()
