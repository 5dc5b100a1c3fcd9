"""Reproduction ``headline``: FCFS, MC-SF, size priority and Sorted-F on the paper's 80/20 mix,
beside the production-style baselines ``vllm`` and ``vllm-sf`` (SPEC section 4; ours).

The seed paper's headline comparison (arXiv 2508.06133, section 6): mean latency of the list
policies on n = 2000 requests of the 80/20 conversation / summarization mix, M = 16,492, as
ratios to Sorted-F; here under each of the three LMSYS readings
(:mod:`lpsched.generators.lmsys`), with the Azure mix as the contrast, and the sensitivity of
the ratios to the lognormal shape and to M. :func:`policy_comparison` and :func:`ratio_table`
serve the ``sensitivity`` reproduction too.

``policies`` replaces the list of the main table (it must hold ``sorted-f``, the reference of
every ratio): a policy beyond :data:`HEADLINE_POLICIES` (a plug-in) gets the row ``NAME /
Sorted-F`` (``NAME+backfill / Sorted-F+backfill``); ``policy_options`` passes keyword options
to the policies that declare them. The sensitivity tables keep their three policies.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from ...datasets import cached_trace_dir, skipped
from ...generators.lmsys import LMSYS_READINGS
from ...generators.workloads import (
    PAPER_HEADLINE_RATIOS,
    PAPER_MEMORY,
    PAPER_N,
    PAPER_WORKLOAD,
    from_traces,
    generate,
)
from ...instance import Instance
from ...io import require_files
from ...policies.registry import (
    PolicySelectionError,
    check_policy_options,
    options_for,
    parse_policy,
    run_policy,
)
from ...sweeps.engine import Sweep, Task, finite_float, run_sweep, seconds, trace_identity
from ...sweeps.tables import markdown_table, write_report

__all__ = [
    "NAME",
    "DESCRIPTION",
    "HEADLINE_POLICIES",
    "HEADLINE_RATIOS",
    "TRACE_FILES",
    "HEADLINE_SOURCES",
    "SHAPE_PREFILL_SIGMAS",
    "SHAPE_DECODE_SIGMAS",
    "SENSITIVITY_MEMORIES",
    "shape_spec",
    "shape_table",
    "policy_comparison",
    "headline_ratios",
    "ratio_table",
    "run",
]

NAME = "headline"
DESCRIPTION = (
    "mean latency of FCFS, MC-SF, size and Sorted-F on the paper's 80/20 mix (arXiv "
    "2508.06133, section 6), beside the vllm baselines; sensitivity to shape and M"
)
HEADLINE_POLICIES = (
    "fcfs",
    "mcsf",
    "size",
    "sorted-f",
    "fcfs+backfill",
    "mcsf+backfill",
    "sorted-f+backfill",
    "vllm",
    "vllm-sf",
)
COMPARISON_FIELDS = ["source", "memory", "seed", "n", "policy", "tel", "mean_latency", "runtime_s"]
HEADLINE_RATIOS = (
    ("FCFS / Sorted-F", "fcfs", "sorted-f"),
    ("MC-SF / Sorted-F", "mcsf", "sorted-f"),
    ("size / Sorted-F", "size", "sorted-f"),
    ("FCFS+backfill / Sorted-F+backfill", "fcfs+backfill", "sorted-f+backfill"),
    ("MC-SF+backfill / Sorted-F+backfill", "mcsf+backfill", "sorted-f+backfill"),
    ("vllm / Sorted-F", "vllm", "sorted-f"),
    ("vllm-sf / Sorted-F", "vllm-sf", "sorted-f"),
)
#: Policy options the reproduction sets itself (``--option`` refuses them).
RESERVED_OPTIONS = {"solver": "the Sorted-F Phase 1 of a comparison is its solver argument"}
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
    out_dir: str | os.PathLike[str],
    name: str,
    sources: Sequence[str],
    memories: Sequence[int],
    seeds: Sequence[int],
    *,
    n: int = 2000,
    policies: Sequence[str] = HEADLINE_POLICIES,
    trace_dir: str | os.PathLike[str] | None = None,
    solver: str = "swap",
    policy_options: Mapping[str, Any] | None = None,
    **engine: Any,
) -> list[dict[str, str]]:
    """Mean latency of ``policies`` on every (source, M, seed); one CSV row per policy run.

    Parameters
    ----------
    out_dir : path-like
        Folder of the CSV (resumed if it exists).
    name : str
        File stem of the CSV (``NAME.csv``).
    sources : sequence of str
        Workload specs (:func:`~lpsched.generators.workloads.parse_mixture`) or ``"traces"``.
    memories : sequence of int
        KV-cache budgets ``M`` (tokens).
    seeds : sequence of int
    n : int
        Requests per instance.
    policies : sequence of str
        Registry names (``+backfill`` allowed).
    trace_dir : path-like, optional
        Folder of the public traces, for the source ``traces`` (default: the trace cache of
        :mod:`lpsched.datasets`).
    solver : str
        Sorted-F Phase-1 solver.
    policy_options : mapping, optional
        Keyword options for the policies that declare them (not ``solver``); part of every
        row's parameters when given.
    **engine
        Options of :func:`~lpsched.sweeps.engine.run_sweep` (``workers``, ``scheduler``,
        ``strict``, ``fresh``, ``progress``, ``verbose``).

    Returns
    -------
    list of dict
        The rows of these sources, budgets, seeds and policies. Every schedule is checked by
        the independent feasibility check.
    """
    options = dict(policy_options or {})
    check_policy_options(list(policies), options, RESERVED_OPTIONS)
    tdir = None
    if "traces" in sources:
        trace_dir = trace_dir if trace_dir is not None else cached_trace_dir(list(TRACE_FILES))
        if trace_dir is None:
            raise ValueError(
                "the source 'traces' needs trace_dir or the traces in the cache "
                f"(lpsched traces fetch {' '.join(TRACE_FILES)})"
            )
        tdir = require_files(trace_dir, list(TRACE_FILES.values()))

    rows = tuple({"policy": p} for p in policies)
    tasks = [
        Task({"source": src, "memory": memory, "seed": seed}, rows)
        for src in sources
        for memory in memories
        for seed in seeds
    ]
    sweep = Sweep(
        name,
        COMPARISON_FIELDS,
        ["source", "memory", "seed", "policy"],
        tasks,
        partial(_compare, n=n, solver=solver, trace_dir=tdir, options=options),
        params={
            "n": n,
            "solver": solver,
            "traces": trace_identity(tdir, TRACE_FILES.values()),
            **({"policy_options": options} if options else {}),
        },
        types={"n": int, "tel": int, "mean_latency": finite_float, "runtime_s": seconds},
        check=partial(_check_row, n=n),
    )
    return run_sweep(sweep, out_dir, **engine)


def _compare(
    params: Mapping[str, Any],
    missing: list[dict[str, Any]],
    *,
    n: int,
    solver: str,
    trace_dir: Path | None,
    options: Mapping[str, Any] | None = None,
) -> Iterator[dict[str, Any]]:
    """The rows of one (source, M, seed): every missing policy on one instance."""
    inst = _comparison_instance(params["source"], params["seed"], n, params["memory"], trace_dir)
    for key in missing:
        sched = run_policy(inst, key["policy"], **(options or {}), solver=solver).check()
        yield {
            **key,
            "n": n,
            "tel": sched.tel,
            "mean_latency": sched.mean_latency,
            "runtime_s": sched.info["runtime_s"],
        }


def _check_row(v: Mapping[str, Any], *, n: int) -> str | None:
    """A row read back must be possible: its ``n`` is the sweep's, ``TEL >= n`` (every latency
    is at least one round) and ``mean_latency = TEL / n``."""
    if v["n"] != n:
        return f"n = {v['n']} in a sweep of n = {n}"
    if v["tel"] < v["n"]:
        return f"TEL {v['tel']} is impossible for n = {v['n']} requests"
    if abs(v["mean_latency"] - v["tel"] / v["n"]) > 1e-4 * max(1.0, v["mean_latency"]):
        return f"mean_latency {v['mean_latency']} is not TEL / n = {v['tel'] / v['n']:.6g}"
    return None


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


#: The sources of the main table: the paper's mix under each LMSYS reading (the default first),
#: then the Azure contrast mix from the shipped tables and, with the traces, from real rows.
HEADLINE_SOURCES = ("paper-mix", "paper-mix-subset", "paper-mix-conversation", "mix-80-20")
#: Shapes of the sensitivity table: lognormal sigma of the prefill and of the decode length of
#: the ``lmsys-turn`` reading (defaults 1.616 and 1.131, :mod:`lpsched.generators.lmsys`).
_TURN = LMSYS_READINGS["lmsys-turn"]
SHAPE_PREFILL_SIGMAS = (0.8, 1.2, _TURN.prefill_sigma, 2.0)
SHAPE_DECODE_SIGMAS = (0.6, 0.9, _TURN.decode_sigma, 1.4)
#: KV-cache budgets of the sensitivity table (tokens): the paper's 16,492 halved, doubled and
#: quadrupled (a quarter would be below the largest arXiv requests, about 4,200 tokens).
SENSITIVITY_MEMORIES = (8246, 16492, 32984, 65536)
_PAPER = {label: f"{paper:.2f}" for label, _, _, paper in PAPER_HEADLINE_RATIOS}


def headline_ratios(policies: Sequence[str]) -> list[tuple[str, str, str]]:
    """The ratio rows of the main table for ``policies``: those of :data:`HEADLINE_RATIOS`
    whose two policies are in the list, then ``NAME / Sorted-F`` for every other policy
    (``NAME+backfill / Sorted-F+backfill`` when that reference is in the list). Source: ours."""
    chosen = set(policies)
    out = [r for r in HEADLINE_RATIOS if r[1] in chosen and r[2] in chosen]
    covered = {p for _, num, den in out for p in (num, den)} | {"sorted-f"}
    for p in policies:
        if p in covered:
            continue
        den = "sorted-f+backfill" if p.endswith("+backfill") else "sorted-f"
        den = den if den in chosen and den != p else "sorted-f"
        out.append((f"{p} / {'Sorted-F+backfill' if den != 'sorted-f' else 'Sorted-F'}", p, den))
    return out


def shape_spec(prefill_sigma: float, decode_sigma: float) -> str:
    """The ``paper-mix`` spec with the ``lmsys-turn`` shapes ``prefill_sigma``, ``decode_sigma``
    (a default shape is left out of the spec, so the default cell is ``paper-mix`` itself)."""
    params = [
        f"{key}={value!r}"
        for key, value, default in (
            ("prefill_sigma", prefill_sigma, _TURN.prefill_sigma),
            ("decode_sigma", decode_sigma, _TURN.decode_sigma),
        )
        if value != default
    ]
    turn = "lmsys-turn" + (f"[{';'.join(params)}]" if params else "")
    return f"{turn}:0.8,summarization:0.2"


def shape_table(rows: Sequence[Mapping[str, str]]) -> str:
    """Markdown: FCFS / Sorted-F and MC-SF / Sorted-F (means over seeds) for each pair of
    lognormal shapes; rows the prefill sigma, columns the decode sigma."""
    lat = {(r["source"], r["seed"], r["policy"]): float(r["mean_latency"]) for r in rows}
    seeds = sorted({r["seed"] for r in rows})

    def mean_ratio(src: str, num: str) -> str:
        vals = [
            lat[(src, s, num)] / lat[(src, s, "sorted-f")]
            for s in seeds
            if (src, s, num) in lat and (src, s, "sorted-f") in lat
        ]
        return f"{np.mean(vals):.2f}" if vals else "-"

    out = []
    for ps in SHAPE_PREFILL_SIGMAS:
        row = {"prefill sigma": f"{ps:.4g}"}
        for ds in SHAPE_DECODE_SIGMAS:
            src = shape_spec(ps, ds)
            cell = f"{mean_ratio(src, 'fcfs')} / {mean_ratio(src, 'mcsf')}"
            row[f"decode sigma {ds:.4g}"] = cell
        out.append(row)
    headers = ["prefill sigma", *(f"decode sigma {ds:.4g}" for ds in SHAPE_DECODE_SIGMAS)]
    return markdown_table(out, headers) + (
        "\n\nCells: FCFS / Sorted-F and MC-SF / Sorted-F, mean over seeds; the default shape "
        "(prefill 1.616, decode 1.131) is paper-mix itself, and the means stay the published "
        "ones at every shape."
    )


def run(
    out_dir: str | os.PathLike[str],
    *,
    seeds: Sequence[int] = (0, 1, 2, 3, 4),
    n: int = PAPER_N,
    memory: int = PAPER_MEMORY,
    trace_dir: str | os.PathLike[str] | None = None,
    solver: str = "swap",
    sensitivity: bool = True,
    policies: Sequence[str] = HEADLINE_POLICIES,
    policy_options: Mapping[str, Any] | None = None,
    **engine: Any,
) -> str:
    """The paper's headline comparison (arXiv 2508.06133, section 6): mean latency of FCFS,
    MC-SF, size priority and Sorted-F on the 80/20 conversation/summarization mix.

    Parameters
    ----------
    out_dir : path-like
        Writes ``headline.csv`` (one row per source, seed and policy) and ``headline.md``;
        with ``sensitivity``, also ``headline-shape.csv`` and ``headline-memory.csv``.
    seeds : sequence of int
        Instance seeds.
    n, memory : int
        Requests per instance and KV-cache budget ``M`` (tokens); the paper's 2000 and 16,492.
    trace_dir : path-like, optional
        Folder of the public traces: adds the source ``traces`` (80% Azure conversation rows,
        20% arXiv rows drawn from the real files ``splitwise_conv.csv`` and
        ``arxiv_summarization_stats_llama2_tokenizer_filtered_v2.csv``) beside the
        :data:`HEADLINE_SOURCES`. Default: the trace cache (``lpsched traces fetch``) when it
        holds both files; else the column is skipped, which the report and standard error say.
    solver : str
        Sorted-F Phase-1 solver (the paper used ``swap`` at n = 2000).
    sensitivity : bool
        Add the two sensitivity tables on ``paper-mix``: the lognormal shapes of the LMSYS
        reading (:data:`SHAPE_PREFILL_SIGMAS` x :data:`SHAPE_DECODE_SIGMAS`) and the budget
        ``M`` (:data:`SENSITIVITY_MEMORIES`), for FCFS, MC-SF and Sorted-F.
    policies : sequence of str
        The policies of the main table (default :data:`HEADLINE_POLICIES`), with
        ``sorted-f``; each one beyond the default gets a ratio row (:func:`headline_ratios`).
        A rerun with more policies computes only their rows; the rows of policies left out
        stay in the CSV, out of the table.
    policy_options : mapping, optional
        Keyword options for the policies that declare them (not ``solver``); the sensitivity
        tables get those their policies declare. Part of the rows' parameters when given.
    **engine
        Options of :func:`~lpsched.sweeps.engine.run_sweep`.

    Returns
    -------
    str
        Markdown: per source, mean (min-max over seeds) of the mean-latency ratios FCFS /
        Sorted-F and MC-SF / Sorted-F, strict and with backfill, beside the paper's figures,
        and vllm / Sorted-F, vllm-sf / Sorted-F (no paper figure: our baselines); then the
        sensitivity tables.

    Raises
    ------
    KeyError
        Unknown policy name.
    PolicySelectionError
        ``policies`` without ``sorted-f``, or a policy option none of them declares.
    """
    pols = list(dict.fromkeys(policies))
    for p in pols:
        parse_policy(p)  # an unknown name fails here, before any run
    if "sorted-f" not in pols:
        raise PolicySelectionError(
            "headline: every ratio is to sorted-f; keep sorted-f in the policies"
        )
    options = dict(policy_options or {})
    check_policy_options(pols, options, RESERVED_OPTIONS)
    note = None
    if trace_dir is None:
        trace_dir = cached_trace_dir(list(TRACE_FILES))
        if trace_dir is None:
            note = skipped(
                "the 'traces' column (real Azure conversation and arXiv rows)", [*TRACE_FILES]
            )
    sources = [*HEADLINE_SOURCES] + (["traces"] if trace_dir is not None else [])
    rows = policy_comparison(
        out_dir,
        NAME,
        sources,
        [memory],
        seeds,
        n=n,
        policies=pols,
        trace_dir=trace_dir,
        solver=solver,
        policy_options=options,
        **engine,
    )
    text = ratio_table(rows, ("source",), ratios=headline_ratios(pols), paper=_PAPER)
    text += (
        "\n\nColumns: paper-mix is the paper's mix as lpsched reads it (80% lmsys-turn, 20% "
        "arXiv summarization; the default); paper-mix-subset and paper-mix-conversation take "
        "the other two LMSYS readings; mix-80-20 (shipped tables) and traces (real rows) take "
        "their short requests from the Azure conversation trace instead: the contrast."
    )
    if note is not None:
        text += f"\n\nNote: {note}."
    if sensitivity:
        few = ("fcfs", "mcsf", "sorted-f")
        shapes = [shape_spec(ps, ds) for ps in SHAPE_PREFILL_SIGMAS for ds in SHAPE_DECODE_SIGMAS]
        shape_rows = policy_comparison(
            out_dir,
            f"{NAME}-shape",
            shapes,
            [memory],
            seeds,
            n=n,
            policies=few,
            solver=solver,
            policy_options=options_for(few, options),
            **engine,
        )
        memory_rows = policy_comparison(
            out_dir,
            f"{NAME}-memory",
            [PAPER_WORKLOAD],
            list(SENSITIVITY_MEMORIES),
            seeds,
            n=n,
            policies=few,
            solver=solver,
            policy_options=options_for(few, options),
            **engine,
        )
        text += "\n\n### Sensitivity to the shape of the LMSYS lengths (paper-mix, M = "
        text += f"{memory:,})\n\n" + shape_table(shape_rows)
        text += "\n\n### Sensitivity to the KV-cache budget M (paper-mix)\n\n"
        text += ratio_table(memory_rows, ("source", "memory"), ratios=HEADLINE_RATIOS[:2])
    return write_report(out_dir, NAME, text)
