"""Packaging (issues 32, 38): a non-editable install ships every subpackage, the licence and
py.typed, with the metadata a package index shows; the source distribution carries the docs,
examples and tests the README points to."""
import tarfile
import pathlib
import subprocess
import sys
import zipfile

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_the_metadata_names_licence_authors_and_classifiers():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "Apache-2.0" and project["license-files"] == ["LICENSE"]
    assert "Apache License" in (ROOT / "LICENSE").read_text()[:200]
    assert project["authors"] and any(c.startswith("Programming Language :: Python :: 3") for c in project["classifiers"])
    assert "Typing :: Typed" in project["classifiers"] and (ROOT / "dpaccount" / "py.typed").exists()


@pytest.mark.slow
def test_the_wheel_holds_every_module_the_licence_and_py_typed(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "-w", str(tmp_path), str(ROOT)], check=True)
    wheel, = tmp_path.glob("dpaccount-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    sources = {str(p.relative_to(ROOT)) for p in (ROOT / "dpaccount").rglob("*.py")}
    assert sources <= names, sorted(sources - names)
    assert "dpaccount/py.typed" in names and any(n.endswith("licenses/LICENSE") for n in names)


@pytest.mark.slow
def test_the_sdist_carries_the_docs_examples_and_tests(tmp_path):
    build = f"from setuptools import build_meta; build_meta.build_sdist({str(tmp_path)!r})"  # the PEP 517 hook
    subprocess.run([sys.executable, "-c", build], check=True, capture_output=True, cwd=ROOT)
    sdist, = tmp_path.glob("dpaccount-*.tar.gz")
    names = {n.split("/", 1)[1] for n in tarfile.open(sdist).getnames() if "/" in n}
    for wanted in ("docs/index.rst", "examples/dpsgd.py", "tests/conftest.py", "benchmarks/README.md",
                   "dpaccount/py.typed", "README.md"):
        assert wanted in names, wanted
