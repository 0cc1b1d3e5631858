"""The mechanism the command line describes: ``--mechanism`` and its
parameters, then a batch scheme (``--batch-scheme``; ``--q`` alone is
Poisson sampling) and ``--steps`` (composition); or a spec file (``--spec``,
``specs.py``), which the batch scheme and ``--steps`` may wrap. Also the
``--grid NAME=V1,V2`` of ``sweep``."""
import argparse
import sys

from ..mechanisms.discrete import DiscreteGaussianMechanism, DiscreteLaplaceMechanism
from ..mechanisms.standard import (BinomialMechanism, GaussianMechanism, GDPMechanism, LaplaceMechanism,
                                   RandomizedResponse)
from ..mechanisms.matrix import MatrixMechanism, Participation
from ..mechanisms.training import TreeAggregation, ZCDPMechanism
from ..relations import ADD_REMOVE, REPLACE_ONE
from ..specs import load
from ..strategies import parse_strategy
from ..transformers.balls_in_bins import BallsInBinsSampling
from ..transformers.cyclic_poisson import CyclicPoissonSampling
from ..transformers.composition import Composition
from ..transformers.poisson_sampling import PoissonSampling
from ..transformers.random_allocation import RandomAllocation
from ..transformers.subset_sampling import SubsetSampling
from ..transformers.truncated_poisson import TruncatedPoissonSampling
from ..transformers.with_replacement import SamplingWithReplacement
from .output import UsageError

# --mechanism NAME: (required flags, optional flags, factory of the flags' values and the relation)
MECHANISMS = {
    "gaussian": (("sigma",), ("sensitivity",), lambda a, r: GaussianMechanism(a["sigma"], a["sensitivity"] or 1.0, r)),
    "subsampled-gaussian": (("sigma", "q"), ("sensitivity",),
                            lambda a, r: GaussianMechanism(a["sigma"], a["sensitivity"] or 1.0, r)),
    "gdp": (("mu",), (), lambda a, r: GDPMechanism(a["mu"], r)),
    "laplace": (("b",), ("sensitivity",), lambda a, r: LaplaceMechanism(a["b"], a["sensitivity"] or 1.0, r)),
    "randomized-response": (("p",), (), lambda a, r: RandomizedResponse(a["p"], r)),
    "binomial": (("n", "p"), ("sensitivity",),
                 lambda a, r: BinomialMechanism(a["n"], a["p"], a["sensitivity"] or 1, relation=r)),
    "discrete-gaussian": (("sigma",), ("sensitivity",),
                          lambda a, r: DiscreteGaussianMechanism(a["sigma"], a["sensitivity"] or 1, relation=r)),
    "discrete-laplace": (("t",), ("sensitivity",),
                         lambda a, r: DiscreteLaplaceMechanism(a["t"], a["sensitivity"] or 1, relation=r)),
    "zcdp": (("rho",), ("xi",), lambda a, r: ZCDPMechanism(a["rho"], a["xi"] or 0.0, relation=r)),
    "tree-aggregation": (("sigma", "n"), ("epochs",),
                         lambda a, r: TreeAggregation(a["sigma"], a["n"], a["epochs"] or 1, relation=r)),
    "matrix": (("sigma", "n", "strategy"), ("epochs", "min_separation", "participations"),
               lambda a, r: MatrixMechanism(parse_strategy(a["strategy"], a["n"]), a["sigma"], _participation(a), r)),
}
# the flags a mechanism may take (mixtures of Gaussians and repeat-and-select: --spec)
PARAMETERS = ("sigma", "sensitivity", "mu", "b", "p", "n", "t", "rho", "xi", "epochs", "strategy", "min_separation",
              "participations")
