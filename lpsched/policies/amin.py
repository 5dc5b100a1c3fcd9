"""Policies for unknown decode lengths: A_max, A_min and Sorted-F+Amin (SPEC section 6).

Each request has a known interval ``l_i <= o_i <= u_i`` (``decode_lo``, ``decode_hi``; build them
with :mod:`lpsched.generators.intervals`); ``o_i`` is revealed only when the request finishes.
All three run on :func:`~lpsched.eviction.execute_with_eviction`:

* ``amax`` -- plan with ``e_i = u_i``, list by ``u_i`` (then index). Never evicts (estimates are
  upper bounds), but reserves memory that is not used.
* ``amin`` -- start from ``e_i = l_i``, list by the current ``e_i`` (then index), raise an
  estimate when a request outlives it, evict (least progress first) when the true memory of the
  next round would exceed ``M``.
* ``sorted-f-amin`` -- as ``amin``, but the list is Sorted-F's Phase 1 on the current estimates
  (sizes ``s_i + e_i``), recomputed for the waiting requests whenever a request is evicted (the
  only moment a waiting request's estimate changes).

With exact intervals (``l = u = o``) ``amin`` and ``amax`` produce MC-SF's strict schedule and
``sorted-f-amin`` Sorted-F's (tested). The hindsight references are the registry's ``mcsf`` and
``sorted-f`` run on the true lengths.

Source: Chen, Ye, Zhou, arXiv 2508.14544 (A_min and A_max, sections 3-4), in our reading fixed
by SPEC section 6; Sorted-F+Amin combines it with Sorted-F (arXiv 2508.06133, section 4) as SPEC
section 6 asks.
"""

from __future__ import annotations

from ..eviction import execute_with_eviction
from ..instance import Instance
from ..schedule import Schedule
from .planners import KeyPlanner, SortedFPlanner

__all__ = ["amax", "amin", "sorted_f_amin", "AMIN_OPTIONS"]

#: Keyword options of the three policies (for the registry).
AMIN_OPTIONS = ("online",)


def _intervals(instance: Instance, who: str) -> tuple[list[int], list[int]]:
    if not instance.has_intervals:
        raise ValueError(
            f"{who} needs prediction intervals (decode_lo, decode_hi) on instance "
            f"{instance.name!r}; add them with 'lpsched generate ... --intervals' or "
            "lpsched.generators.intervals (exact, multiplicative, binned, no_information)"
        )
    assert instance.decode_lo is not None and instance.decode_hi is not None  # has_intervals
    return instance.decode_lo.tolist(), instance.decode_hi.tolist()


def amax(instance: Instance, *, online: bool = False) -> Schedule:
    """A_max: plan every request with its upper bound ``u_i``.

    Parameters
    ----------
    instance : Instance
        With intervals ``[l_i, u_i]`` (tokens).
    online : bool, default False
        Requests join the list at their arrival (SPEC section 5) instead of blocking the
        strict walk until they arrive (SPEC section 4).

    Returns
    -------
    Schedule
        With ``runs`` (one per request: A_max never evicts) and ``info`` as
        :func:`~lpsched.eviction.execute_with_eviction`.

    Raises
    ------
    ValueError
        The instance has no intervals.

    Notes
    -----
    Source: A_max of arXiv 2508.14544, section 3 (list by ``u_i``, ties by index: MC-SF on
    the upper bounds).
    """
    _, hi = _intervals(instance, "amax")
    e = list(hi)
    return execute_with_eviction(instance, KeyPlanner(e), e, online=online, policy="amax")


def amin(instance: Instance, *, online: bool = False) -> Schedule:
    """A_min: plan with lower bounds ``l_i``, raise estimates as requests outlive them, evict.

    Parameters
    ----------
    instance : Instance
        With intervals ``[l_i, u_i]`` (tokens); only ``l_i`` is used.
    online : bool, default False
        See :func:`amax`.

    Returns
    -------
    Schedule
        With ``runs`` (every run, evicted ones included); ``info["evictions"]`` and
        ``info["wasted_tokens"]``. TEL counts from arrival to final completion.

    Raises
    ------
    ValueError
        As :func:`amax`.

    Notes
    -----
    The list is by the current estimate ``e_i`` (then index); an evicted request rejoins with
    its raised estimate. Source: A_min of arXiv 2508.14544, section 4, as fixed by SPEC
    section 6.
    """
    lo, _ = _intervals(instance, "amin")
    e = list(lo)
    return execute_with_eviction(instance, KeyPlanner(e), e, online=online, policy="amin")


def sorted_f_amin(
    instance: Instance,
    solver: str = "auto",
    *,
    online: bool = False,
    sample_size: int = 256,
    quantile: float = 0.9,
    seed: int = 0,
) -> Schedule:
    """Sorted-F+Amin: Sorted-F's list on the current estimates, A_min's eviction rule.

    Parameters
    ----------
    instance : Instance
        With intervals ``[l_i, u_i]`` (tokens); estimates start at ``l_i``.
    solver : {"auto", "dp", "swap", "quantile"}
        Phase-1 solver (``auto`` resolves by ``n`` as offline Sorted-F).
    online : bool, default False
        See :func:`amax`.
    sample_size, quantile, seed
        Quantile-greedy parameters (:class:`~lpsched.policies.quantile.QuantileGreedy`).

    Returns
    -------
    Schedule
        As :func:`amin`; ``info["replans"]`` counts Phase-1 restarts.

    Raises
    ------
    ValueError
        The instance has no intervals; an unknown solver.

    Notes
    -----
    Phase 1 restarts from the waiting set after every eviction (and, online, every arrival),
    computed lazily batch by batch (:class:`~lpsched.policies.planners.SortedFPlanner`).
    Source: SPEC section 6 (our combination of arXiv 2508.06133 and arXiv 2508.14544).
    """
    lo, _ = _intervals(instance, "sorted-f-amin")
    e = list(lo)
    planner = SortedFPlanner.for_instance(
        instance, e, solver, sample_size=sample_size, quantile=quantile, seed=seed
    )
    sched = execute_with_eviction(instance, planner, e, online=online, policy="sorted-f-amin")
    sched.info["replans"] = planner.replans
    return sched
