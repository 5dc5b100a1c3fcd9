"""Experiment sweeps that write one CSV row per finished task and resume after an interruption.

A sweep is a list of tasks (dicts of parameters), a function that computes the result columns of
one task, and a CSV file. Each finished row is appended and flushed at once; a rerun reads the
file, skips every task whose key is already there and computes only the rest. Tables for the
README are then built from the CSV (:func:`markdown_table`).

The headline comparison of the seed paper lives here too; :mod:`lpsched.reproductions` lists every
reproduction that ``lpsched reproduce NAME`` runs.
"""

from __future__ import annotations

import csv
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from tabulate import tabulate
from tqdm import tqdm

from .instance import Instance, InstanceError
from .policies import run_policy
from .workloads import from_traces, generate

__all__ = [
    "ResultsCSV",
    "run_sweep",
    "markdown_table",
    "policy_comparison",
    "ratio_table",
    "headline",
    "sensitivity",
]


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
        If an existing file has another header (the message names the file).
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
                        missing = [k for k in self.fields if not row.get(k)]
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
        self._done = {self._key(r) for r in self.rows}

    def _key(self, row: Mapping[str, Any]) -> tuple[str, ...]:
        return tuple(str(row[k]) for k in self.key)

    def done(self, task: Mapping[str, Any]) -> bool:
        """True if a row with the task's key is already in the file."""
        return self._key(task) in self._done

    def append(self, row: Mapping[str, Any]) -> None:
        """Write one row and flush it to disk at once."""
        out = {k: _fmt(row[k]) for k in self.fields}
        with self.path.open("a", newline="") as fh:
            csv.writer(fh).writerow([out[k] for k in self.fields])
        self.rows.append(out)
        self._done.add(self._key(out))


def require_trace_files(trace_dir: str | os.PathLike[str], names: Sequence[str]) -> Path:
    """Check, before a sweep starts, that ``trace_dir`` holds the trace files ``names``.

    Raises
    ------
    InstanceError
        Naming the folder and every missing file.
    """
    folder = Path(trace_dir)
    missing = [name for name in names if not (folder / name).is_file()]
    if missing:
        raise InstanceError(f"{folder}: missing trace file(s) {', '.join(missing)}")
    return folder


def _fmt(v: Any) -> str:
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.6g}"
    return str(v)


def run_sweep(
    tasks: Iterable[Mapping[str, Any]],
    compute: Callable[[Mapping[str, Any]], Iterable[Mapping[str, Any]]],
    results: ResultsCSV,
    *,
    desc: str = "sweep",
    progress: bool = True,
) -> list[dict[str, str]]:
    """Run every task not yet in ``results``; each result row is written as soon as it exists.

    Parameters
    ----------
    tasks : iterable of dict
        Task parameters; each must hold the key columns of ``results`` (or the rows that
        ``compute`` yields must).
    compute : callable
        ``compute(task)`` yields result rows (dicts with every column of ``results``).
    results : ResultsCSV
    desc : str
        Label of the progress bar (on standard error).

    Returns
    -------
    list of dict
        All rows of the file, old and new (values as strings).
    """
    todo = [t for t in tasks if not results.done(t)]
    bar = tqdm(todo, desc=desc, disable=not progress, file=sys.stderr, leave=False)
    for task in bar:
        for row in compute(task):
            results.append(row)
    return results.rows


def markdown_table(rows: Sequence[Mapping[str, Any]], headers: Sequence[str]) -> str:
    """A GitHub-flavoured Markdown table of ``rows`` (columns ``headers``)."""
    return tabulate([[r[h] for h in headers] for r in rows], headers=headers, tablefmt="github")


