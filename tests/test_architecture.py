"""The package layout of docs/architecture.md, enforced.

Every module of dpaccount belongs to one unit (a top-level module or a
subpackage), and a unit imports only the units below it: representations
never import mechanisms or transformers, converters import no
representation, and so on (``ALLOWED``: the layer table of
docs/architecture.md).
Imports inside functions count too. The table is read from the doc itself,
so the picture and the check cannot drift apart. The top-level namespace
shows the public API only.
"""
import ast
import pathlib
import re

import pytest

import dpaccount

PACKAGE = pathlib.Path(dpaccount.__file__).parent

DOC = PACKAGE.parent / "docs" / "architecture.md"


def allowed_from_doc():
    """unit -> the units it may import, read from the layer table of the doc
    (rows ``| `unit` | what lives there | `a`, `b` |``)."""
    text = DOC.read_text()
    table = text[text.index("## Layers"):]
    out = {}
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and re.fullmatch(r"`\w+`", cells[0]):
            out[cells[0].strip("`")] = set(re.findall(r"`(\w+)`", cells[2]))
        elif out and not line.startswith("|"):
            break
    return out


ALLOWED = allowed_from_doc()


def unit_of(dotted):
    """'dpaccount.pld.grids.grid' -> 'pld'; 'dpaccount.mechanism' -> 'mechanism'."""
    parts = dotted.split(".")
    assert parts[0] == "dpaccount", dotted
    return parts[1] if len(parts) > 1 else "__init__"


def modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        dotted = ".".join(rel.parts)
        if dotted.endswith(".__init__"):
            dotted = dotted[: -len(".__init__")]
        yield dotted, path


def imports_of(dotted, path):
    """The dpaccount modules that ``path`` imports (absolute dotted names)."""
    is_package = path.name == "__init__.py"
    package = dotted if is_package else dotted.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] == "dpaccount")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "dpaccount":
                continue
            if node.module is None:  # from . import validation: each name is a module
                out.update(f"{target}.{a.name}" for a in node.names)
            else:
                out.add(target)
    return out


MODULES = list(modules())


def test_every_module_belongs_to_a_unit_of_the_picture():
    units = {unit_of(d) for d, _ in MODULES} - {"__init__"}
    assert units == set(ALLOWED), "classify new top-level modules/subpackages in ALLOWED and the docs"


@pytest.mark.parametrize("dotted,path", MODULES, ids=[d for d, _ in MODULES])
def test_imports_only_go_down_the_layers(dotted, path):
    unit = unit_of(dotted)
    if unit == "__init__":
        return  # the package's face imports what it exports
    wrong = sorted(m for m in imports_of(dotted, path)
                   if unit_of(m) != unit and unit_of(m) not in ALLOWED[unit])
    assert not wrong, f"{dotted} ({unit}) imports {wrong}; allowed: {sorted(ALLOWED[unit])}"


def test_the_import_checker_sees_relative_function_level_and_absolute_imports(tmp_path):
    """The checker itself, on a module that breaks the rule in each way."""
    bad = tmp_path / "bad.py"
    bad.write_text("from ..mechanism import Mechanism\n"
                   "def f():\n    from ..transformers.composition import Composition\n"
                   "import dpaccount.mechanisms.standard\n"
                   "from .. import validation as v\n")
    found = imports_of("dpaccount.pld.bad", bad)
    assert found == {"dpaccount.mechanism", "dpaccount.transformers.composition",
                     "dpaccount.mechanisms.standard", "dpaccount.validation"}


def test_the_doc_opens_with_the_tree_and_its_table_is_layered():
    """The doc's first figure is the folder tree, every unit in the table has a
    place in it, and the table has no cycle (a layering exists)."""
    text = DOC.read_text()
    assert text.index("dpaccount/\n├──") < text.index("## Layers")
    for unit in ALLOWED:
        assert f"── {unit}" in text, unit
    order, left = [], dict(ALLOWED)
    while left:
        ready = [u for u, deps in left.items() if deps <= set(order)]
        assert ready, f"the allowed imports have a cycle among {sorted(left)}"
        order.extend(sorted(ready))
        for u in ready:
            del left[u]


def test_top_level_namespace_is_the_public_api():
    public = set(dpaccount.__all__)
    shown = {name for name in dir(dpaccount) if not name.startswith("__")}
    assert shown == public
    for name in public:
        assert getattr(dpaccount, name) is not None
