"""Solver-independent results: the one status, the one result, and the mapping to them.

Every solve returns a :class:`Result` with a :class:`SolveStatus`. Every MIP back end returns
an :class:`Answer`; :func:`exact_result` checks its schedule and decides the status, so the rule
"``optimal`` only when proven" lives in one place. Every back end runs its solver through
:func:`run_interruptible`, so that Ctrl-C (or SIGTERM in the command line) stops the solver
and keeps what it found (a result with status ``interrupted``).
Source: ours; the result object follows PyJobShop's and PyVRP's (``to_dict``, ``summary``).
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
from ..instance import Instance, one_line
from ..schedule import Schedule

__all__ = [
    "SolveStatus",
    "STOPPED_BY",
    "LPTooLargeError",
    "Event",
    "JSON_KEYS",
    "Result",
    "LPSolution",
    "Answer",
    "exact_result",
    "run_interruptible",
]

_EPS = 1e-6
_T = TypeVar("_T")


class SolveStatus(str, Enum):
    """The status of every :class:`Result` (``lpsched exact``, ``bound`` and ``certify
    --json``).

    ``optimal``: proven (by the solver, or by a bound that meets the TEL).
    ``gap``: a feasible schedule and a valid lower bound below its TEL (the automatic plan).
    ``bound``: a valid lower bound alone, no schedule (``lpsched bound``).
    ``feasible``: a schedule without proof (a gap stop, a certify method).
    ``infeasible``: the model has no solution (cannot happen at a valid horizon).
    ``time-limit``: stopped by the time limit (objective and bound, if any, still reported).
    ``work-limit``: stopped by the work limit (HiGHS' nodes, CP-SAT's deterministic time), the
    same on a busy machine as on an idle one (objective and bound, if any, still reported).
    ``interrupted``: stopped by Ctrl-C or SIGTERM; the best schedule and bound found so far are
    reported.
    ``error``: the solver failed, or its answer did not pass the schedule check.
    """

    OPTIMAL = "optimal"
    GAP = "gap"
    BOUND = "bound"
    FEASIBLE = "feasible"
    INFEASIBLE = "infeasible"
    TIME_LIMIT = "time-limit"
    WORK_LIMIT = "work-limit"
    INTERRUPTED = "interrupted"
    ERROR = "error"

    def __str__(self) -> str:
        return self.value


#: :attr:`Result.stopped_by` of the statuses that say what stopped the solve.
STOPPED_BY = {
    SolveStatus.OPTIMAL: "optimal",
    SolveStatus.WORK_LIMIT: "work limit",
    SolveStatus.TIME_LIMIT: "time limit",
    SolveStatus.INTERRUPTED: "interrupted",
    SolveStatus.ERROR: "error",
}


class LPTooLargeError(ValueError):
    """The time-indexed model would exceed a size limit; the message gives its size and the
    limit. Use the combinatorial bound (:func:`lpsched.bounds.combinatorial_bound`) instead.
    Source: ours."""


@dataclass(frozen=True)
class Event:
    """One improvement: ``method`` made ``side`` better, reaching ``value`` at ``time_s``.

    Attributes
    ----------
    time_s : float
        When it was found: seconds since the solve started.
    side : {"upper", "lower"}
        ``upper``: a better feasible schedule (``value`` its TEL); ``lower``: a better valid
        lower bound on the optimal TEL (``value`` the bound). Rounds.
    method : str
        The method that found it (a list policy's name, ``local-search``, ``lns``,
        ``cpsat-intervals``, ``mip``, ``combinatorial``, ``lp-colgen``, ...).
    value : float
        Rounds.

    Notes
    -----
    Source: ours.
    """

    time_s: float
    side: str
    method: str
    value: float

    def to_dict(self) -> dict[str, Any]:
        """``{"time_s", "side", "method", "value"}``."""
        return {
            "time_s": float(self.time_s),
            "side": self.side,
            "method": self.method,
            "value": float(self.value),
        }


#: The keys of ``--json`` of each command (``docs/architecture.md``); ``method`` of ``bound``
#: is :attr:`Result.bound_method`.
JSON_KEYS: dict[str, tuple[str, ...]] = {
    "exact": ("status", "objective", "bound", "gap", "runtime_s", "horizon", "solver"),
    "bound": ("method", "bound", "runtime_s", "horizon"),
    "certify": ("status", "objective", "bound", "bound_method", "gap", "runtime_s"),
}


@dataclass
class Result:
    """What a solve proved about an instance: the one result of :func:`lpsched.solve`, its
    shortcuts (:func:`lpsched.solve_exact`, :func:`lpsched.certify`, :func:`lpsched.best_bound`,
    :func:`lpsched.lp_bound`) and the solvers of :mod:`lpsched.solvers`.

    Attributes
    ----------
    status : SolveStatus
        ``optimal`` only when proven.
    objective : int or None
        TEL of ``schedule`` (rounds); None without a schedule.
    bound : float
        The best valid lower bound on the optimal TEL (rounds); equal to ``objective`` when
        optimal.
    gap : float or None
        ``(objective - bound) / objective``, 0 when optimal; None without a schedule.
    schedule : Schedule or None
        The best schedule found, checked feasible.
    bound_method : str
        The method that proved ``bound`` (``combinatorial``, ``lp``, ``mip``, ...).
    upper_method : str or None
        The method that found ``schedule``.
    runtime_s : float
        Wall time, seconds.
    horizon : int or None
        ``T`` (rounds) of the time-indexed model behind the bound, None when none was built.
    log : list of Event
        Every improvement of either side, in time order.
    info : dict
        Facts of the methods run (model size, ``T1``, ``T2``, ``solver``, ``build_s``,
        ``solve_s``, ``methods``: the outcome of each, ``plan``, ``interrupted``, ...).

    Notes
    -----
    Source: ours; PyJobShop's ``Result(objective, lower_bound, status, runtime, best)`` and
    PyVRP's ``Result.summary()``.
    """

    status: SolveStatus
    objective: int | None
    bound: float
    gap: float | None = None
    schedule: Schedule | None = None
    bound_method: str = ""
    upper_method: str | None = None
    runtime_s: float = 0.0
    horizon: int | None = None
    log: list[Event] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def method(self) -> str:
        """:attr:`bound_method` (the key ``method`` of ``lpsched bound --json``)."""
        return self.bound_method

    @property
    def stopped_by(self) -> str:
        """What ended the solve, a reproduction's ``stopped_by`` column: ``optimal``, ``work
        limit``, ``time limit``, ``interrupted``, ``error``, else ``info["stopped_by"]`` (the
        driver's ``time limit`` for a gap left when its methods ran on shares of a wall-time
        limit), else ``done`` (ended on its own without a proof: a MIP gap reached, a bound
        alone). Only ``optimal`` and ``work limit`` are the same on a busy machine as on an
        idle one."""
        return STOPPED_BY.get(self.status) or str(self.info.get("stopped_by", "done"))

    @property
    def solver(self) -> str | None:
        """The MIP back end that ran (``info["solver"]``), None without a MIP."""
        return self.info.get("solver")

    @property
    def build_s(self) -> float:
        """Seconds of the MIP's model build (``info["build_s"]``), 0 without one."""
        return float(self.info.get("build_s", 0.0))

    @property
    def solve_s(self) -> float:
        """Seconds of the MIP solver's run (``info["solve_s"]``), 0 without one."""
        return float(self.info.get("solve_s", 0.0))

    @classmethod
    def of_bound(
        cls,
        method: str,
        bound: float,
        runtime_s: float,
        horizon: int | None = None,
        info: dict[str, Any] | None = None,
    ) -> Result:
        """A lower bound alone (status ``bound``, no schedule), proved by ``method``."""
        return cls(
            status=SolveStatus.BOUND,
            objective=None,
            bound=float(bound),
            bound_method=method,
            runtime_s=runtime_s,
            horizon=horizon,
            info={} if info is None else info,
        )

    @classmethod
    def of_schedule(
        cls,
        status: SolveStatus,
        schedule: Schedule | None,
        bound: float,
        *,
        bound_method: str,
        upper_method: str | None,
        runtime_s: float,
        horizon: int | None,
        info: dict[str, Any],
        log: list[Event] | None = None,
    ) -> Result:
        """A result of ``schedule`` (found by ``upper_method``; None: none found) and ``bound``:
        ``objective`` its TEL and ``gap`` ``max(0, (objective - bound) / objective)`` (0 for a
        TEL of 0; None without a schedule). Source: ours."""
        objective = None if schedule is None else schedule.tel
        gap = None
        if objective is not None:
            gap = 0.0 if objective == 0 else max(0.0, (objective - bound) / objective)
        return cls(
            status=status,
            objective=objective,
            bound=bound,
            gap=gap,
            schedule=schedule,
            bound_method=bound_method,
            upper_method=None if schedule is None else upper_method,
            runtime_s=runtime_s,
            horizon=horizon,
            log=[] if log is None else log,
            info=info,
        )

    def to_dict(self, command: str | None = None) -> dict[str, Any]:
        """The result as JSON values: every key, or those of ``command``'s ``--json``
        (:data:`JSON_KEYS`: ``exact``, ``bound``, ``certify``), and ``status`` when it is
        ``interrupted``."""
        full = {
            "status": str(self.status),
            "objective": None if self.objective is None else int(self.objective),
            "bound": float(self.bound),
            "bound_method": self.bound_method,
            "method": self.bound_method,
            "upper_method": self.upper_method,
            "gap": None if self.gap is None else float(self.gap),
            "runtime_s": float(self.runtime_s),
            "horizon": None if self.horizon is None else int(self.horizon),
            "solver": self.info.get("solver"),
        }
        if command is None:
            del full["method"]
            return full
        out = {key: full[key] for key in JSON_KEYS[command]}
        if self.status is SolveStatus.INTERRUPTED:  # ``bound``'s keys say so only then
            out["status"] = full["status"]
        return out

    def check_interrupted(self) -> Result:
        """Raise ``KeyboardInterrupt`` when Ctrl-C stopped the solve (status ``interrupted``),
        so that a loop or a sweep around it stops too; otherwise return the result."""
        if self.status is SolveStatus.INTERRUPTED:
            raise KeyboardInterrupt("interrupted")
        return self

    def summary(self, command: str = "certify", output: str | None = None) -> str:
        """A readable report in the layout of ``lpsched COMMAND`` (``exact``: the model and
        its times; ``bound``: one line; ``certify``: the methods and the log); ``exact`` and
        ``certify`` end with the first start rounds of the schedule and where the whole of it
        is (``output``, the file it was written to, if any)."""
        if command == "bound":
            return self._bound_line()
        text = self._exact_summary() if command == "exact" else self._certify_summary()
        return text + _schedule_line(self.schedule, output)

    def _bound_line(self) -> str:
        why = f"; {self.info['reason']}" if "reason" in self.info else ""
        if self.status is SolveStatus.INTERRUPTED and "interrupted" not in why:  # found so far
            why += "; interrupted: the best bound found before the signal"
        hz = "" if self.horizon is None else f" at horizon T = {self.horizon}"
        value = _rounds(self.bound, ",.6f")
        return f"{self.bound_method} lower bound {value}{hz} ({self.runtime_s:.2f} s{why})"

    def _exact_summary(self) -> str:
        gap = "-" if self.gap is None else f"{100 * self.gap:.2f}%"
        info = {k: "-" if v is None else v for k, v in self.info.items()}  # unset: "-"
        bound = f"{self.bound:.10g}"  # every digit of a TEL-sized bound, no exponent
        model = "-"
        if info.get("columns", "-") != "-":
            model = (
                f"{info['columns']} columns, {info.get('rows')} rows, "
                f"{info.get('nonzeros')} non-zeros"
            )
        return "\n".join(
            [
                f"status      {self.status}  ({info.get('solver', '-')})",
                f"TEL         {'-' if self.objective is None else self.objective}",
                f"bound       {bound}   gap {gap}",
                f"horizon     T = {self.horizon or '-'}  (T1 = {info.get('T1', '-')}, "
                f"T2 = {info.get('T2', '-')})",
                f"heuristic   TEL {info.get('heuristic_tel', '-')} ({info.get('heuristic', '-')})",
                f"model       {model}",
                f"time        {self.runtime_s:.2f} s (build {info.get('build_s', 0.0):.2f} s, "
                f"solve {info.get('solve_s', 0.0):.2f} s)",
            ]
        )

    def _certify_summary(self) -> str:
        tel = "-" if self.objective is None else f"{self.objective:,}"
        gap = "-" if self.gap is None else f"{100 * self.gap:.2f}%"
        lines = [
            f"status      {self.status}",
            f"TEL         {tel}   ({self.upper_method or '-'})",
            f"bound       {_rounds(self.bound)}   ({self.bound_method})",
            f"gap         {gap}",
            f"runtime     {self.runtime_s:.1f} s   plan {_plan(self.info.get('plan') or {})}",
            "improvements (consecutive ones by one method on one side shown as their last):",
        ]
        for e, count in _runs(self.log):
            more = f"  ({count} steps)" if count > 1 else ""
            lines.append(
                f"  {e.time_s:8.2f} s  {e.side:5}  {e.method:20}  {_rounds(e.value)}{more}"
            )
        for name, outcome in self.info.get("methods", {}).items():
            if not outcome.startswith("done"):
                lines.append(f"  {name}: {outcome}")
        return "\n".join(lines)


