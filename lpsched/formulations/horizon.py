"""The horizon ``T`` of the time-indexed model and the start windows it implies (SPEC section 3).

The time-indexed MIP only has variables ``x_{i,k}`` for starts ``k <= T - o_i``, so ``T`` must
provably leave room for an optimal schedule. Two valid choices, of which we take the smaller:

* ``T1 = max_i a_i + sum_i o_i``. After the last arrival an optimal schedule never has a round in
  which nothing runs while a request still waits: if round ``t > max_i a_i`` were idle, shifting
  every start ``p_j >= t`` one round earlier keeps ``p_j - 1 >= t - 1 >= a_j``, keeps every
  memory value (``m'(r) = m(r + 1)`` for ``r >= t``, and nothing earlier overlaps round ``t``)
  and lowers TEL strictly. So rounds ``max a + 1 .. C_max`` are busy, each request fills
  ``o_i`` of them, and ``C_max <= T1``.
* ``T2 = UB - sum_i o_i + max_i (o_i + a_i)`` for the TEL ``UB`` of any feasible schedule. Every
  latency is at least ``o_j``, so in a schedule with TEL ``<= UB`` the request ``i`` that
  completes last has ``C_i - a_i <= UB - sum_{j != i} o_j``, i.e. ``C_i <= T2``.

The argument for ``T2`` gives more than a horizon (ours, same argument per request): in every
schedule with TEL ``<= UB`` the total waiting time ``W = sum_j (p_j - a_j) = TEL - sum_j o_j`` is
at most the *slack* ``UB - sum_j o_j``, and every single wait is at most ``W``. Hence
``p_i <= a_i + (UB - sum_j o_j)``: a start window per request, which is what
:func:`start_windows` returns when a slack is given. The windows keep every optimal schedule,
so the MIP optimum is unchanged and the LP relaxation over the windows is still a lower bound
on the optimal TEL (it is the LP of a MIP with the same optimum).

Everything here is a pure function of the instance and of a feasible schedule it is given
(the upper bound ``UB``); :mod:`lpsched.solvers.solve` finds that schedule with
:mod:`lpsched.policies.local_search`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..instance import Instance, quote
from ..schedule import Schedule

__all__ = [
    "HorizonError",
    "Horizon",
    "horizon_t1",
    "horizon_t2",
    "min_horizon",
    "tight_horizon",
    "start_windows",
    "horizon_line",
]


class HorizonError(ValueError):
    """A horizon ``T`` that cannot hold any schedule, or is not proven to hold an optimal one.

    Raised instead of building a model whose optimum could be wrong. Source: ours.
    """


@dataclass(frozen=True)
class Horizon:
    """A valid horizon and the facts it rests on.

    Attributes
    ----------
    T : int
        The horizon in rounds: ``min(T1, T2)``, or the caller's value when one was given.
    T1 : int
        ``max_i a_i + sum_i o_i`` (rounds).
    T2 : int or None
        ``UB - sum_i o_i + max_i (o_i + a_i)`` (rounds); None without an upper bound.
    upper_bound : int or None
        ``UB``, the TEL of ``schedule`` (rounds).
    slack : int or None
        ``UB - sum_i o_i``: the largest total waiting time of a schedule at least as good as
        ``schedule``; every start satisfies ``p_i <= a_i + slack`` (rounds).
    schedule : Schedule or None
        The schedule that gave ``UB`` (the MIP start), feasible.
    """

    T: int
    T1: int
    T2: int | None
    upper_bound: int | None
    slack: int | None
    schedule: Schedule | None


def horizon_t1(instance: Instance) -> int:
    """``T1 = max_i a_i + sum_i o_i`` in rounds (SPEC section 3; argument in the module doc)."""
    return int(instance.arrival.max()) + int(instance.decode.sum())


def horizon_t2(instance: Instance, upper_bound: int) -> int:
    """``T2 = UB - sum_i o_i + max_i (o_i + a_i)`` in rounds for the TEL ``UB`` of a feasible
    schedule (SPEC section 3; argument in the module docstring)."""
    return int(upper_bound) - int(instance.decode.sum()) + min_horizon(instance)


def min_horizon(instance: Instance) -> int:
    """``max_i (a_i + o_i)``: no horizon below this holds any schedule (rounds)."""
    return int((instance.arrival + instance.decode).max())


def tight_horizon(instance: Instance, schedule: Schedule, horizon: int | None = None) -> Horizon:
    """The horizon of SPEC section 3: ``min(T1, T2)``, with ``T2`` from ``schedule``'s TEL.

    Parameters
    ----------
    instance : Instance
    schedule : Schedule
        A feasible schedule; its TEL is the upper bound ``UB`` behind ``T2`` and the slack.
    horizon : int, optional
        A caller's horizon ``T`` (rounds). Accepted when ``T >= min(T1, T2)``; a larger ``T``
        is valid but gives a larger model and a weaker LP.

    Returns
    -------
    Horizon

    Raises
    ------
    HorizonError
        If ``horizon < max_i (a_i + o_i)`` (no schedule fits), or if it is below
        ``min(T1, T2)`` (not proven to hold an optimal schedule; the model would give a
        restricted optimum or an invalid bound).
    InfeasibleScheduleError
        If ``schedule`` is infeasible.

    Notes
    -----
    Source: SPEC section 3 (our argument for ``T1`` and ``T2`` in the module docstring).
    """
    schedule.check()
    ub = schedule.tel
    t1 = horizon_t1(instance)
    t2 = horizon_t2(instance, ub)
    valid = min(t1, t2)
    slack = ub - int(instance.decode.sum())
    if horizon is not None:
        horizon = int(horizon)
        lo = min_horizon(instance)
        if horizon < lo:
            raise HorizonError(
                f"{instance.name}: horizon T = {horizon} is too short to hold any schedule: "
                f"request needs T >= max_i (a_i + o_i) = {lo}"
            )
        if horizon < valid:
            raise HorizonError(
                f"{instance.name}: horizon T = {horizon} is not proven to hold an optimal "
                f"schedule; use T >= min(T1, T2) = {valid} (T1 = {t1}, T2 = {t2})"
            )
        valid = horizon
    return Horizon(T=valid, T1=t1, T2=t2, upper_bound=ub, slack=slack, schedule=schedule)


def start_windows(
    instance: Instance, horizon: int, slack: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Start window ``[lo_i, hi_i]`` of every request in a model with horizon ``T``.

    Parameters
    ----------
    instance : Instance
    horizon : int
        ``T`` in rounds.
    slack : int, optional
        Waiting budget ``UB - sum o`` (rounds); when given, ``hi_i <= a_i + slack``.

    Returns
    -------
    lo, hi : ndarray of int64, shape (n,)
        ``lo_i = a_i`` and ``hi_i = min(T - o_i, a_i + slack)`` (rounds).

    Raises
    ------
    HorizonError
        If some window is empty (``T < a_i + o_i`` or ``slack < 0``).

    Notes
    -----
    Source: SPEC section 3 (``k in {a_i, ..., T - o_i}``); the slack cut is ours (module doc).
    """
    lo = instance.arrival.astype(np.int64)
    hi = int(horizon) - instance.decode
    if slack is not None:
        hi = np.minimum(hi, lo + int(slack))
    bad = np.flatnonzero(hi < lo)
    if bad.size:
        i = int(bad[0])
        raise HorizonError(
            f"{instance.name}: horizon T = {horizon} (slack {slack}) leaves request "
            f"{quote(instance.ids[i])} no start: it needs T >= a_i + o_i = "
            f"{int(instance.arrival[i] + instance.decode[i])}"
        )
    return lo, hi.astype(np.int64)


def horizon_line(facts: Mapping[str, Any]) -> str:
    """The horizon of a written model in one line (``lpsched export``).

    Parameters
    ----------
    facts : mapping
        ``horizon``, ``T1``, ``T2`` (rounds) and ``windows`` (bool), as a model writer reports
        them (the ``info`` of :func:`lpsched.solvers.write_model`).

    Returns
    -------
    str
        ``horizon T = ... (T1 = ..., T2 = ...)``, with ``, start windows`` inside the
        parentheses when the model has them.

    Notes
    -----
    Source: ours.
    """
    windows = ", start windows" if facts["windows"] else ""
    return f"horizon T = {facts['horizon']} (T1 = {facts['T1']}, T2 = {facts['T2']}{windows})"
