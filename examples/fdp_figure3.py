"""The shape of Bu, Dong, Long & Su (2020), Figure 3: trade-off curves of
their six MNIST settings (Table 1: batch 256 of 60,000, noise σ, epochs),
the certified curve of dpaccount against the CLT's G_μ.

    PYTHONPATH=. python examples/fdp_figure3.py [out.png]

Writes docs/fdp_figure3.png by default."""
import sys
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from dpaccount import Composition, GaussianMechanism, PoissonSampling, clt_mu, plot_fDP  # noqa: E402

SETTINGS = [(1.3, 15), (1.1, 60), (0.7, 45), (0.6, 62), (0.55, 68), (0.5, 100)]  # (σ, epochs), Table 1
Q = 256 / 60000


def main(out="docs/fdp_figure3.png"):
    fig, axes = plt.subplots(2, 3, figsize=(13, 9))
    for ax, (sigma, epochs) in zip(axes.ravel(), SETTINGS):
        steps = round(epochs / Q)
        start = time.perf_counter()
        m = Composition()([PoissonSampling()(GaussianMechanism(sigma=sigma), Q)], [steps])
        mu = clt_mu(Q, sigma, steps)
        plot_fDP(m, ax=ax, labels=["certified (dpaccount)"], gdp_mu=mu)
        ax.lines[1].set_label(f"CLT G_μ, μ = {mu:.2f}")
        ax.legend(loc="upper right", fontsize=8)
        ax.set_title(f"σ = {sigma}, {epochs} epochs (T = {steps})")
        print(f"σ = {sigma}, {epochs} epochs: β(0.01) = {m.get_fDP(0.01):.4f}, CLT μ = {mu:.2f}, "
              f"{time.perf_counter() - start:.1f} s")
    fig.suptitle("Trade-off curves of DP-SGD on MNIST (Bu et al. 2020, Fig. 3): certified vs CLT")
    fig.tight_layout()
    fig.savefig(out, dpi=90)
    print("wrote", out)


if __name__ == "__main__":
    main(*sys.argv[1:])
