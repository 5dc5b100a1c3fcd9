"""Production-style baselines ``vllm`` and ``vllm-sf``: admission by current memory, recompute
preemption (SPEC section 4, "Production-style baseline").

Modelled on vLLM's scheduler: no look-ahead at admission, preemption when the cache runs out.
A queue ``Q`` holds every request, by arrival then index (``vllm``) or by decode length ``o_i``
then index (``vllm-sf``). At every decision time ``t = 0, 1, 2, ...`` (after round ``t``, before
round ``t+1``):

1. running requests with ``C_j = p_j + o_j <= t`` leave;
2. with ``u = sum over running j of (s_j + t + 1 - p_j)`` (their memory in round ``t+1``), the head
   ``h`` of ``Q`` is admitted (``p_h = t``) while ``a_h <= t`` and ``u + s_h + 1 <= M``, adding
   ``s_h + 1`` to ``u``; the walk stops at the first head that has not arrived or does not fit;
3. while the running set would exceed ``M`` in round ``t+2`` (the memory ``m(t+2)`` of SPEC
   section 2, in which a request with ``C_j = t+1`` holds nothing), a running request chosen by
   the victim rule (below; by default the most recently admitted: latest ``p_j``, then highest
   index) is preempted and put back at the head of ``Q``; it loses its progress and KV cache and
   starts from scratch when next admitted.

Victim rules (option ``victim``; SPEC section 4):

* ``"newest"`` (the default, vLLM's): latest ``p_j``, then highest index;
* ``"srf"`` (Kim et al., arXiv 2411.07447): fewest tokens held, ``s_j + t - p_j``, first; ties
  by ``"newest"``;
* ``"trail"`` (limited preemption, TRAIL, Shahout et al., arXiv 2410.01035; our reading): only
  a request *early* in its life may be preempted, one that has emitted ``t - p_j <= c o_j``
  tokens (``c`` = option ``early_fraction``, default 1/2; the true ``o_j`` stands for TRAIL's
  predicted length, as ``vllm`` is clairvoyant), newest first; when no running request is early
  the rule falls back to ``"newest"`` among the others (a preemption is needed for memory
  safety, so it cannot be refused).

Step 2 keeps round ``t+1`` within ``M`` given that step 3 of time ``t-1`` kept round ``t+1``
within ``M`` for the requests already running; step 3 then keeps round ``t+2`` within ``M``. A
request alone fits (``s_i + o_i <= M``), so the queue always drains.

Runs (ours, where the SPEC text leaves a detail open). Every run cut by a preemption is recorded
in :attr:`~lpsched.schedule.Schedule.runs` as ``(request, p, t, 0)`` with its ``t - p >= 1``
rounds of lost work, and the final run as ``(request, p_i, C_i, 1)``, so the independent check
of :meth:`~lpsched.schedule.Schedule.violations` covers every round any run held memory. A
request admitted at ``t`` and preempted at the same ``t`` never held memory; it is counted in
``info["preemptions"]`` but is not a run (the check requires a cut run to last at least one
round). Step 3 follows the SPEC word by word: it preempts by recency alone, even a request that
finishes in round ``t+1`` and so frees nothing in round ``t+2``.

Speed (ours). Only decision times at which something can happen are visited: a completion, the
earliest time the blocked head could be admitted (``max(t+1, a_h)``, if it fits then; with ``K``
running requests and ``S = sum (s_j - p_j)`` the memory ``S + (t+1) K`` only grows until the next
completion, so a head that does not fit then waits for a completion), and the first time at
which ``S + (t+2) K``, an upper bound on ``m(t+2)``, exceeds ``M`` (closed form). Skipped times are
exactly those at which steps 1-3 do nothing, so the result equals the round-by-round reading
(tested against it, for every victim rule). The victim rule only chooses *whom* step 3
preempts, never *whether* it preempts (that is the overflow test on ``S``, ``K`` and the
requests leaving at ``t+1``), and it is applied only at the times visited, with the ages
``t - p_j`` of that time, so the argument holds for each rule. A visit costs O(log K) per
admission or completion, and O(K log K) when it preempts (the victims are ranked).

Arrivals in seconds (SPEC section 10). With ``time_model`` and an instance with ``arrival_s``
(``alpha_i``, seconds), "``a_h <= t``" reads "``alpha_h <= tau(t)``" on the clock of the rounds
run so far (:class:`~lpsched.timing.clock.ArrivalClock`; round ``t + 1`` pays the prefill of the
runs started at ``t``, a preempted request's restart included, so a recompute costs its prompt
again in seconds and delays every later arrival's admission); ``vllm``'s queue is by ``alpha_i``
then index. The schedule's instance has ``arrival`` = each request's admission round ``a_i =
min {p : tau(p) >= alpha_i}``. The next visit to an arrival is found by advancing the clock
over the rounds up to the next other event, vectorised (no step per round); once every
request has arrived the clock is no longer kept.

Source: SPEC section 4 (ours, modelled on vLLM's scheduler: Kwon et al., *Efficient Memory
Management for Large Language Model Serving with PagedAttention*, SOSP 2023, recompute
preemption of the latest-arrived request); the event skipping is ours.
"""

