"""The ``dpaccount`` command: the library's queries from a shell.

    dpaccount epsilon --mechanism subsampled-gaussian --sigma 1.1 --q 0.0042667 --steps 14063 --delta 1e-5
    dpaccount delta --spec released.json --eps 1 2 4 --json
    dpaccount report --mechanism gaussian --sigma 2 --steps 100
    dpaccount calibrate --solve sigma --mechanism subsampled-gaussian --q 0.01 --steps 1000 --eps 2 --delta 1e-5
    dpaccount sweep --mechanism subsampled-gaussian --grid sigma=0.8,1,1.2 --grid q=0.01 --grid steps=100,1000 --delta 1e-5

A mechanism is given by flags (``--mechanism`` and its parameters, then
``--q`` for Poisson sampling and ``--steps`` for composition) or by a spec
file (``--spec``, ``specs.py``). Output is human-readable by default (upper
bounds rounded up, lower bounds down: a printed bound is still a bound) and
JSON with ``--json`` (full precision). Errors are one line on stderr, never a
traceback, with the exit codes of ``EXIT_CODES``; progress goes to stderr.
This module is the user interface: it is the one place that prints.

f-DP subcommands (``fdp``, ``plot``) are added when the f-DP accountant lands
(another issue); ``calibrate`` then gains μ-GDP and trade-off targets.
"""
import argparse
import json
import math
import sys
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

from .calibrate import calibrate, dpsgd_max_sample_rate, dpsgd_max_steps, dpsgd_noise_multiplier
from .errors import DPAccountError
from .mechanisms.discrete import DiscreteGaussianMechanism, DiscreteLaplaceMechanism
from .mechanisms.standard import (BinomialMechanism, GaussianMechanism, GDPMechanism, LaplaceMechanism,
                                  RandomizedResponse)
from .queries import DEFAULT_ACCURACY, METHODS
from .specs import load
from .sweep import SerialExecutor, sweep
from .transformers.composition import Composition
from .transformers.poisson_sampling import PoissonSampling

OK, FAILURE, USAGE, UNANSWERED, INTERRUPTED = 0, 1, 2, 3, 130
EXIT_CODES = """exit codes:
  0    success
  1    internal error (a bug: please report it)
  2    usage error or bad input (unknown flag, out-of-range value, unreadable or invalid spec)
  3    no certified answer: accuracy not reached, grid too large, representation
       unavailable, or no value meets the budget (calibrate)
  130  interrupted"""

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
}
PARAMETERS = ("sigma", "sensitivity", "mu", "b", "p", "n", "t")  # the flags a mechanism may take
WRAPPERS = ("q", "steps")                                       # Poisson sampling, then composition


