"""Non-clairvoyant execution: policies that cannot see the decode lengths, and kills they choose.

A *blind* policy (SPEC section 11) is built from a :class:`BlindView` of the instance, which
holds the prefill lengths ``s_i``, the arrivals ``a_i`` and the budget ``M`` but no ``o_i``
(at most a prediction the policy is entitled to: an interval ``[l_i, u_i]`` or a short / long
class bit). :func:`run_blind` holds the true instance and drives the policy:

* at every decision time ``t`` (after round ``t``, before round ``t+1``) it tells the policy which
  requests completed at ``t`` (with their ``o_i``, revealed only then) and which arrived;
* the policy answers with the running attempts it kills at ``t`` and the waiting requests it
  starts at ``t`` (:class:`Decision`);
* a killed attempt frees its memory at once and loses its progress and KV cache; the request
  waits again and runs later from its first token (the same effect as an eviction of SPEC
  section 6 or a recompute preemption of ``vllm``, recorded the same way, as a cut run
  ``(request, start, t, 0)`` of :attr:`~lpsched.schedule.Schedule.runs`).

The executor checks every answer: a kill names a running request, a start names a request that
has arrived and is neither running nor done, and the memory of the running set in every round
stays within ``M``. It visits only the decision times at which something can happen: a
completion, an arrival, the time the policy asks to be woken at (:attr:`Decision.wake`), and the
last time before the running set would exceed ``M`` (the policy must then kill; if it does not,
:class:`BlindPolicyError`). Between visits no request completes, so the running set's memory
``S + t K`` (``K`` running, ``S = sum (s_j - p_j)``) is known in closed form without any
``o_i``.

What a policy learns is therefore exactly what a serving engine learns: completions when they
happen, and the progress ``t - p_j`` of each running attempt (which it can count itself).
Permuting the decode lengths among unfinished requests with the same prefill (and the same
prediction) cannot change any decision before one of them completes; the tests check this for
every blind policy.

Source: SPEC section 11 (ours: the executor that enforces the non-clairvoyant model of Feng,
Liu, Yang, Zhang, arXiv 2607.09248, and Feng, Yang, Zhang, arXiv 2601.22996, in which a
request's decode length is learnt when it finishes and an attempt may be killed and restarted).
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from .instance import Instance
from .schedule import Schedule, runs_schedule

__all__ = [
    "BlindPolicy",
    "BlindPolicyError",
    "BlindSpec",
    "BlindState",
    "BlindView",
    "Decision",
    "Reveal",
    "run_blind",
]

#: What a blind policy's view shows beside ``s_i``, ``a_i`` and ``M``: ``"none"``,
#: ``"interval"`` (``l_i``, ``u_i``) or ``("class", T)`` (whether ``o_i > T``).
Reveal = str | tuple[str, int]


class BlindPolicyError(ValueError):
    """A blind policy's decision that the executor refuses: a kill of a request that is not
    running, a start of one that is not waiting or has not arrived, a memory overflow it did
    not prevent, or a run that never ends (no progress)."""


@dataclass(frozen=True)
class BlindView:
    """What a non-clairvoyant policy may see of an instance: everything but ``o_i``.

    Attributes
    ----------
    n : int
        Number of requests.
    memory : int
        KV-cache budget ``M`` (tokens).
    prefill : ndarray of int64, shape (n,), read-only
        Prefill lengths ``s_i`` (tokens).
    arrival : ndarray of int64, shape (n,), read-only
        Arrival rounds ``a_i``.
    ids : tuple of str
        Request ids.
    name : str
        Instance name.
    decode_lo, decode_hi : ndarray of int64, shape (n,), or None
        The prediction interval ``l_i <= o_i <= u_i`` (tokens), for a policy that sees it
        (``reveal="interval"``); None otherwise.
    long : ndarray of bool, shape (n,), or None
        The one-bit prediction ``o_i > threshold`` (``reveal=("class", threshold)``); None
        otherwise.

    Notes
    -----
    Source: ours (SPEC section 11).
    """

    n: int
    memory: int
    prefill: np.ndarray
    arrival: np.ndarray
    ids: tuple[str, ...]
    name: str = ""
    decode_lo: np.ndarray | None = None
    decode_hi: np.ndarray | None = None
    long: np.ndarray | None = None

    @classmethod
    def of(cls, instance: Instance, reveal: Reveal = "none") -> BlindView:
        """The view of ``instance`` for a policy that sees ``reveal``.

        Parameters
        ----------
        instance : Instance
        reveal : "none", "interval" or ("class", threshold)
            ``"interval"``: the instance's prediction intervals (it must have them);
            ``("class", T)``: whether ``o_i > T`` (``T >= 0``, tokens).

        Returns
        -------
        BlindView

        Raises
        ------
        ValueError
            An unknown ``reveal``, intervals asked of an instance without them, or a negative
            or non-integer threshold.
        """
        lo = hi = long = None
        if reveal == "interval":
            if instance.decode_lo is None or instance.decode_hi is None:
                raise ValueError(
                    f"instance {instance.name!r} has no decode-length intervals (decode_lo, "
                    "decode_hi); make some with 'lpsched generate --intervals ...'"
                )
            lo, hi = _frozen(instance.decode_lo), _frozen(instance.decode_hi)
        elif isinstance(reveal, tuple) and len(reveal) == 2 and reveal[0] == "class":
            threshold = reveal[1]
            if isinstance(threshold, bool) or not isinstance(threshold, (int, np.integer)):
                raise ValueError(f"class threshold must be an integer, got {threshold!r}")
            if threshold < 0:
                raise ValueError(f"class threshold must be >= 0 tokens, got {threshold}")
            long = _frozen(instance.decode > threshold)
        elif reveal != "none":
            raise ValueError(f"reveal must be 'none', 'interval' or ('class', T), got {reveal!r}")
        return cls(
            n=instance.n,
            memory=instance.memory,
            prefill=_frozen(instance.prefill),
            arrival=_frozen(instance.arrival),
            ids=tuple(instance.ids),
            name=instance.name,
            decode_lo=lo,
            decode_hi=hi,
            long=long,
        )


def _frozen(values: np.ndarray) -> np.ndarray:
    """A read-only copy."""
    out = np.array(values, copy=True)
    out.flags.writeable = False
    return out


@dataclass(frozen=True)
class BlindState:
    """What the executor tells a blind policy at decision time ``t``.

    Attributes
    ----------
    t : int
        The decision time (after round ``t``, before round ``t+1``).
    completed : tuple of (int, int)
        ``(request, o_i)`` of the attempts that completed at ``t`` (their decode length,
        revealed now), by request index.
    arrived : tuple of int
        Requests with ``a_i <= t`` not yet announced, by arrival then index (at the first
        visit: every request that has arrived).
    running : Mapping[int, int]
        Request -> start ``p_j`` of its running attempt (read-only; its progress is
        ``t - p_j`` output tokens).
    memory_next : int
        Memory of round ``t+1`` if the running set goes on unchanged (tokens):
        ``sum_j (s_j + t + 1 - p_j)``.
    """

    t: int
    completed: tuple[tuple[int, int], ...]
    arrived: tuple[int, ...]
    running: Mapping[int, int]
    memory_next: int


@dataclass(frozen=True)
class Decision:
    """A blind policy's answer at one decision time.

    Attributes
    ----------
    kill : sequence of int
        Running requests whose attempt ends now (memory freed for round ``t+1`` on, progress
        lost). Applied first.
    start : sequence of int
        Waiting requests that start an attempt now (``p = t``; first token in round ``t+1``).
    wake : int or None
        A later decision time at which the policy wants to be asked even if nothing completes
        or arrives (e.g. when an attempt reaches its cap); None: only at events.
    """

    kill: Sequence[int] = ()
    start: Sequence[int] = ()
    wake: int | None = None


#: A blind policy: called at every decision time visited, it returns its :class:`Decision`.
BlindPolicy = Callable[[BlindState], Decision]


def _sees_nothing(**options: Any) -> Reveal:
    return "none"


@dataclass(frozen=True)
class BlindSpec:
    """How a registered blind policy is made: what its view reveals, and the policy built on it.

    Attributes
    ----------
    build : callable
        ``build(view, **options) -> BlindPolicy``: a fresh policy (it may keep state) for one
        run, from a :class:`BlindView` and the policy's options.
    reveal : callable
        ``reveal(view=..., **options) -> Reveal``: what the view shows (default ``"none"``); a
        policy whose class threshold is an option reads it here. It is given, as the keyword
        ``view``, the :class:`BlindView` without a prediction (``s_i``, ``a_i``, ``M``), so that
        a default threshold may depend on what the policy sees anyway (:meth:`revealed`).

    Notes
    -----
    Source: ours (SPEC section 11): the registry's ``run`` of a blind policy is :meth:`run`, so
    no blind policy ever receives the :class:`~lpsched.instance.Instance`.
    """

    build: Callable[..., BlindPolicy]
    reveal: Callable[..., Reveal] = _sees_nothing

    def revealed(self, instance: Instance, **options: Any) -> Reveal:
        """What the view of ``instance`` shows under ``options``: ``reveal(view=..., **options)``
        with the view of ``instance`` without a prediction.

        Parameters
        ----------
        instance : Instance
        **options
            The policy's options.

        Returns
        -------
        Reveal
        """
        return self.reveal(view=BlindView.of(instance), **options)

    def run(
        self, instance: Instance, *, name: str = "", record: bool = False, **options: Any
    ) -> Schedule:
        """Build the policy on the view of ``instance`` and run it (:func:`run_blind`).

        Parameters
        ----------
        instance : Instance
        name : str
            Policy name recorded in the schedule.
        record : bool, default False
            Keep every decision in ``info["decisions"]`` (:func:`run_blind`).
        **options
            The policy's options, given to both ``reveal`` and ``build``.

        Returns
        -------
        Schedule
        """
        view = BlindView.of(instance, self.revealed(instance, **options))
        return run_blind(instance, self.build(view, **options), name=name, record=record)


@dataclass
class _Run:
    """The executor's state (ours): the true lengths stay here."""

    s: list[int]
    o: list[int]
    running: dict[int, int] = field(default_factory=dict)
    ends: list[tuple[int, int, int]] = field(default_factory=list)  # heap (C, j, p)
    S: int = 0  # sum over running of s_j - p_j

    def memory(self, t: int) -> int:
        """Memory of round ``t`` if no running attempt ends before it (tokens)."""
        return self.S + t * len(self.running)

    def begin(self, j: int, t: int) -> None:
        self.running[j] = t
        self.S += self.s[j] - t
        heapq.heappush(self.ends, (t + self.o[j], j, t))

    def end(self, j: int) -> int:
        p = self.running.pop(j)
        self.S -= self.s[j] - p
        return p


