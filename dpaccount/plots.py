"""Plots people look at: trade-off curves (f-DP), privacy profiles, RDP curves.

matplotlib is the optional extra ``[plot]`` (``pip install dpaccount[plot]``):
it is imported when a plot is asked for, never when dpaccount is, and its
absence is reported by an ImportError that names the extra. Each function
takes an optional ``ax`` (else it draws on a new figure), draws every
mechanism given (one or a list) with a legend, and returns the axes; none
calls ``show``, so they work headless (the Agg backend).

* ``plot_fDP``: the certified band [lower, upper] of each mechanism's
  trade-off curve (``get_fDP_bounds``) and its lower, safe edge as a line
  (the edge only where the pairs are not attained: no certified band);
  the ideal curve β = 1 − α (perfect privacy); optionally G_μ for reference
  (Dong, Roth & Su 2022; Bu, Dong, Long & Su 2020, Fig. 3).
* ``plot_privacy_profile``: ε(δ) (certified upper bound), δ on a log axis.
* ``plot_rdp``: ε(α) of Rényi DP, orders on a log axis.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Optional, Sequence, Union

import numpy as np

from . import validation as v
from .converters.fdp import gdp_tradeoff

if TYPE_CHECKING:
    from numpy.typing import ArrayLike
    from .mechanism import Mechanism


def _pyplot() -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # the optional extra
        raise ImportError("plotting needs matplotlib, the optional extra [plot]: "
                          "pip install 'dpaccount[plot]'") from exc
    return plt


def image_formats() -> List[str]:
    """The file extensions matplotlib can write (ImportError with the install hint without it)."""
    _pyplot()
    from matplotlib.backend_bases import FigureCanvasBase
    return sorted(FigureCanvasBase.get_supported_filetypes())


def _axes(ax: Any) -> Any:
    if ax is None:
        _, ax = _pyplot().subplots()
    else:
        _pyplot()
    return ax


def _listed(mechanisms, labels):
    mechs = list(mechanisms) if isinstance(mechanisms, (list, tuple)) else [mechanisms]
    if labels is None:
        labels = [m.name for m in mechs]
    labels = [labels] if isinstance(labels, str) else list(labels)
    if len(labels) != len(mechs):
        raise ValueError(f"labels must name each of the {len(mechs)} mechanisms, got {labels!r}")
    return mechs, labels


def plot_fDP(mechanisms: Union[Mechanism, Sequence[Mechanism]], ax: Any = None,
             labels: Union[str, Sequence[str], None] = None, gdp_mu: Optional[ArrayLike] = None,
             band: bool = True, points: int = 401, accuracy: float = 1e-3) -> Any:
    """Trade-off curves β(α): per mechanism its certified band (shaded) and its
    lower edge (the safe curve) labelled; the ideal 1 − α; G_μ for each μ in
    ``gdp_mu`` (a number or a list, each μ ≥ 0). Returns the axes."""
    mus = [v.nonnegative("gdp_mu", mu) for mu in ([] if gdp_mu is None else np.atleast_1d(gdp_mu).tolist())]
    ax = _axes(ax)
    mechs, labels = _listed(mechanisms, labels)
    alphas = np.unique(np.concatenate((np.linspace(0.0, 1.0, points), np.geomspace(1e-6, 1e-2, 41))))
    for m, label in zip(mechs, labels):
        if band:
            bounds = m.get_fDP_bounds(alphas, accuracy=accuracy)
            lo, hi = bounds.lower, (bounds.upper if bounds.certified else bounds.lower)
        else:
            lo = hi = m.get_fDP(alphas, accuracy=accuracy)
        # the certified curve on top and wider, so that a G_μ it coincides with leaves it visible
        line, = ax.plot(alphas, lo, label=label, linewidth=2.2, zorder=3)
        if band:
            ax.fill_between(alphas, lo, hi, color=line.get_color(), alpha=0.25, linewidth=0, zorder=2)
    for mu in mus:
        ax.plot(alphas, gdp_tradeoff(alphas, mu), linestyle=(0, (2, 2)), linewidth=1.2, zorder=4,
                label=f"G_μ, μ = {mu:.3g}")
    ax.plot([0, 1], [1, 0], color="grey", linestyle="--", linewidth=0.8, label="ideal (β = 1 − α)")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    ax.set_xlabel("type I error α")
    ax.set_ylabel("type II error β")
    ax.legend()
    return ax


def plot_privacy_profile(mechanisms: Union[Mechanism, Sequence[Mechanism]], ax: Any = None,
                         labels: Union[str, Sequence[str], None] = None, deltas: Optional[ArrayLike] = None,
                         accuracy: float = 1e-3) -> Any:
    """ε(δ), the certified upper bound, against δ on a log axis. Returns the axes."""
    ax = _axes(ax)
    mechs, labels = _listed(mechanisms, labels)
    deltas = np.geomspace(1e-12, 1e-1, 45) if deltas is None else np.asarray(deltas, dtype=float)
    for m, label in zip(mechs, labels):
        ax.plot(deltas, m.get_approxDP(deltas, accuracy=accuracy), label=label)
    ax.set_xscale("log")
    ax.set_xlabel("δ")
    ax.set_ylabel("ε(δ)")
    ax.legend()
    return ax


def plot_rdp(mechanisms: Union[Mechanism, Sequence[Mechanism]], ax: Any = None,
             labels: Union[str, Sequence[str], None] = None, orders: Optional[ArrayLike] = None) -> Any:
    """Rényi DP ε(α) against the order α on a log axis. Returns the axes."""
    ax = _axes(ax)
    mechs, labels = _listed(mechanisms, labels)
    orders = np.geomspace(1.05, 256, 60) if orders is None else np.asarray(orders, dtype=float)
    for m, label in zip(mechs, labels):
        ax.plot(orders, m.get_RDP(orders), label=label)
    ax.set_xscale("log")
    ax.set_xlabel("order α")
    ax.set_ylabel("RDP ε(α)")
    ax.legend()
    return ax
