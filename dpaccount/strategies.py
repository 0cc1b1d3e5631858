"""Strategy (encoder) matrices of matrix mechanisms, dense or structured.

A matrix mechanism (Denisov, McMahan, Rush, Smith & Thakurta 2022; Choquette-Choo,
McMahan, Rush & Thakurta 2023, "Multi-epoch matrix factorization") releases
C·G + Z over n rounds: G holds the n clipped per-round contributions, C is the
*strategy* (encoder) with n columns, Z is Gaussian noise. Privacy depends on C
only through the columns a record can touch (``mechanisms/matrix_sensitivity.py``).

Constructors (each returns an immutable ``Strategy``; the structured ones never
hold an n × n matrix):

* ``dense(matrix)``: any square lower-triangular C (n up to a few thousand).
* ``toeplitz(coeffs, n)``: lower-triangular Toeplitz, C[i, j] = c_{i−j} for
  i ≥ j (c_t = 0 for t ≥ len(coeffs)); banded with len(coeffs) bands.
* ``blt(buf_decay, output_scale, n)``: a buffered linear Toeplitz C
  (McMahan, Dvijotham, Choquette-Choo et al. 2024, arXiv 2404.16706;
  jax_privacy's ``BufferedToeplitz``): c_0 = 1, c_t = Σ_j s_j d_j^{t−1}.
* ``prefix(n)``: the all-ones lower triangle (noise on every prefix sum).
* ``identity(n)``: C = I (DP-SGD: independent noise each round).
* ``tree(n, restart_every=None)``: DP-FTRL's binary tree (Kairouz et al. 2021): one
  row per completed dyadic node [m2ʲ, (m + 1)2ʲ) ⊆ [0, n), with ones on its rounds;
  with ``restart_every`` T, a fresh tree over each block of T rounds.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import validation as v

DENSE_LIMIT = 5000  # the largest n for which a structured strategy is materialised (n² floats)


def _vector(name: str, values: Any) -> np.ndarray:
    """A 1-d array of finite floats, or TypeError/ValueError naming ``name``."""
    if isinstance(values, (str, bytes)) or np.ndim(values) != 1:
        raise TypeError(f"{name} must be a list of numbers, got {values!r}")
    try:
        arr = np.array(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a list of numbers, got {values!r}") from exc
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        raise ValueError(f"{name} must be finite, got {name}[{bad[0]}] = {float(arr[bad[0]])!r}")
    arr.setflags(write=False)
    return arr


class Strategy:
    """An encoder of n columns (one per round). Immutable; equal by kind and parameters."""

    kind = "strategy"
    n: int

    def _key(self) -> tuple:
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._key()))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def _set(self, **values: Any) -> None:
        for key, val in values.items():
            object.__setattr__(self, key, val)

    @property
    def bands(self) -> int | None:
        """The number of non-zero bands of a square lower-triangular C (the diagonal
        counts one): C[i, j] = 0 for i − j ≥ bands. None for a non-square encoder."""
        raise NotImplementedError

    def column_norms_squared(self) -> np.ndarray:
        """‖C[:, j]‖² for every round j."""
        raise NotImplementedError

    def to_dense(self) -> np.ndarray:
        """The encoder as a (rows × n) array; refused above ``DENSE_LIMIT`` rounds."""
        raise NotImplementedError

    def to_spec(self) -> dict:
        """The strategy as a dict of JSON values (``strategy_from_spec`` inverts it)."""
        raise NotImplementedError

    def _check_dense(self) -> None:
        if self.n > DENSE_LIMIT:
            raise ValueError(f"a {self.kind} strategy of n={self.n} rounds is not materialised "
                             f"(limit {DENSE_LIMIT}): use its structured methods")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.to_spec()!r})"


class DenseStrategy(Strategy):
    """A square lower-triangular C given as an array."""

    kind = "dense"
    matrix: np.ndarray

    def __init__(self, matrix: Any) -> None:
        if isinstance(matrix, (str, bytes)):
            raise TypeError(f"strategy must be a square matrix of numbers, got {matrix!r}")
        try:
            c = np.array(matrix, dtype=float)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"strategy must be a square matrix of numbers, got {matrix!r}") from exc
        if c.ndim != 2 or c.shape[0] != c.shape[1] or c.shape[0] == 0:
            raise ValueError(f"strategy must be a non-empty square matrix, got shape {c.shape}")
        bad = np.argwhere(~np.isfinite(c))
        if bad.size:
            i, j = bad[0]
            raise ValueError(f"strategy must be finite, got strategy[{i}, {j}] = {float(c[i, j])!r}")
        upper = np.argwhere(np.triu(c, 1) != 0)
        if upper.size:
            i, j = upper[0]
            raise ValueError(f"strategy must be lower triangular, got strategy[{i}, {j}] = {float(c[i, j])!r} "
                             f"above the diagonal")
        c.setflags(write=False)
        self._set(matrix=c, n=int(c.shape[0]))

    def _key(self) -> tuple:
        return (self.matrix.shape, self.matrix.tobytes())

    @property
    def bands(self) -> int:
        rows, cols = np.nonzero(self.matrix)
        return int(np.max(rows - cols)) + 1 if rows.size else 1

    def column_norms_squared(self) -> np.ndarray:
        return np.einsum("ij,ij->j", self.matrix, self.matrix)

    def to_dense(self) -> np.ndarray:
        return self.matrix

    def to_spec(self) -> dict:
        return {"kind": "dense", "matrix": self.matrix.tolist()}


class ToeplitzStrategy(Strategy):
    """Lower-triangular Toeplitz C[i, j] = c_{i−j} (i ≥ j), c_t = 0 beyond the coefficients.
    ``kind`` and ``spec`` record the constructor that made it (``blt``, ``prefix``, …)."""

    kind = "toeplitz"
    coeffs: np.ndarray
    _spec: dict

    def __init__(self, coeffs: Any, n: int, kind: str = "toeplitz", spec: dict | None = None) -> None:
        n = v.count("n", n)
        c = _vector("coeffs", coeffs)
        if c.size == 0 or c.size > n:
            raise ValueError(f"coeffs must hold 1 to n={n} coefficients, got {c.size}")
        nonzero = np.flatnonzero(c)
        if nonzero.size == 0:
            raise ValueError(f"coeffs must not all be zero, got {coeffs!r}")
        c = c[:nonzero[-1] + 1]  # trailing zeros are no bands
        c.setflags(write=False)
        self._set(coeffs=c, n=n, kind=kind, _spec=spec or {"kind": "toeplitz", "coeffs": c.tolist(), "n": n})

    def _key(self) -> tuple:
        return (self.n, self.coeffs.tobytes())

    @property
    def bands(self) -> int:
        return int(self.coeffs.size)

    def column_norms_squared(self) -> np.ndarray:
        # column j holds c_0 … c_{n−1−j}: the prefix sums of c², read backwards
        sq = np.zeros(self.n)
        sq[:self.coeffs.size] = self.coeffs ** 2
        return np.cumsum(sq)[::-1].copy()

    def is_nonnegative_nonincreasing(self) -> bool:
        """c_0 ≥ c_1 ≥ … ≥ 0 (the zeros after the coefficients included)."""
        c = self.coeffs
        return bool(c[-1] >= 0 and np.all(np.diff(c) <= 0))

    def to_dense(self) -> np.ndarray:
        self._check_dense()
        idx = np.arange(self.n)
        lag = idx[:, None] - idx[None, :]
        padded = np.concatenate([self.coeffs, np.zeros(self.n)])
        return np.where(lag >= 0, padded[np.clip(lag, 0, None)], 0.0)

    def to_spec(self) -> dict:
        return dict(self._spec)


class TreeStrategy(Strategy):
    """DP-FTRL's tree: a row per completed dyadic node of [0, n) (module docstring); with
    ``restart_every`` T, a fresh tree over each block of T rounds (T divides n)."""

    kind = "tree"
    restart_every: int

    def __init__(self, n: int, restart_every: int | None = None) -> None:
        n = v.count("n", n)
        block = n if restart_every is None else v.count("restart_every", restart_every)
        if n % block:
            raise ValueError(f"restart_every={restart_every!r} must divide n={n}")
        self._set(n=n, restart_every=block)

    def _key(self) -> tuple:
        return (self.n, self.restart_every)

    @property
    def bands(self) -> None:
        return None

    @property
    def depth(self) -> int:
        """⌈log₂(T + 1)⌉: the completed nodes holding the first round of a tree of T rounds
        (the most of any round)."""
        return int(self.restart_every).bit_length()

    def column_norms_squared(self) -> np.ndarray:
        j = np.arange(self.n) % self.restart_every
        return np.sum([((((j >> lv) + 1) << lv) <= self.restart_every) for lv in range(self.depth)],
                      axis=0, dtype=float)

    def to_dense(self) -> np.ndarray:
        self._check_dense()
        rows, t = [], self.restart_every
        for start in range(0, self.n, t):
            for lv in range(self.depth):
                width = 2 ** lv
                for m in range(t // width):
                    row = np.zeros(self.n)
                    row[start + m * width:start + (m + 1) * width] = 1.0
                    rows.append(row)
        return np.array(rows)

    def to_spec(self) -> dict:
        spec = {"kind": "tree", "n": self.n}
        return spec if self.restart_every == self.n else {**spec, "restart_every": self.restart_every}


def dense(matrix: Any) -> DenseStrategy:
    """A square lower-triangular strategy given as a matrix (module docstring)."""
    return DenseStrategy(matrix)


def toeplitz(coeffs: Any, n: int) -> ToeplitzStrategy:
    """Lower-triangular Toeplitz C[i, j] = coeffs[i − j] over n rounds."""
    return ToeplitzStrategy(coeffs, n)


def blt(buf_decay: Any, output_scale: Any, n: int) -> ToeplitzStrategy:
    """The buffered linear Toeplitz C of jax_privacy's ``BufferedToeplitz``:
    c_0 = 1, c_t = Σ_j output_scale[j]·buf_decay[j]^{t−1} for t ≥ 1 (arXiv 2404.16706)."""
    n = v.count("n", n)
    d, s = _vector("buf_decay", buf_decay), _vector("output_scale", output_scale)
    if d.size != s.size:
        raise ValueError(f"buf_decay and output_scale must have one length, got {d.size} and {s.size}")
    t = np.arange(max(n - 1, 0), dtype=float)
    with np.errstate(over="raise", invalid="raise"):
        try:
            tail = (s[None, :] * np.power(d[None, :], t[:, None])).sum(axis=1) if d.size else np.zeros(t.size)
        except FloatingPointError as exc:
            raise ValueError(f"buf_decay={d.tolist()!r} overflows over n={n} rounds") from exc
    coeffs = np.concatenate([[1.0], tail])
    spec = {"kind": "blt", "buf_decay": d.tolist(), "output_scale": s.tolist(), "n": n}
    return ToeplitzStrategy(coeffs, n, kind="blt", spec=spec)


def prefix(n: int) -> ToeplitzStrategy:
    """The all-ones lower triangle over n rounds."""
    n = v.count("n", n)
    return ToeplitzStrategy(np.ones(n), n, kind="prefix", spec={"kind": "prefix", "n": n})


def identity(n: int) -> ToeplitzStrategy:
    """C = I over n rounds (DP-SGD)."""
    n = v.count("n", n)
    return ToeplitzStrategy([1.0], n, kind="identity", spec={"kind": "identity", "n": n})


def tree(n: int, restart_every: int | None = None) -> TreeStrategy:
    """DP-FTRL's binary tree over n rounds, restarted every ``restart_every`` rounds if given."""
    return TreeStrategy(n, restart_every)


