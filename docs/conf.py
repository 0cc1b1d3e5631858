"""Sphinx configuration of the dpaccount docs.

    pip install -e ".[docs]"
    sphinx-build -W -b html docs docs/_build/html      (or: tox -e docs)

Plain reStructuredText and the built-in alabaster theme: no extension
beyond Sphinx's own and ``_ext/dpaccount_docs.py`` (the command line's
``--help`` as the code prints it; Markdown files of the repository,
converted on the fly). The API reference is autodoc of ``dpaccount.__all__``
(``api.rst``; tests/test_docs.py checks that it lists exactly those names).
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "_ext"))
sys.path.insert(0, os.path.dirname(HERE))  # this tree's dpaccount, installed or not

import dpaccount  # noqa: E402

project = "dpaccount"
author = "the dpaccount authors"
copyright = "the dpaccount authors"
version = release = dpaccount.__version__

extensions = ["sphinx.ext.autodoc", "sphinx.ext.mathjax", "dpaccount_docs"]
exclude_patterns = ["_build", "_ext"]
root_doc = "index"
highlight_language = "text"  # literal blocks (::) are output; code blocks name their language

autodoc_member_order = "bysource"
autodoc_typehints = "none"
autoclass_content = "class"

html_theme = "alabaster"
html_static_path = ["_static"]
html_css_files = ["custom.css"]
html_title = f"dpaccount {release}"
html_theme_options = {
    "description": "Tight, fast, certified differential-privacy accounting",
    "page_width": "1200px",
    "body_max_width": "none",  # the side-by-side tables of the "coming from" pages
    "sidebar_width": "230px",
    "fixed_sidebar": True,
}
