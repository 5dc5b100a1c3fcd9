"""The Python snippets of the user guide run as written (from the repository's root, where the
guides' relative paths point)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lpsched.policies.registry import POLICIES

ROOT = Path(__file__).resolve().parents[1]
#: Guides whose every ```python block runs on its own in a few seconds.
GUIDES = ["blind.md", "python.md"]


def _blocks(name: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "guide" / name).read_text(), re.S)


@pytest.fixture
def clean_policies():
    """The policies a snippet registers are removed after it (a later test may register the
    same names)."""
    before = set(POLICIES)
    yield
    for name in set(POLICIES) - before:
        del POLICIES[name]


@pytest.mark.parametrize("name", GUIDES)
def test_guide_snippets_run(name, monkeypatch, capsys, clean_policies):
    monkeypatch.chdir(ROOT)
    blocks = _blocks(name)
    assert blocks, f"{name} has no python block"
    scope: dict = {}
    for code in blocks:  # one scope per page: a later block may use an earlier one's names
        exec(compile(code, f"docs/guide/{name}", "exec"), scope)
    printed = capsys.readouterr().out
    if name == "blind.md":
        assert printed.strip() == "185892"
    if name == "python.md":
        assert "\noptimal 114 114.0 0.0\n" in printed  # the line its comment promises
