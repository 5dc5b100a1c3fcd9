"""Markdown tables drawn from sweep rows, and the report files of a reproduction.

Source: ours (tabulate for the formatting).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from tabulate import tabulate

__all__ = ["markdown_table", "mean_by", "write_report"]


def markdown_table(rows: Sequence[Mapping[str, Any]], headers: Sequence[str]) -> str:
    """A GitHub-flavoured Markdown table of ``rows`` (columns ``headers``)."""
    return tabulate([[r[h] for h in headers] for r in rows], headers=headers, tablefmt="github")


def write_report(out_dir: str | os.PathLike[str], name: str, text: str) -> str:
    """Write ``text`` to ``out_dir/NAME.md`` (with a final newline) and return it."""
    path = Path(out_dir) / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.rstrip("\n") + "\n", encoding="utf-8")
    return text


def mean_by(
    rows: Sequence[Mapping[str, Any]], keys: Sequence[str], value: str
) -> dict[tuple[str, ...], float]:
    """Mean of the column ``value`` over the rows of each combination of the columns ``keys``."""
    acc: dict[tuple[str, ...], list[float]] = {}
    for r in rows:
        acc.setdefault(tuple(r[k] for k in keys), []).append(float(r[value]))
    return {k: float(np.mean(v)) for k, v in acc.items()}