def run_blind(
    instance: Instance,
    policy: BlindPolicy,
    *,
    name: str = "",
    record: bool = False,
    max_visits: int | None = None,
) -> Schedule:
    """Run a blind policy on ``instance``: the non-clairvoyant executor of SPEC section 11,
    which keeps each ``o_i`` to itself until the request completes and applies the policy's kills.

    Parameters
    ----------
    instance : Instance
        Requests ``(s_i, o_i, a_i)`` and the budget ``M``; ``o_i`` stays in the executor.
    policy : BlindPolicy
        ``policy(state) -> Decision``, built from a :class:`BlindView` (module docstring).
    name : str
        Policy name recorded in the schedule.
    record : bool, default False
        Keep every decision that kills or starts something in ``info["decisions"]``: a list
        of ``(t, kills, starts)``, tuples of request indices in the policy's order.
    max_visits : int, optional
        Refuse a run that visits more decision times (a policy that never finishes); default
        ``50 n + 10^6``.

    Returns
    -------
    Schedule
        ``start``: the start of each request's final attempt; ``runs``: every attempt
        ``(request, start, end, completed)``, killed ones with ``completed = 0`` (an attempt
        killed at its own start held no memory and is not a run); ``info``: ``kills``,
        ``wasted_tokens`` (output tokens of killed attempts), ``attempts``, ``visits``,
        ``runtime_s``. Feasible, runs included.

    Raises
    ------
    BlindPolicyError
        A decision the executor refuses (see :class:`BlindPolicyError`), a run that waits with
        nothing running and nothing started, or more than ``max_visits`` visits.

    Notes
    -----
    Source: SPEC section 11 (ours; the event skipping as in ``vllm``'s executor).
    """
    t0 = time.perf_counter()
    n = instance.n
    M = instance.memory
    a = instance.arrival.tolist()
    run = _Run(instance.prefill.tolist(), instance.decode.tolist())
    arrivals = sorted(range(n), key=lambda i: (a[i], i))
    limit = max_visits if max_visits is not None else 50 * n + 1_000_000
    waiting: set[int] = set()
    start = [0] * n
    runs: list[tuple[int, int, int, int]] = []
    done = kills = wasted = attempts = visits = ap = 0
    wake: int | None = None
    decisions: list[tuple[int, tuple[int, ...], tuple[int, ...]]] = []
    t = a[arrivals[0]] if n else 0
    view = MappingProxyType(run.running)
    while done < n:
        visits += 1
        if visits > limit:
            raise BlindPolicyError(f"policy {name!r} visited more than {limit} decision times")
        completed = []
        while run.ends and run.ends[0][0] <= t:
            c, j, p = heapq.heappop(run.ends)
            if run.running.get(j) != p:  # an attempt killed earlier
                continue
            run.end(j)
            runs.append((j, p, c, 1))
            start[j] = p
            completed.append((j, run.o[j]))
            done += 1
        arrived = []
        while ap < n and a[arrivals[ap]] <= t:
            arrived.append(arrivals[ap])
            waiting.add(arrivals[ap])
            ap += 1
        if done == n:
            break
        state = BlindState(t, tuple(sorted(completed)), tuple(arrived), view, run.memory(t + 1))
        decision = _checked(policy(state), name, t)
        if record and (decision.kill or decision.start):
            decisions.append((t, tuple(decision.kill), tuple(decision.start)))
        for j in decision.kill:
            if j not in run.running:
                why = f"killed request {j} at round {t}: not running"
                raise BlindPolicyError(f"policy {name!r} {why}")
            p = run.end(j)
            kills += 1
            if t > p:
                runs.append((j, p, t, 0))
                wasted += t - p
            waiting.add(j)
        for j in decision.start:
            if j not in waiting:
                why = "running" if j in run.running else "not waiting (done or not arrived)"
                raise BlindPolicyError(f"policy {name!r} started request {j} at round {t}: {why}")
            waiting.discard(j)
            run.begin(j, t)
            attempts += 1
        if run.memory(t + 1) > M:
            raise BlindPolicyError(
                f"policy {name!r} overflows the KV cache in round {t + 1}: "
                f"{run.memory(t + 1)} > M = {M} tokens"
            )
        wake = decision.wake
        if wake is not None and wake <= t:
            raise BlindPolicyError(f"policy {name!r} asked to wake at {wake}, not after {t}")
        t = _next_visit(run, M, t, wake, a[arrivals[ap]] if ap < n else None)
        if t is None:
            raise BlindPolicyError(
                f"policy {name!r} left {n - done} request(s) waiting with nothing running, no "
                "arrival to come and no wake-up time"
            )
    info: dict[str, Any] = {
        "kills": kills,
        "wasted_tokens": wasted,
        "attempts": attempts,
        "visits": visits,
        "runtime_s": time.perf_counter() - t0,
    }
    if record:
        info["decisions"] = decisions
    return runs_schedule(instance, start, runs, policy=name, info=info)


