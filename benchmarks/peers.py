"""The standard tasks and how each tool answers them (used by bench_peers.py, report.py, bench_cf.py).

Every task is a composition of Poisson-subsampled Gaussians asked one question:
ε at a δ, or δ at an ε. Every ``run_<tool>(task)`` builds its objects from
scratch and answers it, with the tool's documented defaults:

* dpaccount: the default method (the certified PLD here), ``accuracy=1e-3``;
  every run clears dpaccount's caches first (``clear_dpaccount_caches``).
* dp_accounting: ``dp_accounting.pld.PLDAccountant()`` with its defaults
  (add-or-remove-one, value_discretization_interval=1e-4, pessimistic
  estimate), fed ``PoissonSampledDpEvent(q, GaussianDpEvent(σ))``,
  ``SelfComposedDpEvent``, ``ComposedDpEvent``.
* prv_accountant: eps_error=0.01. The homogeneous ε task uses
  ``prv_accountant.Accountant`` (which sets delta_error=δ/1000); the others
  ``PRVAccountant`` with a list of ``PoissonSubsampledGaussianMechanism`` and
  the task's delta_error. It returns (lower, estimate, upper).
* autodp, analytical Fourier accountant (Zhu, Dong & Wang 2022): the
  phi-function route of its docs, ``AmplificationBySampling_pld`` (Poisson,
  ``add_only`` and ``remove_only``) of ``GaussianMechanism(σ, phi_off=False)``,
  ``ComposeAFA``; the larger answer of the two directions.
* autodp, RDP: ``AmplificationBySampling(PoissonSampling=True)`` of
  ``ExactGaussianMechanism(σ)`` with ``improved_bound_flag=True`` (as its
  ``NoisySGD_Mechanism``), ``Composition``; RDP → (ε, δ) by its default conversion.
* fourier_accountant: ``get_epsilon_R`` / ``get_delta_R`` (the remove/add
  relation) with the defaults nx=1e6, L=20; heterogeneous σ as arrays.
"""
import contextlib
import os
import signal
import statistics
import sys
import time
import warnings
from importlib import metadata
from typing import Callable, NamedTuple

import numpy as np

# Benchmark the working tree, whether or not dpaccount is installed.
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

import dpaccount  # noqa: E402
from dpaccount import Composition, GaussianMechanism, PoissonSampling  # noqa: E402

PRV_EPS_ERROR = 0.01


class Task:
    def __init__(self, name, descr, sigmas, q, counts, query, target, prv_delta_error):
        self.name, self.descr = name, descr
        self.sigmas = [float(s) for s in sigmas]
        self.q = float(q)
        self.counts = [int(c) for c in counts]
        self.query = query            # "eps" (ε at δ=target) or "delta" (δ at ε=target)
        self.target = float(target)
        self.prv_delta_error = prv_delta_error

    @property
    def homogeneous(self):
        return len(self.sigmas) == 1

    @property
    def what(self):
        return f"eps(delta={self.target:g})" if self.query == "eps" else f"delta(eps={self.target:g})"


TASKS = {
    "dpsgd": Task("dpsgd", "DP-SGD: sigma=1.1, q=256/60000, T=14063",
                  [1.1], 256 / 60000, [14063], "eps", 1e-5, prv_delta_error=1e-5 / 1000),
    "hetero11": Task("hetero11", "11 subsampled Gaussians, q=0.02, sigma=linspace(3,2,11), 500 steps each",
                     np.linspace(3.0, 2.0, 11), 0.02, [500] * 11, "delta", 1.0, prv_delta_error=1e-5),
    "hetero200": Task("hetero200", "200 subsampled Gaussians, q=0.01, sigma=linspace(2,4,200), 50 steps each",
                      np.linspace(2.0, 4.0, 200), 0.01, [50] * 200, "eps", 1e-5, prv_delta_error=1e-5 / 1000),
}
for _t in (1000, 10000, 100000):  # Connect-the-Dots blog: ε far out in the tail of rare large losses
    TASKS[f"blog{_t:.0e}".replace("+0", "")] = Task(
        f"blog{_t:.0e}".replace("+0", ""), f"Connect-the-Dots blog: sigma=0.5, q=2e-5, T={_t}",
        [0.5], 2e-5, [_t], "eps", 1e-8, prv_delta_error=1e-8 / 1000)


