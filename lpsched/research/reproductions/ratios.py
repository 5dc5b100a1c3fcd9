"""Reproduction ``ratios``: empirical approximation ratios against the proven constants.

The seed paper (arXiv 2508.06133, section 4) proves ``TEL(Sorted-F) <= 48 OPT``; FCFS, MC-SF and
size priority have unbounded ratios (:mod:`lpsched.research.reproductions.families` shows it).
The algorithms that followed prove their own constants under their own assumptions
(:mod:`.theorems`). This reproduction measures the ratios on small instances, where the optimum
is known:

* :func:`ratio_sweep` -- for every instance of :func:`~lpsched.generators.small.small_instance`
  the exact optimum, the LP bound and ``TEL(policy) / OPT`` and ``TEL(policy) / LP`` for every
  policy; one CSV row per (instance, policy), resumable. A policy with a theorem is run only on
  the workloads whose instances meet its assumptions (:func:`~.theorems.applies`);
* :func:`theorem_sweep` -- the same for the policies of :data:`~.theorems.THEOREM_POLICIES`,
  each on the workloads that meet its theorem, with the instance's own constant beside every
  ratio; :func:`~.theorems.theorem_summary` gives per algorithm the worst ratio found against
  its constant;
* :func:`run` -- both sweeps, their summaries, the worst case of an adversarial search
  (:mod:`lpsched.research.adversarial`) and a figure.

Every ratio ``TEL / OPT`` uses the proven optimum when the solver proves it; otherwise the best
schedule's TEL (so the ratio is a lower bound on the true one) and the CSV says so.
"""

from __future__ import annotations

import csv
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from ...certify import lp_bound
from ...generators.small import (
    ASSUMPTION_WORKLOADS,
    RATIO_WORKLOADS,
    REGIME_WORKLOADS,
    small_instance,
)
from ...policies.registry import options_for, parse_policy, run_policy
from ...sweeps.checks import RowRules
from ...sweeps.engine import Sweep, Task, finite_float, run_sweep, seconds
from ...sweeps.tables import markdown_table, report_path, reproduction_run, write_report
from ...sweeps.workers import solver_threads
from ..adversarial import search_row
from ..cache import OptimumCache
from .choices import check_policies
from .theorems import (
    BLIND_THEOREM_POLICIES,
    SORTED_F_BOUND,
    THEOREM_POLICIES,
    THEOREMS,
    applies,
    peak_alpha,
    search_summary,
    theorem_summary,
)

__all__ = [
    "NAME",
    "DESCRIPTION",
    "RATIO_POLICIES",
    "ALL_WORKLOADS",
    "RATIO_FILES",
    "ratio_sweep",
    "ratio_summary",
    "worst_ratios",
    "theorem_sweep",
    "run",
]