def _checked(decision: Any, name: str, t: int) -> Decision:
    """``decision`` if it is a :class:`Decision` of integer request indices and an integer
    wake-up round after ``t``; else :class:`BlindPolicyError` naming the policy and round."""
    if not isinstance(decision, Decision):
        raise BlindPolicyError(
            f"policy {name!r} answered {type(decision).__name__} at round {t}, not a Decision"
        )
    for what in ("kill", "start"):
        for j in getattr(decision, what):
            if isinstance(j, bool) or not isinstance(j, (int, np.integer)):
                raise BlindPolicyError(
                    f"policy {name!r} named request {j!r} in {what} at round {t}: a request "
                    "is an integer index"
                )
    wake = decision.wake
    if wake is not None and (isinstance(wake, bool) or not isinstance(wake, (int, np.integer))):
        raise BlindPolicyError(
            f"policy {name!r} asked to wake at {wake!r} at round {t}: a round is an integer"
        )
    return decision


def _next_visit(run: _Run, M: int, t: int, wake: int | None, arrival: int | None) -> int | None:
    """The next decision time: the earliest of the next true completion, the next arrival, the
    policy's wake-up time and the last time before the running set would exceed ``M`` (with
    ``K`` running, the memory of round ``r`` is ``S + r K`` until a completion)."""
    while run.ends and run.running.get(run.ends[0][1]) != run.ends[0][2]:
        heapq.heappop(run.ends)  # killed attempts
    times = [x for x in (wake, arrival) if x is not None]
    if run.ends:
        times.append(run.ends[0][0])
    K = len(run.running)
    if K:
        first_over = (M - run.S) // K + 1  # smallest r with S + r K > M
        times.append(max(t + 1, first_over - 1))
    return min(times) if times else None