# ---------------------------------------------------------------------------------- headline
HEADLINE_POLICIES = (
    "fcfs",
    "mcsf",
    "size",
    "sorted-f",
    "fcfs+backfill",
    "mcsf+backfill",
    "sorted-f+backfill",
)
COMPARISON_FIELDS = ["source", "memory", "seed", "n", "policy", "tel", "mean_latency", "runtime_s"]
HEADLINE_RATIOS = (
    ("FCFS / Sorted-F", "fcfs", "sorted-f"),
    ("MC-SF / Sorted-F", "mcsf", "sorted-f"),
    ("size / Sorted-F", "size", "sorted-f"),
    ("FCFS+backfill / Sorted-F+backfill", "fcfs+backfill", "sorted-f+backfill"),
    ("MC-SF+backfill / Sorted-F+backfill", "mcsf+backfill", "sorted-f+backfill"),
)
TRACE_FILES = {
    "conversation": "splitwise_conv.csv",
    "summarization": "arxiv_summarization_stats_llama2_tokenizer_filtered_v2.csv",
}


def _comparison_instance(
    source: str, seed: int, n: int, memory: int, trace_dir: Path | None
) -> Instance:
    """``source`` is a workload spec, or ``traces`` for real rows (80% Azure conversation,
    20% arXiv) from ``trace_dir``."""
    if source != "traces":
        return generate(source, n, memory, seed=seed)
    assert trace_dir is not None  # checked by policy_comparison
    return from_traces(
        [trace_dir / TRACE_FILES["conversation"], trace_dir / TRACE_FILES["summarization"]],
        n,
        memory,
        weights=[0.8, 0.2],
        seed=seed,
    )


def policy_comparison(
    out_path: str | os.PathLike[str],
    sources: Sequence[str],
    memories: Sequence[int],
    seeds: Sequence[int],
    *,
    n: int = 2000,
    policies: Sequence[str] = HEADLINE_POLICIES,
    trace_dir: str | os.PathLike[str] | None = None,
    solver: str = "swap",
    progress: bool = True,
) -> list[dict[str, str]]:
    """Mean latency of ``policies`` on every (source, M, seed); one CSV row per policy run.

    Parameters
    ----------
    out_path : path-like
        The CSV (resumed if it exists).
    sources : sequence of str
        Workload specs (:func:`~lpsched.workloads.parse_mixture`) or ``"traces"``.
    memories : sequence of int
        KV-cache budgets ``M`` (tokens).
    seeds : sequence of int
    n : int
        Requests per instance.
    policies : sequence of str
        Registry names (``+backfill`` allowed).
    trace_dir : path-like, optional
        Folder of the public traces, for the source ``traces``.
    solver : str
        Sorted-F Phase-1 solver.

    Returns
    -------
    list of dict
        All rows of the CSV. Every schedule is checked by the independent feasibility check.
    """
    tdir = None
    if "traces" in sources:
        if trace_dir is None:
            raise ValueError("the source 'traces' needs trace_dir (e.g. ../shared/traces)")
        tdir = require_trace_files(trace_dir, list(TRACE_FILES.values()))
    results = ResultsCSV(out_path, COMPARISON_FIELDS, ["source", "memory", "seed", "policy"])

    def compute(task: Mapping[str, Any]):
        inst = _comparison_instance(task["source"], task["seed"], n, task["memory"], tdir)
        for policy in task["policies"]:
            sched = run_policy(inst, policy, solver=solver).check()
            yield {
                **task,
                "policy": policy,
                "n": n,
                "tel": sched.tel,
                "mean_latency": sched.mean_latency,
                "runtime_s": sched.info["runtime_s"],
            }

    tasks = []
    for src in sources:
        for memory in memories:
            for seed in seeds:
                key = {"source": src, "memory": memory, "seed": seed}
                todo = [p for p in policies if not results.done({**key, "policy": p})]
                if todo:
                    tasks.append({**key, "policy": todo[0], "policies": todo})
    return run_sweep(tasks, compute, results, desc=Path(out_path).stem, progress=progress)