from __future__ import annotations

import heapq
import time
from collections import deque
from collections.abc import Callable

import numpy as np

from ..instance import Instance
from ..schedule import Schedule, runs_schedule
from ..timing.clock import NOT_ARRIVED, ArrivalClock, Loads, clock_model
from ..timing.model import TimeModel
from .baselines import fcfs_order, mcsf_order

__all__ = ["VICTIMS", "check_victim_options", "execute_preemptive", "vllm", "vllm_sf"]

#: The victim rules of step 3 (module docstring), the default first.
VICTIMS = ("newest", "srf", "trail")


def check_victim_options(victim: str = "newest", early_fraction: float = 0.5, **_: object) -> None:
    """Refuse a victim rule or an ``early_fraction`` that :func:`execute_preemptive` cannot run.

    Parameters
    ----------
    victim : str
        One of :data:`VICTIMS`.
    early_fraction : float
        ``c`` of the ``"trail"`` rule, a real number in ``[0, 1]``.
    **_
        Other options of the policy (``time_model``), not checked here.

    Raises
    ------
    ValueError
        An unknown rule or a fraction outside ``[0, 1]`` (or not a real number).

    Notes
    -----
    Source: ours (the registry's ``check`` of ``vllm`` and ``vllm-sf``).
    """
    if victim not in VICTIMS:
        raise ValueError(f"victim must be one of {', '.join(VICTIMS)}, got {victim!r}")
    if (
        isinstance(early_fraction, bool)
        or not isinstance(early_fraction, (int, float))
        or not 0 <= early_fraction <= 1
    ):
        raise ValueError(f"early_fraction must be a number in [0, 1], got {early_fraction!r}")


def _check_order(order: np.ndarray, n: int) -> np.ndarray:
    """``order`` as int64 after checking it is a permutation of ``range(n)``."""
    arr = np.asarray(order)
    if arr.shape != (n,) or arr.dtype.kind not in "iu":
        raise ValueError(f"queue order must be {n} request indices, got shape {arr.shape}")
    arr = arr.astype(np.int64)
    if not np.array_equal(np.sort(arr), np.arange(n)):
        raise ValueError("queue order must name every request index 0 .. n-1 exactly once")
    return arr


