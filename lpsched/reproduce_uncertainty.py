"""Reproductions for unknown decode lengths and online arrivals (issue 5; SPEC sections 5-6).

* :func:`intervals` -- TEL of A_max, A_min and Sorted-F+Amin against the width of the prediction
  intervals, beside hindsight Sorted-F and MC-SF (true lengths).
* :func:`online_load` -- online FCFS, MC-SF and receding-horizon Sorted-F from light load to
  overload, with Poisson arrivals and with the Azure conversation trace's own arrivals.

Each writes a CSV (one row per finished run, flushed at once; a rerun resumes), a Markdown table
and PNG plots into ``out_dir`` and returns the Markdown. Source: ours (the experiment design of
arXiv 2508.14544, section 5, for intervals; SPEC section 5 for the online comparison).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from . import intervals as iv
from .arrivals import nominal_capacity, trace_window
from .experiments import ResultsCSV, markdown_table, require_trace_files, run_sweep
from .instance import Instance, read_trace_csv
from .online_metrics import latency_stats
from .policies import run_policy
from .workloads import generate

__all__ = ["intervals", "online_load", "INTERVAL_SETTINGS", "ONLINE_POLICIES"]

#: Interval settings of :func:`intervals`: (label, kind, eps).
INTERVAL_SETTINGS: tuple[tuple[str, str, float], ...] = (
    ("exact", "exact", 0.0),
    ("mult eps=0.1", "multiplicative", 0.1),
    ("mult eps=0.25", "multiplicative", 0.25),
    ("mult eps=0.5", "multiplicative", 0.5),
    ("mult eps=1", "multiplicative", 1.0),
    ("mult eps=2", "multiplicative", 2.0),
    ("mult eps=4", "multiplicative", 4.0),
    ("bins (powers of 2)", "binned", float("nan")),
    ("no information", "none", float("nan")),
)
INTERVAL_POLICIES = ("amax", "amin", "sorted-f-amin")
HINDSIGHT_POLICIES = ("sorted-f", "mcsf")
INTERVAL_FIELDS = [
    "interval",
    "seed",
    "n",
    "memory",
    "policy",
    "mean_width",
    "tel",
    "mean_latency",
    "evictions",
    "wasted_tokens",
    "runtime_s",
]


def _with_intervals(inst: Instance, kind: str, eps: float, seed: int) -> Instance:
    if kind == "exact":
        return iv.exact(inst)
    if kind == "multiplicative":
        return iv.multiplicative(inst, eps, seed=seed)
    if kind == "binned":
        return iv.binned(inst)
    return iv.no_information(inst)


def _plot(
    path: Path,
    series: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    *,
    xlabel: str,
    ylabel: str,
    title: str,
    logx: bool = False,
    logy: bool = False,
    hlines: Mapping[str, float] | None = None,
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for label, (x, y) in series.items():
        ax.plot(x, y, marker="o", label=label)
    for k, (label, y) in enumerate((hlines or {}).items()):
        ax.axhline(y, linestyle="--", color=f"C{len(series) + k}", label=label)
    if logx:
        ax.set_xscale("symlog", linthresh=0.1)
        ax.set_xlim(left=-0.01)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def intervals(
    out_dir: str | os.PathLike[str],
    *,
    seeds: Sequence[int] = (0, 1, 2),
    n: int = 1000,
    memory: int = 16492,
    workload: str = "mix-80-20",
    solver: str = "swap",
    progress: bool = True,
) -> str:
    """TEL against prediction-interval width for A_max, A_min, Sorted-F+Amin (SPEC section 6).

    Parameters
    ----------
    out_dir : path-like
        Writes ``intervals.csv`` (one row per interval setting, seed and policy; resumed),
        ``intervals.md`` and ``intervals.png`` (mean latency against ``eps``).
    seeds : sequence of int
        Instance seeds; the multiplicative intervals use the same seed.
    n, memory : int
        Requests per instance and ``M`` (tokens).
    workload : str
        Workload spec (:func:`~lpsched.workloads.generate`), offline (all ``a_i = 0``).
    solver : str
        Phase-1 solver of Sorted-F+Amin and of hindsight Sorted-F.
    progress : bool
        Progress bar on standard error.

    Returns
    -------
    str
        Markdown: per interval setting, the mean width ``u - l`` (tokens) and, for each
        policy, mean latency divided by hindsight Sorted-F's (mean over seeds), with A_min's
        and Sorted-F+Amin's evictions and wasted tokens per request. Every schedule is
        checked (runs included).

    Notes
    -----
    Settings: :data:`INTERVAL_SETTINGS` (exact, multiplicative ``eps`` from 0.1 to 4, fixed
    power-of-two bins, no information). Source: ours, after arXiv 2508.14544, section 5.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    results = ResultsCSV(out / "intervals.csv", INTERVAL_FIELDS, ["interval", "seed", "policy"])
    tasks = []
    for seed in seeds:
        tasks.append({"interval": "hindsight", "seed": seed, "kind": "hindsight", "eps": 0.0})
        for label, kind, eps in INTERVAL_SETTINGS:
            tasks.append({"interval": label, "seed": seed, "kind": kind, "eps": eps})
    cache: dict[int, Instance] = {}

    def compute(task: Mapping[str, Any]):
        seed = task["seed"]
        if seed not in cache:
            cache.clear()
            cache[seed] = generate(workload, n, memory, seed=seed)
        inst = cache[seed]
        key = {"interval": task["interval"], "seed": seed, "n": n, "memory": memory}
        if task["kind"] == "hindsight":
            pols, run_inst, width = HINDSIGHT_POLICIES, inst, 0.0
        else:
            run_inst = _with_intervals(inst, task["kind"], task["eps"], seed)
            pols = INTERVAL_POLICIES
            width = float(np.mean(run_inst.decode_hi - run_inst.decode_lo))
        for policy in pols:
            if results.done({**key, "policy": policy}):
                continue
            sched = run_policy(run_inst, policy, solver=solver).check()
            yield {
                **key,
                "policy": policy,
                "mean_width": width,
                "tel": sched.tel,
                "mean_latency": sched.mean_latency,
                "evictions": sched.evictions,
                "wasted_tokens": sched.wasted_tokens,
                "runtime_s": sched.info["runtime_s"],
            }

    todo = []
    for t in tasks:
        pols = HINDSIGHT_POLICIES if t["kind"] == "hindsight" else INTERVAL_POLICIES
        undone = [p for p in pols if not results.done({**t, "policy": p})]
        if undone:
            todo.append({**t, "policy": undone[0]})
    rows = run_sweep(todo, compute, results, desc="intervals", progress=progress)
    table = _interval_table(rows, n)
    (out / "intervals.md").write_text(table + "\n")
    _interval_plot(rows, out / "intervals.png")
    return table


