"""Reproduction ``certified-gaps``: how far from optimal each policy is, from n = 30 to n = 2000.

For every instance, :func:`lpsched.certify.certify` runs for a time limit chosen by the
size ``n`` and gives the best schedule it finds and the best valid lower bound on the optimal
TEL, naming the method of each; the policies ``fcfs``, ``mcsf``, ``size``, ``sorted-f`` and
``sorted-lp`` run on the same instance. The table gives, per workload and ``n``, the mean and
max of TEL / best bound per policy, of best schedule / best bound, the instances proven
optimal, the methods that gave the bounds and the best schedules, and certify's seconds. The
seed paper reports its heuristics within 1.03-1.09 of the LP bound "on tractable instances"
(arXiv 2508.06133, section 6).

The instances (:func:`certified_instance`):

* the small workloads of :data:`lpsched.generators.small.EXACT_WORKLOADS` (default
  ``paper-scaled``, the paper's mix divided by 20, M = 825 tokens; ``scaled-mix``, M = 50, and
  ``uniform-small``, M = 30, on request) at every size of ``sizes`` other than
  :data:`PAPER_N`, seeds ``seeds`` (the M of the ``optimality-gaps`` reproduction);
* at ``n = 2000`` (when :data:`PAPER_N` is among the sizes): the shipped default instance
  ``default`` (``instances/default.json``, made by ``lpsched generate --workload paper-mix -n
  2000 --memory 16492 --seed 0``), and ``paper-mix`` at n = 2000, M = 16,492 for the seeds
  ``paper_seeds`` (default 1 and 2; seed 1 is the instance of the ``headline`` reproduction;
  seed 0 is the default instance itself and is refused).

Sorted-F's Phase 1 is ``dp`` on ``scaled-mix``, ``uniform-small`` and ``jaillet-synthetic``
(exact at M <= 50), ``auto`` on ``paper-scaled`` (``dp`` up to n = 100, ``swap`` above, SPEC
section 4) and ``swap`` at n = 2000 (the paper's choice there, as in ``headline``). Sorted-LP
needs the time-indexed LP; where that LP is above its size limit
(:class:`~lpsched.solvers.result.LPTooLargeError`, e.g. the n = 2000 instances) the row's
``tel`` is empty, its ``note`` holds the error, and the table's cell says so; no other error
is caught.

Each row's ``best_tel`` is the smallest TEL found on its instance: certify's, or a policy's
when one beats it (``best_method`` names which). ``status`` is ``optimal`` only when
``ceil(bound - 1e-6) >= best_tel``, and ``gap = (best_tel - bound) / best_tel``;
``certify_methods`` lists what each of certify's methods did (``done in ... s``, ``skipped:
why``, ``failed: why``) and ``stopped_by`` what ended certify (``optimal``, or ``time limit``:
its methods run on shares of the wall-time limit, so a gap left depends on the machine's load;
:attr:`~lpsched.solvers.result.Result.stopped_by`). An instance's rows are all computed before
the first is written, so they share one certify run. A resume checks that they still do: if
some are missing (a policy added, a row deleted or rejected) or they disagree on the
instance's fields, all of them are set aside (``certified-gaps.rejected.csv``) and the
instance is computed again, whole, with one new certify run (time-limited: its bound may
differ a little from the old one's).

``policies`` replaces the list (a plug-in policy gets its own column; each row's ``policy``
names it) and ``policy_options`` passes keyword options to the policies that declare them. The
table takes each instance's best schedule from its rows (certify's TEL and the TELs of the
policies in the table), so a policy run earlier and left out of this run's list never shows
in it.

Source: ours.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from functools import partial
from typing import Any

import numpy as np

from ...certify import certify
from ...certify.methods import METHODS
from ...generators.small import EXACT_WORKLOADS
from ...generators.workloads import PAPER_MEMORY, PAPER_N, PAPER_WORKLOAD, generate
from ...instance import Instance
from ...policies.registry import PluginError, parse_policy, run_policy
from ...solvers.options import check_time_limit
from ...solvers.result import LPTooLargeError, Result
from ...sweeps.checks import RowRules
from ...sweeps.engine import Sweep, Task, finite_float, run_sweep, seconds
from ...sweeps.tables import counts, markdown_table, mean_max, reproduction_run, write_report
from ...sweeps.workers import solver_threads
from .choices import check_choices, check_policies

__all__ = [
    "NAME",
    "DESCRIPTION",
    "CERTIFIED_POLICIES",
    "DEFAULT_SIZES",
    "DEFAULT_TIME_LIMITS",
    "PAPER_N",
    "PAPER_MEMORY",
    "PAPER_WORKLOADS",
    "certified_instance",
    "certified_status",
    "check_status",
    "checked",
    "method_outcomes",
    "run",
    "certified_gap_table",
]

NAME = "certified-gaps"
DESCRIPTION = "policies against certified lower bounds (lpsched certify), n = 30 to 2000"

CERTIFIED_POLICIES = ("fcfs", "mcsf", "size", "sorted-f", "sorted-lp")
#: The workloads at :data:`PAPER_N`: the default instance (paper-mix, seed 0) and paper-mix.
PAPER_WORKLOADS = ("default", PAPER_WORKLOAD)
DEFAULT_SIZES = (30, 100, 200, PAPER_N)
#: Seconds of certify per instance, by ``n``: the default reproduction (30 small instances and
#: two at n = 2000) is about 30 minutes of wall time on 2 workers; the targets were
#: ``{30: 60, 200: 300, 2000: 600}``.
DEFAULT_TIME_LIMITS: dict[int, float] = {30: 30.0, 100: 60.0, 200: 120.0, PAPER_N: 600.0}
#: Sorted-F's Phase-1 solver per workload (``dp`` where ``M`` is small, ``swap`` at n = 2000).
PHASE1 = {
    "paper-scaled": "auto",
    "scaled-mix": "dp",
    "uniform-small": "dp",
    "jaillet-synthetic": "dp",
    "default": "swap",
    PAPER_WORKLOAD: "swap",
}

FIELDS = [
    "workload",
    "n",
    "seed",
    "memory",
    "time_limit",
    "policy",
    "tel",
    "policy_s",
    "note",
    "certify_tel",
    "certify_method",
    "best_tel",
    "best_method",
    "bound",
    "bound_method",
    "status",
    "gap",
    "certify_s",
    "certify_methods",
    "stopped_by",
]
KEY = ["workload", "n", "seed", "time_limit", "policy"]
#: The columns of a row that describe its instance and certify's run, not its policy: equal
#: in every row of one instance (they come from one certify run).
INSTANCE_FIELDS = ("memory", *FIELDS[FIELDS.index("certify_tel") :])
#: Policy options the reproduction sets itself (``--option`` refuses them).
RESERVED_OPTIONS = {
    "solver": "certified-gaps chooses Sorted-F's Phase 1 by workload",
    "max_nonzeros": "certified-gaps sets Sorted-LP's size limit (lp_max_nonzeros)",
}
_EPS = 1e-6


def certified_instance(workload: str, n: int, seed: int) -> Instance:
    """The instance of one task of the reproduction.

    Parameters
    ----------
    workload : str
        ``paper-scaled``, ``scaled-mix``, ``uniform-small`` or ``jaillet-synthetic`` (their
        generators' M: 825, 50 and 30 tokens, drawn from the seed for the last), ``default``
        (the default instance: ``paper-mix``, M = 16,492, seed 0, named ``default``; ``n``
        must be 2000 and ``seed`` 0) or ``paper-mix`` (M = 16,492).
    n : int
        Number of requests.
    seed : int
        Seed of the generator.

    Returns
    -------
    Instance
        All requests arrive at round 0.

    Raises
    ------
    KeyError
        Unknown workload.
    ValueError
        ``default`` with another ``n`` or ``seed``.

    Notes
    -----
    Source: ours. ``default`` is the generator call that made ``instances/default.json`` (the
    tests check the two are identical), so it needs no source checkout.
    """
    if workload in EXACT_WORKLOADS:
        return EXACT_WORKLOADS[workload](n, seed)
    if workload == "default":
        if (n, seed) != (PAPER_N, 0):
            raise ValueError(f"the default instance has n = {PAPER_N} and seed 0, not {n}, {seed}")
        return generate(PAPER_WORKLOAD, PAPER_N, PAPER_MEMORY, seed=0, name="default")
    if workload == PAPER_WORKLOAD:
        return generate(PAPER_WORKLOAD, n, PAPER_MEMORY, seed=seed)
    known = ", ".join([*EXACT_WORKLOADS, *PAPER_WORKLOADS])
    raise KeyError(f"unknown workload {workload!r}; known: {known}")


def time_limits_by_size(
    sizes: Sequence[int], time_limits: Mapping[int, float] | float | None
) -> dict[int, float]:
    """Seconds per size: one number for all, or a mapping over :data:`DEFAULT_TIME_LIMITS`."""
    if time_limits is None or isinstance(time_limits, Mapping):
        limits: dict[int, Any] = {**DEFAULT_TIME_LIMITS, **(time_limits or {})}
    else:
        limits = {n: time_limits for n in sizes}
    out = {}
    for n in sizes:
        if n not in limits:
            raise ValueError(
                f"no time limit for n = {n}; give one, e.g. time_limits={{{n}: 60}} "
                f"(--time-limits {n}=60)"
            )
        value = check_time_limit(limits[n], f"the time limit for n = {n}")
        if value is None:
            raise ValueError(f"the time limit for n = {n} must be a number of seconds, not None")
        out[n] = value
    return out


@reproduction_run
def run(
    out_dir: str | os.PathLike[str],
    *,
    seeds: Sequence[int] = (0, 1, 2, 3, 4),
    sizes: Sequence[int] = DEFAULT_SIZES,
    workloads: Sequence[str] = ("paper-scaled",),
    paper_seeds: Sequence[int] = (1, 2),
    time_limits: Mapping[int, float] | float | None = None,
    lp_max_nonzeros: int | None = None,
    policies: Sequence[str] = CERTIFIED_POLICIES,
    policy_options: Mapping[str, Any] | None = None,
    **engine: Any,
) -> str:
    """Reproduce the certified-gap table (CSV + Markdown in ``out_dir``).

    Parameters
    ----------
    out_dir : path-like
        Writes ``certified-gaps.csv`` (one row per instance and policy; an instance's rows are
        written as soon as it is done, and a rerun skips finished instances) and
        ``certified-gaps.md``.
    seeds : sequence of int
        Seeds of the small workloads.
    sizes : sequence of int
        Numbers of requests ``n``: the small workloads run at every size but
        :data:`PAPER_N`; :data:`PAPER_N` adds the default instance and ``paper-mix``.
    workloads : sequence of str
        The small workloads (names of :data:`lpsched.generators.small.EXACT_WORKLOADS`).
    paper_seeds : sequence of int
        Seeds of ``paper-mix`` at n = 2000 (default 1 and 2: with the default instance, three
        seeds); seed 0 is the default instance, already in the table.
    time_limits : mapping of int to float, or float, optional
        Seconds of certify per instance: ``{n: seconds}`` merged over
        :data:`DEFAULT_TIME_LIMITS`, or one number for every size. The limit is part of each
        row's key, so a rerun with another limit computes new rows and leaves the old ones in
        the file (out of the table).
    lp_max_nonzeros : int, optional
        Size limit of Sorted-LP's LP (``max_nonzeros`` of
        :func:`~lpsched.policies.sorted_lp.sorted_lp_order`); default its own.
    policies : sequence of str
        Registry names (``+backfill`` allowed, plug-ins included), one table column each, in
        this order; default :data:`CERTIFIED_POLICIES`. Every one runs on each instance that
        a task computes (for the best schedule); a rerun with more policies computes
        those instances again, whole (one certify run per instance); the rows of policies
        left out stay in the CSV, out of the table.
    policy_options : mapping, optional
        Keyword options for the policies that declare them (not ``solver`` or
        ``max_nonzeros``, which the reproduction sets). Part of every row's parameters: a
        rerun with other options computes its rows anew.
    **engine
        Options of :func:`~lpsched.sweeps.engine.run_sweep` (``workers``, ``scheduler``,
        ``strict``, ``fresh``, ``progress``, ``verbose``). certify and HiGHS get
        :func:`~lpsched.sweeps.workers.solver_threads` threads, so that threads times
        workers never exceed the cores.

    Returns
    -------
    str
        The Markdown table (:func:`certified_gap_table`).

    Raises
    ------
    KeyError
        Unknown small workload.
    ValueError
        A size without a time limit, a time limit that is not a number of seconds ``> 0``,
        seed 0 in ``paper_seeds``.
    PolicySelectionError
        An option that none of ``policies`` declares, or one the reproduction sets.

    Notes
    -----
    Source: ours. Tasks run longest time limit first, so that on several workers
    the n = 2000 instances do not finish last alone.
    """
    check_choices("small workload", workloads, EXACT_WORKLOADS)
    if 0 in paper_seeds:
        raise ValueError(
            "paper_seeds: seed 0 of paper-mix at n = 2000 is the default instance, which the "
            "table has already; choose other seeds"
        )
    pols, options = check_policies(policies, policy_options, RESERVED_OPTIONS)
    params: dict[str, Any] = {"lp_max_nonzeros": lp_max_nonzeros}
    if options:
        params["policy_options"] = options
    limits = time_limits_by_size(sizes, time_limits)
    rows = tuple({"policy": p} for p in pols)
    specs = [
        (w, n, seed)
        for n in sizes
        for w, seed_list in (
            [("default", [0]), (PAPER_WORKLOAD, paper_seeds)]
            if n == PAPER_N
            else [(w, seeds) for w in workloads]
        )
        for seed in seed_list
    ]
    tasks = [
        Task({"workload": w, "n": n, "seed": seed, "time_limit": limits[n]}, rows)
        for w, n, seed in sorted(specs, key=lambda s: -limits[s[1]])
    ]
    sweep = Sweep(
        NAME,
        FIELDS,
        KEY,
        tasks,
        partial(
            _instance_rows,
            threads=solver_threads(**engine),
            lp_max_nonzeros=lp_max_nonzeros,
            policies=tuple(pols),
            options=options,
        ),
        params=params,
        types={
            "n": int,
            "seed": int,
            "memory": int,
            "time_limit": seconds,
            "tel": optional_cell(int),
            "policy_s": optional_cell(seconds),
            "certify_tel": int,
            "best_tel": int,
            "bound": finite_float,
            "gap": finite_float,
            "certify_s": seconds,
        },
        check=_check_row,
        check_task=_check_instance,
        rules=RowRules(shared=INSTANCE_FIELDS),
    )
    table = certified_gap_table(run_sweep(sweep, out_dir, **engine), pols)
    return write_report(out_dir, NAME, table)


def _instance_rows(
    params: Mapping[str, Any],
    missing: list[dict[str, Any]],
    *,
    threads: int | None,
    lp_max_nonzeros: int | None,
    policies: Sequence[str] = CERTIFIED_POLICIES,
    options: Mapping[str, Any] | None = None,
) -> Iterator[dict[str, Any]]:
    """One instance: certify and every policy, then its missing rows."""
    w, n, seed = params["workload"], params["n"], params["seed"]
    inst = certified_instance(w, n, seed)
    runs: dict[str, dict[str, Any]] = {}
    for policy in dict.fromkeys([*policies, *(k["policy"] for k in missing)]):
        try:
            sched = run_policy(
                inst,
                policy,
                **(options or {}),
                solver=PHASE1[w],
                max_nonzeros=lp_max_nonzeros,
            )
        except LPTooLargeError as exc:
            runs[policy] = {"tel": "", "policy_s": "", "note": f"LP too large: {exc}"}
            continue
        sched.check()
        runs[policy] = {"tel": sched.tel, "policy_s": sched.info["runtime_s"], "note": ""}
    res = checked(certify(inst, params["time_limit"], threads=threads, seed=0), inst.name)
    assert res.schedule is not None and res.objective is not None  # checked's
    best_tel, best_method = res.objective, res.schedule.policy
    for policy, r in runs.items():
        if r["tel"] != "" and r["tel"] < best_tel:
            best_tel, best_method = r["tel"], policy
    status, gap = certified_status(res.bound, best_tel)
    for key in missing:
        yield {
            **key,
            "memory": inst.memory,
            **runs[key["policy"]],
            "certify_tel": res.objective,
            "certify_method": res.schedule.policy,
            "best_tel": best_tel,
            "best_method": best_method,
            # the bound in full (the engine writes floats with 6 digits, which could round
            # a bound of 2000 requests up, above what was proved)
            "bound": repr(float(res.bound)),
            "bound_method": res.bound_method,
            "status": status,
            "gap": gap,
            "certify_s": res.runtime_s,
            "certify_methods": method_outcomes(res),
            "stopped_by": res.stopped_by,
        }


def checked(res: Result, name: str) -> Result:
    """A :func:`lpsched.certify.certify` result, its schedule checked against the instance.

    Parameters
    ----------
    res : Result
        What certify returned on instance ``name``.
    name : str
        The instance's name, for the error.

    Returns
    -------
    Result
        ``res``, with a feasible ``schedule`` whose TEL (rounds) is ``objective``.

    Raises
    ------
    KeyboardInterrupt
        Certify was interrupted (:meth:`~lpsched.solvers.result.Result.check_interrupted`).
    RuntimeError
        Certify's TEL and its schedule's disagree.

    Notes
    -----
    Source: ours.
    """
    res.check_interrupted()
    assert res.schedule is not None and res.objective is not None  # the opening's
    res.schedule.check()
    if res.schedule.tel != res.objective:
        raise RuntimeError(
            f"{name}: certify reports TEL {res.objective}, its schedule has {res.schedule.tel}"
        )
    return res


def method_outcomes(res: Result) -> str:
    """What each of certify's methods did, ``"method: outcome; ..."`` (a row's
    ``certify_methods``): ``done in ... s``, ``skipped: why`` or ``failed: why``. Source: ours."""
    return "; ".join(f"{m}: {outcome}" for m, outcome in res.info.get("methods", {}).items())


def optional_cell(parse):
    """A parser for a cell that may be empty (a policy that could not run)."""

    def parse_optional(text: str):
        return None if text == "" else parse(text)

    parse_optional.__name__ = f"{parse.__name__} or empty"
    return parse_optional


def _schedule_method(name: str) -> bool:
    """Whether ``name`` can have found a schedule: an upper-side certify method or a
    registered policy (``NAME+backfill`` included)."""
    if name in METHODS:
        return METHODS[name].side != "lower"
    try:
        parse_policy(name)
    except (KeyError, PluginError):
        return False
    return True


def _check_row(v: Mapping[str, Any]) -> str | None:
    """A row read back must be possible: the bound at least ``n`` and at most every TEL; the
    best TEL at most certify's and every policy's; an empty TEL exactly when a note says why;
    the status and the gap those of the best TEL and the bound; the methods named ones that
    exist (a lower-side certify method for the bound, an upper-side one or a built-in policy
    for certify's schedule: the table prints both)."""
    if v["status"] not in ("optimal", "gap"):
        return f"status {v['status']!r} is not 'optimal' or 'gap'"
    bound_by = METHODS.get(v["bound_method"])
    if bound_by is None or bound_by.side == "upper":
        return f"bound_method {v['bound_method']!r} is not a lower-bound method of certify"
    if not _schedule_method(v["certify_method"]):
        return f"certify_method {v['certify_method']!r} is neither a certify method nor a policy"
    if v["bound"] < v["n"] - _EPS:
        return f"bound {v['bound']} below n = {v['n']} (every latency is at least one round)"
    if v["best_tel"] > v["certify_tel"]:
        return f"best TEL {v['best_tel']} above certify's {v['certify_tel']}"
    if v["best_tel"] < v["bound"] - _EPS:
        return f"best TEL {v['best_tel']} below its own bound {v['bound']}"
    if (v["tel"] is None) != bool(v["note"]):
        return "an empty TEL needs a note saying why, and a note an empty TEL"
    if v["tel"] is not None and v["tel"] < v["best_tel"]:
        return f"TEL {v['tel']} below the best TEL {v['best_tel']}"
    return check_status(v)


def certified_status(bound: float, best_tel: int) -> tuple[str, float]:
    """The status and the certified gap of a best TEL against a valid lower bound (rounds).

    Parameters
    ----------
    bound : float
        A valid lower bound on the optimal TEL.
    best_tel : int
        The TEL of the best schedule found, ``> 0``.

    Returns
    -------
    (str, float)
        ``("optimal", 0.0)`` when ``ceil(bound - 1e-6) >= best_tel``, else ``("gap",
        (best_tel - bound) / best_tel)``.

    Notes
    -----
    Source: ours.
    """
    if math.ceil(bound - _EPS) >= best_tel:
        return "optimal", 0.0
    return "gap", (best_tel - bound) / best_tel


def check_status(v: Mapping[str, Any]) -> str | None:
    """Why a row read back has a status or a gap that its ``best_tel`` and ``bound`` do not
    give (:func:`certified_status`), or None.

    Parameters
    ----------
    v : mapping
        A parsed row with ``status`` (``optimal`` or ``gap``), ``gap``, ``best_tel`` and
        ``bound``.

    Returns
    -------
    str or None

    Notes
    -----
    Source: ours.
    """
    status, gap = certified_status(v["bound"], v["best_tel"])
    if v["status"] != status:
        return f"status {v['status']} disagrees with bound {v['bound']} and TEL {v['best_tel']}"
    if abs(v["gap"] - gap) > 1e-5:
        return f"gap {v['gap']} is not (best TEL - bound) / best TEL = {gap:.6g}"
    return None


def _check_instance(rows: Sequence[Mapping[str, Any] | None]) -> str | None:
    """The rows of one instance read back (in the order of the run's policies, None when
    absent) must be all there (they come from one certify run: a part would be joined to
    another run's, so a rerun with a policy added computes the instance again, whole; that
    they agree on :data:`INSTANCE_FIELDS` is the sweep's :class:`~lpsched.sweeps.checks.RowRules`);
    the best TEL must be at most certify's and the
    policies', and equal to the TEL of its method when that is certify's or a row's policy
    (a policy of an earlier run, left out of this one, may hold it)."""
    if any(r is None for r in rows):
        return "only some of the instance's rows are in the file (they come from one certify run)"
    full = [r for r in rows if r is not None]
    first = full[0]
    tels = {r["policy"]: r["tel"] for r in full if r["tel"] is not None}
    best, by = first["best_tel"], first["best_method"]
    least = min([first["certify_tel"], *tels.values()])
    if best > least:
        return f"best TEL {best} is above a TEL of its rows, {least}"
    own = first["certify_tel"] if by == first["certify_method"] else tels.get(by, best)
    if own != best:
        return f"best_method {by!r} has TEL {own}, not the best TEL {best}"
    return None


def certified_gap_table(
    rows: Sequence[Mapping[str, str]], policies: Sequence[str] = CERTIFIED_POLICIES
) -> str:
    """Markdown: per workload and ``n``, TEL / best bound per policy and best schedule / best
    bound (mean / max over instances), the instances proven optimal, the methods of the bounds
    and of the best schedules, and certify's seconds (mean / max).

    Parameters
    ----------
    rows : sequence of mapping
        Rows of the ``certified-gaps`` sweep (CSV text values).
    policies : sequence of str
        The policy columns, in order (``-`` where a policy has no row).

    Returns
    -------
    str
        The table, a note on its cells, and one line per policy run that could not run (its
        ``note``).

    Notes
    -----
    Source: ours. An instance's bound is the largest over its rows, and its best schedule
    the smallest of certify's TELs and of the policies' TELs in ``rows`` (the rows of one
    instance normally come from one certify run, so they agree; the rows' own ``best_tel``
    may also count a policy that this table leaves out).
    """
    groups: dict[tuple[str, int], list[Mapping[str, str]]] = {}
    for r in rows:
        groups.setdefault((r["workload"], int(r["n"])), []).append(r)
    out, notes = [], []
    for (w, n), rs in sorted(groups.items(), key=lambda g: (g[0][1], g[0][0])):
        by_seed: dict[str, list[Mapping[str, str]]] = {}
        for r in rs:
            by_seed.setdefault(r["seed"], []).append(r)
        bound, best, bound_by, best_by = {}, {}, [], []
        for seed, inst_rows in by_seed.items():
            top = max(inst_rows, key=lambda r: float(r["bound"]))
            found = [(int(r["certify_tel"]), r["certify_method"]) for r in inst_rows]
            found += [(int(r["tel"]), r["policy"]) for r in inst_rows if r["tel"] != ""]
            low = min(found, key=lambda tel_by: tel_by[0])  # certify's first: it wins a tie
            bound[seed], best[seed] = float(top["bound"]), low[0]
            bound_by.append(top["bound_method"])
            best_by.append(low[1])
        proven = sum(math.ceil(bound[s] - _EPS) >= best[s] for s in by_seed)
        secs = [float(r["certify_s"]) for r in rs]
        row: dict[str, Any] = {
            "workload": w,
            "n": n,
            "M": rs[0]["memory"],
            "instances": len(by_seed),
            "time limit s": f"{float(rs[0]['time_limit']):g}",
            "best / bound": mean_max([best[s] / bound[s] for s in by_seed]),
            "proven optimal": f"{proven}/{len(by_seed)}",
            "bound by": counts(bound_by),
            "best by": counts(best_by),
            "certify s mean / max": f"{np.mean(secs):.1f} / {max(secs):.1f}",
        }
        for policy in policies:
            pr = [r for r in rs if r["policy"] == policy]
            ran = [r for r in pr if r["tel"] != ""]
            cell = mean_max([int(r["tel"]) / bound[r["seed"]] for r in ran]) if ran else "-"
            failed = [r for r in pr if r["tel"] == ""]
            if failed:
                why = Counter(r["note"].split(":", 1)[0] for r in failed).most_common(1)[0][0]
                cell += f" ({why}: {len(failed)}/{len(pr)})"
                notes += [f"{policy} on {w} n = {n} seed {r['seed']}: {r['note']}" for r in failed]
            row[policy] = cell
        out.append(row)
    headers = [
        "workload",
        "n",
        "M",
        "instances",
        "time limit s",
        *policies,
        "best / bound",
        "proven optimal",
        "bound by",
        "best by",
        "certify s mean / max",
    ]
    text = markdown_table(out, headers) + (
        "\n\nCells: TEL / best lower bound, mean / max over the instances; the bound is "
        "certify's (method in 'bound by'), the best schedule the best of certify's and the "
        "policies' (method in 'best by'). Proven optimal: ceil(bound) >= best TEL. "
        "The seed paper reports its heuristics within 1.03-1.09 of the LP bound on tractable "
        "instances (arXiv 2508.06133, section 6)."
    )
    if any(w == "default" for w, _ in groups):
        text += " 'default' is instances/default.json (paper-mix, M = 16,492, seed 0)."
    if any(w == PAPER_WORKLOAD for w, _ in groups):
        seeds = sorted({int(r["seed"]) for r in rows if r["workload"] == PAPER_WORKLOAD})
        text += f" {PAPER_WORKLOAD} at n = {PAPER_N}: seed(s) {', '.join(map(str, seeds))}."
    if notes:
        text += "\n\nPolicies that could not run (empty cells):\n\n" + "\n".join(
            f"- {note}" for note in notes
        )
    return text
