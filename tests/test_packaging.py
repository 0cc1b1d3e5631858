"""Packaging (issue 32): a non-editable install ships every subpackage, the licence and
py.typed, with the metadata a package index shows."""
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
