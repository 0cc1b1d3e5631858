"""The commands about (ε, δ): ``epsilon``, ``delta``, ``rdp``, ``report``,
``calibrate`` and ``sweep``. Each takes the parsed arguments and whether to
show progress, prints its result on stdout, and raises on failure (the
exit code is chosen in ``__init__.main``)."""
import json
import math
import sys
import warnings

import numpy as np

from .. import progress as report
from ..calibrate import calibrate, certified_epsilon
from ..recipes import dpsgd, dpsgd_max_sample_rate, dpsgd_max_steps, dpsgd_noise_multiplier, dpsgd_steps
from ..errors import ApproximationWarning, DPAccountError, RepresentationUnavailable
from ..sweep import SerialExecutor, sweep
from .flags import FlagMechanism, mechanism_from, parse_grid
from .output import UsageError, fmt, print_json, print_note, print_table, result_document


UNCERTIFIED = ("rdp", "clt")  # methods whose answers are one-sided (rdp) or approximate (clt): no interval


def _method(m, method):
    return method or m.available_methods()[0]


def cmd_query(args, progress, mechanism=None):
    """``epsilon`` (ε at each δ) and ``delta`` (δ at each ε); of ``mechanism`` where given."""
    if args.bounds and args.method in UNCERTIFIED:
        raise UsageError(f"--bounds is a certified interval, which --method {args.method} does not give: "
                         f"use --method pld, analytic or cf, or leave --method out")
    m = mechanism_from(args) if mechanism is None else mechanism
    query = args.command
    given, wanted = ("delta", "epsilon") if query == "epsilon" else ("epsilon", "delta")
    method = _method(m, args.method)
    rows = []
    report.expect(len(args.delta if query == "epsilon" else args.eps))  # one query each
    for x in (args.delta if query == "epsilon" else args.eps):
        if args.bounds:
            fn = m.get_approxDP_bounds if query == "epsilon" else m.get_approx_delta_bounds
            b = fn(x, method=args.method, accuracy=args.accuracy)
            rows.append({given: x, wanted: b.upper, "lower": b.lower, "upper": b.upper, "method": b.method,
                         "certified": b.certified, "lower_of": b.lower_of, "reason": b.reason})
        else:
            fn = m.get_approxDP if query == "epsilon" else m.get_approx_delta
            rows.append({given: x, wanted: fn(x, method=args.method, accuracy=args.accuracy), "method": method})
    if args.json:
        return print_json(result_document(m, query, rows))
    for r in rows:
        at = f"at {given} = {r[given]:g}"
        if args.bounds and r["lower"] is None:
            print(f"{wanted} <= {fmt(r[wanted])} {at}  (upper bound, method {r['method']}; {r['reason']})")
        elif args.bounds:
            print(f"{wanted} in [{fmt(r['lower'], up=False)}, {fmt(r[wanted])}] {at}  "
                  f"({'certified' if r['certified'] else 'estimated'} interval, method {r['method']})")
        else:
            kind = "cf value + its error; --bounds says if certified" if r["method"] == "cf" else "upper bound"
            print(f"{wanted} = {fmt(r[wanted])} {at}  ({kind}, method {r['method']})")


def cmd_dpsgd(args, progress):
    """``dpsgd``: the training loop's mechanism (``recipes.dpsgd``), then ``epsilon`` or ``delta``
    (and with ``--html``, its report card)."""
    if args.html is None and args.delta is None and args.eps is None:
        raise UsageError("give --delta, --eps or --html FILE (see dpaccount dpsgd --help)")
    m = dpsgd(args.sigma, args.batch_size, args.dataset_size, args.epochs, args.sampling, args.max_batch_size)
    q, steps = dpsgd_steps(args.batch_size, args.dataset_size, args.epochs)
    if not args.json:
        print(f"{steps:,} steps at sampling rate {q:.6g} ({args.sampling}): {args.epochs:g} epochs of "
              f"ceil({args.dataset_size} / {args.batch_size}) = {-(-args.dataset_size // args.batch_size)} steps, "
              f"rounded up")
    if args.html is not None:
        _write_card(m, args)
    if args.delta is not None or args.eps is not None:
        args.command = "epsilon" if args.delta is not None else "delta"
        cmd_query(args, progress, mechanism=m)


def _write_card(m, args, deltas=None):
    """``--html FILE``: the report card (``cards``) of ``m``, written to FILE."""
    from ..cards import report as card  # here: the report's modules stay out of the other commands
    kw = {} if deltas is None else {"deltas": deltas}
    path = card(m, accuracy=args.accuracy, **kw).to_html(args.html)
    if not args.json:
        print(f"wrote {path} (the privacy report card of {m.name})")


def cmd_rdp(args, progress):
    m = mechanism_from(args)
    rows = [{"alpha": a, "epsilon": m.get_RDP(a)} for a in args.alpha]
    if args.json:
        return print_json(result_document(m, "rdp", rows))
    for r in rows:
        print(f"RDP epsilon = {fmt(r['epsilon'])} at alpha = {r['alpha']:g}")


