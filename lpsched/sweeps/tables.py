"""Markdown tables drawn from sweep rows, and the report files of a reproduction.

Source: ours (tabulate for the formatting).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from tabulate import tabulate

from ..io import WriteError, atomic_write_text

__all__ = ["markdown_table", "mean_by", "mean_max", "counts", "write_report"]


def markdown_table(
    rows: Sequence[Mapping[str, Any]], headers: Sequence[str], *, numparse: bool = True
) -> str:
    """A GitHub-flavoured Markdown table of ``rows`` (columns ``headers``); ``numparse=False``
    keeps cells that look like numbers as they are written (``"1.00"`` stays ``1.00``)."""
    return tabulate(
        [[r[h] for h in headers] for r in rows],
        headers=headers,
        tablefmt="github",
        disable_numparse=not numparse,
    )


def write_report(out_dir: str | os.PathLike[str], name: str, text: str) -> str:
    """Write ``text`` to ``out_dir/NAME.md`` (with a final newline) and return it.

    The write is atomic (:func:`lpsched.io.atomic_write_text`): a failure raises
    :class:`lpsched.io.WriteError` naming the path and leaves the previous report intact.
    """
    path = Path(out_dir) / f"{name}.md"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WriteError(
            f"{path}: cannot write: {exc.strerror or exc} (nothing was written)"
        ) from None
    atomic_write_text(path, text.rstrip("\n") + "\n")
    return text


def mean_by(
    rows: Sequence[Mapping[str, Any]], keys: Sequence[str], value: str
) -> dict[tuple[str, ...], float]:
    """Mean of the column ``value`` over the rows of each combination of the columns ``keys``."""
    acc: dict[tuple[str, ...], list[float]] = {}
    for r in rows:
        acc.setdefault(tuple(r[k] for k in keys), []).append(float(r[value]))
    return {k: float(np.mean(v)) for k, v in acc.items()}


def mean_max(values: Sequence[float]) -> str:
    """A table cell ``"mean / max"`` of ``values`` (non-empty), three decimals each."""
    return f"{np.mean(values):.3f} / {max(values):.3f}"


def counts(values: Sequence[str]) -> str:
    """A table cell naming each distinct value with its count, the most common first
    (``"lp 3, colgen 1"``)."""
    return ", ".join(f"{k} {c}" for k, c in Counter(values).most_common())
