"""Schedules: starts, completions, memory profile, TEL and latency metrics, and the exact
feasibility check (file format: :mod:`lpsched.io`).

Conventions (SPEC section 2): request ``i`` started at ``p_i`` runs in rounds ``p_i+1 .. p_i+o_i``;
in round ``p_i+j`` it holds ``s_i + j`` tokens; it completes at ``C_i = p_i + o_i``. The memory in
round ``t`` is ``m(t) = sum over p_i < t <= C_i of (s_i + t - p_i)``. Between two completions
``m`` only grows, so checking ``m`` at every completion round is exact.

The feasibility check here is written independently of the executor (a sweep over sorted starts
and completions with prefix sums), so that every test can use it as the referee.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .instance import MAX_VALUE, Instance, quote, read_only_int64

__all__ = [
    "Schedule",
    "memory_at",
    "memory_peak",
    "runs_schedule",
    "latency_summary",
    "latency_stats",
    "InfeasibleScheduleError",
]


class InfeasibleScheduleError(ValueError):
    """A schedule violates the model of SPEC section 2 (message says where). Source: ours."""


def memory_at(
    prefill: np.ndarray, start: np.ndarray, completion: np.ndarray, rounds: np.ndarray
) -> np.ndarray:
    """KV-cache memory ``m(t)`` in tokens at each round of ``rounds``.

    Parameters
    ----------
    prefill, start, completion : ndarray of int, shape (n,)
        ``s_i``, ``p_i`` and ``C_i = p_i + o_i`` (tokens, rounds, rounds).
    rounds : ndarray of int, shape (k,)
        Rounds ``t >= 1`` at which to evaluate.

    Returns
    -------
    ndarray of int64, shape (k,)
        ``m(t) = sum_{i : p_i < t <= C_i} (s_i + t - p_i)``.

    Notes
    -----
    O((n + k) log n): a request is active at ``t`` iff ``p_i < t`` and not ``C_i < t``; prefix
    sums of ``s_i - p_i`` over requests sorted by start and by completion give the two sums.
    Source: SPEC section 2; the sweep is ours.
    """
    rounds = np.asarray(rounds, dtype=np.int64)
    w = np.asarray(prefill, dtype=np.int64) - start
    by_start = np.argsort(start, kind="stable")
    by_end = np.argsort(completion, kind="stable")
    cw_start = np.concatenate(([0], np.cumsum(w[by_start])))
    cw_end = np.concatenate(([0], np.cumsum(w[by_end])))
    k_start = np.searchsorted(start[by_start], rounds, side="left")  # p_i < t
    k_end = np.searchsorted(completion[by_end], rounds, side="left")  # C_i < t
    active = k_start - k_end
    return cw_start[k_start] - cw_end[k_end] + rounds * active


def _start_rounds(values: Any, instance: Instance) -> np.ndarray:
    """Starts ``p_i`` as a read-only int64 array, each an integer round in ``[0, 2^40]``.

    Raises
    ------
    InfeasibleScheduleError
        Wrong length, or a start that is not a finite integer in ``[0, MAX_VALUE]`` (the
        message names the request). Source: SPEC section 2 (``p_i >= a_i >= 0``); the bound is
        that of every value of the model (:data:`~lpsched.instance.MAX_VALUE`).
    """
    n = instance.n
    start: np.ndarray | None
    try:
        start = np.asarray(values)
    except (ValueError, TypeError, OverflowError):  # ragged or unconvertible
        start = None
    if start is None or start.ndim != 1:
        raise InfeasibleScheduleError(f"starts must be a flat list of {n} rounds, one a request")
    if start.shape != (n,):
        raise InfeasibleScheduleError(f"schedule has {start.size} starts for {n} requests")

    def good(v: Any) -> bool:
        if isinstance(v, (bool, np.bool_)):
            return False
        if isinstance(v, (int, np.integer)):
            return bool(0 <= v <= MAX_VALUE)
        if isinstance(v, (float, np.floating)):
            return bool(math.isfinite(v) and v == int(v) and 0 <= v <= MAX_VALUE)
        return False

    if start.dtype.kind in "iuf":  # vectorised
        with np.errstate(invalid="ignore"):
            ok = (start >= 0) & (start <= MAX_VALUE)
            if start.dtype.kind == "f":
                ok &= start == np.round(start)  # NaN fails every comparison
        bad = np.flatnonzero(~ok)
    else:  # booleans, text, objects (Python ints beyond int64): one by one
        bad = np.flatnonzero([not good(v) for v in start.tolist()])
    if bad.size:
        i = int(bad[0])
        v = start[i].item() if isinstance(start[i], np.generic) else start[i]
        raise InfeasibleScheduleError(
            f"request {quote(instance.ids[i])}: start must be an integer round in [0, 2^40], "
            f"got {v!r}"
        )
    return read_only_int64(start)


@dataclass(frozen=True, eq=False)
class Schedule:
    """A start round for every request of an instance, with its metrics.

    Parameters
    ----------
    instance : Instance
        The instance scheduled.
    start : array_like of int, shape (n,)
        Start (decision) round ``p_i`` of each request, in instance order.
    policy : str
        Name of the policy that produced it (free text).
    info : dict
        Extra results of the policy (e.g. Phase-1 batches, runtime).
    runs : array_like of int, shape (R, 4), optional
        Every run of a request when the policy evicts (SPEC section 6): rows
        ``(request, start, end, completed)``. A run started at ``start`` holds ``s_i + j`` tokens
        in round ``start + j`` for ``j = 1 .. end - start``; ``completed`` is 1 for the run that
        finishes the request (then ``end = start + o_i``) and 0 for a run cut short by an
        eviction at decision time ``end`` (its progress and KV cache are lost). ``None``
        (default): one uninterrupted run per request, ``(i, p_i, C_i, 1)``.

    Notes
    -----
    A ``Schedule`` is not guaranteed feasible: call :meth:`check` (raises) or
    :meth:`violations` (lists). With ``runs``, ``start`` is the start of each request's final
    (completed) run, so ``C_i = p_i + o_i`` and the latency ``C_i - a_i`` count from arrival to
    final completion. Source: SPEC section 2; runs: SPEC section 6.
    """

    instance: Instance
    start: np.ndarray
    policy: str = ""
    info: dict[str, Any] = field(default_factory=dict)
    runs: np.ndarray | None = None

    def __post_init__(self) -> None:
        start = _start_rounds(self.start, self.instance)
        object.__setattr__(self, "start", start)
        completion = start + self.instance.decode
        completion.setflags(write=False)
        object.__setattr__(self, "_completion", completion)
        if self.runs is not None:
            runs = np.asarray(self.runs)
            if runs.size == 0:
                runs = runs.reshape(0, 4)
            if runs.ndim != 2 or runs.shape[1] != 4 or (runs.size and runs.dtype.kind not in "iu"):
                raise InfeasibleScheduleError(
                    "runs must be an integer array of rows (request, start, end, completed)"
                )
            if runs.size and (runs.min() < -MAX_VALUE or runs.max() > 2 * MAX_VALUE):
                raise InfeasibleScheduleError(
                    "runs: every entry must lie in [-2^40, 2^41] (rounds within the model's range)"
                )
            flags = runs[:, 3] if runs.size else runs[:0, 0]
            bad = np.flatnonzero((flags != 0) & (flags != 1))
            if bad.size:
                raise InfeasibleScheduleError(
                    f"runs, row {int(bad[0])}: completed must be 0 (cut short) or 1, got "
                    f"{int(flags[bad[0]])}"
                )
            object.__setattr__(self, "runs", read_only_int64(runs))

    def __repr__(self) -> str:
        """One line: the instance, the policy, TEL and feasibility, never the arrays (a
        schedule of a million requests prints as quickly as one of ten). Source: ours."""
        runs = "" if self.runs is None else f", runs={len(self.runs)}"
        return (
            f"Schedule(instance={self.instance.name!r}, n={self.instance.n}, "
            f"policy={self.policy!r}, tel={self.tel}{runs})"
        )

    def _intervals(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(prefill, start, end)`` of every run (one per request without ``runs``)."""
        if self.runs is None:
            return self.instance.prefill, self.start, self.completion
        req = self.runs[:, 0]
        ok = (req >= 0) & (req < self.instance.n)
        return self.instance.prefill[req[ok]], self.runs[ok, 1], self.runs[ok, 2]

    @property
    def evictions(self) -> int:
        """Number of runs cut short by an eviction (0 without ``runs``). SPEC section 6."""
        return 0 if self.runs is None else int((self.runs[:, 3] == 0).sum())

    @property
    def wasted_tokens(self) -> int:
        """Output tokens emitted by evicted runs and lost, ``sum (end - start)`` over cut runs
        (0 without ``runs``). SPEC section 6."""
        if self.runs is None:
            return 0
        cut = self.runs[:, 3] == 0
        return int((self.runs[cut, 2] - self.runs[cut, 1]).sum())

    # ------------------------------------------------------------------ metrics
    @property
    def completion(self) -> np.ndarray:
        """Completion rounds ``C_i = p_i + o_i``, shape (n,)."""
        return self._completion  # type: ignore[attr-defined]

    @property
    def latency(self) -> np.ndarray:
        """End-to-end latency ``C_i - a_i`` per request, shape (n,), rounds."""
        return self.completion - self.instance.arrival

    @property
    def tel(self) -> int:
        """Total end-to-end latency ``TEL = sum_i (C_i - a_i)`` in rounds."""
        return int(self.latency.sum())

    @property
    def mean_latency(self) -> float:
        """Average latency ``TEL / n`` in rounds."""
        return self.tel / self.instance.n

    @property
    def makespan(self) -> int:
        """Last completion round ``max_i C_i``."""
        return int(self.completion.max())

    def memory_at(self, rounds: Sequence[int] | np.ndarray) -> np.ndarray:
        """Memory ``m(t)`` in tokens at the given rounds (see :func:`memory_at`)."""
        return memory_at(*self._intervals(), np.asarray(rounds))

    def memory_profile(self) -> tuple[np.ndarray, np.ndarray]:
        """Memory in every round ``1 .. makespan``: ``(rounds, m)``, both shape (makespan,)."""
        rounds = np.arange(1, self.makespan + 1, dtype=np.int64)
        return rounds, self.memory_at(rounds)

    @property
    def peak_memory(self) -> int:
        """Largest ``m(t)`` over all rounds, in tokens (attained at the end of some run)."""
        return int(self.memory_at(np.unique(self._intervals()[2])).max())

    def summary(self) -> dict[str, Any]:
        """Scalar metrics: tel, mean_latency, makespan, peak_memory (rounds, tokens)."""
        return {
            "tel": self.tel,
            "mean_latency": self.mean_latency,
            "makespan": self.makespan,
            "peak_memory": self.peak_memory,
        }

    # ------------------------------------------------------------------ feasibility
    def violations(self, limit: int = 10) -> list[str]:
        """Every way the schedule breaks SPEC section 2, at most ``limit`` messages.

        Checks ``p_i >= a_i`` for every request and ``m(C_j) <= M`` at every completion round
        (exact, since ``m`` only grows between completions). Independent of the executor.

        With ``runs`` (SPEC section 6) the memory is that of every run, cut short or not, checked
        at the end round of every run (exact by the same argument), and the runs must be
        consistent: each request has exactly one completed run, its last, which starts at
        ``p_i`` and lasts ``o_i`` rounds; every cut run lasts ``1 .. o_i - 1`` rounds and starts
        at or after the arrival; the runs of one request do not overlap.
        """
        inst = self.instance
        out: list[str] = []
        if self.runs is not None:
            out += self._run_violations(limit)
        early = np.flatnonzero(self.start < inst.arrival)
        for i in early[:limit]:
            out.append(
                f"request {quote(inst.ids[i])} starts at round {self.start[i]} before its arrival "
                f"{inst.arrival[i]}"
            )
        rounds = np.unique(self._intervals()[2])
        mem = self.memory_at(rounds)
        over = np.flatnonzero(mem > inst.memory)
        for j in over[: max(0, limit - len(out))]:
            out.append(
                f"round {rounds[j]} holds {mem[j]} tokens of KV cache, more than M = {inst.memory}"
            )
        return out

    def _run_violations(self, limit: int) -> list[str]:
        """Consistency of ``runs`` with the starts and decode lengths (see :meth:`violations`)."""
        assert self.runs is not None  # only called for a schedule with runs
        inst = self.instance
        out: list[str] = []
        by_req: dict[int, list[tuple[int, int, int]]] = {}
        for req, p, end, done in self.runs.tolist():
            if not 0 <= req < inst.n:
                out.append(f"run of unknown request index {req}")
                continue
            by_req.setdefault(req, []).append((p, end, done))
        for i in range(inst.n):
            if len(out) >= limit:
                break
            rid = quote(inst.ids[i])
            runs = sorted(by_req.get(i, []))
            done = [r for r in runs if r[2] == 1]
            if len(done) != 1 or runs[-1][2] != 1:
                out.append(f"request {rid} needs exactly one completed run, its last")
                continue
            p, end, _ = done[0]
            if p != self.start[i] or end != p + inst.decode[i]:
                out.append(
                    f"request {rid}: completed run ({p}, {end}) disagrees with start "
                    f"{self.start[i]} and decode length {inst.decode[i]}"
                )
            prev_end = int(inst.arrival[i])
            for p, end, flag in runs:
                if p < prev_end:
                    out.append(
                        f"request {rid}: run starting at {p} begins before its arrival "
                        f"or before its previous run ended ({prev_end})"
                    )
                if flag == 0 and not 1 <= end - p <= inst.decode[i] - 1:
                    out.append(
                        f"request {rid}: evicted run ({p}, {end}) must last 1 to "
                        f"o_i - 1 = {inst.decode[i] - 1} rounds"
                    )
                prev_end = end
        return out[:limit]

    @property
    def feasible(self) -> bool:
        """True iff :meth:`violations` is empty."""
        return not self.violations(limit=1)

    def check(self) -> Schedule:
        """Return ``self`` if feasible, else raise :class:`InfeasibleScheduleError`."""
        bad = self.violations()
        if bad:
            raise InfeasibleScheduleError(
                f"{self.policy or 'schedule'} on {self.instance.name}: " + "; ".join(bad)
            )
        return self


