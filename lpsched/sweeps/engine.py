"""The one sweep engine: tasks -> CSV rows with provenance, written as they finish, resumable,
parallel on local processes or a Dask cluster.

A reproduction declares a :class:`Sweep`: its tasks, the function that computes one task's
missing rows, the CSV columns and the columns that identify a row, the parameters shared by
every row, and how to check a row read back. :func:`run_sweep` then

* takes a lock on the output folder (a file in the user's cache, :func:`lock_path`), so two
  runs never write one CSV at once;
* reads the CSV if it exists. Every row carries its **provenance**: the sweep parameters, the
  lpsched version, the git commit of the code (with ``-dirty`` for uncommitted changes) and the
  solver versions. A row counts only when all four match the current run; rows of other
  parameters or versions are reported by line and ignored (``strict=True`` refuses them). A line
  that is truncated, glued to the next one, or fails the sweep's check (a non-numeric TEL, a TEL
  below its own bound, an unknown status, ...) is reported with its line number, moved to
  ``NAME.rejected.csv`` with the reason, and recomputed, never trusted. So are all the rows of
  a task that fail the sweep's task check together (rows of one instance that disagree on
  its bound, or only a part of rows that must come from one computation);
* computes the missing rows: serially in this process (``workers=1``), in ``workers`` local
  processes, or on a Dask cluster (``scheduler=ADDRESS``, or ``"local"`` for a
  ``distributed.LocalCluster``). Results come back to this process, the one writer, which
  appends and flushes each row the moment it has it, so a crash or Ctrl-C loses at most the
  tasks in flight (each row is one write with SIGINT and SIGTERM held back, so the file never
  ends in half a row; on Ctrl-C the local worker processes are stopped). A worker process that
  dies (killed, out of memory) stops the run with :class:`SweepWorkerError`, the finished rows
  kept. Parallel and serial runs give the same rows. The plug-in modules imported in this
  process (``--import``, :func:`lpsched.policies.registry.plugin_modules`) are passed with
  every task, and a worker imports them before computing it, so plug-in policies run there
  too;
* shows a progress bar (``tqdm.auto``: tasks done / to do, rows reused, ETA; the tasks in
  flight with ``verbose``);
* returns the rows of the current tasks only, in task order, so a table drawn from them never
  counts rows that another run left in the file; when there are such rows of the same
  parameters and code, the reproduction's table and figures get their own names
  (:func:`lpsched.sweeps.tables.report_path`).

``fresh=True`` moves an existing CSV aside (``NAME.csv.bak-TIMESTAMP``) and starts over.
Source: ours (Dask: ``distributed`` for clusters; ``filelock`` for the folder lock).
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import csv
import hashlib
import io
import json
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from filelock import FileLock, Timeout
from tqdm.auto import tqdm

from .. import interrupts
from ..policies.registry import import_plugins, plugin_modules
from .checks import RowRules, non_finite
from .provenance import PROVENANCE, RowProvenance, provenance
from .tables import left_out_message, note_left_out
from .workers import check_workers

__all__ = [
    "Task",
    "Sweep",
    "SweepParameterError",
    "SweepLockedError",
    "SweepWorkerError",
    "finite_float",
    "seconds",
    "run_folder",
    "results_root",
    "lock_path",
    "run_sweep",
]

Row = Mapping[str, Any]
Compute = Callable[[Mapping[str, Any], list[dict[str, Any]]], Iterable[Row]]


class SweepParameterError(ValueError):
    """A CSV holds rows of other parameters or versions and the run is strict. Source: ours."""


class SweepLockedError(BlockingIOError):
    """Another run holds the lock of the output folder (an ``OSError``). Source: ours."""


class SweepWorkerError(RuntimeError):
    """A worker process died (killed by a signal, out of memory) during a parallel sweep; the
    message names the tasks that were not finished and where the finished rows are. Source:
    ours."""


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back inside the block (POSIX, main thread), delivering them on
    exit, so that a row is written whole or not at all."""
    held = {signal.SIGINT, signal.SIGTERM}
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not (
        threading.main_thread()
    ):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


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
        File stem: rows go to ``NAME.csv``.
    fields : sequence of str
        The result columns, in order (the :data:`PROVENANCE` columns are appended).
    key : sequence of str
        Columns that identify a row (a subset of ``fields``).
    tasks : sequence of Task
    compute : callable
        ``compute(params, missing)`` yields one row (a mapping with every column of ``fields``)
        for each key mapping in ``missing`` (the task's rows not yet done). For parallel runs it
        must be picklable: a module-level function, or a ``functools.partial`` of one.
    params : mapping
        Parameters shared by every row (e.g. ``n``, ``time_limit``); JSON-serialisable. Part
        of each row's provenance.
    types : mapping of str to callable, optional
        Column -> parser (``int``, ``float``, ...) applied to the text of a row read back; a
        value that does not parse rejects the row.
    check : callable, optional
        ``check(values) -> str or None`` on the parsed values of a row read back (unparsed
        columns as text): the reason the row is impossible (e.g. a TEL below its own lower
        bound), or None.
    check_task : callable, optional
        ``check_task(rows) -> str or None`` on the rows of one task read back (parsed as for
        ``check``), in the order of :meth:`Task.keys`, None for a row not in the file: the
        reason they cannot stand together (e.g. rows of one instance that disagree on its
        bound, or a part of rows that must come from one computation). Such rows are all
        rejected and the task recomputed whole.
    rules : RowRules
        The checks every sweep shares (:mod:`.checks`): finite numbers always; the order of
        columns, the columns the rows of one task share and the values of the row's own
        instance where the sweep declares them.
    """

    name: str
    fields: Sequence[str]
    key: Sequence[str]
    tasks: Sequence[Task]
    compute: Compute
    params: Mapping[str, Any] = field(default_factory=dict)
    types: Mapping[str, Callable[[str], Any]] = field(default_factory=dict)
    check: Callable[[Mapping[str, Any]], str | None] | None = None
    check_task: Callable[[Sequence[Mapping[str, Any] | None]], str | None] | None = None
    rules: RowRules = RowRules()


_TIMING = frozenset({"runtime_s", "mip_s", "lp_s", "exact_s"})


def finite_float(text: str) -> float:
    """Parse a CSV cell as a finite float (``nan`` and ``inf`` are refused), for
    :attr:`Sweep.types`. Source: ours."""
    value = float(text)
    if not np.isfinite(value):
        raise ValueError(f"not finite: {text!r}")
    return value


def seconds(text: str) -> float:
    """Parse a CSV cell as a duration: a finite float ``>= 0`` (seconds), for
    :attr:`Sweep.types`. Source: ours."""
    value = finite_float(text)
    if value < 0:
        raise ValueError(f"negative duration: {text!r}")
    return value


def _fmt(v: Any) -> str:
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.6g}"
    return str(v)


#: Environment variable naming the folder of :func:`run_folder`'s results.
RESULTS_ENV = "LPSCHED_RESULTS"


def results_root() -> Path:
    """The default folder of :func:`run_folder`: ``$LPSCHED_RESULTS`` when set, else
    ``results`` in the user's cache (``pooch.os_cache("lpsched")``, e.g.
    ``~/.cache/lpsched/results``), so that a notebook run from a checkout writes nothing
    inside it. Source: ours."""
    env = os.environ.get(RESULTS_ENV, "").strip()
    if env:
        return Path(env).expanduser()
    import pooch

    return Path(pooch.os_cache("lpsched")) / "results"


def run_folder(
    name: str, params: Mapping[str, Any], root: str | os.PathLike[str] | None = None
) -> Path:
    """A results folder keyed by a run's own parameters and code: ``root/NAME-HASH``.

    Two runs with other parameters (a small and a full-size notebook run, say) get two
    folders, so their rows and figures never mix; the same parameters get the same folder, so
    a rerun resumes. The code that computes the rows (the ``commit`` of their provenance) is
    part of the key too: a sweep reuses rows of the same code only, and a folder of older code
    may hold a CSV whose columns this code's sweep no longer has (refused). The parameters are
    written to ``params.json`` inside.

    Parameters
    ----------
    name : str
        A readable prefix (e.g. the notebook's name).
    params : mapping
        JSON-serialisable parameters of the run.
    root : path-like, optional
        Default :func:`results_root` (``$LPSCHED_RESULTS``, else the user's cache).

    Returns
    -------
    Path
        The folder (created). Source: ours.
    """
    text = json.dumps(params, sort_keys=True, separators=(",", ":"), default=str)
    code = provenance({})["commit"]
    digest = hashlib.sha256(f"{text}\n{code}".encode()).hexdigest()[:10]
    folder = Path(results_root() if root is None else root) / f"{name}-{digest}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "params.json").write_text(json.dumps(json.loads(text), indent=1) + "\n")
    return folder


def _say(message: str) -> None:
    print(f"lpsched: {message}", file=sys.stderr, flush=True)


def _lines(numbers: Sequence[int], limit: int = 8) -> str:
    shown = ", ".join(str(n) for n in numbers[:limit])
    return shown + (f" and {len(numbers) - limit} more" if len(numbers) > limit else "")


@dataclass
class _Reading:
    """What reading a results CSV found, by line number: the lines kept in the file, the
    rejected ones ``(line, text, reason)``, the current rows' parsed values and lines (by key),
    the stale lines by what differs, and the repeated keys ``(line, same values)``."""

    kept: dict[int, str]
    rejected: list[tuple[int, str, str]]
    parsed: dict[tuple[str, ...], dict[str, Any]] = field(default_factory=dict)
    line_of: dict[tuple[str, ...], int] = field(default_factory=dict)
    stale: dict[str, list[int]] = field(default_factory=dict)
    duplicates: list[tuple[int, bool]] = field(default_factory=list)


class _Results:
    """The CSV of one sweep: read and sorted into current, stale and rejected rows; appends."""

    def __init__(
        self,
        sweep: Sweep,
        path: Path,
        prov: RowProvenance,
        strict: bool,
        report: Callable[[str], None],
    ):
        self.sweep, self.path, self.prov = sweep, path, prov
        self.header = [*sweep.fields, *PROVENANCE]
        self.key = list(sweep.key)
        self.done: dict[tuple[str, ...], dict[str, str]] = {}
        if path.exists() and path.stat().st_size:
            self._read(strict, report)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("w", newline="", encoding="utf-8") as fh:
                csv.writer(fh).writerow(self.header)

    def key_of(self, row: Row) -> tuple[str, ...]:
        return tuple(_fmt(row[k]) for k in self.key)

    def _parse(self, row: dict[str, str]) -> tuple[dict[str, Any], str | None]:
        """The row's parsed values and the reason it is impossible (None: it is not)."""
        values: dict[str, Any] = dict(row)
        for col, parse in self.sweep.types.items():
            try:
                values[col] = parse(row[col])
            except (TypeError, ValueError, OverflowError):
                return values, (
                    f"field '{col}' is not a valid {getattr(parse, '__name__', 'value')}: "
                    f"{row[col]!r}"
                )
        rules, checked = self.sweep.rules, [c for c in self.sweep.fields if c not in self.key]
        try:
            problem = non_finite(row, checked, rules.not_applicable)
            if problem is None and self.sweep.check is not None:
                problem = self.sweep.check(values)
            return values, problem or rules.row_problem(values)
        except Exception as exc:  # a row so broken that the check itself fails is rejected too
            return values, f"the row's values cannot be checked ({exc})"

    def _task_problems(
        self, parsed: dict[tuple[str, ...], dict[str, Any]]
    ) -> list[tuple[list[tuple[str, ...]], str]]:
        """The tasks whose rows in the file fail ``check_task``: (their keys, the reason)."""
        check = self.sweep.check_task
        out = []
        for task in self.sweep.tasks:
            keys = [self.key_of(k) for k in task.keys()]
            present = [k for k in keys if k in self.done]
            if not present:
                continue
            rows = [parsed[k] if k in self.done else None for k in keys]
            try:
                problem = self.sweep.rules.task_problem(rows)
                if problem is None and check is not None:
                    problem = check(rows)
            except Exception as exc:  # rows so broken that the check itself fails
                problem = f"the task's rows cannot be checked together ({exc})"
            if problem is not None:
                out.append((present, problem))
        return out

    def _read(self, strict: bool, report: Callable[[str], None]) -> None:
        """Sort the file's rows into current (``done``), stale (reported, kept in the file),
        repeated (reported, the first used) and rejected ones (moved to ``NAME.rejected.csv``
        and cut from the file); :class:`SweepParameterError` for stale rows with ``strict``."""
        lines, rejected = self._checked_lines()
        reading = _Reading(kept={1: lines[0]}, rejected=rejected)
        for line_no, line in enumerate(lines[1:], start=2):
            self._sort_line(reading, line_no, line)
        for keys, problem in self._task_problems(reading.parsed):
            for k in keys:
                n = reading.line_of[k]
                reading.rejected.append(
                    (n, reading.kept.pop(n), f"{problem}; the task is recomputed whole")
                )
                del self.done[k]
        reading.rejected.sort()
        if reading.stale:
            self._stale(reading.stale, strict, report)
        if reading.duplicates:
            conflicting = [n for n, same in reading.duplicates if not same]
            report(
                f"{self.path}: line(s) {_lines([n for n, _ in reading.duplicates])} repeat the "
                "key of an earlier row with the same provenance; the first of each is used"
                + (f" (line(s) {_lines(conflicting)} disagree with it)" if conflicting else "")
            )
        if reading.rejected:
            self._move_rejected(reading, report)

    def _checked_lines(self) -> tuple[list[str], list[tuple[int, str, str]]]:
        """The file's lines, the header checked, and the incomplete last line rejected."""
        raw = self.path.read_bytes()
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise ValueError(
                f"{self.path}: not a UTF-8 results CSV; move it away or use --fresh"
            ) from None
        rejected: list[tuple[int, str, str]] = []  # (line, text, reason)
        keep_text = text
        if not text.endswith("\n"):
            cut = text.rfind("\n") + 1
            line_no = text.count("\n") + 1
            why = "incomplete line (the file did not end with a newline: an interrupted write)"
            rejected.append((line_no, text[cut:], why))
            keep_text = text[:cut]
        lines = keep_text.splitlines(keepends=True)
        if not lines:
            raise ValueError(f"{self.path}: no header line; move it away or use --fresh")
        try:
            header = next(csv.reader([lines[0]]))
        except csv.Error as exc:
            raise ValueError(f"{self.path}: line 1: malformed CSV header ({exc})") from None
        if header != self.header:
            raise ValueError(
                f"{self.path}: header {header} differs from this sweep's columns "
                f"{self.header}; use --fresh (the old file is kept as a backup) or "
                "another output folder"
            )
        return lines, rejected

    def _sort_line(self, reading: _Reading, line_no: int, line: str) -> None:
        """File one line of the body: blank (kept), rejected, stale, repeated or current."""
        if not line.strip():
            reading.kept[line_no] = line
            return
        try:
            cells = next(csv.reader([line]))
        except csv.Error as exc:
            reading.rejected.append((line_no, line, f"malformed CSV ({exc})"))
            return
        if len(cells) != len(self.header):
            why = f"{len(cells)} fields, expected {len(self.header)} (truncated or glued)"
            reading.rejected.append((line_no, line, why))
            return
        row = dict(zip(self.header, cells, strict=True))
        values, problem = self._parse(row)
        if problem is not None:
            reading.rejected.append((line_no, line, problem))
            return
        reading.kept[line_no] = line
        own = self.prov.of(row[k] for k in self.key)
        differ = [c for c in PROVENANCE if row[c] != own[c]]
        if differ:
            what = "; ".join(f"{c} {row[c] or '-'} (now {own[c] or '-'})" for c in differ)
            reading.stale.setdefault(what, []).append(line_no)
            return
        k = self.key_of(row)
        if k in self.done:
            first = self.done[k]
            same = all(first[c] == row[c] for c in self.sweep.fields if c not in _TIMING)
            reading.duplicates.append((line_no, same))
            return
        self.done[k], reading.parsed[k], reading.line_of[k] = row, values, line_no

    def _stale(
        self, stale: dict[str, list[int]], strict: bool, report: Callable[[str], None]
    ) -> None:
        """Report the rows of other parameters or versions, or refuse them with ``strict``."""
        detail = "; ".join(f"line(s) {_lines(nums)}: {what}" for what, nums in stale.items())
        message = (
            f"{self.path}: {sum(map(len, stale.values()))} row(s) were computed under "
            f"other parameters or versions ({detail})"
        )
        if strict:
            raise SweepParameterError(
                message + "; --strict refuses them (use --fresh or another output folder)"
            )
        report(message + "; ignored (they stay in the file)")

    def _move_rejected(self, reading: _Reading, report: Callable[[str], None]) -> None:
        """Append the rejected lines to ``NAME.rejected.csv`` with their reasons, report each,
        and rewrite the CSV with the kept lines only."""
        bad = self.path.with_name(self.path.stem + ".rejected.csv")
        new = not bad.exists() or not bad.stat().st_size
        if not new and not bad.read_bytes().endswith(b"\n"):
            with bad.open("a", encoding="utf-8") as fh:
                fh.write("\n")
        with bad.open("a", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            if new:
                w.writerow(["line", "reason", "text"])
            for line_no, line, reason in reading.rejected:
                w.writerow([line_no, reason, line.rstrip("\r\n")])
        for line_no, _, reason in reading.rejected:
            report(f"{self.path}: line {line_no}: {reason}; moved to {bad.name} and recomputed")
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text("".join(reading.kept[n] for n in sorted(reading.kept)), encoding="utf-8")
        os.replace(tmp, self.path)

    def append(self, row: Row) -> dict[str, str]:
        lacking = [k for k in self.sweep.fields if k not in row]
        if lacking:
            raise ValueError(f"{self.sweep.name}: a computed row lacks column(s) {lacking}")
        out = {k: _fmt(row[k]) for k in self.sweep.fields}
        out |= self.prov.of(out[k] for k in self.key)
        buf = io.StringIO()
        csv.writer(buf).writerow([out[k] for k in self.header])
        data = buf.getvalue().encode("utf-8")
        with _signals_held():
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
            try:
                written = 0
                while written < len(data):
                    written += os.write(fd, data[written:])
            finally:
                os.close(fd)
        self.done[self.key_of(out)] = out
        return out


def _compute_all(
    compute: Compute,
    params: Mapping[str, Any],
    missing: list[dict[str, Any]],
    plugins: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """One task's rows as a list (what a worker process sends back), after importing the
    plug-in modules of the parent (each once per process, from the folder the parent imported
    it from)."""
    if plugins:
        import_plugins(plugins)
    return [dict(r) for r in compute(params, missing)]


def _label(params: Mapping[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in params.items())


def lock_path(out_dir: str | os.PathLike[str]) -> Path:
    """The lock file of the results folder ``out_dir``: in the user's cache
    (``pooch.os_cache("lpsched")/locks``), named by a digest of the folder's resolved path, so
    that two runs writing one folder (under any of its names) exclude each other and the
    results folder holds only results. Source: ours."""
    import pooch

    key = hashlib.sha256(str(Path(out_dir).resolve()).encode()).hexdigest()[:16]
    folder = Path(pooch.os_cache("lpsched")) / "locks"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{key}.lock"


def run_sweep(
    sweep: Sweep,
    out_dir: str | os.PathLike[str],
    *,
    workers: int = 1,
    scheduler: str | None = None,
    strict: bool = False,
    fresh: bool = False,
    progress: bool = True,
    verbose: bool = False,
    report: Callable[[str], None] | None = None,
) -> list[dict[str, str]]:
    """Compute every row of ``sweep`` not yet in ``out_dir/NAME.csv``; write each at once.

    Parameters
    ----------
    sweep : Sweep
    out_dir : path-like
        Folder of the CSV (created if needed).
    workers : int, default 1
        1: compute in this process. More: that many local processes, or Dask workers of a
        ``LocalCluster`` with ``scheduler="local"``; at most
        :data:`~lpsched.sweeps.workers.MAX_WORKERS`.
    scheduler : str, optional
        A Dask scheduler address (``tcp://HOST:PORT``) to send the tasks to, or ``"local"``
        for a ``distributed.LocalCluster`` of ``workers`` single-threaded processes. Needs the
        ``cluster`` extra (``pip install "lpsched[cluster]"``).
    strict : bool, default False
        Refuse (:class:`SweepParameterError`) a CSV that holds rows of other parameters or
        versions, instead of ignoring them.
    fresh : bool, default False
        Move an existing CSV aside (``NAME.csv.bak-TIMESTAMP``) and start over.
    progress : bool, default True
        Progress bar on standard error.
    verbose : bool, default False
        Also name each task as it starts and ends.
    report : callable, optional
        Receives each message (reused rows, ignored and rejected lines); default: standard
        error.

    Returns
    -------
    list of dict
        The rows of the current tasks (values as strings, provenance columns included), in the
        order of ``sweep.tasks``.

    Raises
    ------
    SweepLockedError
        Another run holds the folder's lock.
    SweepParameterError
        ``strict`` and the CSV holds rows of other parameters or versions.
    ValueError
        ``workers`` outside ``1..MAX_WORKERS``, a CSV with other columns, or a computed row
        that lacks a column.
    ImportError
        ``scheduler`` given without the ``cluster`` extra installed.
    SweepWorkerError
        A local worker process died; the rows finished so far are in the CSV.
    KeyboardInterrupt
        Ctrl-C (the local worker processes are stopped; the rows finished so far are in the
        CSV, and its attribute ``rows_kept`` says how many rows of the run's tasks it holds).
    """
    say = report or _say
    check_workers(workers, scheduler)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{sweep.name}.csv"
    lock = FileLock(str(lock_path(out)))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise SweepLockedError(
            f"{out}: another lpsched run is writing here (lock "
            f"{lock.lock_file}); wait for it or use another --out"
        ) from None
    try:
        if fresh and path.exists():
            stamp = time.strftime("%Y%m%d-%H%M%S")
            backup = path.with_name(f"{path.name}.bak-{stamp}")
            k = 1
            while backup.exists():  # never overwrite an earlier backup
                k += 1
                backup = path.with_name(f"{path.name}.bak-{stamp}-{k}")
            os.replace(path, backup)
            say(f"{path}: moved the old results to {backup.name} (--fresh)")
        results = _Results(sweep, path, RowProvenance(sweep.params), strict, say)
        order: list[tuple[str, ...]] = []
        todo: list[tuple[Task, list[dict[str, Any]]]] = []
        for task in sweep.tasks:
            keys = task.keys()
            order += [results.key_of(k) for k in keys]
            missing = [k for k in keys if results.key_of(k) not in results.done]
            if missing:
                todo.append((task, missing))
        reused = sum(1 for k in order if k in results.done)
        if reused:
            say(f"{path}: reused {reused} of {len(order)} row(s) already computed")
        outside = set(results.done) - set(order)
        if outside:
            say(left_out_message(path, results.key, order, outside))
        note_left_out(path, order, outside)
        bar = tqdm(
            total=len(todo),
            desc=sweep.name,
            disable=not progress,
            file=sys.stderr,
            leave=False,
            unit="task",
        )
        bar.set_postfix(reused=reused)
        try:
            pending = _Pending(sweep, todo, results, bar, verbose, say, plugin_modules())
            if scheduler is not None:
                _run_dask(pending, scheduler, workers)
            elif workers > 1 and len(todo) > 1:
                _run_processes(pending, workers)
            else:
                _run_here(pending)
        except KeyboardInterrupt as exc:  # say how many of the run's rows the CSV keeps
            exc.rows_kept = sum(1 for k in order if k in results.done)  # type: ignore[attr-defined]
            raise
        finally:
            bar.close()
        return [results.done[k] for k in order if k in results.done]
    finally:
        lock.release()


@dataclass
class _Pending:
    """The tasks left to compute and where their rows go: the sweep, ``(task, missing keys)``
    pairs, the CSV, the progress bar, the messages and the plug-in modules for the workers."""

    sweep: Sweep
    todo: list[tuple[Task, list[dict[str, Any]]]]
    results: _Results
    bar: Any
    verbose: bool
    say: Callable[[str], None]
    plugins: Mapping[str, str] | None

    def record(self, rows: Iterable[Row]) -> None:
        """Append a finished task's rows to the CSV."""
        for row in rows:
            self.results.append(row)


def _run_here(pending: _Pending) -> None:
    """Compute the tasks in this process, each row written the moment it is computed."""
    sweep, say = pending.sweep, pending.say
    for task, missing in pending.todo:
        interrupts.check()  # a Ctrl-C whose exception compiled code dropped
        if pending.verbose:
            say(f"{sweep.name}: computing {_label(task.params)}")
        pending.record(sweep.compute(task.params, missing))
        pending.bar.update()


def _run_processes(pending: _Pending, workers: int) -> None:
    """Compute the tasks on ``workers`` local processes; a task's rows are written when it
    ends. :class:`SweepWorkerError` when a worker dies; Ctrl-C stops the workers."""
    sweep, say = pending.sweep, pending.say
    ctx = multiprocessing.get_context("forkserver" if sys.platform != "win32" else "spawn")
    pool = cf.ProcessPoolExecutor(max_workers=workers, mp_context=ctx)
    futures: dict[cf.Future, Task] = {}
    try:
        futures = {
            pool.submit(_compute_all, sweep.compute, t.params, m, pending.plugins): t
            for t, m in pending.todo
        }
        if pending.verbose:
            say(f"{sweep.name}: {len(futures)} task(s) queued on {workers} processes")
        for fut in cf.as_completed(futures):
            pending.record(fut.result())
            if pending.verbose:
                running = [_label(futures[f].params) for f in futures if f.running()]
                say(
                    f"{sweep.name}: done {_label(futures[fut].params)}; in flight: "
                    + ("; ".join(running) or "none")
                )
            pending.bar.update()
    except BrokenProcessPool:
        _stop_workers(pool)
        lost = [_label(t.params) for f, t in futures.items() if not _finished(f)]
        shown = "; ".join(lost[:4]) + (f" and {len(lost) - 4} more" if len(lost) > 4 else "")
        raise SweepWorkerError(
            f"{sweep.name}: a worker process died (killed by a signal or out of memory) with "
            f"{len(lost)} task(s) unfinished ({shown}); the finished rows are kept in "
            f"{pending.results.path}, rerun to resume"
        ) from None
    except BaseException:
        _stop_workers(pool)
        raise
    pool.shutdown()


def _finished(fut: cf.Future) -> bool:
    return fut.done() and not fut.cancelled() and fut.exception() is None


def _stop_workers(pool: cf.ProcessPoolExecutor) -> None:
    """Cancel the queued tasks and end the worker processes now: their running tasks are
    lost anyway, and a worker busy with a long solve would otherwise keep this process from
    exiting until it finished."""
    procs = list((getattr(pool, "_processes", None) or {}).values())  # the pool's own record
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in procs:
        if proc.is_alive():
            proc.terminate()
    for proc in procs:
        proc.join(5)


def _run_dask(pending: _Pending, scheduler: str, workers: int) -> None:
    """Compute the tasks on a Dask cluster (``scheduler``, or ``"local"``: a ``LocalCluster``
    of ``workers`` processes); a task's rows are written when it ends."""
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise ImportError(
            "a Dask scheduler needs the 'distributed' package: pip install \"lpsched[cluster]\""
        ) from None
    sweep, say = pending.sweep, pending.say
    cluster = None
    if scheduler == "local":
        cluster = LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
        )
        client = Client(cluster)
    else:
        client = Client(scheduler)
    try:
        futures = {
            client.submit(_compute_all, sweep.compute, t.params, m, pending.plugins, pure=False): t
            for t, m in pending.todo
        }
        if pending.verbose:
            say(f"{sweep.name}: {len(futures)} task(s) sent to the Dask scheduler {scheduler}")
        for fut in as_completed(list(futures)):
            pending.record(fut.result())
            if pending.verbose:
                left = sum(1 for f in futures if not f.done())
                say(f"{sweep.name}: done {_label(futures[fut].params)}; {left} to go")
            pending.bar.update()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