class NotInstalled(Exception):
    pass


class TimeLimit(Exception):
    """A run stopped at its time limit."""


# ----------------------------------------------------------------------------- dpaccount
def clear_dpaccount_caches():
    """Clear every module-level functools cache in dpaccount.* and the grid caches
    (pairs hash by value, so a fresh mechanism could otherwise hit caches filled
    by the previous run)."""
    for name, mod in list(sys.modules.items()):
        if not (name == "dpaccount" or name.startswith("dpaccount.")) or mod is None:
            continue
        for obj in list(vars(mod).values()):
            if callable(getattr(obj, "cache_clear", None)) and callable(getattr(obj, "cache_info", None)):
                obj.cache_clear()
    dpaccount.clear_cache()  # the composed grids and plans, shared by equal mechanisms


def build_dpaccount(task):
    parts = [PoissonSampling()(GaussianMechanism(sigma=s), task.q) for s in task.sigmas]
    return Composition()(parts, task.counts)


def run_dpaccount(task):
    clear_dpaccount_caches()
    m = build_dpaccount(task)
    if task.query == "eps":
        return m.get_approxDP(task.target)
    return m.get_approx_delta(task.target)


def dpaccount_bounds(task, method=None, accuracy=1e-3):
    """dpaccount's certified interval (``Bounds``), from a cold start."""
    clear_dpaccount_caches()
    m = build_dpaccount(task)
    query = m.get_approxDP_bounds if task.query == "eps" else m.get_approx_delta_bounds
    return query(task.target, method=method, accuracy=accuracy)


# ----------------------------------------------------------------------------- peers
def _answer(task, eps_at, delta_at):
    return eps_at(task.target) if task.query == "eps" else delta_at(task.target)


def run_dp_accounting(task):
    try:
        import dp_accounting
        from dp_accounting import pld
    except ImportError as e:
        raise NotInstalled(str(e))
    events = [dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(task.q, dp_accounting.GaussianDpEvent(s)), k)
        for s, k in zip(task.sigmas, task.counts)]
    event = events[0] if len(events) == 1 else dp_accounting.ComposedDpEvent(events)
    acc = pld.PLDAccountant()  # value_discretization_interval=1e-4 (default)
    acc.compose(event)
    return _answer(task, acc.get_epsilon, acc.get_delta)


def run_prv(task):
    """(lower, estimate, upper)."""
    try:
        import prv_accountant
        from prv_accountant.privacy_random_variables import PoissonSubsampledGaussianMechanism
    except ImportError as e:
        raise NotInstalled(str(e))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Accountant's DeprecationWarning, eps_max notes
        if task.homogeneous and task.query == "eps":
            acc = prv_accountant.Accountant(noise_multiplier=task.sigmas[0], sampling_probability=task.q,
                                            delta=task.target, max_compositions=task.counts[0],
                                            eps_error=PRV_EPS_ERROR)
            return tuple(acc.compute_epsilon(num_compositions=task.counts[0]))
        prvs = [PoissonSubsampledGaussianMechanism(sampling_probability=task.q, noise_multiplier=s)
                for s in task.sigmas]
        acc = prv_accountant.PRVAccountant(prvs=prvs, eps_error=PRV_EPS_ERROR,
                                           delta_error=task.prv_delta_error,
                                           max_self_compositions=task.counts)
        return tuple(_answer(task, lambda x: acc.compute_epsilon(x, num_self_compositions=task.counts),
                             lambda x: acc.compute_delta(x, num_self_compositions=task.counts)))


