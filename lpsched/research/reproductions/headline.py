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

``time_model`` (a registry spec such as ``llama2-70b-a100x2``, SPEC section 10) reads every
schedule of the main table in seconds as well: its rows (``headline-seconds.csv``) add the
figures of :data:`SECONDS_FIELDS`, and the report a table of the ratios in seconds beside those
in rounds (:func:`seconds_tables`). The schedules are the same: every policy still decides in
rounds.
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
from ...sweeps.checks import RowRules
from ...sweeps.engine import Sweep, Task, finite_float, run_sweep, seconds
from ...sweeps.provenance import trace_identity
from ...sweeps.tables import markdown_table, reproduction_run, write_report
from ...timing import TimeModel, parse_time_model, to_seconds
from ...timing.seconds import SECONDS_COLUMNS

__all__ = [
    "NAME",
    "DESCRIPTION",
    "HEADLINE_POLICIES",
    "HEADLINE_RATIOS",
    "SECONDS_FIELDS",
    "TRACE_FILES",
    "HEADLINE_SOURCES",
    "SHAPE_PREFILL_SIGMAS",
    "SHAPE_DECODE_SIGMAS",
    "SENSITIVITY_MEMORIES",
    "shape_spec",
    "shape_table",
    "policy_comparison",
    "ratio_specs",
    "ratio_table",
    "seconds_tables",
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
#: The columns a comparison under a time model adds (seconds; SPEC section 10,
#: :meth:`lpsched.timing.ScheduleSeconds.stats`); ``mean_tpot_s`` is empty when every o_i = 1.
SECONDS_FIELDS = [
    "tel_s",
    "mean_latency_s",
    "p99_latency_s",
    "mean_ttft_s",
    "mean_tpot_s",
    "throughput_tokens_s",
]
#: The ratio rows of the main table, (label, numerator, denominator): the paper's two first.
HEADLINE_RATIOS = (
    *((label, num, den) for label, num, den, _ in PAPER_HEADLINE_RATIOS),
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
    time_model: str | TimeModel | None = None,
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
    time_model : str or TimeModel, optional
        Read every schedule in seconds under this model too (a registry spec,
        :func:`~lpsched.timing.parse_time_model`): the rows gain :data:`SECONDS_FIELDS`, and
        the model's name and parameter values are part of every row's parameters (a resume
        under another model recomputes). Without it the columns and parameters are those of
        :data:`COMPARISON_FIELDS` alone, as before.
    **engine
        Options of :func:`~lpsched.sweeps.engine.run_sweep` (``workers``, ``scheduler``,
        ``strict``, ``fresh``, ``progress``, ``verbose``).

    Returns
    -------
    list of dict
        The rows of these sources, budgets, seeds and policies. Every schedule is checked by
        the independent feasibility check.

    Raises
    ------
    KeyError
        An unknown policy or time-model name.
    TimeModelError
        A malformed time-model spec (before any run).
    """
    model = None if time_model is None else parse_time_model(time_model)
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
    types: dict[str, Any] = {
        "n": int,
        "tel": int,
        "mean_latency": finite_float,
        "runtime_s": seconds,
    }
    if model is not None:
        types.update({f: _positive for f in SECONDS_FIELDS} | {"mean_tpot_s": _optional_positive})
    sweep = Sweep(
        name,
        COMPARISON_FIELDS + (SECONDS_FIELDS if model is not None else []),
        ["source", "memory", "seed", "policy"],
        tasks,
        partial(
            _compare,
            n=n,
            solver=solver,
            trace_dir=tdir,
            options=options,
            model=None if model is None else model.spec,  # a worker reads it back
        ),
        params={
            "n": n,
            "solver": solver,
            "traces": trace_identity(tdir, TRACE_FILES.values()),
            **({"policy_options": options} if options else {}),
            **({"time_model": model.to_dict()} if model is not None else {}),
        },
        types=types,
        check=partial(_check_row, n=n),
        rules=RowRules(order=[("mean_ttft_s", "mean_latency_s")] if model is not None else []),
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
    model: str | None = None,
) -> Iterator[dict[str, Any]]:
    """The rows of one (source, M, seed): every missing policy on one instance (with
    ``model``, a time-model spec, also the schedule's figures in seconds)."""
    tm = None if model is None else parse_time_model(model)
    inst = _comparison_instance(params["source"], params["seed"], n, params["memory"], trace_dir)
    for key in missing:
        sched = run_policy(inst, key["policy"], **(options or {}), solver=solver).check()
        row = {
            **key,
            "n": n,
            "tel": sched.tel,
            "mean_latency": sched.mean_latency,
            "runtime_s": sched.info["runtime_s"],
        }
        if tm is not None:
            stats = to_seconds(sched, tm).stats()
            row.update({f: stats[f] for f in SECONDS_FIELDS})
            if row["mean_tpot_s"] is None:  # every o_i = 1
                row["mean_tpot_s"] = ""
        yield row


def _positive(text: str) -> float:
    """A CSV cell of seconds read back: a finite float > 0 (every round lasts > 0 s)."""
    value = finite_float(text)
    if not value > 0:
        raise ValueError(f"not positive: {text!r}")
    return value


def _optional_positive(text: str) -> float | None:
    """``mean_tpot_s`` read back: empty (every o_i = 1) or a finite float > 0."""
    return None if text == "" else _positive(text)


def _check_row(v: Mapping[str, Any], *, n: int) -> str | None:
    """A row read back must be possible: its ``n`` is the sweep's, ``TEL >= n`` (every latency
    is at least one round) and ``mean_latency = TEL / n``."""
    if v["n"] != n:
        return f"n = {v['n']} in a sweep of n = {n}"
    if v["tel"] < v["n"]:
        return f"TEL {v['tel']} is impossible for n = {v['n']} requests"
    if abs(v["mean_latency"] - v["tel"] / v["n"]) > 1e-4 * max(1.0, v["mean_latency"]):
        return f"mean_latency {v['mean_latency']} is not TEL / n = {v['tel'] / v['n']:.6g}"
    if "tel_s" in v and abs(v["mean_latency_s"] - v["tel_s"] / v["n"]) > 1e-4 * v["mean_latency_s"]:
        return f"mean_latency_s {v['mean_latency_s']} is not tel_s / n = {v['tel_s'] / v['n']:.6g}"
    return None


def ratio_table(
    rows: Sequence[Mapping[str, str]],
    group: Sequence[str],
    ratios: Sequence[tuple[str, str, str]] = HEADLINE_RATIOS,
    paper: Mapping[str, str] | None = None,
    metric: str = "mean_latency",
    title: str = "ratio of mean latency",
) -> str:
    """Markdown table of mean-latency ratios ``num / den``: mean (min-max) over seeds, one
    column per group (e.g. ``("source",)`` or ``("source", "memory")``); ``metric`` is the
    column compared (``mean_latency_s`` for seconds) and ``title`` the first header."""
    lat = {(tuple(r[g] for g in group), r["seed"], r["policy"]): float(r[metric]) for r in rows}
    groups = list(dict.fromkeys(tuple(r[g] for g in group) for r in rows))
    seeds = list(dict.fromkeys(r["seed"] for r in rows))
    cols = [" M=".join(g) if len(g) > 1 else g[0] for g in groups]
    out = []
    for label, num, den in ratios:
        row = {title: label}
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
    headers = [title, *cols] + (["paper"] if paper is not None else [])
    return markdown_table(out, headers)


#: The formats of the figures in seconds of :func:`seconds_tables` (fewer digits than
#: ``lpsched run``'s tables: these are means over seeds).
_SECONDS_FORMATS = {
    "mean_latency_s": ".2f",
    "p99_latency_s": ".1f",
    "mean_ttft_s": ".2f",
    "mean_tpot_s": ".4f",
    "throughput_tokens_s": ".1f",
}
#: The per-policy figures of :func:`seconds_tables`: (header, column, format), means over seeds;
#: the figures in seconds under the headers of ``lpsched run`` (:data:`SECONDS_COLUMNS`).
_FIGURES = (
    ("mean latency (rounds)", "mean_latency", ".1f"),
    *(
        (head, key, _SECONDS_FORMATS[key])
        for key, head, _ in SECONDS_COLUMNS
        if key in _SECONDS_FORMATS
    ),
)


def seconds_tables(
    rows: Sequence[Mapping[str, str]],
    model: str | TimeModel,
    ratios: Sequence[tuple[str, str, str]] = HEADLINE_RATIOS,
    paper: Mapping[str, str] | None = None,
) -> str:
    """Markdown: the headline read in seconds under ``model`` (SPEC section 10).

    Parameters
    ----------
    rows : sequence of mapping
        Rows of :func:`policy_comparison` under ``model`` (with :data:`SECONDS_FIELDS`).
    model : str or TimeModel
        The time model of the rows (named in the text with its parameter values).
    ratios : sequence of (label, numerator, denominator)
        The ratio rows (:func:`ratio_specs`).
    paper : mapping, optional
        The paper's figure by label (arXiv 2508.06133, section 6; in rounds).

    Returns
    -------
    str
        Three tables: the ratios of mean latency in seconds, one column per source (mean
        (min-max) over seeds); on the first source, each ratio in rounds beside the same ratio
        in seconds (means over seeds); on the first source, each policy's figures (means over
        seeds): mean latency in rounds and in seconds, p99 latency, mean TTFT, mean TPOT,
        output tokens per second.

    Notes
    -----
    The schedules are those of the rounds: a policy plans in seconds only if it says so
    (``sorted-f-seconds``). Source: ours.
    """
    tm = parse_time_model(model)
    params = ", ".join(f"{k} = {v:.6g}" for k, v in tm.parameters)
    text = f"### In seconds: time model {tm.name}" + (f" ({params})" if params else "") + "\n\n"
    text += ratio_table(rows, ("source",), ratios, metric="mean_latency_s", title="ratio (s)")
    first = rows[0]["source"] if rows else "-"
    mine = [r for r in rows if r["source"] == first]
    seeds = list(dict.fromkeys(r["seed"] for r in mine))

    def mean_ratio(metric: str, num: str, den: str) -> str:
        val = {(r["seed"], r["policy"]): float(r[metric]) for r in mine}
        vals = [val[(s, num)] / val[(s, den)] for s in seeds if (s, num) in val and (s, den) in val]
        return f"{np.mean(vals):.2f}" if vals else "-"

    side = []
    for label, num, den in ratios:
        row = {
            "ratio of mean latency": label,
            "rounds": mean_ratio("mean_latency", num, den),
            "seconds": mean_ratio("mean_latency_s", num, den),
        }
        if paper is not None:
            row["paper (rounds)"] = paper.get(label, "-")
        side.append(row)
    headers = ["ratio of mean latency", "rounds", "seconds"]
    text += f"\n\n{first}, {len(seeds)} seed(s): rounds beside seconds\n\n"
    headers += ["paper (rounds)"] if paper is not None else []
    text += markdown_table(side, headers, numparse=False)
    figs = []
    for pol in dict.fromkeys(r["policy"] for r in mine):
        row = {"policy": pol}
        for head, col, fmt in _FIGURES:
            vals = [float(r[col]) for r in mine if r["policy"] == pol and r[col] != ""]
            row[head] = format(float(np.mean(vals)), fmt) if vals else "-"
        figs.append(row)
    text += f"\n\n{first}: each policy's figures, means over the seeds\n\n"
    text += markdown_table(figs, ["policy", *(h for h, _, _ in _FIGURES)], numparse=False)
    return text


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


def ratio_specs(policies: Sequence[str]) -> list[tuple[str, str, str]]:
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


@reproduction_run
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
    time_model: str | None = None,
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
        ``sorted-f``; each one beyond the default gets a ratio row (:func:`ratio_specs`).
        A rerun with more policies computes only their rows; the rows of policies left out
        stay in the CSV, out of the table.
    policy_options : mapping, optional
        Keyword options for the policies that declare them (not ``solver``); the sensitivity
        tables get those their policies declare. Part of the rows' parameters when given.
    time_model : str, optional
        A time model (registry spec ``NAME[:key=value,...]``, e.g. ``llama2-70b-a100x2``;
        SPEC section 10): the main table's rows go to ``headline-seconds.csv`` instead, each
        with the figures of its schedule in seconds (:data:`SECONDS_FIELDS`), the model's name
        and parameter values among the rows' parameters (a resume under another model
        recomputes); the report adds :func:`seconds_tables`. The sensitivity tables stay in
        rounds (their files unchanged). Without it, files, columns and parameters are as
        before.
    **engine
        Options of :func:`~lpsched.sweeps.engine.run_sweep`.

    Returns
    -------
    str
        Markdown: per source, mean (min-max over seeds) of the mean-latency ratios FCFS /
        Sorted-F and MC-SF / Sorted-F, strict and with backfill, beside the paper's figures,
        and vllm / Sorted-F, vllm-sf / Sorted-F (no paper figure: our baselines); with
        ``time_model``, the same in seconds (:func:`seconds_tables`); then the sensitivity
        tables.

    Raises
    ------
    KeyError
        Unknown policy or time-model name.
    TimeModelError
        A malformed time-model spec (raised before any run).
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
    model = None if time_model is None else parse_time_model(time_model)
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
        NAME if model is None else f"{NAME}-seconds",
        sources,
        [memory],
        seeds,
        n=n,
        policies=pols,
        trace_dir=trace_dir,
        solver=solver,
        policy_options=options,
        time_model=model,
        **engine,
    )
    text = ratio_table(rows, ("source",), ratios=ratio_specs(pols), paper=_PAPER)
    text += (
        "\n\nColumns: paper-mix is the paper's mix as lpsched reads it (80% lmsys-turn, 20% "
        "arXiv summarization; the default); paper-mix-subset and paper-mix-conversation take "
        "the other two LMSYS readings; mix-80-20 (shipped tables) and traces (real rows) take "
        "their short requests from the Azure conversation trace instead: the contrast."
    )
    if model is not None:
        text += "\n\n" + seconds_tables(rows, model, ratio_specs(pols), _PAPER)
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
