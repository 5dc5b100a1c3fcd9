"""Reproduction ``algorithms``: the algorithms that followed the seed paper, against certified
bounds, and SVF's burst.

Is Sorted-F (arXiv 2508.06133) still the best on its own workload? Three papers of 2026 gave
algorithms for the same problem or a close one (``/work/shared/research/algorithms-2026.md``
summarises them): SVF, smallest memory-time volume first (arXiv 2606.22327), and the staggered
pipeline with GBA / GBA-D (arXiv 2601.22996, one common prompt length). This reproduction runs
every policy of :data:`ALGORITHM_POLICIES` (registry names; ``policies`` overrides) on two
families of instances and divides each TEL by a certified lower bound on the optimum:

* ``paper`` -- the seed paper's workload, the instances of the ``certified-gaps``
  reproduction (:func:`~.certified_gaps.certified_instance`): ``paper-scaled`` (the paper's mix
  divided by 20, M = 825) at n < 2000, and at n = 2000 the default instance (``paper-mix``
  seed 0, M = 16,492) and ``paper-mix`` for the other seeds;
* ``common-prompt`` -- arXiv 2601.22996's setting: every prompt s = 79, LMSYS-style decode
  lengths, M = 4,096 and 8,192
  (:func:`~lpsched.generators.lmsys.common_prompt_instance`).

Each instance's bound comes from one :func:`lpsched.certify.certify` run (a time limit per
``n``, :data:`DEFAULT_TIME_LIMITS`), shared by every policy row of that instance: the bounds
are a sweep of their own (``algorithms-bounds.csv``, one row per instance), and the policies
another (``algorithms.csv``, one row per instance and policy), so a policy added later costs
its own runs only. A bound row's ``stopped_by`` says what ended certify (``optimal``, or
``time limit``: its methods run on shares of the wall-time limit, so the bound depends on the
machine's load). A policy that refuses an instance with a ``ValueError`` (a documented
refusal: Sorted-LP's ``LPTooLargeError``, A_min without intervals, a policy that assumes one
common prompt length and refuses others; lpsched's ``sps``, ``gba`` and ``gba-d`` instead plan
heterogeneous prompts with ``s = max_i s_i``, SPEC section 4.2) gets an empty cell and the
reason in its row's ``note``; no other error is caught.
A policy that is told prediction intervals (:data:`TOLD`: ``amin``) runs on a copy of the
instance with the intervals of ``intervals`` (default ``bins``, powers of two).

The table has one row per policy: what it is told (:data:`TOLD`), its proven ratio and the
assumptions behind it (:data:`PROVEN`), the worst ratio ``TEL / OPT`` found by the ``ratios``
reproduction (read from its CSVs, ``ratios_csv``, or ``ratios.csv`` and ``theorems.csv`` in
``out_dir`` when they are there), ``TEL / bound`` (mean / max over the seeds) per family,
budget and ``n``, and the policy's seconds. A second table describes the instances (best
schedule / bound, the methods, the largest ``(s_i + o_i) / M`` and SVF's guarantee there).

**SVF's burst** (``burst=True``): arXiv 2606.22327's experiment, in rounds and in seconds
(:mod:`.burst`).

Source: ours; the algorithms' papers as cited.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from ...certify import certify
from ...certify.methods import METHODS
from ...generators.intervals import from_spec
from ...generators.lmsys import COMMON_PROMPT, COMMON_PROMPT_MEMORIES, common_prompt_instance
from ...generators.two_point import two_point
from ...generators.workloads import PAPER_MEMORY, PAPER_N, PAPER_WORKLOAD
from ...instance import Instance
from ...policies.registry import POLICIES, PolicyError, options_for, parse_policy, run_policy
from ...schedule import Schedule
from ...solvers.result import LPTooLargeError
from ...sweeps.engine import Sweep, Task, finite_float, run_sweep, seconds
from ...sweeps.tables import counts, markdown_table, mean_max, reproduction_run, write_report
from ...sweeps.workers import solver_threads
from .algorithm_claims import INTERVALS, PROVEN, TOLD
from .burst import BURST_TIME_MODELS, burst_section
from .certified_gaps import (
    PHASE1,
    certified_instance,
    checked,
    method_outcomes,
    optional_cell,
    time_limits_by_size,
)
from .choices import check_choices, check_policies
from .knowing import knowing_table
from .ratios import RATIO_FILES, worst_ratios

__all__ = [
    "NAME",
    "DESCRIPTION",
    "ALGORITHM_POLICIES",
    "TOLD",
    "PROVEN",
    "FAMILIES",
    "DEFAULT_SIZES",
    "DEFAULT_TIME_LIMITS",
    "algorithm_instance",
    "worst_ratios",
    "algorithm_table",
    "run",
]

NAME = "algorithms"
DESCRIPTION = (
    "the algorithms after the seed paper (SVF, GBA, SPS, ...) against certified bounds, "
    "and SVF's burst"
)

#: The policies of the table, in row order (registry names); the blind ones last (SPEC
#: section 11). A name this lpsched does not register is left out with a line in the report.
ALGORITHM_POLICIES = tuple(
    "svf volume sps gba gba-d sorted-f sorted-lp lp-swap mcsf fcfs size amin vllm "
    "gsa gsa-spec svf-1bit rect response route".split()
)
#: The families of instances: the first two in the main table, the two-point instance in a
#: table of its own.
FAMILIES = ("paper", "common-prompt", "two-point")
#: Sizes ``n`` of each family when ``sizes`` is not given (the two-point family has one n,
#: whatever ``sizes`` says).
DEFAULT_SIZES: dict[str, tuple[int, ...]] = {
    "paper": (100, 200, PAPER_N),
    "common-prompt": (100, 300, 1000),
}
#: The two-point family: workload name -> prompt length s of :func:`two_point` (the paper's
#: s = 96, and s = 8, where a blind policy that kills has the most to gain).
TWO_POINT: dict[str, int] = {"two-point": 96, "two-point-s8": 8}
#: Seconds of certify per instance, by ``n``. The default run (9 paper and 18 common-prompt
#: instances, 2,430 s of certify in all) took 22 minutes of wall time with ``--workers 2`` on
#: 2 shared cores (``docs/results/algorithms.md``: certify 20 min, the policies 2 min). At
#: n = 2000 the aggregated LP, the bound, reaches within 0.1% of its 600 s value (5,422,103,
#: ``docs/results/certified-gaps.md``) in its share of 300 s.
DEFAULT_TIME_LIMITS: dict[int, float] = {100: 30.0, 200: 60.0, 300: 60.0, 1000: 120.0, 2000: 300.0}
_PAPER_SMALL = "paper-scaled"
_COMMON = "common-prompt"
#: Policy options the reproduction sets itself (``--option`` refuses them).
RESERVED_OPTIONS = {
    "solver": "algorithms chooses Sorted-F's Phase 1 by workload",
    "max_nonzeros": "algorithms sets Sorted-LP's size limit (lp_max_nonzeros)",
}
_EPS = 1e-6

BOUND_FIELDS = [
    "workload", "n", "memory", "seed", "time_limit", "max_peak", "certify_tel", "certify_method",
    "bound", "bound_method", "certify_s", "certify_methods", "stopped_by",
]  # fmt: skip
BOUND_KEY = ["workload", "n", "memory", "seed", "time_limit"]
POLICY_FIELDS = ["workload", "n", "memory", "seed", "policy", "tel", "policy_s", "note"]
POLICY_KEY = ["workload", "n", "memory", "seed", "policy"]


# --------------------------------------------------------------------------- instances


def algorithm_instance(workload: str, n: int, memory: int, seed: int) -> Instance:
    """The instance of one task.

    Parameters
    ----------
    workload : str
        ``paper-scaled`` (M = 825), ``default`` (n = 2000, seed 0), ``paper-mix`` (M =
        16,492): :func:`~.certified_gaps.certified_instance`; ``common-prompt``
        (:func:`~lpsched.generators.lmsys.common_prompt_instance`, s = 79, M = ``memory``);
        or a name of :data:`TWO_POINT` (:func:`~lpsched.generators.two_point.two_point`,
        n = 200, M = 256, deterministic: the seed is not used).
    n, memory, seed : int
        Requests, the budget M (tokens; must be the generator's for the paper workloads) and
        the seed.

    Returns
    -------
    Instance

    Raises
    ------
    KeyError
        Unknown workload.
    ValueError
        A ``memory`` other than the paper workload's (an ``n`` or ``memory`` other than the
        two-point instance's).
    """
    if workload == _COMMON:
        return common_prompt_instance(n, memory, seed=seed)
    if workload in TWO_POINT:
        inst = two_point(prefill=TWO_POINT[workload])
        if (inst.n, inst.memory) != (n, memory):
            raise ValueError(f"{workload} has n = {inst.n}, M = {inst.memory}")
        return inst.replace(name=workload)
    inst = certified_instance(workload, n, seed)
    if inst.memory != memory:
        raise ValueError(f"{workload} has M = {inst.memory}, not {memory}")
    return inst


def _specs(
    families: Sequence[str],
    sizes: Sequence[int] | None,
    seeds: Sequence[int],
    memories: Sequence[int],
) -> list[tuple[str, int, int, int]]:
    """``(workload, n, memory, seed)`` of every instance, by family, n, memory, seed."""
    out = []
    for family in families:
        if family == "two-point":
            out += [(w, 200, 256, 0) for w in TWO_POINT]
            continue
        for n in DEFAULT_SIZES[family] if sizes is None else sizes:
            if family == "paper":
                for seed in seeds:
                    if n == PAPER_N:
                        w = "default" if seed == 0 else PAPER_WORKLOAD
                        out.append((w, n, PAPER_MEMORY, seed))
                    else:
                        out.append((_PAPER_SMALL, n, _paper_scaled_memory(n, seed), seed))
            else:
                out += [(_COMMON, n, m, seed) for m in memories for seed in seeds]
    return out


def _paper_scaled_memory(n: int, seed: int) -> int:
    return certified_instance(_PAPER_SMALL, n, seed).memory


def _family(workload: str) -> str:
    if workload in TWO_POINT:
        return "two-point"
    return _COMMON if workload == _COMMON else "paper"


def _phase1(workload: str) -> str:
    return PHASE1[workload] if _family(workload) == "paper" else "auto"


# --------------------------------------------------------------------------- bounds sweep


def _bound_rows(
    params: Mapping[str, Any], missing: list[dict[str, Any]], *, threads: int | None
) -> Iterator[dict[str, Any]]:
    """One instance: one certify run, its row."""
    inst = algorithm_instance(params["workload"], params["n"], params["memory"], params["seed"])
    res = checked(certify(inst, params["time_limit"], threads=threads, seed=0), inst.name)
    assert res.schedule is not None and res.objective is not None  # checked's
    for key in missing:
        yield {
            **key,
            "max_peak": int(inst.size.max()),
            "certify_tel": res.objective,
            "certify_method": res.schedule.policy,
            # in full: the engine writes floats with 6 digits, which could round a bound up
            "bound": repr(float(res.bound)),
            "bound_method": res.bound_method,
            "certify_s": res.runtime_s,
            "certify_methods": method_outcomes(res),
            "stopped_by": res.stopped_by,
        }


def _check_bound_row(v: Mapping[str, Any]) -> str | None:
    """A bound row read back: a lower-side certify method, ``n <= bound <= certify's TEL``,
    the largest request within M."""
    method = METHODS.get(v["bound_method"])
    if method is None or method.side == "upper":
        return f"bound_method {v['bound_method']!r} is not a lower-bound method of certify"
    if v["bound"] < v["n"] - _EPS:
        return f"bound {v['bound']} below n = {v['n']} (every latency is at least one round)"
    if v["certify_tel"] < v["bound"] - _EPS:
        return f"certify's TEL {v['certify_tel']} below its own bound {v['bound']}"
    if not 0 < v["max_peak"] <= v["memory"]:
        return f"max_peak {v['max_peak']} is not in (0, M = {v['memory']}]"
    return None


# --------------------------------------------------------------------------- policies sweep


def _policy_instance(inst: Instance, policy: str, intervals: str, seed: int) -> Instance:
    """The instance a policy runs on: with prediction intervals when it is told them."""
    if TOLD.get(parse_policy(policy)[0].name) == INTERVALS and not inst.has_intervals:
        return from_spec(inst, intervals, seed=seed)
    return inst


def _run_one(
    inst: Instance, policy: str, options: Mapping[str, Any]
) -> tuple[Schedule | None, float, str]:
    """Run one policy: ``(schedule, seconds, note)``; a documented refusal (a ``ValueError``)
    gives no schedule and the note."""
    t0 = time.perf_counter()
    try:
        sched = run_policy(inst, policy, **options_for([policy], options))
    except LPTooLargeError as exc:
        return None, time.perf_counter() - t0, f"LP too large: {exc}"
    except ValueError as exc:
        # a plug-in's failure is wrapped in PolicyError: a refusal only if it was a ValueError
        if isinstance(exc, PolicyError) and not isinstance(exc.__cause__, ValueError):
            raise
        return None, time.perf_counter() - t0, f"refused: {exc}"
    wall = time.perf_counter() - t0
    sched.check()
    return sched, float(sched.info.get("runtime_s", wall)), ""


def _policy_rows(
    params: Mapping[str, Any],
    missing: list[dict[str, Any]],
    *,
    options: Mapping[str, Any] | None,
    intervals: str,
    lp_max_nonzeros: int | None,
) -> Iterator[dict[str, Any]]:
    """One instance: every missing policy."""
    w, n, memory, seed = params["workload"], params["n"], params["memory"], params["seed"]
    inst = algorithm_instance(w, n, memory, seed)
    opts: dict[str, Any] = {**(options or {}), "solver": _phase1(w)}
    if lp_max_nonzeros is not None:
        opts["max_nonzeros"] = lp_max_nonzeros
    for key in missing:
        policy = key["policy"]
        sched, secs, note = _run_one(_policy_instance(inst, policy, intervals, seed), policy, opts)
        yield {
            **key,
            "tel": "" if sched is None else sched.tel,
            "policy_s": secs,
            "note": note,
        }


def _check_policy_row(v: Mapping[str, Any]) -> str | None:
    """A policy row read back: an empty TEL exactly when a note says why; a TEL >= n."""
    if (v["tel"] is None) != bool(v["note"]):
        return "an empty TEL needs a note saying why, and a note an empty TEL"
    if v["tel"] is not None and v["tel"] < v["n"]:
        return f"TEL {v['tel']} below n = {v['n']} (every latency is at least one round)"
    return None


# --------------------------------------------------------------------------- tables


def _column(workload: str, n: int, memory: int) -> tuple[int, int, int, str]:
    """Sort key and header of an instance group: paper first, then s = 79 by M, then n."""
    if _family(workload) == "paper":
        return (0, 0, n, f"paper n={n} (M={memory})")
    if workload in TWO_POINT:
        s = TWO_POINT[workload]
        return (2, -s, n, f"two-point s={s} M={memory} n={n}")
    return (1, memory, n, f"s={COMMON_PROMPT} M={memory} n={n}")


def _told(policy: str, intervals: str) -> str:
    name = policy.partition("+")[0]
    told = TOLD.get(name, "not stated")
    return f"{told} ({intervals})" if told == INTERVALS else told


def _proven(policy: str) -> str:
    name = policy.partition("+")[0]
    if name not in PROVEN or "+" in policy:
        return "not stated"
    ratio, assumptions, source = PROVEN[name]
    text = ratio + (f"; {assumptions}" if assumptions else "")
    return text + (f" [{source}]" if source else "")


def algorithm_table(
    bound_rows: Sequence[Mapping[str, str]],
    policy_rows: Sequence[Mapping[str, str]],
    policies: Sequence[str],
    *,
    worst: Mapping[str, str] | None = None,
    intervals: str = "bins",
) -> str:
    """Markdown: one row per policy (told, proven ratio, worst ratio found, TEL / bound per
    instance group, seconds), the instances' table and the refusals.

    Parameters
    ----------
    bound_rows, policy_rows : sequence of mapping
        Rows of the bounds and the policies sweeps (CSV text values).
    policies : sequence of str
        The table's rows, in order.
    worst : mapping, optional
        Policy -> worst ratio cell (:func:`~.ratios.worst_ratios`); None: "see reproduce ratios".
    intervals : str
        The interval spec the policies told intervals got (shown in their row).

    Returns
    -------
    str

    Raises
    ------
    RuntimeError
        A policy's TEL below its instance's certified bound (a wrong bound or schedule).

    Notes
    -----
    Source: ours. Cells: TEL / bound, mean / max over the instances of the group; a policy
    that refused some instances shows how many. The best schedule of an instance is the best
    of certify's and the TELs in ``policy_rows``.
    """
    if not bound_rows:
        return "No instances in this run (no family, or no size)."
    bounds = {tuple(r[k] for k in _INSTANCE_KEY): r for r in bound_rows}
    groups: dict[tuple[int, int, int, str], list[tuple[str, ...]]] = {}
    for key, r in bounds.items():
        groups.setdefault(_column(r["workload"], int(r["n"]), int(r["memory"])), []).append(key)
    cols = sorted(groups)
    by_policy: dict[tuple[str, tuple[str, ...]], Mapping[str, str]] = {
        (r["policy"], tuple(r[k] for k in _INSTANCE_KEY)): r for r in policy_rows
    }
    best = _best_schedules(bounds, by_policy)
    out: list[dict[str, Any]] = []
    notes: list[str] = []
    for policy in policies:
        row: dict[str, Any] = {
            "policy": policy,
            "told (besides s_i)": _told(policy, intervals),
            "proven ratio; assumptions": _proven(policy),
            "worst TEL/OPT found": "see reproduce ratios"
            if worst is None
            else worst.get(policy, "-"),
        }
        secs: list[float] = []
        for col in cols:
            row[col[3]] = _policy_cell(policy, col[3], groups[col], by_policy, bounds, secs, notes)
        row["seconds mean / max"] = f"{np.mean(secs):.2f} / {max(secs):.2f}" if secs else "-"
        out.append(row)
    headers = [*_POLICY_HEADERS[:4], *(c[3] for c in cols), _POLICY_HEADERS[4]]
    text = markdown_table(out, headers, numparse=False)
    text += (
        "\n\nCells: TEL / certified lower bound on the optimum, mean / max over the seeds "
        "(one certify run per instance, shared by every policy). 'paper' is the seed paper's "
        f"workload (paper-scaled, the mix divided by 20, below n = {PAPER_N}; the default "
        f"instance and paper-mix at n = {PAPER_N}); 's={COMMON_PROMPT}' the identical-prompt "
        "instances of arXiv 2601.22996's setting; 'two-point' that paper's two-point "
        "instance (6 requests with o = 160, then 194 with o = 1, M = 256). Seconds: the "
        "policy's own time, every instance."
    )
    text += "\n\nThe instances:\n\n" + _instance_table(cols, groups, bounds, best)
    if notes:
        text += "\n\nPolicies that could not run (empty cells; the first reason of each):\n\n"
        text += "\n".join(f"- {note}" for note in notes)
    return text


_INSTANCE_KEY = ("workload", "n", "memory", "seed")
#: The policy table's columns around the instance groups' (the first four, then the groups).
_POLICY_HEADERS = (
    "policy",
    "told (besides s_i)",
    "proven ratio; assumptions",
    "worst TEL/OPT found",
    "seconds mean / max",
)


def _best_schedules(
    bounds: Mapping[tuple[str, ...], Mapping[str, str]],
    by_policy: Mapping[tuple[str, tuple[str, ...]], Mapping[str, str]],
) -> dict[tuple[str, ...], tuple[int, str]]:
    """The best TEL of each instance and what found it (certify or a policy); a
    ``RuntimeError`` for a TEL below the instance's certified bound."""
    best = {key: (int(b["certify_tel"]), b["certify_method"]) for key, b in bounds.items()}
    for (policy, key), r in by_policy.items():
        if key in bounds and r["tel"] != "":
            tel, bound = int(r["tel"]), float(bounds[key]["bound"])
            if tel < bound - _EPS:
                raise RuntimeError(
                    f"{policy} on {'/'.join(key)}: TEL {tel} below the certified bound {bound}"
                )
            if tel < best[key][0]:
                best[key] = (tel, policy)
    return best


def _policy_cell(
    policy: str,
    header: str,
    keys: Sequence[tuple[str, ...]],
    by_policy: Mapping[tuple[str, tuple[str, ...]], Mapping[str, str]],
    bounds: Mapping[tuple[str, ...], Mapping[str, str]],
    secs: list[float],
    notes: list[str],
) -> str:
    """One policy on one instance group: TEL / bound mean / max, with the refusals counted;
    adds the policy's seconds to ``secs`` and the first refusal's reason to ``notes``."""
    ran, failed = [], []
    for key in keys:
        pr = by_policy.get((policy, key))
        if pr is None:
            continue
        secs.append(float(pr["policy_s"]))
        if pr["tel"] == "":
            failed.append(pr)
        else:
            ran.append(int(pr["tel"]) / float(bounds[key]["bound"]))
    cell = mean_max(ran) if ran else "-"
    if failed:
        why = Counter(r["note"].split(":", 1)[0] for r in failed).most_common(1)[0][0]
        cell += f" ({why}: {len(failed)}/{len(failed) + len(ran)})"
        first = failed[0]["note"].replace("\n", " ")
        notes.append(f"{policy} on {header} ({len(failed)} instance(s)): {first}")
    return cell


def _instance_table(
    cols: Sequence[tuple[int, int, int, str]],
    groups: Mapping[tuple[int, int, int, str], list[tuple[str, ...]]],
    bounds: Mapping[tuple[str, ...], Mapping[str, str]],
    best: Mapping[tuple[str, ...], tuple[int, str]],
) -> str:
    """Markdown: one row per instance group (seeds, time limit, best / bound, who found each,
    the largest ``(s_i + o_i) / M`` and SVF's guarantee there, certify's seconds)."""
    inst_out = []
    for col in cols:
        keys = groups[col]
        bs = [bounds[k] for k in keys]
        alpha = max(int(b["max_peak"]) / int(b["memory"]) for b in bs)
        inst_out.append(
            {
                "instances": col[3],
                "seeds": ", ".join(sorted({k[3] for k in keys}, key=int)),
                "time limit s": f"{float(bs[0]['time_limit']):g}",
                "best / bound": mean_max([best[k][0] / float(bounds[k]["bound"]) for k in keys]),
                "bound by": counts([b["bound_method"] for b in bs]),
                "best by": counts([best[k][1] for k in keys]),
                "max (s+o)/M": f"{alpha:.3f}",
                "SVF's bound there": f"{1 + 2 / (1 - alpha):.2f}" if alpha < 1 else "none",
                "certify s mean": f"{np.mean([float(b['certify_s']) for b in bs]):.0f}",
            }
        )
    return markdown_table(inst_out, list(inst_out[0]), numparse=False)


# --------------------------------------------------------------------------- run


@reproduction_run
def run(
    out_dir: str | os.PathLike[str],
    *,
    seeds: Sequence[int] = (0, 1, 2),
    sizes: Sequence[int] | None = None,
    workloads: Sequence[str] = FAMILIES,
    memories: Sequence[int] = COMMON_PROMPT_MEMORIES,
    time_limits: Mapping[int, float] | float | None = None,
    policies: Sequence[str] = ALGORITHM_POLICIES,
    policy_options: Mapping[str, Any] | None = None,
    intervals: str = "bins",
    lp_max_nonzeros: int | None = None,
    ratios_csv: str | os.PathLike[str] | None = None,
    burst: bool = True,
    burst_n: int = PAPER_N,
    burst_memories: Sequence[int] = (PAPER_MEMORY, 65536),
    time_models: Sequence[str] = BURST_TIME_MODELS,
    **engine: Any,
) -> str:
    """Reproduce the algorithms table and SVF's burst (CSV + Markdown in ``out_dir``).

    Parameters
    ----------
    out_dir : path-like
        Writes ``algorithms-bounds.csv`` (one certify run per instance),
        ``algorithms.csv`` (one row per instance and policy), the same two for the
        two-point family (``algorithms-two-point-bounds.csv``, ``algorithms-two-point.csv``),
        ``algorithms-burst.csv`` (with ``burst``) and ``algorithms.md``; rows are written as
        they finish and a rerun computes only what is missing.
    seeds : sequence of int
        Seeds of every family (at n = 2000 the paper family's seed 0 is the default
        instance, the others ``paper-mix``) and of the burst.
    sizes : sequence of int, optional
        Numbers of requests of both families; default each family's
        (:data:`DEFAULT_SIZES`: paper 100, 200, 2000; common prompt 100, 300, 1000).
    workloads : sequence of str
        The families, of :data:`FAMILIES`: ``paper`` and ``common-prompt`` in the main
        table, ``two-point`` (the instances of :data:`TWO_POINT`, n = 200 whatever
        ``sizes`` says, time limit of n = 200) in a table of its own.
    memories : sequence of int
        Budgets M of the common-prompt family (tokens; default 4,096 and 8,192).
    time_limits : mapping of int to float, or float, optional
        Seconds of certify per instance: ``{n: seconds}`` over :data:`DEFAULT_TIME_LIMITS`,
        or one number for every size. Part of each bound row's key.
    policies : sequence of str
        Registry names, the table's rows in order (``+backfill`` allowed, plug-ins
        included); default :data:`ALGORITHM_POLICIES`, of which the names not registered in
        this lpsched are left out with a line in the report; any other unknown name raises.
    policy_options : mapping, optional
        Keyword options for the policies that declare them (not ``solver`` or
        ``max_nonzeros``, which the reproduction sets). Part of every policy row's parameters.
    intervals : str
        Interval spec (:func:`~lpsched.generators.intervals.from_spec`) of the instances of
        the policies told intervals (``amin``); default ``bins``.
    lp_max_nonzeros : int, optional
        Size limit of Sorted-LP's LP (its ``max_nonzeros``); default its own.
    ratios_csv : path-like, optional
        A CSV of ``lpsched reproduce ratios`` (``ratios.csv``, ``theorems.csv``) or its
        output folder, for the column of the worst ratios found (:func:`~.ratios.worst_ratios`);
        default ``out_dir`` when it holds one of those files (run ``lpsched reproduce ratios
        --out DIR`` into the same folder), else the column says "see reproduce ratios".
    burst : bool
        Also run SVF's burst.
    burst_n : int
        Requests of each burst instance (default 2,000).
    burst_memories : sequence of int
        Budgets M of the burst (tokens; default 16,492 and 65,536).
    time_models : sequence of str
        Time models (registry specs) the burst is read in.
    **engine
        Options of :func:`~lpsched.sweeps.engine.run_sweep` (``workers``, ``scheduler``, ...);
        certify gets :func:`~lpsched.sweeps.workers.solver_threads` threads.

    Returns
    -------
    str
        The Markdown report: the main table, the two-point table, what knowing the decode
        lengths is worth (:func:`~.knowing.knowing_table`) and the burst.

    Raises
    ------
    StudyChoiceError
        An unknown family (a ``KeyError``).
    KeyError
        An unknown policy (outside the study's list).
    ValueError
        A size without a time limit, a time limit that is not a number of seconds ``> 0``.
    PolicySelectionError
        An option that none of ``policies`` declares, or one the reproduction sets.

    Notes
    -----
    Source: ours. The bound tasks run longest time limit first.
    """
    check_choices(
        "family",
        workloads,
        FAMILIES,
        "This study's --workload names a family, generated at each size n of --sizes; "
        "paper-scaled, scaled-mix and uniform-small are workloads of optimality-gaps and "
        "certified-gaps",
    )
    absent = [p for p in dict.fromkeys(policies) if not _registered(p)]
    pols, options = check_policies(
        [p for p in policies if p not in absent], policy_options, RESERVED_OPTIONS
    )
    every = _specs(workloads, sizes, seeds, memories)
    limits = time_limits_by_size(
        sorted({n for _, n, _, _ in every}),
        time_limits
        if time_limits is not None and not isinstance(time_limits, Mapping)
        else {**DEFAULT_TIME_LIMITS, **(time_limits or {})},
    )
    out = Path(out_dir)
    if ratios_csv is None and any((out / f).is_file() for f in RATIO_FILES):
        ratios_csv = out
    worst = None if ratios_csv is None else worst_ratios(ratios_csv)
    text = ""
    all_rows: list[dict[str, str]] = []
    for title, name, specs in (
        ("Policies against certified bounds", NAME, [s for s in every if s[0] not in TWO_POINT]),
        ("The two-point instance", f"{NAME}-two-point", [s for s in every if s[0] in TWO_POINT]),
    ):
        if name != NAME and not specs:
            continue
        bound_rows = _bound_sweep(specs, limits, out, engine, name=f"{name}-bounds")
        policy_rows = _policy_sweep(
            specs, pols, options, intervals, lp_max_nonzeros, out, engine, name=name
        )
        all_rows += policy_rows
        text += f"## {title}\n\n" + algorithm_table(
            bound_rows, policy_rows, pols, worst=worst, intervals=intervals
        )
        text += "\n\n"
    text += (
        "## What knowing the decode lengths is worth\n\nPer instance, the best TEL of the "
        "policies told nothing or a class bit (blind) and of those told the decode lengths "
        "(clairvoyant); A_min, told intervals, is neither:\n\n"
        + knowing_table(all_rows, _group, _instance_key)
    )
    if ratios_csv is not None:
        text += f"\n\nWorst TEL/OPT found: from {ratios_csv}."
    if absent:
        text += (
            "\n\nNot registered in this lpsched, left out: "
            + ", ".join(absent)
            + " (rerun once they are: the rows are added, the bounds reused)."
        )
    if burst:
        text += "\n\n" + burst_section(
            out, seeds=seeds, n=burst_n, memories=burst_memories, time_models=time_models, **engine
        )
    return write_report(out, NAME, text)


def _registered(policy: str) -> bool:
    """Whether ``policy`` parses; False for a policy of :data:`ALGORITHM_POLICIES` that this
    lpsched does not have (no plug-in of that name loads). Raises ``KeyError`` for any other
    unknown name."""
    try:
        parse_policy(policy)  # a plug-in of that name may load
    except KeyError:
        if policy in ALGORITHM_POLICIES and policy not in POLICIES:
            return False
        raise
    return True


def _group(row: Mapping[str, str]) -> tuple[tuple[int, int, int], str]:
    """A policy row's instance group: sort key and header (:func:`_column`)."""
    c = _column(row["workload"], int(row["n"]), int(row["memory"]))
    return (c[0], c[1], c[2]), c[3]


def _instance_key(row: Mapping[str, str]) -> tuple[str, ...]:
    return tuple(row[k] for k in _INSTANCE_KEY)


def _bound_sweep(
    specs: Sequence[tuple[str, int, int, int]],
    limits: Mapping[int, float],
    out: Path,
    engine: Mapping[str, Any],
    *,
    name: str,
) -> list[dict[str, str]]:
    """The bounds sweep ``name``: one certify run per instance, longest time limit first."""
    bound_tasks = [
        Task({"workload": w, "n": n, "memory": m, "seed": s, "time_limit": limits[n]})
        for w, n, m, s in sorted(specs, key=lambda spec: -limits[spec[1]])
    ]
    return run_sweep(
        Sweep(
            name,
            BOUND_FIELDS,
            BOUND_KEY,
            bound_tasks,
            partial(_bound_rows, threads=solver_threads(**engine)),
            types={
                "n": int,
                "memory": int,
                "time_limit": seconds,
                "max_peak": int,
                "certify_tel": int,
                "bound": finite_float,
                "certify_s": seconds,
            },
            check=_check_bound_row,
        ),
        out,
        **engine,
    )


def _policy_sweep(
    specs: Sequence[tuple[str, int, int, int]],
    pols: Sequence[str],
    options: Mapping[str, Any],
    intervals: str,
    lp_max_nonzeros: int | None,
    out: Path,
    engine: Mapping[str, Any],
    *,
    name: str,
) -> list[dict[str, str]]:
    """The policies sweep ``name``: every policy on every instance, the largest ``n`` first."""
    params: dict[str, Any] = {"intervals": intervals, "lp_max_nonzeros": lp_max_nonzeros}
    if options:
        params["policy_options"] = options
    policy_tasks = [
        Task(
            {"workload": w, "n": n, "memory": m, "seed": s},
            tuple({"policy": p} for p in pols),
        )
        for w, n, m, s in sorted(specs, key=lambda spec: -spec[1])
    ]
    return run_sweep(
        Sweep(
            name,
            POLICY_FIELDS,
            POLICY_KEY,
            policy_tasks,
            partial(
                _policy_rows, intervals=intervals, lp_max_nonzeros=lp_max_nonzeros, options=options
            ),
            params=params,
            types={
                "n": int,
                "memory": int,
                "tel": optional_cell(int),
                "policy_s": seconds,
            },
            check=_check_policy_row,
        ),
        out,
        **engine,
    )
