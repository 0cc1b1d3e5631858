"""Two directives for the dpaccount docs, so that nothing is copied by hand:

``.. dpaccount-help:: [COMMAND]``
    the ``--help`` text of the command line (``dpaccount COMMAND --help``),
    as the installed code prints it.

``.. markdown:: PATH [PATH ...]``
    a Markdown file of the repository (``benchmarks/README.md``,
    ``docs/architecture.md``), converted to reStructuredText on the fly:
    headings (the first as a section, the others as rubrics), paragraphs and
    list items (each joined into one line), fenced code, pipe tables
    (``csv-table``), inline code, bold, italics and links. All other text is
    escaped, so a file edited elsewhere cannot break a ``-W`` build. A glob
    pattern names every file it matches; ``:optional:`` accepts none.

Pure functions (``markdown_to_rst``) are tested in tests/test_docs.py.
"""
import contextlib
import csv
import glob
import io
import os
import re

from docutils import nodes
from docutils.parsers.rst import Directive, directives

FENCE = re.compile(r"^(`{3,}|~{3,})\s*([\w+-]*)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*$")
ITEM = re.compile(r"^(\s*)([*+-]|\d+[.)])\s+(.*)$")
INLINE = re.compile(r"(`+)(.+?)\1|\*\*(.+?)\*\*|(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])|!?\[([^\]]+)\]\(([^)\s]+)\)")
SPECIAL = re.compile(r"([\\*`_|])")
LEXERS = {"python", "bash", "sh", "console", "json"}


def escape(text):
    """Plain text for reST: every character with a meaning escaped."""
    return SPECIAL.sub(r"\\\1", text)


def inline(text):
    """Markdown inline markup to reST; everything else escaped."""
    out, pos = [], 0
    for m in INLINE.finditer(text):
        out.append(escape(text[pos:m.start()]))
        code, strong, emphasis, label, url = m.group(2), m.group(3), m.group(4), m.group(5), m.group(6)
        if code is not None:
            code = code.strip()
            markup = f"``{code}``" if "``" not in code and not code.endswith("`") else None
        elif strong is not None:
            markup = f"**{escape(strong)}**"
        elif emphasis is not None:
            markup = f"*{escape(emphasis)}*"
        elif re.match(r"https?://", url):  # an anonymous link: no target names to clash
            markup = f"`{escape(label)} <{url}>`__"
        else:  # a link into the repository: its label (the site has no such page)
            markup = None
        if markup is None:
            out.append(escape(code) if code is not None else inline(label))
        else:  # reST wants markup apart from the words around it: an escaped space joins them
            before = "\\ " if m.start() and text[m.start() - 1].isalnum() else ""
            after = "\\ " if m.end() < len(text) and text[m.end()].isalnum() else ""
            out.append(before + markup + after)
        pos = m.end()
    out.append(escape(text[pos:]))
    line = "".join(out)
    if line[:1] and not line[0].isalpha() and line[0] not in "\\*`":  # those are markup made here
        line = "\\" + line  # a leading -, +, #, digit, > ... would start a list, a block or a doctest
    return line[:-2] + ":\\:" if line.endswith("::") else line


def _table(lines):
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in lines]
    head, body = rows[0], [r for r in rows[2:]]
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    for row in [head] + body:
        writer.writerow([inline(c) for c in (row + [""] * len(head))[:len(head)]])
    return [".. csv-table::", "   :header-rows: 1", ""] + ["   " + r for r in buf.getvalue().splitlines()] + [""]


def markdown_to_rst(text, title_char="-"):
    """reST for the Markdown ``text``: its first heading a section title
    underlined with ``title_char``, later headings rubrics."""
    lines, out, i, titled = text.splitlines(), [], 0, False
    while i < len(lines):
        line = lines[i]
        fence = FENCE.match(line.strip())
        if fence:
            end = next((j for j in range(i + 1, len(lines)) if lines[j].strip().startswith(fence.group(1))),
                       len(lines))
            lang = fence.group(2) if fence.group(2) in LEXERS else "text"
            body = [("   " + x).rstrip() for x in lines[i + 1:end]] or ["   "]
            out += [f".. code-block:: {lang}", ""] + body + [""]
            i = end + 1
            continue
        heading = HEADING.match(line)
        if heading:
            title = inline(heading.group(2))
            if not titled:
                out += [title, title_char * max(len(title), 4), ""]
                titled = True
            else:
                out += [f".. rubric:: {title}", ""]
            i += 1
            continue
        if line.strip().startswith("|") and i + 1 < len(lines) and re.match(r"^\s*\|?[\s:|-]+\|?\s*$", lines[i + 1]) \
                and "-" in lines[i + 1]:
            end = i
            while end < len(lines) and lines[end].strip().startswith("|"):
                end += 1
            out += _table(lines[i:end])
            i = end
            continue
        if not line.strip() or re.match(r"^\s*([-*_])(\s*\1){2,}\s*$", line):  # blank, or a rule
            i += 1
            continue
        # a paragraph or a list item: up to a blank line, a new item, a heading, a fence or a table
        item = ITEM.match(line)
        words = [item.group(3) if item else line.strip()]
        i += 1
        while i < len(lines) and lines[i].strip() and not ITEM.match(lines[i]) and not HEADING.match(lines[i]) \
                and not FENCE.match(lines[i].strip()) and not lines[i].strip().startswith("|"):
            words.append(lines[i].strip())
            i += 1
        text_ = inline(" ".join(words))
        if item:
            marker = "#." if item.group(2)[0].isdigit() else "*"
            out += [f"{marker} {text_}"]
            following = ITEM.match(lines[i]) if i < len(lines) else None
            if following and following.group(2)[0].isdigit() == (marker == "#."):
                continue  # the same list
        else:
            out += [text_]
        out.append("")
    return "\n".join(out) + "\n"


class Markdown(Directive):
    required_arguments = 1
    final_argument_whitespace = True
    option_spec = {"optional": directives.flag, "title-char": directives.unchanged}

    def run(self):
        env = self.state.document.settings.env
        here = os.path.dirname(env.doc2path(env.docname))
        paths = []
        for pattern in self.arguments[0].split():
            found = sorted(glob.glob(os.path.join(here, pattern)))
            if not found and "optional" not in self.options:
                raise self.error(f"markdown: no file matches {pattern!r}")
            paths += [p for p in found if p not in paths]
        for path in reversed(paths):  # each inserted ahead of the rest
            env.note_dependency(path)
            with open(path, encoding="utf-8") as f:
                rst = markdown_to_rst(f.read(), self.options.get("title-char", "-"))
            self.state_machine.insert_input(rst.splitlines(), path)
        return []


class Help(Directive):
    optional_arguments = 1

    def run(self):
        from dpaccount.cli import main
        argv = ([self.arguments[0]] if self.arguments else []) + ["--help"]
        buf = io.StringIO()
        old = os.environ.get("COLUMNS")
        os.environ["COLUMNS"] = "100"  # argparse wraps to the terminal: fix it
        try:
            with contextlib.redirect_stdout(buf):
                code = main(argv)
        finally:
            if old is None:
                del os.environ["COLUMNS"]
            else:
                os.environ["COLUMNS"] = old
        if code != 0:
            raise self.error(f"dpaccount {' '.join(argv)} exited {code}")
        block = nodes.literal_block(buf.getvalue(), buf.getvalue())
        block["language"] = "text"
        return [block]


def setup(app):
    app.add_directive("markdown", Markdown)
    app.add_directive("dpaccount-help", Help)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
