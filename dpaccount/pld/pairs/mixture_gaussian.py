"""The dominating pair of a mixture of Gaussians (Choquette-Choo et al. 2023).

``MixtureOfGaussiansMechanism(sigma, sensitivities, probs)`` outputs
Q = N(0, σ²) without the record and P = Σᵢ pᵢ N(cᵢ, σ²) with it (the shift cᵢ
drawn with probability pᵢ): the building block of amplified banded
matrix-factorization accounting (Choquette-Choo, Ganesh, McKenna, McMahan,
Rush, Thakurta & Xu 2023, "(Amplified) Banded Matrix Factorization",
arXiv 2306.08153, §4; dp_accounting's ``MixtureOfGaussiansDpEvent``).
With cᵢ ≥ 0 the privacy loss

    ℓ(x) = log Σᵢ pᵢ exp((cᵢ x − cᵢ²/2)/σ²)

is a log-sum-exp of increasing affine functions, so it increases strictly in
x (some cᵢ > 0), and the pair is a monotone-loss pair
(``monotone_loss.MonotoneLossPair``): {L > e} = {x > x_e}, every cell a
difference of the mixture's distribution functions

    log F(x) = logsumexp_i(log pᵢ + log Φ((x − cᵢ)/σ)),
    log(1 − F(x)) = logsumexp_i(log pᵢ + log Φ((cᵢ − x)/σ)).

Each log Φ errs by ulps of |log Φ| (``log_ndtr``), and a term whose log Φ is
far below the result's enters it with a weight e^{log Φᵢ − log F}, so the
result errs by ulps of |log F| + 1 and a few more for the log-sum-exp: within
the ``LOG_CDF_ULPS`` that ``MonotoneLossPair`` allows a law.
The add direction is the reverse pair (Q, P) (``MonotoneLossPair.reverse``).
"""
import numpy as np

from ...lazy import lazy
from .monotone_loss import MonotoneLossPair

special = lazy("scipy.special")

_TINY = 1e-300  # the support's bracket: the laws' 1e-300 quantiles, as MonotoneLossPair takes them


def logsumexp_rows(terms):
    """log Σ_rows e^{terms} per column, the largest term out (as scipy's ``logsumexp``,
    without its generality: 3–4× faster on a few rows); −inf where every term is."""
    top = terms.max(axis=0)
    shift = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return shift + np.log(np.exp(terms - shift).sum(axis=0))


class GaussianMixtureLaw:
    """Σᵢ pᵢ N(cᵢ, σ²) with the methods ``MonotoneLossPair`` asks of a law."""

    def __init__(self, sigma, centers, probs):
        self.sigma = float(sigma)
        self.centers = np.asarray(centers, dtype=float)
        self.log_probs = np.log(np.asarray(probs, dtype=float))

    def key(self):
        return ("gaussian-mixture", self.sigma, tuple(self.centers), tuple(self.log_probs))

    def _lse(self, terms):
        return logsumexp_rows(terms + self.log_probs[:, None])

    def _z(self, x):
        return (np.atleast_1d(np.asarray(x, dtype=float))[None, :] - self.centers[:, None]) / self.sigma

    def logpdf(self, x):
        z = self._z(x)
        out = self._lse(-0.5 * z * z) - np.log(self.sigma) - 0.5 * np.log(2 * np.pi)
        return out.reshape(np.shape(x))

    def logcdf(self, x):
        return self._lse(special.log_ndtr(self._z(x))).reshape(np.shape(x))

    def logsf(self, x):
        return self._lse(special.log_ndtr(-self._z(x))).reshape(np.shape(x))

    def ppf(self, u):
        # the 1e-300 quantile lies above the lowest component's (each component's cdf is at
        # most the lowest one's there): the bracket is that component's quantile
        return float(self.centers.min() + self.sigma * special.ndtri(u))

    def isf(self, u):
        return float(self.centers.max() - self.sigma * special.ndtri(u))


class MixtureOfGaussiansPair(MonotoneLossPair):
    """(Σᵢ pᵢ N(cᵢ, σ²), N(0, σ²)), cᵢ ≥ 0 (module docstring). ``centers`` and
    ``probs`` as the mechanism validated them (probabilities > 0, summing to 1)."""

    def __init__(self, sigma, centers, probs):
        self._sigma2 = float(sigma) ** 2
        self._centers = np.asarray(centers, dtype=float)
        self._log_probs = np.log(np.asarray(probs, dtype=float))
        super().__init__(GaussianMixtureLaw(sigma, centers, probs), GaussianMixtureLaw(sigma, [0.0], [1.0]))

    def _terms(self, x):
        """log pᵢ + (cᵢx − cᵢ²/2)/σ², one row per component (x finite)."""
        return ((self._centers[:, None] * x[None, :] - 0.5 * self._centers[:, None] ** 2) / self._sigma2
                + self._log_probs[:, None])

    def _loss(self, x):
        # ℓ(x) directly (not log p − log q, whose two −x²/2σ² cancel with ulps of x²/σ² lost);
        x = np.asarray(x, dtype=float)
        return logsumexp_rows(self._terms(x.ravel())).reshape(x.shape)

    def _root_guess(self, e):
        """Newton's steps on ℓ(x) = e from x₀ = minᵢ xᵢ (cᵢ > 0), xᵢ where the i-th term alone
        is e: ℓ(x₀) ≥ e, and ℓ is convex and increasing (a log-sum-exp of increasing affine
        functions), so the steps fall monotonically to the root; ``_roots`` checks the result."""
        pos = self._centers > 0
        c, lp = self._centers[pos, None], self._log_probs[pos, None]
        x = np.min((e[None, :] - lp + 0.5 * c * c / self._sigma2) * self._sigma2 / c, axis=0)
        x = np.clip(x, self._lo, self._hi)
        for _ in range(12):
            terms = self._terms(x)
            top = terms.max(axis=0)
            weights = np.exp(terms - top)
            total = weights.sum(axis=0)
            slope = (weights * self._centers[:, None]).sum(axis=0) / (total * self._sigma2)
            step = (top + np.log(total) - e) / slope
            x = x - step
            if np.all(np.abs(step) <= 1e-14 * (1.0 + np.abs(x))):
                break
        return x

    def key(self):
        return ("mixture-of-gaussians", self._p.key())
