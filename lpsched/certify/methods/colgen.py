"""Certify method ``lp-colgen``: the LP relaxation by column generation, with an anytime bound.

The solver is :func:`lpsched.solvers.colgen.colgen_lp` (its module docstring has the method and
its sources); here the best schedule and the list policies give its first columns.

Source: SPEC section 3; ours as a method.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...instance import Instance
from ...policies.local_search import (
    SEED_POLICIES,
    best_heuristic,
    list_policy_starts,
    slow_heuristic_seconds,
)
from ...schedule import Schedule
from ...solvers.colgen import colgen_lp
from ...solvers.options import SolveOptions
from ...solvers.progress import Observer
from ...solvers.result import Result
from ..method import Method, solver_options

__all__ = ["METHOD", "colgen_lp_bound", "seeded_lp"]


def colgen_lp_bound(
    instance: Instance,
    schedule: Schedule | None = None,
    *,
    seed_policies: Sequence[str] = SEED_POLICIES,
    **options: Any,
) -> Result:
    """The LP relaxation of SPEC section 3 by column generation, with an anytime bound:
    :func:`lpsched.solvers.colgen.colgen_lp` started from list policies.

    Parameters
    ----------
    instance : Instance
        Requests ``(s_i, o_i, a_i)`` and the KV-cache budget ``M`` (tokens); arrivals from any
        round on.
    schedule : Schedule, optional
        A feasible schedule (its TEL gives the horizon and the start windows, its starts the
        first columns). Default: the best list policy
        (:func:`~lpsched.policies.local_search.best_heuristic`).
    seed_policies : sequence of str
        List policies (:data:`~lpsched.policies.local_search.LIST_ORDERS`) whose schedules,
        strict and with backfill, are first columns besides ``schedule``
        (:func:`~lpsched.policies.local_search.list_policy_starts`).
    **options
        The keyword options of :func:`~lpsched.solvers.colgen.colgen_lp` (``time_limit``,
        ``threads``, ``observer``, ``horizon``, ``windows``, ``alpha``, ``tol``,
        ``max_iterations``, ``ascent``, ``ascent_share``, ``deflect``, ``master_solver``,
        ``difference``).

    Returns
    -------
    Result
        As :func:`~lpsched.solvers.colgen.colgen_lp`.

    Raises
    ------
    ValueError
        An unknown seed policy, or an option out of range (as
        :func:`~lpsched.solvers.colgen.colgen_lp`).
    """
    return seeded_lp(colgen_lp, instance, schedule, seed_policies, options)


def seeded_lp(
    lp: Callable[..., Result],
    instance: Instance,
    schedule: Schedule | None,
    seed_policies: Sequence[str],
    options: Mapping[str, Any],
) -> Result:
    """``lp(instance, schedule, seeds=..., **options)``: an LP by column generation
    (:func:`~lpsched.solvers.colgen.colgen_lp`, :func:`~lpsched.solvers.aggregated.aggregated_lp`)
    whose first columns are ``schedule`` (None: the best list policy,
    :func:`~lpsched.policies.local_search.best_heuristic`) and the schedules of
    ``seed_policies`` (:func:`~lpsched.policies.local_search.list_policy_starts`), less a slow
    one (Sorted-F) when twice its expected time exceeds ``options["time_limit"]``
    (:func:`~lpsched.policies.local_search.slow_heuristic_seconds`).

    Raises
    ------
    ValueError
        An unknown seed policy, or what ``lp`` raises.

    Notes
    -----
    Source: ours (the seeding of ``lp-colgen`` and ``lp-aggregated``).
    """
    limit = options.get("time_limit")
    if limit is not None:  # Sorted-F's Phase 1 alone can take the budget (15 s at n = 20,000)
        seed_policies = [
            p for p in seed_policies if 2 * slow_heuristic_seconds(p, instance.n) <= limit
        ]
    seeds = list_policy_starts(instance, seed_policies)
    if schedule is None:
        schedule = best_heuristic(instance)
    return lp(instance, schedule, seeds=seeds, **options)


def run(instance: Instance, schedule: Schedule, options: SolveOptions, observer: Observer) -> None:
    """Report every better Lagrangian bound of :func:`colgen_lp_bound` (rounds) to
    ``observer``; the contract is :class:`~lpsched.certify.method.Method`."""
    res = colgen_lp_bound(instance, schedule, **solver_options(options, observer))
    observer.on_bound(res.bound)


METHOD = Method(
    "lp-colgen",
    "lower",
    "the LP relaxation by column generation (its Lagrangian bound when it does not converge)",
    run,
)