class UsageError(ValueError):
    """Bad command-line input (exit code 2)."""


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage dump) and exit code 2."""

    def error(self, message):
        raise UsageError(f"{message} (see {self.prog} --help)")


def _number(text):
    try:
        return float(text) if any(c in text for c in ".eE") or text.strip() in ("inf", "nan") else int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None


# -- the mechanism ---------------------------------------------------------------

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
    if values["q"] is not None:
        m = PoissonSampling()(m, values["q"])
    if values["steps"] is not None and values["steps"] != 1:
        m = Composition()([m], [values["steps"]])
    return m


def _read_spec(path):
    try:
        if path == "-":
            return load(sys.stdin)
        return load(path)
    except OSError as exc:
        raise UsageError(f"cannot read spec {path!r}: {exc.strerror or exc}") from None


# -- formatting: a printed bound is still a bound ----------------------------------

def fmt(x, up=True, digits=6):
    """``x`` to ``digits`` significant digits, rounded up (an upper bound) or down."""
    if x is None:
        return "n/a"
    if not math.isfinite(x):
        return str(x)
    if x == 0:
        return "0"
    d = Decimal(x)  # exact
    q = d.quantize(Decimal(1).scaleb(d.adjusted() - digits + 1), rounding=ROUND_CEILING if up else ROUND_FLOOR)
    return f"{q.normalize():g}" if abs(q.adjusted()) < 6 else f"{q.normalize():E}".replace("E+", "e+").replace("E-", "e-")


def _print_table(lines):
    """Rows of cells (the first the header) in aligned columns."""
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    for line in lines:
        print("  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip())


def _print_json(obj):
    print(json.dumps(obj, indent=2, allow_nan=False, default=str))


def _spec_or_none(m):
    try:
        return m.to_spec()
    except TypeError:
        return None


def _method(m, method):
    return method or m.available_methods()[0]


# -- commands -------------------------------------------------------------------

def cmd_query(args, query):
    """``epsilon`` (ε at each δ) and ``delta`` (δ at each ε)."""
    m = mechanism_from(args)
    given, wanted = ("delta", "epsilon") if query == "epsilon" else ("eps", "delta")
    points = getattr(args, given)
    method = _method(m, args.method)
    rows = []
    for x in points:
        if args.bounds:
            fn = m.get_approxDP_bounds if query == "epsilon" else m.get_approx_delta_bounds
            b = fn(x, method=args.method, accuracy=args.accuracy)
            rows.append({given: x, wanted: b.upper, "lower": b.lower, "method": b.method})
        else:
            fn = m.get_approxDP if query == "epsilon" else m.get_approx_delta
            rows.append({given: x, wanted: fn(x, method=args.method, accuracy=args.accuracy), "method": method})
    if args.json:
        return _print_json({"mechanism": m.name, "spec": _spec_or_none(m), "query": query, "results": rows})
    label = {"eps": "epsilon", "delta": "delta", "epsilon": "epsilon"}
    for r in rows:
        at = f"at {label[given]} = {r[given]:g}"
        if args.bounds:
            print(f"{wanted} in [{fmt(r['lower'], up=False)}, {fmt(r[wanted])}] {at}  "
                  f"(certified interval, method {r['method']})")
        else:
            kind = "estimate, not certified" if r["method"] == "cf" else "upper bound"
            print(f"{wanted} = {fmt(r[wanted])} {at}  ({kind}, method {r['method']})")


def cmd_rdp(args):
    m = mechanism_from(args)
    rows = [{"alpha": a, "epsilon": m.get_RDP(a)} for a in args.alpha]
    if args.json:
        return _print_json({"mechanism": m.name, "spec": _spec_or_none(m), "query": "rdp", "results": rows})
    for r in rows:
        print(f"RDP epsilon = {fmt(r['epsilon'])} at alpha = {r['alpha']:g}")


def cmd_report(args):
    """Certified ε at a few δ beside the RDP conversion, labelled."""
    m = mechanism_from(args)
    method = _method(m, None)
    rows = []
    for d in args.deltas:
        row = {"delta": d, "epsilon": None, "lower": None, "rdp": None, "method": method}
        if args.bounds:
            b = m.get_approxDP_bounds(d, accuracy=args.accuracy)
            row.update(epsilon=b.upper, lower=b.lower, method=b.method)
        else:
            row["epsilon"] = m.get_approxDP(d, accuracy=args.accuracy)
        try:
            row["rdp"] = m.get_approxDP(d, method="rdp")
        except DPAccountError:
            pass  # no RDP representation: shown as n/a
        rows.append(row)
    if args.json:
        return _print_json({"mechanism": m.name, "spec": _spec_or_none(m), "query": "report", "results": rows})
    print(f"mechanism: {m.name}")
    head = ["delta", f"epsilon (certified, {method})"] + (["epsilon lower (certified)"] if args.bounds else [])
    head.append("epsilon (RDP)")
    table = [[f"{r['delta']:g}", fmt(r["epsilon"])] + ([fmt(r["lower"], up=False)] if args.bounds else [])
             + [fmt(r["rdp"])] for r in rows]
    _print_table([head] + table)
    print("certified: a rigorous upper bound (lower: a rigorous lower bound); RDP: the moments-accountant "
          "conversion, also an upper bound, looser. CLT estimates come with the f-DP work.")


CALIBRATE = {  # --solve: (default range, privacy loss grows with it, whole number)
    "sigma": ((0.2, 100.0), False, False), "b": ((0.01, 1000.0), False, False),
    "t": ((0.01, 1000.0), False, False), "mu": ((1e-3, 50.0), True, False),
    "steps": ((1, 10 ** 7), True, True), "q": ((1e-6, 1.0), True, False),
}


def cmd_calibrate(args, progress):
    lo, hi = args.range if args.range else CALIBRATE[args.solve][0]
    _, increasing, integer = CALIBRATE[args.solve]
    if integer:
        lo, hi = int(math.ceil(lo)), int(math.floor(hi))
    if getattr(args, args.solve) is not None:
        raise UsageError(f"--{args.solve} is what --solve {args.solve} finds; leave it out")
    report = None
    if progress:
        report = lambda i, x, gap: print(f"calibrate: evaluation {i}: {args.solve}={x:.6g} "
                                         f"{'meets' if gap <= 0 else 'misses'} the budget", file=sys.stderr)
    kw = dict(bounds=(lo, hi), tol=args.tol, progress=report)
    dpsgd = args.spec is None and args.mechanism == "subsampled-gaussian" and args.sensitivity in (None, 1.0) \
        and args.relation is None and args.solve in ("sigma", "steps", "q")
    if dpsgd and args.solve == "sigma":
        x = dpsgd_noise_multiplier(args.q, args.steps or 1, args.eps, args.delta, **kw)
    elif dpsgd and args.solve == "steps":
        x = dpsgd_max_steps(args.sigma, args.q, args.eps, args.delta, **kw)
    elif dpsgd and args.solve == "q":
        x = dpsgd_max_sample_rate(args.sigma, args.steps or 1, args.eps, args.delta, **kw)
    else:
        mechanism_from(args, **{args.solve: hi})  # bad flags fail here, before any search
        x = calibrate(lambda val: mechanism_from(args, **{args.solve: val}), eps=args.eps,
                            delta=args.delta, increasing=increasing, integer=integer, **kw)
    m = mechanism_from(args, **{args.solve: x})
    eps = m.get_approxDP(args.delta)
    if args.json:
        return _print_json({"solve": args.solve, "value": x, "mechanism": m.name, "spec": _spec_or_none(m),
                            "eps": args.eps, "delta": args.delta, "certified_epsilon": eps})
    side = "largest" if increasing else "smallest"
    shown = str(x) if integer else fmt(x, up=not increasing)  # rounded to the safe side
    print(f"{args.solve} = {shown}  ({side} value meeting epsilon <= {args.eps:g} at delta = {args.delta:g}, "
          f"within tol {args.tol:g}; certified epsilon there: {fmt(eps)})")


class FlagMechanism:
    """``make`` of a sweep over flags: the flags with the point's values (picklable)."""

    def __init__(self, args):
        self.args = argparse.Namespace(**{k: getattr(args, k, None) for k in
                                          ("spec", "mechanism", "relation") + PARAMETERS + WRAPPERS})

    def __call__(self, **point):
        return mechanism_from(self.args, **point)


