"""Headline example: the privacy of DP-SGD on MNIST-sized data.

σ = 1.1, batch 256 of 60000 (Poisson sampling), 60 epochs = 14063 steps, δ = 1e-5.
"""
import time

from dpaccount import Composition, GaussianMechanism, PoissonSampling

sgd_step = PoissonSampling()(GaussianMechanism(sigma=1.1), 256 / 60000)
training = Composition()([sgd_step], [14063])

start = time.perf_counter()
eps = training.get_approxDP(1e-5)
elapsed = time.perf_counter() - start

print(f"mechanism : {training.name}")
print(f"epsilon   : {eps:.4f}  (rigorous upper bound at delta = 1e-5, PLD accountant)")
print(f"RDP gives : {training.get_approxDP(1e-5, method='rdp'):.4f}  (looser)")
print(f"time      : {elapsed:.2f} s")
