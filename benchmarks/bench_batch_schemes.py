"""Random allocation (balls-in-bins): dpaccount against PLD_accounting and random_allocation.

PLD_accounting's own example: ``gaussian_allocation_epsilon_range`` for
σ = 1.1, 234 steps, δ = 1e-5, one and ten epochs (its adaptive refinement,
default accuracy); dpaccount's ``RandomAllocation`` with ``get_approxDP_bounds``
(certified interval, default accuracy 1e-3), each case in a fresh child
process (no cache shared). random_allocation's "combined" ε (the minimum of its
analytic, RDP, decomposition and recursive bounds; an upper bound, no interval;
alpha orders 2..60 as in its paper experiments). Poisson sampling at the same
rate q = 1/steps (dpaccount's certified interval) for reference.

    nice -n 5 python benchmarks/bench_batch_schemes.py
"""
import multiprocessing as mp
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

SIGMA, STEPS, DELTA = 1.1, 234, 1e-5


def _dpaccount(epochs, queue):
    import dpaccount as dpa
    start = time.perf_counter()
    m = dpa.Composition()([dpa.RandomAllocation()(dpa.GaussianMechanism(sigma=SIGMA), STEPS)], [epochs])
    b = m.get_approxDP_bounds(DELTA)
    queue.put((b.lower, b.upper, time.perf_counter() - start))


def _poisson(epochs, queue):
    import dpaccount as dpa
    start = time.perf_counter()
    m = dpa.Composition()([dpa.PoissonSampling()(dpa.GaussianMechanism(sigma=SIGMA), 1 / STEPS)], [STEPS * epochs])
    b = m.get_approxDP_bounds(DELTA)
    queue.put((b.lower, b.upper, time.perf_counter() - start))


def _pld_accounting(epochs, queue):
    from PLD_accounting.random_allocation_api import gaussian_allocation_epsilon_range
    start = time.perf_counter()
    upper, lower = gaussian_allocation_epsilon_range(delta=DELTA, sigma=SIGMA, num_steps=STEPS, num_epochs=epochs)
    queue.put((lower, upper, time.perf_counter() - start))


def _random_allocation(epochs, queue):
    from random_allocation.comparisons.definitions import PrivacyParams, SchemeConfig
    from random_allocation.random_allocation_scheme.combined import allocation_epsilon_combined
    start = time.perf_counter()
    eps = allocation_epsilon_combined(PrivacyParams(sigma=SIGMA, num_steps=STEPS, num_epochs=epochs, delta=DELTA),
                                      SchemeConfig(allocation_direct_alpha_orders=list(range(2, 61))))
    queue.put((float("nan"), eps, time.perf_counter() - start))


def run(case, epochs):
    queue = mp.get_context("spawn").Queue()
    proc = mp.get_context("spawn").Process(target=case, args=(epochs, queue))
    proc.start()
    try:
        out = queue.get(timeout=1800)
    except Exception as exc:  # a peer missing or failing: reported, not fatal
        out = (float("nan"), float("nan"), float("nan"))
        print(f"  {case.__name__}: {type(exc).__name__}", file=sys.stderr)
    proc.join()
    return out


def main():
    rows = []
    for epochs in (1, 10):
        for name, case in (("dpaccount RandomAllocation", _dpaccount), ("PLD_accounting", _pld_accounting),
                           ("random_allocation (combined)", _random_allocation),
                           ("dpaccount Poisson, q = 1/steps", _poisson)):
            lo, hi, seconds = run(case, epochs)
            width = (hi - lo) / hi if lo == lo else float("nan")
            rows.append((epochs, name, lo, hi, width, seconds))
            print(f"{epochs:>2} epochs  {name:<32} [{lo:.5f}, {hi:.5f}]  width {width:.2e}  {seconds:7.2f} s",
                  flush=True)
    return rows


if __name__ == "__main__":
    main()