def _mean_by(rows, keys, value) -> dict:
    acc: dict[tuple, list[float]] = {}
    for r in rows:
        acc.setdefault(tuple(r[k] for k in keys), []).append(float(r[value]))
    return {k: float(np.mean(v)) for k, v in acc.items()}


def _interval_table(rows, n: int) -> str:
    seeds = sorted({r["seed"] for r in rows})
    hind = {
        (r["seed"], r["policy"]): float(r["mean_latency"])
        for r in rows
        if r["interval"] == "hindsight"
    }
    out = []
    for label in ["hindsight", *[s[0] for s in INTERVAL_SETTINGS]]:
        sel = [r for r in rows if r["interval"] == label]
        if not sel:
            continue
        row: dict[str, Any] = {"interval": label}
        row["mean width u-l (tok)"] = (
            "-" if label == "hindsight" else f"{np.mean([float(r['mean_width']) for r in sel]):.0f}"
        )
        pols = HINDSIGHT_POLICIES if label == "hindsight" else INTERVAL_POLICIES
        for p in ("sorted-f", "mcsf", *INTERVAL_POLICIES):
            if p not in pols:
                row[p] = ""
                continue
            vals = [
                float(r["mean_latency"]) / hind[(r["seed"], "sorted-f")]
                for r in sel
                if r["policy"] == p and (r["seed"], "sorted-f") in hind
            ]
            row[p] = f"{np.mean(vals):.3f}" if vals else "-"
        for p, short in (("amin", "amin"), ("sorted-f-amin", "sf-amin")):
            ev = [float(r["evictions"]) / n for r in sel if r["policy"] == p]
            wt = [float(r["wasted_tokens"]) / n for r in sel if r["policy"] == p]
            row[f"evict/req {short}"] = f"{np.mean(ev):.2f}" if ev else ""
            row[f"wasted tok/req {short}"] = f"{np.mean(wt):.1f}" if wt else ""
        out.append(row)
    headers = list(out[0]) if out else ["interval"]
    base = (
        f"Mean latency / hindsight Sorted-F mean latency (mean over seeds {', '.join(seeds)};"
        f" n = {n})."
    )
    return base + "\n\n" + markdown_table(out, headers)


