"""Federated learning with the binomial mechanism (cpSGD, Agarwal, Suresh,
Yu, Kumar & McMahan 2018): each round a random cohort of clients (each
client joins with probability q: Poisson sampling, user-level add/remove
neighbours) sends updates quantised to integers; secure aggregation adds
Bin(n, ½) noise in total, so the server sees an integer sum whose noise is
discrete. Each of the D coordinates moves by at most Δ = 1 when a client
joins or leaves, so a round is (at most) D binomial mechanisms.

Small n is costly: Bin(n, ½) has tails that end, and a client's update is
exposed with the probability of the last atom, so ε(δ) is infinite once that
probability is above δ. With growing n the binomial approaches the Gaussian
of equal variance n/4 (the right column).

    python examples/federated_binomial.py
"""
import math

from dpaccount import BinomialMechanism, Composition, GaussianMechanism, PoissonSampling

Q, ROUNDS, D, DELTA = 0.1, 50, 4, 1e-5  # cohort rate, rounds, coordinates, δ


def federated(noise):
    """ROUNDS rounds of D coordinates, each round run on a Poisson-sampled cohort."""
    return Composition()([PoissonSampling()(noise, Q)], [ROUNDS * D])


def main():
    print(f"{ROUNDS} rounds x {D} coordinates, cohort rate q = {Q}, delta = {DELTA:g}")
    print("    n  epsilon, binomial  epsilon, Gaussian of variance n/4")
    for n in (16, 64, 256, 1024, 4096):
        binomial = federated(BinomialMechanism(n=n, p=0.5, sensitivity=1))
        gaussian = federated(GaussianMechanism(sigma=math.sqrt(n / 4)))
        print(f"{n:5d}  {binomial.get_approxDP(DELTA):17.4f}  {gaussian.get_approxDP(DELTA):.4f}")
    print("inf: no finite epsilon at this delta (the binomial's last atom reveals the client)")


if __name__ == "__main__":
    main()
