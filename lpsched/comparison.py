"""Policies compared on one instance: what ``lpsched run`` computes, as a library function.

:func:`compare_policies` runs each policy, checks its schedule, and returns one row per policy
(TEL, mean latency, makespan, peak memory, evictions, wall time, ratio to the best TEL; with a
time model the same schedules read in seconds), the policies that could not run on this
instance (a documented refusal: the LP of ``sorted-lp`` too large, GBA-D's profile too long),
and the seed paper's headline ratios (FCFS / Sorted-F, MC-SF / Sorted-F) measured here. The
command line prints a :class:`Comparison`; notebooks and reproductions can call it too.

Source: ours; the paper's ratios are arXiv 2508.06133, section 6.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .generators.workloads import MIXTURES, PAPER_MEMORY, PAPER_N, headline_ratios
from .instance import Instance
from .policies.pipeline import ProfileTooLongError
from .policies.registry import run_policy
from .solvers.result import LPTooLargeError
from .timing import TimeModel, to_seconds

__all__ = ["SKIPPED", "Comparison", "compare_policies"]

#: The refusals that skip a policy instead of stopping the comparison.
SKIPPED = (LPTooLargeError, ProfileTooLongError)


@dataclass(frozen=True)
class Comparison:
    """The policies of :func:`compare_policies` on one instance.

    Attributes
    ----------
    instance : Instance
    results : list of dict
        One per policy that ran, in the order asked: ``policy``, ``tel`` and ``mean_latency``
        (rounds), ``makespan`` (rounds), ``peak_memory`` (tokens), ``evictions``,
        ``wasted_tokens``, ``runtime_s`` (its wall time, s), ``ratio_to_best`` (TEL over the
        smallest TEL of the comparison); with a time model also the figures of
        :meth:`lpsched.timing.seconds.ScheduleSeconds.stats` (``tel_s``, ``mean_latency_s``, ...).
    skipped : list of dict
        ``{"policy", "error"}`` for each policy that refused the instance (:data:`SKIPPED`).
    paper_ratios : list of dict
        The paper's headline ratios whose policies ran (:func:`lpsched.generators.workloads.
        headline_ratios`: ``ratio``, ``value``, ``paper``; with a time model also ``value_s``,
        the same ratio in seconds); empty for an instance with arrivals on a clock.
    papers_setting : bool
        Whether the instance is the paper's setting: one of the 80/20 mixes
        (:data:`~lpsched.generators.workloads.MIXTURES`, by its ``workload`` metadata) at the
        paper's n and M, so the ratios compare with the paper's figures.
    time_model : TimeModel or None
    clocked : bool
        Whether the policies admitted requests on the time model's clock (an instance with
        ``arrival_s``; SPEC section 10).
    """

    instance: Instance
    results: list[dict[str, Any]]
    skipped: list[dict[str, str]]
    paper_ratios: list[dict[str, Any]]
    papers_setting: bool
    time_model: TimeModel | None
    clocked: bool


def compare_policies(
    instance: Instance,
    policies: Sequence[str],
    *,
    time_model: TimeModel | None = None,
    options: Mapping[str, Any] | None = None,
) -> Comparison:
    """Run ``policies`` on ``instance``, check every schedule and compare them.

    Parameters
    ----------
    instance : Instance
    policies : sequence of str
        Registry names (``NAME`` or ``NAME+backfill``), in the order of the rows.
    time_model : TimeModel, optional
        Read every schedule in seconds; it is also passed as the option ``time_model`` to the
        policies that declare it (a clock on an instance with ``arrival_s``, or a plan in
        seconds).
    options : mapping, optional
        Options for :func:`~lpsched.policies.registry.run_policy`; each policy gets the ones
        it declares.

    Returns
    -------
    Comparison

    Raises
    ------
    KeyError
        An unknown policy name.
    ValueError
        A policy that fails on this instance other than by a documented refusal
        (:data:`SKIPPED`, reported in ``skipped``).
    lpsched.schedule.InfeasibleScheduleError
        A policy's schedule that fails the feasibility check (a bug of that policy).

    Notes
    -----
    Source: ours (``lpsched run``).
    """
    opts = dict(options or {})
    if time_model is not None:
        opts["time_model"] = time_model
    results: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []
    seconds: list[dict[str, Any]] = []
    for name in policies:
        try:
            sched = run_policy(instance, name, **opts)
        except SKIPPED as exc:
            skipped.append({"policy": name, "error": str(exc)})
            continue
        sched.check()
        results.append(
            {
                "policy": name,
                **sched.summary(),  # tel, mean_latency, makespan, peak_memory
                "evictions": sched.evictions,
                "wasted_tokens": sched.wasted_tokens,
                "runtime_s": sched.info["runtime_s"],
            }
        )
        if time_model is not None:
            seconds.append(to_seconds(sched, time_model).stats())
    best = min((r["tel"] for r in results), default=None)
    for r in results:
        r["ratio_to_best"] = r["tel"] / best
    for r, figures in zip(results, seconds, strict=False):  # none without a time model
        r.update(figures)
    clocked = time_model is not None and instance.arrival_s is not None
    paper = (
        headline_ratios({r["policy"]: r["tel"] for r in results})
        if (instance.offline and not clocked)
        else []
    )
    if time_model is not None and paper:  # the same ratios read in seconds
        in_seconds = headline_ratios({r["policy"]: r["tel_s"] for r in results})
        for p, q in zip(paper, in_seconds, strict=True):
            p["value_s"] = q["value"]
    papers_setting = (instance.n, instance.memory) == (PAPER_N, PAPER_MEMORY) and (
        instance.metadata.get("workload") in MIXTURES
    )
    return Comparison(instance, results, skipped, paper, papers_setting, time_model, clocked)