# --batch-scheme NAME: (its flags, the neighbours it amplifies, factory of the flags' values and the step)
BATCH_SCHEMES = {
    "poisson": (("q",), ADD_REMOVE, lambda a, m: PoissonSampling()(m, a["q"])),
    "truncated-poisson": (("q", "dataset_size", "max_batch_size"), ADD_REMOVE,
                          lambda a, m: TruncatedPoissonSampling()(m, a["q"], a["dataset_size"], a["max_batch_size"])),
    "without-replacement": (("batch_size", "dataset_size"), REPLACE_ONE,
                            lambda a, m: SubsetSampling()(m, _fraction(a["batch_size"], a["dataset_size"]))),
    "with-replacement": (("batch_size", "dataset_size"), REPLACE_ONE,
                         lambda a, m: SamplingWithReplacement()(m, a["dataset_size"], a["batch_size"])),
    "random-allocation": (("batch_size", "dataset_size"), ADD_REMOVE,   # one epoch; --steps counts epochs
                          lambda a, m: RandomAllocation()(m, _epoch_steps(a["batch_size"], a["dataset_size"]))),
    # --mechanism matrix only: the groups are its participation's separation (transformers/cyclic_poisson.py)
    "cyclic-poisson": (("q",), ADD_REMOVE, lambda a, m: CyclicPoissonSampling()(m, a["q"])),
    "cyclic-truncated-poisson": (("q", "dataset_size", "max_batch_size"), ADD_REMOVE,
                                 lambda a, m: CyclicPoissonSampling()(m, a["q"], a["dataset_size"],
                                                                      a["max_batch_size"])),
    # a diagonal strategy: each epoch of b rounds (its separation) places a record in one round
    "balls-in-bins": ((), ADD_REMOVE, lambda a, m: BallsInBinsSampling()(m)),
}
MATRIX_SCHEMES = ("cyclic-poisson", "cyclic-truncated-poisson", "balls-in-bins")
SCHEME_FLAGS = ("dataset_size", "batch_size", "max_batch_size")
WRAPPERS = ("q", "steps") + SCHEME_FLAGS                        # the batch scheme, then composition


def number(text):
    """An int where the text is one, else a float (argparse ``type=``)."""
    try:
        return float(text) if any(c in text for c in ".eE") or text.strip() in ("inf", "nan") else int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None


def mechanism_from(args, **override):
    """The mechanism the flags (or ``--spec``) describe; ``override``: flag values to use instead."""
    values = {key: getattr(args, key, None) for key in PARAMETERS + WRAPPERS}
    values.update(override)
    if args.spec is not None:
        given = [f"--{k}" for k in PARAMETERS if values[k] is not None]
        if given or args.relation is not None:
            raise UsageError(f"{', '.join(given) or '--relation'} cannot be combined with --spec "
                             f"(the spec describes the mechanism; --q and --steps may wrap it)")
        m = _read_spec(args.spec)
    else:
        required, optional, factory = MECHANISMS[args.mechanism]
        missing = [f"--{k}" for k in required if values[k] is None]
        if missing:
            raise UsageError(f"--mechanism {args.mechanism} needs {' and '.join(missing)}")
        stray = [f"--{k}" for k in PARAMETERS if values[k] is not None and k not in required + optional]
        if stray:
            raise UsageError(f"{', '.join(stray)} does not apply to --mechanism {args.mechanism} "
                             f"(it takes {', '.join('--' + k for k in required + optional)})")
        m = factory(values, args.relation)
    scheme = getattr(args, "batch_scheme", None)
    matrix = isinstance(m, MatrixMechanism)
    if matrix and scheme is None and values["q"] is not None:
        scheme = "cyclic-poisson"  # the one amplification a matrix mechanism has
    if scheme is not None and (scheme in MATRIX_SCHEMES) != matrix:
        raise UsageError(f"--batch-scheme {scheme} applies to --mechanism matrix only" if not matrix else
                         f"--batch-scheme {scheme} does not apply to a matrix mechanism (cyclic-poisson, "
                         f"cyclic-truncated-poisson or balls-in-bins do)")
    if scheme not in (None, "poisson") and args.spec is None and args.mechanism == "subsampled-gaussian":
        raise UsageError(f"--mechanism subsampled-gaussian is Poisson sampling; with --batch-scheme {scheme} "
                         f"take --mechanism gaussian")
    m = _batch_scheme(scheme, values, m)
    if values["steps"] is not None and values["steps"] != 1:
        m = Composition()([m], [values["steps"]])
    return m