def strategy_from_spec(spec: Any) -> Strategy:
    """The strategy a ``Strategy.to_spec()`` dict describes; ValueError naming what is wrong."""
    if not isinstance(spec, dict) or "kind" not in spec:
        raise ValueError(f"strategy must be a dict with a 'kind', got {spec!r}")
    args = {k: val for k, val in spec.items() if k != "kind"}
    makers: dict[str, Callable[..., Strategy]] = {"dense": dense, "toeplitz": toeplitz, "blt": blt, "prefix": prefix, "identity": identity,
              "tree": tree}
    maker = makers.get(spec["kind"])
    if maker is None:
        raise ValueError(f"strategy kind must be one of {sorted(makers)}, got {spec['kind']!r}")
    try:
        return maker(**args)
    except TypeError as exc:
        if "argument" in str(exc):
            raise ValueError(f"strategy {spec['kind']!r} got arguments {sorted(args)}: {exc}") from exc
        raise


def parse_strategy(text: str, n: int) -> Strategy:
    """A strategy from a command-line word: ``toeplitz:1,0.5,0.25``, ``blt:decays;scales``,
    ``prefix``, ``identity`` or ``tree``, over n rounds."""
    kind, _, rest = text.partition(":")

    def numbers(part: str) -> list[float]:
        try:
            return [float(x) for x in part.split(",") if x.strip()]
        except ValueError as exc:
            raise ValueError(f"strategy {text!r}: {exc}") from exc
    if kind == "toeplitz":
        return toeplitz(numbers(rest), n)
    if kind == "blt":
        decays, _, scales = rest.partition(";")
        return blt(numbers(decays), numbers(scales), n)
    plain: dict[str, Callable[[int], Strategy]] = {"prefix": prefix, "identity": identity, "tree": tree}
    if kind in plain and not rest:
        return plain[kind](n)
    raise ValueError(f"strategy must be toeplitz:c0,c1,…, blt:d1,…;s1,…, prefix, identity or tree, "
                     f"got {text!r}")


__all__ = ["Strategy", "DenseStrategy", "ToeplitzStrategy", "TreeStrategy", "dense", "toeplitz", "blt",
           "prefix", "identity", "tree", "strategy_from_spec", "parse_strategy", "DENSE_LIMIT"]
