"""Banded matrix factorization (BandMF) accounted with mixtures of Gaussians.

The mechanism. Steps t = 1..T release the rows of Cx + z: x_t is the sum of
the clipped gradients (norm ≤ 1) of step t's batch, z_t ~ N(0, σ²I) fresh,
and C is lower triangular and b-banded (C[t, j] = 0 unless 0 ≤ t − j < b);
the model update is a post-processing of the released rows (Choquette-Choo,
Ganesh, McKenna, McMahan, Rush, Thakurta & Xu, "(Amplified) Banded Matrix
Factorization", NeurIPS 2023, arXiv 2306.08153). Here C is Toeplitz with the
coefficients of (1 − x)^(−1/2) cut after b terms (banded square root).

The assumptions (printed below):
* participation — cyclic Poisson sampling: the records are split into b
  groups before training, independently of the data; step t uses group
  t mod b only, each of its records independently with probability p. A
  record's steps are therefore ≡ r (mod b): any two are b or more apart
  (b-min-separation), at most ⌈T/b⌉ of them.
* sensitivity per band — the record's gradient at its step j enters column j
  of C only, rows j..j+b−1: a shift of norm ≤ ‖C[:, j]‖ on those rows.
* add/remove neighbours; the gradients may be chosen adaptively.

Why it is a composition of mixtures of Gaussians. The paper's amplification
theorem for b-banded C under cyclic Poisson sampling proves the reduction at
the largest column norm; we did not have its text at hand to quote the
theorem's number, so the argument is given here in full and rests only on
Zhu, Dong & Wang 2022 (Thm 10: dominating pairs compose adaptively; Thm 11:
the Poisson-subsampled pair). The record's eligible steps
j₁ < j₂ < … are b or more apart, so the row blocks [jᵢ, jᵢ + b) are disjoint,
and a row outside every block does not depend on the record. Within block i,
row t is C[t, jᵢ]·Bᵢ·g + (the other records' terms, functions of rows < t)
+ z_t, where Bᵢ ~ Bernoulli(p) and g (norm ≤ 1) is chosen from the rows
before jᵢ. Subtracting the known terms row by row (a map of the block
that is invertible given the past), the block is the Gaussian vector
N(Bᵢ·C[block, jᵢ]g, σ²I), whose privacy loss is one-dimensional along
C[block, jᵢ]g: the pair (N(0, σ²), (1 − p)N(0, σ²) + pN(cᵢ, σ²)) with
cᵢ = ‖C[:, jᵢ]‖ worst — ``MixtureOfGaussiansMechanism(σ, [0, cᵢ], [1 − p, p])``,
which *is* the Poisson-subsampled Gaussian (ZDW22, Thm 11). Adaptive
composition of these dominating pairs over the blocks bounds the whole
release (ZDW22, Thm 10). A smaller cᵢ is a post-processing of a larger
one, so every group is dominated by ⌈T/b⌉ uses at max_j ‖C[:, j]‖: the
paper's DP-SGD-like reduction. Per column is tighter where the last columns
are cut short by the end of training.

Where a mixture of *more* than two Gaussians would enter. Without
min-separation (a record may be sampled at any step), row t holds
C[t, t−1]B_{t−1} + C[t, t]B_t + …: a mixture over which of the last b steps
sampled the record. The rows are not independent given the past, so the
per-row mixture Σ pᵢ N(cᵢ, σ²) bounds the release only with the
*conditional* probabilities of Choquette-Choo, Ganesh, Steinke & Thakurta
("Privacy Amplification for Matrix Mechanisms", ICLR 2024, arXiv 2310.15526:
MMCC's conditional composition), inflated by tail bounds on the earlier rows'
losses. That needs their tail-bound machinery, which dpaccount does not
implement; this example uses the reduction above, which is exact and needs
none of it.
"""
import math

from dpaccount import Composition, GaussianMechanism, MixtureOfGaussiansMechanism, PoissonSampling

n, bands, steps, sigma, delta = 60_000, 8, 2_004, 2.0, 1e-5
p = 256 / (n // bands)  # expected batch 256 from a group of n/b records

coef = [math.comb(2 * i, i) / 4 ** i for i in range(bands)]  # (1 − x)^(−1/2), cut after b terms


def column_norm(j):
    """‖C[:, j]‖ of the T×T Toeplitz b-banded C (column j = 0..T−1, cut at row T)."""
    return math.sqrt(math.fsum(c * c for c in coef[:min(bands, steps - j)]))


def group_norms(r):
    """The column norms of group r's eligible steps j ≡ r (mod b), as (norm, count) pairs."""
    norms = [column_norm(j) for j in range(r, steps, bands)]
    return tuple(sorted((c, norms.count(c)) for c in set(norms)))


def release(norms):
    """One mixture of Gaussians per eligible step: Bernoulli(p) times a shift of norm ‖C[:, j]‖."""
    uses = [MixtureOfGaussiansMechanism(sigma, [0.0, c], [1 - p, p]) for c, _ in norms]
    return Composition()(uses, [k for _, k in norms])


groups = {group_norms(r) for r in range(bands)}  # groups with equal norms release alike
per_column = max(release(norms).get_approxDP(delta) for norms in groups)
widest = max(column_norm(j) for j in range(steps))
reduction = Composition()([MixtureOfGaussiansMechanism(sigma, [0.0, widest], [1 - p, p])],
                          [math.ceil(steps / bands)]).get_approxDP(delta)
dpsgd = Composition()([PoissonSampling()(GaussianMechanism(sigma), 256 / n)], [steps]).get_approxDP(delta)

print("assumptions:")
print(f"  C: {steps} x {steps}, lower triangular, {bands}-banded Toeplitz (banded square root), "
      f"max column norm {widest:.4f}")
print(f"  participation: cyclic Poisson sampling, {bands} groups of {n // bands}, p = {p:.5f} per eligible step;")
print(f"    a record's steps are {bands} or more apart, at most {math.ceil(steps / bands)} of them")
print(f"  sensitivity per band: a record's step j shifts rows j..j+{bands - 1} by at most ||C[:, j]||")
print(f"  noise: z ~ N(0, {sigma}^2) per row; add/remove neighbours; delta = {delta}")
print("certified epsilon (PLD, an upper bound):")
print(f"  BandMF, a mixture of Gaussians per column (worst group) : {per_column:.4f}")
print(f"  BandMF, every column at the max norm (the reduction)    : {reduction:.4f}")
print(f"  DP-SGD at the same sigma, rate 256/{n}, {steps} steps   : {dpsgd:.4f}")
print(f"  (at one sigma BandMF's epsilon is the higher: {math.ceil(steps / bands)} uses at rate {p:.4f} amplify less than")
print(f"   {steps} at {256 / n:.4f}, and its columns have norm > 1; it wins on error at equal epsilon)")
