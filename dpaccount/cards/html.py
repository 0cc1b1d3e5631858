"""The report card as one standalone HTML document.

No script, no network: the figures are inline SVG (``cards/figures.py``), the style is inline
CSS, and a Content-Security-Policy forbids the page to load anything. Every number is printed
on its own safe side (an upper end rounded up, a lower end down: ``cards/describe.fmt``), so a
printed bound is still a bound. Without matplotlib the page has its tables and says so.
"""
import html
from typing import Any, Iterable, Optional

from .describe import fmt
from .figures import matplotlib_available, roc_svg, tradeoff_svg

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2em auto; max-width: 66em;
       padding: 0 1em; color: #1b1b1b; background: #fff; line-height: 1.45; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; } h2 { font-size: 1.15em; margin-top: 1.8em;
     border-bottom: 1px solid #ddd; padding-bottom: 0.2em; }
.sub { color: #555; margin-top: 0; } .note { color: #555; font-size: 0.92em; }
table { border-collapse: collapse; margin: 0.6em 0; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.7em; text-align: right; } th { background: #f3f3f3; }
td.text, th.text { text-align: left; }
.cards { display: flex; flex-wrap: wrap; gap: 1em; margin: 1em 0; }
.card { border: 1px solid #ccc; border-radius: 6px; padding: 0.7em 1em; min-width: 13em; background: #fafafa; }
.card .big { font-size: 1.35em; font-weight: 600; } .figs { display: flex; flex-wrap: wrap; gap: 1em; }
figure { margin: 0; } .figs svg { max-width: 100%; height: auto; } pre { background: #f6f6f6; padding: 0.6em; overflow-x: auto; }
.warn { background: #fff6e0; border-left: 4px solid #e0a800; padding: 0.4em 0.8em; }
"""
_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _table(head: Optional[Iterable[str]], rows: Iterable[Iterable[str]], text_cols: int = 0) -> str:
    """A table; ``head`` None: none (a list of name–value rows)."""
    th = "".join(f'<th class="text">{_e(h)}</th>' if i < text_cols else f"<th>{_e(h)}</th>"
                 for i, h in enumerate(head or ()))
    body = "".join("<tr>" + "".join(f'<td class="text">{_e(c)}</td>' if i < text_cols else f"<td>{_e(c)}</td>"
                                    for i, c in enumerate(row)) + "</tr>" for row in rows)
    return f"<table>{f'<thead><tr>{th}</tr></thead>' if th else ''}<tbody>{body}</tbody></table>"


def _interval(row: Any) -> tuple:
    """(lower, upper, note) of a Row as text, each end on its safe side."""
    low = "—" if row.lower is None else fmt(row.lower, up=False)
    return low, fmt(row.upper), row.note or ("certified" if row.certified else "")


def _summary(rep: Any) -> str:
    cards = []
    if rep.advantage is not None:
        cards.append(("advantage (max TPR − FPR)", f"≤ {fmt(rep.advantage.upper, digits=4)}",
                      "of any membership-inference attack"))
    at = {r.at: r for r in rep.tpr}
    if 0.01 in at:
        cards.append(("TPR at FPR 1 %", f"≤ {fmt(at[0.01].upper, digits=4)}", "the best attack's true positives"))
    eps = {r.at: r for r in rep.epsilon}
    if 1e-5 in eps:
        cards.append(("ε at δ = 10⁻⁵", f"≤ {fmt(eps[1e-5].upper, digits=4)}", "(ε, δ)-DP"))
    if rep.mu is not None:
        cards.append(("μ-GDP", f"μ ≤ {fmt(rep.mu, digits=4)}", "β ≥ G_μ − 10⁻⁶"))
    return '<div class="cards">' + "".join(
        f'<div class="card"><div>{_e(t)}</div><div class="big">{_e(v)}</div><div class="note">{_e(n)}</div></div>'
        for t, v, n in cards) + "</div>"


def _figures(rep: Any, figures: Optional[bool]) -> str:
    if figures is False or (figures is None and not matplotlib_available()):
        why = "not asked for" if figures is False else \
            "matplotlib (the optional extra [plot]: pip install 'dpaccount[plot]') is not installed"
        return f'<p class="warn">Figures omitted ({_e(why)}): the tables below hold every number.</p>'
    if figures and not matplotlib_available():
        raise ImportError("figures need matplotlib, the optional extra [plot]: pip install 'dpaccount[plot]'")
    svgs = [s for s in (tradeoff_svg(rep), roc_svg(rep)) if s is not None]
    if not svgs:
        return '<p class="note">No trade-off curve (see "Not available" below).</p>'
    return '<div class="figs">' + "".join(f"<figure>{s}</figure>" for s in svgs) + "</div>"


def render(rep: Any, figures: Optional[bool] = None) -> str:
    """The HTML text of the report card ``rep`` (a ``PrivacyReport``)."""
    parts = [f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
             f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
             f'<meta name="viewport" content="width=device-width, initial-scale=1">'
             f"<title>Privacy report: {_e(rep.title)}</title><style>{_CSS}</style></head><body>",
             f"<h1>Privacy report</h1><p class=\"sub\">{_e(rep.title)}</p>",
             _summary(rep),
             "<h2>The mechanism</h2>",
             _table(None, [["description", rep.title], ["structured name", rep.name],
                               ["neighbouring relation", rep.relation]], text_cols=2)]
    if rep.spec is not None:
        parts.append(f"<details><summary>its spec (dpaccount.from_spec reads it back)</summary>"
                     f"<pre>{_e(rep.spec)}</pre></details>")
    parts += ["<h2>ε(δ): (ε, δ)-differential privacy</h2>",
              _table(["δ", "ε lower", "ε upper", ""], [[f"{r.at:g}", *_interval(r)] for r in rep.epsilon]),
              '<p class="note">The exact ε lies between the two ends; the upper end is the guarantee.</p>',
              "<h2>Trade-off curve and attack success</h2>", _figures(rep, figures),
              '<p class="note">Any membership-inference test at false-positive rate α misses the record with '
              "probability at least β(α) (f-DP, over both orders of every pair of neighbouring datasets); "
              "its true-positive rate is at most 1 − β(α).</p>",
              _table(["FPR", "TPR lower", "TPR upper", ""], [[f"{r.at:g}", *_interval(r)] for r in rep.tpr])]
    if rep.advantage is not None:
        parts.append(_table(["", "lower", "upper", ""], [["advantage: max TPR − FPR = δ(0)",
                                                           *_interval(rep.advantage)]], text_cols=1))
    parts += ["<h2>Bayes risk: the best guess's error</h2>",
              '<p class="note">An attacker who knows the prior π that the record is in (or that a binary '
              "attribute is 1) and sees one output errs with probability at least the lower end; min(π, 1 − π) "
              "is the error of a guess without the output.</p>",
              _table(["prior π", "without the output", "risk lower", "risk upper", ""],
                     [[f"{r.at:g}", fmt(min(r.at, 1 - r.at), up=False), *_interval(r)] for r in rep.bayes_risk]),
              "<h2>Method and accuracy</h2>",
              _table(None, [["methods", ", ".join(rep.methods) or "—"],
                                ["accuracy (relative width of each interval)", f"{rep.accuracy:g}"],
                                ["grid steps", ", ".join(f"{s:.3g}" for s in rep.steps) or "none (closed forms)"],
                                ["certified μ (GDP, tail 10⁻⁶)", "—" if rep.mu is None else fmt(rep.mu)]],
                     text_cols=2),
              "<h2>What is approximate</h2>"]
    parts.append("<ul>" + "".join(f"<li>{_e(a)}</li>" for a in rep.approximate) + "</ul>" if rep.approximate
                 else "<p>Nothing: every number in the tables is a certified bound.</p>")
    if rep.unavailable:
        parts += ["<h2>Not available</h2>",
                  "<ul>" + "".join(f"<li>{_e(u)}</li>" for u in rep.unavailable) + "</ul>"]
    parts.append('<p class="note">dpaccount privacy report. Definitions: docs/theory.rst (attack risk); '
                 "Kulynych, Gomez et al. 2024 (arXiv 2407.02191); Dong, Roth &amp; Su 2022.</p></body></html>\n")
    return "".join(parts)
