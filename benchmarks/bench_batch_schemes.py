"""Batch schemes: dpaccount against PLD_accounting, random_allocation and dp_accounting.

PLD_accounting's own example: ``gaussian_allocation_epsilon_range`` for
σ = 1.1, 234 steps, δ = 1e-5, one and ten epochs (its adaptive refinement,
default accuracy); dpaccount's ``RandomAllocation`` with ``get_approxDP_bounds``
(certified interval, default accuracy 1e-3), each case in a fresh child
process (no cache shared). Every case is timed twice: its imports (the library's,
and for dpaccount the scipy modules its query loads lazily: scipy.special, .fft
and .optimize, which PLD_accounting and dp_accounting load at their import), then
the query alone. random_allocation's "combined" ε (the minimum of its
analytic, RDP, decomposition and recursive bounds; an upper bound, no interval;
alpha orders 2..60 as in its paper experiments). Poisson sampling at the same
rate q = 1/steps (dpaccount's certified interval) for reference.

Then one DP-SGD (n = 60000, batch 256, σ = 1.1, 1000 steps, δ = 1e-5) under the
schemes dp_accounting 0.6 has events for, each library's default answer, cold,
one fresh child process per case: Poisson (its PLD accountant), fixed-size
without replacement (replace-one; its RDP accountant, the only one taking the
event), truncated Poisson at B = 300 (its PLD accountant, arXiv 2508.15089) and
with replacement (its event exists, but no accountant of it takes it).

    nice -n 5 python benchmarks/bench_batch_schemes.py
"""
import multiprocessing as mp
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

SIGMA, STEPS, DELTA = 1.1, 234, 1e-5


def _import_dpaccount():
    """dpaccount, with the scipy modules its queries import on first use."""
    import dpaccount
    import scipy.fft  # noqa: F401
    import scipy.optimize  # noqa: F401
    import scipy.special  # noqa: F401
    return dpaccount


def _dpaccount(epochs, queue):
    began = time.perf_counter()
    dpa = _import_dpaccount()
    start = time.perf_counter()
    m = dpa.Composition()([dpa.RandomAllocation()(dpa.GaussianMechanism(sigma=SIGMA), STEPS)], [epochs])
    b = m.get_approxDP_bounds(DELTA)
    queue.put((b.lower, b.upper, time.perf_counter() - start, start - began))


def _poisson(epochs, queue):
    began = time.perf_counter()
    dpa = _import_dpaccount()
    start = time.perf_counter()
    m = dpa.Composition()([dpa.PoissonSampling()(dpa.GaussianMechanism(sigma=SIGMA), 1 / STEPS)], [STEPS * epochs])
    b = m.get_approxDP_bounds(DELTA)
    queue.put((b.lower, b.upper, time.perf_counter() - start, start - began))


N, BATCH, MAX_BATCH, T = 60000, 256, 300, 1000
SCHEMES = ("poisson", "without-replacement", "truncated-poisson", "with-replacement")


def _dpaccount_scheme(scheme, queue):
    began = time.perf_counter()
    dpa = _import_dpaccount()
    start = time.perf_counter()
    g = dpa.GaussianMechanism(sigma=SIGMA)
    step = {"poisson": lambda: dpa.PoissonSampling()(g, BATCH / N),
            "without-replacement": lambda: dpa.SubsetSampling()(dpa.GaussianMechanism(
                sigma=SIGMA, relation=dpa.REPLACE_ONE), BATCH / N),
            "truncated-poisson": lambda: dpa.TruncatedPoissonSampling()(g, BATCH / N, N, MAX_BATCH),
            "with-replacement": lambda: dpa.SamplingWithReplacement()(dpa.GaussianMechanism(
                sigma=SIGMA, relation=dpa.REPLACE_ONE), N, BATCH)}[scheme]()
    eps = dpa.Composition()([step], [T]).get_approxDP(DELTA)
    queue.put((float("nan"), eps, time.perf_counter() - start, start - began))