def runs_schedule(
    instance: Instance,
    start: Sequence[int],
    runs: Sequence[tuple[int, int, int, int]],
    *,
    policy: str = "",
    info: dict[str, Any] | None = None,
) -> Schedule:
    """The schedule of an executor that cuts runs (eviction, preemption), from its lists.

    Parameters
    ----------
    instance : Instance
        The instance scheduled.
    start : sequence of int, length n
        Start round ``p_i`` of each request's final run.
    runs : sequence of (request, start, end, completed)
        Every run, in any order (:class:`Schedule`'s ``runs``); may be empty.
    policy : str
        Name recorded in the schedule.
    info : dict, optional
        The policy's extra results.

    Returns
    -------
    Schedule
        With ``runs`` an int64 array of shape (R, 4). Not checked (:meth:`Schedule.check`).

    Notes
    -----
    Source: SPEC section 6 (runs); the helper is ours.
    """
    return Schedule(
        instance,
        np.asarray(start, dtype=np.int64),
        policy=policy,
        info={} if info is None else info,
        runs=np.asarray(runs, dtype=np.int64).reshape(-1, 4),
    )


def memory_peak(schedule: Schedule) -> tuple[int, int | None]:
    """Peak memory of a schedule and the first round it is reached.

    Parameters
    ----------
    schedule : Schedule
        Any schedule, feasible or not (``lpsched check`` reports the peak of an infeasible
        one, which may exceed ``M``).

    Returns
    -------
    peak : int
        ``max_t m(t)`` in tokens (0 when no run ends at a round ``>= 1``).
    round : int or None
        The first round ``t`` with ``m(t) = peak``; None when no run ends at a round ``>= 1``.

    Notes
    -----
    ``m`` only grows between two ends of runs (SPEC section 2), so it peaks at the end of some
    run: evaluating it at every distinct end round ``>= 1`` is exact. Source: SPEC section 2.
    """
    ends = np.unique(schedule.completion if schedule.runs is None else schedule.runs[:, 2])
    ends = ends[ends >= 1]
    if not ends.size:
        return 0, None
    mem = schedule.memory_at(ends)
    k = int(np.argmax(mem))
    return int(mem[k]), int(ends[k])


