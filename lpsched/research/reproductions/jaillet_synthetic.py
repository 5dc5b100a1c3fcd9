"""Reproduction ``jaillet-synthetic``: MC-SF against the best schedule found on the synthetic
instances of Jaillet et al. (arXiv 2502.07115), in both readings of the round convention.

The predecessor paper draws 200 trials of ``jaillet-synthetic``
(:func:`lpsched.generators.jaillet.jaillet_synthetic`: ``M ~ U[30, 50]``, ``s_i ~ U[1, 5]``,
``o_i ~ U[1, M - s_i]``, ``n ~ U[40, 60]``, all at round 0), solves each to optimality with its
time-indexed IP (Gurobi) and reports MC-SF / OPT: 1.005 on average, 1.074 at worst, MC-SF
exactly optimal in 114 of 200 trials (:data:`PAPER`).

Here trial ``t`` is the instance of seed ``t`` (``lpsched generate --workload
jaillet-synthetic --seed t``; with ``sizes``, the first ``n`` requests of it, M kept). Each
trial runs in both readings of the round convention (:data:`~lpsched.generators.jaillet.
CONVENTIONS`): ``lpsched`` (SPEC section 2) and ``jaillet`` (a request's start round counts,
memory freed a round after its last token: lpsched's model on ``(s_i - 1, o_i + 1)``, every TEL
then taken minus ``n``). In each, the policies of :data:`COMPARED_POLICIES` run, and the one
solve driver with the automatic plan (:func:`lpsched.certify.certify`) gives the best
schedule it finds and the best valid lower bound within the time limit. Each row gives, in
the convention's own TEL (rounds): the policy's TEL, the best schedule found (the driver's or a
policy's, whichever is smaller), the bound, the status (``optimal`` when ``ceil(bound) >=
best``, else ``gap``), the certified gap ``(best - bound) / best``, the ratio policy / best
and ``stopped_by``, what ended the solve (``optimal``, or ``time limit``: the driver's methods
run on shares of the wall-time limit, so what a trial left unproven depends on the machine's
load; :attr:`~lpsched.solvers.result.Result.stopped_by`).
The shift by ``n`` changes ratios and gaps, so each is computed on the convention's own TEL.

The table calls the best schedule "OPT" only when every trial in it is proven optimal;
otherwise it says "best found" and gives the certified gap. A ratio to the best found is at
most the ratio to the optimum: a policy equal to the best found may still be above OPT.

Rows are written as each (trial, convention) finishes and a rerun resumes; the rows of one
task come from one solve, so a rerun with a policy added computes the task again, whole.
Adding a policy to the study is one entry of :data:`COMPARED_POLICIES` (or ``--policies
+NAME`` on the command line). Source: ours (the paper's figures: arXiv 2502.07115).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import partial
from typing import Any

import numpy as np

from ...certify import certify
from ...generators.jaillet import (
    CONVENTIONS,
    convention_instance,
    convention_tel,
    jaillet_synthetic,
)
from ...instance import Instance
from ...policies.registry import run_policy
from ...solvers.options import check_time_limit
from ...sweeps.checks import RowRules
from ...sweeps.engine import Sweep, Task, finite_float, run_sweep, seconds
from ...sweeps.tables import markdown_table, reproduction_run, write_report
from ...sweeps.workers import solver_threads
from .certified_gaps import certified_status, check_status, checked, method_outcomes
from .choices import check_policies

__all__ = [
    "NAME",
    "DESCRIPTION",
    "COMPARED_POLICIES",
    "PAPER",
    "DRAWN",
    "trial_instance",
    "run",
    "summary_table",
    "trial_table",
]

NAME = "jaillet-synthetic"
DESCRIPTION = (
    "MC-SF against the best schedule found and the certified bound on Jaillet et al.'s "
    "synthetic instances, both round conventions (arXiv 2502.07115)"
)

#: The policies compared with the best schedule found, one table column each.
COMPARED_POLICIES: tuple[str, ...] = ("mcsf",)
#: What Jaillet et al. report on 200 trials (MC-SF / OPT, OPT by their IP with Gurobi): mean
#: and worst ratio, trials where MC-SF is optimal, trials.
PAPER: dict[str, Any] = {"mean": 1.005, "worst": 1.074, "optimal": 114, "trials": 200}
#: The ``size`` of a trial whose ``n`` is drawn (``U[40, 60]``), not given.
DRAWN = "drawn"

FIELDS = [
    "trial",
    "seed",
    "size",
    "convention",
    "time_limit",
    "policy",
    "n",
    "memory",
    "shift",
    "tel",
    "ratio",
    "solve_tel",
    "solve_method",
    "bound",
    "bound_method",
    "best_tel",
    "best_method",
    "status",
    "gap",
    "solve_s",
    "solve_methods",
    "stopped_by",
]
KEY = ["trial", "size", "convention", "time_limit", "policy"]
#: How each typed column is read back (the others stay text).
TYPES: dict[str, Callable[[str], Any]] = {
    "trial": int,
    "seed": int,
    "time_limit": seconds,
    "n": int,
    "memory": int,
    "shift": int,
    "tel": int,
    "ratio": finite_float,
    "solve_tel": int,
    "best_tel": int,
    "bound": finite_float,
    "gap": finite_float,
    "solve_s": seconds,
}
#: The columns that describe a task's instance and its one solve: equal in all its rows.
TASK_FIELDS = ("seed", "n", "memory", "shift", *FIELDS[FIELDS.index("solve_tel") :])
_EPS = 1e-6


def trial_instance(trial: int, size: str | int = DRAWN) -> Instance:
    """The instance of trial ``trial``: ``jaillet-synthetic`` with seed ``trial``.

    Parameters
    ----------
    trial : int
        Trial number, ``>= 0``; also the seed.
    size : str or int, default "drawn"
        :data:`DRAWN` (``n`` drawn from ``U[40, 60]``) or a number of requests.

    Returns
    -------
    Instance
        In lpsched's convention (:func:`~lpsched.generators.jaillet.convention_instance`
        gives the other).

    Raises
    ------
    ValueError
        A size that is neither :data:`DRAWN` nor a positive integer.

    Notes
    -----
    Source: ours.
    """
    return jaillet_synthetic(None if size == DRAWN else int(size), trial)


@reproduction_run
def run(
    out_dir: str | os.PathLike[str],
    *,
    trials: int = 200,
    time_limit: float = 60.0,
    sizes: Sequence[int] | None = None,
    policies: Sequence[str] = COMPARED_POLICIES,
    policy_options: Mapping[str, Any] | None = None,
    **engine: Any,
) -> str:
    """Jaillet et al.'s synthetic table, per trial and convention: a CSV and a Markdown file.

    Parameters
    ----------
    out_dir : str or path-like
        The folder of ``jaillet-synthetic.csv`` (one row per trial, convention and policy,
        a task's rows as soon as it is done; a rerun skips finished tasks) and
        ``jaillet-synthetic.md`` (:func:`summary_table`, then :func:`trial_table`).
    trials : int, default 200
        Trials ``0 .. trials - 1``, each the instance of that seed (the paper's 200).
    time_limit : float, default 60
        Seconds of the solve driver per trial and convention (part of each row's key: a rerun
        with another limit computes new rows, the old ones stay in the file, out of the
        table).
    sizes : sequence of int, optional
        Numbers of requests to give instead of drawing ``n``: every trial at each size (its
        first ``n`` requests, its ``M``), one summary row per size. Default: ``n`` drawn.
    policies : sequence of str
        Registry names (``+backfill`` allowed, plug-ins included), one column each; default
        :data:`COMPARED_POLICIES`.
    policy_options : mapping, optional
        Keyword options for the policies that declare them; part of every row's parameters.
    **engine
        Options of :func:`~lpsched.sweeps.engine.run_sweep` (``workers``, ``scheduler``,
        ``strict``, ``fresh``, ``progress``, ``verbose``). The driver gets
        :func:`~lpsched.sweeps.workers.solver_threads` threads.

    Returns
    -------
    str
        The Markdown of ``jaillet-synthetic.md``.

    Raises
    ------
    ValueError
        ``trials`` not a positive integer, a time limit that is not a number of seconds
        ``> 0``, a size below 1.
    KeyError
        An unknown policy name.
    PolicySelectionError
        An option that none of ``policies`` declares.

    Notes
    -----
    Source: ours. Tasks run trial by trial, both conventions of a trial next to each other.
    """
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
        raise ValueError(f"trials must be a positive integer, got {trials!r}")
    limit = check_time_limit(time_limit, "the time limit")
    if limit is None:
        raise ValueError("the time limit must be a number of seconds, not None")
    if sizes is not None and (not sizes or min(sizes) < 1):
        raise ValueError(f"sizes must be numbers of requests >= 1, got {list(sizes)}")
    pols, options = check_policies(policies, policy_options)
    params: dict[str, Any] = {"policy_options": options} if options else {}
    rows = tuple({"policy": p} for p in pols)
    tasks = [
        Task(
            {"trial": t, "size": str(size), "convention": c, "time_limit": limit},
            rows,
        )
        for size in ([DRAWN] if sizes is None else sizes)
        for t in range(trials)
        for c in CONVENTIONS
    ]
    compute = partial(
        _task_rows, threads=solver_threads(**engine), policies=tuple(pols), options=options
    )
    # positional: name, fields, key, tasks, compute, params, types, check, check_task
    rules = RowRules(shared=TASK_FIELDS)
    sweep = Sweep(NAME, FIELDS, KEY, tasks, compute, params, TYPES, _check_row, _check_task, rules)
    done = run_sweep(sweep, out_dir, **engine)
    text = summary_table(done, pols) + "\n\n## Per trial\n\n" + trial_table(done, pols)
    return write_report(out_dir, NAME, text)


def _task_rows(
    params: Mapping[str, Any],
    missing: list[dict[str, Any]],
    *,
    threads: int | None,
    policies: Sequence[str] = COMPARED_POLICIES,
    options: Mapping[str, Any] | None = None,
) -> Iterator[dict[str, Any]]:
    """One trial in one convention: every policy and one solve, then the missing rows."""
    base = trial_instance(params["trial"], params["size"])
    conv, n = params["convention"], base.n
    inst = convention_instance(base, conv)
    own = partial(convention_tel, convention=conv, n=n)
    tels = {}
    for policy in dict.fromkeys([*policies, *(k["policy"] for k in missing)]):
        tels[policy] = int(own(run_policy(inst, policy, **(options or {})).check().tel))
    res = checked(certify(inst, params["time_limit"], threads=threads, seed=0), inst.name)
    assert res.schedule is not None and res.objective is not None  # checked's
    solve_tel = int(own(res.objective))
    best_tel, best_method = solve_tel, res.schedule.policy
    for policy, tel in tels.items():
        if tel < best_tel:
            best_tel, best_method = tel, policy
    bound = own(float(res.bound))
    status, gap = certified_status(bound, best_tel)
    for key in missing:
        yield {
            **key,
            "seed": params["trial"],
            "n": n,
            "memory": inst.memory,
            "shift": res.objective - solve_tel,
            "tel": tels[key["policy"]],
            "ratio": repr(tels[key["policy"]] / best_tel),
            "solve_tel": solve_tel,
            "solve_method": res.schedule.policy,
            "best_tel": best_tel,
            "best_method": best_method,
            "bound": repr(bound),  # in full: 6 digits could round a bound up
            "bound_method": res.bound_method,
            "status": status,
            "gap": gap,
            "solve_s": res.runtime_s,
            "solve_methods": method_outcomes(res),
            "stopped_by": res.stopped_by,
        }


def _check_row(v: Mapping[str, Any]) -> str | None:
    """A row read back must be possible: a known convention and its shift (0 or ``n``); the
    bound at most the best TEL, the best at most the solve's and the policy's TEL; the ratio,
    the status and the gap those of the TELs and the bound."""
    if v["convention"] not in CONVENTIONS:
        return f"convention {v['convention']!r} is not one of {', '.join(CONVENTIONS)}"
    if v["shift"] != (0 if v["convention"] == "lpsched" else v["n"]):
        return f"shift {v['shift']} is not that of the {v['convention']} convention"
    if v["status"] not in ("optimal", "gap"):
        return f"status {v['status']!r} is not 'optimal' or 'gap'"
    if v["best_tel"] < v["bound"] - _EPS:
        return f"best TEL {v['best_tel']} below its own bound {v['bound']}"
    if v["best_tel"] > min(v["solve_tel"], v["tel"]):
        return f"best TEL {v['best_tel']} above the solve's or the policy's TEL"
    if abs(v["ratio"] - v["tel"] / v["best_tel"]) > 1e-9:
        return f"ratio {v['ratio']} is not TEL / best TEL"
    return check_status(v)


def _check_task(rows: Sequence[Mapping[str, Any] | None]) -> str | None:
    """The rows of one task read back must all be there (they come from one solve); that they
    agree on :data:`TASK_FIELDS` is the sweep's :class:`~lpsched.sweeps.checks.RowRules`."""
    if any(r is None for r in rows):
        return "only some of the task's rows are in the file (they come from one solve)"
    return None


def _groups(
    rows: Sequence[Mapping[str, str]],
) -> dict[tuple[str, str], dict[str, list[Mapping[str, str]]]]:
    """Rows by (size, convention), then by trial (sizes in order, drawn first)."""
    out: dict[tuple[str, str], dict[str, list[Mapping[str, str]]]] = {}
    order = {c: i for i, c in enumerate(CONVENTIONS)}
    ranked = sorted(
        rows,
        key=lambda r: (
            r["size"] != DRAWN,
            int(r["size"]) if r["size"] != DRAWN else 0,
            order.get(r["convention"], len(order)),
            int(r["trial"]),
        ),
    )
    for r in ranked:
        out.setdefault((r["size"], r["convention"]), {}).setdefault(r["trial"], []).append(r)
    return out


def summary_table(
    rows: Sequence[Mapping[str, str]], policies: Sequence[str] = COMPARED_POLICIES
) -> str:
    """Markdown: per size and convention and per policy, TEL / best found (mean, best, worst),
    the trials where the policy equals the best found, those proven optimal and the certified
    gap (mean, max), beside the paper's row.

    Parameters
    ----------
    rows : sequence of mapping
        What :func:`~lpsched.sweeps.engine.run_sweep` returned (text values).
    policies : sequence of str
        Their order in the table; one without rows is left out.

    Returns
    -------
    str
        The table and a note. The headers say "OPT" only when every trial of ``rows`` is
        proven optimal, else "best found".

    Notes
    -----
    Source: ours; the paper's row is arXiv 2502.07115's (200 trials, OPT by their IP).
    """
    groups = _groups(rows)
    proven_all = bool(rows) and all(r["status"] == "optimal" for r in rows)
    best = "OPT" if proven_all else "best found"
    ratio_h, equal_h = f"TEL / {best}: mean / best / worst", f"= {best}"
    out = []
    for (size, conv), trials in groups.items():
        first = [rs[0] for rs in trials.values()]
        gaps = [float(r["gap"]) for r in first]
        proven = sum(r["status"] == "optimal" for r in first)
        for policy in policies:
            mine = [r for rs in trials.values() for r in rs if r["policy"] == policy]
            if not mine:
                continue
            ratios = [float(r["ratio"]) for r in mine]
            equal = sum(int(r["tel"]) == int(r["best_tel"]) for r in mine)
            out.append(
                {
                    "n": "U[40, 60]" if size == DRAWN else size,
                    "convention": conv,
                    "policy": policy,
                    "trials": len(mine),
                    ratio_h: f"{np.mean(ratios):.3f} / {min(ratios):.3f} / {max(ratios):.3f}",
                    equal_h: f"{equal}/{len(mine)}",
                    "proven optimal": f"{proven}/{len(first)}",
                    "certified gap mean / max": f"{100 * np.mean(gaps):.1f}% / "
                    f"{100 * max(gaps):.1f}%",
                }
            )
    out.append(
        {
            "n": "U[40, 60]",
            "convention": "paper (Jaillet et al.)",
            "policy": "MC-SF",
            "trials": PAPER["trials"],
            ratio_h: f"{PAPER['mean']:.3f} / - / {PAPER['worst']:.3f} (to OPT)",
            equal_h: f"{PAPER['optimal']}/{PAPER['trials']} (= OPT)",
            "proven optimal": "OPT by their IP (Gurobi)",
            "certified gap mean / max": "-",
        }
    )
    headers = list(out[0])
    note = (
        f"'{best}': the smallest TEL found on the trial, by the solve driver (automatic plan, "
        "lpsched certify) or a compared policy; TELs in each convention's own rounds (jaillet: "
        "lpsched's TEL on (s - 1, o + 1) minus n). Proven optimal: ceil(bound) >= best found. "
        "Certified gap: (best found - bound) / best found, in the convention's own TEL."
    )
    if not proven_all:
        note += (
            " Not every trial is proven optimal, so the ratios are to the best schedule "
            "found, not to OPT: each is at most the ratio to OPT, and a policy equal to the "
            "best found may still be above OPT."
        )
    return markdown_table(out, headers, numparse=False) + "\n\n" + note


def trial_table(
    rows: Sequence[Mapping[str, str]], policies: Sequence[str] = COMPARED_POLICIES
) -> str:
    """Markdown: one line per trial and convention, with ``n``, ``M``, each policy's TEL and
    ratio to the best found, the best found and its method, the bound, the status and the
    certified gap (TELs in the convention's own rounds).

    ``rows`` are the sweep's rows as the engine returns them (text values); ``policies``
    orders the policy columns, ``-`` in a cell without a row. Source: ours.
    """
    out = []
    for (_, conv), trials in _groups(rows).items():
        for trial, rs in trials.items():
            first = rs[0]
            line: dict[str, Any] = {
                "trial": trial,
                "convention": conv,
                "n": first["n"],
                "M": first["memory"],
            }
            by_policy = {r["policy"]: r for r in rs}
            for policy in policies:
                r = by_policy.get(policy)
                line[policy] = "-" if r is None else f"{r['tel']} ({float(r['ratio']):.3f})"
            line |= {
                "best found": first["best_tel"],
                "best by": first["best_method"],
                "bound": f"{float(first['bound']):.1f}",
                "status": first["status"],
                "gap": f"{100 * float(first['gap']):.1f}%",
                "solve s": f"{float(first['solve_s']):.1f}",
            }
            out.append(line)
    if not out:
        return "(no rows)"
    headers = list(out[0])
    return (
        markdown_table(out, headers, numparse=False) + "\n\nPolicy cells: TEL (TEL / best found)."
    )
