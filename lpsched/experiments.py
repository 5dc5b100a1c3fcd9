"""Experiment sweeps that write one CSV row per finished task and resume after an interruption.

A sweep is a list of tasks (dicts of parameters), a function that computes the result columns of
one task, and a CSV file. Each finished row is appended and flushed at once; a rerun reads the
file, skips every task whose key is already there and computes only the rest. Tables for the
README are then built from the CSV (:func:`markdown_table`).

Reproductions registered in :data:`REPRODUCTIONS` are run by ``lpsched reproduce NAME``.
"""

from __future__ import annotations

import csv
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tabulate import tabulate
from tqdm import tqdm

from .instance import Instance
from .policies import run_policy
from .workloads import from_traces, generate

__all__ = ["ResultsCSV", "run_sweep", "markdown_table", "Reproduction", "REPRODUCTIONS"]


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
            with self.path.open(newline="") as fh:
                reader = csv.DictReader(fh)
                if reader.fieldnames != self.fields:
                    raise ValueError(
                        f"{self.path}: header {reader.fieldnames} differs from {self.fields}; "
                        "move the file away to start a new sweep"
                    )
                self.rows = list(reader)
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


@dataclass(frozen=True)
class Reproduction:
    """A named paper reproduction: ``run(out_dir, **options)`` writes CSV + Markdown and returns
    the Markdown text."""

    name: str
    description: str
    run: Callable[..., str]


# ---------------------------------------------------------------------------------- headline
HEADLINE_POLICIES = ("fcfs", "mcsf", "size", "sorted-f", "fcfs+backfill", "mcsf+backfill",
                     "sorted-f+backfill")
HEADLINE_FIELDS = ["source", "seed", "n", "memory", "policy", "tel", "mean_latency", "runtime_s"]


def _headline_instance(source: str, seed: int, n: int, memory: int, trace_dir: Path | None
                       ) -> Instance:
    if source == "tables":
        return generate("mix-80-20", n, memory, seed=seed)
    assert trace_dir is not None
    return from_traces(
        [trace_dir / "splitwise_conv.csv",
         trace_dir / "arxiv_summarization_stats_llama2_tokenizer_filtered_v2.csv"],
        n, memory, weights=[0.8, 0.2], seed=seed,
    )


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
        Folder with ``splitwise_conv.csv`` and the arXiv trace: adds the source ``traces``
        (80% Azure conversation rows, 20% arXiv rows, drawn from the real files) beside
        ``tables`` (the shipped ``mix-80-20`` length tables).
    solver : str
        Sorted-F Phase-1 solver (the paper used ``swap`` at n = 2000).

    Returns
    -------
    str
        The Markdown summary: per source, mean (min-max over seeds) of the mean-latency ratios
        FCFS / Sorted-F and MC-SF / Sorted-F, strict and with backfill.
    """
    out = Path(out_dir)
    results = ResultsCSV(out / "headline.csv", HEADLINE_FIELDS, ["source", "seed", "policy"])
    sources = ["tables"] + (["traces"] if trace_dir is not None else [])
    tdir = Path(trace_dir) if trace_dir is not None else None

    def compute(task: Mapping[str, Any]):
        inst = _headline_instance(task["source"], task["seed"], n, memory, tdir)
        sched = run_policy(inst, task["policy"], solver=solver)
        sched.check()
        yield {**task, "n": n, "memory": memory, "tel": sched.tel,
               "mean_latency": sched.mean_latency, "runtime_s": sched.info["runtime_s"]}

    tasks = [{"source": src, "seed": s, "policy": p}
             for src in sources for s in seeds for p in HEADLINE_POLICIES]
    rows = run_sweep(tasks, compute, results, desc="headline", progress=progress)
    table = _headline_summary(rows, sources, seeds)
    (out / "headline.md").write_text(table + "\n")
    return table


def _headline_summary(rows: Sequence[Mapping[str, str]], sources: Sequence[str],
                      seeds: Sequence[int]) -> str:
    lat = {(r["source"], int(r["seed"]), r["policy"]): float(r["mean_latency"]) for r in rows}
    ratios = [("FCFS / Sorted-F", "fcfs", "sorted-f"), ("MC-SF / Sorted-F", "mcsf", "sorted-f"),
              ("size / Sorted-F", "size", "sorted-f"),
              ("FCFS / Sorted-F (backfill)", "fcfs+backfill", "sorted-f+backfill"),
              ("MC-SF / Sorted-F (backfill)", "mcsf+backfill", "sorted-f+backfill")]
    paper = {"FCFS / Sorted-F": "4.87", "MC-SF / Sorted-F": "2.09"}
    out = []
    for label, num, den in ratios:
        row = {"ratio of mean latency": label, "paper": paper.get(label, "-")}
        for src in sources:
            vals = [lat[(src, s, num)] / lat[(src, s, den)] for s in seeds
                    if (src, s, num) in lat and (src, s, den) in lat]
            row[src] = (f"{np.mean(vals):.2f} ({min(vals):.2f}-{max(vals):.2f})"
                        if vals else "-")
        out.append(row)
    headers = ["ratio of mean latency", *sources, "paper"]
    return markdown_table(out, headers)


REPRODUCTIONS: dict[str, Reproduction] = {
    "headline": Reproduction(
        "headline",
        "mean latency of FCFS, MC-SF, size and Sorted-F on the 80/20 mix (paper section 6)",
        headline,
    ),
}
