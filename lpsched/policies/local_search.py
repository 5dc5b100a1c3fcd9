"""Upper-bound schedules for the exact solvers: the best list policy and a list local search.

The exact model needs a feasible schedule twice: its TEL ``UB`` fixes the horizon ``T2`` and the
start windows (:mod:`lpsched.formulations.horizon`), and the schedule itself is the MIP start.
:func:`best_heuristic` runs the list policies strict and with backfill; :func:`improve_schedule`
improves a schedule by moving requests in its priority list. Both call the executor only, so
every schedule they return is feasible by construction (and checked).

Source: ours (list scheduling local search; SPEC section 4 for the executor).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from functools import partial

import numpy as np

from ..executor import FutureMemory, execute
from ..instance import Instance
from ..schedule import Schedule
from .baselines import fcfs_order, mcsf_order, size_order
from .pipeline import gba_d
from .sorted_f import sorted_f_order
from .svf import svf, volume_order

__all__ = [
    "LIST_ORDERS",
    "SCHEDULE_POLICIES",
    "HEURISTICS",
    "SEED_POLICIES",
    "best_heuristic",
    "SLOW_HEURISTICS",
    "slow_heuristic_seconds",
    "list_policy_starts",
    "improve_schedule",
    "adjacent_swaps",
]

#: Priority-list functions :func:`best_heuristic` can try, by registry name.
LIST_ORDERS: dict[str, Callable[[Instance], np.ndarray]] = {
    "fcfs": fcfs_order,
    "mcsf": mcsf_order,
    "size": size_order,
    "sorted-f": partial(sorted_f_order, solver="swap"),
    "volume": volume_order,
}
#: Policies with their own executor :func:`best_heuristic` can try, by registry name (each
#: once: they have no ``+backfill``).
SCHEDULE_POLICIES: dict[str, Callable[[Instance], Schedule]] = {"svf": svf, "gba-d": gba_d}
#: Policies tried for the upper bound ``UB``: the list policies strict and ``+backfill``, the
#: others once. At n = 2000 on the default instance ``volume`` wins (5,955,219 against
#: Sorted-F's 6,362,535); the seven cost about 1 s there.
HEURISTICS: tuple[str, ...] = ("fcfs", "mcsf", "size", "sorted-f", "volume", "svf", "gba-d")
#: Policies of :data:`HEURISTICS` whose cost grows fastest with ``n``: :func:`best_heuristic`
#: runs them last and, with a deadline, only when they fit (:func:`slow_heuristic_seconds`).
SLOW_HEURISTICS: tuple[str, ...] = ("sorted-f",)
#: Seconds of Sorted-F's ``swap`` Phase 1 at n = 20,000 (paper mix, 2 shared cores; ours).
SLOW_SECONDS_AT_20000 = 15.0
#: Growth of that time with ``n`` (2.1 from n = 2,000 to 20,000, 2.45 from 10,000 to 20,000).
SLOW_GROWTH = 2.3
#: List policies whose schedules are the first columns of the LP's column generations
#: (:func:`list_policy_starts`; ``seed_policies`` of the certify methods and Sorted-LP).
SEED_POLICIES: tuple[str, ...] = ("fcfs", "mcsf", "size", "sorted-f")


def best_heuristic(
    instance: Instance,
    policies: Sequence[str] = HEURISTICS,
    *,
    deadline: float | None = None,
    found: Callable[[Schedule], object] | None = None,
) -> Schedule:
    """The schedule with the smallest TEL over ``policies``: the list policies each strict and
    ``+backfill``, those with their own executor once.

    Parameters
    ----------
    instance : Instance
    policies : sequence of str
        Names of :data:`LIST_ORDERS` and :data:`SCHEDULE_POLICIES` (default
        :data:`HEURISTICS`).
    deadline : float, optional
        ``time.perf_counter()`` value. The policies of :data:`SLOW_HEURISTICS` run after the
        others, and are skipped when :func:`slow_heuristic_seconds` twice over would pass
        ``deadline``; the others always run. None: every policy runs.
    found : callable, optional
        Called with each schedule as it is computed (what a Ctrl-C during a later, slower
        policy would otherwise lose).

    Returns
    -------
    Schedule
        Feasible (checked); ``policy`` and ``info["heuristic"]`` name the winner (first in
        ``policies`` on ties, whatever order they ran in), e.g. ``"mcsf+backfill"``;
        ``info["skipped"]`` lists the policies the deadline left out, if any.

    Raises
    ------
    KeyError
        A name that is in neither :data:`LIST_ORDERS` nor :data:`SCHEDULE_POLICIES` (before
        any policy runs).

    Notes
    -----
    Source: ours. Sorted-F runs its ``swap`` Phase 1 here, since ``dp``'s tables grow with
    ``M``. The orders are called directly, not through the registry, which sits above the
    solvers (Sorted-LP needs them).
    """
    unknown = [p for p in policies if p not in LIST_ORDERS and p not in SCHEDULE_POLICIES]
    if unknown:
        known = ", ".join([*LIST_ORDERS, *SCHEDULE_POLICIES])
        raise KeyError(f"unknown heuristic {unknown[0]!r}; choose from {known}")
    ranked: list[tuple[int, int, Schedule]] = []  # (TEL, rank in policies, schedule)
    skipped = []
    for j in sorted(range(len(policies)), key=lambda j: policies[j] in SLOW_HEURISTICS):
        name = policies[j]
        if name in SLOW_HEURISTICS and deadline is not None:
            if time.perf_counter() + 2 * slow_heuristic_seconds(name, instance.n) > deadline:
                skipped.append(name)
                continue
        for k, sched in enumerate(_heuristic_schedules(instance, name)):
            ranked.append((sched.tel, 2 * j + k, sched))
            if found is not None:
                found(sched)
    best = min(ranked, key=lambda r: r[:2])[2]
    best.check()
    best.info["heuristic"] = best.policy
    if skipped:
        best.info["skipped"] = skipped
    return best


def _heuristic_schedules(instance: Instance, name: str) -> list[Schedule]:
    """The schedules of one heuristic: a list policy strict and ``+backfill``, another once
    (none when ``gba-d`` cannot schedule the instance)."""
    if name in SCHEDULE_POLICIES:
        try:
            return [SCHEDULE_POLICIES[name](instance)]
        except (ValueError, MemoryError):  # gba-d: a GBA schedule too long for its profile
            return []
    order = LIST_ORDERS[name](instance)
    return [
        execute(instance, order, backfill=backfill, policy=name + ("+backfill" if backfill else ""))
        for backfill in (False, True)
    ]


def slow_heuristic_seconds(name: str, n: int) -> float:
    """The seconds a policy of :data:`SLOW_HEURISTICS` is expected to take on ``n`` requests.

    Parameters
    ----------
    name : str
        A name of :data:`SLOW_HEURISTICS`.
    n : int
        Requests.

    Returns
    -------
    float
        :data:`SLOW_SECONDS_AT_20000` scaled by ``(n / 20,000) ** SLOW_GROWTH`` (0 for other
        names).

    Notes
    -----
    Source: ours, measured on the paper mix (M = 16,492; 2 shared cores): Sorted-F's ``swap``
    Phase 1 took 0.12, 0.65, 2.75 and 15 s at n = 2,000, 5,000, 10,000 and 20,000.
    """
    if name not in SLOW_HEURISTICS:
        return 0.0
    return SLOW_SECONDS_AT_20000 * (n / 20_000) ** SLOW_GROWTH


def list_policy_starts(
    instance: Instance, policies: Sequence[str] = SEED_POLICIES
) -> list[np.ndarray]:
    """The starts of each list policy of ``policies``, strict and with backfill.

    Parameters
    ----------
    instance : Instance
    policies : sequence of str
        Names of :data:`LIST_ORDERS` (default :data:`SEED_POLICIES`).

    Returns
    -------
    list of ndarray of int, each shape (n,)
        Start rounds, two per policy (strict, then ``+backfill``), in the order given: the
        ``seeds`` of :func:`lpsched.solvers.colgen.colgen_lp` and
        :func:`lpsched.solvers.aggregated.aggregated_lp`.

    Raises
    ------
    ValueError
        A name that is not in :data:`LIST_ORDERS` (checked before any work).

    Notes
    -----
    Source: ours.
    """
    unknown = [p for p in policies if p not in LIST_ORDERS]
    if unknown:
        raise ValueError(
            f"unknown seed policy {unknown[0]!r}; choose from {', '.join(LIST_ORDERS)}"
        )
    return [
        execute(instance, LIST_ORDERS[name](instance), backfill=backfill).start
        for name in policies
        for backfill in (False, True)
    ]


def improve_schedule(
    instance: Instance,
    schedule: Schedule,
    iterations: int = 4000,
    *,
    seed: int = 0,
    time_limit: float | None = 5.0,
) -> Schedule:
    """Local search over priority lists: a better upper bound ``UB`` than the list policies.

    Starts from the list of ``schedule`` (its requests by start, ties by index) and, for
    ``iterations`` steps, moves one request (a swap of two positions or a re-insertion, chosen
    at random) and runs the executor (:func:`~lpsched.executor.execute`) strict and with
    backfill; a move is kept when the better of the two TELs is not worse than the current one
    (plateau moves allowed), and the best schedule seen is returned. The search stops early
    after ``50 n`` moves without a new best.

    Parameters
    ----------
    instance : Instance
    schedule : Schedule
        A feasible schedule (the starting point); returned when nothing better is found.
    iterations : int, default 4000
        Largest number of moves tried (at most two executor runs each).
    seed : int, default 0
        Seed of the move generator (the search is deterministic for a given seed unless the
        time limit stops it).
    time_limit : float or None, default 5
        Seconds after which the search stops early (large instances).

    Returns
    -------
    Schedule
        Feasible (every candidate comes from the executor); ``info["heuristic"]`` is
        ``"local-search"`` when it improved on ``schedule``.

    Notes
    -----
    Source: ours. Measured in ``benchmarks/bench_exact.py`` (scaled 80/20 mix): the best list
    policy is 1-4 % above the local-search value at n = 20-30, and the better ``UB`` gives the
    MIP a better start, a smaller ``T2``, smaller windows and more reduced-cost fixing.
    """
    n = instance.n
    best = schedule
    if n < 2 or iterations <= 0:
        return best
    rng = np.random.default_rng(seed)
    cur = np.lexsort((np.arange(n), schedule.start))
    cur_tel = schedule.tel
    t0 = time.perf_counter()
    moves = rng.integers(0, n, size=(iterations, 2))
    kinds = rng.random(iterations) < 0.5
    last_best, patience = 0, 50 * n
    for it in range(iterations):
        if it - last_best > patience:
            break
        # every move: one executor run costs far more than the clock (n = 2000: checking
        # every 64 moves overran a 0.1 s budget by 1.5 s)
        if time_limit is not None and time.perf_counter() - t0 > time_limit:
            break
        i, j = int(moves[it, 0]), int(moves[it, 1])
        if i == j:
            continue
        cand = cur.copy()
        if kinds[it]:
            cand[i], cand[j] = cand[j], cand[i]
        else:
            cand = np.insert(np.delete(cand, i), j, cur[i])
        for backfill in (False, True):
            sched = execute(instance, cand, backfill=backfill, policy="local-search")
            if sched.tel <= cur_tel:
                cur, cur_tel = cand, sched.tel
                if sched.tel < best.tel:
                    best, last_best = sched, it
                break
    if best is not schedule:
        best.check()
        best.info["heuristic"] = "local-search"
    return best


def _copy_memory(fm: FutureMemory) -> FutureMemory:
    """A copy of the running set's future memory (its rounds after the last prune)."""
    other = FutureMemory(fm.memory)
    other.cs = fm.cs[fm.head :]
    other.A = fm.A[fm.head :]
    other.N = fm.N[fm.head :]
    return other