def _grid(items):
    """``["sigma=0.8,1.0", "steps=100"]`` -> {"sigma": [0.8, 1.0], "steps": [100]}."""
    grid = {}
    for item in items:
        name, sep, values = item.partition("=")
        name = name.strip().lstrip("-")
        if not sep or name not in PARAMETERS + WRAPPERS:
            raise UsageError(f"--grid expects NAME=V1,V2,... with NAME among {', '.join(PARAMETERS + WRAPPERS)}, "
                             f"got {item!r}")
        if name in grid:
            raise UsageError(f"--grid {name} given twice")
        try:
            grid[name] = [_number(x.strip()) for x in values.split(",")]
        except argparse.ArgumentTypeError as exc:
            raise UsageError(f"--grid {name}: {exc}") from None
    return grid


def cmd_sweep(args, progress):
    if (args.delta is None) == (args.eps is None):
        raise UsageError("sweep needs exactly one of --delta (epsilon at delta) and --eps (delta at epsilon)")
    grid = _grid(args.grid)
    fixed = [k for k in grid if getattr(args, k, None) is not None]
    if fixed:
        raise UsageError(f"--{fixed[0]} is both fixed and swept; give it once")
    if args.mechanism is None and args.spec is None:
        raise UsageError("give --mechanism NAME or --spec FILE (see dpaccount sweep --help)")
    make = FlagMechanism(args)
    first = {k: vals[0] for k, vals in grid.items()}
    make(**first)  # bad flags fail here, in one line, before any worker starts
    query = ("epsilon", args.delta) if args.delta is not None else ("delta", args.eps)
    report = None
    if progress:
        report = lambda done, total: print(f"sweep: {done}/{total} points", file=sys.stderr)
    executor = SerialExecutor() if args.workers == 1 else None
    table = sweep(make, grid, query, executor, max_workers=args.workers, accuracy=args.accuracy,
                  errors="record", progress=report)
    if args.json or args.format == "json":
        sys.stdout.write(table.to_json())
    elif args.format == "csv":
        sys.stdout.write(table.to_csv())
    else:
        cells = [[str(c) for c in table.columns]]
        for row in table.rows:
            cells.append([fmt(val) if isinstance(val, float) and c in ("epsilon", "delta") else
                          ("" if val is None else str(val)) for c, val in row.items()])
        _print_table(cells)
    failed = [row for row in table.rows if row.get("error")]
    if failed:
        raise DPAccountError(f"{len(failed)} of {len(table.rows)} points have no certified answer "
                             f"(see the error column); first: {failed[0]['error']}")


