"""The documentation site stays true to itself: the front page's example prints what the page
shows, every results page shows a figure that exists, the figures drawn from the pages' tables
still draw, and the API pages show a registry by its names, not as a dict of function reprs."""

from __future__ import annotations

import html
import importlib.util
import io
import re
from pathlib import Path

import pytest

from lpsched.plugins import Registry
from lpsched.solvers.solve import SOLVERS

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
#: The results pages; index.md is the overview, claims.md the claims table it includes.
RESULT_PAGES = sorted(
    p for p in (DOCS / "results").glob("*.md") if p.name not in ("index.md", "claims.md")
)
#: A Markdown image or a MyST figure directive naming a figure file.
FIGURE = re.compile(r"!\[[^\]]*\]\(([^)\s]+\.(?:png|svg))\)|```\{figure\}\s+(\S+)")


def test_front_page_example_prints_what_the_page_shows(monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    text = (DOCS / "index.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", text, re.S)
    shown = re.search(r"```text\n(.*?)```", text, re.S)
    assert code and shown, "docs/index.md needs its ```python example and its ```text output"
    assert len(code.group(1).strip().splitlines()) <= 12, "the front page's example stays short"
    exec(compile(code.group(1), "docs/index.md", "exec"), {})
    assert capsys.readouterr().out == shown.group(1)


def test_front_page_has_install_line_figure_and_maths():
    text = (DOCS / "index.md").read_text(encoding="utf-8")
    assert 'pip install -e ".[fast]"' in text
    figures = [a or b for a, b in FIGURE.findall(text)]
    assert figures and all((DOCS / f).is_file() for f in figures)
    assert "$s_i$" in text and "$o_i$" in text and "$M$" in text
    assert "*s_i*" not in text  # plain italics where maths belongs


@pytest.mark.parametrize("page", ["model.md", "seconds.md", "schedules.md"])
def test_guide_model_pages_write_their_symbols_as_maths(page):
    """The model's paragraph, the formulas in seconds and the plot's description: ``$s_i$``,
    not the italics ``*s_i*`` that showed as plain text."""
    text = (DOCS / "guide" / page).read_text(encoding="utf-8")
    head = text[: text.index("\n## ", text.index("\n## ") + 1)] if page != "schedules.md" else text
    assert not re.findall(r"\*(?:[a-zA-Z]_[a-zA-Z]|M\*|m\(t\)|tau\(|alpha_)", head), page
    assert "$" in head


@pytest.mark.parametrize("page", RESULT_PAGES, ids=lambda p: p.stem)
def test_every_results_page_shows_a_figure_that_exists(page):
    found = [a or b for a, b in FIGURE.findall(page.read_text(encoding="utf-8"))]
    assert found, f"docs/results/{page.name} shows no figure"
    for ref in found:
        assert (page.parent / ref).is_file(), f"docs/results/{page.name}: {ref} does not exist"


def _page_figures():
    spec = importlib.util.spec_from_file_location(
        "page_figures", DOCS / "figures" / "page_figures.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_figures_drawn_from_the_pages_tables_still_draw():
    """Each figure of ``docs/figures/page_figures.py`` finds its table on its page (a page whose
    table is renamed or removed fails here, not when the figure is next redrawn)."""
    import matplotlib.pyplot as plt

    figures = _page_figures()
    for name, (page, draw) in figures.FIGURES_OF_PAGES.items():
        assert (DOCS / "figures" / f"{name}.png").is_file(), f"{name}.png is not drawn"
        assert f"../figures/{name}.png" in (DOCS / "results" / f"{page}.md").read_text()
        fig = draw()
        assert fig.axes and any(ax.patches or ax.lines for ax in fig.axes), name
        plt.close(fig)


def test_page_figures_read_numbers_as_the_pages_write_them():
    number = _page_figures().number
    assert number("1.155 / 1.373 (1.145 / 1.361)") == 1.155
    assert number("**6.6-6.7%**") == 6.6
    assert number("2,138.5") == 2138.5
    assert number("- (LP too large: 1/1)") != number("- (LP too large: 1/1)")  # NaN
    assert number("best known 2,976", anywhere=True) == 2976


def test_registry_repr_names_its_kind_and_entries():
    assert repr(SOLVERS) == "Registry('solver', ['highs', 'cpsat'])"
    assert repr(Registry("thing")) == "Registry('thing', [])"


def test_api_pages_show_registries_by_name_and_short_cells_unwrapped(tmp_path):
    """A small Sphinx build with the site's extension (``docs/_ext/lpsched_docs.py``): a
    registry constant shows its repr, a function-valued default its function's name, a mapping
    of functions their names, and a short table cell does not wrap."""
    sphinx_application = pytest.importorskip("sphinx.application")
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(DOCS / '_ext')!r})\n"
        "extensions = ['sphinx.ext.autodoc', 'lpsched_docs']\n"
    )
    (src / "index.rst").write_text(
        "API\n===\n\n"
        ".. autodata:: lpsched.solvers.solve.SOLVERS\n\n"
        ".. autodata:: lpsched.generators.small.EXACT_WORKLOADS\n\n"
        ".. autodata:: lpsched.policies.gsa.GSA\n\n"
        ".. autoclass:: lpsched.blind.BlindSpec\n\n"
        "=====  ==========================================================\n"
        "n      what\n"
        "=====  ==========================================================\n"
        "2000   a long prose cell that wraps within the width of the page, as text, over lines\n"
        "=====  ==========================================================\n"
    )
    warnings = io.StringIO()
    app = sphinx_application.Sphinx(
        str(src), str(src), str(tmp_path / "html"), str(tmp_path / "doctrees"), "html",
        status=None, warning=warnings, freshenv=True,
    )  # fmt: skip
    app.build()
    page = (tmp_path / "html" / "index.html").read_text(encoding="utf-8")
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    assert "<function" not in text and "<class" not in text, warnings.getvalue()
    registry = "Registry('solver', ['highs', 'cpsat'])"
    assert f"SOLVERS: Registry[Callable[[...], Answer]] = {registry}" in text
    assert "'paper-scaled': paper_scaled" in text  # EXACT_WORKLOADS: the generators by name
    assert "reveal=_sees_nothing" in text  # BlindSpec's default, GSA's field
    assert re.search(r'<td class="[^"]*lp-nowrap[^"]*"><p>2000</p>', page)
    assert not re.search(r'<td class="[^"]*lp-nowrap[^"]*"><p>a long prose', page)
