"""The f-DP commands: ``fdp`` (the certified trade-off curve β(α) at given α,
or at a count of evenly spaced α) and ``plot`` (a figure of it, or of the
privacy profile or RDP curve, through ``plots.py``; matplotlib is the
optional extra ``[plot]``, and without it ``plot`` fails in one line)."""
import os
import textwrap

import numpy as np

from ..errors import RepresentationUnavailable
from ..plots import image_formats, plot_fDP, plot_privacy_profile, plot_rdp
from .flags import mechanism_from
from .output import UsageError, fmt, print_json, print_note, print_table, result_document, title_of

FDP_METHODS = ("analytic", "pld", "clt")
PLOTS = {"fdp": (plot_fDP, "trade-off curve", "certified β(α)"),
         "profile": (plot_privacy_profile, "privacy profile", "certified ε(δ)"),
         "rdp": (plot_rdp, "Renyi-DP curve", "RDP ε(α)")}
MAX_POINTS = 100_000
DEFAULT_TAIL = 1e-30  # mu_GDP's default slack


def _alphas(args):
    if args.alpha is not None:
        bad = [a for a in args.alpha if not 0.0 <= a <= 1.0]  # NaN too
        if bad:
            raise UsageError(f"--alpha must lie in [0, 1], got {bad[0]:g}")
        return np.array(args.alpha)
    points = 11 if args.points is None else args.points
    if not 2 <= points <= MAX_POINTS:
        raise UsageError(f"--points must lie in [2, {MAX_POINTS}], got {points}")
    return np.linspace(0.0, 1.0, points)


def _curve(m, alphas, args):
    """(lower, upper or None, method, why the upper end is not certified or None) of β
    at each α; by default the tightest method that applies, as ``get_fDP`` chooses
    it: analytic, else pld."""
    for method in [args.method] if args.method else ["analytic", "pld"]:
        try:
            if args.bounds:
                b = m.get_fDP_bounds(alphas, method=method, accuracy=args.accuracy)
                return b.lower, b.upper, b.method, (None if b.certified else b.reason)
            return m.get_fDP(alphas, method=method, accuracy=args.accuracy), None, method, None
        except RepresentationUnavailable:
            if args.method or method == "pld":
                raise


def cmd_fdp(args, progress):
    m = mechanism_from(args)
    alphas = _alphas(args)
    if args.tail is not None and not args.gdp:
        raise UsageError("--tail applies to --gdp only")
    tail = DEFAULT_TAIL if args.tail is None else args.tail
    lower, upper, method, uncertified = _curve(m, alphas, args)
    rows = [{"alpha": float(a), "beta": float(lo)} for a, lo in zip(alphas, lower)]
    if upper is not None:
        for row, hi in zip(rows, upper):
            row.update(lower=row["beta"], upper=float(hi))
    extra = {"method": method, **({"upper_certified": uncertified is None} if upper is not None else {})}
    if args.gdp:
        extra["mu_gdp"] = m.mu_GDP(method=args.method, accuracy=args.accuracy, tail=tail)
        extra["mu_gdp_tail"] = tail
    if args.json:
        return print_json(result_document(m, "fdp", rows, **extra))
    approximate = method == "clt"
    print(f"mechanism: {m.name}")
    head = ["alpha", "beta (CLT, approximate)" if approximate else f"beta (certified lower bound, {method})"]
    head += [f"beta upper ({'certified' if uncertified is None else 'of the pairs'})"] if upper is not None else []
    table = [[f"{r['alpha']:g}", fmt(r["beta"], up=False)] + ([fmt(r["upper"])] if upper is not None else [])
             for r in rows]
    print_table([head] + table)
    if approximate:
        print_note("beta: the CLT's G_mu (Bu, Dong, Long & Su 2020), an approximation, not a bound.")
    else:
        print_note("beta: no test of neighbouring datasets (either order) has type-I error alpha and type-II "
              "error below beta; printed rounded down" + (", the upper end up." if upper is not None else ".")
                   + (f" Upper: {uncertified}." if uncertified else ""))
    if args.gdp:
        kind = "CLT, approximate" if approximate else f"certified: the curve lies above G_mu - {tail:g}"
        print(f"mu-GDP: mu = {fmt(extra['mu_gdp'])}  ({kind})")
        if not approximate and getattr(m.optional("pairs"), "gaussian_mu", None) is None:  # G_μ: no tail
            print_note("mu: delta_mu(eps) falls like a Gaussian tail; a composition of subsampled or finite "
                       "mechanisms has a heavier far tail, so a tiny --tail can need a mu far above the "
                       "bulk's (and the CLT's). A larger --tail (e.g. 1e-6) adds that delta to every "
                       "guarantee drawn from mu and gives a smaller mu.")


def _check_output(path):
    """UsageError for an image format matplotlib cannot write (ImportError without it)."""
    os.environ.setdefault("MPLBACKEND", "Agg")  # files only: never a window
    formats = image_formats()  # the extra [plot]; ImportError: exit code 4
    ext = os.path.splitext(path)[1].lstrip(".").lower()
    if ext not in formats:
        raise UsageError(f"-o {path}: unknown image format {ext!r}; give a file name ending in one of "
                         f"{', '.join('.' + f for f in sorted(formats))}")


def cmd_plot(args, progress):
    # usage errors first, then the optional dependency (exit code 4), then the work
    if args.kind != "fdp" and (args.gdp_mu or not args.band):
        raise UsageError("--gdp-mu and --no-band apply to --kind fdp only")
    if args.dpi <= 0:
        raise UsageError(f"--dpi must be positive, got {args.dpi}")
    m = mechanism_from(args)
    _check_output(args.output)  # an unknown image format fails before any work
    draw, what, label = PLOTS[args.kind]
    kw = {"gdp_mu": args.gdp_mu, "band": args.band} if args.kind == "fdp" else {}
    if args.kind != "rdp":
        kw["accuracy"] = args.accuracy
    ax = draw(m, labels=[label], **kw)  # ImportError without matplotlib (exit code 4)
    ax.set_title(textwrap.fill(title_of(m), 60) if args.title is None else args.title, fontsize="medium")
    try:
        ax.figure.savefig(args.output, dpi=args.dpi, bbox_inches="tight")
    except OSError as exc:
        raise UsageError(f"cannot write {args.output!r}: {exc.strerror or exc}") from None
    if args.json:
        return print_json(result_document(m, "plot", kind=args.kind, output=args.output))
    print(f"wrote {args.output} ({what} of {title_of(m)})")
