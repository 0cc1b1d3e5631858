"""One DP-SGD run (noise σ = 1.1, batches of b = 256 of n = 60,000 records,
⌈n/b⌉ = 235 steps an epoch) accounted under each batch scheme a training
loop may use (docs/batch_schemes.rst says which is yours):

* Poisson sampling at q = b/n (Opacus' DPDataLoader), add/remove;
* truncated Poisson: the same, capped at 300 records a batch, add/remove;
* fixed-size batches drawn without replacement, fresh each step, replace-one;
* batches of b draws with replacement, replace-one;
* random allocation (balls-in-bins: each record in exactly one step of each
  epoch), add/remove.

Prints the certified ε(1e-5) after each epoch as a table, and draws it to
``batch_schemes.png`` (or the file named on the command line) if matplotlib
is installed. Replace-one is a different neighbour notion from add/remove
(a replacement is a removal and an addition): compare those rows with care.

    python examples/batch_schemes.py [figure.png]
"""
import importlib.util
import sys

from dpaccount import (Composition, GaussianMechanism, PoissonSampling, RandomAllocation, SamplingWithReplacement,
                       SubsetSampling, TruncatedPoissonSampling)

SIGMA, N, B, CAP, EPOCHS, DELTA = 1.1, 60000, 256, 300, 4, 1e-5
PER_EPOCH = -(-N // B)  # ⌈n/b⌉ steps a pass


def per_step(step):
    """ε after each epoch of a scheme given by its one step."""
    return [Composition()([step], [e * PER_EPOCH]).get_approxDP(DELTA) for e in range(1, EPOCHS + 1)]


def schemes():
    """(label, ε after each epoch) of each scheme."""
    gaussian, swapped = GaussianMechanism(SIGMA), GaussianMechanism(SIGMA, relation="replace-one")
    rows = [("Poisson (add/remove)", per_step(PoissonSampling()(gaussian, B / N))),
            (f"truncated Poisson, cap {CAP} (add/remove)",
             per_step(TruncatedPoissonSampling()(gaussian, B / N, N, CAP))),
            ("without replacement (replace-one)", per_step(SubsetSampling()(swapped, B / N))),
            ("with replacement (replace-one)", per_step(SamplingWithReplacement()(swapped, N, B)))]
    epoch = RandomAllocation()(gaussian, PER_EPOCH)  # one epoch; epochs compose
    rows.append(("random allocation (add/remove)",
                 [Composition()([epoch], [e]).get_approxDP(DELTA) for e in range(1, EPOCHS + 1)]))
    return rows


def plot(rows, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 4))
    for label, eps in rows:
        ax.plot(range(1, EPOCHS + 1), eps, marker="o", label=label)
    ax.set(xlabel="epochs", ylabel=f"certified ε(δ = {DELTA:g})",
           title=f"DP-SGD, σ = {SIGMA}, batches of {B} of {N:,}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=90)
    plt.close(fig)


def main(out="batch_schemes.png"):
    print(f"DP-SGD, sigma = {SIGMA}, batches of {B} of {N} records ({PER_EPOCH} steps an epoch), "
          f"certified epsilon at delta = {DELTA:g}")
    rows = schemes()
    width = max(len(label) for label, _ in rows)
    print(f"{'scheme':{width}}  " + "  ".join(f"{e:>2} epoch{'s' if e > 1 else ' '}" for e in range(1, EPOCHS + 1)))
    for label, eps in rows:
        print(f"{label:{width}}  " + "  ".join(f"{x:9.4f}" for x in eps))
    if importlib.util.find_spec("matplotlib") is None:
        print("no figure: matplotlib is not installed (pip install 'dpaccount[plot]')")
    else:
        plot(rows, out)
        print(f"wrote {out}")


if __name__ == "__main__":
    main(*sys.argv[1:])
