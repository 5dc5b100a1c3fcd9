"""Reproduction ``ratios``: empirical approximation ratios against the proven constants.

The seed paper (arXiv 2508.06133, section 4) proves ``TEL(Sorted-F) <= 48 OPT``; FCFS, MC-SF and
size priority have unbounded ratios (:mod:`lpsched.research.reproductions.families` shows it).
The algorithms that followed (``algorithms-2026``) prove their own constants under their own
assumptions (:data:`THEOREMS`): SVF ``1 + 2 / (1 - alpha)`` when every peak is at most
``alpha M``, the staggered pipeline SPS 2 with one prompt and one decode length, GBA and GBA-D
10.67 with one prompt length. This reproduction measures the ratios on small instances, where
the optimum is known:

* :func:`ratio_sweep` -- for every instance of :func:`~lpsched.generators.small.small_instance`
  the exact optimum, the LP bound and ``TEL(policy) / OPT`` and ``TEL(policy) / LP`` for every
  policy; one CSV row per (instance, policy), resumable. A policy with a theorem is run only on
  the workloads whose instances meet its assumptions (:func:`applies`);
* :func:`theorem_sweep` -- the same for the policies of :data:`THEOREM_POLICIES`, each on the
  workloads that meet its theorem, with the instance's own constant beside every ratio;
  :func:`theorem_summary` gives per algorithm the worst ratio found against its constant;
* :func:`run` -- both sweeps, their summaries, the worst case of an adversarial search
  (:mod:`lpsched.research.adversarial`) and a figure.

Every ratio ``TEL / OPT`` uses the proven optimum when the solver proves it; otherwise the best
schedule's TEL (so the ratio is a lower bound on the true one) and the CSV says so.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from ...generators.small import ASSUMPTION_WORKLOADS, RATIO_WORKLOADS, small_instance
from ...instance import Instance
from ...policies.registry import check_policy_options, options_for, parse_policy, run_policy
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
    "ALL_WORKLOADS",
    "THEOREM_POLICIES",
    "Theorem",
    "THEOREMS",
    "peak_alpha",
    "applies",
    "ratio_sweep",
    "ratio_summary",
    "theorem_sweep",
    "theorem_summary",
    "run",
]

NAME = "ratios"
DESCRIPTION = (
    "empirical TEL / optimum on small instances against the bound 48 and, per algorithm, on "
    "instances meeting its theorem, against its own constant; an adversarial search for Sorted-F"
)
#: Policies compared by default (the offline list policies with known ``o_i``).
RATIO_POLICIES = ("fcfs", "mcsf", "size", "sorted-f", "sorted-lp")
#: The proven approximation ratio of Sorted-F (arXiv 2508.06133, section 4).
SORTED_F_BOUND = 48
#: The workloads of the default run: the four random ones and the theorem-assumption ones.
ALL_WORKLOADS = (*RATIO_WORKLOADS, *ASSUMPTION_WORKLOADS)
#: Policies of the per-algorithm table (:func:`theorem_sweep`), in its row order.
THEOREM_POLICIES = ("sorted-f", "svf", "sps", "gba", "gba-d", "volume")


def peak_alpha(instance: Instance) -> float:
    """The instance's ``alpha``: its largest peak ``max_i (s_i + o_i)`` over ``M`` (in (0, 1])."""
    return float(instance.size.max()) / instance.memory if instance.n else 0.0


def _svf_constant(instance: Instance) -> float:
    """SVF's constant at the instance's own ``alpha``: ``1 + 2 / (1 - alpha)`` (inf at 1)."""
    alpha = peak_alpha(instance)
    return 1 + 2 / (1 - alpha) if alpha < 1 else math.inf


def _offline(instance: Instance) -> bool:
    return instance.offline


def _svf_meets(instance: Instance) -> bool:
    return instance.offline and peak_alpha(instance) < 1


def _one_prompt(instance: Instance) -> bool:
    return instance.offline and len(set(instance.prefill.tolist())) <= 1


def _one_request_shape(instance: Instance) -> bool:
    return _one_prompt(instance) and len(set(instance.decode.tolist())) <= 1


