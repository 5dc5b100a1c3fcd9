"""CP-SAT on the interval model plus the time-indexed rows: a schedule source with a proven bound.

One CP-SAT model holds two views of the same schedule:

* **the interval view** -- an integer start ``p_i`` per request in its start window, and the
  memory of request ``i`` as a stack of fixed-size intervals on ``p_i``: one interval of demand
  ``s_i + 1`` over rounds ``p_i + 1 .. p_i + o_i`` and, for ``j = 2 .. o_i``, one of demand 1
  over rounds ``p_i + j .. p_i + o_i``; so round ``p_i + j`` holds ``s_i + j`` tokens (SPEC
  section 2), and one ``cumulative`` of capacity ``M`` is the memory constraint;
* **the time-indexed view** -- the model of SPEC section 3, written by
  :func:`~lpsched.solvers.backends.build_cpsat` (Booleans ``x_{i,k}``, ``sum_k x_{i,k} = 1``,
  ``memory[t]: sum (s_i + t - k) x_{i,k} <= M``, objective ``sum (k + o_i - a_i) x_{i,k}``),
  channelled by ``p_i = sum_k k x_{i,k}``.

Either view alone is exact; together CP-SAT propagates on the starts (timetabling on the
cumulative) and bounds with the LP of the time-indexed rows. The interval model alone has a
bound below the LP; with the rows the bound equals HiGHS's. Identical requests (same
``s, o, a``) are ordered, ``p_i <= p_j`` for ``i < j`` (any schedule relabelled within a class
has the same memory and TEL).

The horizon and windows are those of :func:`~lpsched.formulations.horizon.tight_horizon`
(``T = min(T1, T2)``, ``p_i <= a_i + UB - sum o``), narrowed by :func:`latency_caps`
(``p_i <= a_i + UB - LB_{-i} - o_i``, with ``LB_{-i}`` the combinatorial bound of the other
requests: 30-40 % fewer columns at n = 30-50, the same LP value). They hold every schedule at
least as good as the input one, so every optimal schedule: CP-SAT's objective bound on this
model is a valid lower bound on the optimal TEL. The input schedule is the solution hint.

What it adds (measured, provisional: ``benchmarks/bench_cpsat_intervals.py``, 60 s, 2 shared
cores): as a schedule source, little beyond the list local search at n >= 30 -- from the
local-search schedule it improved one case in six (635 to 634, scaled mix n = 30 seed 0),
and from the best list policy it reached 625 / 652 where the local search reaches 613 / 635
in a second. Given 180 s it finds 610 on seed 1 (the best known, at 68 s) and 632 on seed 0
(best known 625). Its value is the proof at n <= 15 (the shipped optima in seconds) and the bound
at n = 30-50 (above the LP within 5-60 s); at n = 100 it stops being useful.

Source: ours (OR-Tools CP-SAT, Perron and Didier; the interval model is the classical
cumulative scheduling model with the growing demand split into unit layers).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from ...bounds import combinatorial_bound
from ...formulations.horizon import Horizon, tight_horizon
from ...formulations.time_indexed import TimeIndexedMatrix, matrix_size, time_indexed_matrix
from ...instance import Instance
from ...schedule import Schedule
from ...solvers import BuildTimeout, build_cpsat, configure_solver, solution_callback
from ...solvers.options import (
    SolveOptions,
    check_horizon,
    check_threads,
    check_time_limit,
    shift_arrivals,
)
from ...solvers.progress import Observer, Progress
from ...solvers.result import LPTooLargeError, Result, SolveStatus, run_interruptible
from ..method import Method, solver_options

__all__ = [
    "METHOD",
    "CPSAT_INTERVALS_MAX_NONZEROS",
    "latency_caps",
    "solve_cpsat_intervals",
]

#: Default size guard: non-zeros of the time-indexed rows (``sum_i |K_i| (o_i + 1)``); CP-SAT
#: needs about 1.3 kB of memory per non-zero (measured at n = 100, 2 workers).
CPSAT_INTERVALS_MAX_NONZEROS = 1_000_000

_EPS = 1e-6


def _classes(instance: Instance) -> list[np.ndarray]:
    """Requests grouped by identical ``(s_i, o_i, a_i)``, each class in ascending index."""
    keys = np.stack([instance.prefill, instance.decode, instance.arrival], axis=1)
    _, inverse = np.unique(keys, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    return [np.flatnonzero(inverse == g) for g in range(int(inverse.max()) + 1)]


def _sorted_within_classes(start: np.ndarray, classes: list[np.ndarray]) -> np.ndarray:
    """The same schedule relabelled so that starts ascend with the index inside every class."""
    out = np.asarray(start, dtype=np.int64).copy()
    for members in classes:
        out[members] = np.sort(out[members])
    return out


def _add_intervals(model, instance: Instance, lo: np.ndarray, hi: np.ndarray, classes) -> list:
    """The interval view (module docstring): starts ``p_i`` in ``[lo_i, hi_i]`` (new integer
    variables, rounds), the interval stack of every request, one cumulative of capacity ``M``
    (tokens) and ``p_i <= p_j`` for ``i < j`` in each class of ``classes``. Returns the ``p``
    variables."""
    s, o = instance.prefill.tolist(), instance.decode.tolist()
    p = [model.new_int_var(int(lo[i]), int(hi[i]), f"p{i}") for i in range(instance.n)]
    intervals, demands = [], []
    for i in range(instance.n):
        intervals.append(model.new_fixed_size_interval_var(p[i] + 1, o[i], ""))
        demands.append(s[i] + 1)
        for j in range(2, o[i] + 1):
            intervals.append(model.new_fixed_size_interval_var(p[i] + j, o[i] - j + 1, ""))
            demands.append(1)
    model.add_cumulative(intervals, demands, int(instance.memory))
    for members in classes:
        for a, b in zip(members[:-1].tolist(), members[1:].tolist(), strict=True):
            model.add(p[a] <= p[b])
    return p


def latency_caps(instance: Instance, upper_bound: int) -> np.ndarray:
    """Largest latency ``C_i - a_i`` of each request in any schedule with TEL ``<= UB``.

    Parameters
    ----------
    instance : Instance
    upper_bound : int
        ``UB``, the TEL of a feasible schedule (rounds).

    Returns
    -------
    ndarray of int64, shape (n,)
        ``UB - LB_{-i}`` (rounds), where ``LB_{-i}`` is the combinatorial bound (SPEC section
        7) of the instance without request ``i`` (0 when ``n = 1``).

    Notes
    -----
    Removing request ``i`` from a feasible schedule leaves a feasible schedule of the other
    requests (memory only drops), whose TEL is at least ``LB_{-i}``; so ``C_i - a_i <=
    UB - LB_{-i}``, which gives ``p_i <= a_i + UB - LB_{-i} - o_i``. Every optimal schedule
    (and every schedule at least as good as the one that gave ``UB``) satisfies it. It is at
    least as tight as the waiting slack of :func:`~lpsched.formulations.horizon.start_windows`
    (``LB_{-i} >= sum_{j != i} o_j``). O(n^2 log n). Source: ours.
    """
    n = instance.n
    if n == 1:
        return np.array([int(upper_bound)], dtype=np.int64)
    rest = np.array(
        [combinatorial_bound(instance.subset(np.delete(np.arange(n), i))) for i in range(n)],
        dtype=np.int64,
    )
    return int(upper_bound) - rest


def _narrowed(mat: TimeIndexedMatrix, hi: np.ndarray) -> TimeIndexedMatrix:
    """``mat`` without the columns ``(u, k)`` with ``k > hi_u`` (every ``hi_u >= lo_u``)."""
    keep = mat.col_start <= hi[mat.col_unit]
    length = np.diff(mat.indptr)
    entries = np.repeat(keep, length)
    return replace(
        mat,
        hi=np.minimum(mat.hi, hi),
        col_unit=mat.col_unit[keep],
        col_start=mat.col_start[keep],
        cost=mat.cost[keep],
        indptr=np.concatenate(([0], np.cumsum(length[keep]))).astype(np.int64),
        index=mat.index[entries],
        value=mat.value[entries],
    )


def _channel(model, p: list, mat) -> None:
    """``p_i = sum_k k x_{i,k}`` for every request (columns of ``mat``, not aggregated)."""
    proto = model.proto
    cut = np.searchsorted(mat.col_unit, np.arange(mat.n_units + 1)).tolist()
    for i, var in enumerate(p):
        a, b = cut[i], cut[i + 1]
        lin = proto.constraints.add().linear
        lin.vars.extend([var.index, *range(a, b)])
        lin.coeffs.extend([1, *(-mat.col_start[a:b]).tolist()])
        lin.domain.extend([0, 0])


def solve_cpsat_intervals(
    instance: Instance,
    schedule: Schedule,
    *,
    time_limit: float | None,
    threads: int | None = None,
    observer: Observer | None = None,
    max_nonzeros: int | None = None,
) -> Result:
    """Improve ``schedule`` with CP-SAT on the interval + time-indexed model, and bound the TEL.

    Parameters
    ----------
    instance : Instance
        Requests ``(s_i, o_i, a_i)`` (tokens, tokens, rounds) and the budget ``M`` (tokens);
        arrivals anywhere (the model is solved on the axis shifted by ``min_i a_i``).
    schedule : Schedule
        A feasible schedule of ``instance``: its TEL ``UB`` sets the horizon and the windows,
        and it is the solution hint.
    time_limit : float or None
        Seconds for the whole call (build included); None for no limit (until proven).
    threads : int or None
        CP-SAT workers (None: CP-SAT's default portfolio on every core; 1: one worker).
    observer : Observer, optional
        Receives each strictly better schedule (checked) as CP-SAT finds it, from the thread
        running CP-SAT, and each strictly better lower bound on the TEL (rounds), from
        CP-SAT's threads. A :class:`~lpsched.solvers.progress.Progress` also gets CP-SAT's log
        (when its ``log`` is on).
    max_nonzeros : int or None
        Size guard on the time-indexed rows; None: :data:`CPSAT_INTERVALS_MAX_NONZEROS`.

    Returns
    -------
    Result
        ``schedule`` the best schedule found (feasible, checked; TEL ``<=`` the input's, the
        input itself when CP-SAT found nothing better), ``objective`` its TEL; ``bound``
        CP-SAT's best objective bound (rounds, at least ``sum_i o_i``), a valid lower bound on
        the optimal TEL (module docstring); ``status`` ``optimal`` when ``ceil(bound) >=
        objective``, else ``feasible``; ``bound_method`` ``cpsat-intervals``,
        ``upper_method`` the policy of ``schedule``; ``horizon`` the model's ``T``;
        ``runtime_s`` the wall time of the whole call, build included. ``info`` has
        ``horizon``, ``slack``, ``columns``, ``nonzeros``, ``intervals``, ``build_s``,
        ``solve_s``, ``solver_status``, ``threads``, ``input_tel``, ``improved`` (bool),
        ``solutions`` (better schedules reported), ``time_shift``; ``stopped`` when the build
        did not finish in the time limit; ``error`` if CP-SAT misbehaved. A build the time
        limit cuts short gives the input schedule and the bound ``sum o_i``.

    Raises
    ------
    LPTooLargeError
        (a ``ValueError``) when the time-indexed rows have more than ``max_nonzeros``
        non-zeros, or the horizon is above ``MAX_HORIZON`` (one row per round); the message
        names the size.
    InfeasibleScheduleError
        If ``schedule`` is infeasible.
    ValueError
        On a bad ``time_limit`` or ``threads``.
    KeyboardInterrupt
        On Ctrl-C, after CP-SAT has stopped (every improvement was reported already).

    Notes
    -----
    Model size: ``nnz = sum_i |K_i| (o_i + 1)`` non-zeros in the time-indexed rows, over the
    windows ``K_i`` narrowed by :func:`latency_caps`, plus ``sum_i o_i`` intervals. The guard is
    on the rows before the narrowing (what is built). Measured (scaled 80/20 mix, M = 50, from
    the local-search schedule, 60 s; provisional, 2 cores shared with other jobs;
    ``benchmarks/bench_cpsat_intervals.py``): n = 30 has 30,000-38,000 non-zeros (the caps
    remove 30-40 % of the columns), built in 0.1 s, presolved in about 8 s, and reaches its
    bound in 5-45 s (seeds 0-2: 576 / 569 / 503, above the LP's 561 / 558 / 494 by CP-SAT's
    cuts, below HiGHS after 600 s, 586 / 573 / 508); n = 50 has 86,000 non-zeros and gives 1,164
    (LP 1,154); n = 100 has 507,000 non-zeros, about 0.8 GB of memory with 2 workers, and no
    useful bound in 60 s (1,700-2,600 against the LP's 4,365). Memory grows about 1.3 kB per
    non-zero, hence the default guard of 1,000,000 (n of about 150 on this mix).
    Source: ours (module docstring).
    """
    t0 = time.perf_counter()
    time_limit = check_time_limit(time_limit)
    threads = check_threads(threads)
    deadline = None if time_limit is None else t0 + time_limit
    schedule.check()
    shifted, shift = shift_arrivals(instance)
    start0 = schedule.start.astype(np.int64) - shift
    hint = Schedule(shifted, start0)
    hz = tight_horizon(shifted, hint)
    check_horizon(instance, hz.T, "the CP-SAT interval model")
    cols, nnz = matrix_size(shifted, hz.T, hz.slack)
    if max_nonzeros is None:
        max_nonzeros = CPSAT_INTERVALS_MAX_NONZEROS
    if nnz > max_nonzeros:
        raise LPTooLargeError(
            f"{instance.name}: the CP-SAT interval model has {nnz:,} time-indexed non-zeros "
            f"({cols:,} columns, n = {instance.n}, horizon T = {hz.T:,}), above the limit "
            f"max_nonzeros = {max_nonzeros:,}"
        )
    info: dict[str, Any] = {
        "horizon": hz.T,
        "slack": hz.slack,
        "columns": cols,
        "nonzeros": nnz,
        "intervals": int(shifted.decode.sum()),
        "threads": threads,
        "input_tel": schedule.tel,
        "time_shift": shift,
        "solutions": 0,
    }
    search = _Search(instance, shift, schedule, observer, info, t0, float(shifted.decode.sum()))
    try:
        model, p = _interval_model(shifted, hz, start0, hint.tel, deadline, info)
    except BuildTimeout as exc:
        info["stopped"] = f"time limit reached during the build ({exc})"
        info["build_s"] = time.perf_counter() - t0
        return search.result("not run")
    info["build_s"] = time.perf_counter() - t0
    remaining = None if deadline is None else deadline - time.perf_counter()
    if remaining is not None and remaining <= 0:
        info["stopped"] = "time limit reached by the end of the build"
        return search.result("not run")
    return search.run(model, p, remaining, threads, deadline)


def _interval_model(
    shifted: Instance,
    hz: Horizon,
    start0: np.ndarray,
    upper_bound: int,
    deadline: float | None,
    info: dict[str, Any],
) -> tuple[Any, list]:
    """The model of the module docstring, hinted at ``start0``, and its ``p`` variables."""
    classes = _classes(shifted)
    caps = latency_caps(shifted, upper_bound)
    mat = _narrowed(time_indexed_matrix(shifted, hz), shifted.arrival + caps - shifted.decode)
    info.update(columns=mat.ncol, nonzeros=mat.nnz)
    hinted = _sorted_within_classes(start0, classes)
    model = build_cpsat(mat, mat.values_from_starts(hinted), deadline=deadline)
    p = _add_intervals(model, shifted, mat.lo, mat.hi, classes)
    _channel(model, p, mat)
    for var, v in zip(p, hinted.tolist(), strict=True):
        model.add_hint(var, v)
    return model, p


class _Search:
    """What :func:`solve_cpsat_intervals` found, shared with CP-SAT's threads under a lock."""

    def __init__(
        self,
        instance: Instance,
        shift: int,
        schedule: Schedule,
        observer: Observer | None,
        info: dict[str, Any],
        t0: float,
        floor: float,
    ) -> None:
        self.instance, self.shift, self.schedule, self.observer = (
            instance,
            shift,
            schedule,
            observer,
        )
        self.progress = observer if isinstance(observer, Progress) else None  # log and display
        self.info, self.t0 = info, t0
        self.best, self.bound = schedule, floor
        self.error: str | None = None
        self.raised: BaseException | None = None
        self.lock = threading.Lock()

    def offer(self, start: np.ndarray) -> None:
        """A CP-SAT solution's starts (shifted axis): kept and reported when better, checked."""
        cand = Schedule(self.instance, start + self.shift, policy="cpsat-intervals")
        bad = cand.violations()
        with self.lock:
            if bad:
                self.error = "CP-SAT schedule fails the check: " + "; ".join(bad)
                return
            if cand.tel >= self.best.tel:
                return
            self.best = cand
            self.info["solutions"] += 1
        if self.observer is not None:
            self.observer.on_incumbent(cand)

    def bound_seen(self, value: float) -> None:
        """A CP-SAT bound (rounds): kept and reported when better."""
        with self.lock:
            if not value > self.bound + _EPS:
                return
            self.bound = float(value)
        if self.observer is not None:
            self.observer.on_bound(float(value))

    def run(
        self, model, p: list, remaining: float | None, threads: int | None, deadline: float | None
    ) -> Result:
        """Run CP-SAT on ``model`` (start variables ``p``) and return what it found."""
        from ortools.sat.python import cp_model

        solver = cp_model.CpSolver()

        def guarded(fn: Callable[[Any], None]) -> Callable[[Any], None]:
            # an exception in a caller's callback must not unwind through CP-SAT's threads: keep
            # the first, stop the search, raise it once CP-SAT has returned
            def call(arg: Any) -> None:
                try:
                    fn(arg)
                except BaseException as exc:
                    if self.raised is None:
                        self.raised = exc
                    solver.stop_search()

            return call

        configure_solver(
            solver,
            remaining=remaining,
            threads=threads,
            progress=self.progress,
            on_bound=guarded(self.bound_seen),
        )
        callback = solution_callback(
            self.progress,
            guarded(lambda cb: self.offer(np.array([cb.value(var) for var in p], dtype=np.int64))),
        )
        code, interrupted = run_interruptible(
            lambda: solver.solve(model, callback), solver.stop_search, deadline
        )
        if self.raised is not None:
            raise self.raised
        solve_s = time.perf_counter() - self.t0 - self.info["build_s"]
        text = solver.status_name(code)
        if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            self.offer(np.array([solver.value(var) for var in p], dtype=np.int64))
            self.bound_seen(float(solver.best_objective_bound))
        elif code != cp_model.UNKNOWN:
            self.error = f"CP-SAT stopped with status '{text}'" + (
                f": {model.validate()}" if code == cp_model.MODEL_INVALID else ""
            )
        if interrupted:
            raise KeyboardInterrupt
        return self.result(text, solve_s)

    def result(self, status_text: str, solve_s: float = 0.0) -> Result:
        """The :class:`~lpsched.solvers.result.Result` of what was found (CP-SAT's
        ``status_text``)."""
        best, bound, info = self.best, float(self.bound), self.info
        info.update(solver_status=status_text, solve_s=solve_s, improved=best is not self.schedule)
        if self.error is not None:
            info["error"] = self.error
        optimal = math.ceil(bound - _EPS) >= best.tel
        bound = float(best.tel) if optimal else bound
        if self.progress is not None:
            self.progress.update(incumbent=best.tel, bound=bound)
        return Result.of_schedule(
            SolveStatus.OPTIMAL if optimal else SolveStatus.FEASIBLE,
            best,
            bound,
            bound_method="cpsat-intervals",
            upper_method=best.policy or None,
            runtime_s=time.perf_counter() - self.t0,
            horizon=info["horizon"],
            info=info,
        )


# --------------------------------------------------------------------------- the certify method


def run(instance: Instance, schedule: Schedule, options: SolveOptions, observer: Observer) -> None:
    """Report CP-SAT's schedules and bounds on the interval model to ``observer``; the
    contract is :class:`~lpsched.certify.method.Method`."""
    res = solve_cpsat_intervals(
        instance, schedule, max_nonzeros=options.max_nonzeros, **solver_options(options, observer)
    )
    if res.schedule is not None:  # always: the input schedule at worst
        observer.on_incumbent(res.schedule)
    observer.on_bound(res.bound)


METHOD = Method(
    "cpsat-intervals",
    "both",
    "CP-SAT on the interval model with the time-indexed memory rows",
    run,
)