#: Requests whose start the text summary of ``exact`` and ``certify`` shows.
SHOWN_STARTS = 12


def _schedule_line(sched: Schedule | None, output: str | None) -> str:
    """The ``schedule`` line of a text summary: start rounds by request id, and where the whole
    schedule is (empty without a schedule)."""
    if sched is None:
        return ""
    ids = sched.instance.ids
    starts = sched.start[:SHOWN_STARTS].tolist()
    shown = ", ".join(
        f"{one_line(rid)} {p}" for rid, p in zip(ids[:SHOWN_STARTS], starts, strict=True)
    )
    more = f", ... ({len(ids)} requests)" if len(ids) > SHOWN_STARTS else ""
    where = f"written to {output}" if output else "-o FILE writes the schedule JSON"
    return f"\nschedule    start rounds {shown}{more}; {where}"


def _rounds(value: float, fractional: str = ",.2f") -> str:
    """A TEL or bound for reading: ``19,294,305`` or ``17,288.59``."""
    return f"{int(value):,}" if float(value).is_integer() else format(value, fractional)


def _plan(plan: dict[str, Any]) -> str:
    """The plan for reading: the automatic plan's size class, or the methods given."""
    return str(plan.get("size") or ", ".join(plan.get("methods", [])) or "-")


def _runs(log: list[Event]) -> list[tuple[Event, int]]:
    """The last event of each run of consecutive events of one method on one side, and the
    run's length."""
    runs: list[tuple[Event, int]] = []
    for e in log:
        if runs and (runs[-1][0].side, runs[-1][0].method) == (e.side, e.method):
            runs[-1] = (e, runs[-1][1] + 1)
        else:
            runs.append((e, 1))
    return runs


