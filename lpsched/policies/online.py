"""Online arrivals: receding-horizon Sorted-F, online FCFS and online MC-SF (SPEC section 5).

Requests become known at their arrival round ``a_i``. The list the executor walks is the
planner's order of the *arrived* requests that have not started; a request that has not arrived
is invisible (unlike the offline list executor of SPEC section 4, whose strict walk waits for a
listed request to arrive). At every decision time ``t`` the executor admits the head of the list
while the check of SPEC section 4 passes, and stops at the first request that does not fit.

* ``online-sorted-f`` (receding horizon): whenever new requests have arrived, Phase 1 of Sorted-F
  is recomputed over the arrived requests that have not started and the executor continues on
  the new list. With ``replan_every=H`` the plan is recomputed only at rounds that are multiples of
  ``H``; requests that arrive in between wait for the next such round (they join at
  ``ceil(a_i / H) H``; latency still counts from ``a_i``).
* ``online-mcsf``: the arrived requests by ``o_i`` (then index).
* ``online-fcfs``: by arrival (then index); identical to the offline FCFS list executor.

Arrivals in seconds (SPEC section 10). With ``time_model`` given and an instance with
``arrival_s`` (``alpha_i``, seconds), the executor keeps the clock ``tau`` of the rounds it runs
(:class:`~lpsched.timing.clock.ArrivalClock`: round ``t`` lasts ``f(P_t, D_t, K_t)`` for what it
actually runs in ``t``; an idle round lasts ``f(0, 0, 0)``) and request ``i`` becomes visible at
the first decision time ``a_i = min {p : tau(p) >= alpha_i}`` (its first round ``p + 1``: SPEC
section 10's ``alpha_i <= tau(t - 1)``), so the time model changes the admissions. The schedule
is that of the arrival rounds ``a_i`` so found: its instance is the input with ``arrival``
replaced by them (``arrival_s`` kept), so it is checked in rounds as every schedule is, and
:func:`~lpsched.timing.seconds.to_seconds` reads its latencies from ``alpha_i``. ``online-fcfs``
orders by ``alpha_i`` (then index). Everything else is as above (``replan_every``: visible at
``ceil(a_i / H) H``); without ``arrival_s`` or without a model the executor is the round one,
unchanged. With ``unit`` and integer ``alpha_i`` it gives the round schedules exactly (tested).
The clock costs one vectorised evaluation of the model per jump, over the rounds jumped (no
step per round), and nothing once every request has arrived.

Speed (ours). Decode lengths are known, so the future memory of the running set is exact and kept
incrementally in a :class:`~lpsched.executor.FutureMemory`. A re-plan whose list is never read
changes nothing, so the plan is recomputed only when the executor is about to admit: after new
arrivals the executor first asks whether *any* waiting request can start now, using that a
request ``(s, o)`` can start at ``t`` only if ``(s_min, 1)`` can (round ``t+1`` is the binding
round of the smaller one), with ``s_min`` the smallest waiting prefill; if not, it jumps to the
earliest round at which ``(s_min, 1)`` fits or to the next arrival, whichever is first. Sorted-F's
plan is computed lazily batch by batch (:class:`~lpsched.policies.planners.SortedFPlanner`).
Under overload this makes the number of re-plans at most the number of admissions, not the
number of arrivals. A re-plan is incremental: the planner keeps the waiting set sorted between
events (an arrival is merged in, an admitted request dropped), reuses the quantile sample drawn
for the same number of waiting requests, and computes each batch in a compiled kernel that
reads only the sample and the front of the sorted set; the schedules are those of re-planning
from scratch (tested against a copy of the from-scratch planner, both kernel back ends).

Source: SPEC section 5 (receding-horizon Sorted-F is the project's online reading of Sorted-F,
arXiv 2508.06133 section 4; online MC-SF of Jaillet et al., arXiv 2502.07115); the lazy and
incremental re-planning is ours.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Sequence

import numpy as np

from ..executor import FutureMemory
from ..instance import MAX_VALUE, Instance, is_int
from ..schedule import Schedule
from ..timing.clock import NOT_ARRIVED, ArrivalClock, clock_model
from ..timing.model import TimeModel
from .planners import KeyPlanner, SortedFPlanner

__all__ = [
    "execute_online",
    "online_sorted_f",
    "online_mcsf",
    "online_fcfs",
    "effective_arrivals",
    "check_replan_every",
    "clock_model",
]


def effective_arrivals(arrival: np.ndarray, replan_every: int | None) -> np.ndarray:
    """Rounds at which requests become visible to the planner.

    Parameters
    ----------
    arrival : ndarray of int, shape (n,)
        Arrival rounds ``a_i``.
    replan_every : int or None
        ``None``: ``a_i`` (re-plan on every arrival). ``H >= 1``: ``ceil(a_i / H) H`` (re-plan
        every ``H`` rounds; arrivals wait for the next re-plan).

    Returns
    -------
    ndarray of int64, shape (n,)

    Raises
    ------
    ValueError
        ``replan_every`` not None or an integer ``>= 1`` (:func:`check_replan_every`).
        Source: ours (SPEC section 5's ``H``).
    """
    a = np.asarray(arrival, dtype=np.int64)
    h = check_replan_every(replan_every)
    return a if h is None else -(-a // h) * h


def check_replan_every(replan_every: int | None) -> int | None:
    """The re-planning period ``H`` as given: None, or an integer number of rounds ``>= 1``.

    Raises
    ------
    ValueError
        Naming the option and its valid values, for anything else (``1.7``, ``"3"``, ``0``,
        ``True``): nothing is truncated or parsed. Source: ours.
    """
    if replan_every is None:
        return None
    if not is_int(replan_every) or not 1 <= replan_every <= MAX_VALUE:
        raise ValueError(
            "replan_every must be None (re-plan on every arrival) or an integer number of "
            f"rounds in [1, 2^40], got {replan_every!r}"
        )
    return int(replan_every)


def execute_online(
    instance: Instance,
    planner,
    *,
    replan_every: int | None = None,
    policy: str = "",
    time_model: TimeModel | str | None = None,
) -> Schedule:
    """Run a re-plannable list on arrivals with known decode lengths (strict order).

    Parameters
    ----------
    instance : Instance
        Requests ``(s_i, o_i, a_i)`` and budget ``M`` (tokens, rounds); optionally arrivals
        ``alpha_i`` in seconds (``arrival_s``).
    planner : KeyPlanner or SortedFPlanner
        Receives each request at its (effective) arrival; yields the list.
    replan_every : int or None
        See :func:`effective_arrivals`.
    policy : str
        Name recorded in the schedule.
    time_model : TimeModel or str, optional
        With an instance that has ``arrival_s``: admit by the arrivals in seconds on the clock
        of this model (module docstring). Without ``arrival_s`` it changes nothing.

    Returns
    -------
    Schedule
        Feasible; ``info`` holds ``runtime_s`` and ``decisions`` (loop iterations). On the
        clock: its instance has ``arrival`` = the admission rounds ``a_i`` (rounds) and
        ``info["time_model"]`` is the model.

    Raises
    ------
    KeyError, TimeModelError
        An unknown or malformed ``time_model``, or one that gives a round a duration that is
        not a positive finite number of seconds.

    Notes
    -----
    Source: SPEC section 5; see the module docstring for the lazy re-planning argument; the
    clock: SPEC section 10.
    """
    model = clock_model(instance, time_model)
    t0 = time.perf_counter()
    H = check_replan_every(replan_every)
    fm = FutureMemory(instance.memory)
    feed = _RoundFeed(instance, H) if model is None else _ClockFeed(instance, model, H, fm)
    start, decisions = _walk(instance, planner, fm, feed)
    info: dict = {"runtime_s": time.perf_counter() - t0, "decisions": decisions, "replan_every": H}
    if isinstance(feed, _ClockFeed):  # the schedule of the admission rounds found on the clock
        instance = instance.replace(arrival=np.asarray(feed.rounds, dtype=np.int64))
        info["time_model"] = model
    return Schedule(instance, np.asarray(start, dtype=np.int64), policy=policy, info=info)


#: The visibility round of a request that will never be visible (none left).
_NEVER = float("inf")


def _walk(
    instance: Instance, planner, fm: FutureMemory, feed: _RoundFeed | _ClockFeed
) -> tuple[list[int], int]:
    """The online walk (module docstring): the starts ``p_i`` (rounds, by request) and the
    number of decisions (loop iterations), the requests becoming visible as ``feed`` says."""
    n = instance.n
    s = instance.prefill.tolist()
    o = instance.decode.tolist()
    started = [False] * n
    start = [0] * n
    small: list[tuple[int, int]] = []  # (s_i, i) of visible waiting requests, lazy deletion
    admitted = 0
    decisions = 0
    clocked = isinstance(feed, _ClockFeed)  # else the next visibility round is `due`
    t = feed.first()
    due = feed.due
    while admitted < n:
        decisions += 1
        if due <= t:
            for i in feed.arrive(t):
                planner.add(i)
                heapq.heappush(small, (s[i], i))
            due = feed.due
        while small and started[small[0][1]]:
            heapq.heappop(small)
        if not small:
            t = int(feed.next_visible(None))
            continue
        fm.prune(t)
        tf = fm.earliest_start(small[0][0], 1, t)
        if tf > t:
            na = feed.next_visible(tf) if clocked else due
            t = tf if tf < na else int(na)
            continue
        h = planner.head()
        ts = fm.next_start(s[h], o[h], t)
        if ts == t:
            planner.pop()
            started[h] = True
            start[h] = t
            fm.add(s[h], t, o[h])
            if clocked:
                feed.started(t, s[h])
            admitted += 1
        else:
            na = feed.next_visible(ts) if clocked else due
            t = ts if ts < na else int(na)
    return start, decisions


class _RoundFeed:
    """Requests become visible at their effective arrival rounds (:func:`effective_arrivals`)."""

    __slots__ = ("eff", "order", "ap", "due")

    def __init__(self, instance: Instance, H: int | None) -> None:
        eff = effective_arrivals(instance.arrival, H)
        self.order: list[int] = np.lexsort((np.arange(instance.n), eff)).tolist()
        self.eff: list[int] = eff.tolist()
        self.ap = 0  # requests of `order` made visible
        self.due: float = self.eff[self.order[0]]  # next visibility round

    def first(self) -> int:
        """The first decision time: the first visibility round."""
        return self.eff[self.order[0]]

    def arrive(self, t: int) -> Sequence[int]:
        """The requests that become visible at decision time ``t``, in the order to add them."""
        eff, order, ap = self.eff, self.order, self.ap
        n = len(order)
        batch = []
        while ap < n and eff[order[ap]] <= t:
            batch.append(order[ap])
            ap += 1
        self.ap = ap
        self.due = eff[order[ap]] if ap < n else _NEVER
        return batch

    def next_visible(self, limit: int | None) -> float:
        """The next visibility round (``limit`` is for the clock), ``_NEVER`` if none."""
        return self.due

    def started(self, t: int, tokens: int) -> None:
        """A run of ``tokens`` prefill tokens started at ``t`` (nothing to do in rounds)."""


class _ClockFeed:
    """Requests become visible on the clock of ``model`` (module docstring): request ``i`` at
    the first decision time ``a_i`` with ``tau(a_i) >= alpha_i`` (``ceil(a_i / H) H`` with
    ``replan_every=H``), found by advancing the clock as the walk jumps; ``fm`` is the walk's
    future memory, which gives the clock the loads of the coming rounds."""

    __slots__ = ("clock", "order", "rounds", "alpha", "fm", "H", "ap", "adds", "cache", "due")

    def __init__(self, instance: Instance, model: TimeModel, H: int | None, fm: FutureMemory):
        assert instance.arrival_s is not None  # clock_model said so
        self.clock = ArrivalClock(model, instance.arrival_s)
        self.order, self.rounds = self.clock.order, self.clock.rounds
        self.alpha: list[float] = instance.arrival_s.tolist()
        self.fm = fm
        self.H = H
        self.ap = 0  # requests of `order` made visible
        self.adds = 0  # runs started, the key of `cache`
        self.cache: list = [-1, None, None, None]  # the future memory as arrays, at `adds` runs
        self.due = -1  # the clock is asked at every decision

    def loads(self, r0: int, r1: int) -> tuple[np.ndarray, np.ndarray]:
        """``D(r) = N``, ``K(r) = A + r N`` at the first completion ``>= r``
        (:class:`~lpsched.executor.FutureMemory`) for rounds ``r0 .. r1 - 1``. A prune only
        forgets completions before the rounds asked, so arrays copied since the last add still
        answer exactly."""
        fm, cache = self.fm, self.cache
        if cache[0] != self.adds:
            cache[:] = [
                self.adds,
                np.asarray(fm.cs[fm.head :], dtype=np.int64),
                np.asarray(fm.A[fm.head :], dtype=np.int64),
                np.asarray(fm.N[fm.head :], dtype=np.int64),
            ]
        _, cs, A, N = cache
        r = np.arange(r0, r1, dtype=np.int64)
        j = np.searchsorted(cs, r, side="left")
        return N[j], A[j] + r * N[j]

    def last_busy(self) -> int:
        """The last round in which a running request runs (0: none)."""
        fm = self.fm
        return fm.cs[-1] if len(fm.cs) > fm.head else 0

    def visible(self, i: int) -> int:
        """The visibility round of request ``i``, whose arrival round the clock has found."""
        a = self.rounds[i]
        return a if self.H is None else -(-a // self.H) * self.H

    def first(self) -> int:
        """The first decision time: the first visibility round."""
        return int(self.next_visible(None))

    def arrive(self, t: int) -> Sequence[int]:
        """Advance the clock to ``t``; the requests that become visible then, in the order the
        round executor adds them."""
        clock, order = self.clock, self.order
        if clock.assigned < len(order):
            clock.advance(t, self.loads, self.last_busy())
        ap = self.ap
        if ap >= clock.assigned or self.visible(order[ap]) > t:
            return ()  # the common case: nothing new
        batch = []
        while ap < clock.assigned and self.visible(order[ap]) <= t:
            batch.append(order[ap])
            ap += 1
        self.ap = ap
        batch.sort(key=lambda i: (self.visible(i), i))
        return batch

    def next_visible(self, limit: int | None) -> float:
        """The visibility round of the next request not yet visible, advancing the clock at
        most to ``limit``; ``_NEVER`` if that is later than ``limit`` or none is left."""
        if self.ap >= len(self.order):
            return _NEVER
        i = self.order[self.ap]
        if self.rounds[i] == NOT_ARRIVED:
            self.clock.advance(limit, self.loads, self.last_busy(), self.alpha[i])
            if self.rounds[i] == NOT_ARRIVED:
                return _NEVER
        return self.visible(i)

    def started(self, t: int, tokens: int) -> None:
        """A run of ``tokens`` prefill tokens started at ``t``: the clock charges them to round
        ``t + 1``."""
        self.adds += 1
        if self.clock.assigned < len(self.order):
            self.clock.prefill(t + 1, tokens)


def online_sorted_f(
    instance: Instance,
    solver: str = "auto",
    *,
    replan_every: int | None = None,
    sample_size: int = 256,
    quantile: float = 0.9,
    seed: int = 0,
    time_model: TimeModel | str | None = None,
) -> Schedule:
    """Receding-horizon Sorted-F: Phase 1 re-planned over the arrived waiting requests.

    Parameters
    ----------
    instance : Instance
        Requests with arrivals ``a_i`` (rounds).
    solver : {"auto", "dp", "swap", "quantile"}
        Phase-1 solver; ``auto`` resolves by the instance's ``n``
        (:func:`~lpsched.policies.sorted_f.resolve_phase1`).
    replan_every : int or None
        ``None``: re-plan on every arrival; ``H``: every ``H`` rounds (module docstring).
    sample_size, quantile, seed
        Quantile-greedy parameters; each re-plan draws from a generator in the state of
        ``numpy.random.default_rng(seed)``.
    time_model : TimeModel or str, optional
        Admit by the arrivals in seconds (``arrival_s``) on this model's clock (module
        docstring, SPEC section 10); no effect on an instance without ``arrival_s``.

    Returns
    -------
    Schedule
        Feasible; ``info["replans"]`` counts the Phase-1 restarts actually computed.

    Raises
    ------
    ValueError
        Unknown solver; ``replan_every`` not None or an integer ``>= 1``.
    KeyError, TimeModelError
        An unknown or malformed ``time_model``.

    Notes
    -----
    With every ``a_i = 0`` and ``solver`` in ``dp``/``swap`` (or ``quantile`` with the same
    seed) this is offline Sorted-F exactly (tested). Source: SPEC section 5.
    """
    planner = SortedFPlanner.for_instance(
        instance,
        instance.decode.tolist(),
        solver,
        sample_size=sample_size,
        quantile=quantile,
        seed=seed,
    )
    sched = execute_online(
        instance,
        planner,
        replan_every=replan_every,
        policy="online-sorted-f",
        time_model=time_model,
    )
    sched.info["replans"] = planner.replans
    return sched


def online_mcsf(
    instance: Instance,
    *,
    replan_every: int | None = None,
    time_model: TimeModel | str | None = None,
) -> Schedule:
    """Online MC-SF: the arrived waiting requests by decode length ``o_i``, then index.

    Parameters
    ----------
    instance : Instance
    replan_every : int or None
        See :func:`effective_arrivals` (default: a request is visible at its arrival).
    time_model : TimeModel or str, optional
        Admit by ``arrival_s`` on this model's clock (module docstring, SPEC section 10).

    Returns
    -------
    Schedule
        Feasible. Source: MC-SF of Jaillet et al., arXiv 2502.07115, section 4 (online form).
    """
    return _online_by_key(
        instance, instance.decode.tolist(), "online-mcsf", replan_every, time_model
    )


def online_fcfs(
    instance: Instance,
    *,
    replan_every: int | None = None,
    time_model: TimeModel | str | None = None,
) -> Schedule:
    """Online FCFS: the arrived waiting requests by arrival round, then index.

    Parameters
    ----------
    instance, replan_every, time_model
        As for :func:`online_mcsf`; on the clock of ``time_model`` the list is by ``alpha_i``
        (seconds), then index.

    Returns
    -------
    Schedule
        Feasible; equal to the offline ``fcfs`` list executor when ``replan_every`` is None
        (in rounds). Source: SPEC section 4-5 (FCFS of arXiv 2508.06133, section 3).
    """
    clocked = clock_model(instance, time_model) is not None
    key = instance.arrival_s if clocked and instance.arrival_s is not None else instance.arrival
    return _online_by_key(instance, key.tolist(), "online-fcfs", replan_every, time_model)


def _online_by_key(
    instance: Instance,
    key: list,
    policy: str,
    replan_every: int | None,
    time_model: TimeModel | str | None,
) -> Schedule:
    """:func:`execute_online` of the list by ``(key[i], i)`` (a :class:`KeyPlanner`)."""
    planner = KeyPlanner(key)
    return execute_online(
        instance, planner, replan_every=replan_every, policy=policy, time_model=time_model
    )
