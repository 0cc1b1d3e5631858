"""DP-SGD with fixed-size batches: each step draws a batch of b = 256 of
n = 60,000 records *without replacement* (sampling a subset, fresh each
step; not a shuffle into epochs). Its guarantee is about replace-one
neighbours (one record swapped for another), so the Gaussian is declared
with ``relation="replace-one"``; the tight dominating pair is Dong, Roth &
Su's (2022, Thm 4.2).

Prints the certified ε(1e-5) for a few noise levels, the σ that meets a
budget of ε = 3, and, for reference, Poisson sampling at the same rate under
add/remove neighbours (a different, weaker notion of neighbour: a
replacement is a removal and an addition).

    python examples/subset_sampling.py
"""
from dpaccount import Composition, GaussianMechanism, PoissonSampling, SubsetSampling, calibrate

B, N, STEPS, DELTA = 256, 60000, 2000, 1e-5


def fixed_batches(sigma):
    step = SubsetSampling()(GaussianMechanism(sigma=sigma, relation="replace-one"), B / N)
    return Composition()([step], [STEPS])


def main():
    print(f"batches of {B} of {N} without replacement, {STEPS} steps, delta = {DELTA:g}")
    print("sigma  epsilon, replace-one (certified)  Poisson, add/remove (reference)")
    for sigma in (0.8, 1.0, 1.5):
        poisson = Composition()([PoissonSampling()(GaussianMechanism(sigma=sigma), B / N)], [STEPS])
        print(f"{sigma:5.2f}  {fixed_batches(sigma).get_approxDP(DELTA):32.4f}  "
              f"{poisson.get_approxDP(DELTA):.4f}")
    sigma = calibrate(fixed_batches, eps=3.0, delta=DELTA, bounds=(0.3, 10.0))
    print(f"the least sigma for epsilon <= 3 (replace-one): {sigma:.4f}, "
          f"certified epsilon {fixed_batches(sigma).get_approxDP(DELTA):.4f}")


if __name__ == "__main__":
    main()
