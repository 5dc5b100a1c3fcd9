"""Continuous batching with estimated decode lengths and eviction (SPEC section 6).

Each request ``i`` has an interval ``l_i <= o_i <= u_i``; the true ``o_i`` is revealed only when
the request finishes. The executor keeps an estimate ``e_i`` per request and, at every decision
time ``t`` (after round ``t``, before round ``t+1``):

1. requests with ``p_j + o_j <= t`` complete and leave;
2. each running request that has emitted ``g_j = t - p_j`` tokens (and so has ``o_j >= g_j + 1``)
   raises its estimate to ``e_j = max(e_j, g_j + 1)``;
3. if the *true* memory of round ``t+1``, ``sum_j (s_j + g_j + 1)``, exceeds ``M``, running
   requests are evicted, least progress ``g_j`` first (ties: larger index first), until it fits;
   an evicted request loses its KV cache and progress, keeps ``e_j = max(e_j, g_j)`` and rejoins
   the waiting set;
4. the planner's list is walked in order and its head ``h`` is admitted (``p_h = t``) while the
   executor's check of SPEC section 4 passes with every running request ``j`` assumed to run
   until ``p_j + e_j`` and ``h`` until ``t + e_h``; the walk stops at the first request that is not
   admitted (or, unless ``online``, has not arrived).

Step 4 checks round ``t+1`` with every running request (``p_j + e_j >= t+1`` after step 2), so
no round ever holds more than ``M`` tokens. With exact intervals (``e_i = o_i``) steps 2 and 3
never act and the executor is the list executor of SPEC section 4 run on the planner's list.

Speed (ours). Rounds in which nothing can happen are skipped: the next decision time visited is
the earliest of the next true completion, the next arrival (online), the round at which the
running set's true memory would exceed ``M`` (``S + (t+1) K > M`` for ``K`` running requests with
``S = sum (s_j - p_j)``: solved in closed form), and the blocked head's exact jump from
:meth:`~lpsched.executor.FutureMemory.next_start`. Between visits estimates only grow, which only
raises the estimated memory, so a jump stays a valid lower bound; completions (which may free
estimated memory) are visited. Each visit costs O(K log K) to rebuild the estimated future
memory of the K running requests.

Source: SPEC section 6, our reading of A_min / A_max of Chen, Ye, Zhou, arXiv 2508.14544
(section 3); the event skipping is ours.
"""

from __future__ import annotations

import time

from .executor import FutureMemory
from .instance import Instance, quote
from .schedule import Schedule, runs_schedule

__all__ = ["execute_with_eviction"]


