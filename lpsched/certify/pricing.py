"""The pricing problem of the time-indexed LP, shared by its two column generations.

``lp-colgen`` (:mod:`lpsched.certify.methods.colgen`, the LP of SPEC section 3 round by round)
and ``lp-aggregated`` (:mod:`lpsched.certify.methods.aggregated`, its memory rows summed over
windows) price the same columns ``(i, k)``, request ``i`` started at round ``k``: under memory
prices ``lambda_t`` the reduced cost ::

    d_ik = (k + o_i - a_i) - u_i + sum_{t=k+1}^{k+o_i} lambda_t (s_i + t - k)

is O(1) in the prefix sums of ``lambda`` and ``t lambda``, so one scan over the starts prices a
request (:func:`price_starts`, a kernel; :class:`Pricer` adds the Lagrangian bound
``L(lambda)``). Here too: the memory of a set of columns (:func:`memory_use`), the set-up both
generations share (:func:`unit_model`: identical requests as one unit, the horizon and the start
windows), their first columns (:func:`seed_schedules`, from :func:`compress_idle`) and the
reduced costs of given columns (:func:`reduced_costs`, with the tolerance :func:`rc_eps`).

Source: the LP of SPEC section 3; column generation for time-indexed scheduling: van den
Akker, Hurkens and Savelsbergh, INFORMS J. Computing 12 (2000). The prefix-sum pricing is ours.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..executor import execute
from ..formulations.horizon import start_windows, tight_horizon
from ..formulations.time_indexed import _units
from ..instance import Instance
from ..kernels import jit
from ..policies.local_search import LIST_ORDERS, best_heuristic
from ..schedule import Schedule
from ..solvers.options import check_horizon, shift_arrivals

__all__ = [
    "price_starts",
    "memory_use",
    "compress_idle",
    "Pricer",
    "seed_schedules",
    "unit_model",
    "rc_eps",
    "reduced_costs",
]


@jit
def price_starts(
    lo: np.ndarray,
    hi: np.ndarray,
    s: np.ndarray,
    o: np.ndarray,
    a: np.ndarray,
    p0: np.ndarray,
    p1: np.ndarray,
    last: int,
    neg: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """The cheapest start of every unit under memory prices ``lambda`` (the pricing scan).

    Parameters
    ----------
    lo, hi : ndarray of int64, shape (U,)
        Start window of each unit (rounds).
    s, o, a : ndarray of int64, shape (U,)
        Prefill s_i (tokens), decode o_i (tokens = rounds) and arrival a_i (round) of each unit.
    p0, p1 : ndarray of float64, shape (R + 1,)
        Prefix sums ``p0[t] = sum_{r<=t} lambda_r`` and ``p1[t] = sum_{r<=t} r lambda_r``
        (``p0[0] = p1[0] = 0``); ``lambda_t = 0`` for ``t > R``.
    last : int
        The last round with ``lambda_t != 0`` (0 if none).
    neg : float, default 0
        ``sum_t min(lambda_t, 0)`` (``<= 0``).

    Returns
    -------
    start : ndarray of int64, shape (U,)
        ``argmin_k`` (the first one on ties) of ``c_k + sum_{t=k+1}^{k+o} lambda_t (s + t - k)``
        over ``k in [lo, hi]``, ``c_k = k + o - a`` (rounds).
    value : ndarray of float64, shape (U,)
        That minimum.

    Notes
    -----
    O(sum_u (min(hi_u, max(lo_u, last)) - lo_u + 1)): for ``k >= last`` the memory term is 0
    and ``c_k`` grows, so no later start is cheaper. The scan also stops at the first ``k``
    with ``c_k + (s + o) neg >= `` the best value so far: the memory term is at least
    ``(s + o) neg`` (each ``a_t <= s + o``), so no later start is strictly cheaper (the first
    argmin is kept). Source: ours.
    """
    n_units = lo.size
    big = p0.size - 1
    start = np.empty(n_units, dtype=np.int64)
    value = np.empty(n_units, dtype=np.float64)
    for u in range(n_units):
        stop = min(hi[u], max(lo[u], last))
        best_k = lo[u]
        best_v = np.inf
        floor = o[u] - a[u] + (s[u] + o[u]) * neg
        for k in range(lo[u], stop + 1):
            if k + floor >= best_v:
                break
            k0 = min(k, big)
            k1 = min(k + o[u], big)
            v = (k + o[u] - a[u]) + (s[u] - k) * (p0[k1] - p0[k0]) + (p1[k1] - p1[k0])
            if v < best_v:
                best_v = v
                best_k = k
        start[u] = best_k
        value[u] = best_v
    return start, value


@jit
def memory_use(
    start: np.ndarray, s: np.ndarray, o: np.ndarray, count: np.ndarray, rounds: int
) -> np.ndarray:
    """KV-cache memory per round of the columns ``(u, start[u])``, each taken ``count[u]`` times.

    Parameters
    ----------
    start, s, o, count : ndarray of int64, shape (U,)
        Start ``k_u`` (round), prefill s_u and decode o_u (tokens), multiplicity ``c_u``.
    rounds : int
        Last round counted (later rounds are dropped).

    Returns
    -------
    ndarray of float64, shape (rounds + 1,)
        ``m[t] = sum_u c_u (s_u + t - k_u)`` over ``k_u < t <= k_u + o_u`` (tokens); ``m[0] = 0``.

    Notes
    -----
    O(sum_u o_u). Source: SPEC section 2 (the memory of a round).
    """
    use = np.zeros(rounds + 1)
    for u in range(start.size):
        for j in range(1, o[u] + 1):
            t = start[u] + j
            if t > rounds:
                break
            use[t] += count[u] * (s[u] + j)
    return use


def compress_idle(instance: Instance, start: np.ndarray) -> np.ndarray:
    """Starts with every idle round after the last arrival removed (rounds).

    A round ``t > max_i a_i`` in which nothing runs is removed by moving every start
    ``p_j >= t`` one round earlier: still ``>= a_j``, the same memory in every round (moved),
    a smaller TEL. Afterwards ``C_max <= max_i a_i + sum_i o_i = T1`` (the argument of
    :mod:`lpsched.formulations.horizon`), so the schedule is a column set of every valid
    horizon.

    Parameters
    ----------
    instance : Instance
    start : ndarray of int64, shape (n,)
        Starts of a feasible schedule.

    Returns
    -------
    ndarray of int64, shape (n,)
        Source: ours.
    """
    start = np.asarray(start, dtype=np.int64)
    end = start + instance.decode
    floor = int(instance.arrival.max())
    order = np.argsort(start, kind="stable")
    out = start.copy()
    shift, reach = 0, floor  # rounds floor+1 .. reach are busy (or before the last arrival)
    for j in order.tolist():
        p = int(start[j])
        if p > reach:  # rounds reach+1 .. p are idle, all after the last arrival
            shift += p - reach
        out[j] = p - shift
        reach = max(reach, int(end[j]))
    return out


class Pricer:
    """Prices every unit under a memory-dual vector with :func:`price_starts`.

    Parameters
    ----------
    lo, hi : ndarray of int64, shape (U,)
        Start window of each unit (rounds).
    s, o, a : ndarray of int64, shape (U,)
        Prefill s_i, decode o_i (tokens) and arrival a_i (round) of each unit.
    count : ndarray of int64, shape (U,)
        Requests per unit.
    M : int
        KV-cache budget (tokens).

    Attributes
    ----------
    seconds : float
        Wall time spent pricing so far (s).

    Notes
    -----
    Calling it with ``lam`` (shape (R + 1,), ``lam[0]`` unused) returns ``(start, value,
    L(lambda))``: each unit's cheapest start and its cost, and the Lagrangian bound
    ``sum_u count_u value_u - M sum_t max(lambda_t, 0)`` (rounds), a lower bound on the LP for
    every real ``lambda``. Source: ours.
    """

    def __init__(self, lo, hi, s, o, a, count, M: int):
        self.lo, self.hi, self.s, self.o, self.a = lo, hi, s, o, a
        self.count = count.astype(np.float64)
        self.M = float(M)
        self.seconds = 0.0

    def __call__(self, lam: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        """``(start, value, L(lambda))`` for ``lam`` of shape (R + 1,) (``lam[0]`` unused)."""
        t0 = time.perf_counter()
        rounds = np.arange(lam.size, dtype=np.float64)
        p0 = np.cumsum(lam)
        p1 = np.cumsum(rounds * lam)
        nonzero = np.flatnonzero(lam)
        last = int(nonzero[-1]) if nonzero.size else 0
        neg = float(np.minimum(lam, 0.0).sum())
        start, value = price_starts(self.lo, self.hi, self.s, self.o, self.a, p0, p1, last, neg)
        bound = float(self.count @ value - self.M * np.maximum(lam, 0.0).sum())
        self.seconds += time.perf_counter() - t0
        return start, value, bound


def seed_schedules(
    instance: Instance, schedule: Schedule, policies: Sequence[str]
) -> list[np.ndarray]:
    """Start vectors of the initial columns: ``schedule`` with its idle rounds removed (fits
    every valid horizon) and each list policy of ``policies``, strict and with backfill."""
    starts = [compress_idle(instance, schedule.start)]
    for name in policies:
        order = LIST_ORDERS[name](instance)
        for backfill in (False, True):
            starts.append(
                compress_idle(instance, execute(instance, order, backfill=backfill).start)
            )
    return starts


def unit_model(
    instance: Instance,
    schedule: Schedule | None,
    horizon: int | None,
    windows: bool,
    model: str,
) -> tuple[Any, ...]:
    """The column generations' common setup, on the axis shifted by the earliest arrival.

    Returns ``(instance, shift, schedule, hz, slack, first, unit_of, count, lo, hi, s, o, a)``:
    the shifted instance and its shift, the schedule (default: the best list policy) on that
    axis, its tight horizon and waiting slack (None without ``windows``), and per unit of
    identical requests (:func:`~lpsched.formulations.time_indexed._units`) its first request,
    each request's unit, the units' sizes, start windows and ``(s, o, a)`` (int64, shape (U,)).
    Raises as :func:`~lpsched.formulations.horizon.tight_horizon` and
    :func:`~lpsched.solvers.options.check_horizon` (``model`` names the master)."""
    instance, shift = shift_arrivals(instance)
    if schedule is None:
        schedule = best_heuristic(instance)
    elif shift:
        schedule = Schedule(instance, np.asarray(schedule.start) - shift)
    hz = tight_horizon(instance, schedule, horizon)
    check_horizon(instance, hz.T, model)
    slack = hz.slack if windows else None
    members = _units(instance, aggregate=True)
    first = np.array([int(m[0]) for m in members], dtype=np.int64)
    unit_of = np.empty(instance.n, dtype=np.int64)
    for u, mem in enumerate(members):
        unit_of[mem] = u
    count = np.array([m.size for m in members], dtype=np.int64)
    lo_r, hi_r = start_windows(instance, hz.T, slack)
    lo, hi = lo_r[first], hi_r[first]
    s = instance.prefill[first].astype(np.int64)
    o = instance.decode[first].astype(np.int64)
    a = instance.arrival[first].astype(np.int64)
    return instance, shift, schedule, hz, slack, first, unit_of, count, lo, hi, s, o, a


def rc_eps(z: float) -> float:
    """Reduced-cost tolerance for adding a column (rounds): relative to the master value."""
    return 1e-9 * max(1.0, abs(z))


def reduced_costs(
    start: np.ndarray, s: np.ndarray, o: np.ndarray, a: np.ndarray, lam: np.ndarray
) -> np.ndarray:
    """``c + sum_t lambda_t a_t`` of the columns ``(u, start[u])`` for every unit ``u``."""
    p0 = np.cumsum(lam)
    p1 = np.cumsum(np.arange(lam.size, dtype=np.float64) * lam)
    big = lam.size - 1
    k0 = np.minimum(start, big)
    k1 = np.minimum(start + o, big)
    return (start + o - a) + (s - start) * (p0[k1] - p0[k0]) + (p1[k1] - p1[k0])