def _participation(a):
    """--epochs k: fixed epochs; --min-separation b [--participations k]; neither: one round."""
    if a["epochs"] is not None and (a["min_separation"] is not None or a["participations"] is not None):
        raise UsageError("--epochs (fixed epochs) cannot be combined with --min-separation / --participations")
    if a["epochs"] is not None:
        return Participation.fixed_epochs(a["epochs"])
    if a["min_separation"] is not None:
        return Participation.min_separation(a["min_separation"], a["participations"])
    if a["participations"] is not None:
        raise UsageError("--participations needs --min-separation")
    return Participation.single()


def _flag(key):
    return "--" + key.replace("_", "-")


def _fraction(b, n):
    if not (isinstance(b, int) and isinstance(n, int) and 0 < b <= n):
        raise UsageError(f"--batch-size must be a whole number in [1, --dataset-size = {n}], got {b}")
    return b / n


def _epoch_steps(b, n):
    _fraction(b, n)
    return -(-n // b)


def _batch_scheme(scheme, values, m):
    """``m`` sampled by the batch scheme the flags name (``--q`` alone: Poisson sampling)."""
    named = f"--batch-scheme {scheme}"
    if scheme is None:
        if values["q"] is None:
            stray = [_flag(k) for k in SCHEME_FLAGS if values[k] is not None]
            if stray:
                raise UsageError(f"{', '.join(stray)} needs --batch-scheme (one of {', '.join(BATCH_SCHEMES)})")
            return m
        scheme, named = "poisson", "--q (Poisson sampling)"
    required, relation, factory = BATCH_SCHEMES[scheme]
    missing = [_flag(k) for k in required if values[k] is None]
    if missing:
        raise UsageError(f"{named} needs {' and '.join(missing)}")
    stray = [_flag(k) for k in ("q",) + SCHEME_FLAGS if values[k] is not None and k not in required]
    if stray:
        raise UsageError(f"{', '.join(stray)} does not apply to {named} "
                         f"(it takes {', '.join(_flag(k) for k in required) or 'none of them'})")
    if m.relation != relation:
        hint = ("--relation replace-one" if relation == REPLACE_ONE else
                "for replace-one, --batch-scheme without-replacement or with-replacement")
        raise UsageError(f"{named} amplifies {relation} guarantees; the mechanism is about "
                         f"{m.relation} neighbours ({hint})")
    return factory(values, m)


def _read_spec(path):
    try:
        if path == "-":
            return load(sys.stdin)
        return load(path)
    except OSError as exc:
        raise UsageError(f"cannot read spec {path!r}: {exc.strerror or exc}") from None


class FlagMechanism:
    """``make`` of a sweep over flags: the flags with the point's values (picklable)."""

    def __init__(self, args):
        self.args = argparse.Namespace(**{k: getattr(args, k, None) for k in
                                          ("spec", "mechanism", "relation", "batch_scheme") + PARAMETERS +
                                          WRAPPERS})

    def __call__(self, **point):
        return mechanism_from(self.args, **point)


def parse_grid(items):
    """``["sigma=0.8,1.0", "steps=100"]`` -> {"sigma": [0.8, 1.0], "steps": [100]}."""
    grid = {}
    for item in items:
        name, sep, values = item.partition("=")
        name = name.strip().lstrip("-").replace("-", "_")
        if not sep or name not in PARAMETERS + WRAPPERS:
            raise UsageError(f"--grid expects NAME=V1,V2,... with NAME among {', '.join(PARAMETERS + WRAPPERS)}, "
                             f"got {item!r}")
        if name in grid:
            raise UsageError(f"--grid {name} given twice")
        try:
            grid[name] = [number(x.strip()) for x in values.split(",")]
        except argparse.ArgumentTypeError as exc:
            raise UsageError(f"--grid {name}: {exc}") from None
    return grid