def execute_with_eviction(
    instance: Instance,
    planner,
    estimate: list[int],
    *,
    online: bool = False,
    policy: str = "",
) -> Schedule:
    """Run a re-plannable priority list on estimated decode lengths, evicting the least
    progress first when the true memory of the next round would exceed ``M``.

    Parameters
    ----------
    instance : Instance
        Requests ``(s_i, o_i, a_i)`` (the true ``o_i`` is used only to decide when a request
        finishes) and the budget ``M`` (tokens).
    planner : KeyPlanner or SortedFPlanner
        Holds the waiting set and yields the priority list (see
        :mod:`lpsched.policies.planners`); it should read its keys from ``estimate``.
    estimate : list of int, length n
        Initial estimates ``e_i`` in tokens (``l_i`` for A_min, ``u_i`` for A_max), each with
        ``1 <= e_i`` and ``s_i + e_i <= M``. Updated in place (steps 2-3 of the module
        docstring), so a planner holding the same list sees the new values.
    online : bool, default False
        False: every request is in the planner from the start and the strict walk stops at a
        head that has not arrived (SPEC section 4). True: a request joins the planner at its
        arrival round (SPEC section 5).
    policy : str
        Name recorded in the schedule.

    Returns
    -------
    Schedule
        ``start`` = start of each request's final run; ``runs`` records every run
        ``(request, start, end, completed)``; ``info`` holds ``evictions``,
        ``wasted_tokens`` (output tokens emitted by evicted runs), ``visits`` (decision times
        visited) and ``runtime_s``. Feasible, runs included (checked by
        :meth:`~lpsched.schedule.Schedule.violations`).

    Raises
    ------
    ValueError
        ``estimate`` has the wrong length or an ``e_i < 1`` or ``s_i + e_i > M``.

    Notes
    -----
    Source: SPEC section 6 (see the module docstring for the rules and the event skipping).
    """
    t0 = time.perf_counter()
    n = instance.n
    M = instance.memory
    s = instance.prefill.tolist()
    o = instance.decode.tolist()
    a = instance.arrival.tolist()
    e = estimate
    _check_estimates(instance, e, s)
    if online:
        arrivals = sorted(range(n), key=lambda i: (a[i], i))
        t = a[arrivals[0]]
    else:
        arrivals = []
        for i in range(n):
            planner.add(i)
        t = 0
    ap = 0
    running: dict[int, int] = {}  # request -> start of its current run
    start = [0] * n
    runs: list[tuple[int, int, int, int]] = []
    done = 0
    evictions = wasted = visits = 0
    while done < n:
        visits += 1
        # 1. completions
        if running:
            fin = [j for j, p in running.items() if p + o[j] <= t]
            for j in fin:
                p = running.pop(j)
                runs.append((j, p, p + o[j], 1))
                start[j] = p
                done += 1
        if online:
            while ap < n and a[arrivals[ap]] <= t:
                planner.add(arrivals[ap])
                ap += 1
        # 2. raise estimates;  3. evict least progress first while round t+1 overflows
        K = len(running)
        S = 0
        for j, p in running.items():
            if e[j] < t - p + 1:
                e[j] = t - p + 1
            S += s[j] - p
        if K and S + (t + 1) * K > M:
            S, K, cut, lost = _evict(t, M, S, K, running, e, s, planner, runs)
            evictions += cut
            wasted += lost
        # 4. admission with the estimates
        nxt_t, admitted = _admit(planner, running, s, e, a, t, M)
        S += admitted
        K = len(running)
        if done == n:
            break
        # 5. next decision time
        if running:
            c = min(p + o[j] for j, p in running.items())
            if c < nxt_t:
                nxt_t = c
            ev = max(t + 1, (M - S) // K)
            if ev < nxt_t:
                nxt_t = ev
        if ap < n and online and a[arrivals[ap]] < nxt_t:
            nxt_t = a[arrivals[ap]]
        if nxt_t == _NEVER:  # pragma: no cover - a request fits an empty cache (s + e <= M)
            raise RuntimeError("eviction executor stalled")
        t = int(nxt_t)
    info = {
        "runtime_s": time.perf_counter() - t0,
        "evictions": evictions,
        "wasted_tokens": wasted,
        "visits": visits,
    }
    return runs_schedule(instance, start, runs, policy=policy, info=info)


#: The next decision time of an executor with nothing left to wait for.
_NEVER = float("inf")


def _check_estimates(instance: Instance, e: list[int], s: list[int]) -> None:
    """``ValueError`` unless ``e`` holds ``n`` estimates ``e_i >= 1`` with ``s_i + e_i <= M``."""
    n, M = instance.n, instance.memory
    if len(e) != n:
        raise ValueError(f"estimate has {len(e)} values for {n} requests")
    for i in range(n):
        if e[i] < 1 or s[i] + e[i] > M:
            raise ValueError(
                f"request {quote(instance.ids[i])}: estimate {e[i]} must be >= 1 with prefill "
                f"{s[i]} + estimate <= M = {M}"
            )


def _evict(
    t: int,
    M: int,
    S: int,
    K: int,
    running: dict[int, int],
    e: list[int],
    s: list[int],
    planner,
    runs: list[tuple[int, int, int, int]],
) -> tuple[int, int, int, int]:
    """Step 3 at decision time ``t``: evict least progress first (ties: larger index first)
    while round ``t+1`` overflows; returns the new ``(S, K)``, the evictions and the wasted
    tokens."""
    victims = sorted(running.items(), key=lambda jp: (-jp[1], -jp[0]))
    cut = lost = 0
    for j, p in victims:
        if S + (t + 1) * K <= M:
            break
        del running[j]
        K -= 1
        S -= s[j] - p
        g = t - p
        runs.append((j, p, t, 0))
        cut += 1
        lost += g
        if e[j] < g:
            e[j] = g
        planner.add(j)
    return S, K, cut, lost


def _admit(
    planner, running: dict[int, int], s: list[int], e: list[int], a: list[int], t: int, M: int
) -> tuple[float, int]:
    """Step 4 at decision time ``t``: admit the planner's head while it has arrived and passes
    the check with the estimates. Returns the round the blocked head waits for (at least; the
    arrival of one not arrived, its exact jump, or never) and ``sum (s_h - t)`` over those
    admitted."""
    fm = FutureMemory(M)
    for j, p in running.items():
        fm.add(s[j], p, e[j])
    added = 0
    while True:
        h = planner.head()
        if h is None:
            return _NEVER, added
        if a[h] > t:
            return a[h], added
        nxt = fm.next_start(s[h], e[h], t)
        if nxt != t:
            return nxt, added
        planner.pop()
        running[h] = t
        fm.add(s[h], t, e[h])
        added += s[h] - t
