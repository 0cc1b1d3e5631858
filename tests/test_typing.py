"""The package says it is typed (``Typing :: Typed``, ``dpaccount/py.typed``): every
name exported by ``dpaccount`` and by ``dpaccount.integrations``' modules is annotated
completely (each parameter but self/cls, and the return) — functions, constructors,
``__call__`` and every public method and property of an exported class — and mypy
finds no error in the package (``[tool.mypy]`` in pyproject.toml)."""
import importlib
import inspect
import pathlib
import subprocess
import sys

import pytest

import dpaccount

SPECIAL = ("__init__", "__new__", "__call__")  # the dunders a user calls (a constructor, a transformer)
INTEGRATIONS = {"dpaccount.integrations.dp_accounting": "dp_accounting", "dpaccount.integrations.opacus": "opacus"}


def missing(fn, bound):
    """The parameters of ``fn`` without an annotation (``bound``: its first, self or cls,
    is exempt), and "return" if the return is not annotated. Decorators that keep
    ``__wrapped__`` are seen through."""
    sig = inspect.signature(fn)
    params = list(sig.parameters.values())[1 if bound else 0:]
    out = [p.name for p in params if p.annotation is inspect.Parameter.empty]
    return out + (["return"] if sig.return_annotation is inspect.Signature.empty else [])


def members(cls, package="dpaccount."):
    """(name, function or None for a lambda, bound) of the public surface of ``cls``: the
    methods, properties and ``SPECIAL`` dunders that dpaccount's classes in its MRO write
    (a named tuple's generated ``__new__`` aside: its fields are checked instead)."""
    seen = {"__new__"} if issubclass(cls, tuple) else set()
    for klass in cls.__mro__:
        if not klass.__module__.startswith(package):
            continue  # a host library's interface (an integration's base class), the standard library's
        for name, attr in vars(klass).items():
            if name in seen or (name.startswith("_") and name not in SPECIAL):
                continue
            seen.add(name)
            bound = not isinstance(attr, staticmethod)
            fn = attr.fget if isinstance(attr, property) else getattr(attr, "__func__", attr)
            if not inspect.isfunction(fn) or not fn.__module__.startswith(package):
                continue  # not a function, or not written here (Enum's machinery)
            yield name, (None if fn.__name__ == "<lambda>" else fn), bound


def unannotated(label, obj, package="dpaccount."):
    """'label.member: missing [...]' for each incompletely annotated part of ``obj``."""
    if inspect.isclass(obj):
        if issubclass(obj, tuple) and hasattr(obj, "_fields"):
            fields = [f for f in obj._fields if f not in getattr(obj, "__annotations__", {})]
            if fields:
                yield f"{label}: fields {fields} not annotated"
        for name, fn, bound in members(obj, package):
            if fn is None:
                yield f"{label}.{name}: a lambda property (no annotation possible)"
            elif missing(fn, bound):
                yield f"{label}.{name}: missing {missing(fn, bound)}"
    elif inspect.isfunction(obj) or inspect.isfunction(getattr(obj, "__wrapped__", None)):
        if missing(obj, False):
            yield f"{label}: missing {missing(obj, False)}"


def test_every_name_dpaccount_exports_is_annotated():
    gaps = [gap for name in dpaccount.__all__ for gap in unannotated(f"dpaccount.{name}", getattr(dpaccount, name))]
    assert not gaps, "exported but not completely annotated:\n" + "\n".join(gaps)


@pytest.mark.parametrize("module,host", INTEGRATIONS.items())
def test_every_public_name_of_the_integrations_is_annotated(module, host):
    pytest.importorskip(host, reason=f"{module} needs {host}")
    mod = importlib.import_module(module)
    public = [(name, obj) for name, obj in vars(mod).items()
              if not name.startswith("_") and getattr(obj, "__module__", None) == module]
    assert public
    gaps = [gap for name, obj in public for gap in unannotated(f"{module}.{name}", obj)]
    assert not gaps, "public but not completely annotated:\n" + "\n".join(gaps)


def test_the_checker_finds_what_is_missing():
    """A planted gap of each kind is reported: a parameter, a return, a method, a property."""
    def f(x: int, y) -> int:
        return x

    def g(x: int):
        return x

    class C:
        def __init__(self, a: int) -> None:
            pass

        def method(self, b):
            return b

        shown = property(lambda self: 1)

        @property
        def typed(self) -> int:
            return 1

        def _private(self, c):
            return c

    assert missing(f, False) == ["y"] and missing(g, False) == ["return"]
    assert sorted(unannotated("C", C, C.__module__)) == ["C.method: missing ['b', 'return']",
                                           "C.shown: a lambda property (no annotation possible)"]


def test_mypy_finds_no_error(request, tmp_path):
    pytest.importorskip("mypy", reason="mypy is not installed (pip install 'dpaccount[typecheck]')")
    root = pathlib.Path(dpaccount.__file__).parent.parent
    cache = getattr(request.config, "cache", None)  # absent under -p no:cacheprovider (CI)
    cache = cache.mkdir("mypy") if cache is not None else tmp_path
    run = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(cache), "dpaccount"],
                         cwd=root, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
