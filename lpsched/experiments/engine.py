"""The one sweep engine: tasks -> CSV rows, each written as it finishes, resumed after a stop.

A reproduction declares a :class:`Sweep`: its tasks, how one task is computed, the CSV columns
and the columns that identify a row, and the parameters shared by every row. :func:`run_sweep`
then

* reads the CSV if it exists and skips every row already there (a task computes only its
  missing rows, so an interrupted task loses nothing it had written);
* refuses to add rows to a CSV computed under other sweep parameters (they are recorded beside
  it in ``NAME.params.json``), so a table never mixes rows of two different runs;
* appends and flushes each row the moment it exists, with a progress bar on standard error;
* returns the rows of the current tasks only, so a table drawn from them never counts rows
  that an earlier, larger run left in the file.

Source: ours.
"""

from __future__ import annotations

import csv
import json
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

__all__ = ["Task", "Sweep", "ResultsCSV", "SweepParameterError", "run_sweep"]

Row = Mapping[str, Any]


class SweepParameterError(ValueError):
    """A CSV was computed under other sweep parameters than the run asks for. Source: ours."""


@dataclass(frozen=True)
class Task:
    """One unit of work: its parameters and the rows it yields.

    Attributes
    ----------
    params : mapping
        Parameters of the task; every row it yields carries them (e.g. workload, n, seed).
    rows : tuple of mapping
        The key columns that tell the task's rows apart (e.g. ``{"policy": "fcfs"}`` for each
        policy run on one instance); ``({},)`` for a task that yields one row.
    """

    params: Mapping[str, Any]
    rows: tuple[Mapping[str, Any], ...] = ({},)

    def keys(self) -> list[dict[str, Any]]:
        """The full key of each row: ``params`` merged with each entry of ``rows``."""
        return [{**self.params, **r} for r in self.rows]


@dataclass(frozen=True)
class Sweep:
    """A declared sweep (see the module docstring).

    Attributes
    ----------
    name : str
        File stem: rows go to ``NAME.csv``, parameters to ``NAME.params.json``.
    fields : sequence of str
        All CSV columns, in order.
    key : sequence of str
        Columns that identify a row (a subset of ``fields``).
    tasks : sequence of Task
    compute : callable
        ``compute(params, missing)`` yields one row (a mapping with every column of
        ``fields``) for each key mapping in ``missing`` (the task's rows not yet in the CSV).
    params : mapping
        Parameters shared by every row (e.g. ``n``, ``time_limit``); JSON-serialisable.
    """

    name: str
    fields: Sequence[str]
    key: Sequence[str]
    tasks: Sequence[Task]
    compute: Callable[[Mapping[str, Any], list[dict[str, Any]]], Iterable[Row]]
    params: Mapping[str, Any] = field(default_factory=dict)


def _fmt(v: Any) -> str:
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.6g}"
    return str(v)


