"""Solver-independent results: statuses, exact results, bounds, and the mapping to them.

Every back end returns an :class:`Answer`; :func:`exact_result` checks the schedule and decides
the status, so the rule "``optimal`` only when proven" lives in one place. Every back end runs
its solver through :func:`run_interruptible`, so that Ctrl-C (or SIGTERM in the command line)
stops the solver and keeps what it found (:class:`SolveInterrupted`).
Source: ours; the result objects follow PyJobShop's and PyVRP's (``to_dict``, ``summary``).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, TypeVar

import numpy as np

from .. import interrupts
from ..bounds import combinatorial_bound
from ..formulations.horizon import Horizon
from ..formulations.time_indexed import TimeIndexedMatrix
from ..instance import Instance
from ..schedule import Schedule

__all__ = [
    "SolveStatus",
    "LPTooLargeError",
    "SolveInterrupted",
    "ExactResult",
    "BoundResult",
    "LPSolution",
    "Answer",
    "exact_result",
    "run_interruptible",
]

_EPS = 1e-6
_T = TypeVar("_T")


class SolveStatus(str, Enum):
    """The status of every result: :func:`~lpsched.solvers.solve.solve_exact`
    (``lpsched exact --json``), :func:`lpsched.certify.certify` and the certify methods.

    ``optimal``: proven (by the solver, or by a bound that meets the TEL).
    ``gap``: a feasible schedule and a valid lower bound below its TEL (certify).
    ``feasible``: a schedule without proof (a gap stop, a certify method).
    ``infeasible``: the model has no solution (cannot happen at a valid horizon).
    ``time-limit``: stopped by the time limit (objective and bound, if any, still reported).
    ``interrupted``: stopped by Ctrl-C or SIGTERM (:class:`SolveInterrupted`); the best schedule
    and bound found so far are reported.
    ``error``: the solver failed, or its answer did not pass the schedule check.
    """

    OPTIMAL = "optimal"
    GAP = "gap"
    FEASIBLE = "feasible"
    INFEASIBLE = "infeasible"
    TIME_LIMIT = "time-limit"
    INTERRUPTED = "interrupted"
    ERROR = "error"

    def __str__(self) -> str:
        return self.value


class LPTooLargeError(ValueError):
    """The time-indexed model would exceed a size limit; the message gives its size and the
    limit. Use the combinatorial bound (:func:`lpsched.bounds.combinatorial_bound`) instead.
    Source: ours."""


class SolveInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM in the command line) stopped :func:`~lpsched.solvers.solve.solve_exact`.

    A ``KeyboardInterrupt``, so a loop or a sweep around the solve stops as on any Ctrl-C; the
    solver has been stopped and ``result`` holds what was found so far (status ``interrupted``:
    the best checked schedule, or None before the heuristic finished, and the best proven bound).

    Attributes
    ----------
    result : ExactResult
        Source: ours.
    """

    def __init__(self, result: ExactResult) -> None:
        super().__init__(f"interrupted: {result.to_dict()}")
        self.result = result

    def __reduce__(self):  # picklable (sent back by a worker process)
        return (type(self), (self.result,))