def latency_summary(latency: np.ndarray, output_tokens: int, span: float) -> dict[str, float]:
    """Mean, p50, p90 and p99 of latencies and the throughput over a span: the one home of
    these figures, in rounds (:func:`latency_stats`) and in seconds
    (:meth:`lpsched.timing.seconds.ScheduleSeconds.stats`).

    Parameters
    ----------
    latency : ndarray, shape (n,)
        Per-request latencies (rounds or seconds), n >= 1.
    output_tokens : int
        ``sum_i o_i`` (tokens).
    span : float
        The busy span in the latencies' unit (``max_i C_i - min_i a_i``), > 0.

    Returns
    -------
    dict
        ``mean_latency``, ``p50_latency``, ``p90_latency``, ``p99_latency`` (the percentiles by
        linear interpolation, numpy's default), ``throughput`` (requests per unit of time over
        ``span``) and ``token_throughput`` (output tokens per unit of time over ``span``).

    Notes
    -----
    Source: ours.
    """
    lat = np.asarray(latency, dtype=float)
    p50, p90, p99 = np.percentile(lat, [50, 90, 99])
    return {
        "mean_latency": float(lat.mean()),
        "p50_latency": float(p50),
        "p90_latency": float(p90),
        "p99_latency": float(p99),
        "throughput": lat.size / span,
        "token_throughput": float(output_tokens) / span,
    }


def latency_stats(schedule: Schedule) -> dict[str, Any]:
    """Mean, p50, p90, p99 latency and throughput of a schedule, in rounds.

    Parameters
    ----------
    schedule : Schedule
        Any schedule (online or offline; with evictions the latency counts to the final
        completion).

    Returns
    -------
    dict
        ``tel`` (rounds), :func:`latency_summary` of the latencies in rounds over the busy span
        ``max_i C_i - min_i a_i`` (``mean_latency``, ``p50_latency``, ``p90_latency``,
        ``p99_latency``, ``throughput`` in completed requests per round, ``token_throughput``
        in output tokens per round) and ``makespan`` (rounds). In seconds:
        :func:`lpsched.timing.seconds.to_seconds` under a time model (SPEC section 10).

    Notes
    -----
    Under overload latencies grow with the number of requests ``n`` (the queue builds up), so
    compare policies at the same ``n``. Source: ours.
    """
    inst = schedule.instance
    span = max(1, int(schedule.completion.max() - inst.arrival.min()))
    return {
        "tel": schedule.tel,
        **latency_summary(schedule.latency, int(inst.decode.sum()), span),
        "makespan": schedule.makespan,
    }