class ResultsCSV:
    """An append-only CSV of results keyed by some columns.

    Parameters
    ----------
    path : path-like
        The CSV file; created with a header if absent, read back if present.
    fields : sequence of str
        All columns, in order.
    key : sequence of str
        Columns that identify a task (a subset of ``fields``).

    Raises
    ------
    ValueError
        If an existing file has another header, or a line lacks a field (the message names the
        file and the line).
    """

    def __init__(self, path: str | os.PathLike[str], fields: Sequence[str], key: Sequence[str]):
        self.path = Path(path)
        self.fields = list(fields)
        self.key = list(key)
        self.rows: list[dict[str, str]] = []
        if self.path.exists() and self.path.stat().st_size:
            try:
                with self.path.open(newline="", encoding="utf-8") as fh:
                    reader = csv.DictReader(fh)
                    if reader.fieldnames != self.fields:
                        raise ValueError(
                            f"{self.path}: header {reader.fieldnames} differs from "
                            f"{self.fields}; move the file away to start a new sweep"
                        )
                    for row in reader:
                        missing = [k for k in self.fields if row.get(k) is None]
                        if missing or None in row:
                            raise ValueError(
                                f"{self.path}: line {reader.line_num}: "
                                + (f"missing field '{missing[0]}'" if missing else "extra fields")
                                + "; delete the line to recompute it"
                            )
                        self.rows.append(row)
            except (UnicodeDecodeError, csv.Error) as exc:
                raise ValueError(f"{self.path}: not a results CSV ({exc})") from None
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("w", newline="") as fh:
                csv.writer(fh).writerow(self.fields)
        self._done = {self.key_of(r) for r in self.rows}

    def key_of(self, row: Row) -> tuple[str, ...]:
        """The key of ``row`` as a tuple of strings (as stored in the file)."""
        return tuple(_fmt(row[k]) for k in self.key)

    def done(self, row: Row) -> bool:
        """True if a row with this key is already in the file."""
        return self.key_of(row) in self._done

    def append(self, row: Row) -> None:
        """Write one row and flush it to disk at once."""
        out = {k: _fmt(row[k]) for k in self.fields}
        with self.path.open("a", newline="") as fh:
            csv.writer(fh).writerow([out[k] for k in self.fields])
        self.rows.append(out)
        self._done.add(self.key_of(out))


def _check_params(path: Path, params: Mapping[str, Any], csv_has_rows: bool) -> None:
    """Record the sweep parameters beside the CSV, or refuse when they differ from those of
    the rows already there."""
    wanted = json.loads(json.dumps(params, sort_keys=True, default=str))
    if path.exists():
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise SweepParameterError(f"{path}: unreadable sweep parameters ({exc})") from None
        if stored != wanted and csv_has_rows:
            diff = sorted(k for k in set(stored) | set(wanted) if stored.get(k) != wanted.get(k))
            detail = ", ".join(
                f"{k}: {stored.get(k)!r} in the file, {wanted.get(k)!r} now" for k in diff
            )
            raise SweepParameterError(
                f"{path.with_suffix('').with_suffix('.csv')}: computed under other parameters "
                f"({detail}); use another output folder or move the file away"
            )
    path.write_text(json.dumps(wanted, sort_keys=True, indent=1) + "\n", encoding="utf-8")


def run_sweep(
    sweep: Sweep, out_dir: str | os.PathLike[str], *, progress: bool = True
) -> list[dict[str, str]]:
    """Compute every row of ``sweep`` not yet in ``out_dir/NAME.csv``; write each at once.

    Parameters
    ----------
    sweep : Sweep
    out_dir : path-like
        Folder of the CSV and its parameter file (created if needed).
    progress : bool, default True
        Progress bar on standard error (tasks done / to do).

    Returns
    -------
    list of dict
        The rows of the current tasks (old and new, values as strings), in file order.

    Raises
    ------
    SweepParameterError
        The CSV holds rows computed under other sweep parameters.
    ValueError
        A malformed CSV (see :class:`ResultsCSV`), or a computed row that lacks a column.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    results = ResultsCSV(out / f"{sweep.name}.csv", sweep.fields, sweep.key)
    _check_params(out / f"{sweep.name}.params.json", sweep.params, bool(results.rows))
    todo = []
    wanted: set[tuple[str, ...]] = set()
    for task in sweep.tasks:
        keys = task.keys()
        wanted.update(results.key_of(k) for k in keys)
        missing = [k for k in keys if not results.done(k)]
        if missing:
            todo.append((task, missing))
    bar = tqdm(todo, desc=sweep.name, disable=not progress, file=sys.stderr, leave=False)
    for task, missing in bar:
        for row in sweep.compute(task.params, missing):
            lacking = [k for k in sweep.fields if k not in row]
            if lacking:
                raise ValueError(f"{sweep.name}: a computed row lacks column(s) {lacking}")
            results.append(row)
    return [r for r in results.rows if results.key_of(r) in wanted]