@dataclass(frozen=True)
class Theorem:
    """A proven guarantee ``TEL(policy) <= c OPT`` and the instances it covers.

    Attributes
    ----------
    policy : str
        Registry name of the algorithm.
    assumption : str
        The theorem's assumption, in words (for the table).
    workloads : tuple of str or None
        The small workloads whose instances meet the assumption (the only ones the policy is
        run on); None: every workload.
    constant : str
        The constant as the table writes it.
    source : str
        Where the constant is proven.
    bound : callable or None
        ``bound(instance) -> c``: the constant for one instance (SVF's depends on the
        instance's ``alpha``); None: no proven constant.
    meets : callable
        ``meets(instance) -> bool``: whether an instance meets the assumption (checked before
        every run of the policy: a workload that breaks it is a bug, not a data point).
    """

    policy: str
    assumption: str
    workloads: tuple[str, ...] | None
    constant: str
    source: str
    bound: Callable[[Instance], float] | None
    meets: Callable[[Instance], bool]


def _constant(c: float) -> Callable[[Instance], float]:
    return partial(_fixed, c)


def _fixed(c: float, instance: Instance) -> float:
    return c


#: The theorems of the per-algorithm table, by policy name. GBA's 10.67 is read as 32/3
#: (our reading of the rounded figure; the stricter of the two).
THEOREMS: dict[str, Theorem] = {
    t.policy: t
    for t in (
        Theorem(
            "sorted-f",
            "any offline instance",
            None,
            "48",
            "arXiv 2508.06133, section 4",
            _constant(float(SORTED_F_BOUND)),
            _offline,
        ),
        Theorem(
            "svf",
            "all at round 0, every peak s_i + o_i <= alpha M",
            ("small-peaks",),
            "1 + 2/(1 - alpha)",
            "arXiv 2606.22327 (as summarised)",
            _svf_constant,
            _svf_meets,
        ),
        Theorem(
            "sps",
            "one prompt length s, one decode length o",
            ("identical",),
            "2",
            "arXiv 2601.22996 (as summarised)",
            _constant(2.0),
            _one_request_shape,
        ),
        Theorem(
            "gba",
            "one prompt length s, any decode lengths",
            ("common-prompt", "identical"),
            "10.67",
            "arXiv 2601.22996",
            _constant(32 / 3),
            _one_prompt,
        ),
        Theorem(
            "gba-d",
            "one prompt length s, any decode lengths",
            ("common-prompt", "identical"),
            "10.67",
            "arXiv 2601.22996",
            _constant(32 / 3),
            _one_prompt,
        ),
        Theorem(
            "volume",
            "none proven (SVF's order on lpsched's executor)",
            None,
            "none",
            "ours",
            None,
            _offline,
        ),
    )
}


def applies(policy: str, workload: str) -> bool:
    """Whether ``policy`` (``name[+backfill]``) runs on ``workload``: always for a policy
    without a theorem in :data:`THEOREMS`, otherwise when the workload meets its assumptions
    (the theorem of the name without ``+backfill``). Source: ours."""
    theorem = THEOREMS.get(policy.partition("+")[0])
    return theorem is None or theorem.workloads is None or workload in theorem.workloads


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
    return _sweep(
        out_dir,
        name=name,
        theorems=False,
        workloads=workloads,
        sizes=sizes,
        memories=memories,
        seeds=seeds,
        policies=policies,
        solver=solver,
        time_limit=time_limit,
        policy_options=policy_options,
        known=None,
        **engine,
    )


#: The extra columns of :func:`theorem_sweep`.
THEOREM_FIELDS = [*RATIO_FIELDS, "alpha", "constant", "ratio_constant"]


