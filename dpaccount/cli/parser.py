"""The ``dpaccount`` command's arguments (argparse) and exit codes."""
import argparse
import sys

from ..queries import DEFAULT_ACCURACY, METHODS
from .commands import CALIBRATE
from .fdp import FDP_METHODS, PLOTS
from ..recipes import SAMPLINGS
from .flags import BATCH_SCHEMES, MECHANISMS, number
from .output import UsageError

OK, FAILURE, USAGE, UNANSWERED, MISSING_EXTRA, INTERRUPTED, BROKEN_PIPE = 0, 1, 2, 3, 4, 130, 141
EXIT_CODES = """exit codes:
  0    success
  1    internal error (a bug: please report it)
  2    usage error or bad input (unknown flag, out-of-range value, unreadable or invalid spec)
  3    no certified answer: accuracy not reached, grid too large, representation
       unavailable, or no value meets the budget (calibrate)
  4    an optional dependency is missing (plot needs matplotlib: pip install 'dpaccount[plot]')
  130  interrupted
  141  the output's reader went away (a closed pipe, e.g. into head): stopped quietly"""
DPSGD_HELP = ("DP-SGD in its users' words: epsilon (or delta) of a training loop from its noise multiplier, "
              "batch size, dataset size and epochs")
DPSGD_EXAMPLE = "dpaccount dpsgd --noise-multiplier 1.1 --batch-size 256 --dataset-size 60000 --epochs 60 --delta 1e-5"
HTML_HELP = ("write the privacy report card to FILE: one standalone HTML page (epsilon(delta), the trade-off "
             "curve, attack TPR at FPR, advantage, Bayes risk; figures need matplotlib)")
