"""The plots, headless (Agg): the expected lines and labels, a non-empty PNG,
and a clear error naming the extra when matplotlib is missing."""
import sys

import numpy as np
import pytest

from dpaccount import GaussianMechanism, RandomizedResponse, plot_fDP, plot_privacy_profile, plot_rdp

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_plot_fdp_band_ideal_gdp_and_legend(tmp_path):
    mechs = [GaussianMechanism(1.0), RandomizedResponse(0.75)]
    ax = plot_fDP(mechs, labels=["gauss", "rr"], gdp_mu=1.0)
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels == ["gauss", "rr", "G_μ, μ = 1", "ideal (β = 1 − α)"]
    assert len(ax.collections) == 2  # one certified band per mechanism
    x, y = ax.get_lines()[0].get_data()
    assert np.all(np.diff(y) <= 1e-12) and y[0] == 1.0 and y[-1] == 0.0  # β falls from 1 to 0
    assert [t.get_text() for t in ax.get_legend().get_texts()] == labels
    assert ax.get_xlabel() == "type I error α"
    out = tmp_path / "fdp.png"
    ax.figure.savefig(out)
    assert out.stat().st_size > 1000


def test_plot_on_given_axes_and_profiles(tmp_path):
    fig, axes = plt.subplots(1, 2)
    m = GaussianMechanism(2.0)
    assert plot_privacy_profile(m, ax=axes[0]) is axes[0]
    assert plot_rdp(m, ax=axes[1], orders=[2, 4, 8]) is axes[1]
    assert axes[0].get_xscale() == "log" and axes[1].get_xscale() == "log"
    x, y = axes[1].get_lines()[0].get_data()
    assert np.allclose(y, np.array([2, 4, 8]) / (2 * 4.0))  # Gaussian RDP: α/(2σ²)
    fig.savefig(tmp_path / "p.png")
    assert (tmp_path / "p.png").stat().st_size > 1000


def test_labels_must_match():
    with pytest.raises(ValueError, match="labels"):
        plot_fDP([GaussianMechanism(1.0)], labels=["a", "b"])


def test_missing_matplotlib_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"\[plot\]"):
        plot_fDP(GaussianMechanism(1.0))