def _dp_accounting_scheme(scheme, queue):
    import warnings
    began = time.perf_counter()
    import dp_accounting as dpp
    warnings.simplefilter("ignore")
    start = time.perf_counter()
    g = dpp.GaussianDpEvent(SIGMA)
    replace_one = dpp.NeighboringRelation.REPLACE_ONE
    event, accountant = {
        "poisson": (lambda: dpp.PoissonSampledDpEvent(BATCH / N, g), dpp.pld.PLDAccountant),
        "without-replacement": (lambda: dpp.SampledWithoutReplacementDpEvent(N, BATCH, g),
                                lambda: dpp.rdp.RdpAccountant(neighboring_relation=replace_one)),
        "truncated-poisson": (lambda: dpp.TruncatedSubsampledGaussianDpEvent(N, BATCH / N, MAX_BATCH, SIGMA),
                              dpp.pld.PLDAccountant),
        "with-replacement": (lambda: dpp.SampledWithReplacementDpEvent(N, BATCH, g),
                             lambda: dpp.rdp.RdpAccountant(neighboring_relation=replace_one))}[scheme]
    acc = accountant()
    if not acc.supports(dpp.SelfComposedDpEvent(event(), T)):
        queue.put((float("nan"), float("nan"), time.perf_counter() - start, start - began))
        return
    acc.compose(event(), T)
    queue.put((float("nan"), acc.get_epsilon(DELTA), time.perf_counter() - start, start - began))


def _pld_accounting(epochs, queue):
    began = time.perf_counter()
    from PLD_accounting.random_allocation_api import gaussian_allocation_epsilon_range
    start = time.perf_counter()
    upper, lower = gaussian_allocation_epsilon_range(delta=DELTA, sigma=SIGMA, num_steps=STEPS, num_epochs=epochs)
    queue.put((lower, upper, time.perf_counter() - start, start - began))


def _random_allocation(epochs, queue):
    began = time.perf_counter()
    from random_allocation.comparisons.definitions import PrivacyParams, SchemeConfig
    from random_allocation.random_allocation_scheme.combined import allocation_epsilon_combined
    start = time.perf_counter()
    eps = allocation_epsilon_combined(PrivacyParams(sigma=SIGMA, num_steps=STEPS, num_epochs=epochs, delta=DELTA),
                                      SchemeConfig(allocation_direct_alpha_orders=list(range(2, 61))))
    queue.put((float("nan"), eps, time.perf_counter() - start, start - began))


def run(case, *args):
    """``case(*args, queue)`` in a fresh process: its (lower, upper, query seconds, import
    seconds), nan where absent."""
    queue = mp.get_context("spawn").Queue()
    proc = mp.get_context("spawn").Process(target=case, args=(*args, queue))
    proc.start()
    try:
        out = queue.get(timeout=1800)
    except Exception as exc:  # a peer missing or failing: reported, not fatal
        out = (float("nan"),) * 4
        print(f"  {case.__name__}: {type(exc).__name__}", file=sys.stderr)
    proc.join()
    return out


def allocation():
    rows = []
    for epochs in (1, 10):
        for name, case in (("dpaccount RandomAllocation", _dpaccount), ("PLD_accounting", _pld_accounting),
                           ("random_allocation (combined)", _random_allocation),
                           ("dpaccount Poisson, q = 1/steps", _poisson)):
            lo, hi, seconds, imports = run(case, epochs)
            width = (hi - lo) / hi if lo == lo else float("nan")
            rows.append((epochs, name, lo, hi, width, seconds, imports))
            print(f"{epochs:>2} epochs  {name:<32} [{lo:.5f}, {hi:.5f}]  width {width:.2e}  {seconds:7.2f} s "
                  f"(imports {imports:.2f} s)", flush=True)
    return rows


def schemes():
    rows = []
    print(f"DP-SGD, n = {N}, batch {BATCH}, σ = {SIGMA}, {T} steps, ε({DELTA:g}), default answers:")
    for scheme in SCHEMES:
        for library, case in ((" dpaccount", _dpaccount_scheme), (" dp_accounting", _dp_accounting_scheme)):
            _, eps, seconds, imports = run(case, scheme)
            rows.append((scheme, library, float("nan"), eps, float("nan"), seconds, imports))
            answer = f"{eps:.4f}  {seconds:7.2f} s (imports {imports:.2f} s)" if eps == eps \
                else "no accountant of it takes the event"
            print(f"  {scheme:<24}{library:<15} {answer}", flush=True)
    return rows


def main():
    return allocation() + schemes()


if __name__ == "__main__":
    main()