NAME = "ratios"
DESCRIPTION = (
    "empirical TEL / optimum on small instances against the bound 48 and, per algorithm, on "
    "instances meeting its theorem, against its own constant; an adversarial search for Sorted-F"
)
#: Policies compared by default (the offline list policies with known ``o_i``).
RATIO_POLICIES = ("fcfs", "mcsf", "size", "sorted-f", "sorted-lp")
#: The workloads of the default run: the four random ones and the theorem-assumption ones.
ALL_WORKLOADS = (*RATIO_WORKLOADS, *ASSUMPTION_WORKLOADS)
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
#: The columns of :func:`theorem_sweep`: :data:`RATIO_FIELDS` and three more.
THEOREM_FIELDS = [*RATIO_FIELDS, "alpha", "constant", "ratio_constant"]


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
    theorems: bool = False,
    known: Mapping[tuple[str, int, int, int], tuple[int, float, bool, float, float]] | None = None,
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
    theorems : bool, default False
        Add the columns of :func:`theorem_sweep` (``alpha``, ``constant``,
        ``ratio_constant``); use :func:`theorem_sweep`, which sets it with its defaults.
    known : mapping, optional
        ``(workload, n, memory, seed) -> (opt, lower_bound, optimal, lp_bound, exact_s)``,
        optima already computed with the same solver and time limit; those instances are not
        solved again.
    **engine
        Options of :func:`~lpsched.sweeps.engine.run_sweep` (``workers``, ``scheduler``,
        ``strict``, ``fresh``, ``progress``, ``verbose``).

    Returns
    -------
    list of dict
        The rows of these instances and policies (strings). Every policy schedule is checked
        feasible, and every instance checked to meet the theorem of each policy run on it
        (``ValueError`` otherwise).

    Notes
    -----
    ``ratio_opt >= 1`` always; ``ratio_lp >= ratio_opt`` since the LP value is a lower bound.
    Source: ours; the bound 48 is arXiv 2508.06133, section 4.
    """
    pols, options = check_policies(policies, policy_options)
    tasks = []
    for w in workloads:
        rows = tuple({"policy": p} for p in pols if applies(p, w))
        if not rows:
            continue
        tasks += [
            Task({"workload": w, "n": n, "memory": M, "seed": seed}, rows)
            for n in sizes
            for M in memories
            for seed in seeds
        ]
    types: dict[str, Callable[[str], Any]] = {
        "n": int,
        "memory": int,
        "tel": int,
        "opt": int,
        "lower_bound": finite_float,
        "lp_bound": finite_float,
        "ratio_opt": finite_float,
        "ratio_lp": finite_float,
        "exact_s": seconds,
    }
    if theorems:
        types.update(alpha=finite_float, constant=_optional_float, ratio_constant=_optional_float)
    sweep = Sweep(
        name,
        THEOREM_FIELDS if theorems else RATIO_FIELDS,
        ["workload", "n", "memory", "seed", "policy"],
        tasks,
        partial(
            _instance_rows,
            solver=solver,
            time_limit=time_limit,
            threads=solver_threads(**engine),
            options=options,
            theorems=theorems,
            known=dict(known) if known else None,
        ),
        params={
            "solver": solver,
            "time_limit": time_limit,
            **({"policy_options": options} if options else {}),
        },
        types=types,
        check=_check_theorem_row if theorems else _check_row,
        rules=RowRules(shared=("opt", "opt_status", "lower_bound", "lp_bound")),
    )
    return run_sweep(sweep, out_dir, **engine)


def theorem_sweep(
    out_dir: str | os.PathLike[str],
    *,
    name: str = "theorems",
    workloads: Sequence[str] = ALL_WORKLOADS,
    policies: Sequence[str] = THEOREM_POLICIES,
    **kwargs: Any,
) -> list[dict[str, str]]:
    """Each algorithm's ratios on the instances that meet its theorem, beside its constant.

    :func:`ratio_sweep` with ``theorems=True``: the same columns and three more, ``alpha``
    (the instance's largest peak over ``M``, :func:`~.theorems.peak_alpha`), ``constant``
    (the policy's proven constant for this instance: SVF's is ``1 + 2 / (1 - alpha)``; empty
    when none is proven) and ``ratio_constant`` (``ratio_opt / constant``; above 1 means the
    measured ratio exceeds the theorem). Each policy runs only on the workloads of its theorem
    (:func:`~.theorems.applies`; a policy without one runs everywhere).

    Parameters
    ----------
    out_dir : path-like
        Folder of ``NAME.csv`` (resumed if it exists).
    name : str, default "theorems"
        File stem of the CSV.
    workloads : sequence of str
        Default :data:`ALL_WORKLOADS`.
    policies : sequence of str
        Default :data:`~.theorems.THEOREM_POLICIES` (every name must be registered).
    **kwargs
        The other parameters of :func:`ratio_sweep` (``sizes``, ``memories``, ``seeds``,
        ``solver``, ``time_limit``, ``policy_options``, ``known``) and the engine's options.

    Returns
    -------
    list of dict
        The rows (strings), checked as :func:`ratio_sweep`'s.

    Notes
    -----
    Source: ours; the constants and assumptions are those of :data:`~.theorems.THEOREMS`.
    """
    return ratio_sweep(
        out_dir, name=name, workloads=workloads, policies=policies, theorems=True, **kwargs
    )


def _optional_float(text: str) -> float | None:
    """A CSV cell that is empty (no proven constant) or a finite float."""
    return None if text == "" else finite_float(text)


def _instance_rows(
    params: Mapping[str, Any],
    missing: list[dict[str, Any]],
    *,
    options: Mapping[str, Any] | None,
    solver: str,
    time_limit: float,
    threads: int | None,
    theorems: bool = False,
    known: Mapping[tuple[str, int, int, int], tuple[int, float, bool, float, float]] | None = None,
) -> Iterator[dict[str, Any]]:
    """One small instance: its optimum, its LP bound and every missing policy's ratios (and,
    with ``theorems``, its ``alpha`` and each policy's constant)."""
    w, n, M, seed = params["workload"], params["n"], params["memory"], params["seed"]
    inst = small_instance(w, n, M, seed=seed)
    for key in missing:  # a workload that breaks a theorem it is declared to meet is a bug
        theorem = THEOREMS.get(key["policy"].partition("+")[0])
        if theorem is not None and not theorem.meets(inst):
            raise ValueError(
                f"{inst.name} does not meet the assumption of {theorem.policy}'s theorem "
                f"({theorem.assumption})"
            )
    hit = (known or {}).get((w, int(n), int(M), int(seed)))
    if hit is not None:
        opt, bound, optimal, lp, exact_s = hit
    else:
        t0 = time.perf_counter()
        opt, bound, optimal = OptimumCache(solver, time_limit, threads=threads).get(inst)
        exact_s = time.perf_counter() - t0
        lp = lp_bound(inst).bound
    alpha = peak_alpha(inst)
    for key in missing:
        tel = run_policy(inst, key["policy"], **(options or {})).check().tel
        row = {
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
        if theorems:
            theorem = THEOREMS.get(key["policy"])  # the exact name: a +backfill has no theorem
            c = theorem.bound(inst) if theorem is not None and theorem.bound else None
            row.update(
                alpha=alpha,
                constant="" if c is None else c,
                ratio_constant="" if c is None else tel / opt / c,
            )
        yield row


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


def _check_theorem_row(v: Mapping[str, Any]) -> str | None:
    """A :func:`theorem_sweep` row: as :func:`_check_row`, ``0 < alpha <= 1``, and a
    constant ``>= 1`` with ``ratio_constant = ratio_opt / constant``, or neither."""
    problem = _check_row(v)
    if problem is not None:
        return problem
    if not 0 < v["alpha"] <= 1:
        return f"alpha {v['alpha']} is not in (0, 1]"
    c, rc = v["constant"], v["ratio_constant"]
    if (c is None) != (rc is None):
        return "constant and ratio_constant must both be empty or both be given"
    if c is not None:
        if c < 1:
            return f"constant {c} is below 1"
        if abs(rc - v["ratio_opt"] / c) > 1e-4 * rc:
            return f"ratio_constant {rc} is not ratio_opt / constant = {v['ratio_opt'] / c:.6g}"
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


#: The files of ``lpsched reproduce ratios`` with a ``ratio_opt`` column.
RATIO_FILES = ("ratios.csv", "theorems.csv", "theorems-blind.csv")


def worst_ratios(*paths: str | os.PathLike[str]) -> dict[str, str]:
    """The worst ``TEL / OPT`` per policy in the CSVs of the ``ratios`` reproduction.

    Parameters
    ----------
    *paths : path-like
        CSV files with the columns ``policy`` and ``ratio_opt`` (``ratios.csv`` and
        ``theorems.csv`` of ``lpsched reproduce ratios``), or folders, of which the files
        ``ratios.csv`` and ``theorems.csv`` that exist are read. Every row in them counts.

    Returns
    -------
    dict
        Policy -> ``"1.294 (workload n = 7, M = 16)"``; ``", OPT best known"`` is added when
        the worst row's optimum was not proven (then the ratio is a lower bound on the true
        one). Source: ours.
    """
    files: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            files += [path / f for f in RATIO_FILES if (path / f).is_file()]
        else:
            files.append(path)
    worst: dict[str, dict[str, str]] = {}
    for file in files:
        with file.open(newline="", encoding="utf-8") as fh:
            for r in csv.DictReader(fh):
                try:
                    ratio = float(r["ratio_opt"])
                except (KeyError, TypeError, ValueError):
                    continue
                best = worst.get(r.get("policy", ""))
                if best is None or ratio > float(best["ratio_opt"]):
                    worst[r.get("policy", "")] = r
    cells = {}
    for policy, r in worst.items():
        where = f"{r.get('workload', '?')} n = {r.get('n', '?')}, M = {r.get('memory', '?')}"
        known = "" if r.get("opt_status") == "optimal" else ", OPT best known"
        cells[policy] = f"{float(r['ratio_opt']):.3f} ({where}{known})"
    return cells


def _registered(policy: str) -> bool:
    try:
        parse_policy(policy)
    except KeyError:
        return False
    return True


def _blind_theorems(
    out: Path,
    *,
    workloads: Sequence[str],
    sizes: Sequence[int],
    memories: Sequence[int],
    seeds: Sequence[int],
    solver: str,
    time_limit: float,
    policy_options: Mapping[str, Any] | None,
    known: Mapping[tuple[str, int, int, int], tuple[int, float, bool, float, float]],
    search: tuple[int, int, int],
    **engine: Any,
) -> list[str]:
    """The registered blind policies of :data:`~.theorems.BLIND_THEOREM_POLICIES`: their
    theorem sweep (``theorems-blind.csv``), the worst-ratio search under each theorem's
    assumption (``search = (steps, restarts, seed)``, none with 0 restarts) and the report's
    parts; the unregistered ones named as skipped."""
    theorem_search_steps, theorem_search_restarts, search_seed = search
    parts: list[str] = []
    blind = [p for p in BLIND_THEOREM_POLICIES if _registered(p)]
    absent = [p for p in BLIND_THEOREM_POLICIES if p not in blind]
    if blind:
        blind_rows = theorem_sweep(
            out,
            name="theorems-blind",
            workloads=workloads,
            sizes=sizes,
            memories=memories,
            seeds=seeds,
            policies=blind,
            solver=solver,
            time_limit=time_limit,
            policy_options=options_for(blind, policy_options or {}) or None,
            known=known,
            **engine,
        )
        parts += [
            "\nThe blind policies (SPEC section 11) under their theorems' assumptions, the "
            "same way (`theorems-blind.csv`):\n",
            theorem_summary(blind_rows, blind),
        ]
    if absent:
        parts.append(
            f"\nBlind policies not registered in this lpsched, skipped: {', '.join(absent)}."
        )
    if theorem_search_restarts > 0 and blind:
        parts += _theorem_searches(
            out,
            blind,
            steps=theorem_search_steps,
            restarts=theorem_search_restarts,
            seed=search_seed,
            solver=solver,
            time_limit=min(time_limit, 10.0),
            **engine,
        )
    return parts


def _theorem_searches(
    out: Path,
    policies: Sequence[str],
    *,
    steps: int,
    restarts: int,
    seed: int,
    solver: str,
    time_limit: float,
    **engine: Any,
) -> list[str]:
    """The worst-ratio search of each policy under its theorem's assumption (one row each of
    ``theorem-search.csv``): the report's sentence and table."""
    rows = [
        search_row(
            out,
            policy=p,
            steps=steps,
            restarts=restarts,
            seed=seed,
            solver=solver,
            time_limit=time_limit,
            workload=THEOREMS[p].workloads or "uniform",
            meets=THEOREMS[p].meets,
            name="theorem-search",
            **engine,
        )
        for p in policies
    ]
    return [
        "\nWorst TEL / OPT found by the worst-ratio search under each blind theorem's "
        f"assumption (adversarial_search with the theorem's `meets`, steps={steps}, "
        f"restarts={restarts}, seed={seed}; every instance searched meets the assumption):\n",
        search_summary(rows),
    ]


@reproduction_run
def run(
    out_dir: str | os.PathLike[str],
    *,
    workloads: Sequence[str] = (*ALL_WORKLOADS, *REGIME_WORKLOADS),
    sizes: Sequence[int] = (5, 7),
    memories: Sequence[int] = (16, 32),
    seeds: Sequence[int] = tuple(range(10)),
    policies: Sequence[str] = RATIO_POLICIES,
    theorem_policies: Sequence[str] | None = None,
    search_steps: int = 150,
    search_restarts: int = 4,
    search_seed: int = 0,
    solver: str = "highs",
    time_limit: float = 30.0,
    save_to: str | os.PathLike[str] | None = None,
    plot: bool = True,
    policy_options: Mapping[str, Any] | None = None,
    theorem_search_steps: int = 60,
    theorem_search_restarts: int = 2,
    **engine: Any,
) -> str:
    """Reproduction ``ratios``: empirical ratios on small instances against the proven constants.

    Parameters
    ----------
    out_dir : path-like
        Writes ``ratios.csv`` (:func:`ratio_sweep`), ``theorems.csv`` (:func:`theorem_sweep`),
        ``theorems-blind.csv`` (the same for the blind policies), ``theorem-search.csv`` and
        ``theorem-search-POLICY.json`` (their worst-ratio searches),
        ``adversarial.csv`` (one row per search budget, resumable),
        ``adversarial-sorted-f.json`` (the worst instance), ``ratios.md`` and, with ``plot``,
        ``ratios.png``.
    workloads, sizes, memories, seeds, policies, solver, time_limit, policy_options
        See :func:`ratio_sweep`; ``workloads`` defaults to :data:`ALL_WORKLOADS` (the four
        random workloads and the theorem-assumption ones) and the regime workloads of
        :data:`~lpsched.generators.small.REGIME_WORKLOADS` (Rect's and Response's), and
        serves both sweeps.
        ``policies`` (default :data:`RATIO_POLICIES`, plug-ins allowed) gives the rows of the
        first table and the boxes of the figure.
    theorem_policies : sequence of str, optional
        The algorithms of the per-algorithm table (:func:`theorem_sweep`,
        :func:`~.theorems.theorem_summary`), each run on the workloads that meet its theorem.
        Default: those of :data:`~.theorems.THEOREM_POLICIES` that are registered (the report
        names the others); an explicit name that is not registered raises ``KeyError``. The
        registered blind policies of :data:`~.theorems.BLIND_THEOREM_POLICIES` have a sweep
        and a table of their own (``theorems-blind.csv``), the others are named as skipped.
    theorem_search_steps, theorem_search_restarts : int
        Budget of the worst-ratio search under each blind theorem's assumption
        (:func:`~lpsched.research.adversarial.search_row` with the theorem's ``meets``,
        starts from its workloads, seed ``search_seed``; ``theorem-search.csv``); a restart
        count of 0 skips it.
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
        Markdown: the summary table (:func:`ratio_summary`), the per-algorithm table
        (:func:`~.theorems.theorem_summary`) and the worst Sorted-F instance. The optima of the
        first sweep are reused by the second, so each instance is solved once.
        Source: ours; bound 48 from arXiv 2508.06133, section 4; the other constants from
        :data:`~.theorems.THEOREMS`.
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
    instances = len({(r["workload"], r["n"], r["memory"], r["seed"]) for r in rows})
    parts = [
        f"TEL(policy) / OPT on {instances} small "
        f"instances (proven bound for Sorted-F: {SORTED_F_BOUND}):\n",
        ratio_summary(rows),
    ]
    if theorem_policies is None:
        theorem_pols = [p for p in THEOREM_POLICIES if _registered(p)]
        skipped = [p for p in THEOREM_POLICIES if p not in theorem_pols]
    else:
        theorem_pols, skipped = list(dict.fromkeys(theorem_policies)), []
    known = {
        (r["workload"], int(r["n"]), int(r["memory"]), int(r["seed"])): (
            int(r["opt"]),
            float(r["lower_bound"]),
            r["opt_status"] == "optimal",
            float(r["lp_bound"]),
            float(r["exact_s"]),
        )
        for r in rows
    }
    theorem_rows = theorem_sweep(
        out,
        workloads=workloads,
        sizes=sizes,
        memories=memories,
        seeds=seeds,
        policies=theorem_pols,
        solver=solver,
        time_limit=time_limit,
        policy_options=options_for(theorem_pols, policy_options or {}) or None,
        known=known,
        **engine,
    )
    parts += [
        "\nEach algorithm under its theorem's assumptions: TEL / OPT on the instances that meet "
        "them, against its proven constant (alpha = largest peak s_i + o_i over M, per "
        "instance; SVF's constant 1 + 2/(1 - alpha) is the instance's own):\n",
        theorem_summary(theorem_rows, theorem_pols),
    ]
    if skipped:
        parts.append(f"\nNot registered, left out: {', '.join(skipped)}.")
    parts += _blind_theorems(
        out,
        workloads=workloads,
        sizes=sizes,
        memories=memories,
        seeds=seeds,
        solver=solver,
        time_limit=time_limit,
        policy_options=policy_options,
        known=known,
        search=(theorem_search_steps, theorem_search_restarts, search_seed),
        **engine,
    )
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

        save_figure(plot_ratio_distribution(rows, worst=worst), report_path(out, "ratios", ".png"))
    return text
