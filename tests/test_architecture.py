"""The package layout of docs/architecture.md, enforced.

Every module of dpaccount belongs to one unit (a top-level module or a
subpackage), and a unit imports only the units below it: representations
never import mechanisms or transformers, converters import no
representation, and so on (``ALLOWED``: the layer table of
docs/architecture.md).
Imports inside functions count too. The table is read from the doc itself,
so the picture and the check cannot drift apart. The top-level namespace
shows the public API only. Inside ``pld/`` the sub-folders follow the order
data flows (pairs → grids → allocation → profiles: the doc's second table),
no import cycle is left among pld's modules, and no module anywhere imports
another module's private (``_x``) names.
"""
import ast
import pathlib
import re

import pytest

import dpaccount

PACKAGE = pathlib.Path(dpaccount.__file__).parent

DOC = PACKAGE.parent / "docs" / "architecture.md"


def allowed_from_doc(heading="## Layers"):
    """unit -> the units it may import, read from the table under ``heading`` in
    the doc (rows ``| `unit` | what lives there | `a`, `b` |``)."""
    text = DOC.read_text()
    table = text[text.index(heading):]
    out = {}
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and re.fullmatch(r"`\w+`", cells[0]):
            out[cells[0].strip("`")] = set(re.findall(r"`(\w+)`", cells[2]))
        elif out and not line.startswith("|"):
            break
    return out


ALLOWED = allowed_from_doc()
PLD_ALLOWED = allowed_from_doc("## Inside pld/")


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


def imports_of(dotted, path, source=None):
    """The dpaccount modules that ``path`` imports (absolute dotted names)."""
    return {target for target, _ in imported_names(dotted, path, source)}


def imported_names(dotted, path, source=None):
    """(module, name) for each ``from module import name`` of a dpaccount module in
    ``path`` (name None for ``import module`` and for ``from package import module``)."""
    is_package = path.name == "__init__.py"
    package = dotted if is_package else dotted.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text() if source is None else source)):
        if isinstance(node, ast.Import):
            out.update((a.name, None) for a in node.names if a.name.split(".")[0] == "dpaccount")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "dpaccount":
                continue
            if node.module is None:  # from . import validation: each name is a module
                out.update((f"{target}.{a.name}", None) for a in node.names)
            else:
                out.update((target, a.name) for a in node.names)
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


def pld_unit_of(dotted):
    """'dpaccount.pld.grids.grid' -> 'grids'; None outside pld's sub-folders."""
    parts = dotted.split(".")
    return parts[2] if len(parts) > 3 and parts[1] == "pld" else None


def pld_order_violations(dotted, imports, allowed=None):
    """The imports of a pld module that go against the sub-folder order."""
    allowed = PLD_ALLOWED if allowed is None else allowed
    unit = pld_unit_of(dotted)
    if unit is None:
        return []
    return sorted(m for m in imports
                  if pld_unit_of(m) not in (None, unit) and pld_unit_of(m) not in allowed[unit])


def private_imports(dotted, pairs):
    """``from module import _x`` of another module (dunder names aside)."""
    return sorted(f"{module}.{name}" for module, name in pairs
                  if name and name.startswith("_") and not name.startswith("__") and module != dotted)


def cycles(graph):
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_pld_table_names_every_sub_folder_and_is_layered():
    folders = {p.name for p in (PACKAGE / "pld").iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders == set(PLD_ALLOWED)
    assert PLD_ALLOWED["pairs"] == set()
    assert "profiles" not in PLD_ALLOWED["allocation"] | PLD_ALLOWED["grids"]
    assert "allocation" not in PLD_ALLOWED["grids"]


@pytest.mark.parametrize("dotted,path", [(d, p) for d, p in MODULES if pld_unit_of(d)],
                         ids=[d for d, _ in MODULES if pld_unit_of(d)])
def test_pld_sub_folders_import_in_the_order_data_flows(dotted, path):
    wrong = pld_order_violations(dotted, imports_of(dotted, path))
    assert not wrong, f"{dotted} imports {wrong}; allowed: {sorted(PLD_ALLOWED[pld_unit_of(dotted)])}"


def test_no_import_cycle_among_pld_modules():
    names = {d for d, _ in MODULES}
    graph = {d: {m for m in imports_of(d, p) if m in names and m.startswith("dpaccount.pld.")}
             for d, p in MODULES if d.startswith("dpaccount.pld.")}
    assert cycles(graph) == []


@pytest.mark.parametrize("dotted,path", MODULES, ids=[d for d, _ in MODULES])
def test_no_module_imports_another_modules_private_names(dotted, path):
    wrong = private_imports(dotted, imported_names(dotted, path))
    assert not wrong, f"{dotted} imports private names {wrong}: make them public where they are defined"


_OWN_ROUNDOFF = re.compile(r"finfo\((?:float|np\.float64)\)\.eps|float_info\.epsilon|2\.0 \*\* -5[23]\b")


def own_roundoff(source):
    """The lines of ``source`` that spell a unit roundoff of their own (not ``numerics``')."""
    return [line.strip() for line in source.splitlines() if _OWN_ROUNDOFF.search(line)]


@pytest.mark.parametrize("dotted,path", MODULES, ids=[d for d, _ in MODULES])
def test_one_unit_roundoff(dotted, path):
    """Every error bound counts in ``numerics.ULP_OF_ONE`` (or its half, ``UNIT_ROUNDOFF``)."""
    if dotted != "dpaccount.numerics":
        assert own_roundoff(path.read_text(encoding="utf-8")) == [], f"{dotted}: import it from dpaccount.numerics"


def test_the_checkers_catch_planted_violations(tmp_path):
    """Each rule, on a synthetic module that breaks it: a pair importing a grid and a
    profile, a grid importing random allocation, a private name, a cycle."""
    src = ("from ..grids.grid import PLDGrid\n"
           "def f():\n    from ..profiles.plan import _private_step\n"
           "from dpaccount.pld.allocation.epoch import allocation_pair\n"
           "from .base import __doc__, _U\n")
    path = tmp_path / "bad.py"
    found = imported_names("dpaccount.pld.pairs.bad", path, src)
    modules_ = {m for m, _ in found}
    assert pld_order_violations("dpaccount.pld.pairs.bad", modules_) == [
        "dpaccount.pld.allocation.epoch", "dpaccount.pld.grids.grid", "dpaccount.pld.profiles.plan"]
    assert pld_order_violations("dpaccount.pld.grids.bad", {"dpaccount.pld.allocation.sum_law"}) == [
        "dpaccount.pld.allocation.sum_law"]
    assert pld_order_violations("dpaccount.pld.profiles.ok", {"dpaccount.pld.allocation.sum_law",
                                                              "dpaccount.lazy"}) == []
    assert private_imports("dpaccount.pld.pairs.bad", found) == [
        "dpaccount.pld.pairs.base._U", "dpaccount.pld.profiles.plan._private_step"]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
    assert own_roundoff("x = 1\n_U = np.finfo(float).eps\nv = 2.0 ** -53\n") == [
        "_U = np.finfo(float).eps", "v = 2.0 ** -53"]