def _interval_plot(rows, path: Path) -> None:
    mean = _mean_by(rows, ("interval", "policy"), "mean_latency")
    mult = [(s[2], s[0]) for s in INTERVAL_SETTINGS if s[1] in ("exact", "multiplicative")]
    series = {}
    for p in INTERVAL_POLICIES:
        pts = [(eps, mean[(lab, p)]) for eps, lab in mult if (lab, p) in mean]
        if pts:
            series[p] = ([x for x, _ in pts], [y for _, y in pts])
    hl = {
        f"hindsight {p}": mean[("hindsight", p)]
        for p in HINDSIGHT_POLICIES
        if ("hindsight", p) in mean
    }
    _plot(
        path,
        series,
        xlabel="multiplicative interval parameter eps",
        ylabel="mean latency (rounds)",
        title="Unknown decode lengths: latency vs interval width",
        logx=True,
        hlines=hl,
    )


# ------------------------------------------------------------------------------ online load
ONLINE_POLICIES = ("online-fcfs", "online-mcsf", "online-sorted-f")
ONLINE_FIELDS = [
    "source",
    "load",
    "seed",
    "n",
    "memory",
    "policy",
    "rate",
    "round_ms",
    "mean_latency",
    "p50_latency",
    "p90_latency",
    "p99_latency",
    "throughput",
    "makespan",
    "replans",
    "runtime_s",
]
TRACE_FILE = "splitwise_conv.csv"


def _online_instance(
    source: str, load: float, seed: int, n: int, memory: int, trace_dir: Path | None
) -> tuple[Instance, float, float]:
    """Instance at nominal load ``load``; returns (instance, rate per round, round ms or nan)."""
    if source == "poisson":
        base = generate("conversation", n, memory, seed=seed)
        rate = load * nominal_capacity(base.prefill, base.decode, memory)
        inst = generate("conversation", n, memory, seed=seed, arrival_rate=rate)
        return inst, rate, float("nan")
    assert trace_dir is not None
    path = trace_dir / TRACE_FILE
    s, o, _ = read_trace_csv(path)
    offset = (seed * 3 * n) % max(1, s.size - n)
    rate = load * nominal_capacity(s[offset : offset + n], o[offset : offset + n], memory)
    inst = trace_window(path, n, memory, offset=offset, rate=rate)
    return inst, rate, 1000.0 * inst.metadata["round_s"]


