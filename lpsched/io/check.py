"""A schedule file checked against its instance: what ``lpsched check`` reports.

:func:`check_schedule_file` reads a schedule JSON (SPEC section 9) without refusing an
infeasible one, and returns a :class:`ScheduleCheck`: TEL, makespan, the peak memory and its
round, evictions, the first violation of SPEC section 2 if any, and the figures in seconds of
the time model the file records (or of another one). :meth:`ScheduleCheck.to_dict` is
``lpsched check --json`` and :meth:`ScheduleCheck.summary` its text. Source: ours.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..instance import Instance, InstanceError, one_line, quote
from ..schedule import Schedule, memory_peak
from ..timing.model import TimeModel, TimeModelError
from ..timing.seconds import SECONDS_COLUMNS, ScheduleSeconds, model_line, seconds_cell, to_seconds
from .schedules import read_schedule

__all__ = ["ScheduleCheck", "check_schedule_file", "schedule_seconds"]


@dataclass(frozen=True)
class ScheduleCheck:
    """A schedule file read against its instance, feasible or not.

    Attributes
    ----------
    path : str
        The schedule file, as given.
    schedule : Schedule
        As read (``info["time_model"]`` is the model the file records, if any).
    violation : str or None
        The first violation of SPEC section 2 (None: feasible).
    peak_memory : int
        ``max_t m(t)`` in tokens.
    peak_round : int or None
        The first round at which it is reached.
    seconds : ScheduleSeconds or None
        The schedule read in seconds: under the model asked for, else under the recorded one.
    """

    path: str
    schedule: Schedule
    violation: str | None
    peak_memory: int
    peak_round: int | None
    seconds: ScheduleSeconds | None

    @property
    def recorded(self) -> TimeModel | None:
        """The time model the file records (its seconds were recomputed and agree)."""
        return self.schedule.info.get("time_model")

    def to_dict(self) -> dict[str, Any]:
        """``lpsched check --json``: ``schedule`` (the path), ``instance``, ``policy``, ``n``,
        ``memory``, ``feasible``, ``tel``, ``mean_latency``, ``makespan`` (rounds),
        ``peak_memory`` (tokens), ``peak_round``, ``evictions``, ``wasted_tokens``,
        ``first_violation``; ``recorded_time_model`` and the figures in seconds
        (:meth:`lpsched.timing.seconds.ScheduleSeconds.stats`, with ``time_model``) when there
        are any. Source: ours."""
        sched, inst = self.schedule, self.schedule.instance
        out = {
            "schedule": self.path,
            "instance": inst.name,
            "policy": sched.policy,
            "n": inst.n,
            "memory": inst.memory,
            "feasible": self.violation is None,
            "tel": sched.tel,
            "mean_latency": sched.mean_latency,
            "makespan": sched.makespan,
            "peak_memory": self.peak_memory,
            "peak_round": self.peak_round,
            "evictions": sched.evictions,
            "wasted_tokens": sched.wasted_tokens,
            "first_violation": self.violation,
        }
        if self.recorded is not None:
            out["recorded_time_model"] = self.recorded.to_dict()
        if self.seconds is not None:
            out.update(time_model=self.seconds.model.to_dict(), **self.seconds.stats())
        return out

    def summary(self) -> str:
        """The text of ``lpsched check``: one figure a line, the verdict last. Source: ours."""
        sched, inst = self.schedule, self.schedule.instance
        peak = self.peak_memory
        lines = [
            f"schedule     {one_line(self.path)} ({one_line(sched.policy or 'no policy')}) "
            f"of {one_line(inst.name)}: n = {inst.n}, M = {inst.memory} tokens",
            f"TEL          {sched.tel} rounds (mean latency {sched.mean_latency:.1f})",
            f"makespan     {sched.makespan} rounds",
            f"peak memory  {peak} tokens at round {self.peak_round} "
            f"({100 * peak / inst.memory:.1f}% of M)",
        ]
        if sched.runs is not None:
            lines.append(f"evictions    {sched.evictions} ({sched.wasted_tokens} tokens wasted)")
        if self.recorded is not None:
            lines.append(
                f"recorded     seconds under time model {self.recorded.name}: every request's "
                "latency, TTFT and TPOT agree with the starts"
            )
        if self.seconds is not None:
            figures = self.seconds.stats()
            lines.append(f"in seconds   {model_line(self.seconds.model)}")
            lines += [
                f"             {head:17s}{seconds_cell(figures, key, fmt)}"
                for key, head, fmt in SECONDS_COLUMNS
            ]
        bad = self.violation
        lines.append("feasible     yes" if bad is None else f"infeasible   {bad}")
        return "\n".join(lines)


def check_schedule_file(
    instance: Instance, path: str | os.PathLike[str], time_model: TimeModel | None = None
) -> ScheduleCheck:
    """Read the schedule JSON ``path`` of ``instance`` and check it (SPEC sections 2 and 9).

    Parameters
    ----------
    instance : Instance
    path : path-like
        Schedule JSON; an infeasible schedule is read and reported, not refused.
    time_model : TimeModel, optional
        Read the schedule in seconds under this model (default: the one the file records,
        if any).

    Returns
    -------
    ScheduleCheck

    Raises
    ------
    InstanceError
        A file that cannot be read, or whose recorded seconds disagree with its starts
        (:func:`lpsched.io.read_schedule`); under ``time_model``, as
        :func:`schedule_seconds`.
    """
    sched = read_schedule(path, instance, check=False)
    recorded = sched.info.get("time_model")
    if time_model is None or time_model == recorded:
        secs = sched.info.get("seconds")
    else:
        secs = schedule_seconds(sched, time_model, path)
    bad = sched.violations(limit=1)
    peak, at = memory_peak(sched)
    return ScheduleCheck(str(path), sched, bad[0] if bad else None, peak, at, secs)


def schedule_seconds(
    schedule: Schedule, time_model: TimeModel, path: str | os.PathLike[str]
) -> ScheduleSeconds:
    """``schedule`` (read from ``path``) in seconds under ``time_model``, refused where its
    figures would be wrong: what ``lpsched check`` and ``lpsched plot`` read under
    ``--time-model``.

    Parameters
    ----------
    schedule : Schedule
        As read from ``path`` (feasible or not).
    time_model : TimeModel
    path : path-like
        The schedule file, named in the errors.

    Returns
    -------
    ScheduleSeconds
        :func:`lpsched.timing.seconds.to_seconds` of the schedule.

    Raises
    ------
    InstanceError
        The model fails or the clock overflows; or, on an instance with arrivals in seconds
        (``arrival_s``), a request that starts at a round ``p`` with ``tau(p) < alpha_i``,
        before it arrives on this clock (a schedule that admits by arrival rounds, or on
        another model's clock: its latencies in seconds would count from after its start,
        negative ones included). ``lpsched run`` refuses such policies under
        ``--time-model`` for the same reason.

    Notes
    -----
    Source: SPEC section 10 (the admission rule ``alpha_i <= tau(p_i)``).
    """
    try:
        secs = to_seconds(schedule, time_model)
    except (TimeModelError, ValueError) as exc:
        raise InstanceError(f"{path}: {exc}") from None
    inst = schedule.instance
    if inst.arrival_s is not None:
        at = secs.tau_at(schedule.start)
        early = np.flatnonzero(at < secs.arrival_s)
        if early.size:
            i = int(early[0])
            raise InstanceError(
                f"{path}: request {quote(inst.ids[i])} starts at round {int(schedule.start[i])}, "
                f"which the clock of time model {time_model.name} reaches at "
                f"{float(at[i])!r} s, before its arrival_s {float(secs.arrival_s[i])!r} s "
                f"({early.size} of {inst.n} requests start before they arrive): the schedule "
                "does not admit on this clock, so its seconds would be wrong; read it without "
                "--time-model, or make it with an online policy under this --time-model"
            )
    return secs
