"""Reproduction ``intervals``: TEL against the width of the decode-length prediction intervals.

A_max, A_min and Sorted-F+Amin (SPEC section 6) on prediction intervals from exact to none,
beside hindsight Sorted-F and MC-SF (true lengths). Source: ours, after the experiment design
of arXiv 2508.14544, section 5.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from ...generators.intervals import from_spec
from ...generators.workloads import PAPER_WORKLOAD, generate
from ...instance import Instance
from ...policies.registry import run_policy
from ...sweeps.engine import Sweep, Task, finite_float, run_sweep, seconds
from ...sweeps.tables import markdown_table, mean_by, report_path, reproduction_run, write_report

__all__ = ["NAME", "DESCRIPTION", "INTERVAL_SETTINGS", "INTERVAL_POLICIES", "run"]

NAME = "intervals"
DESCRIPTION = "TEL against prediction-interval width: amax, amin, sorted-f-amin, hindsight sorted-f"

#: Interval settings of :func:`run`: (label, spec of
#: :func:`~lpsched.generators.intervals.from_spec`, eps for the plot or None).
INTERVAL_SETTINGS: tuple[tuple[str, str, float | None], ...] = (
    ("exact", "exact", 0.0),
    ("mult eps=0.1", "multiplicative:0.1", 0.1),
    ("mult eps=0.25", "multiplicative:0.25", 0.25),
    ("mult eps=0.5", "multiplicative:0.5", 0.5),
    ("mult eps=1", "multiplicative:1", 1.0),
    ("mult eps=2", "multiplicative:2", 2.0),
    ("mult eps=4", "multiplicative:4", 4.0),
    ("bins (powers of 2)", "bins", None),
    ("no information", "none", None),
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
#: How the numeric columns of :data:`INTERVAL_FIELDS` are read back.
_ROW_TYPES: dict[str, Callable[[str], Any]] = {
    "n": int,
    "tel": int,
    "mean_latency": finite_float,
    "evictions": int,
    "wasted_tokens": int,
    "mean_width": finite_float,
    "runtime_s": seconds,
}


@reproduction_run
def run(
    out_dir: str | os.PathLike[str],
    *,
    seeds: Sequence[int] = (0, 1, 2),
    n: int = 1000,
    memory: int = 16492,
    workload: str = PAPER_WORKLOAD,
    solver: str = "swap",
    **engine: Any,
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
        Workload spec (:func:`~lpsched.generators.workloads.generate`), offline (all ``a_i = 0``).
    solver : str
        Phase-1 solver of Sorted-F+Amin and of hindsight Sorted-F.
    **engine
        Options of :func:`~lpsched.sweeps.engine.run_sweep`.

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
    tasks = []
    for seed in seeds:
        tasks.append(
            Task({"interval": "hindsight", "seed": seed}, _policy_rows(HINDSIGHT_POLICIES))
        )
        for label, _, _ in INTERVAL_SETTINGS:
            tasks.append(Task({"interval": label, "seed": seed}, _policy_rows(INTERVAL_POLICIES)))
    sweep = Sweep(
        NAME,
        INTERVAL_FIELDS,
        ["interval", "seed", "policy"],
        tasks,
        partial(_setting_rows, workload=workload, n=n, memory=memory, solver=solver),
        params={"n": n, "memory": memory, "workload": workload, "solver": solver},
        types=_ROW_TYPES,
        check=_check_row,
    )
    rows = run_sweep(sweep, out, **engine)
    table = write_report(out, NAME, _interval_table(rows, n))
    # matplotlib loads only when a figure is drawn: the command line starts fast
    from ...plotting.curves import plot_curves
    from ...plotting.style import save_figure

    mean = mean_by(rows, ("interval", "policy"), "mean_latency")
    series = {}
    for p in INTERVAL_POLICIES:
        pts = [
            (eps, mean[(lab, p)])
            for lab, _, eps in INTERVAL_SETTINGS
            if eps is not None and (lab, p) in mean
        ]
        if pts:
            series[p] = ([x for x, _ in pts], [y for _, y in pts])
    hlines = {
        f"hindsight {p}": mean[("hindsight", p)]
        for p in HINDSIGHT_POLICIES
        if ("hindsight", p) in mean
    }
    fig = plot_curves(
        series,
        xlabel="multiplicative interval parameter eps",
        ylabel="mean latency (rounds)",
        title="Unknown decode lengths: latency vs interval width",
        logx=True,
        hlines=hlines,
    )
    save_figure(fig, report_path(out, "intervals", ".png"), dpi=120)
    return table


@functools.lru_cache(maxsize=2)
def _instance(workload: str, n: int, memory: int, seed: int) -> Instance:
    return generate(workload, n, memory, seed=seed)


def _setting_rows(
    params: Mapping[str, Any],
    missing: list[dict[str, Any]],
    *,
    workload: str,
    n: int,
    memory: int,
    solver: str,
) -> Iterator[dict[str, Any]]:
    """One interval setting on one instance: every missing policy."""
    seed = params["seed"]
    inst = _instance(workload, n, memory, seed)
    if params["interval"] == "hindsight":
        run_inst, width = inst, 0.0
    else:
        spec = {label: spec for label, spec, _ in INTERVAL_SETTINGS}[params["interval"]]
        run_inst = from_spec(inst, spec, seed=seed)
        assert run_inst.decode_lo is not None and run_inst.decode_hi is not None
        width = float(np.mean(run_inst.decode_hi - run_inst.decode_lo))
    for key in missing:
        sched = run_policy(run_inst, key["policy"], solver=solver).check()
        yield {
            **key,
            "n": n,
            "memory": memory,
            "mean_width": width,
            "tel": sched.tel,
            "mean_latency": sched.mean_latency,
            "evictions": sched.evictions,
            "wasted_tokens": sched.wasted_tokens,
            "runtime_s": sched.info["runtime_s"],
        }


def _check_row(v: Mapping[str, Any]) -> str | None:
    """A row read back must be possible: ``TEL >= n``, ``mean_latency = TEL / n``, and no
    negative eviction count, wasted tokens or width."""
    if v["tel"] < v["n"] or min(v["evictions"], v["wasted_tokens"], v["mean_width"]) < 0:
        return f"TEL {v['tel']}, evictions or widths impossible for n = {v['n']}"
    if abs(v["mean_latency"] - v["tel"] / v["n"]) > 1e-4 * max(1.0, v["mean_latency"]):
        return f"mean_latency {v['mean_latency']} is not TEL / n"
    return None


def _policy_rows(policies: Sequence[str]) -> tuple[dict[str, str], ...]:
    return tuple({"policy": p} for p in policies)


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
