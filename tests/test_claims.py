"""The claims table has one source, docs/results/claims.md: the site includes it, the README
carries an exact copy (scripts/sync_claims.py), and every figure in a row is on a page it
links to (up to the row's rounding), so a page rerun cannot leave a stale summary behind."""

from __future__ import annotations

import importlib.util
import posixpath
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"
SOURCE = RESULTS / "claims.md"


def _sync_module():
    spec = importlib.util.spec_from_file_location(
        "sync_claims", ROOT / "scripts" / "sync_claims.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _rows() -> list[list[str]]:
    lines = SOURCE.read_text(encoding="utf-8").strip().splitlines()
    assert lines[0].startswith("| claim") and set(lines[1]) <= set("|-")
    rows = [[c.strip() for c in line.strip().strip("|").split(" | ")] for line in lines[2:]]
    for row in rows:
        assert len(row) == 4, f"claims.md: a row of {len(row)} cells, not 4: {row[0][:60]!r}"
    return rows


# A figure: a decimal number, alone, as the end of a range "a-b" (the ends are read apart) or
# a factor ("4.5x"). Whole numbers are not checked (counts, sizes and years are everywhere).
_FIGURE = re.compile(r"(?<![\w.,])\d+\.\d+(?![\d.]|[A-Za-wyz_])")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?")


def _figures(cell: str) -> list[str]:
    text = re.sub(r"\]\([^)]*\)", "]", cell)  # not the link targets
    text = re.sub(r"arXiv:? ?\d{4}\.\d{5}", "", text)  # nor paper numbers
    text = re.sub(r"`[^`]*`", "", text)  # nor commands
    return _FIGURE.findall(text)


def _half_unit(number: str) -> float:
    """Half a unit of the last digit shown: the rounding error of the printed number."""
    decimals = len(number.partition(".")[2])
    return 0.5 * 10.0**-decimals


def _on_page(figure: str, page_text: str) -> bool:
    """Whether a number on the page, printed to at least as many decimals as ``figure``, can
    round to it: each printed number stands for an interval of half a unit of its last digit;
    the two intervals must meet (the page's 64.75 for 16640/257 = 64.747, the claim's 64.7)."""
    wanted, slack = float(figure), _half_unit(figure)
    return any(
        abs(float(n) - wanted) <= slack + _half_unit(n) + 1e-12
        for n in _NUMBER.findall(page_text)
        if _half_unit(n) <= slack
    )


def _slug(heading: str) -> str:
    """A heading's anchor as MyST (``myst_heading_anchors``) and GitHub write it."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _linked_pages(cell: str) -> list[Path]:
    """The pages a cell links to; each must exist, and so must the heading an anchor names."""
    pages = []
    for target in re.findall(r"\]\(([^)\s]+)\)", cell):
        page, _, anchor = target.partition("#")
        path = ROOT / posixpath.normpath(posixpath.join("docs/results", page or "index.md"))
        assert path.is_file(), f"claims.md links to {target!r}: no such page"
        if anchor:
            headings = re.findall(r"^#+ (.+)$", path.read_text(encoding="utf-8"), re.MULTILINE)
            assert anchor in {_slug(h) for h in headings}, (
                f"claims.md: no heading #{anchor} in {page}"
            )
        pages.append(path)
    return pages


def test_the_readme_carries_the_claims_table_unchanged():
    sync = _sync_module()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert sync.synced(readme, SOURCE.read_text(encoding="utf-8")) == readme, (
        "README.md's claims table differs from docs/results/claims.md: "
        "run python scripts/sync_claims.py"
    )


def test_the_readme_links_of_the_copy_resolve():
    sync = _sync_module()
    for target in re.findall(r"\]\(([^)\s]+)\)", sync.readme_table(SOURCE.read_text())):
        assert (ROOT / target.partition("#")[0]).is_file(), target


def test_the_site_includes_the_one_source_and_states_no_other_table():
    index = (RESULTS / "index.md").read_text(encoding="utf-8")
    assert "```{include} claims.md" in index
    for page in (ROOT / "docs").rglob("*.md"):
        if page != SOURCE:
            lines = page.read_text(encoding="utf-8").splitlines()
            assert not any(ln.startswith("| claim (arXiv") for ln in lines), page


@pytest.mark.parametrize("row", _rows(), ids=lambda row: row[0][:40])
def test_every_figure_of_a_row_is_on_a_page_it_links_to(row):
    claim, status, measured, command = row
    pages = _linked_pages(measured)
    assert pages, f"{claim!r}: the row links to no page"
    text = "\n".join(p.read_text(encoding="utf-8") for p in pages)
    missing = [f for f in _figures(status) + _figures(measured) if not _on_page(f, text)]
    assert not missing, f"{claim!r}: {missing} are on none of {[p.name for p in pages]}"


def test_the_figure_check_catches_a_stale_figure():
    assert _on_page("90.8", "| size | 16384 | 90.76 |")
    assert _on_page("64.7", "| fcfs | 16384 | 64.75 |")  # 64.747 printed twice
    assert not _on_page("12.5", "certified within 6.6-6.7% (1.070)")
    assert not _on_page("3.7", "4 of 5 proven")  # a whole number is no figure
    assert _figures("2.7x with no information, 1.3-2.0x from 1.1") == ["2.7", "1.3", "2.0", "1.1"]
    assert _slug("NP-hardness: 3-Partition gadgets") == "np-hardness-3-partition-gadgets"
    assert _figures("within 6.6-6.7% (best 1.070-1.072, [x](a.md#b), arXiv 2508.06133)") == [
        "6.6",
        "6.7",
        "1.070",
        "1.072",
    ]
