"""The docs site (docs/*.rst) says what the code does.

* Every python block of a page runs: the page's blocks in order, in one
  namespace, in this process (fast) and a scratch directory. Blocks
  captioned with a peer library's name (the "coming from" pages, where the
  dpaccount side is captioned "dpaccount") run in their
  own namespace where that library is installed, and are skipped otherwise.
* Every ``dpaccount`` command in a bash block runs (exit code 0), after the
  page's python blocks, and every output shown in a literal block (``::``)
  is what those commands print.
* The API page documents exactly ``dpaccount.__all__``.
* The Markdown converter of ``docs/_ext`` (benchmarks/README.md and the
  design notes on the site) gives reST that docutils reads without a warning,
  whatever the text; building the site itself is ``tox -e docs``.
"""
import importlib.util
import pathlib
import re
import shlex
import sys

import pytest

import dpaccount
from doc_blocks import code_blocks
from dpaccount.cli import main

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs"
PAGES = sorted(DOCS.glob("*.rst"))
PEERS = {"autodp": "autodp", "Opacus": "opacus", "dp_accounting": "dp_accounting", "riskcal": "riskcal"}  # caption -> module


def _run(blocks, page):
    namespace = {"__name__": "__main__"}
    for b in blocks:
        exec(compile(b.code, f"{page}:{b.line}", "exec"), namespace)  # a failure points at the page's line


def _shown_outputs(text):
    """The literal blocks of a page: the indented lines after a paragraph ending in '::'."""
    lines, out = text.splitlines(), []
    for i, line in enumerate(lines):
        if line.rstrip().endswith("::") and not line.lstrip().startswith(".."):
            j = i + 1
            while j < len(lines) and (not lines[j].strip() or lines[j].startswith(" ")):
                if lines[j].strip():
                    out.append(lines[j].strip())
                j += 1
    return out


def test_the_pages_have_python_and_bash_blocks_only():
    blocks = [b for page in PAGES for b in code_blocks(page)]
    assert {b.lang for b in blocks} <= {"python", "bash"}, "a block in a language no test runs"
    assert {b.caption for b in blocks if b.lang == "python"} <= set(PEERS) | {"", "dpaccount"}
    assert sum(b.lang == "python" for b in blocks) >= 10


@pytest.mark.parametrize("page", [p for p in PAGES if code_blocks(p)], ids=lambda p: p.name)
def test_the_page_runs_as_shown(page, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _run([b for b in code_blocks(page) if b.lang == "python" and b.caption not in PEERS], page.name)
    commands = [line.split("#")[0].strip() for b in code_blocks(page) if b.lang == "bash"
                for line in b.code.splitlines() if line.startswith("dpaccount ")]
    capsys.readouterr()
    printed = []
    for command in commands:
        if " plot " in f" {command} " and importlib.util.find_spec("matplotlib") is None:
            continue  # needs the extra [plot]
        code = main(shlex.split(command)[1:])
        out = capsys.readouterr()
        assert code == 0, f"{command}: {out.err}"
        printed.append(out.out)
    for line in _shown_outputs(page.read_text(encoding="utf-8")):
        assert line == "..." or line in "".join(printed), f"{page.name} shows {line!r}, not printed"


@pytest.mark.parametrize("page,caption", [(p, c) for p in PAGES for c in sorted({b.caption for b in code_blocks(p)})
                                          if c in PEERS], ids=lambda x: getattr(x, "name", x))
def test_the_peer_blocks_run_where_the_peer_is_installed(page, caption, tmp_path, monkeypatch):
    if importlib.util.find_spec(PEERS[caption]) is None:
        pytest.skip(f"{PEERS[caption]} is not installed")
    monkeypatch.chdir(tmp_path)
    _run([b for b in code_blocks(page) if b.lang == "python" and b.caption == caption], page.name)


def test_the_api_page_documents_the_public_api_exactly():
    text = (DOCS / "api.rst").read_text(encoding="utf-8")
    documented = re.findall(r"^\.\. (?:autoclass|autofunction|autoexception|data):: (\w+)", text, re.M)
    assert len(documented) == len(set(documented))
    assert set(documented) == set(dpaccount.__all__)


# -- the Markdown converter -----------------------------------------------------

TRICKY = """# Title with `code` and *stars*

A paragraph with a_b, x|y, 2 * 3, `a`b` and x`y`z and **bold** and *it* and
   an indented continuation, [a link](https://example.org) and [a file](bench.py),
trailing colons::

- item one
  continued
- item two with *x and _y
1. numbered

-not a list, >>> not a doctest

>>> neither this

| a | b | c |
|---|--:|---|
| `x` | 1 * 2 | |
| short |

```weird-lang
code | here *
```

## Second heading

| | ratio |
|---|---:|
| x | 1× |
"""


def test_the_markdown_converter_gives_clean_rest():
    docutils_core = pytest.importorskip("docutils.core")
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        from dpaccount_docs import markdown_to_rst
    finally:
        sys.path.remove(str(DOCS / "_ext"))
    rst = "Page\n====\n\n" + markdown_to_rst(TRICKY)
    tree = docutils_core.publish_doctree(rst, settings_overrides={"report_level": 1, "halt_level": 1})
    text = tree.astext()
    for words in ("a_b, x|y, 2 * 3", "an indented continuation", "a link", "a file", "trailing colons:",
                  "-not a list, >>> not a doctest", ">>> neither this", "code | here *", "1 * 2", "1×"):
        assert words in " ".join(text.split()), words
    assert "https://example.org" in rst and "bench.py" not in rst  # a repository link keeps its label only
