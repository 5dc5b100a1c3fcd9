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

import atexit
import json
import logging
import os
import re
import shutil
import sys
import tempfile
import warnings
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(DOCS / "_ext"))  # lpsched_docs: readable API values, tables that scroll

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
    "lpsched_docs",  # docs/_ext: registries by their names in the API pages; no squeezed tables
]

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"
templates_path = ["_templates"]
exclude_patterns = [
    "_build",
    "jupyter_execute",
    "**.ipynb_checkpoints",
    "results/claims.md",  # included by results/index.md, not a page of its own
]

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
myst_heading_anchors = 3  # links to sections: results/index.md#np-hardness-3-partition-gadgets
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

# -- A quiet build (docs/guide/docs.md) ------------------------------------------------------
# The build prints Sphinx's progress and real warnings, nothing else. Three sources of noise:
#
# * accessible-pygments (a dependency of the theme's code styles) calls
#   logging.basicConfig(level=INFO) when Pygments loads it, which turns on every library's
#   informational logging, such as nbclient's "Executing notebook with kernel" per notebook.
#   Configuring the root logger first, at WARNING, makes that call a no-op; warnings of
#   other libraries still print.
logging.basicConfig(level=logging.WARNING, format="%(name)s: %(levelname)s: %(message)s")


# * MyST and myst-nb log their whole configuration, and myst-nb where its execution cache
#   would be (nb_execution_mode "auto" does not use it), as informational messages.
class _DropConfigDumps(logging.Filter):
    NOISE = ("myst v%s:", "myst-nb v%s:", "Using jupyter-cache at:")

    def filter(self, record: logging.LogRecord) -> bool:
        message = str(record.msg)
        return record.levelno > logging.INFO or not any(n in message for n in self.NOISE)


for _name in ("sphinx.myst_parser.sphinx_ext.main", "sphinx.myst_nb.sphinx_ext"):
    logging.getLogger(_name).addFilter(_DropConfigDumps())


# * ipykernel warns on standard error, for every notebook, that the local kernel talks to
#   the build over TCP without encryption. The notebooks run in a kernel whose spec (found
#   first through JUPYTER_PATH) is the default python3 one with the kernel's own log at ERROR;
#   a cell that raises still fails the build (nb_execution_raise_on_error).
def _quiet_kernel_spec() -> str:
    root = Path(tempfile.mkdtemp(prefix="lpsched-docs-kernels-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    spec = root / "kernels" / "python3"
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    kernel = {
        "argv": [*argv, "--IPKernelApp.log_level=ERROR"],
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
        "metadata": {"debugger": True},
    }
    (spec / "kernel.json").write_text(json.dumps(kernel, indent=1))
    return str(root)


os.environ["JUPYTER_PATH"] = os.pathsep.join(
    p for p in (_quiet_kernel_spec(), os.environ.get("JUPYTER_PATH")) if p
)

# -- HTML ------------------------------------------------------------------------------------
html_theme = "furo"
html_title = f"lpsched {release}"
html_static_path = ["_static"]
html_css_files = ["lpsched.css"]  # tables that scroll, the front page's cards


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


def _check_cli_page(app) -> None:
    """Warn (an error under -W) when docs/cli.md's ``:commands:`` list, which sets the order
    of the command-line page, leaves out a subcommand or names one that does not exist."""
    from sphinx.util import logging as sphinx_logging

    from lpsched.cli import main

    text = (DOCS / "cli.md").read_text(encoding="utf-8")
    found = re.search(r"^\s*:commands:(.*)$", text, flags=re.MULTILINE)
    listed = [c.strip() for c in found.group(1).split(",")] if found else []
    missing = [c for c in main.commands if c not in listed]
    unknown = [c for c in listed if c not in main.commands]
    log = sphinx_logging.getLogger(__name__)
    if missing:
        log.warning("docs/cli.md: add the subcommands %s to the :commands: list", missing)
    if unknown:
        log.warning("docs/cli.md: the :commands: list names no such subcommand: %s", unknown)


def setup(app) -> None:
    for event in ("description", "options", "arguments", "epilog"):
        app.connect(f"sphinx-click-process-{event}", _escape_glob_stars)
    app.connect("builder-inited", _check_cli_page)
