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

from ..executor import execute
from ..instance import Instance
from ..schedule import Schedule
from .baselines import fcfs_order, mcsf_order, size_order
from .sorted_f import sorted_f_order

__all__ = ["LIST_ORDERS", "HEURISTICS", "best_heuristic", "improve_schedule"]

#: Priority-list functions :func:`best_heuristic` can try, by registry name.
LIST_ORDERS: dict[str, Callable[[Instance], np.ndarray]] = {
    "fcfs": fcfs_order,
    "mcsf": mcsf_order,
    "size": size_order,
    "sorted-f": partial(sorted_f_order, solver="swap"),
}
#: Policies tried for the upper bound ``UB`` (each strict and ``+backfill``).
HEURISTICS: tuple[str, ...] = ("fcfs", "mcsf", "size", "sorted-f")


def best_heuristic(instance: Instance, policies: Sequence[str] = HEURISTICS) -> Schedule:
    """The schedule with the smallest TEL over ``policies``, each strict and ``+backfill``.

    Parameters
    ----------
    instance : Instance
    policies : sequence of str
        Names of :data:`LIST_ORDERS` (default :data:`HEURISTICS`).

    Returns
    -------
    Schedule
        Feasible (checked); ``policy`` and ``info["heuristic"]`` name the winner (first on
        ties), e.g. ``"mcsf+backfill"``.

    Raises
    ------
    KeyError
        A name that is not in :data:`LIST_ORDERS`.

    Notes
    -----
    Source: ours. Sorted-F runs its ``swap`` Phase 1 here, since ``dp``'s tables grow with
    ``M``. The orders are called directly, not through the registry, which sits above the
    solvers (Sorted-LP needs them).
    """
    best: Schedule | None = None
    for name in policies:
        if name not in LIST_ORDERS:
            raise KeyError(f"unknown heuristic {name!r}; choose from {', '.join(LIST_ORDERS)}")
        order = LIST_ORDERS[name](instance)
        for backfill in (False, True):
            label = name + ("+backfill" if backfill else "")
            sched = execute(instance, order, backfill=backfill, policy=label)
            if best is None or sched.tel < best.tel:
                best = sched
    assert best is not None
    best.check()
    best.info["heuristic"] = best.policy
    return best


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
