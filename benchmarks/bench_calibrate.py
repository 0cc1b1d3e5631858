"""DP-SGD noise calibration against the peers, in one process.

For ε ∈ {1, 3, 8}, δ = 1e-5, q = 256/60000, T = 14063: the σ each tool
returns, the ε dpaccount certifies for that σ (above the target means the
tool's σ is too small, i.e. over budget), and the time.

* dpaccount: ``dpsgd_noise_multiplier`` (tol 1e-3, certified PLD upper bound);
* dp_accounting: ``calibrate_dp_mechanism`` with its PLD accountant
  (value_discretization_interval 1e-4), bracket (0.2, 100), tol 1e-3;
* prv_accountant: bisection in log σ (to 1e-3) on its upper ε estimate
  (eps_error 0.01), as Opacus' get_noise_multiplier does with its accountants.

    python benchmarks/bench_calibrate.py
"""
import math
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import dpaccount as dpa  # noqa: E402

Q, T, DELTA = 256 / 60000, 14063, 1e-5


def certified(sigma):
    return dpa.Composition()([dpa.PoissonSampling()(dpa.GaussianMechanism(sigma), Q)], [T]).get_approxDP(DELTA)


def ours(eps):
    return dpa.dpsgd_noise_multiplier(Q, T, eps, DELTA)


def dp_accounting(eps):
    from dp_accounting import dp_event, mechanism_calibration, pld
    make_event = lambda s: dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(Q, dp_event.GaussianDpEvent(s)), T)
    return mechanism_calibration.calibrate_dp_mechanism(
        lambda: pld.PLDAccountant(value_discretization_interval=1e-4), make_event, eps, DELTA,
        mechanism_calibration.ExplicitBracketInterval(0.2, 100.0), tol=1e-3)


def prv(eps):
    from prv_accountant import Accountant
    lo, hi = 0.2, 100.0
    while hi / lo > 1 + 1e-3:
        mid = math.sqrt(lo * hi)
        acc = Accountant(noise_multiplier=mid, sampling_probability=Q, delta=DELTA, max_compositions=T,
                         eps_error=0.01)
        if acc.compute_epsilon(num_compositions=T)[2] <= eps:
            hi = mid
        else:
            lo = mid
    return hi


def main():
    print(f"DP-SGD q={Q:.6g}, T={T}, δ={DELTA:g}: σ, the ε dpaccount certifies for it, time\n")
    print(f"{'ε':>4s} {'tool':15s} {'σ':>10s} {'certified ε':>12s} {'time':>8s} {'ratio':>6s}")
    for eps in (1.0, 3.0, 8.0):
        base = None
        for name, tool in (("dpaccount", ours), ("dp_accounting", dp_accounting), ("prv_accountant", prv)):
            try:
                start = time.perf_counter()
                sigma = tool(eps)
                seconds = time.perf_counter() - start
            except ImportError:
                print(f"{eps:4g} {name:15s} not installed (pip install -e .[peers])")
                continue
            base = seconds if base is None else base
            flag = "  OVER" if certified(sigma) > eps else ""
            print(f"{eps:4g} {name:15s} {sigma:10.5f} {certified(sigma):12.6f} {seconds:7.2f}s "
                  f"{seconds / base:5.1f}×{flag}")


if __name__ == "__main__":
    main()