def run_autodp_phi(task):
    try:
        from autodp.mechanism_zoo import GaussianMechanism as AutodpGaussian
        from autodp.transformer_zoo import AmplificationBySampling_pld, ComposeAFA
    except ImportError as e:
        raise NotInstalled(str(e))
    answers = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for relation in ("add_only", "remove_only"):
            sample = AmplificationBySampling_pld(PoissonSampling=True, neighboring=relation)
            parts = [sample(AutodpGaussian(s, phi_off=False), task.q) for s in task.sigmas]
            m = ComposeAFA()(parts, task.counts)
            try:
                answers.append(_answer(task, m.get_approxDP, m.get_approx_delta))
            except AttributeError as exc:
                if "quadrature" not in str(exc):
                    raise
                import scipy
                raise RuntimeError(f"its phi function of the subsampled Gaussian calls scipy.integrate.quadrature, "
                                   f"removed in SciPy 1.15 (installed: {scipy.__version__})") from exc
    return max(answers)


def run_autodp_rdp(task):
    try:
        from autodp.mechanism_zoo import ExactGaussianMechanism
        from autodp.transformer_zoo import AmplificationBySampling, Composition as AutodpComposition
    except ImportError as e:
        raise NotInstalled(str(e))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sample = AmplificationBySampling(PoissonSampling=True)
        parts = [sample(ExactGaussianMechanism(sigma=s), task.q, improved_bound_flag=True) for s in task.sigmas]
        m = AutodpComposition()(parts, task.counts)
        return _answer(task, m.get_approxDP, m.get_approx_delta)


def run_fourier(task):
    try:
        import fourier_accountant
    except ImportError as e:
        raise NotInstalled(str(e))
    args = dict(sigma=np.array(task.sigmas), q=np.full(len(task.sigmas), task.q), ncomp=np.array(task.counts))
    return _answer(task, lambda d: fourier_accountant.get_epsilon_R(target_delta=d, **args),
                   lambda e: fourier_accountant.get_delta_R(target_eps=e, **args))


class Tool(NamedTuple):
    name: str
    run: Callable
    setting: str
    package: str  # the distribution whose version is reported


TOOLS = [
    Tool("dpaccount", run_dpaccount,
         f"default method and accuracy={dpaccount.queries.DEFAULT_ACCURACY:g}; every cache cleared first", "dpaccount"),
    Tool("dp_accounting", run_dp_accounting,
         "PLDAccountant() defaults: value_discretization_interval=1e-4, pessimistic estimate", "dp-accounting"),
    Tool("prv_accountant", run_prv, f"eps_error={PRV_EPS_ERROR}, delta_error=δ/1000 (hetero11: 1e-5); it returns "
         "(lower, estimate, upper): the value is its upper bound (what Opacus reports), the estimate beside it",
         "prv-accountant"),
    Tool("autodp_phi", run_autodp_phi, "analytical Fourier accountant: AmplificationBySampling_pld + ComposeAFA, "
         "max of add_only and remove_only", "autodp"),
    Tool("autodp_rdp", run_autodp_rdp, "RDP: AmplificationBySampling(improved_bound_flag=True) + Composition, "
         "default RDP→DP conversion", "autodp"),
    Tool("fourier_accountant", run_fourier, "get_epsilon_R / get_delta_R (remove/add), nx=1e6, L=20 (defaults)",
         "fourier-accountant"),
]


def version(package):
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return dpaccount.__version__ if package == "dpaccount" else "not installed"


# ----------------------------------------------------------------------------- timing
@contextlib.contextmanager
def time_limit(seconds):
    """Raise ``TimeLimit`` in this (main) thread after ``seconds`` (SIGALRM; none when None).
    A long call into C is stopped when it returns to Python."""
    if seconds is None:
        yield
        return

    def stop(signum, frame):
        raise TimeLimit(f"stopped after {seconds:g} s")

    old = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def measure(fn, task, repeat, budget, limit=None):
    """Run fn(task) up to `repeat` times, each stopped after `limit` seconds
    (``TimeLimit``); not repeated once a run takes longer than `budget`.
    Return (value, median seconds, runs)."""
    times, value = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        with time_limit(limit):
            value = fn(task)
        times.append(time.perf_counter() - t0)
        if times[-1] > budget:
            break
    return value, statistics.median(times), len(times)
