"""Markdown tables drawn from sweep rows, and the report files of a reproduction.

A reproduction writes ``NAME.md`` and its figures (``NAME.png``, ...) from the rows of its run.
A run over part of the rows its CSV holds for the study (a rerun with fewer sizes or seeds
into the folder of a larger run: rows of the same parameters and code outside the run's
tasks) writes them under a distinct name instead, ``NAME.part.md`` and ``NAME.part.png``
(:func:`report_path`), so that the files of the larger run, which show every one of those
rows, are kept rather than replaced by a table of a few. A reproduction's ``run`` is wrapped
in :func:`reproduction_run`, which tells :func:`report_path` whether one of its sweeps left rows
out (:func:`note_left_out`, called by :func:`~lpsched.sweeps.engine.run_sweep`).

Source: ours (tabulate for the formatting).
"""

from __future__ import annotations

import contextvars
import functools
import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import numpy as np
from tabulate import tabulate

from ..io import WriteError, atomic_write_text

__all__ = [
    "markdown_table",
    "mean_by",
    "mean_max",
    "counts",
    "write_report",
    "report_path",
    "reproduction_run",
    "note_left_out",
    "left_out_message",
    "PART",
]

#: What a report file's stem gains when its run covers part of the study's rows in the CSV.
PART = ".part"
#: Per results CSV of the reproduction running now: the row keys its sweeps covered and those
#: they left out (a record per :func:`reproduction_run` call), or None outside one.
_LEFT_OUT: contextvars.ContextVar[dict[str, tuple[set[Any], set[Any]]] | None] = (
    contextvars.ContextVar("lpsched_left_out", default=None)
)
P = ParamSpec("P")
R = TypeVar("R")


def reproduction_run(run: Callable[P, R]) -> Callable[P, R]:
    """Decorate a reproduction's ``run``: inside it, :func:`report_path` names the report
    files ``NAME.part.*`` once a sweep has left rows of the study out (a call inside another
    shares the outer one's record). Source: ours."""

    @functools.wraps(run)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        if _LEFT_OUT.get() is not None:
            return run(*args, **kwargs)
        token = _LEFT_OUT.set({})
        try:
            return run(*args, **kwargs)
        finally:
            _LEFT_OUT.reset(token)

    return wrapper


def note_left_out(csv: str | os.PathLike[str], covered: Iterable[Any], left: Iterable[Any]) -> None:
    """Record that a sweep of the running reproduction covered the rows ``covered`` of the
    CSV ``csv`` and left out ``left`` (same parameters and code, other tasks); a row that
    another sweep of the same run covers (one CSV written by several sweeps) is not left out.
    Nothing outside :func:`reproduction_run`. Source: ours."""
    record = _LEFT_OUT.get()
    if record is not None:
        seen, out = record.setdefault(str(Path(csv).resolve()), (set(), set()))
        seen.update(covered)
        out.update(left)


def report_path(out_dir: str | os.PathLike[str], name: str, suffix: str) -> Path:
    """``out_dir/NAME{suffix}`` (``suffix`` such as ``".md"``, ``".png"``, ``"-traces.png"``),
    or ``out_dir/NAME.part{suffix}`` when a sweep of the running reproduction left rows of
    the study out (see the module docstring). Source: ours."""
    record = _LEFT_OUT.get() or {}
    part = any(out - seen for seen, out in record.values())
    return Path(out_dir) / f"{name}{PART if part else ''}{suffix}"


def left_out_message(
    path: str | os.PathLike[str],
    key: Sequence[str],
    order: Sequence[tuple[str, ...]],
    outside: set[Any],
) -> str:
    """What a sweep says of the rows of its CSV ``path`` outside its tasks (``outside``, row
    keys over the columns ``key``; the run's own keys are ``order``): the key values they
    have and the run has not, that its report files are named ``NAME.part.*``
    (:func:`report_path`), and the values a run over every row would take, in natural order
    (``6, 8, 12``). Source: ours."""

    def natural(value: str) -> tuple[int, float, str]:
        try:
            return (0, float(value), value)
        except ValueError:
            return (1, 0.0, value)

    def listed(values: set[Any]) -> str:
        return ", ".join(sorted(map(str, values), key=natural))

    parts = [({k[j] for k in outside}, {k[j] for k in order}, col) for j, col in enumerate(key)]
    extra = "; ".join(f"{col} {listed(out - run)}" for out, run, col in parts if out - run)
    every = "; ".join(f"{col} {listed(out | run)}" for out, run, col in parts if out - run)
    return (
        f"{path}: {len(outside)} row(s) in the file belong to tasks outside this run ("
        + (extra or "other combinations")
        + "); left out of this run's table and figures (named *.part.md, *.part.png "
        "unless the run covers them elsewhere: the study's own files are kept)"
        + (f"; a run over {every} writes the study's table with every row" if every else "")
    )


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
    """Write ``text`` to ``out_dir/NAME.md`` (``NAME.part.md``: :func:`report_path`, with a
    final newline) and return it.

    The write is atomic (:func:`lpsched.io.atomic_write_text`): a failure raises
    :class:`lpsched.io.WriteError` naming the path and leaves the previous report intact.
    """
    path = report_path(out_dir, name, ".md")
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
