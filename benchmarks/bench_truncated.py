"""Truncated Poisson sampling and sampling with replacement on DP-SGD, against dp_accounting, one process.

Truncated Poisson (n = 60000, q = 256/60000, B = 300, σ = 1.1, T = 1000,
δ = 1e-5): dpaccount's default ε (certified upper bound) and its certified
interval of the pair's value, cold; dp_accounting 0.6's PLD accountant on
``TruncatedSubsampledGaussianDpEvent`` (its default discretisation 1e-4),
composition included; the same mixture with dp_accounting's second component
replaced by ours (``from_gaussian_mechanism(σ, sensitivity=2,
sampling_prob=η)``: the analyses differ only there); Poisson sampling at q
(both libraries); the lower-bound instance (every other record's gradient 0:
Poisson sampling at the inclusion rate q' ≤ q, certified lower end); RDP.

Sampling with replacement (b = 256 draws, replace-one, same σ and T): no peer
accounts it. dpaccount's answer against ``SubsetSampling`` at γ = P(K ≥ 1) and
at b/n (the scheme without the repeated draws), and the instance "every other
record contributes 0" (Σ_k P(K = k) N(k, σ²) against N(0, σ²), dp_accounting's
``from_mixture_gaussian_mechanism``, pessimistic: an estimate of a lower bound).

    nice -n 5 python benchmarks/bench_truncated.py [--instance]     (needs pip install -e .[peers])

``--instance`` adds a lower bound that sees the displacement (~1 minute): x's
gradient on e1, every other record's on −e2, the output binned.
"""
import os
import sys
import time
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import dpaccount as dpa  # noqa: E402
from dpaccount.pld.pairs.truncated_poisson import inclusion_probability, truncation_weights  # noqa: E402
from dpaccount.pld.pairs.with_replacement import copies_rate  # noqa: E402

N, Q, B, SIGMA, T, DELTA = 60000, 256 / 60000, 300, 1.1, 1000, 1e-5


def timed(f):
    start = time.perf_counter()
    out = f()
    return out, time.perf_counter() - start


def pair_interval(m):
    """The certified interval of the dominating pair's ε (not the mechanism's: the pair is
    not attained, so ``get_approxDP_bounds`` has no lower end)."""
    profile = m.privacy_profile()
    return dpa.Bounds(profile.epsilon_lower(DELTA), profile.epsilon(DELTA), "pld")


def truncated():
    g = dpa.GaussianMechanism(sigma=SIGMA)
    m = dpa.Composition()([dpa.TruncatedPoissonSampling()(g, Q, N, B)], [T])
    eps, cold = timed(lambda: m.get_approxDP(DELTA))
    bounds = pair_interval(m)
    rdp = m.get_approxDP(DELTA, method="rdp")
    poisson = dpa.Composition()([dpa.PoissonSampling()(g, Q)], [T]).get_approxDP(DELTA)
    q_prime = inclusion_probability(Q, N, B)
    lower = dpa.Composition()([dpa.PoissonSampling()(g, q_prime)], [T]).get_approxDP_bounds(DELTA).lower
    w_low, w_high, eta = truncation_weights(Q, N, B)
    print(f"truncated Poisson, n={N} q={Q:.6g} B={B} σ={SIGMA} T={T}, ε({DELTA:g}):")
    print(f"  P(batch of the others ≥ B) = {w_high:.6g}, η = {eta:.6g}, q' = {q_prime:.6g}")
    print(f"  dpaccount default          {eps:.4f}   ({cold:.2f} s cold)")
    print(f"  dpaccount certified        [{bounds.lower:.5f}, {bounds.upper:.5f}]  (the pair's value)")
    print(f"  dpaccount RDP              {rdp:.4f}")
    print(f"  Poisson at q (dpaccount)   {poisson:.4f}")
    print(f"  lower bound: Poisson at q' {lower:.4f}   (the zero-gradient instance, certified lower end)")
    try:
        import dp_accounting
        from dp_accounting.pld import privacy_loss_distribution as plm
    except ImportError:
        print("dp_accounting not installed: pip install -e .[peers]")
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")

        def theirs():
            acc = dp_accounting.pld.PLDAccountant()
            acc.compose(dp_accounting.TruncatedSubsampledGaussianDpEvent(N, Q, B, SIGMA), T)
            return acc.get_epsilon(DELTA)

        peer, peer_time = timed(theirs)
        acc = dp_accounting.pld.PLDAccountant()
        acc.compose(dp_accounting.PoissonSampledDpEvent(Q, dp_accounting.GaussianDpEvent(SIGMA)), T)
        peer_poisson = acc.get_epsilon(DELTA)
        one = plm.from_gaussian_mechanism(SIGMA, sampling_prob=Q, value_discretization_interval=1e-4)
        two = plm.from_gaussian_mechanism(SIGMA, sensitivity=2, sampling_prob=eta, value_discretization_interval=1e-4)
        ours_in_theirs = two.compute_mixture(one, w_high).self_compose(T).get_epsilon_for_delta(DELTA)
    print(f"  dp_accounting PLD          {peer:.4f}   ({peer_time:.2f} s)")
    print(f"  dp_accounting, our pair    {ours_in_theirs:.4f}   (its mixture, second component ((1−η)N(0)+ηN(2), N(0)))")
    print(f"  Poisson at q (dp_acc.)     {peer_poisson:.4f}")


