"""The pricing problem of the time-indexed LP, shared by its two column generations.

:mod:`lpsched.solvers.colgen` (the LP of SPEC section 3 round by round) and
:mod:`lpsched.solvers.aggregated` (its memory rows summed over windows) price the same columns
``(i, k)``, request ``i`` started at round ``k``: under memory prices ``lambda_t`` the reduced
cost ::

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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from .. import interrupts
from ..formulations.horizon import start_windows, tight_horizon
from ..formulations.time_indexed import units_of
from ..instance import Instance
from ..kernels import jit
from ..schedule import Schedule
from .options import check_horizon, check_threads, check_time_limit, shift_arrivals
from .progress import Observer
from .result import Result

__all__ = [
    "price_starts",
    "memory_use",
    "compress_idle",
    "Pricer",
    "seed_schedules",
    "unit_model",
    "rc_eps",
    "reduced_costs",
    "BestBound",
    "pricing_round",
    "check_generation_options",
    "Master",
    "Generation",
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
        with interrupts.kernel_call():
            start, value = price_starts(self.lo, self.hi, self.s, self.o, self.a, p0, p1, last, neg)
        bound = float(self.count @ value - self.M * np.maximum(lam, 0.0).sum())
        self.seconds += time.perf_counter() - t0
        return start, value, bound


def seed_schedules(
    instance: Instance, schedule: Schedule, seeds: Sequence[np.ndarray] = ()
) -> list[np.ndarray]:
    """Start vectors of the initial columns: ``schedule`` and each start vector of ``seeds``
    (feasible schedules of ``instance``, shape (n,), rounds), each with its idle rounds removed
    (:func:`compress_idle`: it then fits every valid horizon)."""
    return [compress_idle(instance, np.asarray(start)) for start in (schedule.start, *seeds)]


def unit_model(
    instance: Instance,
    schedule: Schedule,
    horizon: int | None,
    windows: bool,
    model: str,
    seeds: Sequence[np.ndarray] = (),
) -> tuple[Any, ...]:
    """The column generations' common setup, on the axis shifted by the earliest arrival.

    Returns ``(instance, shift, schedule, seeds, hz, slack, first, unit_of, count, lo, hi, s,
    o, a)``: the shifted instance and its shift, the schedule and the seeds' start vectors on
    that axis, its tight horizon and waiting slack (None without ``windows``), and per unit of
    identical requests (:func:`~lpsched.formulations.time_indexed.units_of`) its first request,
    each request's unit, the units' sizes, start windows and ``(s, o, a)`` (int64, shape (U,)).
    Raises as :func:`~lpsched.formulations.horizon.tight_horizon` and
    :func:`~lpsched.solvers.options.check_horizon` (``model`` names the master)."""
    instance, shift = shift_arrivals(instance)
    if shift:
        schedule = Schedule(instance, np.asarray(schedule.start) - shift)
        seeds = [np.asarray(start) - shift for start in seeds]
    hz = tight_horizon(instance, schedule, horizon)
    check_horizon(instance, hz.T, model)
    slack = hz.slack if windows else None
    members = units_of(instance, aggregate=True)
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
    return instance, shift, schedule, seeds, hz, slack, first, unit_of, count, lo, hi, s, o, a


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


class BestBound:
    """The best Lagrangian bound so far and its prices, the stability centre of Wentges
    smoothing; each better bound goes to the observer.

    Parameters
    ----------
    observer : Observer, optional
        Its ``on_bound(value)`` gets every better bound (rounds).

    Attributes
    ----------
    best : float
        The best bound offered (rounds; ``-inf`` before the first).
    center : ndarray of float or None
        The prices ``lambda`` of ``best``.

    Notes
    -----
    Source: ours (shared by ``lp-colgen`` and ``lp-aggregated``).
    """

    def __init__(self, observer: Any = None) -> None:
        self.best = -np.inf
        self.center: np.ndarray | None = None
        self.observer = observer

    def offer(self, value: float, lam: np.ndarray) -> None:
        """Keep ``(value, lam)`` when ``value`` beats the best so far."""
        if value > self.best:
            self.best, self.center = value, lam
            if self.observer is not None:
                self.observer.on_bound(value)


def pricing_round(
    price: Pricer,
    bound: BestBound,
    lam_m: np.ndarray,
    u_dual: np.ndarray,
    z: float,
    alpha: float,
    add: Any,
) -> tuple[int, bool]:
    """One pricing round of a column generation, after a master solve.

    Prices every unit at the master's memory duals ``lam_m`` (a Lagrangian bound, offered to
    ``bound``); with ``alpha > 0`` and a stability centre, also at the Wentges mix
    ``alpha lambda_center + (1 - alpha) lambda_m`` (another bound), and adds the starts found
    there whose reduced cost at the master's duals is negative; on a mis-pricing (none), or
    without smoothing, adds those of the master's own duals.

    Parameters
    ----------
    price : Pricer
    bound : BestBound
    lam_m : ndarray of float, shape (R + 1,)
        The master's memory duals ``lambda_t >= 0`` (``lam_m[0]`` unused).
    u_dual : ndarray of float, shape (U,)
        The master's ``assign`` duals.
    z : float
        The master's value (rounds), for the reduced-cost tolerance :func:`rc_eps`.
    alpha : float
        Wentges' smoothing weight in ``[0, 1)``.
    add : callable
        ``add(units, starts) -> int``: puts the columns in the master, returns how many were
        new.

    Returns
    -------
    added : int
        New columns (0: the master is optimal for the LP, up to the tolerance).
    mispriced : bool
        Whether the smoothed prices found no column.

    Notes
    -----
    Source: Wentges, ITOR 4 (1997), and the mis-pricing rule of Pessoa, Sadykov, Uchoa and
    Vanderbeck, INFORMS J. Computing 30 (2018) (module docstring of
    :mod:`lpsched.solvers.colgen`).
    """
    units = np.arange(price.lo.size, dtype=np.int64)
    start_m, value_m, bound_m = price(lam_m)
    bound.offer(bound_m, lam_m)
    added, mispriced = 0, False
    center = bound.center
    if alpha > 0.0 and center is not None:
        lam_c = np.zeros(lam_m.size)
        lam_c[: min(center.size, lam_m.size)] = center[: lam_m.size]
        lam_s = alpha * lam_c + (1.0 - alpha) * lam_m
        start_s, _, bound_s = price(lam_s)
        bound.offer(bound_s, lam_s)
        rc = reduced_costs(start_s, price.s, price.o, price.a, lam_m) - u_dual
        neg = rc < -rc_eps(z)
        added = add(units[neg], start_s[neg])
        mispriced = not added
    if not added:
        neg_m = value_m - u_dual < -rc_eps(z)
        added = add(units[neg_m], start_m[neg_m])
    return added, mispriced


def check_generation_options(
    time_limit: float | None,
    threads: int | None,
    alpha: float,
    master_solver: str,
    master_solvers: Sequence[str],
) -> tuple[float | None, int | None]:
    """Check the options both column generations share, before any work.

    Returns
    -------
    tuple
        ``(time_limit, threads)`` checked (:func:`~lpsched.solvers.options.check_time_limit`,
        :func:`~lpsched.solvers.options.check_threads`).

    Raises
    ------
    ValueError
        ``time_limit`` or ``threads`` out of range, ``alpha`` outside ``[0, 1)``,
        ``master_solver`` not in ``master_solvers``.

    Notes
    -----
    Source: ours.
    """
    time_limit = check_time_limit(time_limit)
    threads = check_threads(threads)
    if not 0.0 <= alpha < 1.0:
        raise ValueError(f"alpha must be a number in [0, 1), got {alpha!r}")
    if master_solver not in master_solvers:
        raise ValueError(
            f"master_solver must be one of {', '.join(master_solvers)}, got {master_solver!r}"
        )
    return time_limit, threads


class Master(Protocol):
    """What :meth:`Generation.run` asks of a restricted master (``lp-colgen``'s rounds,
    ``lp-aggregated``'s windows). Source: ours."""

    h: Any  # the highspy.Highs holding it

    def solve(self, deadline: float | None) -> bool:
        """Re-solve; False when a limit or HiGHS stopped it short of an optimum."""
        ...

    def value(self) -> float:
        """The master's optimum (rounds)."""
        ...

    def duals(self) -> tuple[np.ndarray, np.ndarray]:
        """``u`` (shape (U,)) and ``lambda`` per round."""
        ...

    def level_solved(self, z: float, info: dict[str, Any]) -> bool:
        """No column prices out at master value ``z``: True when that is the LP (recorded in
        ``info``), False when the master is refined (applied by :meth:`advance`)."""
        ...

    def advance(self) -> None:
        """Apply what :meth:`level_solved` decided, before the next solve."""
        ...


@dataclass
class Generation:
    """One run of a column generation: its clock, its pricing, its best bound and its record;
    shared by ``lp-colgen`` (:mod:`lpsched.solvers.colgen`) and ``lp-aggregated``
    (:mod:`lpsched.solvers.aggregated`).

    Attributes
    ----------
    t0 : float
        ``time.perf_counter()`` at the start of the call.
    deadline : float or None
        ``time.perf_counter()`` value at which the run stops (None: no limit).
    price : Pricer
    bound : BestBound
        The best Lagrangian bound so far, offered the trivial one (``lambda = 0``:
        ``sum_i o_i``) first.
    info : dict
        ``converged``, ``iterations``, ``mispricings``; :meth:`run` adds ``stopped`` or
        ``lp_value``, :meth:`result` ``master_value`` and ``time_shift``.
    history : list of (float, float, float)
        ``(seconds, bound, master value)`` per master solve.
    master_s : float
        Seconds in master solves.
    z : float
        The last master value (rounds; ``inf`` before the first).

    Notes
    -----
    Source: ours (the loop of the module docstring of :mod:`lpsched.solvers.colgen`).
    """

    t0: float
    deadline: float | None
    price: Pricer
    bound: BestBound
    info: dict[str, Any] = field(
        default_factory=lambda: {"converged": False, "iterations": 0, "mispricings": 0}
    )
    history: list[tuple[float, float, float]] = field(default_factory=list)
    master_s: float = 0.0
    z: float = np.inf

    @classmethod
    def open(
        cls, t0: float, time_limit: float | None, price: Pricer, observer: Observer | None
    ) -> Generation:
        """A run started at ``t0`` with ``time_limit`` seconds (None: no limit), after the
        trivial bound (offered to ``observer``)."""
        bound = BestBound(observer)
        _, _, trivial = price(np.zeros(1))  # lambda = 0: sum_i min_k c_ik = sum o_i
        bound.offer(trivial, np.zeros(1))
        return cls(t0, None if time_limit is None else t0 + time_limit, price, bound)

    def run(
        self,
        master: Master,
        add: Callable[[np.ndarray, np.ndarray], int],
        alpha: float,
        tol: float,
        max_iterations: int | None,
    ) -> None:
        """Master solves and pricing rounds (:func:`pricing_round`, columns put in with
        ``add``) until the LP is reached (``master.level_solved``), the time runs out,
        ``max_iterations`` master solves are made or a master solve fails.

        Raises ``KeyboardInterrupt`` on Ctrl-C during a master solve (every better bound was
        offered to the observer)."""
        info = self.info
        while max_iterations is None or info["iterations"] < max_iterations:
            t1 = time.perf_counter()
            solved = master.solve(self.deadline)
            self.master_s += time.perf_counter() - t1
            if not solved:
                info["stopped"] = master.h.modelStatusToString(master.h.getModelStatus())
                break
            info["iterations"] += 1
            z = self.z = master.value()
            u_dual, lam_m = master.duals()
            # the columns in the master are optimal at the master's duals: price them there
            new, mispriced = pricing_round(self.price, self.bound, lam_m, u_dual, z, alpha, add)
            info["mispricings"] += mispriced
            self.history.append((time.perf_counter() - self.t0, self.bound.best, z))
            done = z - self.bound.best <= tol * max(1.0, abs(z)) or not new
            if done and master.level_solved(z, info):
                break
            if self.deadline is not None and time.perf_counter() >= self.deadline:
                info["stopped"] = "time limit"
                break
            master.advance()

    def result(self, method: str, horizon: int, shift: int, **facts: Any) -> Result:
        """The :class:`~lpsched.solvers.result.Result` (status ``bound``): the best Lagrangian
        bound; ``info`` the record, ``master_value``, ``facts`` and ``time_shift`` (when
        ``shift``)."""
        self.info.update(master_value=None if not np.isfinite(self.z) else self.z, **facts)
        if shift:
            self.info["time_shift"] = shift
        return Result.of_bound(
            method=method,
            bound=float(self.bound.best),
            runtime_s=time.perf_counter() - self.t0,
            horizon=horizon,
            info=self.info,
        )