@dataclass
class LPSolution:
    """An optimal solution of the LP relaxation (:func:`~lpsched.solvers.solve.solve_relaxation`).

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
    this; :func:`exact_result` turns it into a :class:`Result`.

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
    work_limit_reached : bool
        That limit was the work limit (HiGHS' node limit, CP-SAT's deterministic time), not
        the wall clock.

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
    work_limit_reached: bool = False

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
) -> Result:
    """The :class:`Result` of a back end's :class:`Answer`, checking every schedule.

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
    Result
        ``bound_method`` and ``upper_method`` are ``"mip"``; ``info`` has ``solver``,
        ``build_s`` and ``solve_s``. ``optimal`` only when the best schedule's TEL meets the
        proven bound (the solver's dual bound rounded up, never below the combinatorial
        bound); ``error`` when the solver failed, its schedule fails the feasibility check, or
        its bound exceeds a feasible TEL; otherwise ``interrupted`` when Ctrl-C stopped the
        run (even at a zero gap: the status says how the run ended, the gap how good its
        schedule is).

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
        status = SolveStatus.WORK_LIMIT if answer.work_limit_reached else SolveStatus.TIME_LIMIT
    elif objective is not None:  # stopped without proof, e.g. at the requested gap
        status = SolveStatus.FEASIBLE
    else:
        status = SolveStatus.ERROR
    if objective is not None and bound > objective + _EPS:
        status = SolveStatus.ERROR
        info["error"] = f"bound {bound} above the objective {objective}"
    if sched is not None:
        sched.info.update(status=str(status), bound=bound)
    info.update(solver=solver, build_s=build_s, solve_s=solve_s)
    return Result.of_schedule(
        status,
        sched,
        bound,
        bound_method="mip",
        upper_method="mip",
        runtime_s=time.perf_counter() - t0,
        horizon=hz.T,
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