def online_load(
    out_dir: str | os.PathLike[str],
    *,
    seeds: Sequence[int] = (0, 1, 2),
    n: int = 2000,
    memory: int = 16492,
    loads: Sequence[float] = (0.25, 0.5, 0.75, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0),
    trace_dir: str | os.PathLike[str] | None = None,
    solver: str = "auto",
    progress: bool = True,
) -> str:
    """Online FCFS, MC-SF and receding-horizon Sorted-F from light load to overload.

    Parameters
    ----------
    out_dir : path-like
        Writes ``online-load.csv`` (one row per source, load, seed and policy; resumed),
        ``online-load.md`` and ``online-load-<source>.png`` (mean and p99 latency against load).
    seeds : sequence of int
        Poisson: instance seeds. Trace: window ``seed`` of ``n`` consecutive rows (offset
        ``3 n seed`` modulo the file length).
    n, memory : int
        Requests per run and ``M`` (tokens).
    loads : sequence of float
        Nominal loads ``rho``: arrival rate ``rho * M / mean(A_i)`` requests per round, with
        ``A_i = o_i s_i + o_i (o_i+1)/2`` computed on the run's own requests
        (:func:`~lpsched.arrivals.nominal_capacity`).
    trace_dir : path-like, optional
        Folder holding ``splitwise_conv.csv`` (Azure conversation trace with ``arrived_at``);
        adds the source ``trace``: the window's own arrival times, time-scaled to the rate (the
        implied round duration is reported in ms). Skipped when ``None``.
    solver : str
        Phase-1 solver of receding-horizon Sorted-F (``auto``: quantile for ``n >= 1000``).
    progress : bool
        Progress bar on standard error.

    Returns
    -------
    str
        Markdown, one table per source: per load, mean and p99 latency of each policy (mean
        over seeds, rounds), the ratios MC-SF / RH-Sorted-F and FCFS / RH-Sorted-F of mean
        latency (mean over seeds) and where RH-Sorted-F is best.

    Notes
    -----
    Every schedule is checked. Under overload latency grows with ``n`` (the queue builds up),
    so the numbers compare policies at equal ``n``. Source: ours (SPEC section 5).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tdir = None if trace_dir is None else require_trace_files(trace_dir, [TRACE_FILE])
    sources = ["poisson"] + (["trace"] if tdir is not None else [])
    results = ResultsCSV(
        out / "online-load.csv", ONLINE_FIELDS, ["source", "load", "seed", "policy"]
    )
    tasks = []
    for src in sources:
        for load in loads:
            for seed in seeds:
                key = {"source": src, "load": f"{float(load):g}", "seed": seed}
                undone = [p for p in ONLINE_POLICIES if not results.done({**key, "policy": p})]
                if undone:
                    tasks.append({**key, "policy": undone[0]})

    def compute(task: Mapping[str, Any]):
        inst, rate, round_ms = _online_instance(
            task["source"], float(task["load"]), task["seed"], n, memory, tdir
        )
        key = {"source": task["source"], "load": task["load"], "seed": task["seed"]}
        for policy in ONLINE_POLICIES:
            if results.done({**key, "policy": policy}):
                continue
            sched = run_policy(inst, policy, solver=solver).check()
            st = latency_stats(sched)
            yield {
                **key,
                "n": n,
                "memory": memory,
                "policy": policy,
                "rate": rate,
                "round_ms": round_ms,
                **{
                    k: st[k]
                    for k in (
                        "mean_latency",
                        "p50_latency",
                        "p90_latency",
                        "p99_latency",
                        "throughput",
                        "makespan",
                    )
                },
                "replans": sched.info.get("replans", "-"),
                "runtime_s": sched.info["runtime_s"],
            }

    rows = run_sweep(tasks, compute, results, desc="online-load", progress=progress)
    parts = []
    for src in sources:
        sel = [r for r in rows if r["source"] == src]
        if sel:
            parts.append(_online_table(sel, src, n))
            _online_plot(sel, src, out / f"online-load-{src}.png")
    text = "\n\n".join(parts)
    (out / "online-load.md").write_text(text + "\n")
    return text


def _online_table(rows, src: str, n: int) -> str:
    short = {"online-fcfs": "FCFS", "online-mcsf": "MC-SF", "online-sorted-f": "RH-SF"}
    loads = sorted({float(r["load"]) for r in rows})
    by = {(float(r["load"]), r["seed"], r["policy"]): r for r in rows}
    seeds = sorted({r["seed"] for r in rows})
    out = []
    for load in loads:
        row: dict[str, Any] = {"load rho": f"{load:g}"}
        if src == "trace":
            ms = [float(by[k]["round_ms"]) for k in by if k[0] == load]
            row["round ms"] = f"{np.mean(ms):.0f}"
        for stat, lab in (("mean_latency", "mean"), ("p99_latency", "p99")):
            for p in ONLINE_POLICIES:
                v = [float(by[(load, s, p)][stat]) for s in seeds if (load, s, p) in by]
                row[f"{lab} {short[p]}"] = f"{np.mean(v):.0f}" if v else "-"
        ratios = {}
        for p in ("online-mcsf", "online-fcfs"):
            v = [
                float(by[(load, s, p)]["mean_latency"])
                / float(by[(load, s, "online-sorted-f")]["mean_latency"])
                for s in seeds
                if (load, s, p) in by and (load, s, "online-sorted-f") in by
            ]
            ratios[p] = float(np.mean(v)) if v else float("nan")
            row[f"{short[p]}/RH-SF"] = f"{ratios[p]:.3f}"
        wins = sum(
            1
            for s in seeds
            if (load, s, "online-sorted-f") in by
            and all(
                float(by[(load, s, "online-sorted-f")]["mean_latency"])
                < float(by[(load, s, p)]["mean_latency"])
                for p in ("online-mcsf", "online-fcfs")
                if (load, s, p) in by
            )
        )
        row["RH-SF < both (seeds)"] = f"{wins}/{len(seeds)}"
        out.append(row)
    title = {
        "poisson": "Poisson arrivals, conversation workload",
        "trace": "Azure conversation trace, own arrivals (time-scaled)",
    }[src]
    head = (
        f"**{title}** (n = {n}, mean over seeds {', '.join(seeds)}; latencies in rounds; "
        "RH-SF = receding-horizon Sorted-F)"
    )
    return head + "\n\n" + markdown_table(out, list(out[0]))


def _online_plot(rows, src: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, stat in zip(axes, ("mean_latency", "p99_latency"), strict=True):
        for p in ONLINE_POLICIES:
            m = _mean_by([r for r in rows if r["policy"] == p], ("load",), stat)
            xs = sorted(m, key=lambda k: float(k[0]))
            ax.plot([float(x[0]) for x in xs], [m[x] for x in xs], marker="o", label=p)
        ax.set_yscale("log")
        ax.set_xlabel("nominal load rho")
        ax.set_ylabel(stat.replace("_", " ") + " (rounds)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(f"Online load sweep ({src})")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
