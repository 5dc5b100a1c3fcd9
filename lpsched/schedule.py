"""Schedules: starts, completions, memory profile, TEL, and the exact feasibility check.

Conventions (SPEC section 2): request ``i`` started at ``p_i`` runs in rounds ``p_i+1 .. p_i+o_i``;
in round ``p_i+j`` it holds ``s_i + j`` tokens; it completes at ``C_i = p_i + o_i``. The memory in
round ``t`` is ``m(t) = sum over p_i < t <= C_i of (s_i + t - p_i)``. Between two completions
``m`` only grows, so checking ``m`` at every completion round is exact.

The feasibility check here is written independently of the executor (a sweep over sorted starts
and completions with prefix sums), so that every test can use it as the referee.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .instance import MAX_VALUE, Instance, InstanceError, _int_field, load_json

SCHEDULE_FORMAT = "lpsched/schedule"
SCHEDULE_VERSION = 1

__all__ = ["Schedule", "memory_at", "read_schedule", "InfeasibleScheduleError"]


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
        start = np.asarray(self.start)
        if start.shape != (self.instance.n,):
            raise InfeasibleScheduleError(
                f"schedule has {start.size} starts for {self.instance.n} requests"
            )
        if start.dtype.kind == "f" and not np.all(start == np.round(start)):
            raise InfeasibleScheduleError("starts must be integers")
        start = start.astype(np.int64, copy=True)
        start.setflags(write=False)
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
            runs = runs.astype(np.int64, copy=True)
            runs.setflags(write=False)
            object.__setattr__(self, "runs", runs)

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
                f"request '{inst.ids[i]}' starts at round {self.start[i]} before its arrival "
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
            rid = inst.ids[i]
            runs = sorted(by_req.get(i, []))
            done = [r for r in runs if r[2] == 1]
            if len(done) != 1 or runs[-1][2] != 1:
                out.append(f"request '{rid}' needs exactly one completed run, its last")
                continue
            p, end, _ = done[0]
            if p != self.start[i] or end != p + inst.decode[i]:
                out.append(
                    f"request '{rid}': completed run ({p}, {end}) disagrees with start "
                    f"{self.start[i]} and decode length {inst.decode[i]}"
                )
            prev_end = int(inst.arrival[i])
            for p, end, flag in runs:
                if p < prev_end:
                    out.append(
                        f"request '{rid}': run starting at {p} begins before its arrival "
                        f"or before its previous run ended ({prev_end})"
                    )
                if flag == 0 and not 1 <= end - p <= inst.decode[i] - 1:
                    out.append(
                        f"request '{rid}': evicted run ({p}, {end}) must last 1 to "
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

    # ------------------------------------------------------------------ files
    def to_dict(self) -> dict[str, Any]:
        """The SPEC section 9 schedule JSON object; with evictions also ``runs`` (rows
        ``[request, start, end, completed]``), ``evictions`` and ``wasted_tokens``."""
        out: dict[str, Any] = {
            "format": SCHEDULE_FORMAT,
            "version": SCHEDULE_VERSION,
            "instance": self.instance.name,
            "policy": self.policy,
            "start": [int(x) for x in self.start],
            "completion": [int(x) for x in self.completion],
            "tel": self.tel,
        }
        if self.runs is not None:
            out.update(
                runs=self.runs.tolist(), evictions=self.evictions, wasted_tokens=self.wasted_tokens
            )
        return out

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write the schedule JSON (SPEC section 9) to ``path``."""
        Path(path).write_text(json.dumps(self.to_dict()) + "\n", encoding="utf-8")


def read_schedule(
    path: str | os.PathLike[str], instance: Instance, *, check: bool = True
) -> Schedule:
    """Read a schedule JSON file written for ``instance``.

    Parameters
    ----------
    path : path-like
        The schedule JSON (SPEC section 9, with the optional ``runs`` of evicting policies).
    instance : Instance
        The instance it schedules (its name must match the file's ``instance`` field).
    check : bool, default True
        Also refuse a schedule that breaks the model (a start before its arrival, a round
        over ``M``); False reads it as it is, for inspecting infeasible schedules.

    Returns
    -------
    Schedule

    Raises
    ------
    InstanceError
        Missing or malformed file, wrong format, or a start list of the wrong length; the
        completions and TEL in the file must agree with the instance; with ``check``, an
        infeasible schedule (the message says where).
    """
    p = Path(path)
    try:
        data = load_json(p.read_text(encoding="utf-8-sig"), p)
    except FileNotFoundError:
        raise InstanceError(f"{p}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InstanceError(f"{p}: cannot read: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != SCHEDULE_FORMAT:
        raise InstanceError(f"{p}: field 'format' must be {SCHEDULE_FORMAT!r}")
    version = data.get("version", SCHEDULE_VERSION)
    if version != SCHEDULE_VERSION or isinstance(version, bool):
        raise InstanceError(f"{p}: field 'version' is {version!r}; this lpsched reads 1")
    if "instance" in data and data["instance"] != instance.name:
        raise InstanceError(
            f"{p}: field 'instance' is {data['instance']!r}, but the instance "
            f"given is {instance.name!r}"
        )
    start = data.get("start")
    if not isinstance(start, list) or len(start) != instance.n:
        raise InstanceError(f"{p}: field 'start' must list {instance.n} integers")
    values = [
        _int_field(x, str(p), f"request '{instance.ids[i]}'", "start") for i, x in enumerate(start)
    ]
    for i, v in enumerate(values):
        if not 0 <= v <= MAX_VALUE:
            raise InstanceError(
                f"{p}: request '{instance.ids[i]}': field 'start' must be a "
                f"round in [0, 2^40], got {v}"
            )
    runs = data.get("runs")
    if runs is not None:
        if not (
            isinstance(runs, list)
            and all(
                isinstance(r, list)
                and len(r) == 4
                and all(isinstance(v, int) and not isinstance(v, bool) for v in r)
                for r in runs
            )
        ):
            raise InstanceError(
                f"{p}: field 'runs' must list [request, start, end, completed] integer rows"
            )
        runs = np.asarray(runs, dtype=np.int64).reshape(-1, 4)
    sched = Schedule(
        instance, np.asarray(values, dtype=np.int64), policy=str(data.get("policy", "")), runs=runs
    )
    if "completion" in data and data["completion"] != sched.completion.tolist():
        raise InstanceError(f"{p}: field 'completion' disagrees with start + decode length")
    if "tel" in data and (isinstance(data["tel"], bool) or data["tel"] != sched.tel):
        raise InstanceError(f"{p}: field 'tel' is {data['tel']!r}, the starts give {sched.tel}")
    if check:
        bad = sched.violations(limit=3)
        if bad:
            raise InstanceError(f"{p}: infeasible schedule: " + "; ".join(bad))
    return sched