@report.stage("CLT column")
def _clt(m, deltas, accuracy):
    """ε(δ) of the CLT approximation (None where it does not apply) and where it
    is below the certified upper bound (there it under-reports the privacy loss)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ApproximationWarning)  # the report says it in its own words
            clt = m.get_approxDP(np.array(deltas), method="clt", accuracy=accuracy)
    except RepresentationUnavailable:
        return [None] * len(deltas), [None] * len(deltas)
    certified = m.get_approxDP(np.array(deltas), accuracy=accuracy)
    return [float(x) for x in clt], [bool(x) for x in clt < certified]


@report.stage("report row")
def _report_row(m, d, args, method):
    """One δ of ``report``: the certified ε (or interval) and the RDP conversion's."""
    row = {"delta": d, "epsilon": None, "lower": None, "upper": None, "rdp": None, "method": method}
    if args.bounds:
        b = m.get_approxDP_bounds(d, accuracy=args.accuracy)
        row.update(epsilon=b.upper, lower=b.lower, upper=b.upper, method=b.method, lower_of=b.lower_of,
                   reason=b.reason)
    else:
        row["epsilon"] = m.get_approxDP(d, accuracy=args.accuracy)
    try:
        row["rdp"] = m.get_approxDP(d, method="rdp")
    except DPAccountError:
        pass  # no RDP representation: shown as n/a
    return row


def cmd_report(args, progress):
    """Certified ε at a few δ beside the RDP conversion and the CLT approximation, labelled;
    with ``--html FILE``, the report card as one HTML page instead."""
    m = mechanism_from(args)
    if args.html is not None:
        return _write_card(m, args, args.deltas)
    method = _method(m, None)
    report.expect(len(args.deltas) + 1)  # a row each, then the CLT column
    rows = [_report_row(m, d, args, method) for d in args.deltas]
    for row, clt, under in zip(rows, *_clt(m, args.deltas, args.accuracy)):
        row.update(clt=clt, clt_under_reports=under)
    if args.json:
        return print_json(result_document(m, "report", rows))
    has_clt = rows[0]["clt"] is not None
    print(f"mechanism: {m.name}")
    head = ["delta", f"epsilon (certified, {method})"] + (["epsilon lower (certified)"] if args.bounds else [])
    head += ["epsilon (RDP)"] + (["epsilon (CLT, approximate)"] if has_clt else [])
    table = [[f"{r['delta']:g}", fmt(r["epsilon"])] + ([fmt(r["lower"], up=False)] if args.bounds else [])
             + [fmt(r["rdp"])] + ([fmt(r["clt"]) + (" !" if r["clt_under_reports"] else "")] if has_clt else [])
             for r in rows]
    print_table([head] + table)
    print_note("certified: a rigorous upper bound (lower: a rigorous lower bound); RDP: the moments-accountant "
               "conversion, also an upper bound, looser."
               + (" CLT: the central limit approximation of Bu, Dong, Long & Su (2020), not a bound."
                  if has_clt else ""))
    if args.bounds and rows[0]["reason"]:
        print_note(f"lower: {rows[0]['reason']}.")
    under = [f"{r['delta']:g}" for r in rows if r["clt_under_reports"]]
    if under:
        print_note(f"warning (!): the CLT approximation is below the certified epsilon at delta = "
                   f"{', '.join(under)}: there it under-reports the privacy loss; use the certified column.")


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
    kw = dict(bounds=(lo, hi), tol=args.tol)  # progress: the command's bar (``__init__.main``)
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
    eps, route = certified_epsilon(m, args.delta)  # by the route calibration used where the default refuses
    if args.json:
        return print_json(result_document(m, "calibrate", solve=args.solve, value=x, epsilon=args.eps,
                                          delta=args.delta, certified_epsilon=eps))
    side = "largest" if increasing else "smallest"
    shown = str(x) if integer else fmt(x, up=not increasing)  # rounded to the safe side
    print(f"{args.solve} = {shown}  ({side} value meeting epsilon <= {args.eps:g} at delta = {args.delta:g}, "
          f"within tol {args.tol:g}; certified epsilon there: {fmt(eps)}"
          f"{f' by {route}' if route else ''})")


def cmd_sweep(args, progress):
    if (args.delta is None) == (args.eps is None):
        raise UsageError("sweep needs exactly one of --delta (epsilon at delta) and --eps (delta at epsilon)")
    grid = parse_grid(args.grid)
    fixed = [k for k in grid if getattr(args, k, None) is not None]
    if fixed:
        raise UsageError(f"--{fixed[0]} is both fixed and swept; give it once")
    make = FlagMechanism(args)
    first = {k: vals[0] for k, vals in grid.items()}
    first_mechanism = make(**first)  # bad flags fail here, in one line, before any worker starts
    query = ("epsilon", args.delta) if args.delta is not None else ("delta", args.eps)
    executor = SerialExecutor() if args.workers == 1 else None
    table = sweep(make, grid, query, executor, max_workers=args.workers, accuracy=args.accuracy,
                  errors="record", progress=report.reached)  # points done, in the command's bar
    if args.json or args.format == "json":  # the other commands' header, then the table
        at = {"delta": args.delta} if args.delta is not None else {"epsilon": args.eps}
        doc = result_document(first_mechanism, "sweep", answer=query[0], **at, grid=grid, first_point=first)
        print_json({**doc, **json.loads(table.to_json())})
    elif args.format == "csv":
        sys.stdout.write(table.to_csv())
    else:
        cells = [[str(c) for c in table.columns]]
        for row in table.rows:
            cells.append([fmt(val) if isinstance(val, float) and c in ("epsilon", "delta") else
                          ("" if val is None else str(val)) for c, val in row.items()])
        print_table(cells)
    failed = [row for row in table.rows if row.get("error")]
    refused = [row["error"] for row in failed if row["error"].startswith("ValueError: ")]
    if refused:  # a grid point's parameters out of range: bad input (exit 2), after the table
        raise UsageError(f"{len(refused)} of {len(table.rows)} points have parameters out of range "
                         f"(see the error column); first: {refused[0][len('ValueError: '):]}")
    if failed:
        raise DPAccountError(f"{len(failed)} of {len(table.rows)} points have no certified answer "
                             f"(see the error column); first: {failed[0]['error']}")