@dataclass
class ExactResult:
    """Result of :func:`~lpsched.solvers.solve.solve_exact`.

    Attributes
    ----------
    status : SolveStatus
    objective : int or None
        TEL of ``schedule`` (rounds), None if no schedule is known.
    bound : float
        Best proven lower bound on the optimal TEL (rounds): the solver's dual bound rounded
        up (TEL is an integer), never below the combinatorial bound (SPEC section 7, itself at
        least ``sum o_i``).
    gap : float or None
        ``(objective - bound) / objective``; 0 when optimal; None without objective.
    runtime_s : float
        Total wall time (seconds): heuristic, horizon, model build and solve.
    build_s, solve_s : float
        Model build (heuristic and horizon included) and solver time, seconds.
    horizon : int
        ``T`` in rounds.
    solver : str
        ``"highs"`` or ``"cpsat"``.
    schedule : Schedule or None
        The best schedule found (checked feasible).
    info : dict
        Model size (``columns``, ``rows``, ``nonzeros``), ``heuristic_tel``, ``T1``, ``T2``,
        solver status text, ``incumbent`` (``"solver"`` or ``"heuristic"``), messages.
    """

    status: SolveStatus
    objective: int | None
    bound: float
    gap: float | None
    runtime_s: float
    build_s: float
    solve_s: float
    horizon: int
    solver: str
    schedule: Schedule | None
    info: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The ``exact`` JSON object of ``docs/architecture.md``: status, objective, bound, gap,
        runtime_s, horizon, solver."""
        return {
            "status": str(self.status),
            "objective": self.objective,
            "bound": float(self.bound),
            "gap": self.gap,
            "runtime_s": float(self.runtime_s),
            "horizon": int(self.horizon),
            "solver": self.solver,
        }

    def summary(self) -> str:
        """One readable paragraph: status, TEL, bound, gap, times, model size."""
        gap = "-" if self.gap is None else f"{100 * self.gap:.2f}%"
        lines = [
            f"status      {self.status}  ({self.solver})",
            f"TEL         {self.objective}",
            f"bound       {self.bound:g}   gap {gap}",
            f"horizon     T = {self.horizon}  (T1 = {self.info.get('T1')}, "
            f"T2 = {self.info.get('T2')})",
            f"heuristic   TEL {self.info.get('heuristic_tel')} ({self.info.get('heuristic', '-')})",
            f"model       {self.info.get('columns')} columns, {self.info.get('rows')} rows, "
            f"{self.info.get('nonzeros')} non-zeros",
            f"time        {self.runtime_s:.2f} s (build {self.build_s:.2f} s, "
            f"solve {self.solve_s:.2f} s)",
        ]
        return "\n".join(lines)


@dataclass
class BoundResult:
    """A lower bound on the optimal TEL (:func:`~lpsched.certify.bound.best_bound`).

    Attributes
    ----------
    method : str
        ``"lp"``, ``"combinatorial"``, or the certify method that gave it (a name of
        :data:`lpsched.certify.methods.METHODS`).
    bound : float
        The lower bound (rounds). The LP value is reported unrounded.
    runtime_s : float
        Wall time (seconds), build included.
    horizon : int or None
        ``T`` of the LP (rounds); None for the combinatorial bounds.
    info : dict
        ``build_s``, ``solve_s``, model size, why a method was chosen.
    """

    method: str
    bound: float
    runtime_s: float
    horizon: int | None = None
    info: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The ``bound`` JSON object of ``docs/architecture.md``: method, bound, runtime_s,
        horizon."""
        return {
            "method": self.method,
            "bound": float(self.bound),
            "runtime_s": float(self.runtime_s),
            "horizon": None if self.horizon is None else int(self.horizon),
        }

    def summary(self) -> str:
        """One readable line: method, value, horizon and time (and why, when chosen)."""
        why = f"; {self.info['reason']}" if "reason" in self.info else ""
        hz = "" if self.horizon is None else f" at horizon T = {self.horizon}"
        value = f"{int(self.bound):,}" if float(self.bound).is_integer() else f"{self.bound:,.6f}"
        return f"{self.method} lower bound {value}{hz} ({self.runtime_s:.2f} s{why})"


@dataclass
class LPSolution:
    """An optimal solution of the LP relaxation (:func:`~lpsched.solvers.solve.solve_lp`).

    Attributes
    ----------
    value : float
        LP optimum, a lower bound on the optimal TEL (rounds).
    x : ndarray of float, shape (ncol,)
        Column values (class counts when aggregated).
    matrix : TimeIndexedMatrix
        The model solved.
    build_s, solve_s : float
        Seconds.
    shift : int, default 0
        The earliest arrival ``min_i a_i`` (rounds): ``matrix`` is the model of the instance
        with every arrival moved ``shift`` rounds earlier (the same TEL and LP value).
    """

    value: float
    x: np.ndarray
    matrix: TimeIndexedMatrix
    build_s: float
    solve_s: float
    shift: int = 0

    @property
    def horizon(self) -> int:
        """``T`` in rounds (of the shifted time axis, see ``shift``)."""
        return self.matrix.T

    def fractional_completion(self) -> np.ndarray:
        """``sum_k (k + o_i) x_{i,k}`` per request (rounds of the instance's own time axis,
        ``shift`` added back), shape (n,) (Sorted-LP's key)."""
        return self.matrix.fractional_completion(self.x) + self.shift


