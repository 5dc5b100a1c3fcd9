"""The README speaks to a reader outside the project: no internal issue numbers or sibling
folders, at most 200 lines; and the tests that need the public traces say how to get them."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_readme_has_no_insider_references():
    text = (ROOT / "README.md").read_text()
    assert not re.search(r"\bissue\s+\d+", text, flags=re.I)
    assert "../shared" not in text and "shared/traces" not in text
    assert len(text.splitlines()) <= 200


def test_tests_that_need_the_traces_say_how_to_get_them():
    from reference.traces import SKIP_REASON

    assert "lpsched traces fetch" in SKIP_REASON and "LPSCHED_DATA_DIR" in SKIP_REASON
    for path in (ROOT / "tests").rglob("*.py"):
        if path.name == "test_readme.py":
            continue
        assert "is not beside this clone" not in path.read_text(), path
