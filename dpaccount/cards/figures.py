"""The report card's figures as inline SVG text (matplotlib, the optional ``[plot]`` extra).

Drawn on a ``matplotlib.figure.Figure`` (no pyplot: no global figure state, headless), written
as SVG with glyphs as paths (no font files) and a fixed hash salt (the same report gives the
same text). ``None`` where matplotlib is not installed: the report then shows tables only.

* ``tradeoff_svg``: β(α), the certified band [lower, upper] (the lower, safe end as the line),
  G_μ of the certified μ (dashed) and of the CLT's μ (dotted, an approximation), and 1 − α;
* ``roc_svg``: the attack's TPR against its FPR on log axes, where membership inference is
  judged (Carlini et al. 2022): the certified band of 1 − β and the guess TPR = FPR.
"""
import io
from typing import Any, Optional

import numpy as np

from ..converters.fdp import gdp_tradeoff
from ..plots import tradeoff_frame


def matplotlib_available() -> bool:
    """Whether the ``[plot]`` extra is installed."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _svg(draw: Any) -> Optional[str]:
    """``draw(ax)`` on a new 4.9 × 4.4 in figure, as SVG text (its XML prologue removed)."""
    if not matplotlib_available():
        return None
    import matplotlib
    from matplotlib.figure import Figure
    with matplotlib.rc_context({"svg.fonttype": "path", "svg.hashsalt": "dpaccount-report"}):
        fig = Figure(figsize=(4.9, 4.4))
        ax = fig.add_subplot()
        draw(ax)
        fig.tight_layout()
        out = io.StringIO()
        fig.savefig(out, format="svg", metadata={"Date": None, "Creator": "dpaccount"})
    text = out.getvalue()
    return text[text.index("<svg"):]


def _gdp_lines(ax: Any, report: Any, alphas: np.ndarray, transform: Any) -> None:
    if report.mu is not None and np.isfinite(report.mu):
        ax.plot(alphas, transform(gdp_tradeoff(alphas, report.mu)), linestyle="--", linewidth=1.2, color="C1", zorder=4,
                label=f"G_μ, certified μ = {report.mu:.4g}")
    if report.clt_mu is not None:
        ax.plot(alphas, transform(gdp_tradeoff(alphas, report.clt_mu)), linestyle=":", linewidth=1.4, color="C2", zorder=4,
                label=f"G_μ, CLT μ = {report.clt_mu:.4g} (approximate)")


def tradeoff_svg(report: Any) -> Optional[str]:
    """The trade-off curve figure (module docstring), or None (no matplotlib or no curve)."""
    if report.alphas is None:
        return None
    a, lo, hi = report.alphas, report.beta_lower, report.beta_upper

    def draw(ax):
        ax.plot(a, lo, linewidth=2.2, color="C0", zorder=3, label="certified lower bound on β")
        if hi is not None:
            ax.fill_between(a, lo, hi, color="C0", alpha=0.25, linewidth=0, zorder=2,
                            label="certified band [lower, upper]")
        _gdp_lines(ax, report, a, lambda b: b)
        tradeoff_frame(ax, "type I error α (attack's false-positive rate)", "type II error β (1 − true-positive rate)")
        ax.legend(fontsize="small")
    return _svg(draw)


def roc_svg(report: Any) -> Optional[str]:
    """The attack's TPR against FPR on log axes (module docstring), or None."""
    if report.alphas is None:
        return None
    keep = report.alphas > 0
    a = report.alphas[keep]
    top = 1 - report.beta_lower[keep]

    def draw(ax):
        ax.plot(a, top, linewidth=2.2, color="C0", zorder=3, label="certified upper bound on TPR")
        if report.beta_upper is not None:
            ax.fill_between(a, 1 - report.beta_upper[keep], top, color="C0", alpha=0.25, linewidth=0, zorder=2,
                            label="certified band")
        _gdp_lines(ax, report, a, lambda b: 1 - b)
        ax.plot(a, a, color="grey", linestyle="--", linewidth=0.8, label="guessing (TPR = FPR)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(a[0], 1)
        ax.set_ylim(a[0], 1)
        ax.set_xlabel("false-positive rate")
        ax.set_ylabel("true-positive rate")
        ax.legend(fontsize="small", loc="lower right")
    return _svg(draw)
