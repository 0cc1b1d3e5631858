"""What the command line shows: numbers rounded to the safe side, tables,
JSON and one-line messages on stderr (the progress bar: ``progress.py``).

A printed bound is still a bound: ``fmt`` rounds an upper bound up and a
lower bound down. Results go to stdout; progress, warnings and errors to
stderr, one line each (the bar is redrawn in place on a terminal).
"""
import contextlib
import re
import sys
import textwrap

from .. import jsontext
from ..cards.describe import fmt, title_of  # noqa: F401 (the command line's numbers and titles)


class UsageError(ValueError):
    """Bad command-line input (exit code 2)."""


# the library's Python words in a message, and the command line's (``cli_words``)
_CLI_WORDS = (
    (re.compile(r"bounds=\(([^,()]+), ([^()]+)\)"), r"--range \1 \2"),
    (re.compile(r"counts\[\d+\]"), "--steps"),
    (re.compile(r"method='(\w+)' or '(\w+)'"), r"--method \1 or \2"),
    (re.compile(r"method='(\w+)'"), r"--method \1"),
    (re.compile(r"\bε\b"), "epsilon"), (re.compile(r"\bδ\b"), "delta"),
    (re.compile(r"\b(max_batch_size|batch_size|dataset_size)\b"), lambda g: "--" + g[1].replace("_", "-")),
    (re.compile(r"sampling='([\w-]+)'"), r"--sampling \1"),
)


def cli_words(message):
    """A library message in the command line's words: its flags for the Python
    arguments they set (``bounds=(a, b)`` is ``--range a b``, ``counts[0]`` is
    ``--steps``, ``method='rdp'`` is ``--method rdp``)."""
    text = str(message)
    for pattern, words in _CLI_WORDS:
        text = pattern.sub(words, text)
    return text


def print_table(lines):
    """Rows of cells (the first the header) in aligned columns."""
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    for line in lines:
        print("  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip())


def print_note(text, width=100):
    """A paragraph under a table, wrapped."""
    print(textwrap.fill(text, width))


def print_json(obj):
    """``obj`` as JSON on stdout; an infinite ε is the string "inf" (``jsontext.py``)."""
    print(jsontext.dumps(obj))


def result_document(m, query, rows=None, **extra):
    """The JSON document of a query: the mechanism, its spec (None for a
    mechanism without one), the query, ``extra`` fields, then the ``rows``."""
    try:
        spec = m.to_spec()
    except TypeError:
        spec = None
    return {"mechanism": m.name, "spec": spec, "query": query, **extra,
            **({} if rows is None else {"results": rows})}


@contextlib.contextmanager
def below(bar):
    """Results (stdout) and warnings (stderr) start on a line of their own: a
    bar drawn on the terminal (``progress.StderrBar``, which keeps its own
    stream) is erased before each of their writes."""
    if bar is None or not bar.tty:
        yield
        return
    real = sys.stdout, sys.stderr

    class _Below:
        def __init__(self, stream):
            self.stream = stream

        def write(self, text):
            bar.clear()
            return self.stream.write(text)

        def __getattr__(self, name):
            return getattr(self.stream, name)
    sys.stdout, sys.stderr = _Below(real[0]), _Below(real[1])
    try:
        yield
    finally:
        sys.stdout, sys.stderr = real


def say(kind, message):
    """One line on stderr: ``dpaccount: <kind>: <message>`` (whitespace folded)."""
    print(f"dpaccount: {kind}: {' '.join(str(message).split())}", file=sys.stderr)


def show_warning(message, category, filename, lineno, file=None, line=None):
    """``warnings.showwarning`` for the command line: one line, no source location."""
    say("warning", message)