# -- the parser -----------------------------------------------------------------

def _mechanism_flags():
    p = argparse.ArgumentParser(add_help=False)
    g = p.add_argument_group("the mechanism (flags or --spec)")
    which = g.add_mutually_exclusive_group()
    which.add_argument("--mechanism", choices=sorted(MECHANISMS), help="a mechanism by name, its parameters below")
    which.add_argument("--spec", metavar="FILE", help="a JSON spec file (dpaccount.dump); '-' reads stdin")
    for name, text in (("sigma", "noise standard deviation (Gaussian, discrete Gaussian)"),
                       ("sensitivity", "sensitivity of the query (default 1)"), ("mu", "GDP parameter"),
                       ("b", "Laplace scale"), ("p", "randomized-response / binomial probability"),
                       ("n", "binomial trials"), ("t", "discrete Laplace scale")):
        g.add_argument(f"--{name}", type=_number, help=text)
    g.add_argument("--relation", help="neighbouring relation: add-remove (default) or replace-one")
    g.add_argument("--q", type=_number, help="Poisson sampling rate (each record used with probability q)")
    g.add_argument("--steps", type=_number, help="number of compositions (default 1)")
    o = p.add_argument_group("output and accuracy")
    o.add_argument("--json", action="store_true", help="machine-readable JSON on stdout (full precision)")
    o.add_argument("--accuracy", type=float, default=DEFAULT_ACCURACY,
                   help=f"relative accuracy of the certified grid (default {DEFAULT_ACCURACY})")
    o.add_argument("--progress", action="store_true", help="report progress on stderr (default: when a terminal)")
    return p