def execute_preemptive(
    instance: Instance,
    order: np.ndarray,
    *,
    policy: str = "",
    time_model: TimeModel | str | None = None,
    victim: str = "newest",
    early_fraction: float = 0.5,
) -> Schedule:
    """Run a queue as vLLM's scheduler does: admit by current memory, preempt a running request
    (recompute; by default the latest admitted) when the running set would exceed ``M`` (module
    docstring).

    Parameters
    ----------
    instance : Instance
        Requests ``(s_i, o_i, a_i)`` (tokens, tokens, rounds) and the budget ``M`` (tokens);
        optionally arrivals ``alpha_i`` in seconds (``arrival_s``).
    order : ndarray of int, shape (n,)
        The initial queue ``Q``, a permutation of ``range(n)``, head first.
    policy : str
        Name recorded in the schedule.
    time_model : TimeModel or str, optional
        With ``arrival_s``: admit by the arrivals in seconds on this model's clock (module
        docstring, SPEC section 10); without ``arrival_s`` no effect.
    victim : {"newest", "srf", "trail"}, default "newest"
        Whom step 3 preempts (module docstring, :data:`VICTIMS`).
    early_fraction : float, default 0.5
        ``c`` of ``victim="trail"``: a request that has emitted at most ``c o_j`` tokens may be
        preempted; ignored by the other rules.

    Returns
    -------
    Schedule
        ``start`` = start of each request's final run; ``runs`` holds every run with at least
        one round, ``(request, start, end, completed)``. ``info``: ``order`` (the initial queue,
        shape (n,)), ``preemptions`` (every preemption, those of a request admitted at the same
        decision time included), ``wasted_tokens`` (output tokens emitted by cut runs and lost),
        ``visits`` (decision times visited), ``runtime_s``; on the clock ``time_model``, and
        the instance has ``arrival`` = the admission rounds. Feasible, runs included.

    Raises
    ------
    ValueError
        ``order`` is not a permutation of ``range(n)``; an unknown ``victim`` or an
        ``early_fraction`` outside ``[0, 1]`` (:func:`check_victim_options`).
    KeyError, TimeModelError
        An unknown or malformed ``time_model``, or one that gives a round a duration that is
        not a positive finite number of seconds.

    Notes
    -----
    Source: SPEC section 4, "Production-style baseline" (see the module docstring for the
    rules, the recorded runs and the event skipping).
    """
    t0 = time.perf_counter()
    n = instance.n
    M = int(instance.memory)
    queue_order = _check_order(order, n)
    check_victim_options(victim, early_fraction)
    rank = _victim_rank(victim, early_fraction, instance.prefill.tolist(), instance.decode.tolist())
    s = instance.prefill.tolist()
    o = instance.decode.tolist()
    model, clock, a, alpha = _arrival_clock(instance, time_model)
    queue = deque(queue_order.tolist())
    run_start = [-1] * n  # start of the current run, -1 while waiting
    ends: list[tuple[int, int, int]] = []  # heap of (C_j, j, p_j); stale once j is preempted
    stack: list[tuple[int, int]] = []  # (p_j, j) ascending: its top is the latest admitted
    leaving: dict[int, list[int]] = {}  # C -> [sum (s_j - p_j), count] of running with C_j = C
    S = K = 0  # sum (s_j - p_j) and count over the running set
    start = [0] * n
    runs: list[tuple[int, int, int, int]] = []
    done = preemptions = wasted = visits = 0
    t = 0
    while True:
        visits += 1
        if clock is not None and clock.assigned < n:  # ends[0]: the running set's first completion
            clock.advance(t, _fixed_loads(S, K), ends[0][0] if K else 0)
        # 1. completions
        while ends and ends[0][0] <= t:
            c, j, p = heapq.heappop(ends)
            if run_start[j] != p:
                continue  # a run that was preempted
            run_start[j] = -1
            S -= s[j] - p
            K -= 1
            start[j] = p
            runs.append((j, p, c, 1))
            done += 1
            leaving.pop(c, None)  # every request with C_j = c leaves now
        if done == n:
            break
        # 2. admission by the memory of round t+1
        u = S + (t + 1) * K
        admitted = []
        while queue:
            h = queue[0]
            if a[h] > t or u + s[h] + 1 > M:
                break
            queue.popleft()
            u += s[h] + 1
            run_start[h] = t
            S += s[h] - t
            K += 1
            c = t + o[h]
            heapq.heappush(ends, (c, h, t))
            acc = leaving.setdefault(c, [0, 0])
            acc[0] += s[h] - t
            acc[1] += 1
            admitted.append(h)
        admitted.sort()  # all start at t, the latest p: push by index, highest on top
        stack.extend((t, h) for h in admitted)
        # 3. preemption while round t+2 would overflow
        gone = leaving.get(t + 1, (0, 0))  # running requests that hold nothing in round t+2
        if (S - gone[0]) + (t + 2) * (K - gone[1]) > M:
            S, K, cut, lost = _preempt(
                t, M, S, K, stack, run_start, leaving, queue, s, o, runs, rank
            )
            preemptions += cut
            wasted += lost
        # next decision time at which steps 1-3 may act
        while stack and run_start[stack[-1][1]] != stack[-1][0]:
            stack.pop()  # keep the stack from growing with completed runs
        while ends and run_start[ends[0][1]] != ends[0][2]:
            heapq.heappop(ends)  # a preempted run's completion is no event
        nxt = ends[0][0] if ends else None
        if K:
            tp = max(t + 1, (M - S) // K - 1)  # first t' with S + (t'+2) K > M
            if nxt is None or tp < nxt:
                nxt = tp
        if clock is not None and clock.assigned < n:
            clock.prefill(t + 1, sum(s[h] for h in admitted if run_start[h] == t))
            if queue and a[queue[0]] == NOT_ARRIVED:  # run the clock to the head's arrival
                clock.advance(nxt, _fixed_loads(S, K), ends[0][0] if K else 0, alpha[queue[0]])
        if queue:
            h = queue[0]
            ta = max(t + 1, a[h])
            if S + (ta + 1) * K + s[h] + 1 <= M and (nxt is None or ta < nxt):
                nxt = ta
        if nxt is None:  # pragma: no cover - a request fits an empty cache (s_i + o_i <= M)
            raise RuntimeError("preemptive executor stalled")
        t = nxt
    info: dict = {
        "order": queue_order,
        "preemptions": preemptions,
        "wasted_tokens": wasted,
        "visits": visits,
        "runtime_s": time.perf_counter() - t0,
    }
    if model is not None:  # on the clock: the schedule of the admission rounds
        instance = instance.replace(arrival=np.asarray(a, dtype=np.int64))
        info["time_model"] = model
    return runs_schedule(instance, start, runs, policy=policy, info=info)


def _arrival_clock(
    instance: Instance, time_model: TimeModel | str | None
) -> tuple[TimeModel | None, ArrivalClock | None, list[int], list[float]]:
    """``(model, clock, a, alpha)``: without a clock the arrival rounds; on one, the rounds the
    clock fills in as it reaches each arrival and the arrivals ``alpha_i`` in seconds."""
    model = clock_model(instance, time_model)
    if model is None:
        return None, None, instance.arrival.tolist(), []
    assert instance.arrival_s is not None  # clock_model said so
    clock = ArrivalClock(model, instance.arrival_s)
    return model, clock, clock.rounds, instance.arrival_s.tolist()


def _fixed_loads(S: int, K: int) -> Loads:
    """The clock's ``loads`` while the running set (``K`` requests, ``S = sum (s_j - p_j)``)
    stays fixed, as it does until the next visit (which comes at a completion at the latest)."""

    def loads(r0: int, r1: int) -> tuple[np.ndarray, np.ndarray]:
        r = np.arange(r0, r1, dtype=np.int64)
        return np.full(r.size, K, dtype=np.int64), S + r * K

    return loads


#: A victim rule as a ranking: ``rank(t, live)`` orders the running requests ``live`` (their
#: ``(p_j, j)``, ascending) at decision time ``t``, the first to preempt first.
VictimRank = Callable[[int, list[tuple[int, int]]], list[tuple[int, int]]]


def _victim_rank(victim: str, c: float, s: list[int], o: list[int]) -> VictimRank:
    """The ranking of the rule ``victim`` (module docstring); ``c`` is ``early_fraction``."""
    if victim == "srf":  # fewest tokens held s_j + t - p_j, then newest
        return lambda t, live: sorted(live, key=lambda e: (s[e[1]] - e[0], -e[0], -e[1]))
    if victim == "trail":  # the early ones newest first, then the others newest first

        def trail(t: int, live: list[tuple[int, int]]) -> list[tuple[int, int]]:
            newest = live[::-1]
            early = [e for e in newest if t - e[0] <= c * o[e[1]]]
            return early + [e for e in newest if t - e[0] > c * o[e[1]]]

        return trail
    return lambda t, live: live[::-1]


def _preempt(
    t: int,
    M: int,
    S: int,
    K: int,
    stack: list[tuple[int, int]],
    run_start: list[int],
    leaving: dict[int, list[int]],
    queue: deque[int],
    s: list[int],
    o: list[int],
    runs: list[tuple[int, int, int, int]],
    rank: VictimRank,
) -> tuple[int, int, int, int]:
    """Step 3 at decision time ``t``: preempt the running requests in the order of ``rank`` while
    round ``t+2`` would overflow; returns the new ``(S, K)``, the preemptions and the wasted
    tokens. ``stack`` is left holding the running requests, ``(p_j, j)`` ascending."""
    gone = leaving.get(t + 1, (0, 0))  # running requests that hold nothing in round t+2
    cut = lost = 0
    live = [e for e in stack if run_start[e[1]] == e[0]]
    for p, j in rank(t, live):
        if (S - gone[0]) + (t + 2) * (K - gone[1]) <= M:
            break
        run_start[j] = -1
        S -= s[j] - p
        K -= 1
        acc = leaving[p + o[j]]
        acc[0] -= s[j] - p
        acc[1] -= 1
        if not acc[1]:
            del leaving[p + o[j]]
            gone = leaving.get(t + 1, (0, 0))
        queue.appendleft(j)
        cut += 1
        if t > p:
            runs.append((j, p, t, 0))
            lost += t - p
    stack[:] = [e for e in live if run_start[e[1]] == e[0]]
    return S, K, cut, lost


def vllm(
    instance: Instance,
    *,
    time_model: TimeModel | str | None = None,
    victim: str = "newest",
    early_fraction: float = 0.5,
) -> Schedule:
    """``vllm``: the production-style baseline with the queue by arrival, then index.

    Parameters
    ----------
    instance, time_model, victim, early_fraction
        As for :func:`execute_preemptive`; on the clock of ``time_model`` the queue is by
        ``alpha_i`` (seconds), then index.

    Returns
    -------
    Schedule
        As :func:`execute_preemptive`, with every run (cut ones included) in ``runs``.

    Notes
    -----
    vLLM's default ``fcfs`` policy without look-ahead: admits while the prompt and its first
    token fit the current memory and recomputes the latest-admitted request when the cache runs
    out. Source: SPEC section 4 (ours, modelled on vLLM's scheduler).
    """
    if clock_model(instance, time_model) is not None and instance.arrival_s is not None:
        order = np.argsort(instance.arrival_s, kind="stable")
    else:
        order = fcfs_order(instance)
    return execute_preemptive(
        instance,
        order,
        policy="vllm",
        time_model=time_model,
        victim=victim,
        early_fraction=early_fraction,
    )


def vllm_sf(
    instance: Instance,
    *,
    time_model: TimeModel | str | None = None,
    victim: str = "newest",
    early_fraction: float = 0.5,
) -> Schedule:
    """``vllm-sf``: the admission and preemption of :func:`vllm` with the queue by decode length
    ``o_i``, then index.

    Parameters
    ----------
    instance, time_model, victim, early_fraction
        As for :func:`execute_preemptive`.

    Returns
    -------
    Schedule
        As :func:`execute_preemptive`.

    Notes
    -----
    Shortest decode first without MC-SF's look-ahead: offline (all ``a_i = 0``) what vLLM's
    ``priority`` policy does with each request's priority set to its rank by ``o_i``. With
    arrivals the SPEC's walk stops at a head that has not arrived, as the strict executor's
    does, while an engine orders only the requests it has; compare with ``online-mcsf``
    there. Source: SPEC section 4 (ours).
    """
    return execute_preemptive(
        instance,
        mcsf_order(instance),
        policy="vllm-sf",
        time_model=time_model,
        victim=victim,
        early_fraction=early_fraction,
    )
