"""Copy the claims table (docs/results/claims.md, its one source) into the README.

The site includes ``docs/results/claims.md`` in its results overview; the README, which
GitHub renders without includes, carries a copy between two markers, its links rewritten
from ``docs/results/`` to the repository root. Edit the source, then run::

    python scripts/sync_claims.py          # rewrite the README's copy
    python scripts/sync_claims.py --check  # exit 1 if the copy differs (tests/test_claims.py)
"""

from __future__ import annotations

import posixpath
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "docs" / "results" / "claims.md"
README = ROOT / "README.md"
BEGIN = "<!-- claims: a copy of docs/results/claims.md; run python scripts/sync_claims.py -->"
END = "<!-- end of claims -->"
_LINK = re.compile(r"\]\(([^)\s]+)\)")


def readme_link(target: str) -> str:
    """A link of docs/results/claims.md (relative to docs/results/) seen from the root."""
    if "://" in target:
        return target
    page, hash_, anchor = target.partition("#")
    path = posixpath.normpath(posixpath.join("docs/results", page or "index.md"))
    return path + hash_ + anchor


def readme_table(source: str) -> str:
    """The claims table as the README shows it: the source with its links rewritten."""
    return _LINK.sub(lambda m: f"]({readme_link(m.group(1))})", source.strip()) + "\n"


def synced(readme: str, source: str) -> str:
    """The README text with the block between the markers replaced by the claims table."""
    head, found, rest = readme.partition(BEGIN + "\n")
    _, found_end, tail = rest.partition(END)
    if not (found and found_end):
        raise ValueError(f"README.md: the markers {BEGIN!r} and {END!r} are missing")
    return head + BEGIN + "\n" + readme_table(source) + END + tail


def main(argv: list[str]) -> int:
    readme = README.read_text(encoding="utf-8")
    new = synced(readme, SOURCE.read_text(encoding="utf-8"))
    if "--check" in argv:
        if new != readme:
            print("README.md's claims table differs from docs/results/claims.md;")
            print("run: python scripts/sync_claims.py")
            return 1
        return 0
    README.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
