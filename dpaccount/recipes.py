"""DP-SGD in its users' words: ``dpsgd(noise_multiplier, batch_size, dataset_size, epochs)``.

The step count of a training loop as Opacus counts it
(``opacus.data_loader.DPDataLoader``): a pass over the data is
⌈dataset_size / batch_size⌉ optimizer steps (a loader that keeps its last,
short batch), and ``epochs`` passes (a real number: a partial pass too) are
⌈epochs · ⌈dataset_size / batch_size⌉⌉ steps, rounded *up* — one step more
never under-reports. The sampling rate is batch_size / dataset_size (the
expected batch), which is *not* Opacus': its ``DPDataLoader`` samples at
1/len(data_loader) = 1/⌈n/B⌉, at most B/n (n = 300, B = 32: 0.1 against
0.1067). B/n is kept because it bounds both loops: a loader sampling at B/n
(any Poisson loader written to that rate) would be under-reported at
1/⌈n/B⌉, while for Opacus' loader B/n is a larger rate, so an upper bound
(``dpsgd(1.1, 32, 300, 2)``: ε(1e-5) = 3.1558, where Opacus' loader and
``PrivacyEngine(accountant="dpaccount")`` give 2.9759). For Opacus' exact number,
compose ``PoissonSampling()(GaussianMechanism(σ), 1 / ⌈n / B⌉)`` over the same
steps, or let the Opacus accountant count them (``integrations/opacus.py``).

``sampling`` names the batch scheme the loop uses (``SAMPLINGS``):

* ``"poisson"`` — each record joins each batch independently with
  probability q (Opacus' DPDataLoader): ``PoissonSampling``, add/remove;
* ``"without-replacement"`` — each batch a uniformly random subset of
  exactly ``batch_size`` records, drawn afresh every step: ``SubsetSampling``,
  replace-one (Balle, Barthe & Gaboardi 2018). A *shuffled* epoch (each record
  exactly once per pass) is another scheme, which neither accounts tightly;
* ``"truncated-poisson"`` — Poisson sampling at q, then a uniformly random
  ``max_batch_size`` of the batch if it is larger: ``TruncatedPoissonSampling``,
  add/remove (dp_accounting's ``TruncatedSubsampledGaussianDpEvent``);
* ``"with-replacement"`` — ``batch_size`` independent uniform draws of a
  record (one may appear several times): ``SamplingWithReplacement``,
  replace-one;
* ``"random-allocation"`` — each record in exactly one of the ⌈n/b⌉ steps
  of each pass, chosen uniformly (balls-in-bins): ``RandomAllocation``, one
  epoch composed ``epochs`` times (whole epochs only), add/remove.

docs/batch_schemes.rst says which scheme a training loop uses.

DP-SGD's one-call calibrations (``calibrate`` on the Poisson-sampled
Gaussian, in Opacus' words too): ``dpsgd_noise_multiplier``,
``dpsgd_max_steps``, ``dpsgd_max_sample_rate``.
"""
from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING, Any, Callable, Dict, Literal, Optional, Tuple

from . import validation as v
from .calibrate import calibrate
from .converters.gdp import delta_gdp
from .lazy import lazy
from .mechanisms.standard import GaussianMechanism
from .transformers.composition import Composition
from .transformers.poisson_sampling import PoissonSampling
from .transformers.random_allocation import RandomAllocation
from .transformers.subset_sampling import SubsetSampling
from .transformers.truncated_poisson import TruncatedPoissonSampling
from .transformers.with_replacement import SamplingWithReplacement

if TYPE_CHECKING:
    from .mechanism import Mechanism

optimize = lazy("scipy.optimize")
special = lazy("scipy.special")


# one step of each batch scheme: (noise multiplier, batch size, dataset size, max batch size) -> mechanism
def _poisson(sigma, b, n, max_b):
    return PoissonSampling()(GaussianMechanism(sigma), b / n)


def _without_replacement(sigma, b, n, max_b):
    return SubsetSampling()(GaussianMechanism(sigma, relation="replace-one"), b / n)


