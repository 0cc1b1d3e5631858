"""The code blocks of the documentation, for the tests that run them
(test_readme.py, test_docs.py): Markdown's fenced blocks (```lang) and
reStructuredText's ``.. code-block:: lang`` directives, at any indentation
(inside a list or a table too), in document order, with their ``:caption:``
and line number."""
import re
import textwrap
from typing import NamedTuple

FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
DIRECTIVE = re.compile(r"^([\s*-]*)\.\. code-block::\s*(\S*)\s*$")


class Block(NamedTuple):
    lang: str
    code: str
    caption: str
    line: int


def code_blocks(path):
    """The code blocks of the file ``path`` (a pathlib.Path; .md or .rst)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".md":
        return [Block(m.group(1), m.group(2), "", text.count("\n", 0, m.start()) + 1) for m in FENCE.finditer(text)]
    lines, out = text.splitlines(), []
    for i, line in enumerate(lines):
        m = DIRECTIVE.match(line)
        if not m:
            continue
        column, j, caption = len(m.group(1)), i + 1, ""
        while j < len(lines) and lines[j].strip().startswith(":") and _indent(lines[j]) > column:  # options
            if lines[j].strip().startswith(":caption:"):
                caption = lines[j].strip()[len(":caption:"):].strip()
            j += 1
        body = []
        while j < len(lines) and (not lines[j].strip() or _indent(lines[j]) > column):
            body.append(lines[j])
            j += 1
        out.append(Block(m.group(2), textwrap.dedent("\n".join(body)).strip("\n") + "\n", caption, i + 1))
    return out


def python_script(blocks, source):
    """The python blocks, in order, as one script; each headed by where it comes from."""
    return "".join(f"# --- {source}, python block at line {b.line}\n{b.code}\n" for b in blocks if b.lang == "python")


def _indent(line):
    return len(line) - len(line.lstrip())
