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

from .instance import Instance, InstanceError

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

    Notes
    -----
    A ``Schedule`` is not guaranteed feasible: call :meth:`check` (raises) or
    :meth:`violations` (lists). Source: SPEC section 2.
    """

    instance: Instance
    start: np.ndarray
    policy: str = ""
    info: dict[str, Any] = field(default_factory=dict)

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
        return memory_at(self.instance.prefill, self.start, self.completion, np.asarray(rounds))

    def memory_profile(self) -> tuple[np.ndarray, np.ndarray]:
        """Memory in every round ``1 .. makespan``: ``(rounds, m)``, both shape (makespan,)."""
        rounds = np.arange(1, self.makespan + 1, dtype=np.int64)
        return rounds, self.memory_at(rounds)

    @property
    def peak_memory(self) -> int:
        """Largest ``m(t)`` over all rounds, in tokens (attained at a completion round)."""
        return int(self.memory_at(np.unique(self.completion)).max())

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
        """
        inst = self.instance
        out: list[str] = []
        early = np.flatnonzero(self.start < inst.arrival)
        for i in early[:limit]:
            out.append(
                f"request '{inst.ids[i]}' starts at round {self.start[i]} before its arrival "
                f"{inst.arrival[i]}"
            )
        rounds = np.unique(self.completion)
        mem = self.memory_at(rounds)
        over = np.flatnonzero(mem > inst.memory)
        for j in over[: max(0, limit - len(out))]:
            out.append(
                f"round {rounds[j]} holds {mem[j]} tokens of KV cache, more than M = {inst.memory}"
            )
        return out

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
        """The SPEC section 9 schedule JSON object."""
        return {
            "format": SCHEDULE_FORMAT,
            "version": SCHEDULE_VERSION,
            "instance": self.instance.name,
            "policy": self.policy,
            "start": [int(x) for x in self.start],
            "completion": [int(x) for x in self.completion],
            "tel": self.tel,
        }

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write the schedule JSON (SPEC section 9) to ``path``."""
        Path(path).write_text(json.dumps(self.to_dict()) + "\n", encoding="utf-8")


def read_schedule(path: str | os.PathLike[str], instance: Instance) -> Schedule:
    """Read a schedule JSON file written for ``instance``.

    Raises
    ------
    InstanceError
        Missing or malformed file, wrong format, or a start list of the wrong length; the
        completions and TEL in the file must agree with the instance.
    """
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        raise InstanceError(f"{p}: no such file") from None
    except json.JSONDecodeError as exc:
        raise InstanceError(f"{p}: malformed JSON at line {exc.lineno}: {exc.msg}") from None
    if not isinstance(data, dict) or data.get("format") != SCHEDULE_FORMAT:
        raise InstanceError(f"{p}: field 'format' must be {SCHEDULE_FORMAT!r}")
    start = data.get("start")
    if (not isinstance(start, list) or len(start) != instance.n
            or not all(isinstance(x, int) and not isinstance(x, bool) for x in start)):
        raise InstanceError(f"{p}: field 'start' must list {instance.n} integers")
    try:
        sched = Schedule(instance, np.asarray(start), policy=str(data.get("policy", "")))
    except (InfeasibleScheduleError, TypeError, ValueError) as exc:
        raise InstanceError(f"{p}: field 'start': {exc}") from None
    if "completion" in data and data["completion"] != sched.completion.tolist():
        raise InstanceError(f"{p}: field 'completion' disagrees with start + decode length")
    if "tel" in data and data["tel"] != sched.tel:
        raise InstanceError(f"{p}: field 'tel' is {data['tel']}, the starts give {sched.tel}")
    return sched
