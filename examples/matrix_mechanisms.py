"""Correlated noise against DP-SGD: BandMF and BLT for 2,000 rounds and 10 epochs.

Training: 60,000 records, 2,000 rounds, 10 epochs of 200 rounds, expected batch 300,
every strategy with columns of norm 1 (the noise multiplier z then means the same
noise per column for all of them). Rows:

* DP-SGD, Poisson sampling at q = 300/60,000 over 2,000 rounds;
* DP-SGD, balls-in-bins: in each of the 10 epochs every record in one of its 200
  rounds, uniformly (``BallsInBinsSampling``: 10 random allocations, arXiv 2502.08202);
* DP-SGD, shuffled epochs without amplification (identity strategy, 10 fixed epochs);
* BandMF, 16 bands: the banded square root of the prefix sum, and cyclic Poisson
  sampling of 16 groups (q = 16·300/60,000 per round of a group): DP-SGD of
  ⌈2000/16⌉ = 125 rounds (arXiv 2306.08153); and without amplification,
  10 fixed epochs;
* BLT with two buffers, 10 fixed epochs (no amplification for it here: its
  columns are not banded);
* DP-FTRL's tree, 10 fixed epochs (its columns are not scaled: a round lies in up to
  ⌈log₂ 2001⌉ = 11 released nodes, so its columns have norm up to √11).

Equal ε is not equal utility: the correlated strategies add less error to the
model for the same noise (that is why they exist); this table is their privacy
side. Run: ``python examples/matrix_mechanisms.py [figure.png]`` (a plot of ε
against z with matplotlib, if installed).
"""
import importlib.util
import math
import sys

import numpy as np

from dpaccount import (BallsInBinsSampling, Composition, CyclicPoissonSampling, GaussianMechanism, MatrixMechanism,
                       Participation, PoissonSampling)
from dpaccount import strategies as S

records, rounds, epochs, batch, bands, delta = 60_000, 2_000, 10, 300, 16, 1e-5


def unit_columns(coeffs):
    """Toeplitz coefficients scaled to a first column (the longest) of norm 1."""
    coeffs = np.asarray(coeffs, dtype=float)
    return coeffs / math.sqrt(float(np.dot(coeffs, coeffs)))


sqrt_prefix = [math.comb(2 * i, i) / 4 ** i for i in range(bands)]  # (1 − x)^(−1/2), cut after b terms
bandmf = S.toeplitz(unit_columns(sqrt_prefix), rounds)
blt_raw = S.blt([0.995, 0.8], [0.12, 0.3], rounds)
blt = S.toeplitz(unit_columns(blt_raw.coeffs), rounds)  # the same BLT, scaled
fixed = Participation.fixed_epochs(epochs)


def mechanisms(z):
    """(name, mechanism, the sensitivity of one matrix release or None) at noise multiplier z."""
    q = batch / records
    band_mf = MatrixMechanism(bandmf, z, Participation.min_separation(bands))
    out = [("DP-SGD, Poisson", Composition()([PoissonSampling()(GaussianMechanism(z), q)], [rounds]), None),
           ("DP-SGD, balls-in-bins", BallsInBinsSampling()(MatrixMechanism(S.identity(rounds), z, fixed)), None),
           ("DP-SGD, 10 fixed epochs", MatrixMechanism(S.identity(rounds), z, fixed), True),
           (f"BandMF {bands} bands, cyclic Poisson", CyclicPoissonSampling()(band_mf, q * bands), None),
           (f"BandMF {bands} bands, 10 fixed epochs", MatrixMechanism(bandmf, z, fixed), True),
           ("BLT 2 buffers, 10 fixed epochs", MatrixMechanism(blt, z, fixed), True),
           ("tree (DP-FTRL), 10 fixed epochs", MatrixMechanism(S.tree(rounds), z, fixed), True)]
    return [(name, m, m.sensitivity if shown else None) for name, m, shown in out]


def main():
    z = 4.0
    print(f"{records} records, {rounds} rounds, {epochs} epochs, expected batch {batch}, delta = {delta:g}, "
          f"noise multiplier z = {z}")
    print(f"{'mechanism':42s} {'sensitivity':>12s} {'epsilon':>9s}")
    for name, m, sens in mechanisms(z):
        shown = "" if sens is None else f"{sens:.4f}"
        print(f"{name:42s} {shown:>12s} {m.get_approxDP(delta):9.3f}")
    if len(sys.argv) > 1 and importlib.util.find_spec("matplotlib") is not None:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        zs = [2.0, 3.0, 4.0, 6.0, 8.0]
        table = [[m.get_approxDP(delta) for _, m, _ in mechanisms(zz)] for zz in zs]
        fig, ax = plt.subplots(figsize=(6, 4))
        for i, (name, _, _) in enumerate(mechanisms(zs[0])):
            ax.semilogy(zs, [row[i] for row in table], marker="o", label=name)
        ax.set_xlabel("noise multiplier z")
        ax.set_ylabel(f"epsilon at delta = {delta:g}")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(sys.argv[1], dpi=120)
        print(f"wrote {sys.argv[1]}")


if __name__ == "__main__":
    main()
