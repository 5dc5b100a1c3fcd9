"""Certify method ``lp-aggregated``: the LP relaxation over windows of rounds, refined on
demand, and the schedules listed by its solution.

The solver is :func:`lpsched.solvers.aggregated.aggregated_lp` (its module docstring has the
method, its validity and its sources); here the best schedule and the list policies give its
first columns, and :func:`lp_order_schedule` and the earliest fit of
:mod:`~lpsched.certify.methods.lns` turn its solution into schedules.

Source: SPEC section 3; Sorted-LP (arXiv 2508.06133, section 5); ours as a method.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...executor import execute
from ...instance import Instance
from ...policies.local_search import SEED_POLICIES
from ...schedule import Schedule
from ...solvers.aggregated import aggregated_lp
from ...solvers.options import SolveOptions
from ...solvers.progress import Observer
from ...solvers.result import Result
from ..method import Method
from .colgen import seeded_lp
from .lns import earliest_fit_schedule

__all__ = ["METHOD", "aggregated_lp_bound", "lp_order_schedule"]


def aggregated_lp_bound(
    instance: Instance,
    schedule: Schedule | None = None,
    *,
    seed_policies: Sequence[str] = SEED_POLICIES,
    **options: Any,
) -> Result:
    """The LP relaxation of SPEC section 3 over aggregated rounds, refined on demand:
    :func:`lpsched.solvers.aggregated.aggregated_lp` started from list policies.

    Parameters
    ----------
    instance, schedule, seed_policies
        As :func:`~lpsched.certify.methods.colgen.colgen_lp_bound`: the instance, the
        schedule behind the horizon and the first columns (default: the best list policy),
        and the list policies whose schedules are first columns too.
    **options
        The keyword options of :func:`~lpsched.solvers.aggregated.aggregated_lp`
        (``time_limit``, ``threads``, ``observer``, ``horizon``, ``windows``, ``width``,
        ``windows_target``, ``alpha``, ``tol``, ``max_iterations``, ``master_solver``).

    Returns
    -------
    Result
        As :func:`~lpsched.solvers.aggregated.aggregated_lp`; ``info["mean_start"]`` is the
        LP solution's mean start per request (rounds), the key of :func:`lp_order_schedule`.

    Raises
    ------
    TypeError
        ``seed_policies`` a string (``"fcfs"``: give ``["fcfs"]``) or holding a non-string,
        ``windows`` not a bool, ``max_iterations`` not an integer; each named.
    ValueError
        An unknown seed policy, ``max_iterations < 1``, or an option out of range (as
        :func:`~lpsched.solvers.aggregated.aggregated_lp`).
    """
    try:
        names = None if isinstance(seed_policies, str) else list(seed_policies)
    except TypeError:  # not iterable
        names = None
    if names is None or not all(isinstance(p, str) for p in names):
        raise TypeError(
            f"seed_policies must be a list of policy names such as ['fcfs'], got "
            f"{seed_policies!r:.60}"
        )
    seed_policies = names
    windows = options.get("windows", True)
    if not isinstance(windows, bool):
        raise TypeError(f"windows must be True or False, got {windows!r:.60}")
    cap = options.get("max_iterations")
    if cap is not None and (isinstance(cap, bool) or not isinstance(cap, (int, np.integer))):
        raise TypeError(f"max_iterations must be an integer (master solves), got {cap!r:.60}")
    if cap is not None and cap < 1:
        raise ValueError(f"max_iterations must be at least 1 (master solves), got {cap}")
    return seeded_lp(aggregated_lp, instance, schedule, seed_policies, options)


def lp_order_schedule(instance: Instance, mean_start: np.ndarray) -> Schedule:
    """The executor's schedule of the requests listed by an LP solution's completion times.

    Parameters
    ----------
    instance : Instance
    mean_start : ndarray of float64, shape (n,)
        Each request's start averaged over a fractional solution of the time-indexed LP
        (rounds; ``info["mean_start"]`` of :func:`aggregated_lp_bound`).

    Returns
    -------
    Schedule
        The strict executor (SPEC section 4) on the requests by ``mean_start + o_i`` (rounded
        to 6 decimals), then ``o_i``, then index: Sorted-LP's list, from the aggregated master.

    Raises
    ------
    ValueError
        ``mean_start`` not of shape (n,).

    Notes
    -----
    At n = 2000 on the default instance this list, from the LP solution after 60 s, gives
    5,980,395 rounds against Sorted-F's 6,362,535 (``benchmarks/bench_aggregated.py
    --schedules 60``). Source: Sorted-LP (arXiv 2508.06133,
    section 5; Hall, Schulz, Shmoys and Wein, Math. Oper. Res. 22 (1997)) on the master's
    solution; ours.
    """
    mean_start = np.asarray(mean_start, dtype=np.float64)
    if mean_start.shape != (instance.n,):
        raise ValueError(f"mean_start must have shape ({instance.n},), got {mean_start.shape}")
    key = np.round(mean_start + instance.decode, 6)
    order = np.lexsort((np.arange(instance.n), instance.decode, key))
    return execute(instance, order)


#: Share of the method's budget for the LP; the rest is for the schedules of its solution.
LP_SHARE = 0.95


def run(instance: Instance, schedule: Schedule, options: SolveOptions, observer: Observer) -> None:
    """Report every better bound of :func:`aggregated_lp_bound` (rounds) and the best schedule
    listed by its last master's solution to ``observer``; the contract is
    :class:`~lpsched.certify.method.Method`.

    The schedules: :func:`lp_order_schedule` (the executor on the LP's list) and
    :func:`~lpsched.certify.methods.lns.earliest_fit_schedule` on the requests by fractional
    completion and by fractional start. On the default instance, from the LP solution after
    60 s: 5,980,395, 5,870,748 and 5,864,907 rounds, against Sorted-F's 6,362,535
    (``benchmarks/bench_aggregated.py --schedules 60``).
    """
    t0 = time.perf_counter()
    limit = options.time_limit
    res = aggregated_lp_bound(
        instance, schedule, time_limit=None if limit is None else LP_SHARE * limit,
        threads=options.threads, observer=observer,
    )  # fmt: skip
    observer.on_bound(res.bound)
    mean_start = res.info["mean_start"]
    if mean_start is None:
        return
    best = lp_order_schedule(instance, mean_start)
    deadline = None if limit is None else t0 + limit
    for key in (mean_start + instance.decode, mean_start):
        order = np.lexsort((np.arange(instance.n), instance.decode, np.round(key, 6)))
        placed = earliest_fit_schedule(instance, order, deadline)
        if placed is not None and placed.tel < best.tel:
            best = placed
    observer.on_incumbent(best)


METHOD = Method(
    "lp-aggregated",
    "both",
    "the LP relaxation over windows of rounds, cut where the memory overflows (its Lagrangian "
    "bound until the LP is reached), and the schedule listed by its completion times",
    run,
)