def ratio_table(
    rows: Sequence[Mapping[str, str]],
    group: Sequence[str],
    ratios: Sequence[tuple[str, str, str]] = HEADLINE_RATIOS,
    paper: Mapping[str, str] | None = None,
) -> str:
    """Markdown table of mean-latency ratios ``num / den``: mean (min-max) over seeds, one
    column per group (e.g. ``("source",)`` or ``("source", "memory")``)."""
    lat = {
        (tuple(r[g] for g in group), r["seed"], r["policy"]): float(r["mean_latency"]) for r in rows
    }
    groups = list(dict.fromkeys(tuple(r[g] for g in group) for r in rows))
    seeds = list(dict.fromkeys(r["seed"] for r in rows))
    cols = [" M=".join(g) if len(g) > 1 else g[0] for g in groups]
    out = []
    for label, num, den in ratios:
        row = {"ratio of mean latency": label}
        for g, col in zip(groups, cols, strict=True):
            vals = [
                lat[(g, s, num)] / lat[(g, s, den)]
                for s in seeds
                if (g, s, num) in lat and (g, s, den) in lat
            ]
            row[col] = f"{np.mean(vals):.2f} ({min(vals):.2f}-{max(vals):.2f})" if vals else "-"
        if paper is not None:
            row["paper"] = paper.get(label, "-")
        out.append(row)
    headers = ["ratio of mean latency", *cols] + (["paper"] if paper is not None else [])
    return markdown_table(out, headers)


def headline(
    out_dir: str | os.PathLike[str],
    *,
    seeds: Sequence[int] = (0, 1, 2, 3, 4),
    n: int = 2000,
    memory: int = 16492,
    trace_dir: str | os.PathLike[str] | None = None,
    solver: str = "swap",
    progress: bool = True,
) -> str:
    """The paper's headline comparison (arXiv 2508.06133, section 6): mean latency of FCFS,
    MC-SF, size priority and Sorted-F on the 80/20 conversation/summarization mix.

    Parameters
    ----------
    out_dir : path-like
        Writes ``headline.csv`` (one row per source, seed and policy) and ``headline.md``.
    seeds : sequence of int
        Instance seeds.
    n, memory : int
        Requests per instance and KV-cache budget ``M`` (tokens); the paper's 2000 and 16,492.
    trace_dir : path-like, optional
        Folder of the public traces: adds the source ``traces`` (80% Azure conversation rows,
        20% arXiv rows drawn from the real files ``splitwise_conv.csv`` and
        ``arxiv_summarization_stats_llama2_tokenizer_filtered_v2.csv``) beside ``mix-80-20``
        (the shipped tables).
    solver : str
        Sorted-F Phase-1 solver (the paper used ``swap`` at n = 2000).

    Returns
    -------
    str
        Markdown: per source, mean (min-max over seeds) of the mean-latency ratios FCFS /
        Sorted-F and MC-SF / Sorted-F, strict and with backfill, beside the paper's figures.
    """
    sources = ["mix-80-20"] + (["traces"] if trace_dir is not None else [])
    rows = policy_comparison(
        Path(out_dir) / "headline.csv",
        sources,
        [memory],
        seeds,
        n=n,
        trace_dir=trace_dir,
        solver=solver,
        progress=progress,
    )
    table = ratio_table(
        rows, ("source",), paper={"FCFS / Sorted-F": "4.87", "MC-SF / Sorted-F": "2.09"}
    )
    (Path(out_dir) / "headline.md").write_text(table + "\n")
    return table


def sensitivity(
    out_dir: str | os.PathLike[str],
    *,
    seeds: Sequence[int] = (0, 1),
    n: int = 2000,
    memories: Sequence[int] = (16492, 65536),
    workloads: Sequence[str] = (
        "mix-80-20",
        "sharegpt:0.8,summarization:0.2",
        "code:0.8,summarization:0.2",
    ),
    solver: str = "swap",
    progress: bool = True,
) -> str:
    """How the headline ratios move with the conversation workload and the budget ``M``.

    Writes ``sensitivity.csv`` and ``sensitivity.md`` under ``out_dir`` and returns the
    Markdown (strict-order policies). Source: ours, to explain the gap to the paper's figures.
    """
    rows = policy_comparison(
        Path(out_dir) / "sensitivity.csv",
        workloads,
        memories,
        seeds,
        n=n,
        policies=("fcfs", "mcsf", "size", "sorted-f"),
        solver=solver,
        progress=progress,
    )
    table = ratio_table(rows, ("source", "memory"), ratios=HEADLINE_RATIOS[:3])
    (Path(out_dir) / "sensitivity.md").write_text(table + "\n")
    return table
