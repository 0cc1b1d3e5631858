"""The ``dpaccount`` command: the library's queries from a shell.

    dpaccount epsilon --mechanism subsampled-gaussian --sigma 1.1 --q 0.0042667 --steps 14063 --delta 1e-5
    dpaccount delta --spec released.json --eps 1 2 4 --json
    dpaccount report --mechanism gaussian --sigma 2 --steps 100
    dpaccount fdp --mechanism subsampled-gaussian --sigma 1.1 --q 0.0042667 --steps 14063 --alpha 0.01 0.1
    dpaccount plot --mechanism gaussian --sigma 2 --steps 10 --output fdp.png
    dpaccount calibrate --solve sigma --mechanism subsampled-gaussian --q 0.01 --steps 1000 --eps 2 --delta 1e-5
    dpaccount sweep --mechanism subsampled-gaussian --grid sigma=0.8,1,1.2 --grid q=0.01 --grid steps=100,1000 --delta 1e-5

A mechanism is given by flags (``--mechanism`` and its parameters, then
``--q`` for Poisson sampling and ``--steps`` for composition) or by a spec
file (``--spec``, ``specs.py``): ``flags.py``. Output is human-readable by
default (upper bounds rounded up, lower bounds down: a printed bound is
still a bound) and JSON with ``--json`` (full precision): ``output.py``.
Errors and warnings are one line on stderr, never a traceback, with the
exit codes of ``parser.EXIT_CODES``; progress goes to stderr. This package
is the user interface: it is the one place that prints.

``parser.py`` holds the arguments, ``commands.py`` the (ε, δ) commands
(epsilon, delta, rdp, report, calibrate, sweep), ``fdp.py`` the f-DP ones
(fdp, plot).
"""
import os
import sys
import warnings

from .. import progress as report
from ..errors import DPAccountError, SpecError
from .commands import cmd_calibrate, cmd_dpsgd, cmd_query, cmd_rdp, cmd_report, cmd_sweep
from .fdp import cmd_fdp, cmd_plot
from .output import UsageError, below, cli_words, fmt, say, show_warning
from .parser import BROKEN_PIPE, FAILURE, INTERRUPTED, MISSING_EXTRA, OK, UNANSWERED, USAGE, build_parser

__all__ = ["main", "build_parser", "fmt", "UsageError"]

COMMANDS = {"epsilon": cmd_query, "delta": cmd_query, "rdp": cmd_rdp, "report": cmd_report, "fdp": cmd_fdp,
            "plot": cmd_plot, "calibrate": cmd_calibrate, "sweep": cmd_sweep, "dpsgd": cmd_dpsgd}


def main(argv=None):
    """Run the command line ``argv`` (default ``sys.argv[1:]``); returns the exit code."""
    parser = build_parser()
    try:
        with warnings.catch_warnings():
            warnings.showwarning = show_warning  # one line each, restored on exit
            args = parser.parse_args(argv)
            if (args.command != "dpsgd" and args.mechanism is None and args.spec is None
                    and getattr(args, "sigma", None) is not None and getattr(args, "q", None) is not None):
                args.mechanism = "subsampled-gaussian"  # prv_accountant's -s/-p/-i: DP-SGD by default
            if args.command != "dpsgd" and args.mechanism is None and args.spec is None:
                raise UsageError(f"give --mechanism NAME or --spec FILE (see dpaccount {args.command} --help)")
            shown = args.progress or sys.stderr.isatty()
            bar = report.StderrBar() if shown else None  # a bar of the command's stages
            with below(bar):
                report.run(args.command, bar, COMMANDS[args.command], args, shown)
            sys.stdout.flush()  # here, where a closed pipe is caught, not at the interpreter's exit
        return OK
    except BrokenPipeError:  # the reader went away (`dpaccount ... | head`): stop quietly
        return _quiet_stdout(BROKEN_PIPE)
    except SystemExit as exc:  # --help, --version
        return exc.code if isinstance(exc.code, int) else OK
    except KeyboardInterrupt:
        return _fail("interrupted", INTERRUPTED)
    except SpecError as exc:  # bad input, as any ValueError/TypeError of the arguments
        return _fail(exc, USAGE)
    except DPAccountError as exc:
        return _fail(f"no certified answer: {exc}", UNANSWERED)
    except ImportError as exc:  # an optional extra (matplotlib for plot)
        return _fail(exc, MISSING_EXTRA)
    except (ValueError, TypeError) as exc:
        if str(exc).startswith("no value in bounds"):
            return _fail(f"calibrate: {exc}", UNANSWERED)
        return _fail(exc, USAGE)
    except Exception as exc:  # a bug: still one line, and a distinct code
        return _fail(f"internal error ({type(exc).__name__}): {exc}", FAILURE)


def _quiet_stdout(code):
    """``code`` after pointing stdout at the null device, so that the interpreter's
    final flush of what is left has nowhere to fail (as the Python docs advise)."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
    except (AttributeError, OSError, ValueError):  # a stdout without a descriptor (captured)
        pass
    return code


def _fail(message, code):
    say("error", cli_words(message))
    return code
