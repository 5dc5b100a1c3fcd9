"""Reproduction ``ratios``: empirical approximation ratios against Sorted-F's proven bound 48.

The seed paper (arXiv 2508.06133, section 4) proves ``TEL(Sorted-F) <= 48 OPT``; FCFS, MC-SF and
size priority have unbounded ratios (:mod:`lpsched.research.reproductions.families` shows it). This
reproduction measures the ratios on small instances, where the optimum is known:

* :func:`ratio_sweep` -- for every instance of :func:`~lpsched.generators.small.small_instance`
  the exact optimum, the LP bound and ``TEL(policy) / OPT`` and ``TEL(policy) / LP`` for every
  policy; one CSV row per (instance, policy), resumable;
* :func:`run` -- the sweep, its summary, the worst case of an adversarial search
  (:mod:`lpsched.research.adversarial`) and a figure.

Every ratio ``TEL / OPT`` uses the proven optimum when the solver proves it; otherwise the best
schedule's TEL (so the ratio is a lower bound on the true one) and the CSV says so.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from ...generators.small import RATIO_WORKLOADS, small_instance
from ...policies.registry import check_policy_options, parse_policy, run_policy
from ...solvers.solve import lp_bound
from ...sweeps.engine import Sweep, Task, finite_float, run_sweep, seconds, solver_threads
from ...sweeps.tables import markdown_table, write_report
from ..adversarial import search_row
from ..cache import OptimumCache

__all__ = [
    "NAME",
    "DESCRIPTION",
    "RATIO_POLICIES",
    "SORTED_F_BOUND",
    "ratio_sweep",
    "ratio_summary",
    "run",
]

NAME = "ratios"
DESCRIPTION = (
    "empirical TEL / optimum of every policy on random small instances against the bound 48, "
    "and an adversarial search for Sorted-F"
)
#: Policies compared by default (the offline list policies with known ``o_i``).
RATIO_POLICIES = ("fcfs", "mcsf", "size", "sorted-f", "sorted-lp")
#: The proven approximation ratio of Sorted-F (arXiv 2508.06133, section 4).
SORTED_F_BOUND = 48

RATIO_FIELDS = [
    "workload",
    "n",
    "memory",
    "seed",
    "policy",
    "tel",
    "opt",
    "opt_status",
    "lower_bound",
    "lp_bound",
    "ratio_opt",
    "ratio_lp",
    "exact_s",
]


def ratio_sweep(
    out_dir: str | os.PathLike[str],
    *,
    name: str = "ratios",
    workloads: Sequence[str] = RATIO_WORKLOADS,
    sizes: Sequence[int] = (5, 7),
    memories: Sequence[int] = (16, 32),
    seeds: Sequence[int] = tuple(range(10)),
    policies: Sequence[str] = RATIO_POLICIES,
    solver: str = "highs",
    time_limit: float = 30.0,
    policy_options: Mapping[str, Any] | None = None,
    **engine: Any,
) -> list[dict[str, str]]:
    """Empirical ratios ``TEL(policy) / OPT`` and ``TEL(policy) / LP`` on small instances.

    Parameters
    ----------
    out_dir : path-like
        Folder of ``NAME.csv`` (resumed if it exists): one row per (workload, n, M, seed,
        policy) with columns
        ``tel``, ``opt`` (best TEL found by the exact solver), ``opt_status`` (``optimal`` or
        ``best-known``), ``lower_bound`` (solver's proven bound), ``lp_bound``, ``ratio_opt``,
        ``ratio_lp`` and ``exact_s`` (seconds of the exact solve).
    name : str, default "ratios"
        File stem of the CSV.
    workloads : sequence of str
        Names of :data:`~lpsched.generators.small.RATIO_WORKLOADS`.
    sizes, memories, seeds : sequence of int
        Request counts ``n``, budgets ``M`` (tokens) and seeds; the product is swept.
    policies : sequence of str
        Registry names (``+backfill`` allowed); an unknown name raises ``KeyError`` first.
    solver : {"highs", "cpsat"}
        Exact back end.
    time_limit : float
        Seconds per exact solve.
    policy_options : mapping, optional
        Keyword options for the policies that declare them
        (:func:`~lpsched.policies.registry.check_policy_options`); part of every row's
        parameters when given.
    **engine
        Options of :func:`~lpsched.sweeps.engine.run_sweep` (``workers``, ``scheduler``,
        ``strict``, ``fresh``, ``progress``, ``verbose``).

    Returns
    -------
    list of dict
        The rows of these instances and policies (strings). Every policy schedule is checked
        feasible.

    Notes
    -----
    ``ratio_opt >= 1`` always; ``ratio_lp >= ratio_opt`` since the LP value is a lower bound.
    Source: ours; the bound 48 is arXiv 2508.06133, section 4.
    """
    pols = list(dict.fromkeys(policies))
    for p in pols:
        parse_policy(p)  # an unknown name fails here, before any solve
    options = dict(policy_options or {})
    check_policy_options(pols, options)
    rows = tuple({"policy": p} for p in pols)
    tasks = [
        Task({"workload": w, "n": n, "memory": M, "seed": seed}, rows)
        for w in workloads
        for n in sizes
        for M in memories
        for seed in seeds
    ]
    sweep = Sweep(
        name,
        RATIO_FIELDS,
        ["workload", "n", "memory", "seed", "policy"],
        tasks,
        partial(
            _instance_rows,
            solver=solver,
            time_limit=time_limit,
            threads=solver_threads(**engine),
            options=options,
        ),
        params={
            "solver": solver,
            "time_limit": time_limit,
            **({"policy_options": options} if options else {}),
        },
        types={
            "n": int,
            "memory": int,
            "tel": int,
            "opt": int,
            "lower_bound": finite_float,
            "lp_bound": finite_float,
            "ratio_opt": finite_float,
            "ratio_lp": finite_float,
            "exact_s": seconds,
        },
        check=_check_row,
    )
    return run_sweep(sweep, out_dir, **engine)


def _instance_rows(
    params: Mapping[str, Any],
    missing: list[dict[str, Any]],
    *,
    solver: str,
    time_limit: float,
    threads: int | None,
    options: Mapping[str, Any] | None = None,
) -> Iterator[dict[str, Any]]:
    """One small instance: its optimum, its LP bound and every missing policy's ratios."""
    inst = small_instance(params["workload"], params["n"], params["memory"], seed=params["seed"])
    t0 = time.perf_counter()
    opt, bound, optimal = OptimumCache(solver, time_limit, threads=threads).get(inst)
    exact_s = time.perf_counter() - t0
    lp = lp_bound(inst).bound
    for key in missing:
        tel = run_policy(inst, key["policy"], **(options or {})).check().tel
        yield {
            **key,
            "tel": tel,
            "opt": opt,
            "opt_status": "optimal" if optimal else "best-known",
            "lower_bound": bound,
            "lp_bound": lp,
            "ratio_opt": tel / opt,
            "ratio_lp": tel / lp,
            "exact_s": exact_s,
        }


_EPS = 1e-6


def _check_row(v: Mapping[str, Any]) -> str | None:
    """A row read back must be possible: a known status; ``TEL >= OPT >= lower bound``,
    ``TEL >= LP bound > 0``, and the two ratios equal to what the row's own values give."""
    if v["opt_status"] not in ("optimal", "best-known"):
        return f"opt_status {v['opt_status']!r} is not 'optimal' or 'best-known'"
    if not (v["tel"] >= v["opt"] >= v["lower_bound"] - _EPS and v["lp_bound"] > 0):
        return (
            f"TEL {v['tel']} >= OPT {v['opt']} >= bound {v['lower_bound']} and LP bound "
            f"{v['lp_bound']} > 0 do not all hold"
        )
    if v["tel"] < v["lp_bound"] - _EPS:
        return f"TEL {v['tel']} is below its LP bound {v['lp_bound']}"
    for col, den in (("ratio_opt", v["opt"]), ("ratio_lp", v["lp_bound"])):
        if abs(v[col] - v["tel"] / den) > 1e-4 * v[col]:
            return f"{col} {v[col]} is not TEL / {den} = {v['tel'] / den:.6g}"
    return None


def ratio_summary(rows: Sequence[Mapping[str, Any]]) -> str:
    """Markdown table of a :func:`ratio_sweep`: per workload and policy, the number of
    instances, mean and max ``TEL / OPT``, the share solved optimally (ratio 1) and max
    ``TEL / LP``; a last block over all workloads. Source: ours."""
    by: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for r in rows:
        pair = (float(r["ratio_opt"]), float(r["ratio_lp"]))
        by.setdefault((r["workload"], r["policy"]), []).append(pair)
        by.setdefault(("all", r["policy"]), []).append(pair)
    out = []
    for (w, p), vals in by.items():
        ro = np.array([v[0] for v in vals])
        rl = np.array([v[1] for v in vals])
        out.append(
            {
                "workload": w,
                "policy": p,
                "instances": len(vals),
                "mean TEL/OPT": f"{ro.mean():.3f}",
                "max TEL/OPT": f"{ro.max():.3f}",
                "optimal share": f"{np.mean(ro <= 1 + 1e-9):.0%}",
                "max TEL/LP": f"{rl.max():.3f}",
            }
        )
    out.sort(key=lambda r: (r["workload"] == "all", r["workload"]))
    return markdown_table(
        out,
        [
            "workload",
            "policy",
            "instances",
            "mean TEL/OPT",
            "max TEL/OPT",
            "optimal share",
            "max TEL/LP",
        ],
    )


def run(
    out_dir: str | os.PathLike[str],
    *,
    workloads: Sequence[str] = RATIO_WORKLOADS,
    sizes: Sequence[int] = (5, 7),
    memories: Sequence[int] = (16, 32),
    seeds: Sequence[int] = tuple(range(10)),
    policies: Sequence[str] = RATIO_POLICIES,
    search_steps: int = 150,
    search_restarts: int = 4,
    search_seed: int = 0,
    solver: str = "highs",
    time_limit: float = 30.0,
    save_to: str | os.PathLike[str] | None = None,
    plot: bool = True,
    policy_options: Mapping[str, Any] | None = None,
    **engine: Any,
) -> str:
    """Reproduction ``ratios``: empirical ratios on small instances against the bound 48.

    Parameters
    ----------
    out_dir : path-like
        Writes ``ratios.csv`` (:func:`ratio_sweep`), ``adversarial.csv`` (one row per search
        budget, resumable), ``adversarial-sorted-f.json`` (the worst instance),
        ``ratios.md`` and, with ``plot``, ``ratios.png``.
    workloads, sizes, memories, seeds, policies, solver, time_limit, policy_options
        See :func:`ratio_sweep`. ``policies`` (default :data:`RATIO_POLICIES`, plug-ins
        allowed) gives the rows of the table and the boxes of the figure.
    search_steps, search_restarts, search_seed : int
        Budget and seed of :func:`adversarial_search` against Sorted-F (``search_restarts =
        0`` skips it).
    save_to : path-like, optional
        Also copy the worst instance there (e.g. ``instances/adversarial``).
    plot : bool
        Write the PNG (ratio distribution per policy, log scale, line at 48).
    **engine
        Options of :func:`~lpsched.sweeps.engine.run_sweep`.

    Returns
    -------
    str
        Markdown: the summary table (:func:`ratio_summary`) and the worst Sorted-F instance.
        Source: ours; bound 48 from arXiv 2508.06133, section 4.
    """
    out = Path(out_dir)
    rows = ratio_sweep(
        out,
        workloads=workloads,
        sizes=sizes,
        memories=memories,
        seeds=seeds,
        policies=policies,
        solver=solver,
        time_limit=time_limit,
        policy_options=policy_options,
        **engine,
    )
    parts = [
        f"TEL(policy) / OPT on {len(rows) // max(1, len(set(policies)))} small "
        f"instances (proven bound for Sorted-F: {SORTED_F_BOUND}):\n",
        ratio_summary(rows),
    ]
    worst = None
    if search_restarts > 0:
        r = search_row(
            out,
            steps=search_steps,
            restarts=search_restarts,
            seed=search_seed,
            solver=solver,
            time_limit=min(time_limit, 10.0),
            save_to=save_to,
            **engine,
        )
        worst = {"sorted-f": float(r["ratio"])}
        parts.append(
            f"\nWorst TEL(sorted-f) / OPT found by adversarial_search(steps={r['steps']}, "
            f"restarts={r['restarts']}, seed={r['seed']}): **{float(r['ratio']):.4f}** "
            f"(TEL {r['tel']} against OPT {r['opt']}, proven optimal: {r['optimal']}) on "
            f"n = {r['n']}, M = {r['memory']}, s = {r['prefill']}, o = {r['decode']} "
            f"({r['evaluations']} evaluations, {float(r['runtime_s']):.1f} s)."
        )
    text = write_report(out, NAME, "\n".join(parts))
    if plot:
        # matplotlib loads only when a figure is drawn: the command line starts fast
        from ...plotting.ratios import plot_ratio_distribution
        from ...plotting.style import save_figure

        save_figure(plot_ratio_distribution(rows, worst=worst), out / "ratios.png")
    return text