def theorem_sweep(
    out_dir: str | os.PathLike[str],
    *,
    name: str = "theorems",
    workloads: Sequence[str] = ALL_WORKLOADS,
    sizes: Sequence[int] = (5, 7),
    memories: Sequence[int] = (16, 32),
    seeds: Sequence[int] = tuple(range(10)),
    policies: Sequence[str] = THEOREM_POLICIES,
    solver: str = "highs",
    time_limit: float = 30.0,
    policy_options: Mapping[str, Any] | None = None,
    known: Mapping[tuple[str, int, int, int], tuple[int, float, bool, float, float]] | None = None,
    **engine: Any,
) -> list[dict[str, str]]:
    """Each algorithm's ratios on the instances that meet its theorem, beside its constant.

    As :func:`ratio_sweep` (same parameters and columns), each policy run only on the
    workloads of its theorem (:func:`applies`, :data:`THEOREMS`; a policy without one runs
    everywhere), with three more columns: ``alpha`` (the instance's largest peak over ``M``,
    :func:`peak_alpha`), ``constant`` (the policy's proven constant for this instance: SVF's is
    ``1 + 2 / (1 - alpha)``; empty when none is proven) and ``ratio_constant``
    (``ratio_opt / constant``; above 1 means the measured ratio exceeds the theorem).

    Parameters
    ----------
    out_dir, name, workloads, sizes, memories, seeds, policies, solver, time_limit, policy_options
        See :func:`ratio_sweep`; ``name`` defaults to ``"theorems"`` and ``policies`` to
        :data:`THEOREM_POLICIES` (every name must be registered).
    known : mapping, optional
        ``(workload, n, memory, seed) -> (opt, lower_bound, optimal, lp_bound, exact_s)``,
        optima already computed with the same solver and time limit (by :func:`run`, from the
        rows of :func:`ratio_sweep`); those instances are not solved again.
    **engine
        Options of :func:`~lpsched.sweeps.engine.run_sweep`.

    Returns
    -------
    list of dict
        The rows (strings). Every schedule is checked feasible, and every instance checked to
        meet the theorem of each policy run on it (``ValueError`` otherwise).

    Notes
    -----
    Source: ours; the constants and assumptions are those of :data:`THEOREMS`.
    """
    return _sweep(
        out_dir,
        name=name,
        theorems=True,
        workloads=workloads,
        sizes=sizes,
        memories=memories,
        seeds=seeds,
        policies=policies,
        solver=solver,
        time_limit=time_limit,
        policy_options=policy_options,
        known=known,
        **engine,
    )


def _optional_float(text: str) -> float | None:
    """A CSV cell that is empty (no proven constant) or a finite float."""
    return None if text == "" else finite_float(text)


def _sweep(
    out_dir: str | os.PathLike[str],
    *,
    name: str,
    theorems: bool,
    workloads: Sequence[str],
    sizes: Sequence[int],
    memories: Sequence[int],
    seeds: Sequence[int],
    policies: Sequence[str],
    solver: str,
    time_limit: float,
    policy_options: Mapping[str, Any] | None,
    known: Mapping[tuple[str, int, int, int], tuple[int, float, bool, float, float]] | None,
    **engine: Any,
) -> list[dict[str, str]]:
    """The sweep of :func:`ratio_sweep` (``theorems=False``) or :func:`theorem_sweep`."""
    pols = list(dict.fromkeys(policies))
    for p in pols:
        parse_policy(p)  # an unknown name fails here, before any solve
    options = dict(policy_options or {})
    check_policy_options(pols, options)
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


_ABOVE = "**above the constant: our reading is wrong**"