def displacement_instance():
    """A lower bound that sees the displacement: x's gradient e1, every other record's −e2.
    Coordinate 1 shows whether x is in the batch, coordinate 2 minus the number of others
    in it (a full batch that took x holds B − 1). The output is binned (y1 by 0.05, y2 by
    0.1: post-processing, so the binned pair's ε is ≤ the instance's), and the certified
    lower end of that finite pair composed T times is a lower bound on the mechanism's ε."""
    import numpy as np
    from scipy import stats
    pmf = stats.binom.pmf(np.arange(N), N - 1, Q)
    lo = 150  # below, the others' count has mass < 1e-20
    full = np.arange(B, N)
    eta = B / (full + 1)
    a, c, d = np.zeros(B + 1), np.zeros(B + 1), np.zeros(B + 1)
    a[lo:B], c[lo:B], d[lo:B] = (1 - Q) * pmf[lo:B], Q * pmf[lo:B], pmf[lo:B]
    a[B] = np.sum(pmf[B:] * (1 - Q * eta))   # x absent from a full batch
    c[B - 1] += Q * np.sum(pmf[B:] * eta)     # x in a full batch: B − 1 others
    d[B] = pmf[B:].sum()

    def cells(edges, mu):
        return np.diff(np.concatenate(([0.0], stats.norm.cdf(edges, mu, SIGMA), [1.0])))

    e2, e1 = np.arange(-B - 10, -lo + 10, 0.1), np.arange(-7, 8, 0.05)
    rows = np.array([cells(e2, -m) for m in range(B + 1)])
    y0, y1 = cells(e1, 0.0), cells(e1, 1.0)
    p = (np.outer(y0, a @ rows) + np.outer(y1, c @ rows)).ravel()
    r = np.outer(y0, d @ rows).ravel()
    keep = (p > 1e-300) | (r > 1e-300)
    m = dpa.Composition()([dpa.DiscreteMechanism(p[keep], r[keep])], [T])
    out, took = timed(lambda: m.get_approxDP_bounds(DELTA, accuracy=1e-2))
    print(f"  displacement instance      ≥ {out.lower:.4f}   (x on e1, others on −e2, binned; "
          f"{int(keep.sum())} outcomes, {took:.0f} s)")


def with_replacement():
    g = dpa.GaussianMechanism(sigma=SIGMA, relation=dpa.REPLACE_ONE)
    b = 256
    m = dpa.Composition()([dpa.SamplingWithReplacement()(g, N, b)], [T])
    eps, cold = timed(lambda: m.get_approxDP(DELTA))
    bounds = pair_interval(m)
    gamma = copies_rate(N, b)
    sub = dpa.Composition()([dpa.SubsetSampling()(g, gamma)], [T]).get_approxDP(DELTA)
    sub_b = dpa.Composition()([dpa.SubsetSampling()(g, b / N)], [T]).get_approxDP(DELTA)
    print(f"sampling with replacement, n={N} b={b} σ={SIGMA} T={T} (replace-one), ε({DELTA:g}):")
    print(f"  dpaccount default          {eps:.4f}   ({cold:.2f} s cold); certified [{bounds.lower:.5f}, "
          f"{bounds.upper:.5f}]")
    print(f"  SubsetSampling at γ={gamma:.6g}  {sub:.4f}   (x at most once: a lower reference, not a bound)")
    print(f"  SubsetSampling at b/n       {sub_b:.4f}")
    fresh = dpa.Composition()([dpa.SamplingWithReplacement()(g, N, b)], [T])  # nothing cached
    mech, took = timed(lambda: fresh.get_approxDP_bounds(DELTA))
    print(f"  of the mechanism            [{mech.lower:.4f}, {mech.upper:.4f}]   (get_approxDP_bounds: the lower "
          f"end the zero-gradient instance's; {took:.2f} s)")
    try:
        import numpy as np
        from dp_accounting.pld import privacy_loss_distribution as plm
        from scipy import stats
    except ImportError:
        return
    k = np.arange(8)
    w = stats.binom.pmf(k, b, 1 / N)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        inst, inst_time = timed(lambda: plm.from_mixture_gaussian_mechanism(
            SIGMA, [float(x) for x in k], [float(x) for x in w / w.sum()]).self_compose(T).get_epsilon_for_delta(DELTA))
    print(f"  zero-gradient instance     ≈{inst:.4f}   (Σ_k P(K=k) N(k, σ²) vs N(0, σ²): dp_accounting's "
          f"pessimistic PLD, an estimate; {inst_time:.0f} s)")


if __name__ == "__main__":
    truncated()
    if "--instance" in sys.argv:
        displacement_instance()
    with_replacement()