HEADLINE = "dpaccount epsilon --mechanism subsampled-gaussian --sigma 1.1 --q 0.0042667 --steps 14063 --delta 1e-5"


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage dump) and exit code 2."""

    def error(self, message):
        raise UsageError(f"{message} (see {self.prog} --help)")


def _mechanism_flags():
    p = argparse.ArgumentParser(add_help=False)
    g = p.add_argument_group("the mechanism (flags or --spec)")
    which = g.add_mutually_exclusive_group()
    which.add_argument("--mechanism", choices=sorted(MECHANISMS), help="a mechanism by name, its parameters below")
    which.add_argument("--spec", metavar="FILE", help="a JSON spec file (dpaccount.dump); '-' reads stdin")
    for name, text in (("sigma", "noise standard deviation (Gaussian, discrete Gaussian; the noise "
                                 "multiplier of tree aggregation)"),
                       ("sensitivity", "sensitivity of the query (default 1)"), ("mu", "GDP parameter"),
                       ("b", "Laplace scale"), ("p", "randomized-response / binomial probability"),
                       ("n", "binomial trials; tree aggregation: steps per epoch"), ("t", "discrete Laplace scale"),
                       ("rho", "zCDP parameter rho"), ("xi", "zCDP parameter xi (default 0)"),
                       ("epochs", "tree aggregation: epochs, the tree restarted each (default 1); matrix: "
                                  "fixed epochs"),
                       ("min_separation", "matrix: rounds between two participations"),
                       ("participations", "matrix: at most this many participations (with --min-separation)")):
        g.add_argument(f"--{name.replace('_', '-')}", *ALIASES.get(name, ()), dest=name, type=number, help=text)
    g.add_argument("--strategy", help="matrix: toeplitz:c0,c1,..., blt:d1,...;s1,..., prefix, identity or tree "
                                      "over --n rounds (docs/matrix_mechanisms.rst)")
    g.add_argument("--relation", help="neighbouring relation: add-remove (default) or replace-one "
                                      "(dp_accounting's add_or_remove_one, replace_one too)")
    g.add_argument("--q", *ALIASES["q"], dest="q", type=number,
                   help="Poisson sampling rate (each record used with probability q)")
    g.add_argument("--steps", *ALIASES["steps"], dest="steps", type=number, help="number of compositions (default 1)")
    b = p.add_argument_group("the batch scheme of each step (docs/batch_schemes.rst; --q alone: poisson)")
    b.add_argument("--batch-scheme", choices=list(BATCH_SCHEMES),
                   help="poisson (--q), truncated-poisson (--q --dataset-size --max-batch-size), "
                        "without-replacement or with-replacement (--batch-size --dataset-size; replace-one), "
                        "random-allocation (--batch-size --dataset-size: one pass of ceil(n / b) steps; "
                        "--steps counts passes), cyclic-poisson (--q; --mechanism matrix, banded strategies), "
                        "cyclic-truncated-poisson (--q --dataset-size (the largest group) --max-batch-size), "
                        "balls-in-bins (--mechanism matrix, a diagonal strategy: one round per epoch of "
                        "--min-separation rounds)")
    b.add_argument("--dataset-size", type=number, help="number of records (truncated-poisson, *-replacement, random-allocation)")
    b.add_argument("--batch-size", type=number, help="records per batch (without-, with-replacement, random-allocation)")
    b.add_argument("--max-batch-size", type=number, help="the cap on a Poisson batch (truncated-poisson)")
    _output_flags(p)
    return p


# prv_accountant's names (compute-dp-epsilon -s 0.8 -p 5e-3 -i 250 -d 1e-6): with --sigma and --q and no
# --mechanism, the mechanism is the Poisson-subsampled Gaussian
ALIASES = {"sigma": ("-s", "--noise-multiplier"), "q": ("-p", "--sampling-probability"),
           "steps": ("-i", "--num-compositions")}


def _output_flags(p):
    o = p.add_argument_group("output and accuracy")
    o.add_argument("--json", action="store_true", help="machine-readable JSON on stdout (full precision)")
    o.add_argument("--accuracy", type=float, default=DEFAULT_ACCURACY,
                   help=f"relative accuracy of the certified grid (default {DEFAULT_ACCURACY})")
    o.add_argument("--progress", action="store_true", help="report progress on stderr (default: when a terminal)")


def build_parser():
    common = _mechanism_flags()
    fmt_cls = argparse.RawDescriptionHelpFormatter
    parser = _Parser(prog="dpaccount", formatter_class=fmt_cls,
                     description="Tight, certified differential-privacy accounting. Every default answer is a "
                                 "rigorous upper bound (printed rounded up).",
                     epilog=f"{EXIT_CODES}\n\nexample:\n  {HEADLINE}")
    version = getattr(sys.modules.get("dpaccount"), "__version__", "unknown")  # the package is loaded
    parser.add_argument("--version", action="version", version=f"dpaccount {version}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def add(name, help_text, epilog=""):
        return sub.add_parser(name, parents=[common], help=help_text, description=help_text,
                              formatter_class=fmt_cls, epilog=(epilog + "\n\n" if epilog else "") + EXIT_CODES)

    def bounds_and_method(p, methods=METHODS, default="the tightest that applies"):
        p.add_argument("--bounds", action="store_true", help="the certified interval [lower, upper]")
        p.add_argument("--method", choices=methods, help=f"default: {default}")

    p = add("epsilon", "epsilon(delta): the least epsilon with the mechanism (epsilon, delta)-DP (upper bound)",
            f"example:\n  {HEADLINE}")
    p.add_argument("--delta", "-d", type=float, nargs="+", required=True, help="one or more delta in (0, 1)")
    bounds_and_method(p)
    p = add("delta", "delta(epsilon): the least delta with the mechanism (epsilon, delta)-DP (upper bound)",
            "example:\n  dpaccount delta --mechanism gaussian --sigma 2 --steps 10 --eps 1 2")
    p.add_argument("--eps", "-e", "--epsilon", dest="eps", type=float, nargs="+", required=True,
                   help="one or more epsilon >= 0")
    bounds_and_method(p)
    p = add("rdp", "Renyi DP: epsilon(alpha) of the mechanism",
            "example:\n  dpaccount rdp --mechanism laplace --b 2 --alpha 2 8 32")
    p.add_argument("--alpha", type=float, nargs="+", default=[1.5, 2, 4, 8, 16, 32, 64], help="orders > 1")
    p = add("report", "certified epsilon at several delta beside the RDP conversion and the CLT approximation",
            "examples:\n  dpaccount report --mechanism subsampled-gaussian --sigma 1.1 --q 0.01 --steps 1000\n"
            "  dpaccount report --spec released.json --html report.html\n\n"
            "The CLT column (Bu, Dong, Long & Su 2020) is an approximation, not a bound, shown for\n"
            "compositions of Poisson-subsampled Gaussians; a line says where it under-reports.")
    p.add_argument("--deltas", type=float, nargs="+", default=[1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9])
    p.add_argument("--bounds", action="store_true", help="add the certified lower bound")
    p.add_argument("--html", metavar="FILE", help=HTML_HELP)
    p = add("fdp", "the trade-off curve beta(alpha): a certified lower bound on the type-II error of any test "
                   "at type-I error alpha (f-DP)",
            "examples:\n  dpaccount fdp --mechanism subsampled-gaussian --sigma 1.1 --q 0.0042667 --steps 14063 "
            "--alpha 0.001 0.01 0.1\n  dpaccount fdp --mechanism gaussian --sigma 2 --points 5 --bounds --gdp\n\n"
            "beta is printed rounded down (the curve lies above it); with --bounds the upper end is rounded up.")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--alpha", "--fpr", dest="alpha", type=float, nargs="+",
                       help="one or more type-I errors (false-positive rates) in [0, 1]")
    which.add_argument("--points", type=int, help="this many alpha evenly spaced over [0, 1] (default 11)")
    bounds_and_method(p, FDP_METHODS, "analytic where it applies, else pld; clt is an approximation")
    p.add_argument("--gdp", action="store_true", help="also the certified mu of mu-GDP")
    p.add_argument("--tail", type=float,
                   help="with --gdp: the additive slack of the certified mu, delta(eps) <= delta_mu(eps) + "
                        "tail for every eps (default 1e-30, at most 1e-6; a larger tail gives a smaller mu)")
    p = add("plot", "draw the mechanism's trade-off curve (or privacy profile, RDP curve) to an image file "
                    "(needs matplotlib: pip install 'dpaccount[plot]')",
            "example:\n  dpaccount plot --mechanism subsampled-gaussian --sigma 1.1 --q 0.0042667 --steps 14063 "
            "--output fdp.png --gdp-mu 0.57")
    p.add_argument("--output", "-o", required=True, metavar="FILE",
                   help="the image file; its format from the suffix (png, pdf, svg, ...)")
    p.add_argument("--kind", choices=sorted(PLOTS), default="fdp",
                   help="fdp: trade-off curve with its certified band (default); profile: epsilon(delta); "
                        "rdp: Renyi DP")
    p.add_argument("--gdp-mu", type=float, nargs="+", metavar="MU", help="also draw G_mu for each MU (fdp)")
    p.add_argument("--no-band", dest="band", action="store_false", help="the lower curve only (fdp)")
    p.add_argument("--title", help="the figure's title (default: the mechanism's name)")
    p.add_argument("--dpi", type=int, default=100, help="resolution of raster images (default 100)")
    p = add("calibrate", "the parameter that meets an (epsilon, delta) budget, on the safe side",
            "examples:\n  dpaccount calibrate --solve sigma --mechanism subsampled-gaussian --q 0.01 "
            "--steps 1000 --eps 2 --delta 1e-5\n  dpaccount calibrate --solve steps --mechanism gaussian "
            "--sigma 20 --eps 1 --delta 1e-5")
    p.add_argument("--solve", choices=sorted(CALIBRATE), required=True, help="the parameter to find")
    p.add_argument("--eps", type=float, required=True, help="the epsilon budget")
    p.add_argument("--delta", type=float, required=True, help="the delta budget")
    p.add_argument("--range", type=number, nargs=2, metavar=("LO", "HI"), help="search range")
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
    p = sub.add_parser("dpsgd", help=DPSGD_HELP, description=DPSGD_HELP, formatter_class=fmt_cls,
                       epilog=f"example:\n  {DPSGD_EXAMPLE}\n\n{EXIT_CODES}")
    g = p.add_argument_group("the training loop")
    g.add_argument("--noise-multiplier", "-s", dest="sigma", type=float, required=True,
                   help="Gaussian noise standard deviation over the clipping norm")
    g.add_argument("--batch-size", "-b", type=int, required=True, help="(expected) batch size")
    g.add_argument("--dataset-size", "-n", type=int, required=True, help="number of records")
    g.add_argument("--epochs", "-E", type=float, required=True, help="passes over the data (may be fractional)")
    g.add_argument("--sampling", choices=sorted(SAMPLINGS), default="poisson", help="the batch scheme (default poisson)")
    g.add_argument("--max-batch-size", type=int, help="the cap on a batch (--sampling truncated-poisson, required "
                                                       "there)")
    p.add_argument("--html", metavar="FILE", help=HTML_HELP)
    which = p.add_mutually_exclusive_group()
    which.add_argument("--delta", "-d", type=float, nargs="+", help="epsilon at each delta")
    which.add_argument("--eps", "-e", "--epsilon", dest="eps", type=float, nargs="+", help="delta at each epsilon")
    p.add_argument("--bounds", action="store_true", help="the certified interval [lower, upper]")
    _output_flags(p)
    p.set_defaults(mechanism=None, spec=None, method=None)
    return parser