def _truncated_poisson(sigma, b, n, max_b):
    if max_b is None:
        raise ValueError("max_batch_size is required for sampling='truncated-poisson' (the cap on a batch)")
    return TruncatedPoissonSampling()(GaussianMechanism(sigma), b / n, n, max_b)


def _with_replacement(sigma, b, n, max_b):
    return SamplingWithReplacement()(GaussianMechanism(sigma, relation="replace-one"), n, b)


def _random_allocation_epoch(sigma, b, n, max_b):
    return RandomAllocation()(GaussianMechanism(sigma), -(-n // b))


SAMPLINGS = {"poisson": _poisson, "without-replacement": _without_replacement,
             "truncated-poisson": _truncated_poisson, "with-replacement": _with_replacement,
             "random-allocation": _random_allocation_epoch}
PER_EPOCH = {"random-allocation"}   # the schemes whose unit is a pass, not a step


def dpsgd_steps(batch_size, dataset_size, epochs):
    """(sampling rate, steps): batch_size / dataset_size (not Opacus' 1/⌈n / B⌉, which is at most
    it: module docstring) and ⌈epochs·⌈n / B⌉⌉."""
    batch_size, dataset_size = v.count("batch_size", batch_size), v.count("dataset_size", dataset_size)
    if batch_size > dataset_size:
        raise ValueError(f"batch_size must be at most dataset_size = {dataset_size}, got {batch_size}")
    epochs = v.positive("epochs", epochs)
    per_epoch = -(-dataset_size // batch_size)  # ⌈n / B⌉, in integers
    return batch_size / dataset_size, v.count("steps (epochs × steps per epoch)", math.ceil(epochs * per_epoch))


def dpsgd(noise_multiplier: float, batch_size: int, dataset_size: int, epochs: float,
          sampling: Literal["poisson", "without-replacement", "truncated-poisson", "with-replacement",
                            "random-allocation"] = "poisson", max_batch_size: Optional[int] = None) -> Mechanism:
    """The mechanism of DP-SGD trained for ``epochs`` passes with batches of ``batch_size``
    (expected, for Poisson sampling) out of ``dataset_size`` records and Gaussian noise of
    ``noise_multiplier`` times the clipping norm (module docstring: the step count and the
    schemes). ``max_batch_size``: the cap of ``sampling="truncated-poisson"`` (required there,
    refused elsewhere)."""
    sigma = v.positive("noise_multiplier", noise_multiplier)
    if sampling not in SAMPLINGS:
        raise ValueError(f"sampling must be one of {sorted(SAMPLINGS)}, got {sampling!r}")
    if max_batch_size is not None and sampling != "truncated-poisson":
        raise ValueError(f"max_batch_size applies to sampling='truncated-poisson' only, got "
                         f"max_batch_size={max_batch_size!r} with sampling={sampling!r}")
    q, steps = dpsgd_steps(batch_size, dataset_size, epochs)
    unit = SAMPLINGS[sampling](sigma, batch_size, dataset_size, max_batch_size)
    if sampling in PER_EPOCH:
        if epochs != int(epochs):
            raise ValueError(f"epochs must be a whole number for sampling={sampling!r} (each pass allocates "
                             f"every record once), got {epochs!r}")
        steps = int(epochs)
    return Composition()([unit], [steps])


# -- DP-SGD, one call each -----------------------------------------------------

def _dpsgd(sigma, q, steps):
    return Composition()([PoissonSampling()(GaussianMechanism(sigma=sigma), q)], [steps])


def _check_count(name, value):
    if isinstance(value, bool) or not (isinstance(value, numbers.Integral)
                                       or isinstance(value, float) and value.is_integer()):
        raise TypeError(f"{name} must be a whole number, got {value!r}")
    return v.count(name, int(value))


def _clt_mu(eps, delta):
    """The μ with δ_GDP(eps; μ) = delta (μ-GDP is (ε, δ(ε))-DP, Dong, Roth & Su Cor. 2.13)."""
    f = lambda mu: float(delta_gdp(eps, mu)) - delta
    lo, hi = 1e-2, 50.0
    if not f(lo) < 0 < f(hi):
        return None
    return optimize.brentq(f, lo, hi, xtol=1e-12)


def _guess(estimate, safe, integer):
    """Starting points from a closed-form estimate x (checked, never trusted):
    x·(1 + safe), on the side the budget should be met, then x itself (the
    central-limit estimate is optimistic); none where x could not be formed."""
    try:
        x = estimate()
    except (TypeError, ZeroDivisionError, OverflowError, ValueError):
        return None
    if not (x and math.isfinite(x) and x > 0):
        return None
    points = (x * (1 + safe), x)
    return tuple(int(round(p)) for p in points) if integer else points


def _budget(eps, delta, target_epsilon, target_delta):
    """(eps, delta) given either way: ours, or Opacus' ``target_epsilon``/``target_delta``."""
    pairs = (("eps", eps, "target_epsilon", target_epsilon), ("delta", delta, "target_delta", target_delta))
    out = []
    for name, value, alias, other in pairs:
        if (value is None) == (other is None):
            raise TypeError(f"give {name} or {alias} (one of them), got {name}={value!r}, {alias}={other!r}")
        out.append(other if value is None else value)
    return out


def _target(eps: Optional[float], delta: Optional[float], target_epsilon: Optional[float],
            target_delta: Optional[float], advantage: Optional[float], tpr: Optional[float],
            fpr: Optional[float]) -> Tuple[Dict[str, Any], Callable[[], Any]]:
    """(``calibrate``'s target keywords, the μ-GDP that meets it as a closed-form first guess):
    an (ε, δ) budget (``_budget``), or an attack-risk target: ``advantage`` (μ-GDP's is
    2Φ(μ/2) − 1) or ``tpr`` at ``fpr`` (μ-GDP's is Φ(Φ⁻¹(fpr) + μ)); Dong, Roth & Su 2022,
    Cor. 2.13 and eq. 2.6. The guess is checked, never trusted."""
    risk = {k: val for k, val in dict(advantage=advantage, tpr=tpr, fpr=fpr).items() if val is not None}
    if not risk:
        eps, delta = _budget(eps, delta, target_epsilon, target_delta)
        return dict(eps=eps, delta=delta), lambda: _clt_mu(eps, delta)
    budget = dict(eps=eps, delta=delta, target_epsilon=target_epsilon, target_delta=target_delta)
    if any(val is not None for val in budget.values()) or set(risk) not in ({"advantage"}, {"tpr", "fpr"}):
        raise TypeError(f"give one target: eps and delta (or target_epsilon and target_delta), advantage, or "
                        f"tpr and fpr; got {sorted(k for k, val in {**budget, **risk}.items() if val is not None)}")
    if advantage is not None:
        return risk, lambda: 2.0 * float(special.ndtri((1.0 + advantage) / 2.0))
    return risk, lambda: float(special.ndtri(tpr) - special.ndtri(fpr))


def _steps_of(steps, epochs, sample_rate):
    """``steps``, or Opacus' count for ``epochs`` passes at ``sample_rate``: int(epochs / q)
    (``opacus.accountants.utils.get_noise_multiplier``: rounded down)."""
    if (steps is None) == (epochs is None):
        raise TypeError(f"give steps or epochs (one of them), got steps={steps!r}, epochs={epochs!r}")
    if steps is None:
        epochs = v.positive("epochs", epochs)
        return _check_count("steps (int(epochs / sample_rate))", int(epochs / sample_rate))
    return _check_count("steps", steps)


def dpsgd_noise_multiplier(sample_rate: float, steps: Optional[int] = None, eps: Optional[float] = None,
                           delta: Optional[float] = None, *, epochs: Optional[float] = None,
                           target_epsilon: Optional[float] = None, target_delta: Optional[float] = None,
                           advantage: Optional[float] = None, tpr: Optional[float] = None, fpr: Optional[float] = None,
                           bounds: Tuple[float, float] = (0.2, 100.0), tol: float = 1e-3, **kw: Any) -> float:
    """The least noise multiplier σ with DP-SGD (Poisson rate ``sample_rate``,
    ``steps`` steps) (eps, delta)-DP by the certified bound; within ``tol``·σ.
    Opacus' words work too: ``target_epsilon``, ``target_delta`` and ``epochs``
    (then steps = int(epochs / sample_rate), as Opacus counts them). Or an
    attack-risk target instead of (eps, delta): ``advantage`` (no membership-inference
    attack has TPR − FPR above it) or ``tpr`` and ``fpr`` (none at that FPR has a
    higher TPR), by the certified upper bounds ``get_advantage`` / ``get_tpr``."""
    q = v.in_interval("sample_rate", sample_rate, 0.0, 1.0, hi_open=False)
    target, mu = _target(eps, delta, target_epsilon, target_delta, advantage, tpr, fpr)
    steps = _steps_of(steps, epochs, q)
    # the central-limit estimate (Bu, Dong, Long & Su 2019, Thm 5): μ = q·sqrt(T(e^{1/σ²} − 1))
    sigma = lambda: 1.0 / math.sqrt(math.log1p((mu() / q) ** 2 / steps))
    return calibrate(lambda s: _dpsgd(s, q, steps), **target, bounds=bounds, tol=tol,
                     increasing=False, guess=_guess(sigma, 0.05, False), **kw)


def dpsgd_max_steps(noise_multiplier: float, sample_rate: float, eps: Optional[float] = None,
                    delta: Optional[float] = None, *, target_epsilon: Optional[float] = None,
                    target_delta: Optional[float] = None, advantage: Optional[float] = None,
                    tpr: Optional[float] = None, fpr: Optional[float] = None,
                    bounds: Tuple[int, int] = (1, 10 ** 7), tol: float = 1e-3, **kw: Any) -> float:
    """The most DP-SGD steps that stay (eps, delta)-DP by the certified bound
    (``target_epsilon``/``target_delta``: Opacus' names for the budget), or within an
    attack-risk target (``advantage``, or ``tpr`` and ``fpr``: ``dpsgd_noise_multiplier``)."""
    sigma = v.positive("noise_multiplier", noise_multiplier)
    target, mu = _target(eps, delta, target_epsilon, target_delta, advantage, tpr, fpr)
    q = v.in_interval("sample_rate", sample_rate, 0.0, 1.0, hi_open=False)
    steps = lambda: (mu() / q) ** 2 / math.expm1(sigma ** -2)  # the CLT's estimate
    return calibrate(lambda t: _dpsgd(sigma, q, t), **target, bounds=bounds, tol=tol,
                     increasing=True, integer=True, guess=_guess(steps, -0.15, True), **kw)


def dpsgd_max_sample_rate(noise_multiplier: float, steps: int, eps: Optional[float] = None,
                          delta: Optional[float] = None, *, target_epsilon: Optional[float] = None,
                          target_delta: Optional[float] = None, advantage: Optional[float] = None,
                          tpr: Optional[float] = None, fpr: Optional[float] = None,
                          bounds: Tuple[float, float] = (1e-6, 1.0), tol: float = 1e-3, **kw: Any) -> float:
    """The largest Poisson sampling rate that keeps DP-SGD (eps, delta)-DP by the certified bound
    (``target_epsilon``/``target_delta``: Opacus' names for the budget), or within an
    attack-risk target (``advantage``, or ``tpr`` and ``fpr``: ``dpsgd_noise_multiplier``)."""
    sigma = v.positive("noise_multiplier", noise_multiplier)
    target, mu = _target(eps, delta, target_epsilon, target_delta, advantage, tpr, fpr)
    steps = _check_count("steps", steps)
    q = lambda: mu() / math.sqrt(steps * math.expm1(sigma ** -2))  # the CLT's estimate
    return calibrate(lambda r: _dpsgd(sigma, r, steps), **target, bounds=bounds, tol=tol,
                     increasing=True, guess=_guess(q, -0.15, False), **kw)