@dataclass
class Answer:
    """What a back end reports after a MIP run, in solver-neutral terms.

    Every back end (:mod:`.highs`, :mod:`.cpsat`, :mod:`.pyomo`) maps its own status codes to
    this; :func:`exact_result` turns it into an :class:`ExactResult`.

    Attributes
    ----------
    start : ndarray of int, shape (n,), or None
        Starts ``p_i`` (rounds) of the solver's incumbent, None without one.
    dual : float or None
        The solver's dual (lower) bound on the TEL (rounds); None when it has none.
    limit_reached : bool
        Stopped by a time, node, solution or memory limit.
    interrupted : bool
        Stopped by Ctrl-C (:func:`run_interruptible`), or interrupted before the run.
    infeasible : bool
        The solver proved the model infeasible.
    error : str or None
        Why the solver failed, if it did.
    status_text : str
        The solver's own status name (reported in ``info["solver_status"]``).
    info : dict
        Solver statistics (``nodes``, cut counts).
    build_s : float
        Seconds the back end spent building its own model before the run.

    Notes
    -----
    Source: ours (PyJobShop's pattern: each back end owns its status mapping).
    """

    start: np.ndarray | None
    dual: float | None
    build_s: float = 0.0
    limit_reached: bool = False
    interrupted: bool = False
    infeasible: bool = False
    error: str | None = None
    status_text: str = ""
    info: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def without_run(
        cls,
        build_s: float,
        status_text: str,
        *,
        interrupted: bool = False,
        limit_reached: bool = False,
        info: dict[str, Any] | None = None,
    ) -> Answer:
        """The answer of a back end stopped before its run (Ctrl-C or the time limit during
        or right after its build): no incumbent, no bound. Source: ours."""
        return cls(
            start=None,
            dual=None,
            build_s=build_s,
            limit_reached=limit_reached,
            interrupted=interrupted,
            status_text=status_text,
            info={} if info is None else info,
        )


def _proven_bound(instance: Instance, dual: float | None) -> float:
    """The solver's dual bound rounded up (TEL is an integer), never below the combinatorial
    bound of SPEC section 7 (itself at least ``sum o_i``)."""
    floor = float(combinatorial_bound(instance))
    if dual is None or not math.isfinite(dual):
        return floor
    return max(floor, float(math.ceil(dual - _EPS)))


