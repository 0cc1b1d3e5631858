"""Online accounting during training: a ``PrivacyOdometer`` is told each
step as it happens and asked for ε at any time, so training can stop when
the budget is spent. The steps need not be known in advance (here the
sampling rate doubles after 2,000 steps); the grid is planned from a horizon,
the longest run expected. The odometer's state (the steps taken) is saved
into a checkpoint and restored.

    python examples/online_odometer.py
"""
import pickle

from dpaccount import Composition, GaussianMechanism, PoissonSampling, PrivacyOdometer

SIGMA, Q, BUDGET, DELTA, MAX_STEPS = 1.0, 0.005, 2.0, 1e-5, 20000


def main():
    horizon = Composition()([PoissonSampling()(GaussianMechanism(sigma=SIGMA), 2 * Q)], [MAX_STEPS])
    odometer = PrivacyOdometer(horizon)
    checkpoint = pickle.dumps(odometer.state_dict())  # nothing spent yet
    for step in range(1, MAX_STEPS + 1):
        rate = Q if step <= 2000 else 2 * Q  # larger batches later in training
        odometer.step(noise_multiplier=SIGMA, sample_rate=rate)  # ... after the optimizer's step
        if step % 500 == 0:
            eps = odometer.get_epsilon(DELTA)
            print(f"step {step:5d}: epsilon = {eps:.4f}")
            if eps > BUDGET:
                print(f"budget epsilon = {BUDGET} spent: stop at step {step}")
                break
            checkpoint = pickle.dumps(odometer.state_dict())  # saved with the model
    restored = PrivacyOdometer(horizon).load_state_dict(pickle.loads(checkpoint))
    print(f"restored from the last checkpoint within budget: {restored.steps} steps, "
          f"epsilon = {restored.get_epsilon(DELTA):.4f}")
    offline = Composition()([PoissonSampling()(GaussianMechanism(sigma=SIGMA), Q),
                             PoissonSampling()(GaussianMechanism(sigma=SIGMA), 2 * Q)],
                            [2000, restored.steps - 2000])
    print(f"the same steps accounted offline: epsilon = {offline.get_approxDP(DELTA):.4f}")


if __name__ == "__main__":
    main()