def theorem_summary(
    rows: Sequence[Mapping[str, Any]], policies: Sequence[str] | None = None
) -> str:
    """Markdown table of a :func:`theorem_sweep`: per algorithm, its theorem's assumption, the
    workloads (``all N`` for every workload of the rows) and number of instances it ran on,
    the mean and worst ``TEL / OPT``, the range of the instances' ``alpha`` (largest peak
    over ``M``), its proven constant (SVF's over the instances' ``alpha``), the worst
    ``(TEL / OPT) / constant`` with its instance, and a verdict: ``within`` (at most 1), the
    flag ``above the constant: our reading is wrong``, or ``no proven constant``.

    Parameters
    ----------
    rows : sequence of mapping
        Rows of :func:`theorem_sweep` (strings or numbers).
    policies : sequence of str, optional
        The algorithms, in row order; one without rows gets a row saying so. Default: those of
        the rows, in order of appearance.

    Returns
    -------
    str
        The table. A ratio taken to a best-known (not proven) optimum is a lower bound on the
        true ratio; the verdict then says how many. Source: ours.
    """
    by: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        by.setdefault(str(r["policy"]), []).append(r)
    order = list(dict.fromkeys([*(policies or ()), *by]))
    every = {str(r["workload"]) for r in rows}
    out = []
    for p in order:
        theorem = THEOREMS.get(p)
        rs = by.get(p, [])
        entry = {
            "algorithm": p,
            "assumption": theorem.assumption if theorem else "none (no theorem here)",
            "workloads": _workloads_cell({str(r["workload"]) for r in rs}, every),
            "instances": str(len(rs)),
            "mean TEL/OPT": "-",
            "worst TEL/OPT": "-",
            "alpha": "-",
            "constant": theorem.constant if theorem else "none",
            "worst ratio/constant": "-",
            "worst instance": "-",
            "verdict": "no instance meets its assumptions in this run",
        }
        out.append(entry)
        if not rs:
            continue
        ratio = np.array([float(r["ratio_opt"]) for r in rs])
        alpha = np.array([float(r["alpha"]) for r in rs])
        consts = [None if r["constant"] in ("", None) else float(r["constant"]) for r in rs]
        entry["mean TEL/OPT"] = f"{ratio.mean():.3f}"
        entry["worst TEL/OPT"] = f"{ratio.max():.3f}"
        entry["alpha"] = (
            f"{alpha.min():.2f}-{alpha.max():.2f}"
            if alpha.min() < alpha.max()
            else f"{alpha[0]:.2f}"
        )
        unproven = sum(1 for r in rs if r["opt_status"] != "optimal")
        note = f" ({unproven} optima not proven: lower bounds)" if unproven else ""
        if any(c is None for c in consts):
            worst = int(ratio.argmax())
            entry["verdict"] = "no proven constant" + note
        else:
            c = np.array(consts, dtype=float)
            rc = ratio / c
            worst = int(rc.argmax())
            if c.min() < c.max():
                entry["constant"] += f" = {c.min():.2f}-{c.max():.2f}"
            entry["worst ratio/constant"] = f"{rc.max():.3f}"
            entry["verdict"] = (_ABOVE if rc.max() > 1 + 1e-9 else "within") + note
        w = rs[worst]
        entry["worst instance"] = f"{w['workload']} n={w['n']} M={w['memory']} seed={w['seed']}"
    return markdown_table(
        out,
        [
            "algorithm",
            "assumption",
            "workloads",
            "instances",
            "mean TEL/OPT",
            "worst TEL/OPT",
            "alpha",
            "constant",
            "worst ratio/constant",
            "worst instance",
            "verdict",
        ],
        numparse=False,
    )


def _workloads_cell(mine: set[str], every: set[str]) -> str:
    """The workloads an algorithm ran on: ``all N`` when they are all those of the run."""
    if len(every) > 1 and mine == every:
        return f"all {len(every)}"
    return ", ".join(sorted(mine)) or "-"


def _registered(policy: str) -> bool:
    try:
        parse_policy(policy)
    except KeyError:
        return False
    return True


def run(
    out_dir: str | os.PathLike[str],
    *,
    workloads: Sequence[str] = ALL_WORKLOADS,
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
    **engine: Any,
) -> str:
    """Reproduction ``ratios``: empirical ratios on small instances against the proven constants.

    Parameters
    ----------
    out_dir : path-like
        Writes ``ratios.csv`` (:func:`ratio_sweep`), ``theorems.csv`` (:func:`theorem_sweep`),
        ``adversarial.csv`` (one row per search budget, resumable),
        ``adversarial-sorted-f.json`` (the worst instance), ``ratios.md`` and, with ``plot``,
        ``ratios.png``.
    workloads, sizes, memories, seeds, policies, solver, time_limit, policy_options
        See :func:`ratio_sweep`; ``workloads`` defaults to :data:`ALL_WORKLOADS` (the four
        random workloads and the theorem-assumption ones) and serves both sweeps.
        ``policies`` (default :data:`RATIO_POLICIES`, plug-ins allowed) gives the rows of the
        first table and the boxes of the figure.
    theorem_policies : sequence of str, optional
        The algorithms of the per-algorithm table (:func:`theorem_sweep`, :func:`theorem_summary`),
        each run on the workloads that meet its theorem. Default: those of
        :data:`THEOREM_POLICIES` that are registered (the report names the others); an
        explicit name that is not registered raises ``KeyError``.
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
        (:func:`theorem_summary`) and the worst Sorted-F instance. The optima of the first
        sweep are reused by the second, so each instance is solved once.
        Source: ours; bound 48 from arXiv 2508.06133, section 4; the other constants from
        :data:`THEOREMS`.
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