def adjacent_swaps(
    instance: Instance, order: Sequence[int] | np.ndarray, max_passes: int = 3
) -> tuple[np.ndarray, dict[str, int]]:
    """Improve a priority list by swapping neighbours while the strict executor's TEL falls.

    Each pass visits the positions ``k = 0 .. n-2`` of the list and swaps the requests at
    ``k`` and ``k + 1`` when the executor (SPEC section 4, strict order) then gives a strictly
    smaller TEL; the passes stop when one swaps nothing or after ``max_passes``.

    Parameters
    ----------
    instance : Instance
    order : sequence of int, shape (n,)
        The starting priority list, a permutation of ``range(n)``.
    max_passes : int, default 3
        Largest number of passes (a deterministic work limit, not a time limit: the result is
        a function of the instance and the list).

    Returns
    -------
    order : ndarray of int64, shape (n,)
        The improved list; its strict schedule's TEL is at most the starting list's.
    info : dict
        ``passes``, ``swaps`` (accepted), ``trials`` (swaps evaluated) and ``placements``
        (requests placed by all trials: the work done).

    Raises
    ------
    ValueError
        ``order`` not a permutation of ``range(n)``, or ``max_passes`` not a positive integer.

    Notes
    -----
    A trial re-runs the strict walk from the state before position ``k`` (kept as the pass
    advances) and stops as soon as it has converged back to the current list's run: same
    decision round, and every request whose start differs has completed by then in both runs,
    so the running sets' future memory and everything after agree. The TEL difference is the
    sum of the start differences so far. Exact (equal to re-running the executor, tested);
    most trials converge within a few positions. Source: ours.
    """
    if (
        isinstance(max_passes, bool)
        or not isinstance(max_passes, (int, np.integer))
        or max_passes < 1
    ):
        raise ValueError(f"max_passes must be a positive integer, got {max_passes!r}")
    n = instance.n
    cur = np.asarray(order)
    if (
        cur.shape != (n,)
        or (n and cur.dtype.kind not in "iu")
        or not np.array_equal(np.sort(cur), np.arange(n))
    ):
        raise ValueError(f"order must be a permutation of range({n})")
    s, o, a = instance.prefill.tolist(), instance.decode.tolist(), instance.arrival.tolist()
    lst = cur.astype(np.int64).tolist()
    start = execute(instance, lst).start.tolist()
    info = {"passes": 0, "swaps": 0, "trials": 0, "placements": 0}
    for _ in range(max_passes):
        info["passes"] += 1
        swapped = False
        fm = FutureMemory(instance.memory)
        t = 0
        for k in range(n - 1):
            trial = _copy_memory(fm)
            tt = t
            new: list[int] = []
            delta = 0
            reach = -1  # latest completion of a request whose start differs
            j = k
            while j < n:
                h = lst[k + 1] if j == k else lst[k] if j == k + 1 else lst[j]
                if a[h] > tt:
                    tt = a[h]
                trial.prune(tt)
                tt = trial.earliest_start(s[h], o[h], tt)
                trial.add(s[h], tt, o[h])
                new.append(tt)
                delta += tt - start[h]
                if tt != start[h]:
                    reach = max(reach, tt + o[h], start[h] + o[h])
                j += 1
                if j > k + 1 and tt == start[lst[j - 1]] and reach <= tt:
                    break
            info["trials"] += 1
            info["placements"] += len(new)
            if delta < 0:
                lst[k], lst[k + 1] = lst[k + 1], lst[k]
                for pos, p in zip(range(k, j), new, strict=True):
                    start[lst[pos]] = p
                swapped = True
                info["swaps"] += 1
            h = lst[k]
            if a[h] > t:
                t = a[h]
            fm.prune(t)
            t = start[h]
            fm.add(s[h], t, o[h])
        if not swapped:
            break
    return np.asarray(lst, dtype=np.int64), info
