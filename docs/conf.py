"""Sphinx configuration of the lpsched documentation site.

Build (from the repository root, with the ``docs`` extra installed)::

    sphinx-build -W --keep-going -b html docs docs/_build/html

The API reference is generated from the docstrings (autosummary over every module of
``lpsched``, numpydoc for the sections); SPEC, the architecture and the model pages are the
Markdown files of the repository, read in place or included (never copied by hand); the
notebooks of ``notebooks/`` are copied into ``docs/notebooks/`` (git-ignored) when the build
starts and executed by myst-nb at their small size.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import warnings
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))

import lpsched  # noqa: E402

# numpydoc parses the docstring of every member autodoc looks at, imported ones included;
# tabulate's own docstring (imported by lpsched.cli and lpsched.sweeps.tables) has
# sections numpydoc does not know. A Python warning, not a Sphinx one: silenced as noise.
warnings.filterwarnings(
    "ignore", message=r"Unknown section .* in the docstring of tabulate", category=UserWarning
)

project = "lpsched"
author = "lpsched contributors"
copyright = "lpsched contributors"
release = version = lpsched.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_nb",
    "sphinx_click",  # the command-line page, from lpsched.cli's click commands
]

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"
templates_path = ["_templates"]
exclude_patterns = ["_build", "jupyter_execute", "**.ipynb_checkpoints"]

# -- API reference ---------------------------------------------------------------------------
autosummary_generate = True
autosummary_ignore_module_all = True  # a package's re-exports are documented where defined
autosummary_imported_members = False
autodoc_member_order = "bysource"
autodoc_typehints = "none"  # numpydoc's Parameters sections carry the types
numpydoc_show_class_members = False  # autodoc lists the members; no duplicate tables
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
# Broken references stay plain text instead of failing the build: the docstrings name
# numpy, Pyomo and paper symbols that have no target here (and intersphinx, which would
# need the network, is not used: CI builds offline).
nitpicky = False

# -- Markdown and notebooks ------------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3  # README's '#experiments-resumable-parallel-on-a-cluster' links
nb_execution_mode = "auto"  # the notebooks are stored without outputs: every build runs them
nb_execution_timeout = 150  # seconds per cell, as tests/test_notebooks.py
nb_execution_raise_on_error = True
nb_execution_in_temp = True  # their results/ folders go to a temporary directory
nb_merge_streams = True
# Standard error of a cell is progress bars and tqdm's "IProgress not found" (no ipywidgets):
# noise on a page. The test suite (tests/test_notebooks.py) still runs every cell.
nb_output_stderr = "remove"
os.environ.setdefault("LPSCHED_NOTEBOOK_SMALL", "1")  # the kernel inherits the environment
# so that the kernel draws with its inline backend and the figures land on the pages (a
# MPLBACKEND=Agg from the caller would leave them out)
os.environ.pop("MPLBACKEND", None)

# -- HTML ------------------------------------------------------------------------------------
html_theme = "furo"
html_title = f"lpsched {release}"
html_static_path: list[str] = []


def _copy_notebooks() -> None:
    """Copy ``notebooks/*.ipynb`` into ``docs/notebooks/`` (keeping mtimes, so unchanged
    notebooks are not re-executed by an incremental build) and drop stale copies."""
    target = DOCS / "notebooks"
    target.mkdir(exist_ok=True)
    sources = {p.name: p for p in (ROOT / "notebooks").glob("*.ipynb")}
    for stale in target.glob("*.ipynb"):
        if stale.name not in sources:
            stale.unlink()
    for name, src in sources.items():
        dst = target / name
        if not dst.exists() or dst.stat().st_mtime != src.stat().st_mtime:
            shutil.copy2(src, dst)


_copy_notebooks()

# Command-line help is plain text written for the terminal, and sphinx-click reads it as
# reStructuredText: a glob star such as "online-*" would open an emphasis that never closes.
_GLOB_STAR = re.compile(r"(?<=[\w-])\*(?![\w*])")


def _escape_glob_stars(app, ctx, lines: list[str]) -> None:
    lines[:] = [_GLOB_STAR.sub(r"\\*", line) for line in lines]


def setup(app) -> None:
    for event in ("description", "options", "arguments", "epilog"):
        app.connect(f"sphinx-click-process-{event}", _escape_glob_stars)