def exact_result(
    instance: Instance,
    answer: Answer,
    *,
    solver: str,
    hz: Horizon,
    warm_start: bool,
    t0: float,
    build_s: float,
    solve_s: float,
    info: dict[str, Any],
) -> ExactResult:
    """The :class:`ExactResult` of a back end's :class:`Answer`, checking every schedule.

    Parameters
    ----------
    instance : Instance
    answer : Answer
    solver : str
        Back-end name recorded in the result.
    hz : Horizon
        The horizon solved at; its schedule is the fallback incumbent with ``warm_start``.
    warm_start : bool
        Whether the heuristic schedule may be the incumbent.
    t0 : float
        ``time.perf_counter()`` at the start of the solve (for ``runtime_s``).
    build_s, solve_s : float
        Seconds of model build and solve.
    info : dict
        Model facts to report; updated with the answer's statistics.

    Returns
    -------
    ExactResult
        ``optimal`` only when the best schedule's TEL meets the proven bound (the solver's
        dual bound rounded up, never below the combinatorial bound); ``error`` when the
        solver failed, its schedule fails the feasibility check, or its bound exceeds a
        feasible TEL; otherwise ``interrupted`` when Ctrl-C stopped the run (even at a zero
        gap: the status says how the run ended, the gap how good its schedule is).

    Notes
    -----
    Source: ours (the reporting rules of ``docs/architecture.md``).
    """
    info.update(answer.info)
    info["solver_status"] = answer.status_text
    if answer.error is not None:
        info["error"] = answer.error
    sched: Schedule | None = None
    info["incumbent"] = None
    if answer.start is not None:
        cand = Schedule(instance, answer.start, policy=f"exact-{solver}")
        bad = cand.violations()
        if bad:
            info["error"] = "solver schedule fails the check: " + "; ".join(bad)
        else:
            sched, info["incumbent"] = cand, "solver"
    if warm_start and hz.schedule is not None and (sched is None or hz.schedule.tel < sched.tel):
        sched = Schedule(
            instance, hz.schedule.start, policy=f"exact-{solver}", info={"from": hz.schedule.policy}
        )
        info["incumbent"] = "heuristic"
    bound = _proven_bound(instance, None if answer.infeasible else answer.dual)
    objective = None if sched is None else sched.tel
    if "error" in info:
        status = SolveStatus.ERROR
    elif answer.interrupted:
        status = SolveStatus.INTERRUPTED
    elif answer.infeasible:
        status = SolveStatus.INFEASIBLE
    elif objective is not None and objective <= bound + _EPS:
        status = SolveStatus.OPTIMAL
        bound = float(objective)
    elif answer.limit_reached:
        status = SolveStatus.TIME_LIMIT
    elif objective is not None:  # stopped without proof, e.g. at the requested gap
        status = SolveStatus.FEASIBLE
    else:
        status = SolveStatus.ERROR
    if objective is not None and bound > objective + _EPS:
        status = SolveStatus.ERROR
        info["error"] = f"bound {bound} above the objective {objective}"
    gap = (
        None
        if objective is None
        else (0.0 if objective == 0 else max(0.0, (objective - bound) / objective))
    )
    if sched is not None:
        sched.info.update(status=str(status), bound=bound)
    return ExactResult(
        status=status,
        objective=objective,
        bound=bound,
        gap=gap,
        runtime_s=time.perf_counter() - t0,
        build_s=build_s,
        solve_s=solve_s,
        horizon=hz.T,
        solver=solver,
        schedule=sched,
        info=info,
    )


def run_interruptible(
    work: Callable[[], _T], stop: Callable[[], object], deadline: float | None = None
) -> tuple[_T, bool]:
    """Run ``work()`` (a solver call that releases the GIL) in a worker thread while this
    thread waits, so that Ctrl-C reaches Python during a long solve.

    A ``KeyboardInterrupt`` in the wait calls ``stop()`` (the solver's own cancel: HiGHS'
    interrupt callback, CP-SAT's ``stop_search``), again every 0.1 s until ``work`` returns
    (a cancel that arrives before the solver starts is not lost); further Ctrl-C are absorbed
    while the solver winds down, which takes well under a second.

    Parameters
    ----------
    work : callable
        The blocking call; its exceptions are raised here.
    stop : callable
        Asks ``work`` to return soon with what it has; may be called many times.
    deadline : float, optional
        ``time.perf_counter()`` value; ``stop()`` is also called once it is 0.1 s past (a
        wall-clock backstop for a solver that overruns its own time limit, e.g. in
        presolve). Not counted as an interruption.

    Returns
    -------
    value
        What ``work()`` returned.
    interrupted : bool
        Whether Ctrl-C arrived (``stop`` was called).

    Notes
    -----
    Signals reach only the main thread; from any other thread this is a plain call in a
    worker. Source: ours (the pattern of highspy's ``Highs.solve`` with
    ``HandleKeyboardInterrupt``).
    """
    box: dict[str, Any] = {}
    done = threading.Event()

    def target() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:  # re-raised in the waiting thread
            box["error"] = exc
        finally:
            done.set()

    worker = threading.Thread(target=target, name="lpsched-solver", daemon=True)
    interrupted = False
    worker.start()
    # Wait on an Event, never in Thread.join: a join that Ctrl-C interrupts can mark a running
    # thread as finished (CPython 3.11, bpo-45274).
    while not done.is_set():
        try:
            done.wait(0.1 if interrupted or deadline is not None else 0.5)
        except KeyboardInterrupt:
            interrupted = True
        # a Ctrl-C whose exception a callback from compiled code dropped (lpsched.interrupts)
        interrupted = interrupted or interrupts.requested() is not None
        late = deadline is not None and time.perf_counter() > deadline + 0.1
        if (interrupted or late) and not done.is_set():
            try:
                stop()
            except KeyboardInterrupt:
                interrupted = True
    if "error" in box:
        raise box["error"]
    return box["value"], interrupted