def build_parser():
    common = _mechanism_flags()
    fmt_cls = argparse.RawDescriptionHelpFormatter
    parser = _Parser(prog="dpaccount", formatter_class=fmt_cls,
                     description="Tight, certified differential-privacy accounting. Every default answer is a "
                                 "rigorous upper bound (printed rounded up).",
                     epilog=EXIT_CODES + "\n\nexample:\n  dpaccount epsilon --mechanism subsampled-gaussian "
                                         "--sigma 1.1 --q 0.0042667 --steps 14063 --delta 1e-5\n\n"
                                         "(fdp and plot arrive with the f-DP accountant.)")
    version = getattr(sys.modules.get("dpaccount"), "__version__", "unknown")  # the package is loaded
    parser.add_argument("--version", action="version", version=f"dpaccount {version}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def add(name, help_text, epilog=""):
        return sub.add_parser(name, parents=[common], help=help_text, description=help_text,
                              formatter_class=fmt_cls, epilog=(epilog + "\n\n" if epilog else "") + EXIT_CODES)

    p = add("epsilon", "epsilon(delta): the least epsilon with the mechanism (epsilon, delta)-DP (upper bound)",
            "example:\n  dpaccount epsilon --mechanism subsampled-gaussian --sigma 1.1 --q 0.0042667 "
            "--steps 14063 --delta 1e-5")
    p.add_argument("--delta", type=float, nargs="+", required=True, help="one or more delta in (0, 1)")
    p.add_argument("--bounds", action="store_true", help="the certified interval [lower, upper]")
    p.add_argument("--method", choices=METHODS, help="default: the tightest that applies")
    p = add("delta", "delta(epsilon): the least delta with the mechanism (epsilon, delta)-DP (upper bound)",
            "example:\n  dpaccount delta --mechanism gaussian --sigma 2 --steps 10 --eps 1 2")
    p.add_argument("--eps", type=float, nargs="+", required=True, help="one or more epsilon >= 0")
    p.add_argument("--bounds", action="store_true", help="the certified interval [lower, upper]")
    p.add_argument("--method", choices=METHODS, help="default: the tightest that applies")
    p = add("rdp", "Renyi DP: epsilon(alpha) of the mechanism",
            "example:\n  dpaccount rdp --mechanism laplace --b 2 --alpha 2 8 32")
    p.add_argument("--alpha", type=float, nargs="+", default=[1.5, 2, 4, 8, 16, 32, 64], help="orders > 1")
    p = add("report", "certified epsilon at several delta beside the RDP conversion, labelled",
            "example:\n  dpaccount report --mechanism subsampled-gaussian --sigma 1.1 --q 0.01 --steps 1000")
    p.add_argument("--deltas", type=float, nargs="+", default=[1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9])
    p.add_argument("--bounds", action="store_true", help="add the certified lower bound")
    p = add("calibrate", "the parameter that meets an (epsilon, delta) budget, on the safe side",
            "examples:\n  dpaccount calibrate --solve sigma --mechanism subsampled-gaussian --q 0.01 "
            "--steps 1000 --eps 2 --delta 1e-5\n  dpaccount calibrate --solve steps --mechanism gaussian "
            "--sigma 20 --eps 1 --delta 1e-5")
    p.add_argument("--solve", choices=sorted(CALIBRATE), required=True, help="the parameter to find")
    p.add_argument("--eps", type=float, required=True, help="the epsilon budget")
    p.add_argument("--delta", type=float, required=True, help="the delta budget")
    p.add_argument("--range", type=_number, nargs=2, metavar=("LO", "HI"), help="search range")
    p.add_argument("--tol", type=float, default=1e-3, help="relative tolerance (default 1e-3)")
    p = add("sweep", "one query over a grid of parameters (the cartesian product), in parallel",
            "examples:\n  dpaccount sweep --mechanism subsampled-gaussian --grid sigma=0.8,1,1.2 --grid q=0.01 "
            "--grid steps=100,1000 --delta 1e-5\n  dpaccount sweep --spec step.json --grid steps=10,100,1000 "
            "--eps 1 --format csv\n\nThe table's epsilon/delta are upper bounds (printed rounded up; "
            "full precision with --format csv/json). A point without a certified answer keeps its row, "
            "with the reason in the error column, and the exit code is 3.")
    p.add_argument("--grid", action="append", required=True, metavar="NAME=V1,V2,...",
                   help="a swept parameter (a mechanism flag, q or steps); repeat for more")
    p.add_argument("--delta", type=float, help="answer epsilon at this delta")
    p.add_argument("--eps", type=float, help="answer delta at this epsilon")
    p.add_argument("--workers", type=int, help="worker processes (default: the CPU count; 1: this process)")
    p.add_argument("--format", choices=("table", "csv", "json"), default="table", help="output format")
    return parser


def main(argv=None):
    """Run the command line ``argv`` (default ``sys.argv[1:]``); returns the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command == "sweep":
            return cmd_sweep(args, args.progress or sys.stderr.isatty()) or OK
        if args.mechanism is None and args.spec is None:
            raise UsageError(f"give --mechanism NAME or --spec FILE (see dpaccount {args.command} --help)")
        progress = args.progress or sys.stderr.isatty()
        if args.command in ("epsilon", "delta"):
            cmd_query(args, args.command)
        elif args.command == "rdp":
            cmd_rdp(args)
        elif args.command == "report":
            cmd_report(args)
        elif args.command == "calibrate":
            cmd_calibrate(args, progress)
        return OK
    except SystemExit as exc:  # --help, --version
        return exc.code if isinstance(exc.code, int) else OK
    except KeyboardInterrupt:
        return _fail("interrupted", INTERRUPTED)
    except DPAccountError as exc:
        return _fail(f"no certified answer: {exc}", UNANSWERED)
    except (ValueError, TypeError) as exc:
        if str(exc).startswith("no value in bounds"):
            return _fail(f"calibrate: {exc}", UNANSWERED)
        return _fail(str(exc), USAGE)
    except Exception as exc:  # a bug: still one line, and a distinct code
        return _fail(f"internal error ({type(exc).__name__}): {exc}", FAILURE)


def _fail(message, code):
    print(f"dpaccount: error: {' '.join(str(message).split())}", file=sys.stderr)
    return code
